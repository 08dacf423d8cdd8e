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
    // t's loop carries r, so it is left alone; u's loop is guarded (a back edge that blocks
    // only after a pure iteration), and its stores keep every behaviour.
    let src = "shared x = 0; thread t { r = 0; while (r == 0) { r = cas(x, 0, 1); } }
         thread u { while (x == 0) { x = 2; } }";
    let mut p = parse(src);
    assert_eq!(fencer_ir::spin::spin_assume(&mut p), 1);
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
