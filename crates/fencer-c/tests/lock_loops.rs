//! Loops whose iterations take a mutex and give it back (GenMC's lock zero-net-effect
//! loops), or give a held mutex back and take it again (`pthread_cond_wait` in a predicate
//! loop, with spurious wake-ups): an iteration that changed nothing is dropped, unless
//! another thread touched the mutex's word in between (`tests/c/lock_loops`). DPOR with
//! the spin-loop rewrite is held to the reference explorer on the program as written.
//! Needs clang-14.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Algo, Options};
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use std::path::{Path, PathBuf};

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c/lock_loops")
        .join(name)
}

fn program(path: &Path, define: &str, model: ModelKind) -> fencer_ir::Program {
    let opts = CompileOptions {
        flags: vec![format!("-D{define}")],
        ..CompileOptions::default()
    };
    load(path, &opts, model).unwrap_or_else(|e| panic!("{e}"))
}

fn dpor(path: &Path, define: &str, model: ModelKind, algo: Algo) -> Report {
    let mut p = program(path, define, model);
    fencer_ir::spin::spin_assume(&mut p);
    explore(
        &p,
        model,
        &Options {
            algo,
            ..Options::default()
        },
    )
}

/// The reference explorer on the program as written, its loops bounded.
fn reference(path: &Path, define: &str, model: ModelKind) -> Report {
    let p = program(path, define, model);
    let opts = fencer_reference::Options {
        unroll: Some(3),
        ..Default::default()
    };
    fencer_reference::explore(&p, model, &opts).report
}

/// Every model and algorithm: DPOR's verdict is `want`, and the reference explorer finds
/// a violation exactly when DPOR does.
fn agree(name: &str, define: &str, want: Verdict) {
    let f = file(name);
    for model in ModelKind::ALL {
        let r = reference(&f, define, model);
        for algo in [Algo::Optimal, Algo::Source] {
            let d = dpor(&f, define, model, algo);
            assert_eq!(
                d.verdict, want,
                "{name} -D{define} under {model} ({algo:?}): {:?}",
                d.counterexample
            );
            assert_eq!(
                d.verdict == Verdict::Violation,
                r.verdict == Verdict::Violation,
                "{name} -D{define} under {model}: DPOR {:?}, reference {:?}",
                d.verdict,
                r.verdict
            );
        }
    }
}

#[test]
fn a_thread_that_reads_the_mutex_word_sees_it_held_in_a_polling_iteration() {
    for how in ["LOAD", "CALLEE", "CAS", "MEMCPY", "TRYLOCK"] {
        agree("mutex_word.c", how, Verdict::Violation);
    }
}

#[test]
fn polling_iterations_nobody_looks_into_are_still_dropped() {
    agree("mutex_word.c", "NOBODY_LOOKS", Verdict::Safe);
    let d = dpor(
        &file("mutex_word.c"),
        "NOBODY_LOOKS",
        ModelKind::Sc,
        Algo::Optimal,
    );
    assert!(d.stats.assume_blocked > 0, "{:?}", d.stats);
}

#[test]
fn a_condition_wait_gives_the_mutex_back_in_every_pass() {
    agree("cond_wait_loop.c", "PRODUCER", Verdict::Safe);
    agree("cond_wait_loop.c", "OBSERVE", Verdict::Violation);
    // Passes of the wait in which nobody took the mutex are dropped: no bound needed.
    let d = dpor(
        &file("cond_wait_loop.c"),
        "PRODUCER",
        ModelKind::Sc,
        Algo::Optimal,
    );
    assert_eq!(d.stats.executions, 2, "{:?}", d.stats);
}
