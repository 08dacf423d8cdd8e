//! `fencer check model.dve`: DVE models through the explicit-state engine.

use crate::{dve_relaxed, peak_rss_kib, Error, Options, Outcome, Report};
use fencer_dve::run::Label;
use fencer_explicit::{reach, FoundKind, Options as SearchOptions, TransitionSystem};
use fencer_report::{Counterexample, Stats, TraceLine, Verdict};
use std::time::Duration;

/// A DVE system as the engine sees it: fixed-width states and their successors, of the
/// model alone or (`product`) in step with its property process, for LTL.
pub(crate) struct Dve<'a> {
    pub(crate) sys: &'a fencer_dve::System,
    pub(crate) product: bool,
    /// Fairness constraints beyond the processes' (with `--fair`): per process and
    /// transition, the store buffer a step flushes; every buffer must be flushed whenever
    /// it stays full.
    pub(crate) buffers: Option<(&'a [Vec<Option<u32>>], u32)>,
    pub(crate) fair_processes: bool,
}

impl<'a> Dve<'a> {
    pub(crate) fn new(sys: &'a fencer_dve::System, product: bool) -> Dve<'a> {
        Dve {
            sys,
            product,
            buffers: None,
            fair_processes: true,
        }
    }
}

thread_local! {
    /// Scratch space for a successor, per thread (the engine may call from several):
    /// no allocation per state.
    static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl TransitionSystem for Dve<'_> {
    type Label = Label;
    fn width(&self) -> usize {
        self.sys.width as usize
    }
    fn initial(&self) -> Vec<u8> {
        self.sys.initial.clone()
    }
    fn successors(&self, s: &[u8], f: &mut dyn FnMut(Label, fencer_explicit::Next<'_>)) {
        BUF.with(|cell| {
            // Taken out of the cell: `f` may ask for successors again (a counterexample's
            // labels are found that way).
            let mut buf = cell.take();
            let f = &mut |l, r: fencer_dve::run::Next<'_>| f(l, r.map_err(|e| e.message));
            if self.product {
                self.sys.product_successors(s, &mut buf, f);
            } else {
                self.sys.successors(s, &mut buf, f);
            }
            cell.replace(buf);
        })
    }
    fn accepting(&self, s: &[u8]) -> bool {
        self.product && self.sys.accepting(s)
    }
    fn byte_values(&self) -> Option<Vec<[u64; 4]>> {
        Some(self.sys.byte_values())
    }
    fn processes(&self) -> u32 {
        let procs = if self.fair_processes {
            self.sys.processes.len() as u32
        } else {
            0
        };
        procs + self.buffers.map_or(0, |b| b.1)
    }
    fn moved(&self, l: Label, out: &mut Vec<u32>) {
        let procs = if self.fair_processes {
            self.sys.processes.len() as u32
        } else {
            0
        };
        for (p, t) in std::iter::once(l.first).chain(l.second) {
            if self.fair_processes && !self.sys.processes[p as usize].property {
                out.push(p);
            }
            if let Some(g) = self
                .buffers
                .and_then(|b| *b.0.get(p as usize)?.get(t as usize)?)
            {
                out.push(procs + g);
            }
        }
    }
}

/// A counterexample line for one step.
fn step_line(
    sys: &fencer_dve::System,
    path: &str,
    line_of: impl Fn(fencer_dve::ast::Span) -> (u32, u32),
    step: usize,
    l: Label,
    op: String,
) -> TraceLine {
    let (p, t) = l.first;
    let pr = &sys.processes[p as usize];
    let (line, column) = line_of(pr.trans[t as usize].span);
    TraceLine {
        step,
        thread: pr.name.clone(),
        file: path.to_string(),
        line,
        column,
        function: None,
        op,
        location: None,
        value: None,
        buffer_update: false,
    }
}

/// `-D NAME=VALUE` sets a DVE `input` constant.
pub(crate) fn overrides(args: &Options) -> Result<std::collections::HashMap<String, i32>, String> {
    let mut m = std::collections::HashMap::new();
    for d in &args.define {
        let parsed = d
            .split_once('=')
            .and_then(|(k, v)| Some((k.to_string(), v.trim().parse::<i32>().ok()?)));
        match parsed {
            Some((k, v)) => {
                m.insert(k, v);
            }
            None => {
                return Err(format!(
                    "error: -D {d}: a DVE model takes `-D NAME=VALUE` with an integer VALUE (it sets an `input` constant)"
                ))
            }
        }
    }
    Ok(m)
}

pub fn check(args: &Options, timeout: Option<Duration>) -> Result<Outcome, Error> {
    // --timeout bounds the whole run, every property together.
    let started = std::time::Instant::now();
    let left = || timeout.map(|t| t.saturating_sub(started.elapsed()));
    let path = args.file.display().to_string();
    let src = crate::read_source(args)?;
    let ov = overrides(args).map_err(|msg| Error::usage(&msg, None))?;
    let sys = fencer_dve::load(&path, &src, &ov).map_err(|d| Error::diagnostic(&d, &src))?;
    let (sys, relaxed) = match dve_relaxed::prepare(args, &path, &src, &ov, &sys)? {
        Some((s, r)) => (s, Some(r)),
        None => (sys, None),
    };
    let relaxed = relaxed.as_ref();
    // The properties to answer: `--ltl`, else the model's property process, else its
    // `property ltl` items; none means reachability (errors, assertions, --reach,
    // --deadlock).
    let props = properties(args, &sys)?;
    if let Some(msg) = refuse_for_the_question(args, props.is_empty()) {
        return Err(Error::usage(&msg, None));
    }
    if props.is_empty() {
        let (report, text) = check_one(args, left(), &path, &src, &sys, None, relaxed)?;
        return Ok(Outcome {
            verdict: report.verdict,
            output: if args.json {
                format!("{}\n", report.to_json())
            } else {
                text
            },
            messages: Vec::new(),
            report: Some(report),
            split: None,
            shown: None,
        });
    }
    let mut results = Vec::new();
    for (name, formula, psys) in &props {
        let title = match formula {
            Some(f) => format!("property {name}: {f}"),
            None => format!("property process `{name}`"),
        };
        let (report, text) = check_one(args, left(), &path, &src, psys, Some(&title), relaxed)?;
        results.push((name.clone(), formula.clone(), report, text));
    }
    let verdict = if results.iter().any(|r| r.2.verdict == Verdict::Violation) {
        Verdict::Violation
    } else if results.iter().any(|r| r.2.verdict == Verdict::Incomplete) {
        Verdict::Incomplete
    } else {
        Verdict::Safe
    };
    let output = if args.json {
        if results.len() == 1 {
            format!("{}\n", results[0].2.to_json())
        } else {
            let list: Vec<serde_json::Value> = results
                .iter()
                .map(|(n, f, r, _)| {
                    serde_json::json!({
                        "property": n,
                        "formula": f,
                        "report": serde_json::to_value(r).expect("json"),
                    })
                })
                .collect();
            format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({ "properties": list }))
                    .expect("json")
            )
        }
    } else {
        let texts: Vec<&str> = results.iter().map(|r| r.3.as_str()).collect();
        texts.join("\n")
    };
    let report = (results.len() == 1).then(|| results.swap_remove(0).2);
    Ok(Outcome {
        verdict,
        output,
        messages: Vec::new(),
        report,
        split: None,
        shown: None,
    })
}

/// One property (or reachability): the report and its text.
fn check_one(
    args: &Options,
    timeout: Option<Duration>,
    path: &str,
    src: &str,
    sys: &fencer_dve::System,
    title: Option<&str>,
    relaxed: Option<&dve_relaxed::Relaxed>,
) -> Result<(Report, String), Error> {
    let path = path.to_string();
    let goal = match &args.reach {
        Some(e) => match sys.expression("--reach", e) {
            Ok(c) => Some(c),
            Err(d) => return Err(Error::diagnostic(&d, e)),
        },
        None => None,
    };
    let opts = SearchOptions {
        deadlock: args.deadlock,
        timeout,
        max_states: args.max_states,
        exhaustive: args.keep_going,
        jobs: args.workers(),
        unpacked: args.no_pack,
        ranks: args.ranks.clone(),
    };
    let judge = |s: &[u8]| -> Option<String> {
        if let Some((p, text)) = sys.failed_assertion(s) {
            return Some(format!(
                "assertion `{text}` of {} fails",
                sys.processes[p].name
            ));
        }
        let g = goal.as_ref()?;
        match sys.eval(g, s) {
            Ok(0) => None,
            Ok(_) => Some(format!("`{}` holds", args.reach.as_deref().unwrap_or(""))),
            Err(e) => Some(format!("`--reach` fails to evaluate: {}", e.message)),
        }
    };
    let ltl = sys.property.is_some() && args.reach.is_none() && !args.deadlock;
    let line_of = |span: fencer_dve::ast::Span| {
        let d = fencer_text::Diagnostic::new(&path, src, span, "", "");
        (d.line, d.col)
    };
    // One line per step: the process, its transition, the variables it changed.
    let lines = |initial: &[u8], steps: &[(Label, Vec<u8>)], cycle_from: Option<usize>| {
        let mut events = Vec::new();
        let mut prev = initial.to_vec();
        for (k, (l, s)) in steps.iter().enumerate() {
            if let Some(r) = relaxed {
                let note = if cycle_from == Some(k) {
                    "   <- the cycle starts here"
                } else {
                    ""
                };
                events.push(r.step_line(sys, &path, k + 1, *l, (&prev, s), note));
                prev = s.clone();
                continue;
            }
            let ch = sys.changes(&prev, s);
            let mut op = sys.describe(*l);
            if !ch.is_empty() {
                op.push_str(&format!("  [{}]", ch.join(", ")));
            }
            if cycle_from == Some(k) {
                op = format!("{op}   <- the cycle starts here");
            }
            events.push(step_line(sys, &path, line_of, k + 1, *l, op));
            prev = s.clone();
        }
        events
    };
    let (counterexample, stats, stopped, accepting) = if ltl {
        let mut product = Dve::new(sys, true);
        let buffer_fair = relaxed.filter(|r| r.fairness);
        if let Some(r) = buffer_fair {
            product.buffers = Some((&r.group_of, r.meta.groups));
            product.fair_processes = args.fair;
        }
        let fair = args.fair || buffer_fair.is_some();
        let max = fencer_explicit::dist::MAX_FAIR_PROCESSES;
        if fair
            && opts.ranks.as_ref().is_some_and(|r| r.size() > 1)
            && product.processes() as usize > max
        {
            return Err(Error::usage(
                &format!(
                    "error: a weakly fair search across ranks takes at most {max} fairness constraints, and this run has {} ({}): run it without mpirun",
                    product.processes(),
                    if buffer_fair.is_some() { "processes and store-buffer groups" } else { "processes" }
                ),
                None,
            ));
        }
        let out = if dve_relaxed::terminal_acceptance(sys) {
            dve_relaxed::accepting_prefix(&product, &opts)
        } else if args.fair || buffer_fair.is_some() {
            fencer_explicit::fair_accepting_cycle(&product, &opts)
        } else {
            fencer_explicit::accepting_cycle(&product, &opts)
        };
        let cex = out.lasso.as_ref().map(|l| {
            let mut steps = l.prefix.clone();
            steps.extend(l.cycle.iter().cloned());
            let events = lines(&l.initial, &steps, Some(l.prefix.len()));
            Counterexample {
                kind: "ltl".into(),
                message: if l.cycle.is_empty() {
                    format!(
                        "the property process `{}` accepts after step {}, whatever follows: the property is violated",
                        sys.processes[sys.property.expect("ltl")].name,
                        steps.len()
                    )
                } else {
                    format!(
                        "an accepting cycle of the property process `{}`: the property is violated (steps {}..{} repeat forever)",
                        sys.processes[sys.property.expect("ltl")].name,
                        l.prefix.len() + 1,
                        steps.len()
                    )
                },
                file: Some(path.clone()),
                // A flush has no line of its own: the last step that has one.
                line: events.iter().rev().find(|e| e.line > 0).map(|e| e.line),
                column: events.iter().rev().find(|e| e.line > 0).map(|e| e.column),
                events,
                final_state: None,
                schedule: Vec::new(),
            }
        });
        (cex, out.stats, out.stopped, Some(out.accepting))
    } else {
        let judged = sys.has_assertions() || goal.is_some();
        let found = reach(&Dve::new(sys, false), &opts, judged.then_some(&judge as _));
        let cex = found.found.as_ref().map(|f| {
            let mut events = lines(&f.initial, &f.steps, None);
            let (kind, message) = match &f.kind {
                FoundKind::Error(m) => ("error", m.clone()),
                FoundKind::Goal(m) if m.starts_with("assertion") => ("assertion", m.clone()),
                FoundKind::Goal(m) => ("reached", m.clone()),
                FoundKind::Deadlock => ("deadlock", "no process can move".to_string()),
            };
            if let Some(l) = f.failed {
                let n = events.len() + 1;
                match relaxed {
                    Some(r) => {
                        let last = f.steps.last().map_or(&f.initial, |s| &s.1);
                        let note = format!("  FAILS: {message}");
                        events.push(r.step_line(sys, &path, n, l, (last, last), &note));
                    }
                    None => {
                        let op = format!("{}  FAILS: {message}", sys.describe(l));
                        events.push(step_line(sys, &path, line_of, n, l, op));
                    }
                }
            }
            Counterexample {
                kind: kind.into(),
                message,
                file: Some(path.clone()),
                // A flush has no line of its own: the last step that has one.
                line: events.iter().rev().find(|e| e.line > 0).map(|e| e.line),
                column: events.iter().rev().find(|e| e.line > 0).map(|e| e.column),
                events,
                final_state: None,
                schedule: Vec::new(),
            }
        });
        (cex, found.stats, found.stopped, None)
    };
    let st = &stats;
    let kept_going = args.keep_going
        && !ltl
        && (st.errors > 0 || st.goals > 0 || (args.deadlock && st.deadlocks > 0));
    let verdict = if counterexample.is_some() || kept_going {
        Verdict::Violation
    } else if stopped.is_some() {
        Verdict::Incomplete
    } else {
        Verdict::Safe
    };
    let ms = st.elapsed.as_millis() as u64;
    let model = match relaxed {
        Some(r) => format!("dve/{}", r.model),
        None => "dve".into(),
    };
    let program = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let report = Report {
        stats: Stats {
            states: Some(st.states),
            transitions: Some(st.transitions),
            state_memory_bytes: Some(st.memory),
            state_bytes: Some(st.state_bytes),
            elapsed_ms: ms,
            peak_rss_kib: peak_rss_kib(),
            ranks: (!st.ranks.is_empty()).then(|| {
                let rss = ranks_rss(args);
                st.ranks
                    .iter()
                    .enumerate()
                    .map(|(k, r)| fencer_report::RankShare {
                        rank: k as u64,
                        states: r.states,
                        state_memory_bytes: r.memory,
                        work_ms: r.work.as_millis() as u64,
                        comm_ms: r.comm.as_millis() as u64,
                        sent_bytes: r.sent,
                        peak_rss_kib: rss.get(k).copied().flatten(),
                    })
                    .collect()
            }),
            ..Default::default()
        },
        counterexample,
        stopped_by: stopped.map(|s| match s {
            "timeout" => fencer_report::Limit::Timeout,
            _ => fencer_report::Limit::MaxStates,
        }),
        ..Report::new(verdict, &model, "explicit", &program, ms)
    };
    let text = {
        let what = match (ltl, args.deadlock, args.reach.is_some()) {
            (true, _, _) if args.fair => "the property holds on every weakly fair run (no fair accepting cycle)",
            (true, _, _) => "the property holds: no accepting cycle in the product with the property process",
            (_, true, true) => "no run-time error, failed assertion, reached goal or deadlock in any reachable state",
            (_, true, false) => "no run-time error, failed assertion or deadlock in any reachable state",
            (_, false, true) => "no run-time error, failed assertion or reached goal in any reachable state",
            (_, false, false) => "no run-time error or failed assertion in any reachable state",
        };
        let verdict = match report.verdict {
            Verdict::Safe => format!("SAFE: {what}"),
            Verdict::Violation if ltl => "VIOLATION: the property does not hold".to_string(),
            Verdict::Violation => "VIOLATION".to_string(),
            Verdict::Incomplete => "INCOMPLETE: stopped by a limit".to_string(),
        };
        let under = match relaxed {
            Some(r) => {
                let buffers = match r.meta.bound {
                    Some(k) => format!(
                        "store buffers of at most {k} writes: a SAFE verdict holds up to that bound"
                    ),
                    None => format!("{} store buffers", r.meta.buffers.len()),
                };
                let fair = if ltl && r.fairness {
                    "; only runs that flush every buffered write count"
                } else {
                    ""
                };
                format!(", under {} ({buffers}{fair})", r.model)
            }
            None => String::new(),
        };
        let ranks = match st.ranks.len() {
            0 => String::new(),
            n => format!(" on {n} ranks"),
        };
        let mut text = match title {
            Some(t) => format!(
                "{} (DVE, explicit-state{ranks}{under}), {t}: {verdict}\n",
                report.program
            ),
            None => format!(
                "{} (DVE, explicit-state{ranks}{under}): {verdict}\n",
                report.program
            ),
        };
        if let Some(l) = &report.stopped_by {
            text.push_str(&format!("  stopped: {}\n", fencer_report::limit_text(l)));
        }
        if let (Some(p), false) = (sys.property, ltl) {
            text.push_str(&format!(
                "  note: the property process `{}` is not checked with --reach or --deadlock\n",
                sys.processes[p].name
            ));
        }
        if sys.property.is_none() && !sys.ltl.is_empty() && (args.reach.is_some() || args.deadlock)
        {
            text.push_str(&format!(
                "  note: the model's `property ltl` items ({}) are not checked with --reach or --deadlock\n",
                sys.ltl.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        if kept_going {
            text.push_str(&format!(
                "  --keep-going: {} steps end in a run-time error, {} reachable states are errors or goals{} (run without --keep-going for a counterexample)\n",
                st.errors,
                st.goals,
                if args.deadlock { format!(", {} are deadlocks", st.deadlocks) } else { String::new() }
            ));
        }
        if let Some(c) = &report.counterexample {
            text.push('\n');
            text.push_str(&fencer_report::render_counterexample(c));
        }
        let rate = st.states as f64 / st.elapsed.as_secs_f64().max(1e-9);
        text.push_str(&format!(
            "\nstates: {}  transitions: {}",
            st.states, st.transitions
        ));
        match accepting {
            Some(a) => text.push_str(&format!("  accepting: {a}")),
            None => text.push_str(&format!(
                "  deadlocks: {}  levels: {}",
                st.deadlocks, st.levels
            )),
        }
        text.push_str(&format!(
            "  ({rate:.0} states/s)\ntime: {ms} ms  state memory: {:.1} MiB ({} of {} bytes a state{})",
            st.memory as f64 / (1 << 20) as f64,
            st.state_bytes,
            sys.width,
            if st.state_bytes < sys.width as u64 { ", bit-packed" } else { "" }
        ));
        if let Some(k) = report.stats.peak_rss_kib {
            let whose = if st.ranks.is_empty() { "" } else { " (rank 0)" };
            text.push_str(&format!(
                "  peak memory{whose}: {:.1} MiB",
                k as f64 / 1024.0
            ));
        }
        text.push('\n');
        if let Some(r) = &report.stats.ranks {
            text.push_str(&ranks_text(r));
        }
        text
    };
    Ok((report, text))
}

/// Options that ask about LTL when the run answers reachability, or the reverse: which
/// question is asked is known once the model is read (its property process or `property
/// ltl` items), so `applies` cannot tell.
pub(crate) fn refuse_for_the_question(args: &Options, reachability: bool) -> Option<String> {
    let set = args.set();
    let given = |id: &str| set.contains(id);
    if given("ltl") && (args.reach.is_some() || args.deadlock) {
        return Some(
            "error: --ltl cannot be combined with --reach or --deadlock: those ask whether a state is reachable, which is another run (run them one after the other)".into(),
        );
    }
    let why = if args.reach.is_some() || args.deadlock {
        "--reach or --deadlock asks about reachability"
    } else {
        "the model has no property process or `property ltl` item, and no --ltl was given"
    };
    for (id, flag) in [
        ("fair", "--fair"),
        ("no_buffer_fairness", "--no-buffer-fairness"),
    ] {
        if given(id) && reachability {
            return Some(format!(
                "error: {flag} applies to LTL properties (it says which infinite runs count); this run checks reachability: {why}"
            ));
        }
    }
    if given("keep_going") && !reachability {
        return Some(
            "error: --keep-going applies to reachability (errors, assertions, --reach, --deadlock); this run checks LTL properties, whose counterexample is the first accepting cycle".into(),
        );
    }
    None
}

/// The LTL properties to check, each as (name, formula if any, the model with the
/// property's automaton as its property process).
#[allow(clippy::type_complexity)]
pub(crate) fn properties(
    args: &Options,
    sys: &fencer_dve::System,
) -> Result<Vec<(String, Option<String>, fencer_dve::System)>, Error> {
    if args.reach.is_some() || args.deadlock {
        return Ok(Vec::new());
    }
    let mut defines: Vec<(String, String)> = Vec::new();
    let mut formulas: Vec<(String, String)> = Vec::new();
    // A `.ltl` file is DiVinE's: its formulas are read as DiVinE reads them.
    let mut divine_file = false;
    if let Some(l) = &args.ltl {
        let file = std::path::Path::new(l);
        if l.ends_with(".ltl") || file.is_file() {
            let text = std::fs::read_to_string(file).map_err(|e| {
                Error::usage(&format!("{l}: error: cannot read the file: {e}"), None)
            })?;
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if let Some(d) = line.strip_prefix("#define") {
                    let d = d.trim();
                    let (name, expr) = d.split_once(char::is_whitespace).ok_or_else(|| {
                        Error::usage(
                            &format!("{l}:{}: error: expected `#define NAME EXPRESSION`", n + 1),
                            None,
                        )
                    })?;
                    defines.push((name.to_string(), expr.trim().to_string()));
                } else if let Some(f) = line.strip_prefix("#property") {
                    formulas.push((format!("{}", formulas.len() + 1), f.trim().to_string()));
                    divine_file = true;
                } else if !line.is_empty() && !line.starts_with("//") {
                    return Err(Error::usage(&format!("{l}:{}: error: expected `#define NAME EXPRESSION` or `#property FORMULA`", n + 1),
                        None,
                    ));
                }
            }
            if formulas.is_empty() {
                return Err(Error::usage(
                    &format!("{l}: error: no `#property` line"),
                    None,
                ));
            }
        } else {
            formulas.push(("--ltl".to_string(), l.clone()));
        }
    } else if let Some(p) = sys.property {
        return Ok(vec![(sys.processes[p].name.clone(), None, sys.clone())]);
    } else {
        formulas = sys.ltl.clone();
    }
    let mut out = Vec::new();
    let resolve =
        |f: &fencer_ltl::Formula| -> Result<Vec<fencer_dve::sem::CExpr>, (String, String)> {
            let mut atoms = Vec::new();
            for a in &f.atoms {
                let compiled = match defines.iter().find(|(n, _)| n == a) {
                    Some((_, e)) => sys.expression(a, e),
                    None if sys.definitions.contains_key(a) => Ok(sys.definitions[a].clone()),
                    None => sys.expression(a, a),
                };
                atoms.push(compiled.map_err(|d| (a.clone(), d.message))?);
            }
            Ok(atoms)
        };
    let syntax_error = |name: &str, text: &str, e: fencer_ltl::Error| {
        Error::usage(
            &format!(
                "error: in LTL property {name} `{text}`: {} (at column {})",
                e.message,
                e.offset + 1
            ),
            None,
        )
    };
    for (name, text) in formulas {
        let parsed = if divine_file {
            fencer_ltl::parse_divine(&text)
        } else {
            fencer_ltl::parse(&text)
        };
        let f = parsed.map_err(|e| syntax_error(&name, &text, e))?;
        // A formula given with --ltl in DiVinE's style (`GFa`, `!p1U(p1&&co)`) reads, in
        // fencer's grammar, as propositions the model does not define: then it is read
        // as DiVinE would, if every proposition of that reading is defined.
        let (f, atoms) = match resolve(&f) {
            Ok(atoms) => (f, atoms),
            Err((a, why)) => {
                let divine = (!divine_file)
                    .then(|| fencer_ltl::parse_divine(&text).ok())
                    .flatten()
                    .and_then(|g| resolve(&g).ok().map(|atoms| (g, atoms)));
                match divine {
                    Some(x) => x,
                    None => {
                        return Err(Error::usage(&format!(
                                "error: in LTL property {name}: the proposition `{a}` is not defined (`#define {a} EXPR` in the .ltl file, an `expression` in the model, or a variable): {why}"
                            ),
                            None,
                        ))
                    }
                }
            }
        };
        let b = fencer_ltl::negation(&f.ltl);
        out.push((name, Some(text), sys.with_property(&b, &atoms)));
    }
    Ok(out)
}

/// Every rank's peak resident memory (a collective call: every rank of a distributed run
/// makes it, for the same report).
fn ranks_rss(args: &Options) -> Vec<Option<u64>> {
    let Some(r) = &args.ranks else {
        return Vec::new();
    };
    let mine = peak_rss_kib().map_or(u64::MAX, |k| k);
    r.0.gather_all(&mine.to_le_bytes())
        .iter()
        .map(|b| {
            let k = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
            (k != u64::MAX).then_some(k)
        })
        .collect()
}

/// A distributed run's shares, one line per rank: what it stored, what it cost, and how
/// its time split between work and talk.
fn ranks_text(ranks: &[fencer_report::RankShare]) -> String {
    let mut text = format!("ranks: {}\n", ranks.len());
    for r in ranks {
        let secs = r.work_ms as f64 / 1000.0;
        let total = (r.work_ms + r.comm_ms).max(1) as f64;
        let rss = r
            .peak_rss_kib
            .map(|k| format!(", peak memory {:.1} MiB", k as f64 / 1024.0))
            .unwrap_or_default();
        // Rates and shares of a few milliseconds say nothing: shown from 10 ms of work.
        let rate = if r.work_ms >= 10 && r.states > 0 {
            format!(
                " ({:.0} states/s of work, {:.1} table bytes a state)",
                r.states as f64 / secs,
                r.state_memory_bytes as f64 / r.states as f64
            )
        } else {
            String::new()
        };
        text.push_str(&format!(
            "  rank {}: {} states{rate}, work {:.2} s, exchange {:.2} s ({:.0}%), sent {:.1} MiB{rss}\n",
            r.rank,
            r.states,
            secs,
            r.comm_ms as f64 / 1000.0,
            100.0 * r.comm_ms as f64 / total,
            r.sent_bytes as f64 / (1 << 20) as f64,
        ));
    }
    text
}
