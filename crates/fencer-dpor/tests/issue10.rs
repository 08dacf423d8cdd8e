//! Wrong verdicts users found (issue 10), each held by both engines and both algorithms
//! under every model.

use fencer_dpor::{explore, Algo, Options};
use fencer_memory::ModelKind;
use fencer_report::{Limit, Report, Verdict};

fn parse(src: &str) -> fencer_ir::Program {
    fencer_text::parse_program("t.fen", src).unwrap()
}

fn dpor(p: &fencer_ir::Program, m: ModelKind, algo: Algo, max_depth: usize) -> Report {
    explore(
        p,
        m,
        &Options {
            algo,
            max_depth,
            ..Options::default()
        },
    )
}

fn reference(p: &fencer_ir::Program, m: ModelKind, max_depth: usize) -> Report {
    fencer_reference::explore(
        p,
        m,
        &fencer_reference::Options {
            max_depth,
            ..Default::default()
        },
    )
    .report
}

/// Every engine, algorithm and model gives `want`; returns one of the reports.
fn all_engines(p: &fencer_ir::Program, max_depth: usize, want: Verdict) -> Report {
    let mut last = None;
    for m in ModelKind::ALL {
        for a in [Algo::Optimal, Algo::Source] {
            let r = dpor(p, m, a, max_depth);
            assert_eq!(
                r.verdict, want,
                "dpor {a:?} under {m}: {:?}",
                r.counterexample
            );
            last = Some(r);
        }
        let r = reference(p, m, max_depth);
        assert_eq!(r.verdict, want, "reference under {m}");
    }
    last.unwrap()
}

#[test]
fn spin_pruning_keeps_iterations_whose_writes_are_read_after_the_loop() {
    let src = "shared x = 0;
        thread p { b = 1; while (x == 0) { b = 0; } assert(b == 1); }
        thread q { x = 1; }";
    let mut p = parse(src);
    // The loop is still pruned (its writes are dead only when it exits at once)...
    fencer_ir::spin::spin_assume(&mut p);
    all_engines(&p, 10_000, Verdict::Violation);
    // ...and without the rewrite the verdict is the same.
    all_engines(&parse(src), 10_000, Verdict::Violation);
}

#[test]
fn spin_pruning_leaves_loops_whose_writes_are_reported() {
    // No assertion, but the final state reports p.b: b = 0 must be among the final states.
    let mut p = parse(
        "shared x = 0;
         thread p { b = 1; while (x == 0) { b = 0; } }
         thread q { x = 1; }",
    );
    fencer_ir::spin::spin_assume(&mut p);
    let r = explore(
        &p,
        ModelKind::Sc,
        &Options {
            stop_on_violation: false,
            ..Options::default()
        },
    );
    let states = r.final_states.unwrap();
    assert!(states.iter().any(|s| s[0] == 0), "{states:?}");
    assert!(states.iter().any(|s| s[0] == 1), "{states:?}");
}

#[test]
fn a_depth_cut_stops_one_thread_and_the_others_go_on() {
    let p = parse(
        "shared x = 0;
         thread p { n = 0; while (x == 0) { n = n + 1; } assert(n == 0); }
         thread q { x = 1; }",
    );
    let r = all_engines(&p, 50, Verdict::Violation);
    // The violation is real, and the report says that some thread was cut.
    assert_eq!(r.stopped_by, Some(Limit::Depth));
}

#[test]
fn a_loop_nothing_can_release_is_a_hang() {
    let mut p = parse(
        "shared x = 0, y = 0;
         thread p { while (x == 0) { } }
         thread q { y = 1; }",
    );
    fencer_ir::spin::spin_assume(&mut p);
    let r = all_engines(&p, 10_000, Verdict::Violation);
    let c = r.counterexample.unwrap();
    assert_eq!(c.kind, "hang");
    assert_eq!(c.line, Some(2));
}

#[test]
fn a_loop_another_thread_releases_is_no_hang() {
    let mut p = parse(
        "shared x = 0;
         thread p { while (x == 0) { } }
         thread q { x = 1; }",
    );
    fencer_ir::spin::spin_assume(&mut p);
    let r = all_engines(&p, 10_000, Verdict::Safe);
    assert_eq!(r.stats.executions, 1);
}

#[test]
fn a_false_assume_discards_and_says_no_execution_completed() {
    let p = parse(
        "shared x = 0;
         thread p { r = x; assume(r == 1); }
         thread q { x = 2; }",
    );
    let r = all_engines(&p, 10_000, Verdict::Safe);
    assert_eq!(r.stats.executions, 0);
    assert!(r.to_text(false).contains("no execution completed"));
}

#[test]
fn the_recursion_bound_is_reported_as_such() {
    let p = parse(
        "shared x = 0;
         fn f(n) { x = n; r = f(n + 1); }
         thread p { r = f(0); }",
    );
    let r = dpor(&p, ModelKind::Sc, Algo::Optimal, 100_000);
    assert_eq!(r.verdict, Verdict::Incomplete);
    assert_eq!(r.stopped_by, Some(Limit::Recursion));
    assert!(r.to_text(false).contains("recursion bound"));
}
