//! What several test files check alike.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore_split, explore_traces, Algo, Options, Split};
use fencer_memory::ModelKind;
use std::collections::HashSet;
use std::path::Path;

/// The C program at `path` explored with `--all` explores exactly the reference
/// explorer's traces, with its verdict and final states: under every model, with both
/// algorithms, on one worker (Optimal-DPOR blocking nothing in a sleep set) and split
/// between two.
pub fn explores_the_references_traces(path: &Path) {
    let name = path.file_name().unwrap().to_string_lossy();
    for model in ModelKind::ALL {
        let mut p = load(path, &CompileOptions::default(), model).unwrap();
        fencer_ir::spin::spin_assume(&mut p);
        let r = fencer_reference::explore(&p, model, &Default::default());
        for algo in [Algo::Optimal, Algo::Source] {
            let opts = Options {
                algo,
                stop_on_violation: false,
                ..Options::default()
            };
            let what = format!("{name} under {model}, {algo:?}");
            let (d, traces) = explore_traces(&p, model, &opts);
            assert_eq!(d.verdict, r.report.verdict, "{what}");
            assert_eq!(d.final_states, r.report.final_states, "{what}");
            let set: HashSet<u128> = traces.iter().copied().collect();
            assert_eq!(set.len(), traces.len(), "{what}: a trace explored twice");
            assert_eq!(set, r.traces, "{what}: not the reference's traces");
            if algo == Algo::Optimal {
                assert_eq!(d.stats.sleep_blocked, Some(0), "{what}");
            }
            let split = Split::jobs(2);
            let s = explore_split(&p, model, &opts, &split, true);
            assert_eq!(s.report.verdict, r.report.verdict, "{what}, 2 workers");
            assert_eq!(
                s.report.final_states, r.report.final_states,
                "{what}, 2 workers"
            );
            let set: HashSet<u128> = s.traces.iter().copied().collect();
            assert_eq!(
                set, r.traces,
                "{what}, 2 workers: not the reference's traces"
            );
        }
    }
}
