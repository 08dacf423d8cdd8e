//! Programs (`.fen`, litmus, C, LLVM IR) through the concrete engines: loading with the
//! front-end the extension picks, under the timeout, and the exploration.

use crate::applies::Kind;
use crate::inputs;
use crate::options::program_model;
use crate::{split, Algo, Engine, Error, Hangs, Options, Outcome, Shown};
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Workers `--jobs` accepts: more threads than this only cost their start-up (a split
/// tree has a few hundred units at most).
pub const MAX_JOBS: usize = 1024;

/// The program-level options that change what counts as a violation, applied to a loaded
/// program (`--hangs`).
pub(crate) fn apply_conventions(args: &Options, prog: &mut fencer_ir::Program) {
    match args.hangs {
        Some(Hangs::Violation) => prog.hang_is_violation = true,
        Some(Hangs::Ignore) => prog.hang_is_violation = false,
        None => {}
    }
}

/// `--timeout SECS` as a duration; a usage error unless positive and finite. A timeout too
/// long for a `Duration` (centuries) is no limit at all.
pub fn timeout_arg(t: Option<f64>) -> Result<Option<Duration>, Error> {
    match t {
        Some(t) if !(t.is_finite() && t > 0.0) => Err(Error::usage(
            "error: --timeout expects a positive number of seconds",
            None,
        )),
        Some(t) => Ok(Duration::try_from_secs_f64(t).ok()),
        None => Ok(None),
    }
}

fn load_litmus(args: &Options) -> Result<fencer_ir::Program, Error> {
    let path = args.file.display().to_string();
    let src = crate::read_source(args)?;
    fencer_litmus::parse_litmus(&path, &src)
        .map(|l| l.program)
        .map_err(|d| Error::usage(&d.render(&src), Some(&d)))
}

fn load_text(args: &Options) -> Result<fencer_ir::Program, Error> {
    let path = args.file.display().to_string();
    let src = crate::read_source(args)?;
    fencer_text::parse_program(&path, &src).map_err(|d| Error::usage(&d.render(&src), Some(&d)))
}

fn load_c(args: &Options, model: ModelKind) -> Result<fencer_ir::Program, Error> {
    crate::cfront::load(args, model)
}

/// `fencer check` on a program: load, explore, and look for waits no signal ends.
pub(crate) fn check(
    args: Options,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
) -> Result<Outcome, Error> {
    let started = Instant::now();
    let model = program_model(args.model)?;
    let args = Arc::new(args);
    let mut prog = match load_program(&args, model, timeout)? {
        Some(p) => p,
        None => return Ok(stopped_while_loading(&args, model, started)),
    };
    let left = |t: Option<Duration>| t.map(|t| t.saturating_sub(started.elapsed()));
    // --engine auto: threads created without bound are checked for any number of them.
    let threads_note = match crate::auto::unbounded_threads(&args, &prog, model, left(timeout))? {
        Ok(out) => return Ok(out),
        Err(note) => note,
    };
    let timeout = left(timeout);
    if prog.has_inputs() {
        if let Some(wide) = inputs::too_wide(&args, &prog, model)? {
            // --engine auto under SC: the symbolic engine takes the program.
            let mut out = crate::auto::hand_to_abpress(&args, timeout, wide, None)?;
            if let Some(n) = &threads_note {
                crate::auto::add_note(&mut out, n, args.json);
            }
            return Ok(out);
        }
        inputs::refuse_options(&args, &prog)?;
    }
    let spin_loops = if args.no_spin_assume {
        0
    } else {
        fencer_ir::spin::spin_assume(&mut prog)
    };
    let exploring = Instant::now();
    let (mut report, split_info) = if matches!(args.engine, Engine::Auto) {
        // Auto's shallow rounds may show loops that never end, which abpress can prove.
        match shallow_rounds(&args, &prog, model, timeout, shard) {
            Shallow::Answered(report) => (*report, None),
            Shallow::Deeper(rounds) => {
                let left = || timeout.map(|t| t.saturating_sub(exploring.elapsed()));
                let note = match crate::auto::loops_to_abpress(&args, model, left(), &rounds)? {
                    crate::auto::Loops::Answered(out) => return Ok(*out),
                    crate::auto::Loops::Dpor(note) => note,
                };
                let (mut report, info) = deep_search(&args, &prog, model, left(), shard, &rounds);
                report.notes.extend(note);
                (report, info)
            }
        }
    } else {
        explore_program(&args, &prog, model, timeout, shard)
    };
    unsupported(&report)?;
    // With spurious wake-ups a wait never blocks: the waits no signal ends are looked for
    // in the program's variant without them (`Program::wait_variant`).
    let variant = prog
        .wait_variant
        .as_deref()
        .filter(|_| report.verdict != Verdict::Violation && prog.hang_is_violation)
        .cloned();
    let mut shown = None;
    if let Some(mut variant_prog) = variant {
        if !args.no_spin_assume {
            fencer_ir::spin::spin_assume(&mut variant_prog);
        }
        let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
        let (w, _) = explore_program(&args, &variant_prog, model, left, shard);
        unsupported(&w)?;
        if report.add_wait_variant(w) {
            let mut a = (*args).clone();
            a.no_spurious_wakeups = true;
            shown = Some(Shown {
                program: variant_prog,
                options: a,
                model,
            });
        }
    }
    report.stats.spin_loops = spin_loops as u64;
    report.notes.extend(threads_note);
    if let Some(n) = no_debug_info(&args, &prog) {
        report.notes.push(n);
    }
    report.stats.peak_rss_kib = peak_rss_kib();
    let output = if args.json {
        match &split_info {
            Some(info) => format!("{}\n", split::with_split(&report, info)),
            None => format!("{}\n", report.to_json()),
        }
    } else {
        let mut text = report.to_text(args.verbose);
        if let Some(h) = split_info
            .as_ref()
            .filter(|_| report.verdict == Verdict::Safe)
            .and_then(split::shard_headline)
        {
            text = text.replacen(fencer_report::SAFE_HEADLINE, &h, 1);
        }
        // How the tree was split is for whoever tunes --jobs (or runs a shard), not for
        // every reader of a verdict; the JSON always has it.
        if let Some(info) = split_info
            .as_ref()
            .filter(|_| args.verbose || shard.is_some())
        {
            text += &split::split_text(info);
        }
        text
    };
    let shown = shown.unwrap_or_else(|| Shown {
        program: prog,
        options: (*args).clone(),
        model,
    });
    Ok(Outcome {
        verdict: report.verdict,
        output,
        messages: Vec::new(),
        report: Some(report),
        split: split_info,
        shown: Some(shown),
    })
}

/// LLVM IR compiled without `-g` has no source positions: every step of a counterexample
/// is at line 0. Saying why spares the user a hunt.
fn no_debug_info(args: &Options, prog: &fencer_ir::Program) -> Option<String> {
    if !Kind::of(&args.file).is_some_and(|k| k == Kind::Ir) {
        return None;
    }
    // File 0 is the input's own; fencer's C library, linked in, has its own positions.
    let located = prog
        .functions
        .iter()
        .flat_map(|f| &f.body)
        .any(|i| i.loc.file == 0 && i.loc.line > 0);
    (!located).then(|| {
        format!(
            "{} has no debug information, so source lines are unknown (compile it with \
             clang-14 -g to see them)",
            args.file.display()
        )
    })
}

/// One exploration of `prog` by the engine `args` asks for (and the split's summary for
/// the JSON, when it was split).
fn explore_program(
    args: &Arc<Options>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
) -> (Report, Option<serde_json::Value>) {
    match args.engine {
        Engine::Reference => {
            let opts = fencer_reference::Options {
                timeout,
                max_executions: args.max_executions,
                max_depth: args.max_depth,
                unroll: args.unroll,
                input_values: args.input_values,
                ..Default::default()
            };
            (fencer_reference::explore(prog, model, &opts).report, None)
        }
        Engine::Auto | Engine::Dpor | Engine::Abpress => {
            deepening(args, prog, model, timeout, shard)
        }
    }
}

/// The per-thread bound of a deepening search's first round, and the factor by which
/// the next round's grows.
const FIRST_DEPTH: usize = 256;
const DEEPER: usize = 64;
/// The events each shallow round may take (about a tenth of a second, and a second): a
/// tree too big for that is searched at `--max-depth` at once, so what deepening can
/// waste is bounded, whatever the program.
const BUDGETS: [u64; 2] = [1 << 20, 1 << 23];

/// DPOR, shallow first: depth-first search runs one thread's loop as deep as
/// `--max-depth` before it reverses the race at its first iteration, so a bug there
/// can take minutes to reach. Shallow rounds come first, each on one worker within a
/// budget of events ([`BUDGETS`]): the first bounds every thread at [`FIRST_DEPTH`]
/// events, the next [`DEEPER`] times as many. A round that finds a violation past a cut
/// ends the search (a bound only cuts executions, never invents one, so its
/// counterexample is an execution of the program); a round that cut nothing explored what
/// the search without rounds explores, so its answer is that search's (with more than one
/// worker that search is run, split, to say how it splits, at the cost of a round that
/// took a budget at most); a round over its budget
/// gives way to the search at `--max-depth` with the options as given, which is the
/// search without deepening, so its counts are that search's. Every round is
/// deterministic (one worker, a budget in events, not time). `--all` and shards
/// explore at `--max-depth` at once: they ask for the whole tree, and a shard must
/// explore the tree the others split.
fn deepening(
    args: &Arc<Options>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
) -> (Report, Option<serde_json::Value>) {
    let started = Instant::now();
    match shallow_rounds(args, prog, model, timeout, shard) {
        Shallow::Answered(report) => (*report, None),
        Shallow::Deeper(rounds) => {
            let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
            deep_search(args, prog, model, left, shard, &rounds)
        }
    }
}

/// What the shallow rounds of a deepening search found.
pub(crate) enum Shallow {
    /// A round's answer is the search's.
    Answered(Box<Report>),
    /// The search goes on at `--max-depth`.
    Deeper(Rounds),
}

/// The shallow rounds that found nothing, for the deep search's note.
pub(crate) struct Rounds {
    /// Each round's per-thread bound, each of which cut executions.
    bounds: Vec<usize>,
    executions: u64,
    events: u64,
    /// A round found every execution within its bound (no cut): the deep search is
    /// only run again to split it.
    whole: bool,
}

impl Rounds {
    /// Whether some thread ran past every bound tried: the first round (each thread at
    /// [`FIRST_DEPTH`] events) explored its whole tree and cut executions, and no round
    /// explored a tree without cuts. Loops that run for ever do that; so can a long one.
    pub(crate) fn loops_run_on(&self) -> bool {
        !self.whole && self.bounds.first() == Some(&FIRST_DEPTH)
    }

    /// The bounds tried and what they found, in words: "256 and 16384 events per
    /// thread; no violation in 60302 events".
    pub(crate) fn tried(&self) -> String {
        let bounds: Vec<String> = self.bounds.iter().map(usize::to_string).collect();
        format!(
            "{} events per thread; no violation in {} events",
            bounds.join(" and "),
            self.events
        )
    }

    /// The rounds, in words, for notes.
    pub(crate) fn describe(&self) -> Option<String> {
        if self.bounds.is_empty() {
            return None;
        }
        let bounds: Vec<String> = self.bounds.iter().map(usize::to_string).collect();
        Some(format!(
            "rounds bounding each thread at {} events found no violation ({} executions, {} events)",
            bounds.join(", then "),
            self.executions,
            self.events
        ))
    }
}

/// DPOR's shallow rounds (see [`deepening`]): an answer, or what the deep search needs.
pub(crate) fn shallow_rounds(
    args: &Arc<Options>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
) -> Shallow {
    let started = Instant::now();
    let left = || timeout.map(|t| t.saturating_sub(started.elapsed()));
    let workers = args.workers();
    let mut rounds = Rounds {
        bounds: Vec::new(),
        executions: 0,
        events: 0,
        whole: false,
    };
    let mut bound = FIRST_DEPTH;
    for budget in BUDGETS {
        if args.all || shard.is_some() || bound >= args.max_depth {
            break;
        }
        let max_executions = args
            .max_executions
            .map(|m| m.saturating_sub(rounds.executions));
        let (mut report, _) = explore_dpor(
            args,
            prog,
            model,
            left(),
            None,
            bound,
            max_executions,
            Some(budget),
        );
        let over = matches!(report.stopped_by, Some(fencer_report::Limit::MaxEvents));
        let limited = matches!(
            report.stopped_by,
            Some(fencer_report::Limit::Timeout | fencer_report::Limit::MaxExecutions)
        );
        if over {
            break;
        }
        // Where the bound cut nothing, this round explored what the search without
        // rounds explores, in its order: one worker's answer is this one; several
        // workers explore it again, split, to say how it splits (a split run gives one
        // worker's counterexample, or with Source-DPOR its first unit's).
        let whole = report.stats.depth_cut == 0;
        let found = report.verdict == Verdict::Violation;
        if limited || (workers == 1 && whole) || (found && !whole) {
            if let Some(n) = rounds.describe() {
                report.notes.push(format!("explored shallow first: {n}"));
            }
            if !whole {
                report.notes.push(format!(
                    "this round bounded each thread at {bound} events (--max-depth is {})",
                    args.max_depth
                ));
            }
            return Shallow::Answered(Box::new(report));
        }
        if whole || found {
            rounds.whole = whole;
            break;
        }
        rounds.bounds.push(bound);
        rounds.executions += report.executions;
        rounds.events += report.stats.events;
        bound = bound.saturating_mul(DEEPER);
    }
    Shallow::Deeper(rounds)
}

/// The search at `--max-depth` after the shallow rounds.
pub(crate) fn deep_search(
    args: &Arc<Options>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
    rounds: &Rounds,
) -> (Report, Option<serde_json::Value>) {
    let max_executions = args
        .max_executions
        .map(|m| m.saturating_sub(rounds.executions));
    let (mut report, info) = explore_dpor(
        args,
        prog,
        model,
        timeout,
        shard,
        args.max_depth,
        max_executions,
        None,
    );
    if let Some(n) = rounds.describe() {
        report.notes.push(format!("explored shallow first: {n}"));
    }
    (report, info)
}

/// One DPOR exploration with each thread bounded at `max_depth` events; with a budget of
/// `max_events`, on one worker.
#[allow(clippy::too_many_arguments)]
fn explore_dpor(
    args: &Arc<Options>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
    max_depth: usize,
    max_executions: Option<u64>,
    max_events: Option<u64>,
) -> (Report, Option<serde_json::Value>) {
    let opts = fencer_dpor::Options {
        max_events,
        algo: match args.algo {
            Algo::Optimal => fencer_dpor::Algo::Optimal,
            Algo::Source => fencer_dpor::Algo::Source,
        },
        timeout,
        max_executions,
        max_depth,
        unroll: args.unroll,
        stop_on_violation: !args.all,
        progress: args.progress.clone(),
        input_values: args.input_values,
        plan: None,
    };
    // A program with inputs is one run per assignment of them, on one worker.
    let jobs = if prog.has_inputs() { 1 } else { args.workers() };
    if (jobs == 1 || max_events.is_some()) && shard.is_none() {
        (fencer_dpor::explore(prog, model, &opts), None)
    } else {
        let split = fencer_dpor::Split {
            shard,
            ..fencer_dpor::Split::jobs(jobs)
        };
        let s = fencer_dpor::explore_split(prog, model, &opts, &split, false);
        let info = split::split_json(args, prog, jobs, shard, &s);
        (s.report, Some(info))
    }
}

/// Loads the program `args` names with the front-end its extension picks, lowered for
/// `model` (C11 atomics and fences map differently per model), with the program-level
/// options (`hangs`) applied.
pub fn load(args: &Options, model: ModelKind) -> Result<fencer_ir::Program, Error> {
    let mut prog = match crate::kind_of(&args.file)? {
        Kind::Litmus => load_litmus(args)?,
        Kind::Fen => load_text(args)?,
        Kind::Dve | Kind::Cub => {
            return Err(Error::usage(
                &format!(
                    "{}: error: a model, not a program: `fencer check` explores it",
                    args.file.display()
                ),
                None,
            ))
        }
        _ => load_c(args, model)?,
    };
    apply_conventions(args, &mut prog);
    Ok(prog)
}

/// [`load`] under a time limit: loading (clang, parsing, lowering) runs on a thread of its
/// own so that a slow compile still stops on time. `Ok(None)`: the time ran out.
pub fn load_within(
    args: &Arc<Options>,
    model: ModelKind,
    timeout: Option<Duration>,
) -> Result<Option<fencer_ir::Program>, Error> {
    load_program(args, model, timeout)
}

fn load_program(
    args: &Arc<Options>,
    model: ModelKind,
    timeout: Option<Duration>,
) -> Result<Option<fencer_ir::Program>, Error> {
    crate::kind_of(&args.file)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let mine = args.clone();
    std::thread::spawn(move || {
        let _ = tx.send(load(&mine, model));
    });
    let loaded = match timeout {
        Some(t) => rx.recv_timeout(t).ok(),
        None => rx.recv().ok(),
    };
    loaded.transpose()
}

/// The C front-end refuses lazily: a program is judged unloadable only when exploration
/// reaches what it cannot model. That is bad input (exit code 2), not a violation.
pub fn unsupported(report: &Report) -> Result<(), Error> {
    let Some(c) = report
        .counterexample
        .as_ref()
        .filter(|c| c.kind == "unsupported")
    else {
        return Ok(());
    };
    let full = c
        .message
        .rsplit_once(" (thread ")
        .map_or(&*c.message, |(m, _)| m);
    let (message, help) = match full.split_once("\n  help: ") {
        Some((m, h)) => (m.to_string(), Some(h.to_string())),
        None => (full.to_string(), None),
    };
    let (file, line, col) = (
        c.file.clone().unwrap_or_default(),
        c.line.unwrap_or(0),
        c.column.unwrap_or(0),
    );
    let d = fencer_text::Diagnostic {
        file: file.clone(),
        line,
        col,
        span: Default::default(),
        message,
        label: String::new(),
        help,
    };
    let text = match line {
        0 => format!("{file}: error: {full}"),
        _ => format!("{file}:{line}:{col}: error: {full}"),
    };
    Err(Error::usage(&text, Some(&d)))
}

/// `--timeout` ran out before the program was even loaded: nothing was explored.
pub fn stopped_while_loading(args: &Options, model: ModelKind, started: Instant) -> Outcome {
    let ms = started.elapsed().as_millis() as u64;
    let engine = match args.engine {
        Engine::Auto | Engine::Dpor => "dpor",
        Engine::Reference => "reference",
        Engine::Abpress => "abpress",
    };
    let program = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let report = Report {
        stats: fencer_report::Stats {
            elapsed_ms: ms,
            peak_rss_kib: peak_rss_kib(),
            ..Default::default()
        },
        stopped_by: Some(fencer_report::Limit::Timeout),
        ..Report::new(Verdict::Incomplete, model.name(), engine, &program, ms)
    };
    let (output, messages) = if args.json {
        (format!("{}\n", report.to_json()), Vec::new())
    } else {
        (
            report.to_text(args.verbose),
            vec![format!(
                "{}: the --timeout ran out while loading the program",
                args.file.display()
            )],
        )
    };
    Outcome {
        verdict: report.verdict,
        output,
        messages,
        report: Some(report),
        split: None,
        shown: None,
    }
}

/// The process's peak resident memory (Linux's `VmHWM`), in KiB.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
