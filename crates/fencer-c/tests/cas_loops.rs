//! Compare-and-swap retry loops (`tests/c/cas_loops/*.c`): the spin-loop rewrite takes the
//! loops each file's `// spin-loops: N` line says, and DPOR on the rewritten program gives
//! the reference explorer's verdict and final states on the program as written, under
//! every model and both algorithms. Needs clang-14.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Algo, Options};
use fencer_memory::ModelKind;
use fencer_report::Verdict;
use std::path::Path;

/// Enough iterations of a retry loop for the reference to see every outcome.
const UNROLL: u32 = 4;

#[test]
fn cas_retry_loops_keep_the_reference_outcomes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/cas_loops");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let want: usize = src
            .lines()
            .find_map(|l| l.strip_prefix("// spin-loops: "))
            .expect("a `// spin-loops: N` line")
            .trim()
            .parse()
            .unwrap();
        // Where the file says how many executions the rewrite leaves under SC, the
        // reduction is held to it (the oracle below only says nothing was lost).
        let sc_executions: Option<u64> = src
            .lines()
            .find_map(|l| l.strip_prefix("// sc-executions: "))
            .map(|n| n.trim().parse().unwrap());
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        for model in ModelKind::ALL {
            let original = load(f, &CompileOptions::default(), model).unwrap();
            let mut rewritten = original.clone();
            assert_eq!(
                fencer_ir::spin::spin_assume(&mut rewritten),
                want,
                "{name}: loops rewritten"
            );
            let r = fencer_reference::explore(
                &original,
                model,
                &fencer_reference::Options {
                    unroll: Some(UNROLL),
                    ..Default::default()
                },
            )
            .report;
            for algo in [Algo::Optimal, Algo::Source] {
                let d = explore(
                    &rewritten,
                    model,
                    &Options {
                        algo,
                        stop_on_violation: false,
                        unroll: Some(UNROLL),
                        ..Options::default()
                    },
                );
                let violation = |v: Verdict| v == Verdict::Violation;
                assert_eq!(
                    violation(d.verdict),
                    violation(r.verdict),
                    "{name} {model} {algo:?}: verdict"
                );
                assert_eq!(
                    d.final_states, r.final_states,
                    "{name} {model} {algo:?}: final states"
                );
                if let (Some(n), ModelKind::Sc) = (sc_executions, model) {
                    assert_eq!(d.stats.executions, n, "{name} {algo:?}: executions");
                }
                if algo == Algo::Optimal {
                    assert_eq!(
                        d.stats.sleep_blocked.unwrap_or(0),
                        0,
                        "{name} {model}: sleep-set blocked"
                    );
                }
            }
        }
    }
}
