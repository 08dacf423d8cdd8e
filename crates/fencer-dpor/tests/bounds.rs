//! Spin loops and loop bounds: `spin_assume` keeps verdicts and cuts executions, and
//! `unroll` cuts only what it must while still finding what lies within the bound.

use fencer_dpor::{explore, Options};
use fencer_memory::ModelKind;
use fencer_report::{Limit, Verdict};

const SPIN: &str = "
shared data = 0, flag = 0;
thread p { data = 1; flag = 1; }
thread q { while (flag == 0) { } r = data; assert(r == 1); }
";

fn parse(src: &str) -> fencer_ir::Program {
    fencer_text::parse_program("t.fen", src).unwrap()
}

fn run(p: &fencer_ir::Program, m: ModelKind, unroll: Option<u32>) -> fencer_report::Report {
    explore(
        p,
        m,
        &Options {
            unroll,
            stop_on_violation: false,
            ..Options::default()
        },
    )
}

#[test]
fn a_spin_loop_becomes_one_load_and_an_assume() {
    let mut p = parse(SPIN);
    assert_eq!(fencer_ir::spin::spin_assume(&mut p), 1);
    let sc = run(&p, ModelKind::Sc, None);
    assert_eq!(sc.verdict, Verdict::Safe);
    // One execution where q waits long enough; the one where it would spin forever is
    // blocked by the assume.
    assert_eq!(sc.stats.executions, 1);
    assert_eq!(sc.stats.assume_blocked, 1);
    // PSO lets the flag overtake the data.
    assert_eq!(run(&p, ModelKind::Pso, None).verdict, Verdict::Violation);
    assert_eq!(run(&p, ModelKind::Tso, None).verdict, Verdict::Safe);
}

#[test]
fn loops_with_side_effects_keep_their_behaviour() {
    // t's loop carries r, so its back edge also compares r with what it was at the head;
    // u's loop is guarded (a back edge that blocks only after a pure iteration), and its
    // stores keep every behaviour.
    let src = "shared x = 0; thread t { r = 0; while (r == 0) { r = cas(x, 0, 1); } }
         thread u { while (x == 0) { x = 2; } }";
    let mut p = parse(src);
    assert_eq!(fencer_ir::spin::spin_assume(&mut p), 2);
    for m in [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso] {
        let with = run(&p, m, Some(3));
        let without = run(&parse(src), m, Some(3));
        assert_eq!(with.final_states, without.final_states, "{m}");
    }
}

#[test]
fn unroll_bounds_a_spin_loop_kept_as_a_loop() {
    // The counter makes every iteration differ, so that the machine's pruning of repeated
    // pure iterations does not end the loop before the bound does.
    let p = parse(
        "shared data = 0, flag = 0;
         thread p { data = 1; flag = 1; }
         thread q { c = 0; while (flag == 0) { c = c + 1; } r = data; assert(r == 1); }",
    );
    // Without the spin-loop pass the loop is unbounded; --unroll 2 cuts the executions
    // where q spins a third time, and says the result is bounded.
    let r = run(&p, ModelKind::Sc, Some(2));
    assert_eq!(r.verdict, Verdict::Incomplete);
    assert_eq!(r.stopped_by, Some(Limit::Unroll));
    assert!(r.stats.unroll_cut > 0);
    // q reads the flag once, twice or three times before it sees 1.
    assert_eq!(r.stats.executions, 3);
    // A violation within the bound is still found (and is a real one).
    let r = run(&p, ModelKind::Pso, Some(2));
    assert_eq!(r.verdict, Verdict::Violation);
}

#[test]
fn a_cut_thread_does_not_hide_the_others() {
    // q spins past the bound before p runs: the other threads must still be explored
    // (here p's store races with q's loads and must be reversed).
    let p = parse(
        "shared flag = 0, seen = 0;
         thread q { while (flag == 0) { } seen = 1; }
         thread p { flag = 1; }",
    );
    let r = run(&p, ModelKind::Sc, Some(1));
    assert!(r.stats.executions >= 2, "{:?}", r.stats);
}

/// Final states with the spin-loop rewrite against the program as written, every model.
fn same_as_written(src: &str, unroll: u32) -> Vec<fencer_report::Report> {
    let mut p = parse(src);
    assert_eq!(fencer_ir::spin::spin_assume(&mut p), 1, "{src}");
    [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso]
        .into_iter()
        .map(|m| {
            let with = run(&p, m, Some(unroll));
            let without = run(&parse(src), m, Some(unroll));
            assert_eq!(with.final_states, without.final_states, "{m}: {src}");
            assert_eq!(
                with.verdict == Verdict::Violation,
                without.verdict == Verdict::Violation
            );
            with
        })
        .collect()
}

#[test]
fn an_iteration_that_takes_a_mutex_and_gives_it_back_is_dropped() {
    // GenMC's lock zero-net-effect loop: t's failed iterations only lock, read and unlock.
    let src = "shared x = 0, y = 0; mutex m;
         thread t { while (x == 0) { lock(m); unlock(m); } r = y; }
         thread u { lock(m); y = 1; unlock(m); x = 1; }";
    for with in same_as_written(src, 3) {
        assert_eq!(with.stats.executions, 1);
        assert!(with.stats.assume_blocked > 0);
        assert!(
            with.stats.unroll_cut == 0,
            "no iteration is run into the bound"
        );
    }
}

#[test]
fn an_iteration_that_keeps_a_mutex_or_stores_under_it_is_kept() {
    // A store under the mutex; two pairs; a mutex given back and taken again, so that
    // the other thread gets in between (it never would if that iteration were dropped);
    // a mutex taken before the loop and given back in it (the next iteration's unlock
    // faults).
    for src in [
        "shared x = 0; mutex m;
         thread t { lock(m); while (x == 0) { unlock(m); } }
         thread u { x = 1; }",
        "shared x = 0, y = 0; mutex m;
         thread t { while (x == 0) { lock(m); y = 2; unlock(m); } }
         thread u { r = y; x = 1; }",
        "shared x = 0, y = 0; mutex m;
         thread t { while (x == 0) { lock(m); unlock(m); lock(m); y = 2; unlock(m); } }
         thread u { r = y; x = 1; }",
        "shared x = 0; mutex m;
         thread t { lock(m); while (x == 0) { unlock(m); lock(m); } unlock(m); }
         thread u { lock(m); x = 1; unlock(m); }",
    ] {
        same_as_written(src, 3);
    }
}
