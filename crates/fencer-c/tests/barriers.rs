//! `pthread_barrier_*` (a wait is an arrival and a pass, `fencer_ir::barrier`; init and
//! destroy are fencer's C library, `runtime/fencer_rt.c`): the verdicts of
//! `tests/c/barrier*.c` (also in `bench_c.rs`), the kind of violation each bad use is,
//! DPOR against the reference explorer on every one of them (the same verdict, final
//! states and traces, under every model, with both algorithms), and against the waiting
//! loops the operations stand for (`as_loops`, what engines without them explore). Needs
//! clang-14.

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
    "barrier_groups.c",
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

/// The program with its barriers as the waiting loops they stand for.
fn dpor_loops(name: &str, model: ModelKind) -> Report {
    let mut p = load(&file(name), &CompileOptions::default(), model).unwrap();
    fencer_ir::barrier::as_loops(&mut p);
    assert!(!fencer_ir::barrier::has_barriers(&p));
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
        assert_eq!(c.kind, "deadlock", "{m}: {}", c.message);
        assert!(c.message.contains("waits at a barrier"), "{}", c.message);
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

/// The waiting loops a barrier stands for (the C library's barrier before arrivals were
/// operations) reach the same verdicts, and the same kind of violation (a wait nothing
/// ends is a hang in a loop, a deadlock at a pass).
#[test]
fn barriers_as_operations_agree_with_barriers_as_loops() {
    for name in FILES {
        for m in ModelKind::ALL {
            let (a, b) = (dpor(name, m), dpor_loops(name, m));
            assert_eq!(a.verdict, b.verdict, "{name} under {m}");
            let kind = |r: &Report| {
                r.counterexample.as_ref().map(|c| match c.kind.as_str() {
                    "hang" => "deadlock".to_string(),
                    k => k.to_string(),
                })
            };
            assert_eq!(kind(&a), kind(&b), "{name} under {m}");
            assert!(
                a.stats.executions <= b.stats.executions,
                "{name} under {m}: {} executions as operations, {} as loops",
                a.stats.executions,
                b.stats.executions
            );
        }
    }
}

/// What a barrier costs: the arrivals of a generation commute unless the program reads
/// which was the last (GenMC's barrier2 with N = 3: one execution, as GenMC; the C
/// library's waiting loop had every order of each generation's arrivals, 3!^2 = 36, and
/// `as_loops`, whose last arrival's second read-modify-write of the one cell orders
/// against the others too, has 6^3). Where the serial result is read, the arrivals are
/// ordered as read-modify-writes are (`barrier_serial.c`: three threads, two
/// generations, 3!^2).
#[test]
fn a_barrier_explores_one_order_of_its_arrivals() {
    for m in ModelKind::ALL {
        for (name, native, loops) in [
            ("barrier_genmc2.c", 1, 216),
            ("barrier_publish.c", 1, 6),
            ("barrier_serial.c", 36, 216),
        ] {
            let r = dpor(name, m);
            assert_eq!(r.verdict, Verdict::Safe, "{name}");
            assert_eq!(r.stats.executions, native, "{name} under {m}");
            let r = dpor_loops(name, m);
            assert_eq!(r.verdict, Verdict::Safe, "{name}");
            assert_eq!(r.stats.executions, loops, "{name} under {m} as loops");
        }
    }
}
