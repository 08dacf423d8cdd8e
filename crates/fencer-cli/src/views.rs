//! Views of a counterexample (`--view FILE.svg|FILE.dot`, `--html`, `--sarif`), trace
//! files (`--save-trace`), and `fencer replay`. The rendering is `fencer-view`'s; this
//! file only wires it to the commands.

use super::*;
use fencer_report::{Counterexample, RobustReport};
use fencer_view::tracefile::TraceFile;
use fencer_view::{Execution, Limits, TraceStep};
use std::path::Path;

/// The options every command that finds counterexamples takes.
#[derive(clap::Args, Clone, Default)]
pub struct ViewArgs {
    /// Draw the counterexample: `FILE.svg` a timeline (threads, store buffers, memory;
    /// reads-from, store order, from-reads), `FILE.dot` the execution graph (Graphviz).
    #[arg(long, value_name = "FILE.svg|FILE.dot")]
    pub view: Option<PathBuf>,
    /// Write a self-contained HTML report: verdict, statistics, marked source, timeline,
    /// and a step slider showing registers, buffers and memory after each step.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the result as SARIF 2.1.0 (one result per violation, the execution as a code
    /// flow), for editors, code review and CI dashboards.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Write the counterexample's schedule to FILE, for `fencer replay` (docs: the
    /// `fencer_view::tracefile` module; one step per line: `t0`, `upd(t0)`, `upd(t0,x)`).
    #[arg(long, value_name = "FILE")]
    pub save_trace: Option<PathBuf>,
    /// Draw (and save) the first execution that ends in this final state instead of the
    /// counterexample, e.g. `--final 'p.r1=0 q.r2=0'` (the names the final states list;
    /// use `check --all` so that every final state is reached).
    #[arg(long = "final", value_name = "NAME=VALUE...")]
    pub final_state: Option<String>,
}

impl ViewArgs {
    /// The first view option given, as the user writes it.
    pub fn flag(&self) -> Option<&'static str> {
        [
            (self.view.is_some(), "--view"),
            (self.html.is_some(), "--html"),
            (self.sarif.is_some(), "--sarif"),
            (self.save_trace.is_some(), "--save-trace"),
            (self.final_state.is_some(), "--final"),
        ]
        .into_iter()
        .find_map(|(given, f)| given.then_some(f))
    }

    pub fn any(&self) -> bool {
        self.final_state.is_some()
            || self.view.is_some()
            || self.html.is_some()
            || self.sarif.is_some()
            || self.save_trace.is_some()
    }
}

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The program the trace was saved from (`.fen`, `.litmus`, `.c`, ...).
    program: PathBuf,
    /// The trace file (`--save-trace`).
    trace: PathBuf,
    /// Memory model (default: the trace's).
    #[arg(long, short, value_enum)]
    model: Option<Model>,
    /// Print the replayed execution as JSON.
    #[arg(long)]
    json: bool,
    /// C: the clang 14 to compile with.
    #[arg(long, value_name = "PATH")]
    clang: Option<PathBuf>,
    /// C: compiler flags, after `--` (default: the ones the trace records).
    #[arg(last = true, value_name = "CFLAGS")]
    cflags: Vec<String>,
    #[command(flatten)]
    views: ViewArgs,
}

pub const REPLAY_HELP: &str = "Re-executes exactly the execution a trace file describes \
(`fencer check --save-trace FILE`): every step must be enabled when its turn comes. The \
program is loaded as `check` loaded it (the trace records the bounds, the spin-loop rewrite \
and the C flags) and its IR is compared with the hash the trace records: a program that \
changed is reported, and a step that no longer fits is an error naming the step and why.\n\n\
Example:\n  fencer check examples/sb.fen -m tso --save-trace sb.trace\n  fencer replay examples/sb.fen sb.trace\n\n\
Exit codes: 0 the execution violates nothing, 1 it ends in a violation, 2 bad input or a \
trace that does not fit the program.";

fn write_file(path: &Path, text: &str) -> Result<(), ExitCode> {
    std::fs::write(path, text).map_err(|e| {
        eprintln!("{}: error: cannot write the file: {e}", path.display());
        ExitCode::from(EXIT_USAGE)
    })
}

/// The text of the source files the execution's events name, those that can be read.
fn sources(x: &Execution) -> Vec<(String, String)> {
    let mut files: Vec<String> = Vec::new();
    for l in x.lines() {
        if !files.contains(&l.file) {
            files.push(l.file.clone());
        }
    }
    if let Some(f) = x.cex.as_ref().and_then(|c| c.file.clone()) {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    files
        .into_iter()
        .filter_map(|f| std::fs::read_to_string(&f).ok().map(|t| (f, t)))
        .collect()
}

/// Writes the drawing, the HTML report and the SARIF log the options ask for.
fn write_views(
    v: &ViewArgs,
    x: Option<&Execution>,
    report: Option<&Report>,
    program: &str,
    model: ModelKind,
    violations: &[&Counterexample],
) -> Result<(), ExitCode> {
    if let Some(p) = &v.sarif {
        write_file(
            p,
            &fencer_view::sarif::render(program, model.name(), violations),
        )?;
    }
    let Some(x) = x else {
        for p in [&v.view, &v.html, &v.save_trace].into_iter().flatten() {
            eprintln!(
                "{}: not written: there is no counterexample to show",
                p.display()
            );
        }
        return Ok(());
    };
    if let Some(p) = &v.view {
        let text = match p.extension().and_then(|e| e.to_str()) {
            Some("dot" | "gv") => fencer_view::dot::render(x),
            Some("svg") => fencer_view::svg::render(x),
            _ => {
                eprintln!(
                    "{}: error: --view writes `.svg` (a timeline) or `.dot` (the execution graph)",
                    p.display()
                );
                return Err(ExitCode::from(EXIT_USAGE));
            }
        };
        write_file(p, &text)?;
    }
    if let Some(p) = &v.html {
        write_file(p, &fencer_view::html::render(x, report, &sources(x)))?;
    }
    Ok(())
}

/// A `--view` file fencer cannot write, found before anything is explored (not after a
/// long run, and not only when there is a counterexample to draw).
pub fn refuse_bad_paths(v: &ViewArgs) -> Option<String> {
    let p = v.view.as_ref()?;
    match p.extension().and_then(|e| e.to_str()) {
        Some("dot" | "gv" | "svg") => None,
        _ => Some(format!(
            "{}: error: --view writes `.svg` (a timeline) or `.dot` (the execution graph)",
            p.display()
        )),
    }
}

/// The C flags `check` passed to clang, as the trace records them.
fn c_flags(args: &Options) -> Vec<String> {
    if !fencer::Kind::of(&args.file).is_some_and(|k| k.is_c()) {
        return Vec::new();
    }
    let mut flags: Vec<String> = args.define.iter().map(|d| format!("-D{d}")).collect();
    flags.extend(args.include.iter().map(|i| format!("-I{}", i.display())));
    if let Some(std) = &args.std {
        flags.push(format!("-std={std}"));
    }
    flags.extend(args.cflags.iter().cloned());
    flags
}

fn trace_file(args: &Options, x: &Execution, c: &Counterexample, robust: bool) -> TraceFile {
    let lines = x.lines();
    TraceFile {
        program: args.file.display().to_string(),
        model: x.model,
        ir_hash: fencer_view::program_hash(x.prog),
        unroll: args.unroll,
        max_depth: args.max_depth.min(u32::MAX as usize) as u32,
        spin_assume: !args.no_spin_assume,
        ignore_condition: robust,
        spurious_wakeups: !args.no_spurious_wakeups,
        cflags: c_flags(args),
        violation: Some(match (&c.file, c.line, c.column) {
            (Some(f), Some(l), Some(col)) => format!("{} {f}:{l}:{col}", c.kind),
            _ => c.kind.clone(),
        }),
        steps: c
            .schedule
            .iter()
            .map(|&s| TraceStep::of(x.prog, s))
            .collect(),
        comments: lines
            .iter()
            .map(|l| format!("{:<10} {}:{}  {}", l.thread, l.line, l.column, l.op))
            .collect(),
    }
}

fn limits(args: &Options) -> Limits {
    Limits {
        unroll: args.unroll,
        max_depth: args.max_depth.min(u32::MAX as usize) as u32,
    }
}

/// Replays a counterexample the engine found: every counterexample must replay.
fn replay_found<'p>(
    prog: &'p fencer_ir::Program,
    model: ModelKind,
    limits: Limits,
    c: &Counterexample,
) -> Result<Execution<'p>, ExitCode> {
    fencer_view::replay_schedule(prog, model, limits, &c.schedule).map_err(|e| {
        eprintln!("internal error: the counterexample does not replay: {e}");
        ExitCode::from(crate::EXIT_INTERNAL)
    })
}

/// After `check`: the views and the trace file the options ask for.
pub fn after_check(
    args: &Options,
    v: &ViewArgs,
    prog: &fencer_ir::Program,
    model: ModelKind,
    report: &Report,
) -> Result<(), ExitCode> {
    if !v.any() {
        return Ok(());
    }
    if let Some(want) = &v.final_state {
        return draw_final_state(args, v, prog, model, report, want);
    }
    let cex = report.counterexample.as_ref();
    let x = match cex {
        Some(c) => Some(replay_found(prog, model, limits(args), c)?),
        None => None,
    };
    if let (Some(p), Some(x), Some(c)) = (&v.save_trace, &x, cex) {
        write_file(p, &trace_file(args, x, c, false).render())?;
    }
    let violations: Vec<&Counterexample> = cex.into_iter().collect();
    write_views(v, x.as_ref(), Some(report), &prog.name, model, &violations)
}

/// `--final 'a=1 b=2'`: the first execution that ended in the final state where every
/// named variable has its value.
fn draw_final_state(
    args: &Options,
    v: &ViewArgs,
    prog: &fencer_ir::Program,
    model: ModelKind,
    report: &Report,
    want: &str,
) -> Result<(), ExitCode> {
    let usage = |msg: String| {
        eprintln!("{msg}");
        ExitCode::from(EXIT_USAGE)
    };
    let mut pairs = Vec::new();
    for part in want.split([' ', ',']).filter(|p| !p.is_empty()) {
        let Some((name, value)) = part.split_once('=') else {
            return Err(usage(format!(
                "error: --final expects NAME=VALUE pairs, found `{part}`"
            )));
        };
        let Some(k) = report.final_vars.iter().position(|n| n == name.trim()) else {
            return Err(usage(format!(
                "error: --final: no variable `{name}` in the final states (they list: {})",
                report.final_vars.join(", ")
            )));
        };
        let Ok(value) = value.trim().parse::<i64>() else {
            return Err(usage(format!(
                "error: --final: `{value}` is not an integer"
            )));
        };
        pairs.push((k, value));
    }
    let states = report.final_states.as_deref().unwrap_or_default();
    let Some(i) = states
        .iter()
        .position(|st| pairs.iter().all(|&(k, x)| st[k] == x))
    else {
        let listed: Vec<String> = states
            .iter()
            .map(|st| {
                report
                    .final_vars
                    .iter()
                    .zip(st)
                    .map(|(n, x)| format!("{n}={x}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        return Err(usage(format!(
            "error: --final '{want}': no execution explored ends there{}; the final states reached:\n  {}",
            if args.all { "" } else { " (without --all, exploration stops at the first violation)" },
            listed.join("\n  ")
        )));
    };
    let schedule = &report.final_schedules[i].unpack();
    let x = fencer_view::replay_schedule(prog, model, limits(args), schedule).map_err(|e| {
        eprintln!("internal error: the execution does not replay: {e}");
        ExitCode::from(crate::EXIT_INTERNAL)
    })?;
    if let Some(p) = &v.save_trace {
        let c = Counterexample {
            kind: "final-state".into(),
            message: format!("an execution ending in {want}"),
            file: None,
            line: None,
            column: None,
            events: Vec::new(),
            final_state: None,
            schedule: schedule.clone(),
        };
        write_file(p, &trace_file(args, &x, &c, false).render())?;
    }
    write_views(v, Some(&x), Some(report), &prog.name, model, &[])
}

/// After `robust`: the first violation's witness (or a safety violation found on the
/// way) drawn, with the cycle highlighted; SARIF lists every violation.
pub fn after_robust(
    v: &ViewArgs,
    args: &Options,
    prog: &fencer_ir::Program,
    model: ModelKind,
    report: &RobustReport,
) -> Result<(), ExitCode> {
    if !v.any() {
        return Ok(());
    }
    let mut violations: Vec<&Counterexample> = report
        .violations
        .iter()
        .filter_map(|v| v.witness.as_ref())
        .collect();
    let shown: Option<(&Counterexample, Vec<usize>)> = match report.violations.first() {
        Some(first) => first.witness.as_ref().map(|w| {
            (
                w,
                first
                    .cycle
                    .iter()
                    .map(|c| c.event.step.saturating_sub(1))
                    .collect(),
            )
        }),
        None => None,
    };
    if let Some(c) = &report.report.counterexample {
        violations.push(c);
    }
    let shown = shown.or_else(|| {
        report
            .report
            .counterexample
            .as_ref()
            .map(|c| (c, Vec::new()))
    });
    let x = match shown {
        Some((c, highlight)) => {
            let mut x = replay_found(prog, model, limits(args), c)?;
            x.highlight = highlight;
            if x.cex.is_none() {
                x.cex = Some(c.clone());
            }
            if let Some(p) = &v.save_trace {
                write_file(p, &trace_file(args, &x, c, true).render())?;
            }
            Some(x)
        }
        None => None,
    };
    write_views(
        v,
        x.as_ref(),
        Some(&report.report),
        &prog.name,
        model,
        &violations,
    )
}

/// `check`'s arguments with every default, for loading `file`.
fn plain_args(file: &Path, model: ModelKind, json: bool) -> Options {
    Options {
        file: file.to_path_buf(),
        model: match model {
            ModelKind::Sc => Model::Sc,
            ModelKind::Tso => Model::Tso,
            ModelKind::Pso => Model::Pso,
        },
        json,
        ..Options::default()
    }
}

/// After `litmus FILE`: the execution that first satisfied the condition (herd7's
/// positive witness), when there is one. One file only: the views would overwrite
/// each other.
pub fn after_litmus(
    v: &ViewArgs,
    file: &Path,
    files: usize,
    prog: &fencer_ir::Program,
    model: ModelKind,
    report: &Report,
) -> Result<(), ExitCode> {
    if !v.any() {
        return Ok(());
    }
    if files > 1 {
        eprintln!(
            "error: --view, --html, --sarif and --save-trace take one litmus file ({files} given)"
        );
        return Err(ExitCode::from(EXIT_USAGE));
    }
    let mut args = plain_args(file, model, false);
    // `litmus` explores the program as written: no spin-loop rewrite.
    args.no_spin_assume = true;
    after_check(&args, v, prog, model, report)
}

/// `fencer replay PROGRAM TRACE`.
pub fn replay(a: ReplayArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&a.trace) {
        Ok(t) => t,
        Err(e) => {
            return usage_error(
                a.json,
                &format!("{}: error: cannot read the trace: {e}", a.trace.display()),
                None,
            )
        }
    };
    let t = match TraceFile::parse(&text) {
        Ok(t) => t,
        Err(e) => {
            return usage_error(
                a.json,
                &format!("{}: error: not a fencer trace: {e}", a.trace.display()),
                None,
            )
        }
    };
    let model: ModelKind = a.model.map_or(t.model, Into::into);
    if model != t.model {
        eprintln!(
            "note: the trace was saved under {}; replaying it under {model}",
            t.model
        );
    }
    let mut args = plain_args(&a.program, model, a.json);
    args.clang = a.clang.clone();
    args.cflags = if a.cflags.is_empty() {
        t.cflags.clone()
    } else {
        a.cflags.clone()
    };
    args.max_depth = t.max_depth as usize;
    args.unroll = t.unroll;
    args.no_spin_assume = !t.spin_assume;
    args.no_spurious_wakeups = !t.spurious_wakeups;
    let args = Arc::new(args);
    let mut prog = match fencer::load(&args, model) {
        Ok(p) => p,
        Err(e) => return failed(args.json, &e),
    };
    if t.ignore_condition {
        prog.cond = None;
    }
    if t.spin_assume {
        fencer_ir::spin::spin_assume(&mut prog);
    }
    let hash = fencer_view::program_hash(&prog);
    let changed = hash != t.ir_hash;
    if changed {
        eprintln!(
            "warning: {} is not the program the trace was saved from (its IR hash is {hash}, \
             the trace's {}): replaying anyway",
            a.program.display(),
            t.ir_hash
        );
    }
    let lim = Limits {
        unroll: t.unroll,
        max_depth: t.max_depth,
    };
    let x = match fencer_view::replay(&prog, model, lim, &t.steps) {
        Ok(x) => x,
        Err(e) => {
            let help = if changed {
                "\n  help: the program changed since the trace was saved; save a new trace \
                 with `fencer check --save-trace`"
            } else {
                ""
            };
            return usage_error(
                a.json,
                &format!(
                    "{}: error: the trace does not fit the program: {e}{help}",
                    a.trace.display()
                ),
                None,
            );
        }
    };
    let code = if x.cex.is_some() { 1 } else { 0 };
    let verdict = match (&x.cex, x.enabled_at_end) {
        (Some(_), _) => "violation",
        (None, 0) => "safe",
        (None, _) => "incomplete",
    };
    if a.json {
        let lines = x.lines();
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({
                "verdict": verdict,
                "model": model.name(),
                "program": prog.name,
                "trace": a.trace.display().to_string(),
                "steps": t.steps.len(),
                "program_changed": changed,
                "counterexample": x.cex,
                "events": lines,
            }))
            .expect("json")
        ));
    } else {
        let mut s = format!(
            "{} under {} (replay of {}, {} steps): {}\n\n",
            prog.name,
            model.to_string().to_uppercase(),
            a.trace.display(),
            t.steps.len(),
            match verdict {
                "violation" => "VIOLATION".to_string(),
                "safe" => "no violation: the execution ends normally".to_string(),
                _ => format!(
                    "no violation so far: the trace ends before the execution does ({} steps enabled)",
                    x.enabled_at_end
                ),
            }
        );
        match &x.cex {
            Some(c) => s.push_str(&fencer_report::render_counterexample(c)),
            None => {
                let c = Counterexample {
                    kind: "none".into(),
                    message: String::new(),
                    file: None,
                    line: None,
                    column: None,
                    events: x.lines(),
                    final_state: None,
                    schedule: Vec::new(),
                };
                let r = fencer_report::render_counterexample(&c);
                s.push_str("execution:\n");
                s.push_str(r.split_once('\n').map_or("", |(_, rest)| rest));
            }
        }
        out(&s);
    }
    if let Err(c) = write_views(
        &a.views,
        Some(&x),
        None,
        &prog.name,
        model,
        &x.cex.iter().collect::<Vec<_>>(),
    ) {
        return c;
    }
    if let (Some(p), Some(_)) = (&a.views.save_trace, &x.cex) {
        let mut t2 = t.clone();
        t2.ir_hash = hash;
        if let Err(c) = write_file(p, &t2.render()) {
            return c;
        }
    }
    ExitCode::from(code)
}
