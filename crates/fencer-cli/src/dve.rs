//! `fencer check model.dve`: DVE models through the explicit-state engine.

use super::*;
use fencer_dve::run::Label;
use fencer_explicit::{reach, FoundKind, Options, TransitionSystem};
use fencer_report::{Counterexample, Stats, TraceLine, Verdict};

/// A DVE system as the engine sees it: fixed-width states and their successors.
struct Dve<'a>(&'a fencer_dve::System);

impl TransitionSystem for Dve<'_> {
    type Label = Label;
    fn width(&self) -> usize {
        self.0.width as usize
    }
    fn initial(&self) -> Vec<u8> {
        self.0.initial.clone()
    }
    fn successors(&self, s: &[u8], f: &mut dyn FnMut(Label, fencer_explicit::Next<'_>)) {
        let mut buf = Vec::new();
        self.0
            .successors(s, &mut buf, &mut |l, r| f(l, r.map_err(|e| e.message)));
    }
}

/// `-D NAME=VALUE` sets a DVE `input` constant.
fn overrides(args: &CheckArgs) -> Result<std::collections::HashMap<String, i32>, String> {
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

pub fn check(args: &CheckArgs, timeout: Option<Duration>) -> ExitCode {
    let path = args.file.display().to_string();
    let src = match std::fs::read_to_string(&args.file) {
        Ok(s) => s,
        Err(e) => {
            return usage_error(
                args.json,
                &format!("{path}: error: cannot read the file: {e}"),
                None,
            )
        }
    };
    let ov = match overrides(args) {
        Ok(o) => o,
        Err(msg) => return usage_error(args.json, &msg, None),
    };
    let sys = match fencer_dve::load(&path, &src, &ov) {
        Ok(s) => s,
        Err(d) => return usage_error(args.json, &d.render(&src), Some(&d)),
    };
    let goal = match &args.reach {
        Some(e) => match sys.expression("--reach", e) {
            Ok(c) => Some(c),
            Err(d) => return usage_error(args.json, &d.render(e), Some(&d)),
        },
        None => None,
    };
    let opts = Options {
        deadlock: args.deadlock,
        timeout,
        max_states: args.max_states,
        exhaustive: false,
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
    let found = reach(&Dve(&sys), &opts, &judge);
    let st = &found.stats;
    let line_of = |span: fencer_dve::ast::Span| {
        let d = fencer_text::Diagnostic::new(&path, &src, span, "", "");
        (d.line, d.col)
    };
    let counterexample = found.found.as_ref().map(|f| {
        let mut events = Vec::new();
        let mut prev = f.initial.clone();
        let step_line = |k: usize, l: Label, changes: String| {
            let (p, t) = l.first;
            let tr = &sys.processes[p as usize].trans[t as usize];
            let (line, column) = line_of(tr.span);
            TraceLine {
                step: k,
                thread: sys.processes[p as usize].name.clone(),
                file: path.clone(),
                line,
                column,
                function: None,
                op: format!("{}{changes}", sys.describe(l)),
                location: None,
                value: None,
                buffer_update: false,
            }
        };
        for (k, (l, s)) in f.steps.iter().enumerate() {
            let ch = sys.changes(&prev, s);
            let ch = if ch.is_empty() {
                String::new()
            } else {
                format!("  [{}]", ch.join(", "))
            };
            events.push(step_line(k + 1, *l, ch));
            prev = s.clone();
        }
        let (kind, message) = match &f.kind {
            FoundKind::Error(m) => ("error", m.clone()),
            FoundKind::Goal(m) if m.starts_with("assertion") => ("assertion", m.clone()),
            FoundKind::Goal(m) => ("reached", m.clone()),
            FoundKind::Deadlock => ("deadlock", "no process can move".to_string()),
        };
        if let Some(l) = f.failed {
            events.push(step_line(
                events.len() + 1,
                l,
                format!("  FAILS: {message}"),
            ));
        }
        let at = events.last();
        Counterexample {
            kind: kind.into(),
            message,
            file: Some(path.clone()),
            line: at.map(|e| e.line),
            column: at.map(|e| e.column),
            events,
            final_state: None,
        }
    });
    let verdict = if counterexample.is_some() {
        Verdict::Violation
    } else if found.stopped.is_some() {
        Verdict::Incomplete
    } else {
        Verdict::Safe
    };
    let ms = st.elapsed.as_millis() as u64;
    let report = Report {
        verdict,
        model: "dve".into(),
        engine: "explicit".into(),
        algo: None,
        program: args
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        executions: 0,
        blocked: 0,
        elapsed_ms: ms,
        stats: Stats {
            states: Some(st.states),
            transitions: Some(st.transitions),
            elapsed_ms: ms,
            peak_rss_kib: peak_rss_kib(),
            ..Default::default()
        },
        condition: None,
        final_vars: Vec::new(),
        final_states: None,
        final_state_executions: None,
        counterexample,
        stopped_by: found.stopped.map(|s| match s {
            "timeout" => fencer_report::Limit::Timeout,
            _ => fencer_report::Limit::MaxStates,
        }),
    };
    if args.json {
        out(&format!("{}\n", report.to_json()));
    } else {
        let what = match (args.deadlock, args.reach.is_some()) {
            (true, true) => "no run-time error, failed assertion, reached goal or deadlock",
            (true, false) => "no run-time error, failed assertion or deadlock",
            (false, true) => "no run-time error, failed assertion or reached goal",
            (false, false) => "no run-time error or failed assertion",
        };
        let verdict = match report.verdict {
            Verdict::Safe => format!("SAFE: {what} in any reachable state"),
            Verdict::Violation => "VIOLATION".to_string(),
            Verdict::Incomplete => "INCOMPLETE: stopped by a limit".to_string(),
        };
        let mut text = format!("{} (DVE, explicit-state): {verdict}\n", report.program);
        if let Some(l) = &report.stopped_by {
            text.push_str(&format!("  stopped: {}\n", fencer_report::limit_text(l)));
        }
        if let Some(p) = sys.property {
            text.push_str(&format!(
                "  note: the property process `{}` is not checked yet (LTL is coming); this is reachability over the model\n",
                sys.processes[p].name
            ));
        }
        if let Some(c) = &report.counterexample {
            text.push('\n');
            text.push_str(&fencer_report::render_counterexample(c));
        }
        let rate = st.states as f64 / st.elapsed.as_secs_f64().max(1e-9);
        text.push_str(&format!(
            "\nstates: {}  transitions: {}  deadlocks: {}  levels: {}  ({:.0} states/s)\ntime: {} ms  state memory: {:.1} MiB",
            st.states,
            st.transitions,
            st.deadlocks,
            st.levels,
            rate,
            ms,
            st.memory as f64 / (1 << 20) as f64
        ));
        if let Some(k) = report.stats.peak_rss_kib {
            text.push_str(&format!("  peak memory: {:.1} MiB", k as f64 / 1024.0));
        }
        text.push('\n');
        out(&text);
    }
    ExitCode::from(report.verdict.exit_code() as u8)
}
