//! `--unroll N`: a loop takes at most N backward jumps from its entry, whatever the
//! spin-loop rewrite made of it. `tests/c/unroll/commits.c` (GenMC's `commits`) is a
//! guarded spin loop, which ends in two back edges; counted apart, they let the loop run
//! about twice as often as asked. Held to an enumeration written here from the program's
//! text (not through the machine): the Shasha-Snir traces of its executions that finish,
//! and of those a bound cuts. Needs clang-14.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Algo, Options};
use fencer_memory::ModelKind;
use std::collections::HashSet;
use std::path::Path;

/// A write of `x`: (thread, its how-manieth write).
type W = (u8, u8);

#[derive(Clone, Default)]
struct Run {
    /// Each thread's commits, iterations begun, and whether it is done or cut.
    i: [u8; 2],
    iters: [u8; 2],
    at_read: [bool; 2],
    over: [Option<bool>; 2],
    last: Option<W>,
    co: Vec<W>,
    rf: Vec<((u8, u8), Option<W>)>,
}

/// The traces of `commits.c` under SC with `--unroll u`: (finished, cut). A thread
/// checks `i < 2` at the loop's head after each backward jump it may take (at most `u`),
/// runs the body (store, load) otherwise, and is cut at the backward jump after body
/// `u + 1`. The loads of `n` read its initial value in every execution and `idx` is
/// written before the threads start: neither tells traces apart.
fn enumerate(u: u8) -> (usize, usize) {
    let mut done = HashSet::new();
    let mut cut = HashSet::new();
    let mut stack = vec![Run::default()];
    while let Some(r) = stack.pop() {
        let mut moved = false;
        for t in 0..2usize {
            if r.over[t].is_some() {
                continue;
            }
            moved = true;
            let mut s = r.clone();
            let j = t as u8 + 1;
            if !s.at_read[t] {
                if s.i[t] >= 2 {
                    s.over[t] = Some(true);
                } else {
                    let w = (j, s.iters[t]);
                    s.iters[t] += 1;
                    s.co.push(w);
                    s.last = Some(w);
                    s.at_read[t] = true;
                }
            } else {
                s.rf.push(((j, s.iters[t]), s.last));
                if s.last.map(|w| w.0) == Some(j) {
                    s.i[t] += 1;
                }
                s.at_read[t] = false;
                if s.iters[t] > u {
                    s.over[t] = Some(false);
                }
            }
            stack.push(s);
        }
        if !moved {
            let mut rf = r.rf.clone();
            rf.sort();
            let key = (r.co.clone(), rf);
            if r.over.iter().all(|o| *o == Some(true)) {
                done.insert(key);
            } else {
                cut.insert(key);
            }
        }
    }
    (done.len(), cut.len())
}

fn dpor(u: u32, spin: bool, algo: Algo) -> (u64, u64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/unroll/commits.c");
    let mut p = load(&path, &CompileOptions::default(), ModelKind::Sc).unwrap();
    if spin {
        assert_eq!(fencer_ir::spin::spin_assume(&mut p), 1, "the thread's loop");
    }
    let opts = Options {
        unroll: Some(u),
        algo,
        ..Options::default()
    };
    let r = explore(&p, ModelKind::Sc, &opts);
    assert_eq!(
        r.stats.blocked, r.stats.unroll_cut,
        "--unroll {u}: only cuts block"
    );
    (r.stats.executions, r.stats.unroll_cut)
}

#[test]
fn unroll_bounds_a_guarded_spin_loop_as_written() {
    for u in 1..=4u8 {
        let (done, cut) = enumerate(u);
        let want = (done as u64, cut as u64);
        for algo in [Algo::Optimal, Algo::Source] {
            assert_eq!(dpor(u as u32, true, algo), want, "--unroll {u}, {algo:?}");
            assert_eq!(
                dpor(u as u32, false, algo),
                want,
                "--unroll {u}, no rewrite"
            );
        }
    }
}

/// GenMC runs `commits` with `-unroll=6`: six iterations, the thread killed at the
/// seventh head and the execution counted complete, 1,734 of them. fencer's `--unroll 5`
/// takes the same six iterations and explores the same executions, counting the ones the
/// bound stopped apart.
#[test]
fn genmc_commits_count() {
    let (done, cut) = dpor(5, true, Algo::Optimal);
    assert_eq!(done + cut, 1734);
    assert_eq!((done as usize, cut as usize), enumerate(5));
}
