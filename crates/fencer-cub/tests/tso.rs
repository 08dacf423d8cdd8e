//! TSO soundness cross-check: each Cubicle-W file under TSO against an explicit
//! exploration of the concrete store-buffer machine (per-thread FIFO buffers of write
//! groups, flushes as steps, `fence()` and read-modify-writes waiting for an empty
//! buffer) on small instances: its `number_procs`, else 2 and 3 processes. Buffers are
//! bounded (2 groups), so the explicit side under-approximates: an unsafe instance must get
//! an UNSAFE answer, and a SAFE answer must meet no unsafe instance. UNSAFE answers come
//! with a trace the engine already ran on that machine.

mod common;

use fencer_param::concrete::{initial_states, Instance};
use fencer_param::{check, tso, Options, Outcome};
use std::time::Duration;

#[test]
fn tso_small_instances_agree() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut errors = Vec::new();
    let mut decided = 0;
    let mut unsafe_found = 0;
    for row in common::rows(&dir) {
        if row.mode != "tso" || common::is_slow(&row) {
            continue;
        }
        let Ok(sys) = common::load(&dir, &row) else {
            continue;
        };
        let r = check(
            &sys,
            &Options {
                max_nodes: Some(5000),
                timeout: Some(Duration::from_secs(20)),
            },
        );
        let sizes: Vec<u8> = match sys.procs {
            Some(n) => vec![n],
            None => vec![2, 3],
        };
        for n in sizes {
            let inst = Instance::new(&sys, n);
            let Ok(mut inits) = initial_states(&inst, 10_000) else {
                continue;
            };
            // The file's invariants are assumptions (cubes asserted unreachable); those in
            // the corpus are about constants, so they only rule out initial states.
            let mut assumed = sys.clone();
            assumed.unsafe_ = sys.invariants.clone();
            let ainst = Instance::new(&assumed, n);
            inits.retain(|s| !ainst.is_unsafe(s));
            let e = tso::explore(&inst, inits, 2, 200_000);
            match (&r.outcome, &e) {
                (Outcome::Spurious { why, .. }, _) => {
                    errors.push(format!("{}: spurious trace: {why}", row.file))
                }
                (Outcome::Safe { .. }, Ok(Some(trace))) => errors.push(format!(
                    "{}: SAFE under TSO, but {n} processes reach an unsafe state in {} steps",
                    row.file,
                    trace.len()
                )),
                (Outcome::Unsafe { .. }, Ok(Some(_))) => {
                    decided += 1;
                    unsafe_found += 1;
                }
                (Outcome::Safe { .. }, Ok(None)) => decided += 1,
                _ => {}
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    eprintln!("{decided} instances decided, {unsafe_found} unsafe");
    assert!(
        decided >= 20 && unsafe_found >= 5,
        "{decided} decided, {unsafe_found} unsafe"
    );
}

/// The TSO/SC differential rows: UNSAFE under TSO (with a trace that needs a store buffer),
/// SAFE under SC.
#[test]
fn tso_differs_from_sc() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    for f in [
        "tso/cubtso/mutex_N_us.cub",
        "tso/cubtso/lamport_N_us.cub",
        "tso/litmus/sb_us.cub",
    ] {
        let src = std::fs::read_to_string(dir.join(f)).unwrap();
        let opts = Options {
            max_nodes: Some(20_000),
            timeout: Some(Duration::from_secs(60)),
        };
        let tso_sys = fencer_cub::load(f, &src, fencer_cub::Mode::Tso).unwrap();
        match check(&tso_sys, &opts).outcome {
            Outcome::Unsafe { trace, .. } => assert!(
                trace.iter().any(|s| s.transition == tso::FLUSH) || trace.len() >= 2,
                "{f}: {trace:?}"
            ),
            o => panic!("{f} under TSO: {o:?}"),
        }
        let sc_sys = fencer_cub::load(f, &src, fencer_cub::Mode::Sc).unwrap();
        assert!(
            matches!(check(&sc_sys, &opts).outcome, Outcome::Safe { .. }),
            "{f} under SC"
        );
    }
}
