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
