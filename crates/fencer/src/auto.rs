//! `--engine auto`: DPOR, except for two kinds of C program under SC that the symbolic
//! engine (abpress) answers and DPOR cannot, which it hands over and says so:
//!
//! - one with an input too wide to try value by value (`inputs::too_wide`): abpress
//!   treats an input as an unknown value;
//! - one in which a thread runs past every bound DPOR's shallow rounds try
//!   (`program::Rounds::loops_run_on`): loops that never end, such as two threads handing
//!   control back and forth for ever (GenMC's `pgsql`), give DPOR executions as long as
//!   `--max-depth` allows and a tree it cannot finish, where abpress, which needs no loop
//!   bound, proves the program within its budget ([`LOOP_NODES`]) or finds the violation.
//!   Over that budget, or on a program it does not take, DPOR goes on as before, with a
//!   note saying so.
//!
//! abpress looks for failed assertions and memory errors; where the program's
//! conventions make deadlocks and hangs violations, its verdict says that it did not
//! look for them (as it does when asked for by name), and the note says how deep DPOR's
//! rounds looked.

use crate::program::Rounds;
use crate::{applies, symbolic, Engine, Error, Kind, Options, Outcome, Verdict};
use fencer_memory::ModelKind;
use std::sync::Arc;
use std::time::Duration;

/// The tree nodes abpress may take for a program whose loops run on: plenty for the
/// protocols it proves at once (`pgsql`: 55 nodes, `examples/c/ping_pong.c`: 68).
const LOOP_NODES: u64 = 100_000;

/// The time abpress may take for such a program: at most this, and at most half of what
/// is left of `--timeout`, so that DPOR keeps the rest. A program abpress cannot prove
/// (a counter that grows for ever) costs this much more than DPOR alone.
const LOOP_TIME: Duration = Duration::from_secs(5);

/// Runs abpress on the program `args` names, with every option the user gave held to
/// abpress's rules (an error names the option and why auto chose abpress), and says in
/// the output and the JSON (`engine_choice`) that auto chose it and why. `max_nodes`
/// bounds its tree where auto sets the budget.
pub(crate) fn hand_to_abpress(
    args: &Arc<Options>,
    timeout: Option<Duration>,
    why: String,
    max_nodes: Option<u64>,
) -> Result<Outcome, Error> {
    let mut a = (**args).clone();
    a.engine = Engine::Abpress;
    // --input-values was honoured: it is what sent the program here.
    a.given.remove("input_values");
    a.input_values = fencer_machine::input::DEFAULT_LIMIT;
    if let Some(msg) = applies::refusal(&a) {
        return Err(Error::usage(
            &format!("{msg}\n  (--engine auto hands this program to --engine abpress: {why})"),
            None,
        ));
    }
    if max_nodes.is_some() {
        a.max_nodes = max_nodes;
    }
    let note = format!("--engine auto chose abpress: {why}");
    let mut out = symbolic::check_with(&a, timeout, a.por.into()).map_err(|mut e| {
        e.message = format!("{}\n  ({note})", e.message.trim_end());
        e
    })?;
    if a.json {
        if let Ok(mut j) = serde_json::from_str::<serde_json::Value>(&out.output) {
            j["engine_choice"] = serde_json::json!({ "engine": "abpress", "why": why });
            out.output = format!("{}\n", serde_json::to_string_pretty(&j).expect("json"));
        }
    } else {
        let at = out.output.find('\n').map_or(out.output.len(), |i| i + 1);
        out.output.insert_str(at, &format!("  engine: {note}\n"));
    }
    if let Some(r) = &mut out.report {
        r.notes.push(note);
    }
    Ok(out)
}

/// Adds a note to an outcome already rendered: a line after the verdict's, or an entry of
/// the JSON's `notes`.
pub(crate) fn add_note(out: &mut Outcome, note: &str, json: bool) {
    if let Some(r) = &mut out.report {
        r.notes.push(note.to_string());
    }
    if json {
        if let Ok(mut j) = serde_json::from_str::<serde_json::Value>(&out.output) {
            if let Some(a) = j["notes"].as_array_mut() {
                a.push(serde_json::json!(note));
            } else {
                j["notes"] = serde_json::json!([note]);
            }
            out.output = format!("{}\n", serde_json::to_string_pretty(&j).expect("json"));
        }
    } else {
        let at = out.output.find('\n').map_or(out.output.len(), |i| i + 1);
        out.output.insert_str(at, &format!("  note: {note}\n"));
    }
}

/// What became of a program whose loops ran past DPOR's shallow rounds.
pub(crate) enum Loops {
    /// abpress answered: its outcome is the check's.
    Answered(Box<Outcome>),
    /// DPOR goes on; with a note when abpress was tried and could not answer.
    Dpor(Option<String>),
}

/// `--engine auto` under SC on a C program in which a thread ran past every shallow
/// round's bound: abpress, within [`LOOP_NODES`] nodes and [`LOOP_TIME`], where it takes
/// the program and every option given.
pub(crate) fn loops_to_abpress(
    args: &Arc<Options>,
    model: ModelKind,
    timeout: Option<Duration>,
    rounds: &Rounds,
) -> Result<Loops, Error> {
    let c = Kind::of(&args.file).is_some_and(|k| k.is_c());
    if args.engine != Engine::Auto || model != ModelKind::Sc || !c || !rounds.loops_run_on() {
        return Ok(Loops::Dpor(None));
    }
    // An option abpress does not take (--unroll, --max-depth, --jobs, ...) asks for
    // DPOR's search: it is honoured by staying.
    let mut a = (**args).clone();
    a.engine = Engine::Abpress;
    if applies::refusal(&a).is_some() {
        return Ok(Loops::Dpor(None));
    }
    let slice = timeout.map_or(LOOP_TIME, |t| (t / 2).min(LOOP_TIME));
    let why = format!(
        "its threads ran on past each bound dpor's shallow rounds tried ({}), as loops \
         that never end do; abpress needs no loop bound",
        rounds.tried()
    );
    match hand_to_abpress(args, Some(slice), why, Some(LOOP_NODES)) {
        Ok(out) if matches!(out.verdict, Verdict::Safe | Verdict::Violation) => {
            Ok(Loops::Answered(Box::new(out)))
        }
        Ok(out) => {
            let budget = match out.report.as_ref().and_then(|r| r.stopped_by.as_ref()) {
                Some(fencer_report::Limit::Timeout) => format!("{} s", slice.as_secs_f64()),
                _ => format!("{LOOP_NODES} nodes"),
            };
            Ok(Loops::Dpor(Some(format!(
                "--engine auto tried abpress first (a thread ran past every bound of the \
                 shallow rounds); it had no answer within {budget}, so dpor explored on"
            ))))
        }
        // A construct abpress does not model: DPOR takes it as it did.
        Err(e) if !e.internal => Ok(Loops::Dpor(Some(format!(
            "--engine auto did not hand this program to abpress: {}",
            e.message.lines().next().unwrap_or_default()
        )))),
        Err(e) => Err(e),
    }
}

/// The time the parameterized engine may take for a program whose `main` creates threads
/// without bound: DPOR cannot finish such a program (its executions never end), so the
/// engine gets most of the time, and DPOR, going on, says what it covered.
const THREADS_TIME: Duration = Duration::from_secs(60);
const THREADS_NODES: u64 = 1_000_000;

/// `--engine auto` under SC on a C program whose `main` creates threads in a loop that
/// never ends (SV-COMP's pthread-ext): the program as a parameterized system
/// (`fencer-unbounded`), checked for every number of threads by backward reachability.
/// `Ok(Err(note))`: not answered; DPOR goes on, with the note when there is something to
/// say (the translation refused the program, or the engine ran out of budget).
pub(crate) fn unbounded_threads(
    args: &Arc<Options>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
) -> Result<Result<Outcome, Option<String>>, Error> {
    let c = Kind::of(&args.file).is_some_and(|k| k.is_c());
    if args.engine != Engine::Auto || model != ModelKind::Sc || !c {
        return Ok(Err(None));
    }
    // DPOR's own options (--unroll, --max-depth, --jobs, ...) ask for its search.
    let mut a = (**args).clone();
    a.engine = Engine::Abpress;
    if applies::refusal(&a).is_some() {
        return Ok(Err(None));
    }
    if fencer_unbounded::spawner(prog).is_err() {
        return Ok(Err(None));
    }
    let t = match fencer_unbounded::translate(prog) {
        Ok(t) => t,
        Err(e) => {
            return Ok(Err(Some(format!(
                "main creates threads without bound, and --engine auto could not check them \
                 for any number of threads: {e}"
            ))))
        }
    };
    let slice = timeout.map_or(THREADS_TIME, |t| (t * 3 / 4).min(THREADS_TIME));
    let opts = fencer_param::Options {
        max_nodes: Some(args.max_nodes.unwrap_or(THREADS_NODES)),
        timeout: Some(slice),
        brab: None,
        forward_depth: None,
    };
    let res = fencer_param::check(&t.system, &opts);
    let ms = res.elapsed.as_millis() as u64;
    let program = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let why = format!(
        "main creates threads running `{}` in a loop that never ends; the program was \
         checked as a parameterized system (one process per thread, {} instructions each) \
         for every number of threads",
        t.thread, t.instructions
    );
    let (verdict, counterexample) = match &res.outcome {
        fencer_param::Outcome::Safe { .. } => (Verdict::Safe, None),
        fencer_param::Outcome::Unsafe {
            trace,
            procs,
            states,
        } => (
            Verdict::Violation,
            Some(threads_counterexample(prog, &t, trace, *procs, states)),
        ),
        fencer_param::Outcome::Limit(l) => {
            return Ok(Err(Some(format!(
                "main creates threads without bound; the parameterized engine had no answer \
                 within its budget ({}), so dpor explores executions that never end",
                if *l == "timeout" {
                    format!("{:.1} s", slice.as_secs_f64())
                } else {
                    format!("{} nodes", opts.max_nodes.unwrap_or(0))
                }
            ))))
        }
        fencer_param::Outcome::Spurious { why, .. } => {
            return Err(Error::internal(&format!(
                "{}: internal error: the parameterized engine found a trace of the threads \
                 that does not run ({why})",
                args.file.display()
            )))
        }
    };
    let note = format!("--engine auto chose the parameterized engine: {why}");
    let mut report = fencer_report::Report {
        algo: Some("backward".into()),
        stats: fencer_report::Stats {
            nodes: Some(res.nodes),
            elapsed_ms: ms,
            peak_rss_kib: crate::peak_rss_kib(),
            ..Default::default()
        },
        counterexample,
        ..fencer_report::Report::new(verdict, "sc", "param", &program, ms)
    };
    report.notes.push(note.clone());
    if prog.hang_is_violation {
        report.assumptions.push(
            "deadlocks and hangs are not looked for (the parameterized engine checks \
             assertions and unlocks)"
                .into(),
        );
    }
    report.assumptions.extend(prog.assumptions.iter().cloned());
    let output = if args.json {
        let mut v = serde_json::to_value(&report).expect("json");
        v["engine_choice"] = serde_json::json!({ "engine": "param", "why": why });
        format!("{}\n", serde_json::to_string_pretty(&v).expect("json"))
    } else {
        let mut text = match verdict {
            Verdict::Safe => format!(
                "{program} under SC (parameterized, backward reachability): SAFE for any number of threads\n"
            ),
            _ => format!(
                "{program} under SC (parameterized, backward reachability): VIOLATION\n"
            ),
        };
        text.push_str(&format!("  engine: {note}\n"));
        for a in &report.assumptions {
            text.push_str(&format!("  assuming: {a}\n"));
        }
        if let Some(c) = &report.counterexample {
            text.push('\n');
            text.push_str(&fencer_report::render_counterexample(c));
        }
        text.push_str(&format!(
            "\nnodes: {}  subsumed: {}  generated: {}\ntime: {ms} ms",
            res.nodes, res.subsumed, res.generated
        ));
        if let Some(k) = report.stats.peak_rss_kib {
            text.push_str(&format!("  peak memory: {:.1} MiB", k as f64 / 1024.0));
        }
        text.push('\n');
        text
    };
    Ok(Ok(Outcome {
        verdict,
        output,
        messages: Vec::new(),
        report: Some(report),
        split: None,
        shown: None,
    }))
}

/// The trace as counterexample lines: one per step of a thread (`#k`, the k-th created),
/// with its source line and function, and the value a step that reads gave.
fn threads_counterexample(
    prog: &fencer_ir::Program,
    t: &fencer_unbounded::Translation,
    trace: &[fencer_param::Step],
    procs: u8,
    states: &[fencer_param::concrete::State],
) -> fencer_report::Counterexample {
    let inst = fencer_param::concrete::Instance::new(&t.system, procs);
    let file = |loc: fencer_ir::SrcLoc| {
        prog.files
            .get(loc.file as usize)
            .cloned()
            .unwrap_or_default()
    };
    let events: Vec<fencer_report::TraceLine> = trace
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let site = &t.sites[s.transition];
            let who = s.args.first().copied().unwrap_or(0);
            let value = site.shows.and_then(|sh| {
                let st = states.get(if sh.after { i + 1 } else { i })?;
                let idx: &[u8] = if sh.per_thread { &[who] } else { &[] };
                st.get(inst.cell(sh.global, idx)).copied()
            });
            fencer_report::TraceLine {
                step: i + 1,
                thread: format!("#{}", who + 1),
                file: file(site.loc),
                line: site.loc.line,
                column: site.loc.col,
                function: Some(site.function.clone()),
                op: match (&site.violation, value) {
                    (Some(v), _) => format!("{} ({v})", site.text),
                    (None, Some(x)) if site.shows.is_some_and(|s| s.after) => {
                        format!("{} = {x}", site.text)
                    }
                    (None, Some(x)) => format!("{} -> {x}", site.text),
                    (None, None) => site.text.clone(),
                },
                location: None,
                value,
                buffer_update: false,
            }
        })
        .collect();
    let last = trace.last().map(|s| &t.sites[s.transition]);
    fencer_report::Counterexample {
        kind: if last
            .and_then(|s| s.violation.as_deref())
            .is_some_and(|v| v.starts_with("unlock"))
        {
            "bad-unlock".into()
        } else {
            "assertion".into()
        },
        message: format!(
            "{} (with {procs} thread{} created; `#k` is the k-th)",
            last.and_then(|s| s.violation.clone())
                .unwrap_or_else(|| "violation".into()),
            if procs == 1 { "" } else { "s" }
        ),
        file: last.map(|s| file(s.loc)),
        line: last.map(|s| s.loc.line),
        column: last.map(|s| s.loc.col),
        events,
        final_state: None,
        schedule: Vec::new(),
    }
}
