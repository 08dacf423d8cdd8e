//! The memory models' known answers on the classic litmus shapes, checked with the
//! reference explorer. Each test states the expected answer per model and why.

use fencer_memory::ModelKind::{self, Pso, Sc, Tso};
use fencer_reference::{explore, Options};
use fencer_report::Verdict;

fn run(src: &str, model: ModelKind) -> fencer_reference::Outcome {
    let prog =
        fencer_text::parse_program("test.fen", src).unwrap_or_else(|d| panic!("{}", d.render(src)));
    explore(&prog, model, &Options::default())
}

/// Whether the program's `exists` condition is reachable under `model`.
fn reachable(src: &str, model: ModelKind) -> bool {
    let o = run(src, model);
    assert_ne!(
        o.report.verdict,
        Verdict::Incomplete,
        "exploration incomplete"
    );
    o.report.verdict == Verdict::Violation
}

/// Checks reachability under SC, TSO and PSO, in that order.
fn expect(src: &str, sc: bool, tso: bool, pso: bool) {
    for (m, want) in [(Sc, sc), (Tso, tso), (Pso, pso)] {
        assert_eq!(reachable(src, m), want, "under {m}");
    }
}

fn traces(src: &str, model: ModelKind) -> u64 {
    run(src, model)
        .report
        .stats
        .traces
        .expect("the reference explorer counts traces")
}

const SB: &str = "shared x = 0, y = 0;
thread p { x = 1; r1 = y; }
thread q { y = 1; r2 = x; }
exists (p.r1 == 0 && q.r2 == 0)";

#[test]
fn store_buffering() {
    // Both stores can wait in the buffers while both loads read memory: TSO and PSO.
    expect(SB, false, true, true);
}

#[test]
fn store_buffering_fenced() {
    // A fence drains the thread's buffer before its load: as SC everywhere.
    let src = "shared x = 0, y = 0;
thread p { x = 1; fence; r1 = y; }
thread q { y = 1; fence; r2 = x; }
exists (p.r1 == 0 && q.r2 == 0)";
    expect(src, false, false, false);
}

#[test]
fn store_buffering_with_rmw_writes() {
    // An atomic exchange acts on memory at once: it is its own fence for SB.
    let src = "shared x = 0, y = 0;
thread p { a = xchg(x, 1); r1 = y; }
thread q { b = xchg(y, 1); r2 = x; }
exists (p.r1 == 0 && q.r2 == 0)";
    expect(src, false, false, false);
}

const MP: &str = "shared x = 0, y = 0;
thread p { x = 1; y = 1; }
thread q { r1 = y; r2 = x; }
exists (q.r1 == 1 && q.r2 == 0)";

#[test]
fn message_passing() {
    // Only PSO lets y's store reach memory before x's (separate buffers).
    expect(MP, false, false, true);
}

#[test]
fn message_passing_fenced() {
    let src = "shared x = 0, y = 0;
thread p { x = 1; fence; y = 1; }
thread q { r1 = y; r2 = x; }
exists (q.r1 == 1 && q.r2 == 0)";
    expect(src, false, false, false);
}

#[test]
fn message_passing_rmw_drains_only_its_location_under_pso() {
    // TSO: the RMW drains the whole buffer, so x is in memory before y. PSO: only y's buffer.
    let src = "shared x = 0, y = 0;
thread p { x = 1; a = fetch_add(y, 1); }
thread q { r1 = y; r2 = x; }
exists (q.r1 == 1 && q.r2 == 0)";
    expect(src, false, false, true);
}

#[test]
fn load_buffering() {
    // LB: loads are never delayed past later stores in store-buffer models.
    let src = "shared x = 0, y = 0;
thread p { r1 = x; y = 1; }
thread q { r2 = y; x = 1; }
exists (p.r1 == 1 && q.r2 == 1)";
    expect(src, false, false, false);
}

#[test]
fn iriw() {
    // IRIW: one shared memory makes every model here multi-copy atomic; the two readers
    // cannot see the writes in opposite orders.
    let src = "shared x = 0, y = 0;
thread w0 { x = 1; }
thread w1 { y = 1; }
thread r0 { a = x; b = y; }
thread r1 { c = y; d = x; }
exists (r0.a == 1 && r0.b == 0 && r1.c == 1 && r1.d == 0)";
    expect(src, false, false, false);
}

#[test]
fn two_plus_two_w() {
    // 2+2W: final x=1, y=1 needs each thread's second store in memory before its first:
    // a cycle unless stores to different locations can be reordered (PSO).
    let src = "shared x = 0, y = 0;
thread p { x = 1; y = 2; }
thread q { y = 1; x = 2; }
exists (x == 1 && y == 1)";
    expect(src, false, false, true);
}

#[test]
fn r_shape() {
    // R: q's store to y can wait in its buffer past its load of x (TSO's one relaxation),
    // so y=2 lands last while q read x before p's store.
    let src = "shared x = 0, y = 0;
thread p { x = 1; y = 1; }
thread q { y = 2; r1 = x; }
exists (y == 2 && q.r1 == 0)";
    expect(src, false, true, true);
}

#[test]
fn r_shape_fenced() {
    let src = "shared x = 0, y = 0;
thread p { x = 1; fence; y = 1; }
thread q { y = 2; fence; r1 = x; }
exists (y == 2 && q.r1 == 0)";
    expect(src, false, false, false);
}

#[test]
fn s_shape() {
    // S: q reads p's y=1 and then writes x=1; x=2 final needs p's x=2 to reach memory after
    // p's y=1: only PSO reorders p's two stores.
    let src = "shared x = 0, y = 0;
thread p { x = 2; y = 1; }
thread q { r1 = y; x = 1; }
exists (x == 2 && q.r1 == 1)";
    expect(src, false, false, true);
}

#[test]
fn coherence_read_read() {
    // CoRR: two reads of one location never see its writes out of coherence order.
    let src = "shared x = 0;
thread p { x = 1; }
thread q { r1 = x; r2 = x; }
exists (q.r1 == 1 && q.r2 == 0)";
    expect(src, false, false, false);
}

#[test]
fn coherence_write_read() {
    // CoWR: after its own store a thread reads it (forwarding) or a later store.
    let src = "shared x = 0;
thread p { x = 1; r1 = x; }
thread q { x = 2; }
exists (p.r1 == 0)";
    expect(src, false, false, false);
}

#[test]
fn coherence_write_write() {
    // CoWW: a thread's two stores to one location reach memory in order (one FIFO per
    // location, even under PSO).
    let src = "shared x = 0;
thread p { x = 1; x = 2; }
exists (x == 1)";
    expect(src, false, false, false);
}

#[test]
fn figure5_final_states_and_traces() {
    let src = "shared x = 0;
thread p { x = 1; r = x; }
thread q { x = 2; }";
    // Three Shasha-Snir traces under TSO (the paper's Figure 5), and under SC too: r reads
    // p's store before or after q's store lands, or reads q's store.
    assert_eq!(traces(src, Tso), 3);
    assert_eq!(traces(src, Sc), 3);
    let o = run(src, Tso);
    let fs = o.report.final_states.unwrap();
    // final_vars: p.r then x
    assert_eq!(o.report.final_vars, vec!["p.r", "x"]);
    assert_eq!(fs, vec![vec![1, 1], vec![1, 2], vec![2, 2]]);
}

#[test]
fn store_buffering_traces() {
    // SC: one of the two writes is first, 3 traces; TSO adds the (0, 0) trace.
    assert_eq!(traces(SB, Sc), 3);
    assert_eq!(traces(SB, Tso), 4);
    assert_eq!(traces(SB, Pso), 4);
}

#[test]
fn mutex_protected_program_has_the_same_traces_everywhere() {
    let src = "shared x = 0, y = 0; mutex m;
thread p { lock(m); x = 1; a = y; unlock(m); }
thread q { lock(m); y = 1; b = x; unlock(m); }";
    let sc = traces(src, Sc);
    assert_eq!(sc, 2);
    assert_eq!(traces(src, Tso), sc);
    assert_eq!(traces(src, Pso), sc);
}

#[test]
fn atomic_increments_are_never_lost() {
    let src = "shared c = 0;
thread p { a = fetch_add(c, 1); }
thread q { b = fetch_add(c, 1); }
forall (c == 2)";
    expect(src, false, false, false);
}

#[test]
fn plain_increments_can_be_lost() {
    let src = "shared c = 0;
thread p { c = c + 1; }
thread q { c = c + 1; }
exists (c == 1)";
    expect(src, true, true, true);
}

#[test]
fn cas_succeeds_for_exactly_one_thread() {
    let src = "shared l = 0;
thread p { a = cas(l, 0, 1); }
thread q { b = cas(l, 0, 2); }
exists ((p.a == 0) == (q.b == 0))";
    expect(src, false, false, false);
}

#[test]
fn assertion_failure_is_a_violation_with_location() {
    let src = "shared x = 0;
thread p { x = 1; }
thread q { r = x; assert(r == 0); }";
    for m in [Sc, Tso, Pso] {
        let o = run(src, m);
        assert_eq!(o.report.verdict, Verdict::Violation);
        let c = o.report.counterexample.unwrap();
        assert_eq!(c.kind, "assertion");
        assert_eq!(c.line, Some(3));
        assert!(c.events.last().unwrap().op.contains("FAILS"));
    }
}

#[test]
fn deadlock_is_found() {
    let src = "mutex a, b;
thread p { lock(a); lock(b); unlock(b); unlock(a); }
thread q { lock(b); lock(a); unlock(a); unlock(b); }";
    let o = run(src, Tso);
    assert_eq!(o.report.verdict, Verdict::Violation);
    assert_eq!(o.report.counterexample.unwrap().kind, "deadlock");
}

#[test]
fn unlock_by_a_non_owner_is_a_violation() {
    let src = "mutex m;
thread p { lock(m); }
thread q { unlock(m); }";
    let o = run(src, Sc);
    assert_eq!(o.report.counterexample.unwrap().kind, "bad-unlock");
}

#[test]
fn joined_threads_writes_are_visible() {
    // A thread's buffers drain before it can be joined, so main always sees 1.
    let src = "shared x = 0;
fn w() { x = 1; }
thread main { t = spawn w(); join(t); r = x; assert(r == 1); }";
    expect(src, false, false, false);
}

#[test]
fn spawn_passes_its_argument_and_functions_return() {
    let src = "shared out[3] = {0, 0, 0};
fn sq(v) { return v * v; }
fn w(i) { s = sq(i); out[i] = s; }
thread main {
    a = spawn w(1); b = spawn w(2);
    join(a); join(b);
    r1 = out[1]; r2 = out[2];
    assert(r1 == 1 && r2 == 4);
}";
    expect(src, false, false, false);
}

#[test]
fn assume_discards_executions() {
    let src = "shared x = 0;
thread p { x = 1; }
thread q { r = x; assume(r == 1); }
exists (q.r == 0)";
    let o = run(src, Sc);
    assert_eq!(o.report.verdict, Verdict::Safe);
    assert!(o.report.blocked > 0);
}

#[test]
fn division_by_zero_is_reported() {
    let src = "shared x = 0;
thread p { r = x; s = 10 / r; }";
    let o = run(src, Sc);
    assert_eq!(o.report.counterexample.unwrap().kind, "arithmetic");
}

#[test]
fn loops_run_and_limits_stop_cleanly() {
    // A loop with a bounded number of iterations explores completely.
    let src = "shared x = 0;
thread p { i = 0; while (i < 3) { x = x + 1; i = i + 1; } }
thread q { r = x; }
forall (x == 3)";
    expect(src, false, false, false);
    // An unbounded loop hits the depth bound: incomplete, not safe. (The counter keeps the
    // machine from pruning the iterations as repeats of a pure one.)
    let spin = "shared f = 0;
thread p { c = 0; while (f == 0) { c = c + 1; } }";
    let prog = fencer_text::parse_program("t.fen", spin).unwrap();
    let opts = Options {
        max_depth: 50,
        ..Default::default()
    };
    let o = explore(&prog, Sc, &opts);
    assert_eq!(o.report.verdict, Verdict::Incomplete);
    assert_eq!(o.report.stopped_by, Some(fencer_report::Limit::Depth));
}

#[test]
fn max_executions_stops_with_partial_statistics() {
    let prog = fencer_text::parse_program("t.fen", SB).unwrap();
    let opts = Options {
        max_executions: Some(1),
        ..Default::default()
    };
    let o = explore(&prog, Sc, &opts);
    assert_eq!(o.report.verdict, Verdict::Incomplete);
    assert_eq!(
        o.report.stopped_by,
        Some(fencer_report::Limit::MaxExecutions)
    );
    assert_eq!(o.report.executions, 1);
}
