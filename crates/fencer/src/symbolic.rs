//! `fencer check FILE.c --engine abpress`: the symbolic engine (inputs, unbounded loops;
//! SC). A violation it finds is replayed on the concrete machine, with its input values,
//! before it is reported: a trace that does not replay is an internal error (exit 4).

use crate::{peak_rss_kib, Error, Model, Options, Outcome as Checked, Report};
use fencer_ir::Program;
use fencer_machine::{collect::Collector, State, Status, Step};
use fencer_memory::Sc;
use fencer_report::{Limit, Stats, Verdict};
use fencer_symbolic::{Incomplete, Outcome, Trace};
use std::time::{Duration, Instant};

fn load(args: &Options) -> Result<Program, Error> {
    use crate::program::apply_conventions;
    use fencer_memory::ModelKind;
    // `fencer_c::handles` takes headers too, which clang would make a precompiled header.
    if !crate::Kind::of(&args.file).is_some_and(|k| k.is_c()) {
        return Err(Error::usage(
            &format!(
                "{}: error: --engine abpress reads C programs (.c, .i, .ll, .bc)",
                args.file.display()
            ),
            None,
        ));
    }
    let mut prog = crate::cfront::load(args, ModelKind::Sc)?;
    apply_conventions(args, &mut prog);
    // The symbolic engine knows waiting loops, not barriers as operations.
    fencer_ir::barrier::as_loops(&mut prog);
    Ok(prog)
}

/// Runs the trace on the concrete machine; the counterexample if it ends in the same
/// fault, else why not.
/// What an `abpress` verdict takes for granted: the program's own assumptions, and, where
/// the program's conventions make a deadlock or a hang a violation, that this engine does
/// not look for them.
fn symbolic_assumptions(prog: &Program) -> Vec<String> {
    let mut a = prog.assumptions.clone();
    if prog.hang_is_violation {
        a.push(
            "deadlocks and hangs are not looked for by this engine (it looks for failed \
             assertions and memory errors; --engine dpor finds them)"
                .into(),
        );
    }
    a
}

pub fn replay(prog: &Program, trace: &Trace) -> Result<fencer_report::Counterexample, String> {
    let (mut s, status) = State::initial_with_inputs(prog, trace.inputs.clone());
    let mut coll = Collector::new(prog);
    let mut path = Vec::new();
    let mut last = status;
    let same =
        |f: &fencer_machine::Fault| f.kind.name() == trace.fault.kind && f.src == trace.fault.src;
    for (i, &t) in trace.schedule.iter().enumerate() {
        if let Status::Fault(f) = &last {
            // The engine splits a thread's local instructions at loop back edges and may
            // interleave other threads' steps there; the machine runs them at once, so the
            // same fault can come earlier in its schedule.
            if same(f) {
                break;
            }
            return Err(format!("fault before step {}: {}", i + 1, f.message));
        }
        if t as usize >= s.threads.len() || s.threads[t as usize].finished {
            return Err(format!("step {}: thread {t} does not run", i + 1));
        }
        if let Some(k) = s.threads[t as usize].cut {
            return Err(format!(
                "step {}: the machine cut thread {t} ({k:?})",
                i + 1
            ));
        }
        if !s.step_enabled::<Sc>(prog, Step::Thread(t)) {
            return Err(format!("step {}: thread {t} is blocked", i + 1));
        }
        let (e, st) = s.step::<Sc>(prog, Step::Thread(t));
        path.push(e);
        last = st;
    }
    match last {
        Status::Fault(f) if same(&f) => {
            coll.fault(&s, &f, &path);
            coll.cex
                .ok_or_else(|| "no counterexample recorded".to_string())
        }
        Status::Fault(f) => Err(format!(
            "the machine faults differently: {} at line {}",
            f.message, f.src.line
        )),
        Status::Ok => Err("the machine reaches no fault".into()),
    }
}

/// `--engine abpress`, with the partial-order reduction `--por` chose.
pub fn check_with(
    args: &Options,
    timeout: Option<Duration>,
    por: fencer_symbolic::Por,
) -> Result<Checked, Error> {
    let started = Instant::now();
    if !matches!(args.model, Model::Sc) {
        return Err(Error::usage(
            "error: --engine abpress checks programs under SC (`--model sc`)",
            None,
        ));
    }
    // Loading (clang) counts against --timeout, as it does for the other engines.
    let prog = {
        let (tx, rx) = std::sync::mpsc::channel();
        let mine = args.clone();
        std::thread::spawn(move || {
            let _ = tx.send(load(&mine));
        });
        let loaded = match timeout {
            Some(t) => rx.recv_timeout(t).ok(),
            None => rx.recv().ok(),
        };
        match loaded {
            Some(p) => p?,
            None => {
                return Ok(crate::stopped_while_loading(
                    args,
                    fencer_memory::ModelKind::Sc,
                    started,
                ))
            }
        }
    };
    let opts = fencer_symbolic::Options {
        max_nodes: args.max_nodes.map_or(2_000_000, |n| n as usize),
        timeout: timeout.map(|t| t.saturating_sub(started.elapsed())),
        por,
        ..Default::default()
    };
    let Outcome { verdict, stats } = fencer_symbolic::check(&prog, &opts);
    let program = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut why = None;
    let (v, counterexample, stopped_by) = match &verdict {
        fencer_symbolic::Verdict::Safe => (Verdict::Safe, None, None),
        fencer_symbolic::Verdict::Unsafe(trace) => match replay(&prog, trace) {
            Ok(c) => (Verdict::Violation, Some(c), None),
            Err(e) => {
                return Err(Error::internal(
                    &format!(
                        "{}: internal error: the symbolic engine's counterexample does not replay on the machine ({e}); schedule {:?}, inputs {:?}",
                        args.file.display(),
                        trace.schedule,
                        trace.inputs
                    ),
                ));
            }
        },
        fencer_symbolic::Verdict::Incomplete(Incomplete::Unsupported(m)) => {
            return Err(Error::usage(
                &format!("{}: error: {m}", args.file.display()),
                None,
            ));
        }
        fencer_symbolic::Verdict::Incomplete(i) => {
            let limit = match i {
                Incomplete::Timeout => Limit::Timeout,
                _ => Limit::MaxStates,
            };
            why = Some(match i {
                Incomplete::Timeout => "the --timeout ran out".to_string(),
                Incomplete::MaxNodes => "--max-nodes was reached".to_string(),
                Incomplete::Memory => "the tree outgrew the memory limit (6 GiB)".to_string(),
                Incomplete::Unknown(m) | Incomplete::Unsupported(m) => m.clone(),
            });
            (Verdict::Incomplete, None, Some(limit))
        }
    };
    let ms = stats.elapsed.as_millis() as u64;
    // This engine does not look for threads that wait forever (`hangs` stays `None`; the
    // assumptions say so where the program's conventions make that a violation).
    let report = Report {
        stats: Stats {
            nodes: Some(stats.nodes as u64),
            elapsed_ms: ms,
            peak_rss_kib: peak_rss_kib(),
            ..Default::default()
        },
        counterexample,
        stopped_by,
        assumptions: symbolic_assumptions(&prog),
        ..Report::new(v, "sc", "abpress", &program, ms)
    };
    let solver_ms = stats.solver_time.as_secs_f64() * 1000.0;
    let output = if args.json {
        let mut j = serde_json::to_value(&report).expect("json");
        j["symbolic"] = serde_json::json!({
            "nodes": stats.nodes,
            "covered": stats.covered,
            "covers_made": stats.covers_made,
            "refinements": stats.refinements,
            "solver_calls": stats.solver_calls,
            "solver_ms": solver_ms,
            "incomplete_reason": why,
            "por": match por {
                fencer_symbolic::Por::Sleep => "sleep",
                fencer_symbolic::Por::Source => "source",
                fencer_symbolic::Por::SourceEnumerate => "source-enumerate",
            },
            "backtracks": stats.backtracks,
            "race_checks": stats.race_checks,
            "cover_checks": stats.cover_checks,
            "cover_paths": stats.cover_paths,
        });
        if let fencer_symbolic::Verdict::Unsafe(t) = &verdict {
            j["inputs"] = serde_json::json!(t.inputs);
        }
        format!("{}\n", serde_json::to_string_pretty(&j).expect("json"))
    } else {
        let head = format!("{program} (C, sc, abpress)");
        let mut text = match v {
            Verdict::Safe => {
                format!("{head}: SAFE for every input and interleaving (no loop bound)\n")
            }
            Verdict::Violation => format!("{head}: VIOLATION\n"),
            Verdict::Incomplete => format!("{head}: INCOMPLETE\n"),
        };
        if let Some(w) = &why {
            text.push_str(&format!("  stopped: {w}\n"));
        }
        for a in &report.assumptions {
            text.push_str(&format!("  assuming: {a}\n"));
        }
        text.push_str(&format!(
            "  {} tree nodes, {} covered ({} covers made), {} refinements, solver {:.1} ms ({} checks), {} ms in all\n",
            stats.nodes, stats.covered, stats.covers_made, stats.refinements, solver_ms, stats.solver_calls, ms
        ));
        if let (fencer_symbolic::Verdict::Unsafe(t), Some(c)) = (&verdict, &report.counterexample) {
            for (th, vals) in t.inputs.iter().enumerate() {
                if !vals.is_empty() {
                    text.push_str(&format!("  inputs of thread {th}: {vals:?}\n"));
                }
            }
            text.push_str(&format!("  {}: {}\n", c.kind, c.message));
            for e in &c.events {
                let f = e.function.as_deref().unwrap_or("");
                text.push_str(&format!(
                    "  {:>4}. {:<4} {}:{} {f:<12} {}\n",
                    e.step, e.thread, e.file, e.line, e.op
                ));
            }
            text.push_str("  (replayed on the concrete machine with these inputs)\n");
        }
        text
    };
    Ok(Checked {
        verdict: v,
        output,
        messages: Vec::new(),
        report: Some(report),
        split: None,
        shown: None,
    })
}
