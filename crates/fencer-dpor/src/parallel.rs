//! Parallel (`--jobs N`) and sharded (`--shard I/N`) exploration: the tree is split
//! statically at a deterministic frontier.
//!
//! 1. The top of the tree is expanded fully with sleep sets alone: at a node, every
//!    enabled process that is not asleep is a child, in enabled order, and a child's sleep
//!    set is what sleeps or was explored at the node and commutes with the step taken.
//!    That is a sound reduction by itself (sleep sets never lose a trace) and never
//!    completes one trace twice.
//! 2. The nodes at the frontier depth `D`, and the executions that end above it, are the
//!    *units*, numbered in the order of that depth-first expansion. `D` is the smallest
//!    depth with at least [`UNITS`] units: it depends on the program (and the model and
//!    options), never on the number of workers or shards, so every split sees the same
//!    units.
//! 3. Each unit is explored by the ordinary engine from its prefix, with its sleep set at
//!    the root. A race whose reversal would go above the root is dropped: at a node above
//!    it every enabled process is explored or asleep, so whatever process starts the
//!    reversal (an initial of `notdep(i).j`, enabled before `i`) was explored there (its
//!    subtree is another unit's, or several) or sleeps there (its traces are explored from
//!    where it was put to sleep). What the engine's proof needs of a node (the processes
//!    explored there are a source set for what is not asleep) holds trivially for a fully
//!    expanded one.
//!
//! So the complete executions are one per trace, as without a frontier; only the
//! executions blocked by sleep sets differ in number (the top has no wakeup trees). Each
//! unit's exploration is deterministic and its result is kept apart; the report is their
//! sum in unit order, so it does not depend on the number of workers or on timing. With
//! stop-on-violation, a violation in unit `u` cancels the units after `u` and the units
//! before it still finish: the report is that of units `0..=u`, the counterexample the
//! first of unit order, which is what one worker reports.

use crate::{Dpor, Kit, Options, Weak};
use fencer_ir::Program;
use fencer_machine::collect::{Collector, FinalState};
use fencer_machine::{NoObserver, Step};
use fencer_memory::{MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Counterexample, Limit, Report};
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The frontier is the first depth with at least this many units. Units differ a lot in
/// size (the first ones, whose sleep sets are small, are the largest), so there must be
/// many more of them than workers for the last ones to finish together.
pub const UNITS: usize = 256;

/// Deepest frontier: a program whose top stays this narrow has nothing to split.
const MAX_DEPTH: usize = 1 << 16;

/// How the exploration is split.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Explore only one shard of the units.
    pub shard: Option<Shard>,
    /// The frontier is the first depth with at least this many units ([`UNITS`]; tests
    /// use small numbers to put the frontier at every depth of small programs).
    pub min_units: usize,
    /// Without a shard, split at the races instead (`dynamic.rs`): the top of the tree
    /// is Source-DPOR, whose branches are the units, down to this depth (`None`: chosen
    /// from the first execution's races).
    pub race_driven: Option<Option<usize>>,
    /// With Optimal-DPOR and without a shard, the exact split instead (`exact.rs`): one
    /// worker's exploration, its subtrees below the top's depth explored ahead by the
    /// others. Off: the race-driven split, whose units may block executions.
    pub exact: bool,
    /// The exact split's leader goes on alone after this many units whatever the timing
    /// (tests); `None`: when the split is measured to cost more than it gains.
    pub give_up: Option<usize>,
    /// The exact split's leader, before it moves its depth, waits for the units workers
    /// have started to finish, so that they are kept for the units at the new depth
    /// (tests: kept units are then taken whatever the timing).
    pub settle: bool,
}

impl Split {
    pub fn jobs(jobs: usize) -> Split {
        Split {
            jobs,
            shard: None,
            min_units: UNITS,
            race_driven: Some(None),
            exact: true,
            give_up: None,
            settle: false,
        }
    }
}

/// Shard `index` of `count` (0-based): the units whose index is `index` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// How a split run divided the tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A static, fully expanded top (`--shard`).
    Frontier,
    /// A Source-DPOR top fed by the units' races (`dynamic.rs`).
    Races,
    /// One worker's exploration, the subtrees below a depth explored ahead (`exact.rs`).
    Exact,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Frontier => "frontier",
            Method::Races => "races",
            Method::Exact => "exact",
        }
    }
}

pub struct SplitResult {
    pub report: Report,
    /// Trace fingerprints of the complete executions, in unit order (when asked for).
    pub traces: Vec<u128>,
    /// Units of the whole tree (every shard's).
    pub units: usize,
    /// The frontier depth (with `race_driven`, the depth of the top).
    pub depth: usize,
    /// The exact split: the depth of the last unit, if units that proved small moved it
    /// up from `depth`.
    pub last_depth: Option<usize>,
    /// How the tree was split.
    pub method: Method,
    /// The exact split: how many of its units a worker had explored before the leader
    /// needed them.
    pub ahead: usize,
    /// The exact split: how many units the leader had taken when it went on alone, the
    /// split costing more than it gained (it is one worker's engine from there on).
    pub fell_back: Option<usize>,
    /// The unit whose counterexample is reported.
    pub violation_unit: Option<usize>,
    /// Events executed in each unit this run explored (in unit order; 0 for the others):
    /// how the work is spread over the units.
    pub unit_events: Vec<u64>,
    /// The exact split: the events workers explored in units the leader did not take
    /// (thrown away), and those of the units it took.
    pub dropped: Option<(u64, u64)>,
    /// The exact split: units finished at a depth the leader then moved up from, taken
    /// by units at the new depth instead of being explored again.
    pub kept: u64,
}

/// The speedup `jobs` workers would get on idle cores if a unit's time were proportional
/// to its events, taking units in index order (as the pool does): total work over the
/// time the busiest worker takes.
pub fn predicted_speedup(unit_events: &[u64], jobs: usize) -> f64 {
    let mut free = vec![0u64; jobs.max(1)];
    for &e in unit_events {
        // The next unit goes to the worker that is free first.
        let w = (0..free.len())
            .min_by_key(|&w| free[w])
            .expect("one worker");
        // Every unit also replays its prefix and sets up an engine.
        free[w] += e + 1;
    }
    let total: u64 = unit_events.iter().map(|&e| e + 1).sum();
    total as f64 / free.into_iter().max().unwrap_or(1).max(1) as f64
}

/// One part of the split tree: a schedule prefix and the sleep set after it.
#[derive(Clone, Debug)]
pub(crate) struct Unit {
    pub prefix: Vec<Step>,
    /// The sleep set at the unit's root, with what each process's next event accesses
    /// there (for weak initials).
    pub sleep: Vec<(Step, fencer_machine::Access)>,
    /// The prefix's steps from this position on were first taken by this unit.
    pub fresh: usize,
    /// The unit stops at the frontier (not where its execution ended).
    pub open: bool,
}

/// What all workers share: limits, the execution count and cancellation.
/// A cache line of its own: workers write it often, and must not take the flags that
/// every execution reads out of the other worker's cache each time.
#[repr(align(128))]
struct Line<T>(T);

pub(crate) struct Shared {
    pub start: Instant,
    executions: Line<AtomicU64>,
    /// 0: running; 1: timeout; 2: --max-executions.
    stop: AtomicU8,
    /// Units of a larger index are abandoned (a violation was found in this one).
    cancel_above: AtomicUsize,
    /// Every unit still running is abandoned (the race-driven split's commit is over).
    halted: AtomicBool,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            start: Instant::now(),
            executions: Line(AtomicU64::new(0)),
            stop: AtomicU8::new(0),
            cancel_above: AtomicUsize::new(usize::MAX),
            halted: AtomicBool::new(false),
        }
    }

    pub fn cancelled(&self, unit: usize) -> bool {
        unit > self.cancel_above.load(Ordering::Relaxed) || self.halted.load(Ordering::Relaxed)
    }

    pub fn halt(&self) {
        self.halted.store(true, Ordering::Relaxed);
    }

    pub fn stopped(&self) -> Option<Limit> {
        match self.stop.load(Ordering::Relaxed) {
            0 => None,
            1 => Some(Limit::Timeout),
            _ => Some(Limit::MaxExecutions),
        }
    }

    pub fn stop(&self, l: Limit) {
        let code = if l == Limit::Timeout { 1 } else { 2 };
        let _ = self
            .stop
            .compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Stops every worker if `--timeout` has passed (after a probe, which stops there
    /// without saying so).
    pub fn timed_out(&self, opts: &Options) {
        if opts.timeout.is_some_and(|t| self.start.elapsed() >= t) {
            self.stop(Limit::Timeout);
        }
    }

    pub fn executions(&self) -> u64 {
        self.executions.0.load(Ordering::Relaxed)
    }

    /// Counts `k` more complete executions, unless that would pass `max`: the new total.
    pub fn ticket(&self, k: u64, max: Option<u64>) -> Option<u64> {
        let n = self.executions.0.fetch_add(k, Ordering::Relaxed);
        match max {
            Some(m) if n + k > m => None,
            _ => Some(n + k),
        }
    }
}

/// Explores with the tree split at the frontier: by `split.jobs` workers, and only the
/// units of `split.shard` when given. `traces`: also return the complete executions'
/// trace fingerprints.
pub fn explore_split(
    prog: &Program,
    model: ModelKind,
    opts: &Options,
    split: &Split,
    traces: bool,
) -> SplitResult {
    match model {
        ModelKind::Sc => split_run::<Sc>(prog, opts, split, traces),
        ModelKind::Tso => split_run::<Tso>(prog, opts, split, traces),
        ModelKind::Pso => split_run::<Pso>(prog, opts, split, traces),
    }
}

/// `opts` without limits or progress: for the enumerations that lay out a split tree,
/// which judge nothing.
pub(crate) fn unlimited(opts: &Options) -> Options {
    Options {
        timeout: None,
        max_executions: None,
        progress: None,
        ..opts.clone()
    }
}

/// `opts` for a probe that lays out a split tree (which judges nothing): no execution
/// limit, but `--timeout` (counted from `start`): a program whose first execution never
/// ends (threads created without bound) must still stop there.
pub(crate) fn probing(opts: &Options) -> Options {
    Options {
        timeout: opts.timeout,
        ..unlimited(opts)
    }
}

/// The units at frontier `depth`, in depth-first order; at most about `cap` of them.
fn enumerate<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    start: Instant,
    depth: usize,
    cap: usize,
) -> Vec<Unit> {
    let eopts = probing(opts);
    let mut obs = NoObserver;
    let mut d = Dpor::<M>::new(prog, &eopts, false, &mut obs);
    d.col.start = start;
    // Weak initials' commuting half rests on the whole tree being Optimal-DPOR's; a
    // split tree's top is sleep sets alone (see `kinds_stable`).
    d.weak = Weak::Initials;
    d.frontier = Some(depth);
    d.root = depth;
    d.unit_cap = cap;
    d.explore(0);
    d.units
}

/// The frontier: the smallest depth with at least `min` units (the number of units
/// only grows with the depth: a unit that ends is still one deeper), or the depth where
/// every execution has ended.
fn frontier<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    start: Instant,
    min: usize,
) -> (Vec<Unit>, usize) {
    let enough = |units: &[Unit]| units.len() >= min;
    let closed = |units: &[Unit]| units.iter().all(|u| !u.open);
    // Doubling, then bisection, probing with the enumeration stopped at `min` units.
    let mut lo = 0; // known: fewer than `min` units, some still open
    let mut hi = 1;
    loop {
        let units = enumerate::<M>(prog, opts, start, hi, min);
        if enough(&units) {
            break;
        }
        if closed(&units) || hi >= MAX_DEPTH {
            return (units, hi);
        }
        lo = hi;
        hi *= 2;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let units = enumerate::<M>(prog, opts, start, mid, min);
        if enough(&units) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    (enumerate::<M>(prog, opts, start, hi, usize::MAX), hi)
}

/// What exploring one unit found, kept apart until the units are summed in order.
#[derive(Clone)]
pub(crate) struct UnitOut {
    pub stats: fencer_report::Stats,
    final_states: BTreeMap<Vec<i64>, FinalState>,
    pub cex: Option<Counterexample>,
    pub stopped: Option<Limit>,
    sleep_blocked: u64,
    races: u64,
    reversed: u64,
    traces: Vec<u128>,
    /// An exact split's unit: the kept units it took (see `exact::Kept`).
    pub kept: u64,
}

/// Explores one unit; with `sink`, the races above its root go there (the race-driven
/// split) instead of being dropped. With the tables in `kit`, which it leaves there for
/// the worker's next unit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn explore_unit<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    unit: &Unit,
    index: usize,
    shared: &Shared,
    traces: bool,
    sink: Option<&dyn crate::dynamic::Sink>,
    kit: &mut Kit,
) -> Option<UnitOut> {
    let mut obs = NoObserver;
    let mut d = Dpor::<M>::new(prog, opts, traces, &mut obs);
    d.use_kit(std::mem::take(kit));
    if sink.is_some() {
        d.above = Some(Vec::new());
        d.sink = sink;
    }
    if M::KIND == ModelKind::Sc && (!unit.prefix.is_empty() || sink.is_some()) {
        // Under SC, units with weak initials restricted to initials block no execution
        // on the benchmarks, and they do not re-reverse a prefix's races after each new
        // suffix (the engine's weak initials cost a tenth more work on fib_bench_longer-1).
        d.weak = Weak::Initials;
    }
    // Otherwise weak initials as on one worker, except that the processes asleep at the
    // root (which the top put there, from other units' subtrees) count only as initials
    // below it (`Dpor::inherited`).
    d.col.start = shared.start;
    d.shared = Some(shared);
    d.unit = index;
    let root = unit.prefix.len();
    d.root = root;
    d.schedule.extend_from_slice(&unit.prefix);
    d.empty_positions(root + 1);
    d.depth = root + 1;
    d.pos[root].sleep = unit.sleep.clone();
    d.fresh = unit.fresh;
    d.explore(root);
    *kit = d.take_kit();
    unit_out(d)
}

/// What a unit's engine found, once it has explored (`None`: it was cancelled).
pub(crate) fn unit_out<M: MemoryModel>(mut d: Dpor<'_, M>) -> Option<UnitOut> {
    d.flush_count();
    if d.cancelled {
        return None;
    }
    let Dpor {
        col,
        sleep_blocked,
        races,
        reversed,
        traces,
        kept_units,
        ..
    } = d;
    Some(UnitOut {
        stats: col.stats,
        final_states: col.final_states,
        cex: col.cex,
        stopped: col.stopped,
        sleep_blocked,
        races,
        reversed,
        traces: traces.unwrap_or_default(),
        kept: kept_units,
    })
}

/// Running totals of units' results added in order (see [`UnitOut::add_to`]).
pub(crate) struct Totals<'t, 'p> {
    pub col: &'t mut Collector<'p>,
    pub sleep_blocked: &'t mut u64,
    pub races: &'t mut u64,
    pub reversed: &'t mut u64,
    pub traces: &'t mut Vec<u128>,
}

impl UnitOut {
    /// Adds this unit's result to the totals of the units before it: statistics add up,
    /// a final state keeps the first unit's schedule, the first counterexample and the
    /// first limit are kept.
    pub(crate) fn add_to(self, t: Totals<'_, '_>) {
        let col = t.col;
        let st = &self.stats;
        col.stats.executions += st.executions;
        col.stats.blocked += st.blocked;
        col.stats.assume_blocked += st.assume_blocked;
        col.stats.waits_forever += st.waits_forever;
        col.stats.depth_cut += st.depth_cut;
        col.stats.unroll_cut += st.unroll_cut;
        col.stats.recursion_cut += st.recursion_cut;
        col.stats.local_loop_cut += st.local_loop_cut;
        col.stats.events += st.events;
        for (k, f) in self.final_states {
            match col.final_states.entry(k) {
                Entry::Vacant(e) => {
                    e.insert(f);
                }
                Entry::Occupied(mut e) => e.get_mut().executions += f.executions,
            }
        }
        if col.cex.is_none() {
            col.cex = self.cex;
        }
        if col.stopped.is_none() {
            col.stopped = self.stopped;
        }
        *t.sleep_blocked += self.sleep_blocked;
        *t.races += self.races;
        *t.reversed += self.reversed;
        t.traces.extend(self.traces);
    }
}

fn split_run<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    split: &Split,
    traces: bool,
) -> SplitResult {
    let shared = Shared::new();
    if let (None, Some(top), true, crate::Algo::Optimal) =
        (split.shard, split.race_driven, split.exact, opts.algo)
    {
        let r = crate::exact::explore::<M>(prog, opts, split, top, &shared, traces);
        return SplitResult {
            report: r.report,
            traces: r.traces,
            units: r.units,
            depth: r.depth,
            last_depth: Some(r.last_depth).filter(|&l| l != r.depth && r.units > 0),
            method: Method::Exact,
            ahead: r.ahead,
            fell_back: r.fell_back,
            // The leader reports the counterexample one worker does, whatever the unit.
            violation_unit: None,
            unit_events: Vec::new(),
            dropped: Some((r.dropped_events, r.unit_events)),
            kept: r.kept_units,
        };
    }
    if let (None, Some(top)) = (split.shard, split.race_driven) {
        let (outs, units, depth) =
            crate::dynamic::explore::<M>(prog, opts, split.jobs.max(1), top, &shared, traces);
        let unit_events = outs.iter().map(|(_, o)| o.stats.events).collect();
        let (report, traces, violation) = sum_units::<M>(prog, opts, &shared, outs);
        return SplitResult {
            report,
            traces,
            units,
            depth,
            last_depth: None,
            method: Method::Races,
            ahead: 0,
            fell_back: None,
            violation_unit: violation,
            unit_events,
            dropped: None,
            kept: 0,
        };
    }
    let (units, depth) = frontier::<M>(prog, opts, shared.start, split.min_units.max(1));
    shared.timed_out(opts);
    let mine: Vec<usize> = match split.shard {
        Some(s) => (0..units.len())
            .filter(|&u| u % s.count as usize == s.index as usize)
            .collect(),
        None => (0..units.len()).collect(),
    };
    let results: Mutex<Vec<Option<UnitOut>>> = Mutex::new((0..units.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let work = || {
        let mut kit = Kit::default();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&u) = mine.get(k) else { break };
            if shared.cancelled(u) || shared.stopped().is_some() {
                break;
            }
            let unit = &units[u];
            let Some(out) = explore_unit::<M>(prog, opts, unit, u, &shared, traces, None, &mut kit)
            else {
                continue;
            };
            if opts.stop_on_violation && out.cex.is_some() {
                shared.cancel_above.fetch_min(u, Ordering::Relaxed);
            }
            results.lock().expect("no worker panics holding it")[u] = Some(out);
        }
    };
    let jobs = split.jobs.max(1).min(mine.len().max(1));
    if jobs == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(work);
            }
        });
    }
    let results = results.into_inner().expect("no worker panicked");
    // The sum, in unit order, of the units up to the first violation (with
    // stop-on-violation): what one worker would have explored.
    let last = if opts.stop_on_violation {
        shared.cancel_above.load(Ordering::Relaxed)
    } else {
        usize::MAX
    };
    let mut unit_events = vec![0; units.len()];
    let outs: Vec<(usize, UnitOut)> = results
        .into_iter()
        .enumerate()
        .take_while(|&(u, _)| u <= last)
        .filter_map(|(u, o)| o.map(|o| (u, o)))
        .inspect(|(u, o)| unit_events[*u] = o.stats.events)
        .collect();
    let (report, all_traces, violation_unit) = sum_units::<M>(prog, opts, &shared, outs);
    SplitResult {
        report,
        traces: all_traces,
        units: units.len(),
        depth,
        last_depth: None,
        method: Method::Frontier,
        ahead: 0,
        fell_back: None,
        violation_unit,
        unit_events,
        dropped: None,
        kept: 0,
    }
}

/// The report of units' results summed in the order given: the first counterexample is
/// the one reported (with its unit), limits and statistics add up.
pub(crate) fn sum_units<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    shared: &Shared,
    outs: Vec<(usize, UnitOut)>,
) -> (Report, Vec<u128>, Option<usize>) {
    let mut col = Collector::new(prog);
    col.start = shared.start;
    let (mut sleep_blocked, mut races, mut reversed) = (0, 0, 0);
    let mut all_traces = Vec::new();
    let mut violation_unit = None;
    for (u, out) in outs {
        if col.cex.is_none() && out.cex.is_some() {
            violation_unit = Some(u);
        }
        out.add_to(Totals {
            col: &mut col,
            sleep_blocked: &mut sleep_blocked,
            races: &mut races,
            reversed: &mut reversed,
            traces: &mut all_traces,
        });
    }
    if col.stopped.is_none() {
        col.stopped = shared.stopped();
    }
    let mut report = col.finish("dpor", M::KIND.name());
    report.algo = Some(opts.algo.name().to_string());
    report.stats.sleep_blocked = Some(sleep_blocked);
    report.stats.races = Some(races);
    report.stats.reversed = Some(reversed);
    (report, all_traces, violation_unit)
}
