//! The DPOR engine held to the reference explorer on random programs: the same final states
//! and verdicts, and exactly one complete execution per Shasha-Snir trace.
//!
//! `FENCER_CASES=N` sets the number of programs per model and algorithm (default 150,
//! which keeps the whole test command within CI's time; a quarter as many with loops);
//! `FENCER_SEED=S` runs the one program of seed S. A failure prints its seed and program;
//! add the seed to `REGRESSIONS` so it is checked for good.
//!
//! The soak: `FENCER_CASES=100000 cargo test --release -p fencer-dpor --test oracle`.

use fencer_dpor::{explore_traces, Algo, Options};
use fencer_memory::ModelKind;
use fencer_report::{Limit, Verdict};
use fencer_testgen::{program, Shape};
use std::collections::HashSet;

/// Seeds that once failed (plain shape, then loop shape); checked on every run.
const REGRESSIONS: &[u64] = &[659];
const LOOP_REGRESSIONS: &[u64] = &[];
const HEAP_REGRESSIONS: &[u64] = &[33];
const THREADS_REGRESSIONS: &[u64] = &[];
const WORDS_REGRESSIONS: &[u64] = &[];
const LOCK_LOOP_REGRESSIONS: &[u64] = &[];
const BARRIER_REGRESSIONS: &[u64] = &[];

/// Loop bound for the lock-loop programs on the reference side: an iteration is kept only
/// when another thread looked into it, and they have a few looks at most.
const LOCK_LOOP_UNROLL: u32 = 3;

/// Loop bound for programs with loops: enough for a spin loop to see a change.
const UNROLL: u32 = 2;

thread_local! {
    /// Programs of this test thread whose reference ran out of states (see
    /// [`reference_too_small`]).
    static SKIPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Whether the reference stopped at its state limit: it then has explored only part of
/// the program (a few looping programs that spin into their bound on every path), and
/// is no oracle for it. Counted, so that the test fails should that become common.
fn reference_too_small(r: &fencer_report::Report) -> bool {
    let stopped = r.stopped_by == Some(Limit::MaxStates);
    if stopped {
        SKIPPED.with(|s| s.set(s.get() + 1));
    }
    stopped
}

fn cases() -> u64 {
    std::env::var("FENCER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(150)
}

#[derive(Clone, Copy)]
struct Case {
    model: ModelKind,
    algo: Algo,
    loops: bool,
    kind: Kind,
}

/// Which generator makes the programs.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `.fen` text (`fencer_testgen::program`).
    Text,
    /// Heap objects, frees, locks never released, trylocks, spawns (generated as IR).
    Heap,
    /// Spawns in several threads, thread ids stored, asserted on and joined, some as
    /// constants (generated as IR).
    Threads,
    /// A mutex that is also a memory word: stores into it, hand-made locks by
    /// compare-and-swap, destroys, unlocks by non-owners, a heap mutex freed while held
    /// (generated as IR).
    Words,
    /// Waiting loops that take a mutex and give it back, or give it back and take it
    /// again (a condition wait), while other threads read its word, take it, set the
    /// flag, and end the process (generated as IR; with the spin-loop rewrite, held to the
    /// reference explorer on the program as written).
    LockLoops,
    /// Barriers waited at by more or fewer threads than their count, serial results read
    /// or not, destroyed and initialised again (generated as IR).
    Barriers,
}

fn shape(loops: bool) -> Shape {
    let mut shape = Shape::oracle(loops);
    // FENCER_TOTAL=N shrinks the programs (to find a small failing case).
    if let Some(t) = std::env::var("FENCER_TOTAL")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        shape.total = t;
        shape.threads = (2, 2.max(t / 3).min(4));
    }
    shape
}

/// The IR-generated program of `c` for `seed`, if `c` is of that kind.
fn ir_program(seed: u64, c: Case) -> Option<fencer_ir::Program> {
    match c.kind {
        Kind::Text => None,
        Kind::Heap => Some(fencer_testgen::heap_program(seed)),
        Kind::Threads => Some(fencer_testgen::threads_program(seed)),
        Kind::Words => Some(fencer_testgen::mutex_word_program(seed)),
        Kind::LockLoops => Some(fencer_testgen::lock_loop_program(seed)),
        Kind::Barriers => Some(fencer_testgen::barrier_program(seed)),
    }
}

fn compare(seed: u64, c: Case) -> Result<(), String> {
    if c.kind == Kind::LockLoops {
        let prog = fencer_testgen::lock_loop_program(seed);
        let text = fencer_testgen::listing(&prog);
        let mut rewritten = prog.clone();
        fencer_ir::spin::spin_assume(&mut rewritten);
        let unroll = Some(LOCK_LOOP_UNROLL);
        return against_reference(&rewritten, unroll, seed, c, true)
            .and_then(|()| against_original(&prog, &rewritten, unroll, c))
            .map_err(|e| format!("seed {seed}, {}, {:?}: {e}\n{text}", c.model, c.algo));
    }
    if let Some(prog) = ir_program(seed, c) {
        let text = fencer_testgen::listing(&prog);
        return against_reference(&prog, None, seed, c, false).map_err(|e| format!("{e}\n{text}"));
    }
    let src = program(seed, &shape(c.loops));
    let prog = fencer_text::parse_program("gen.fen", &src).map_err(|d| d.to_string())?;
    // Programs with loops are checked both as written and with spin loops replaced; the
    // replaced ones also against the reference on the program as written, so that the
    // rewrite itself is held to the oracle (it once dropped iterations that mattered).
    let spin = c.loops && seed.is_multiple_of(2);
    let unroll = c.loops.then_some(UNROLL);
    let result = if spin {
        let mut rewritten = prog.clone();
        fencer_ir::spin::spin_assume(&mut rewritten);
        against_reference(&rewritten, unroll, seed, c, spin)
            .and_then(|()| against_original(&prog, &rewritten, unroll, c))
    } else {
        against_reference(&prog, unroll, seed, c, spin)
    };
    result.map_err(|e| {
        format!(
            "seed {seed}, {}, {:?}, loops {} (spin-assume {spin}): {e}\n{src}",
            c.model, c.algo, c.loops
        )
    })
}

fn dpor_opts(c: Case, unroll: Option<u32>) -> Options {
    Options {
        algo: c.algo,
        stop_on_violation: false,
        unroll,
        ..Options::default()
    }
}

/// DPOR with the spin-loop rewrite against the reference explorer without it: the same
/// violations and the same final states of complete executions. (Traces differ: the
/// rewrite drops iterations; and where the reference runs pure iterations into the loop
/// bound, DPOR may finish: safe against incomplete is allowed.)
fn against_original(
    original: &fencer_ir::Program,
    rewritten: &fencer_ir::Program,
    unroll: Option<u32>,
    c: Case,
) -> Result<(), String> {
    let r = fencer_reference::explore(
        original,
        c.model,
        &fencer_reference::Options {
            unroll,
            ..Default::default()
        },
    )
    .report;
    if reference_too_small(&r) {
        return Ok(());
    }
    let (d, _) = explore_traces(rewritten, c.model, &dpor_opts(c, unroll));
    let violation = |v: Verdict| v == Verdict::Violation;
    // A loop that stores as it waits (`while (x0 == 2) { x2 = 1; }` with nobody to change
    // x0) hangs, and DPOR says so; the reference, without the rewrite, only runs it into
    // the loop bound. Then the reference must find nothing else, and still run into the
    // bound with three times as many iterations allowed: the loop goes on.
    let hang = d.counterexample.as_ref().is_some_and(|x| x.kind == "hang");
    if hang && r.verdict == Verdict::Incomplete && r.stopped_by == Some(Limit::Unroll) {
        let longer = fencer_reference::explore(
            original,
            c.model,
            &fencer_reference::Options {
                unroll: unroll.map(|u| u * 3),
                ..Default::default()
            },
        )
        .report;
        if reference_too_small(&longer) {
            return Ok(());
        }
        return if longer.verdict == Verdict::Incomplete && longer.stopped_by == Some(Limit::Unroll)
        {
            Ok(())
        } else {
            Err(format!(
                "with the spin-loop rewrite a hang ({:?}); the reference without it, \
                 with three times the loop bound: {:?}",
                d.counterexample.as_ref().map(|c| &c.message),
                longer.verdict
            ))
        };
    }
    if violation(d.verdict) != violation(r.verdict)
        || (d.verdict == Verdict::Incomplete && r.verdict == Verdict::Safe)
    {
        return Err(format!(
            "with the spin-loop rewrite: verdict {:?}, reference without it {:?} ({:?})",
            d.verdict,
            r.verdict,
            r.counterexample.as_ref().map(|c| &c.message)
        ));
    }
    if d.final_states != r.final_states {
        return Err(format!(
            "with the spin-loop rewrite, final states {:?}; reference without it {:?}",
            d.final_states, r.final_states
        ));
    }
    Ok(())
}

fn against_reference(
    prog: &fencer_ir::Program,
    unroll: Option<u32>,
    seed: u64,
    c: Case,
    spin: bool,
) -> Result<(), String> {
    let reference = fencer_reference::explore(
        prog,
        c.model,
        &fencer_reference::Options {
            unroll,
            ..Default::default()
        },
    );
    let r = reference.report;
    if reference_too_small(&r) {
        return Ok(());
    }
    let (d, dtraces) = explore_traces(prog, c.model, &dpor_opts(c, unroll));
    let fail = |what: String| {
        Err(format!(
            "seed {seed}, {}, {:?}, loops {}, {:?} (spin-assume {spin}): {what}",
            c.model, c.algo, c.loops, c.kind
        ))
    };
    if d.verdict != r.verdict {
        return fail(format!(
            "verdict {:?}, reference {:?} ({:?})",
            d.verdict,
            r.verdict,
            r.counterexample.as_ref().map(|c| &c.message)
        ));
    }
    if d.final_states != r.final_states {
        let (a, b) = (
            d.final_states.clone().unwrap_or_default(),
            r.final_states.clone().unwrap_or_default(),
        );
        let missing: Vec<_> = b.iter().filter(|s| !a.contains(s)).take(5).collect();
        let extra: Vec<_> = a.iter().filter(|s| !b.contains(s)).take(5).collect();
        return fail(format!(
            "final states differ: {} vs the reference's {}; missing {missing:?}, extra {extra:?}",
            a.len(),
            b.len()
        ));
    }
    if (d.stats.unroll_cut > 0) != (r.stats.unroll_cut > 0) {
        return fail(format!(
            "unroll cuts {}, reference {}",
            d.stats.unroll_cut, r.stats.unroll_cut
        ));
    }
    // Sleep sets keep even Source-DPOR from exploring two complete executions with one
    // trace; its redundancy shows as sleep-set-blocked executions instead. So both
    // algorithms must explore exactly the reference's traces, each once.
    let set: HashSet<u128> = dtraces.iter().copied().collect();
    if set.len() != dtraces.len() {
        return fail(format!(
            "{} executions but {} distinct traces",
            dtraces.len(),
            set.len()
        ));
    }
    if set != reference.traces {
        return fail(format!(
            "{} traces explored, the reference has {} ({} missing)",
            set.len(),
            reference.traces.len(),
            reference.traces.difference(&set).count()
        ));
    }
    // Optimal-DPOR judges weak initials, initials included, with the kinds events have
    // where the sequence puts them, as the sleep sets do: no execution is blocked by a
    // sleep set wherever weak initials are judged: on one worker, every program (heap
    // programs included) under every model (see `optimal_exact`).
    let blocked = d.stats.sleep_blocked.unwrap_or(0);
    if c.algo == Algo::Optimal {
        if !fencer_dpor::optimal_exact(prog, c.model, &dpor_opts(c, unroll)) {
            return fail("weak initials not judged (optimal_exact)".to_string());
        }
        if blocked > 0 {
            return fail(format!(
                "{blocked} executions blocked by sleep sets (optimal)"
            ));
        }
    }
    Ok(())
}

fn run(model: ModelKind, algo: Algo, loops: bool, kind: Kind) {
    let c = Case {
        model,
        algo,
        loops,
        kind,
    };
    if let Some(seed) = std::env::var("FENCER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        compare(seed, c).unwrap();
        return;
    }
    let (n, regressions) = match kind {
        Kind::Heap => (cases() / 2, HEAP_REGRESSIONS),
        Kind::Threads => (cases() / 2, THREADS_REGRESSIONS),
        Kind::Words => (cases(), WORDS_REGRESSIONS),
        Kind::LockLoops => (cases() / 20, LOCK_LOOP_REGRESSIONS),
        Kind::Barriers => (cases(), BARRIER_REGRESSIONS),
        Kind::Text if loops => (cases() / 4, LOOP_REGRESSIONS),
        Kind::Text => (cases(), REGRESSIONS),
    };
    let mut failures = Vec::new();
    for seed in regressions.iter().copied().chain(0..n) {
        // A panic inside the engine must still name its seed.
        let result = std::panic::catch_unwind(|| compare(seed, c)).unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let text = match ir_program(seed, c) {
                Some(p) => fencer_testgen::listing(&p),
                None => program(seed, &shape(loops)),
            };
            Err(format!(
                "seed {seed}, {}, {:?}, loops {loops}, {kind:?}: panicked: {msg}\n{text}",
                c.model, c.algo
            ))
        });
        if let Err(e) = result {
            failures.push(e);
            if failures.len() >= 3 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let skipped = SKIPPED.with(|s| s.get());
    assert!(
        skipped * 50 <= n.max(50),
        "{skipped} of {n} programs too large for the reference"
    );
}

macro_rules! oracle_tests {
    ($($name:ident: $model:ident, $algo:ident, $loops:expr, $kind:ident;)*) => {
        $(
            #[test]
            fn $name() {
                run(ModelKind::$model, Algo::$algo, $loops, Kind::$kind);
            }
        )*
    };
}

oracle_tests! {
    optimal_sc: Sc, Optimal, false, Text;
    optimal_tso: Tso, Optimal, false, Text;
    optimal_pso: Pso, Optimal, false, Text;
    source_sc: Sc, Source, false, Text;
    source_tso: Tso, Source, false, Text;
    source_pso: Pso, Source, false, Text;
    optimal_loops_sc: Sc, Optimal, true, Text;
    optimal_loops_tso: Tso, Optimal, true, Text;
    optimal_loops_pso: Pso, Optimal, true, Text;
    source_loops_sc: Sc, Source, true, Text;
    source_loops_tso: Tso, Source, true, Text;
    source_loops_pso: Pso, Source, true, Text;
    // Heap programs: weak initials simulated, exact, and no execution blocked.
    optimal_heap_sc: Sc, Optimal, false, Heap;
    optimal_heap_tso: Tso, Optimal, false, Heap;
    optimal_heap_pso: Pso, Optimal, false, Heap;
    source_heap_sc: Sc, Source, false, Heap;
    source_heap_tso: Tso, Source, false, Heap;
    source_heap_pso: Pso, Source, false, Heap;
    // Thread ids: spawns in several threads, ids asserted on and joined.
    optimal_threads_sc: Sc, Optimal, false, Threads;
    source_threads_sc: Sc, Source, false, Threads;
    optimal_threads_tso: Tso, Optimal, false, Threads;
    source_threads_tso: Tso, Source, false, Threads;
    optimal_threads_pso: Pso, Optimal, false, Threads;
    source_threads_pso: Pso, Source, false, Threads;
    // Lock loops and condition waits, their mutex looked into by others; exits.
    optimal_lock_loops_sc: Sc, Optimal, true, LockLoops;
    source_lock_loops_sc: Sc, Source, true, LockLoops;
    optimal_lock_loops_tso: Tso, Optimal, true, LockLoops;
    source_lock_loops_tso: Tso, Source, true, LockLoops;
    optimal_lock_loops_pso: Pso, Optimal, true, LockLoops;
    source_lock_loops_pso: Pso, Source, true, LockLoops;
    // Mutex words: stores into a mutex, hand-made locks, frees of held heap mutexes.
    optimal_words_sc: Sc, Optimal, false, Words;
    source_words_sc: Sc, Source, false, Words;
    optimal_words_tso: Tso, Optimal, false, Words;
    source_words_tso: Tso, Source, false, Words;
    optimal_words_pso: Pso, Optimal, false, Words;
    source_words_pso: Pso, Source, false, Words;
    // Barriers: generations of different members, serial results read or not, destroys.
    optimal_barriers_sc: Sc, Optimal, false, Barriers;
    source_barriers_sc: Sc, Source, false, Barriers;
    optimal_barriers_tso: Tso, Optimal, false, Barriers;
    source_barriers_tso: Tso, Source, false, Barriers;
    optimal_barriers_pso: Pso, Optimal, false, Barriers;
    source_barriers_pso: Pso, Source, false, Barriers;
}

/// A trace (and a final state) that Optimal-DPOR once lost under SC: with `notdep(i).j` cut
/// at `j` and each race reversed only by the execution that first ran `j`, the reversal of
/// `r1 = x2` against `x2 = 3` was judged covered by the sleeping `t0`, whose read of `x1`
/// commutes with `x2 = 3` but not with the `x1 = 3` that follows it.
#[test]
fn optimal_keeps_the_traces_a_sleeping_reader_does_not_cover() {
    let src = "shared x0 = 0, x1 = 0, x2 = 0;
thread t0 { r0 = x1; }
thread t1 { x0 = 1; x0 = 3; }
thread t2 { x2 = 3; x1 = 3; x0 = 1; }
thread t3 { r0 = fetch_add(x0, 1); r1 = x2; }
";
    let prog = fencer_text::parse_program("lost.fen", src).unwrap();
    for model in [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso] {
        let c = Case {
            model,
            algo: Algo::Optimal,
            loops: false,
            kind: Kind::Text,
        };
        against_reference(&prog, None, 0, c, false).unwrap();
    }
}

/// Two threads handing control back and forth for 40 rounds (GenMC's `pgsql`, bounded)
/// while a third reads a flag once: executions of over 600 events with a race at every
/// round, so DPOR keeps more snapshots than it may hold and thins them out (every other
/// one goes); what it resumes from must still be the state its schedule reaches.
#[test]
fn long_executions_resume_from_thinned_snapshots() {
    let round = |me: u8, other: u8| {
        format!(
            "thread t{me} {{
    i = 0;
    while (i < 40) {{
        l = latch{me};
        assume(l == 1);
        latch{me} = 0;
        f = flag{me};
        if (f == 1) {{
            flag{me} = 0;
            flag{other} = 1;
            fence;
            latch{other} = 1;
        }}
        i = i + 1;
    }}
}}
"
        )
    };
    let src = format!(
        "shared latch1 = 1, latch2 = 0, flag1 = 1, flag2 = 0;\n{}{}thread t3 {{ a = flag1; }}\n",
        round(1, 2),
        round(2, 1)
    );
    let prog = fencer_text::parse_program("ping_pong.fen", &src).unwrap();
    for model in [ModelKind::Sc, ModelKind::Tso] {
        for algo in [Algo::Optimal, Algo::Source] {
            let c = Case {
                model,
                algo,
                loops: true,
                kind: Kind::Text,
            };
            against_reference(&prog, None, 0, c, false).unwrap();
        }
    }
}

/// A pointer to an object no thread has allocated yet, used before and after the
/// allocation (`fencer_testgen::future_object_program`): the sleep sets called the faulting
/// access dependent with everything while the clocks saw it race with nothing, so the
/// order where it faults was never explored, and the verdict was a wrong *safe*.
#[test]
fn an_access_before_its_object_exists_races_with_the_allocation() {
    let prog = fencer_testgen::future_object_program();
    for c in every_model_and_algo(Kind::Heap) {
        against_reference(&prog, None, 0, c, false).unwrap();
    }
}

/// A mutex destroyed and initialised again while other threads lock it: a lock between
/// the destroy and the store that re-initialises it faults. The clocks did not order a lock
/// after a plain store to the mutex (the sleep sets did): under SC, Optimal-DPOR said
/// *safe*. Under TSO and PSO the store reaches memory by an update, which the locks did
/// not race with (two lockers: 4 of 6 executions; with `--all`, a panic).
#[test]
fn a_mutex_destroyed_and_initialised_again_races_with_its_locks() {
    for lockers in [1, 2] {
        let prog = fencer_testgen::mutex_reinit_program(lockers);
        for c in every_model_and_algo(Kind::Heap) {
            let (d, _) = explore_traces(&prog, c.model, &dpor_opts(c, None));
            assert_eq!(d.verdict, Verdict::Violation, "{} {:?}", c.model, c.algo);
            against_reference(&prog, None, 0, c, false)
                .unwrap_or_else(|e| panic!("{e}\n{}", fencer_testgen::listing(&prog)));
        }
    }
}

/// Two threads that fault in their first local instructions: the first fault is reported,
/// and exploring on after it (`--all`) took the other thread's faulting instruction for a
/// visible one and panicked.
#[test]
fn two_threads_that_fault_at_their_start() {
    let src = "thread t0 { r0 = 6 / 0; }\nthread t1 { r0 = 6 / 0; }";
    let prog = fencer_text::parse_program("faults.fen", src).unwrap();
    for c in every_model_and_algo(Kind::Text) {
        against_reference(&prog, None, 0, c, false).unwrap();
    }
}

/// A fault waits for the buffers its instruction waits for: an unlock (of a mutex the
/// thread does not hold) for all of them, a read-modify-write (whose operand divides by
/// zero) for its location's. The clocks did not order the fault after its thread's
/// updates, so reversing a race of an update built a sequence that ran the fault first,
/// which the machine never enables (with `--all`, a debug assertion; in release builds,
/// an execution the program cannot take).
#[test]
fn a_fault_waits_for_its_threads_buffers() {
    let srcs = [
        "shared x;\nmutex m;\nthread a { x = 1; unlock(m); }\nthread b { r = x; }",
        "shared x, y;\nthread a { x = 1; r = y; s = fetch_add(x, 1 / r); }\nthread b { t = x; }",
    ];
    for src in srcs {
        let prog = fencer_text::parse_program("fault.fen", src).unwrap();
        for c in every_model_and_algo(Kind::Text) {
            against_reference(&prog, None, 0, c, false).unwrap_or_else(|e| panic!("{src}: {e}"));
        }
    }
}

/// A case for each model and algorithm, of programs without loops.
fn every_model_and_algo(kind: Kind) -> Vec<Case> {
    let mut cases = Vec::new();
    for model in [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso] {
        for algo in [Algo::Optimal, Algo::Source] {
            cases.push(Case {
                model,
                algo,
                loops: false,
                kind,
            });
        }
    }
    cases
}

/// Thread ids are taken in the order spawns run. Each of these was a wrong *safe*: two
/// spawns of different threads did not race, so only one order gave ids; and a join of an
/// id no thread has yet (here a constant) faults only before the spawn that gives it,
/// an order the clocks never showed (the valid join is ordered after the spawn through
/// the child).
#[test]
fn thread_ids_are_taken_in_spawn_order() {
    let programs = [
        // Which thread's spawn gets id 2.
        "fn w(n) { }
thread t0 { a = spawn w(0); assert(a == 2); }
thread t1 { b = spawn w(0); }",
        // A join of the id before its spawn faults.
        "shared x = 0;
fn helper(n) { x = n; }
thread t0 { a = spawn helper(1); }
thread t1 { join(2); }",
        // Which thread a join of id 3 waits for, once both have spawned.
        "shared x = 0, f0 = 0, f1 = 0;
fn wa(n) { x = 1; }
fn wb(n) { }
thread t0 { p = spawn wa(0); f0 = 1; }
thread t1 { q = spawn wb(0); f1 = 1; }
thread t2 { assume(f0 == 1); assume(f1 == 1); join(3); r = x; assert(r == 1); }",
        // A child that fails at its start: the spawn is done (exploring on after the
        // violation, the parent used to spawn again for ever).
        "shared x = 0;
fn w(v) { assert(v == 1); }
thread t0 { a = spawn w(0); x = 1; }
thread t1 { r = x; }",
    ];
    for src in programs {
        let prog = fencer_text::parse_program("ids.fen", src).unwrap();
        for c in every_model_and_algo(Kind::Threads) {
            let (d, _) = explore_traces(&prog, c.model, &dpor_opts(c, None));
            assert_eq!(
                d.verdict,
                Verdict::Violation,
                "{src}\n{} {:?}",
                c.model,
                c.algo
            );
            against_reference(&prog, None, 0, c, false).unwrap_or_else(|e| panic!("{e}\n{src}"));
        }
    }
}
