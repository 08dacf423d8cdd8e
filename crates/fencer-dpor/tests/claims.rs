//! The chronological-traces paper's claims about DPOR, as tests: each must hold for both
//! algorithms (Optimal-DPOR and Source-DPOR), exploring everything (`--all`).

use fencer_dpor::{explore, Algo, Options};
use fencer_memory::ModelKind;
use fencer_report::Verdict;
use std::path::Path;

fn program(rel: &str) -> fencer_ir::Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    let src = std::fs::read_to_string(&path).unwrap();
    let mut p = fencer_text::parse_program(rel, &src).unwrap();
    fencer_ir::spin::spin_assume(&mut p);
    p
}

fn executions(rel: &str, model: ModelKind, algo: Algo) -> u64 {
    let opts = Options {
        algo,
        stop_on_violation: false,
        ..Options::default()
    };
    let r = explore(&program(rel), model, &opts);
    assert_ne!(r.verdict, Verdict::Incomplete, "{rel} under {model}");
    r.stats.executions
}

const ALGOS: [Algo; 2] = [Algo::Optimal, Algo::Source];

/// Figure 5: three chronological traces under TSO (six interleavings of buffer updates
/// collapse to three).
#[test]
fn figure_5_explores_three_executions_under_tso() {
    for a in ALGOS {
        assert_eq!(
            executions("examples/fig5.fen", ModelKind::Tso, a),
            3,
            "{a:?}"
        );
    }
}

/// Store buffering: three traces under SC, four under TSO (both loads may read 0).
#[test]
fn store_buffering_explores_three_under_sc_and_four_under_tso() {
    for a in ALGOS {
        assert_eq!(executions("examples/sb.fen", ModelKind::Sc, a), 3, "{a:?}");
        assert_eq!(executions("examples/sb.fen", ModelKind::Tso, a), 4, "{a:?}");
    }
}

/// A program whose every shared access is protected by one mutex is robust: as many
/// executions under TSO and PSO as under SC.
#[test]
fn mutex_protected_programs_explore_as_many_executions_under_every_model() {
    for rel in ["examples/counter_mutex.fen", "bench/fen/stack_mutex.fen"] {
        for a in ALGOS {
            let sc = executions(rel, ModelKind::Sc, a);
            assert!(sc > 1, "{rel}");
            assert_eq!(executions(rel, ModelKind::Tso, a), sc, "{rel} {a:?}");
            assert_eq!(executions(rel, ModelKind::Pso, a), sc, "{rel} {a:?}");
        }
    }
}

/// The fib benchmark with four rounds: the counts Nidhugg reports for the equivalent C
/// program (1107 traces under SC, 1764 under TSO and PSO).
#[test]
fn fib4_matches_nidhugg_trace_counts() {
    for a in ALGOS {
        assert_eq!(
            executions("bench/fen/fib4_true.fen", ModelKind::Sc, a),
            1107
        );
        assert_eq!(
            executions("bench/fen/fib4_true.fen", ModelKind::Tso, a),
            1764
        );
        assert_eq!(
            executions("bench/fen/fib4_true.fen", ModelKind::Pso, a),
            1764
        );
    }
}
