//! Robustness of the x86 litmus corpus (`../shared/litmus/x86/`, herd7's answers).
//!
//! - A test whose herd7 TSO final states are not all SC states (`tso_states` differs from
//!   `sc_states`; SC's are always among TSO's) has a TSO execution that no SC execution
//!   matches, so it is not robust: both methods must say so. The converse need not hold:
//!   herd7 counts states projected on the variables the condition names, and a trace can
//!   be non-SC without changing those.
//! - On every test, under TSO and PSO, the monitor and the exhaustive method agree, and a
//!   test called robust has the same final states (over every register and location)
//!   under the weak model as under SC, as robustness implies.
//!
//! Needs `../shared`; skipped (with a message) in a clone without it.

use fencer_memory::ModelKind;
use fencer_robust::{check, Method};
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus/x86");
    d.join("expected.tsv").exists().then_some(d)
}

#[test]
fn litmus_corpus_robustness() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/litmus/x86 is not here");
        return;
    };
    let rows: Vec<Vec<String>> = std::fs::read_to_string(dir.join("expected.tsv"))
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    assert!(rows.len() > 200);
    let opts = fencer_dpor::Options::default();
    let all = fencer_dpor::Options {
        stop_on_violation: false,
        ..Default::default()
    };
    let mut failures = Vec::new();
    let (mut must, mut robust_tso) = (0, 0);
    for row in &rows {
        let path = dir.join(&row[0]);
        let src = std::fs::read_to_string(&path).unwrap();
        let lit = fencer_litmus::parse_litmus(&path.display().to_string(), &src)
            .unwrap_or_else(|d| panic!("{}", d.render(&src)));
        let mut prog = lit.program;
        prog.cond = None;
        let sc = fencer_dpor::explore(&prog, ModelKind::Sc, &all).final_states;
        for model in [ModelKind::Tso, ModelKind::Pso] {
            let mon = check(&prog, model, Method::Monitor, &opts);
            let exh = check(&prog, model, Method::Exhaustive, &opts);
            let (m, e) = (mon.violations.is_empty(), exh.violations.is_empty());
            if m != e {
                failures.push(format!(
                    "{}: {model:?}: monitor robust {m}, exhaustive robust {e}",
                    row[0]
                ));
            }
            if model == ModelKind::Tso && row[4] != row[5] {
                must += 1;
                if m {
                    failures.push(format!(
                        "{}: herd7 gives TSO {} states and SC {}, but the monitor says robust",
                        row[0], row[4], row[5]
                    ));
                }
            }
            if m {
                robust_tso += usize::from(model == ModelKind::Tso);
                let weak = fencer_dpor::explore(&prog, model, &all).final_states;
                if weak != sc {
                    failures.push(format!(
                        "{}: robust under {model:?} but its final states differ from SC's",
                        row[0]
                    ));
                }
            }
            for (k, f) in &mon.violations {
                if f.witness.is_none() {
                    failures.push(format!(
                        "{}: {model:?}: witness of {k:?} did not replay",
                        row[0]
                    ));
                }
            }
        }
    }
    eprintln!(
        "{} tests: {must} must be non-robust under TSO by herd7's states; {robust_tso} robust under TSO",
        rows.len()
    );
    assert!(must > 50, "{must}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
