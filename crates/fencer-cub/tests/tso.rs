//! TSO soundness cross-check: each Cubicle-W file under TSO against an explicit
//! exploration of the concrete store-buffer machine (per-thread FIFO buffers of write
//! groups, flushes as steps, `fence()` and read-modify-writes waiting for an empty
//! buffer) on small instances: its `number_procs`, else 2 and 3 processes. Buffers are
//! bounded (2 groups), so the explicit side under-approximates: an unsafe instance must get
//! an UNSAFE answer, and a SAFE answer must meet no unsafe instance. UNSAFE answers come
//! with a trace the engine already ran on that machine.

mod common;

use fencer_param::concrete::{initial_states, Instance};
use fencer_param::{check, tso, Formula, Options, Outcome, System};
use std::time::Duration;

/// The parameterized verdict against the explicit TSO machine on small instances; whether
/// some instance was decided, and whether one was unsafe.
fn compare(name: &str, sys: &System, errors: &mut Vec<String>) -> (bool, bool) {
    let r = check(
        sys,
        &Options {
            max_nodes: Some(3000),
            timeout: Some(Duration::from_secs(5)),
            ..Default::default()
        },
    );
    let sizes: Vec<u8> = match sys.procs {
        Some(n) => vec![n],
        None => vec![2, 3],
    };
    let (mut decided, mut unsafe_found) = (false, false);
    for n in sizes {
        let inst = Instance::new(sys, n);
        let Ok(mut inits) = initial_states(&inst, 10_000) else {
            continue;
        };
        // The file's invariants are assumptions (cubes asserted unreachable); those in
        // the corpus are about constants, so they only rule out initial states.
        let mut assumed = sys.clone();
        assumed.unsafe_ = sys.invariants.clone();
        let ainst = Instance::new(&assumed, n);
        inits.retain(|s| !ainst.is_unsafe(s));
        let e = tso::explore(&inst, inits, 2, 60_000);
        match (&r.outcome, &e) {
            (Outcome::Spurious { why, .. }, _) => {
                errors.push(format!("{name}: spurious trace: {why}"))
            }
            (Outcome::Safe { .. }, Ok(Some(trace))) => errors.push(format!(
                "{name}: SAFE under TSO, but {n} processes reach an unsafe state in {} steps",
                trace.len()
            )),
            (Outcome::Unsafe { .. }, Ok(Some(_))) => {
                decided = true;
                unsafe_found = true;
            }
            (Outcome::Safe { .. }, Ok(None)) => decided = true,
            _ => {}
        }
    }
    (decided, unsafe_found)
}

#[test]
fn tso_small_instances_agree() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut errors = Vec::new();
    let (mut decided, mut unsafe_found) = (0, 0);
    for row in common::rows(&dir) {
        if row.mode != "tso" || common::is_slow(&row) {
            continue;
        }
        let Ok(sys) = common::load(&dir, &row) else {
            continue;
        };
        let (d, u) = compare(&row.file, &sys, &mut errors);
        decided += d as u32;
        unsafe_found += u as u32;
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    eprintln!("{decided} files decided, {unsafe_found} unsafe");
    assert!(
        decided >= 20 && unsafe_found >= 5,
        "{decided} decided, {unsafe_found} unsafe"
    );
}

/// Mutants that weak memory makes unsafe more often: each `fence()` removed in turn, and
/// each transition's guard dropped. The verdicts must still agree with the machine.
#[test]
fn tso_mutants_agree() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut errors = Vec::new();
    let (mut decided, mut unsafe_found) = (0, 0);
    for row in common::rows(&dir) {
        if row.mode != "tso" || common::is_slow(&row) {
            continue;
        }
        let Ok(sys) = common::load(&dir, &row) else {
            continue;
        };
        for ti in 0..sys.transitions.len() {
            let mut variants = Vec::new();
            if sys.transitions[ti].fence {
                let mut m = sys.clone();
                m.transitions[ti].fence = false;
                variants.push(("fence", m));
            }
            if sys.transitions.len() <= 8 {
                let mut m = sys.clone();
                m.transitions[ti].guard = Formula::True;
                m.transitions[ti].forall_other.clear();
                variants.push(("guard", m));
            }
            for (what, m) in variants {
                let name = format!(
                    "{} without the {what} of {}",
                    row.file, m.transitions[ti].name
                );
                let (d, u) = compare(&name, &m, &mut errors);
                decided += d as u32;
                unsafe_found += u as u32;
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    eprintln!("{decided} mutants decided, {unsafe_found} unsafe");
    assert!(
        decided >= 40 && unsafe_found >= 20,
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
            ..Default::default()
        };
        let tso_sys = fencer_cub::load(f, &src, fencer_cub::Mode::Tso).unwrap();
        let sc_sys = fencer_cub::load(f, &src, fencer_cub::Mode::Sc).unwrap();
        match check(&tso_sys, &opts).outcome {
            Outcome::Unsafe { trace, procs, .. } => {
                // The same transitions in the same order do not reach an unsafe state under
                // SC: the store buffers are what make the trace work.
                let steps: Vec<fencer_param::Step> = trace
                    .iter()
                    .filter(|s| s.transition < tso_sys.transitions.len())
                    .cloned()
                    .collect();
                assert!(
                    fencer_param::concrete::replay(&sc_sys, procs, &[], &steps, &[]).is_err(),
                    "{f}: the TSO trace also runs under SC: {trace:?}"
                );
            }
            o => panic!("{f} under TSO: {o:?}"),
        }
        assert!(
            matches!(check(&sc_sys, &opts).outcome, Outcome::Safe { .. }),
            "{f} under SC"
        );
    }
}
