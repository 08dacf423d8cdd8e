//! `fencer check model.cub`: Cubicle and Cubicle-W models through the parameterized engine
//! (backward reachability over cubes).

use crate::{peak_rss_kib, Error, Model, Options, Outcome, Report};
use fencer_param::{Outcome as Found, System};
use fencer_report::{Counterexample, Stats, TraceLine, Verdict};
use std::time::Duration;

pub fn check(args: &Options, timeout: Option<Duration>) -> Result<Outcome, Error> {
    let path = args.file.display().to_string();
    let src = crate::read_source(args)?;
    let file = match fencer_cub::parse(&path, &src) {
        Ok(f) => f,
        Err(d) => return Err(Error::diagnostic(&d, &src)),
    };
    let mode = match (args.set().contains("model"), args.model) {
        (false, _) if file.has_weak() => fencer_cub::Mode::Tso,
        (false, _) | (true, Model::Sc) => fencer_cub::Mode::Sc,
        (true, Model::Tso) => fencer_cub::Mode::Tso,
        (true, Model::Pso | Model::Pso1) => {
            return Err(Error::usage("error: .cub models are checked under SC (`--model sc`) or TSO (`--model tso`, Cubicle-W's semantics), not PSO",
                None,
            ))
        }
    };
    let sys = match fencer_cub::lower(&path, &src, &file, mode) {
        Ok(s) => s,
        Err(d) => return Err(Error::diagnostic(&d, &src)),
    };
    if args.brab.is_some() && (sys.tso || sys.procs.is_some()) {
        return Err(Error::usage("error: --brab needs a model for any number of processes (no `number_procs`) without weak memory (use `--model sc`)",
            None,
        ));
    }
    let opts = fencer_param::Options {
        max_nodes: args.max_nodes,
        timeout,
        brab: args.brab,
        forward_depth: args.forward_depth,
    };
    let res = fencer_param::check(&sys, &opts);
    let model = match mode {
        fencer_cub::Mode::Sc => "sc",
        fencer_cub::Mode::Tso => "tso",
    };
    let program = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ms = res.elapsed.as_millis() as u64;
    let (verdict, counterexample, stopped_by) = match &res.outcome {
        Found::Safe { .. } => (Verdict::Safe, None, None),
        Found::Unsafe { trace, procs, .. } => (
            Verdict::Violation,
            Some(counterexample(&sys, &path, trace, *procs)),
            None,
        ),
        Found::Limit(l) => (
            Verdict::Incomplete,
            None,
            Some(if *l == "timeout" {
                fencer_report::Limit::Timeout
            } else {
                fencer_report::Limit::MaxStates
            }),
        ),
        Found::Spurious { trace, procs, why } => {
            let steps: Vec<String> = trace.iter().map(|s| step_text(&sys, s)).collect();
            return Err(Error::internal(
                &format!(
                    "{path}: internal error: the backward search found a trace that does not run on {procs} processes ({why}): {}",
                    steps.join("; ")
                ),
            ));
        }
    };
    let invariant: Vec<String> = match &res.outcome {
        Found::Safe { invariant } => invariant
            .iter()
            .map(|c| format!("not ({})", fencer_param::formula::cube_text(&sys, &c.lits)))
            .collect(),
        _ => Vec::new(),
    };
    let report = Report {
        algo: Some(
            if args.brab.is_some() {
                "brab"
            } else {
                "backward"
            }
            .into(),
        ),
        stats: Stats {
            nodes: Some(res.nodes),
            elapsed_ms: ms,
            peak_rss_kib: peak_rss_kib(),
            ..Default::default()
        },
        counterexample,
        stopped_by,
        ..Report::new(verdict, model, "param", &program, ms)
    };
    let output = if args.json {
        let mut v = serde_json::to_value(&report).expect("json");
        if args.invariant && verdict == Verdict::Safe {
            v["invariant"] = serde_json::json!(invariant);
        }
        format!("{}\n", serde_json::to_string_pretty(&v).expect("json"))
    } else {
        let how = if sys.procs.is_some() {
            format!(
                "for the {} processes of `number_procs`",
                sys.procs.unwrap_or(0)
            )
        } else {
            "for any number of processes".to_string()
        };
        let mut text = match verdict {
            Verdict::Safe => format!("{program} (.cub, {model}, backward reachability): SAFE {how}\n"),
            Verdict::Violation => format!("{program} (.cub, {model}, backward reachability): VIOLATION: an unsafe state is reachable\n"),
            Verdict::Incomplete => format!("{program} (.cub, {model}, backward reachability): INCOMPLETE: stopped by a limit\n"),
        };
        if let Some(Found::Limit(l)) = Some(&res.outcome) {
            text.push_str(&format!(
                "  stopped: {}\n",
                if *l == "timeout" {
                    "the --timeout ran out"
                } else if *l == "max-nodes" {
                    "--max-nodes was reached"
                } else if *l == "events" {
                    "a cube has too many weak-memory events"
                } else {
                    "a cube has too many process variables"
                }
            ));
        }
        if let Some(c) = &report.counterexample {
            text.push('\n');
            text.push_str(&fencer_report::render_counterexample(c));
        }
        if args.invariant && verdict == Verdict::Safe {
            text.push_str(if sys.tso {
                "\ninductive invariant (no execution ends with these values and pending reads `#k @ X`, for any line):\n"
            } else {
                "\ninductive invariant (every reachable state satisfies each line):\n"
            });
            for i in &invariant {
                text.push_str(&format!("  {i}\n"));
            }
        }
        text.push_str(&format!(
            "\nnodes: {}  subsumed: {}  generated: {}\ntime: {ms} ms",
            res.nodes, res.subsumed, res.generated
        ));
        if args.brab.is_some() {
            text.push_str(&format!(
                "  brab: {} approximations, {} restarts",
                res.approximations, res.restarts
            ));
        }
        if let Some(k) = report.stats.peak_rss_kib {
            text.push_str(&format!("  peak memory: {:.1} MiB", k as f64 / 1024.0));
        }
        text.push('\n');
        text
    };
    Ok(Outcome {
        verdict,
        output,
        messages: Vec::new(),
        report: Some(report),
        split: None,
        shown: None,
    })
}

fn step_text(sys: &System, s: &fencer_param::Step) -> String {
    if s.transition == fencer_param::tso::FLUSH {
        let p = s.args.first().map(|a| a + 1).unwrap_or(0);
        return format!("flush(#{p}): the oldest writes in #{p}'s store buffer reach memory");
    }
    if s.transition == fencer_param::tso::READ {
        let who: Vec<String> = s.args.iter().map(|a| format!("#{}", a + 1)).collect();
        return format!("{} read weak memory for `unsafe`", who.join(", "));
    }
    let t = &sys.transitions[s.transition];
    let args: Vec<String> = s.args.iter().map(|a| format!("#{}", a + 1)).collect();
    format!("{}({})", t.name, args.join(", "))
}

/// The trace as counterexample lines: one per transition, with its processes.
fn counterexample(
    sys: &System,
    path: &str,
    trace: &[fencer_param::Step],
    procs: u8,
) -> Counterexample {
    let events: Vec<TraceLine> = trace
        .iter()
        .enumerate()
        .map(|(i, s)| TraceLine {
            step: i + 1,
            thread: sys
                .transitions
                .get(s.transition)
                .and_then(|t| t.thread)
                .and_then(|k| s.args.get(k as usize))
                .or(s.args.first())
                .map(|a| format!("#{}", a + 1))
                .unwrap_or_else(|| "-".into()),
            file: path.to_string(),
            line: sys.transitions.get(s.transition).map_or(0, |t| t.line),
            column: 1,
            function: None,
            op: step_text(sys, s),
            location: None,
            value: None,
            buffer_update: s.transition == fencer_param::tso::FLUSH,
        })
        .collect();
    Counterexample {
        kind: "unsafe".into(),
        message: if sys.tso {
            format!(
                "an unsafe state is reached with {procs} processes (the trace was run forward on that instance's TSO machine: a write stays in its thread's store buffer until a flush step)"
            )
        } else {
            format!(
                "an unsafe state is reached with {procs} processes (the trace was run forward on that instance)"
            )
        },
        file: Some(path.to_string()),
        line: events.iter().rev().find(|e| e.line != 0).map(|e| e.line),
        column: events.iter().rev().find(|e| e.line != 0).map(|e| e.column),
        events,
        final_state: None,
        schedule: Vec::new(),
    }
}
