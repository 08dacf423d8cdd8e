//! Parallel and sharded exploration against one worker without a frontier: the same
//! complete executions (trace fingerprints, as a multiset), final states and verdicts; the
//! shards partition the executions; and the counterexample does not depend on the number
//! of workers or on timing.
//!
//! `FENCER_CASES=N` sets the number of random programs per model and algorithm (default
//! 40; a quarter as many with loops, half as many heap programs).

use fencer_dpor::{explore_split, explore_traces, Algo, Options, Shard, Split, SplitResult};
use fencer_ir::Program;
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use fencer_testgen::{program, Shape};
use std::path::Path;
use std::time::Instant;

const MODELS: [ModelKind; 3] = [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso];
const ALGOS: [Algo; 2] = [Algo::Optimal, Algo::Source];

fn cases() -> u64 {
    std::env::var("FENCER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40)
}

fn opts(algo: Algo, unroll: Option<u32>, stop: bool) -> Options {
    Options {
        algo,
        unroll,
        stop_on_violation: stop,
        ..Options::default()
    }
}

/// How the tree is split: at a static frontier with at least this many units, or at the
/// races with the top this deep (`None`: the depth the engine picks).
#[derive(Clone, Copy, Debug)]
enum How {
    Frontier(usize),
    Races(Option<usize>),
    /// The exact split (Optimal-DPOR; Source-DPOR takes the race-driven split), its
    /// depth as with `Races`.
    Exact(Option<usize>),
}

fn split(jobs: usize, shard: Option<(u32, u32)>, how: How) -> Split {
    Split {
        jobs,
        shard: shard.map(|(index, count)| Shard { index, count }),
        min_units: match how {
            How::Frontier(n) => n,
            How::Races(_) | How::Exact(_) => fencer_dpor::UNITS,
        },
        race_driven: match how {
            How::Frontier(_) => None,
            How::Races(d) | How::Exact(d) => Some(d),
        },
        exact: matches!(how, How::Exact(_)),
        give_up: None,
        settle: false,
    }
}

fn sorted(mut v: Vec<u128>) -> Vec<u128> {
    v.sort_unstable();
    v
}

/// What every split run must share with one worker without a frontier.
fn same_outcome(what: &str, a: &Report, b: &Report) -> Result<(), String> {
    if a.verdict != b.verdict {
        return Err(format!(
            "{what}: verdict {:?} vs {:?}",
            b.verdict, a.verdict
        ));
    }
    if a.final_states != b.final_states || a.final_state_executions != b.final_state_executions {
        return Err(format!(
            "{what}: final states {:?} {:?} vs {:?} {:?}",
            b.final_states, b.final_state_executions, a.final_states, a.final_state_executions
        ));
    }
    if a.stats.executions != b.stats.executions {
        return Err(format!(
            "{what}: {} executions vs {}",
            b.stats.executions, a.stats.executions
        ));
    }
    if blocked(a) != blocked(b) {
        return Err(format!(
            "{what}: blocked (all, assume, depth, unroll, recursion, local loop) {:?} vs {:?}",
            blocked(b),
            blocked(a)
        ));
    }
    Ok(())
}

/// The executions the program blocked, by why: one per trace like the complete ones, so
/// the same however the tree is split (unlike those a sleep set stopped).
fn blocked(r: &Report) -> [u64; 6] {
    let s = &r.stats;
    [
        s.blocked,
        s.assume_blocked,
        s.depth_cut,
        s.unroll_cut,
        s.recursion_cut,
        s.local_loop_cut,
    ]
}

/// Runs must be identical between two frontier splits (whatever the workers).
fn same_split(what: &str, a: &SplitResult, b: &SplitResult) -> Result<(), String> {
    same_outcome(what, &a.report, &b.report)?;
    let (x, y) = (&a.report.stats, &b.report.stats);
    if (x.blocked, x.sleep_blocked, x.events) != (y.blocked, y.sleep_blocked, y.events)
        || a.traces != b.traces
        || a.units != b.units
        || a.violation_unit != b.violation_unit
    {
        return Err(format!(
            "{what}: blocked {} sleep {:?} events {} units {} vs {} {:?} {} {}",
            y.blocked,
            y.sleep_blocked,
            y.events,
            b.units,
            x.blocked,
            x.sleep_blocked,
            x.events,
            a.units
        ));
    }
    if a.report.counterexample != b.report.counterexample {
        return Err(format!("{what}: another counterexample"));
    }
    Ok(())
}

/// Everything explored (no stop at a violation): the plain engine's trace multiset,
/// final states and verdict for every split, and shards that partition the executions.
fn check_all(
    prog: &Program,
    model: ModelKind,
    algo: Algo,
    unroll: Option<u32>,
    how: How,
) -> Result<(), String> {
    let o = opts(algo, unroll, false);
    let (plain, traces) = explore_traces(prog, model, &o);
    let want = sorted(traces.clone());
    let mut dedup = want.clone();
    dedup.dedup();
    if dedup.len() != want.len() {
        return Err("the plain engine explored a trace twice".into());
    }
    let one = explore_split(prog, model, &o, &split(1, None, how), true);
    for jobs in [1, 2, 3] {
        let r = explore_split(prog, model, &o, &split(jobs, None, how), true);
        same_outcome(&format!("--jobs {jobs}"), &plain, &r.report)?;
        if sorted(r.traces.clone()) != want {
            return Err(format!(
                "--jobs {jobs}: {} traces vs the plain engine's {}",
                r.traces.len(),
                want.len()
            ));
        }
        same_split(&format!("--jobs {jobs} vs 1"), &one, &r)?;
    }
    let How::Frontier(min_units) = how else {
        // Shards always split at the frontier.
        return Ok(());
    };
    for n in [2u32, 3] {
        let mut union = Vec::new();
        let mut executions = 0;
        let mut blocked_sum = [0; 6];
        for i in 0..n {
            let r = explore_split(
                prog,
                model,
                &o,
                &split(2, Some((i, n)), How::Frontier(min_units)),
                true,
            );
            executions += r.report.stats.executions;
            for (sum, b) in blocked_sum.iter_mut().zip(blocked(&r.report)) {
                *sum += b;
            }
            if r.units != one.units {
                return Err(format!("shard {i}/{n}: {} units vs {}", r.units, one.units));
            }
            union.extend(r.traces);
        }
        if sorted(union.clone()) != want {
            return Err(format!(
                "shards of {n}: {} traces in all vs {} (duplicates or missing)",
                union.len(),
                want.len()
            ));
        }
        if executions != plain.stats.executions {
            return Err(format!(
                "shards of {n}: {executions} executions vs {}",
                plain.stats.executions
            ));
        }
        if blocked_sum != blocked(&plain) {
            return Err(format!(
                "shards of {n}: blocked {blocked_sum:?} in all vs {:?}",
                blocked(&plain)
            ));
        }
    }
    Ok(())
}

/// With stop-on-violation: the same verdict as the plain engine, and the counterexample
/// of one worker with the frontier whatever the number of workers, run after run.
fn check_stable(
    prog: &Program,
    model: ModelKind,
    algo: Algo,
    unroll: Option<u32>,
    how: How,
    repeat: usize,
) -> Result<(), String> {
    let o = opts(algo, unroll, true);
    let plain = fencer_dpor::explore(prog, model, &o);
    let one = explore_split(prog, model, &o, &split(1, None, how), false);
    if (plain.verdict == Verdict::Violation) != (one.report.verdict == Verdict::Violation) {
        return Err(format!(
            "verdict {:?} vs the plain engine's {:?}",
            one.report.verdict, plain.verdict
        ));
    }
    for _ in 0..repeat {
        for jobs in [2, 3] {
            let r = explore_split(prog, model, &o, &split(jobs, None, how), false);
            same_split(&format!("stop at a violation, --jobs {jobs}"), &one, &r)?;
        }
    }
    Ok(())
}

/// The exact split (Optimal-DPOR) is one worker's exploration: against the plain engine,
/// the same traces in the same order, the same statistics (no execution blocked by a sleep
/// set), final states and counterexample, for every number of workers; with and without
/// stop-on-violation. Returns how many units left by depth moves were taken by units at
/// the new depth.
fn check_exact(
    prog: &Program,
    model: ModelKind,
    unroll: Option<u32>,
    depth: Option<usize>,
) -> Result<u64, String> {
    let mut kept = 0;
    for stop in [false, true] {
        let o = opts(Algo::Optimal, unroll, stop);
        let (plain, traces) = explore_traces(prog, model, &o);
        // The leader going on alone after its first unit, or its third, explores on as
        // one worker does, whatever the units did meanwhile. With three workers, every
        // unit started before a depth move finishes and is kept, to be taken by the
        // units at the new depth.
        let runs = [
            (1, None, false),
            (2, None, false),
            (3, None, true),
            (2, Some(1), false),
            (2, Some(3), false),
        ];
        for (jobs, give_up, settle) in runs {
            let s = Split {
                give_up,
                settle,
                ..split(jobs, None, How::Exact(depth))
            };
            let r = explore_split(prog, model, &o, &s, true);
            kept += r.kept;
            let what = format!(
                "exact split, stop {stop}, --jobs {jobs}, alone after {give_up:?}, settle {settle}"
            );
            same_outcome(&what, &plain, &r.report)?;
            if r.traces != traces {
                return Err(format!("{what}: other traces or another order"));
            }
            let (x, y) = (&plain.stats, &r.report.stats);
            if (x.blocked, x.sleep_blocked, x.events) != (y.blocked, y.sleep_blocked, y.events) {
                return Err(format!(
                    "{what}: blocked {} sleep {:?} events {} vs {} {:?} {}",
                    y.blocked, y.sleep_blocked, y.events, x.blocked, x.sleep_blocked, x.events
                ));
            }
            if y.sleep_blocked != Some(0) {
                return Err(format!(
                    "{what}: {:?} blocked by sleep sets",
                    y.sleep_blocked
                ));
            }
            if r.report.counterexample != plain.counterexample {
                return Err(format!("{what}: another counterexample"));
            }
        }
    }
    // --max-executions stops where one worker stops, though units explore ahead.
    let n = fencer_dpor::explore(prog, model, &opts(Algo::Optimal, unroll, false))
        .stats
        .executions;
    for (max, give_up) in [
        (1, None),
        (n / 2 + 1, None),
        (n, None),
        (n / 2 + 1, Some(1)),
    ] {
        let o = Options {
            max_executions: Some(max),
            ..opts(Algo::Optimal, unroll, false)
        };
        let (plain, traces) = explore_traces(prog, model, &o);
        let s = Split {
            give_up,
            ..split(2, None, How::Exact(depth))
        };
        let r = explore_split(prog, model, &o, &s, true);
        let what = format!("exact split, --max-executions {max}, alone after {give_up:?}");
        same_outcome(&what, &plain, &r.report)?;
        let (x, y) = (&plain.stats, &r.report.stats);
        if r.traces != traces
            || (x.blocked, x.events) != (y.blocked, y.events)
            || plain.stopped_by != r.report.stopped_by
        {
            return Err(format!(
                "{what}: {} traces, blocked {}, events {}, stopped {:?} vs {} {} {} {:?}",
                r.traces.len(),
                y.blocked,
                y.events,
                r.report.stopped_by,
                traces.len(),
                x.blocked,
                x.events,
                plain.stopped_by
            ));
        }
    }
    Ok(kept)
}

fn random_program(seed: u64, kind: u64) -> (Program, Option<u32>) {
    match kind {
        0 => {
            let src = program(seed, &Shape::oracle(false));
            (fencer_text::parse_program("gen.fen", &src).unwrap(), None)
        }
        1 => {
            let src = program(seed, &Shape::oracle(true));
            let mut p = fencer_text::parse_program("gen.fen", &src).unwrap();
            if seed.is_multiple_of(2) {
                fencer_ir::spin::spin_assume(&mut p);
            }
            (p, Some(2))
        }
        2 => (fencer_testgen::heap_program(seed), None),
        3 => (fencer_testgen::threads_program(seed), None),
        _ => (fencer_testgen::mutex_word_program(seed), None),
    }
}

fn random(kind: u64) {
    let n = match kind {
        0 => cases(),
        1 => cases() / 4,
        _ => cases() / 2,
    };
    let mut failures = Vec::new();
    for seed in 0..n {
        let (prog, unroll) = random_program(seed, kind);
        for model in MODELS {
            // Each program is explored about twenty times per model: the ones with many
            // executions are the oracle test's.
            if !quick(&prog, model, unroll, 1500) {
                continue;
            }
            for algo in ALGOS {
                // The frontier at several depths: a few units (deep DPOR below), many;
                // the race-driven top at several depths, and where the engine puts it.
                let frontier = How::Frontier([2, 5, 24][(seed % 3) as usize]);
                let races = How::Races([Some(1), Some(3), Some(8), None][(seed % 4) as usize]);
                for how in [frontier, races] {
                    let r = check_all(&prog, model, algo, unroll, how)
                        .and_then(|()| check_stable(&prog, model, algo, unroll, how, 1));
                    if let Err(e) = r {
                        failures.push(format!(
                            "seed {seed} kind {kind} {model} {algo:?} {how:?}: {e}"
                        ));
                    }
                }
                if algo == Algo::Optimal {
                    let depth = [Some(1), Some(2), Some(4), Some(8), None][(seed % 5) as usize];
                    if let Err(e) = check_exact(&prog, model, unroll, depth).map(drop) {
                        failures.push(format!(
                            "seed {seed} kind {kind} {model} exact {depth:?}: {e}"
                        ));
                    }
                }
            }
        }
        if failures.len() >= 3 {
            break;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn random_programs() {
    random(0);
}

#[test]
fn random_programs_with_loops() {
    random(1);
}

#[test]
fn random_heap_programs() {
    random(2);
}

/// Spawns in several threads, thread ids asserted on and joined, some as constants.
#[test]
fn random_thread_id_programs() {
    random(3);
}

/// Mutexes that are also memory words: stores into them, hand-made locks, destroys,
/// frees of held heap mutexes.
#[test]
fn random_mutex_word_programs() {
    random(4);
}

/// Runs the plain engine on `prog` with an execution budget: whether it is quick enough to
/// be checked here (every split explores it several times).
fn quick(prog: &Program, model: ModelKind, unroll: Option<u32>, budget: u64) -> bool {
    let o = Options {
        max_executions: Some(budget),
        unroll,
        stop_on_violation: false,
        ..Options::default()
    };
    let r = fencer_dpor::explore(prog, model, &o);
    r.stopped_by.is_none() && r.stats.events <= 100 * budget
}

fn bench_programs(dir: &Path, ext: &str) -> Vec<(String, Program)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let prog = if ext == "fen" {
            let src = std::fs::read_to_string(&f).unwrap();
            fencer_text::parse_program(&name, &src).unwrap()
        } else {
            match fencer_c::load(&f, &fencer_c::CompileOptions::default(), ModelKind::Sc) {
                Ok(p) => p,
                Err(e) => panic!("{name}: {e}"),
            }
        };
        out.push((name, prog));
    }
    out
}

/// Programs with more complete executions than this are skipped (and named): every split
/// explores a program about ten times, and the workspace's tests must stay quick.
const BUDGET: u64 = 1500;

fn bench(dir: &Path, ext: &str) {
    let started = Instant::now();
    let mut skipped = Vec::new();
    let mut failures = Vec::new();
    let mut kept = 0;
    for (name, mut prog) in bench_programs(dir, ext) {
        fencer_ir::spin::spin_assume(&mut prog);
        for model in MODELS {
            // The larger programs are measured by `fencer bench`, not here.
            if !quick(&prog, model, None, BUDGET) {
                skipped.push(format!("{name} {model}"));
                continue;
            }
            for algo in ALGOS {
                // The real frontier under SC; a shallow one (more of the tree below
                // it) under every model.
                let units = if model == ModelKind::Sc {
                    fencer_dpor::UNITS
                } else {
                    7
                };
                for (all, stable) in [
                    (How::Frontier(units), How::Frontier(7)),
                    (How::Races(None), How::Races(Some(4))),
                ] {
                    let r = check_all(&prog, model, algo, None, all)
                        .and_then(|()| check_stable(&prog, model, algo, None, stable, 1));
                    if let Err(e) = r {
                        failures.push(format!("{name} {model} {algo:?} {all:?}: {e}"));
                    }
                }
                if algo == Algo::Optimal {
                    for depth in [None, Some(4)] {
                        match check_exact(&prog, model, None, depth) {
                            Ok(k) => kept += k,
                            Err(e) => failures.push(format!("{name} {model} exact {depth:?}: {e}")),
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "{}: skipped (over {BUDGET} executions or {} events): {}; {:.1} s",
        dir.display(),
        100 * BUDGET,
        skipped.join(", "),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("{}: {kept} kept units taken", dir.display());
    // Settled runs keep every unit started before a depth move: the programs' units
    // must have reached some of them, or the exactness above tested nothing of them.
    assert!(
        kept > 0,
        "no exact split took a unit kept across a depth move"
    );
}

#[test]
fn bench_fen() {
    bench(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/fen"),
        "fen",
    );
}

#[test]
fn shared_bench_c() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench/c");
    if !dir.is_dir() {
        eprintln!("skipped: {} is absent", dir.display());
        return;
    }
    bench(&dir, "c");
}

/// A split tree once missed a final state of this heap program under TSO and PSO (both
/// kinds of split; the frontier at depths 4 to 7 only). A thread's store through a pointer
/// to a freed object faulted; the sleep sets took the fault as dependent with every step
/// (`Access::Any`), the clocks as an access to that object only. So a sleeping `free` of
/// another object woke there without an edge from it, and became an initial of a later
/// reversal while asleep at its node: the reversal was dropped as the sleeping process's,
/// and the sibling subtree whose races would have brought it back was another unit's.
#[test]
fn heap_seed_583_is_exact_under_every_split() {
    let prog = fencer_testgen::heap_program(583);
    for model in MODELS {
        let o = opts(Algo::Optimal, None, false);
        let (plain, traces) = explore_traces(&prog, model, &o);
        let want = sorted(traces);
        let hows = [How::Races(None), How::Frontier(24), How::Frontier(100)];
        for how in hows {
            for jobs in [1, 2] {
                let r = explore_split(&prog, model, &o, &split(jobs, None, how), true);
                same_outcome(&format!("{model} {how:?} --jobs {jobs}"), &plain, &r.report).unwrap();
                assert_eq!(sorted(r.traces), want, "{model} {how:?} --jobs {jobs}");
            }
        }
        let mut union = Vec::new();
        for i in 0..3 {
            let r = explore_split(
                &prog,
                model,
                &o,
                &split(2, Some((i, 3)), How::Frontier(24)),
                true,
            );
            union.extend(r.traces);
        }
        assert_eq!(sorted(union), want, "{model}: shards of 3");
    }
}

/// A pointer used before its object is allocated: split trees find the order where it
/// faults, as one worker does (`fencer_testgen::future_object_program`).
#[test]
fn an_access_before_its_object_exists_is_found_under_every_split() {
    let prog = fencer_testgen::future_object_program();
    for model in MODELS {
        let o = opts(Algo::Optimal, None, false);
        let (plain, traces) = explore_traces(&prog, model, &o);
        assert_eq!(plain.verdict, Verdict::Violation, "{model}");
        let want = sorted(traces);
        for how in [How::Races(None), How::Frontier(1), How::Frontier(2)] {
            for jobs in [1, 2] {
                let r = explore_split(&prog, model, &o, &split(jobs, None, how), true);
                same_outcome(&format!("{model} {how:?} --jobs {jobs}"), &plain, &r.report).unwrap();
                assert_eq!(sorted(r.traces), want, "{model} {how:?} --jobs {jobs}");
            }
        }
    }
}
