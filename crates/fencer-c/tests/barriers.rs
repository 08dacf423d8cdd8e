//! `pthread_barrier_*` (fencer's C library, `runtime/fencer_rt.c`): the verdicts of
//! `tests/c/barrier*.c` (also in `bench_c.rs`), the kind of violation each bad use is, and
//! DPOR against the reference explorer on every one of them: the same verdict, final
//! states and traces, under every model, with both algorithms. A native barrier must keep
//! all of this. Needs clang-14.

mod common;

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Options};
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use std::path::{Path, PathBuf};

const FILES: &[&str] = &[
    "barrier.c",
    "barrier_publish.c",
    "barrier_race.c",
    "barrier_reuse.c",
    "barrier_serial.c",
    "barrier_serial_any.c",
    "barrier_too_few.c",
    "barrier_uninit.c",
    "barrier_destroyed.c",
    "barrier_genmc2.c",
];

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

fn dpor(name: &str, model: ModelKind) -> Report {
    let mut p = load(&file(name), &CompileOptions::default(), model).unwrap();
    fencer_ir::spin::spin_assume(&mut p);
    explore(&p, model, &Options::default())
}

#[test]
fn every_barrier_program_is_in_the_list() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("barrier") && n.ends_with(".c"))
        .collect();
    found.sort();
    let mut listed: Vec<String> = FILES.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn bad_uses_of_a_barrier_are_the_violations_they_should_be() {
    for m in ModelKind::ALL {
        let r = dpor("barrier_too_few.c", m);
        let c = r
            .counterexample
            .expect("two threads wait for a third forever");
        assert_eq!(c.kind, "hang", "{m}: {}", c.message);
        for f in ["barrier_uninit.c", "barrier_destroyed.c"] {
            let r = dpor(f, m);
            let c = r.counterexample.expect("a wait at a dead barrier");
            assert_eq!(c.kind, "assertion", "{f} under {m}: {}", c.message);
            assert!(
                c.message.contains("not initialised, or destroyed"),
                "{}",
                c.message
            );
        }
        let r = dpor("barrier_race.c", m);
        let c = r.counterexample.expect("the read before the barrier");
        assert!(c.message.contains("seen == 1"), "{m}: {}", c.message);
        let r = dpor("barrier_serial_any.c", m);
        let c = r
            .counterexample
            .expect("the first thread can be the serial one");
        assert!(c.message.contains("res[0]"), "{m}: {}", c.message);
    }
}

#[test]
fn barrier_programs_explore_the_references_traces() {
    for name in FILES {
        common::explores_the_references_traces(&file(name));
    }
}

/// What the C library's barrier costs: every order of each generation's arrivals is an
/// execution of its own (GenMC's barrier2 with N = 3: 3!^2). Pinned so that a change of
/// the barrier shows here; a native barrier whose arrivals commute brings it to 1.
#[test]
fn the_library_barrier_explores_each_order_of_the_arrivals() {
    for m in ModelKind::ALL {
        let r = dpor("barrier_genmc2.c", m);
        assert_eq!(r.verdict, Verdict::Safe);
        assert_eq!(r.stats.executions, 36, "{m}");
        let r = dpor("barrier_publish.c", m);
        assert_eq!(r.verdict, Verdict::Safe);
        assert_eq!(r.stats.executions, 6, "{m}");
    }
}
