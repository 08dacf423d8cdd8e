//! The one-worker engine: the entry points, the explorer's tables ([`Dpor`]), and what it
//! does around executions: limits, the shared execution count, the report.

use crate::hb::Hb;
use crate::kit::Kit;
use crate::options::Options;
use crate::pos::Pos;
use crate::races::Memo;
use crate::replay::{Cursor, Snapshot};
use crate::weak::{weak_mode, Judging, Weak};
use crate::{dynamic, exact, inputs, parallel, wut};
use fencer_ir::Program;
use fencer_machine::collect::Collector;
use fencer_machine::{Access, Event, NoObserver, Observer, State, Status, Step};
use fencer_memory::{MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Limit, Report};
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub fn explore(prog: &Program, model: ModelKind, opts: &Options) -> Report {
    run(prog, model, opts, false, &mut NoObserver).0
}

/// Explores like [`explore`], showing every execution to `obs`.
pub fn explore_observed(
    prog: &Program,
    model: ModelKind,
    opts: &Options,
    obs: &mut dyn Observer,
) -> Report {
    run(prog, model, opts, false, obs).0
}

/// Explores, and also returns the Shasha-Snir trace fingerprint of every complete
/// execution, in the order explored (for testing the engine against the reference).
pub fn explore_traces(prog: &Program, model: ModelKind, opts: &Options) -> (Report, Vec<u128>) {
    run(prog, model, opts, true, &mut NoObserver)
}

fn run(
    prog: &Program,
    model: ModelKind,
    opts: &Options,
    traces: bool,
    obs: &mut dyn Observer,
) -> (Report, Vec<u128>) {
    if opts.plan.is_none() && prog.has_inputs() {
        let sites = fencer_machine::input::plan_sites(prog, opts.input_values);
        return match model {
            ModelKind::Sc => inputs::explore::<Sc>(prog, opts, traces, obs, sites),
            ModelKind::Tso => inputs::explore::<Tso>(prog, opts, traces, obs, sites),
            ModelKind::Pso => inputs::explore::<Pso>(prog, opts, traces, obs, sites),
        };
    }
    match model {
        ModelKind::Sc => Dpor::<Sc>::new(prog, opts, traces, obs).run(),
        ModelKind::Tso => Dpor::<Tso>::new(prog, opts, traces, obs).run(),
        ModelKind::Pso => Dpor::<Pso>::new(prog, opts, traces, obs).run(),
    }
}

pub(crate) struct Dpor<'a, M> {
    pub(crate) prog: &'a Program,
    pub(crate) opts: &'a Options,
    pub(crate) col: Collector<'a>,
    pub(crate) hb: Hb,
    /// How many positions of `pos` belong to the current execution. Those past it are
    /// kept for their allocations: a position is reset in place when an execution gets
    /// there again, so the hot path allocates nothing per event.
    pub(crate) depth: usize,
    /// The next position's sleep set while it is computed.
    pub(crate) sleep_buf: Vec<(Step, Access)>,
    /// The races an event's record finds, kept for the allocation.
    pub(crate) found_buf: Vec<usize>,
    /// How weak initials are judged: by the current execution's kinds where every event's
    /// kind is the same wherever it runs (`kinds_stable`), else by simulation.
    pub(crate) weak: Weak,
    pub(crate) pos: Vec<Pos>,
    /// Positions after a step that ran alone, whose `Pos` was not reset (as `pos`, by
    /// position): they are empty, with nothing to explore, and readers skip them. A long
    /// tail run alone then writes one byte per event here instead of a `Pos`, and the
    /// backtracking scan reads that byte: on `bench/c/indexer16.c` the 8,000 `Pos` of
    /// the tail (96 bytes each) pushed the execution's working set out of L2.
    pub(crate) vacant: Vec<bool>,
    /// The steps of the current execution.
    pub(crate) schedule: Vec<Step>,
    /// Its events (for counterexamples).
    pub(crate) events: Vec<Event>,
    /// What each event accessed (for weak initials); kept across executions like the
    /// schedule, since a replayed prefix repeats its events.
    pub(crate) accs: Vec<Access>,
    pub(crate) enabled: Vec<Step>,
    /// Races of the current execution, for Optimal-DPOR to reverse once it has ended, in
    /// order of their second event; kept across executions like the schedule (a replayed
    /// prefix has the same races).
    pub(crate) pending: Vec<(usize, usize)>,
    /// Where the races of the current execution's new events start in `pending`.
    pub(crate) new_races: usize,
    /// What the last reversal of each race of `pending` showed (by index, with the race
    /// itself to check it is the same one; see `reverse_races`).
    pub(crate) settled: Vec<((usize, usize), Memo)>,
    /// The current execution replayed its first this many steps from the last one.
    pub(crate) replayed: usize,
    pub(crate) sleep_blocked: u64,
    pub(crate) races: u64,
    pub(crate) reversed: u64,
    /// Trace fingerprints of complete executions, when asked for.
    pub(crate) traces: Option<Vec<u128>>,
    pub(crate) obs: &'a mut dyn Observer,
    /// Positions before this one are not this engine's to explore (a frontier unit's
    /// prefix, or the fully expanded top of the tree): races whose reversal would go there
    /// are dropped (see `parallel.rs` for why that loses nothing).
    pub(crate) root: usize,
    /// Frontier enumeration (`parallel.rs`): positions before this depth are expanded
    /// fully (every enabled process that is not asleep), and every execution stops at it
    /// (or where it ends earlier), recording a unit instead of being judged.
    pub(crate) frontier: Option<usize>,
    pub(crate) units: Vec<parallel::Unit>,
    /// A unit's first execution: the prefix steps from this position on were taken first
    /// by this unit in the frontier's order, so their faults are reported as new steps'.
    pub(crate) fresh: usize,
    /// Parallel or sharded exploration: the limits and the cancellation all units share.
    pub(crate) shared: Option<&'a parallel::Shared>,
    /// This unit's index (with `shared`).
    pub(crate) unit: usize,
    /// A unit of a larger index than a violating one: abandoned, its result unused.
    pub(crate) cancelled: bool,
    /// Calls of `limit_hit` since the clock was last read: `--timeout` reads it once in
    /// `CLOCK_EVERY` calls, since a read per event (a call a step) cost more than a lone
    /// event's whole step (indexer16 under TSO: 2.73 s against 2.2 s without a timeout).
    clock_wait: u32,
    /// Complete executions not yet added to the workers' shared count (see `count`).
    uncounted: u64,
    /// Frontier enumeration: stop once this many units are known.
    pub(crate) unit_cap: usize,
    /// Frontier enumeration takes one path only: at each position above the frontier the
    /// step already in the backtrack set, else the first enabled process that is not
    /// asleep (the race-driven split extends a new branch of its top this way).
    pub(crate) thin: bool,
    /// Race-driven split (`dynamic.rs`): races whose reversal would go above the root are
    /// not dropped but collected here, as the position and the processes that can start
    /// the reversal (Source-DPOR's initials), for the top of the tree to reverse.
    pub(crate) above: Option<Vec<(usize, Vec<Step>)>>,
    /// Where they go, after every execution.
    pub(crate) sink: Option<&'a dyn dynamic::Sink>,
    /// The races sent there, by position: one whose processes include all of an earlier
    /// one's changes nothing at the top (that one's reversal puts one of them in the
    /// backtrack set there), so it is not sent.
    pub(crate) sent: Vec<Vec<Vec<Step>>>,
    /// The exact split's leader (`exact.rs`): executions stop at this depth, where the
    /// unit below is explored elsewhere and its result adopted.
    pub(crate) lead: Option<usize>,
    /// The leader's execution stopped at its depth (not where it ended).
    pub(crate) reached: bool,
    /// The exact split's leader: moves its depth up while units prove small.
    pub(crate) shallower: Option<exact::Shallower>,
    /// An exact split's unit: units finished at a deeper depth before the leader moved
    /// up, taken where this unit's executions reach them (see [`exact::Kept`]); the one
    /// the current execution reached, and the events taken so.
    pub(crate) kept: Option<Arc<exact::Kept>>,
    pub(crate) kept_at: Option<Arc<exact::KeptUnit>>,
    pub(crate) kept_events: u64,
    /// How many kept units it took (with those they took in turn).
    pub(crate) kept_units: u64,
    /// The exact split's leader: the depth of the last unit it took.
    pub(crate) lead_last: usize,
    /// Where the leader gets the units below its depth explored.
    pub(crate) lead_src: Option<&'a dyn exact::Units>,
    /// An exact split's unit: the reversals that go above the root (not redundant there)
    /// are recorded here, in order, for the leader to insert.
    pub(crate) record: Option<Vec<Arc<exact::RecSeq>>>,
    pub(crate) rec_scratch: Box<exact::Scratch>,
    /// The exact split's leader: the tables its predictions leave for the next one.
    pub(crate) scout_kit: std::cell::Cell<Option<Box<Kit>>>,
    /// The exact split's leader: the units' insertions made at each position since it
    /// took its step. A unit: the reversals it recorded at each position above its root.
    pub(crate) inserted: Vec<Vec<Arc<exact::RecSeq>>>,
    /// An exact split's unit stops when this is set (it was mispredicted).
    pub(crate) cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// Where an exact split's unit sends them, after every execution (so that the leader
    /// can insert them, and foresee more units, while the unit is explored).
    pub(crate) rec_sink: Option<&'a dyn exact::RecSink>,
    /// An exact split's unit, first execution: the replayed prefix's races are found (the
    /// leader took those steps; the unit reverses their races after each execution).
    pub(crate) prefix_races: bool,
    /// A thread that runs alone from the current position on: every other thread has
    /// finished with empty buffers and happens before it, the stores pending in its own
    /// buffers race with nothing that ran, and nothing sleeps or waits in a wakeup tree
    /// here. Its loads, stores and read-modify-writes then race with nothing (see
    /// [`Hb::record_alone`]) and nothing can be explored instead of them, so they are
    /// executed without the enabled set, sleep sets, access prediction or race
    /// detection: the long tail of a `main` that checks its results after the joins
    /// costs little more than interpreting it.
    pub(crate) alone: Option<u32>,
    /// Snapshots of the current execution at some of its positions, deepest last (see
    /// [`Snapshot`]); and spent ones, kept for their allocations.
    pub(crate) snaps: Vec<Snapshot>,
    pub(crate) snap_pool: Vec<Snapshot>,
    /// Snapshots are off where the initial state faults (its fault is reported by every
    /// execution that starts from it).
    pub(crate) snap_ok: bool,
    /// The last execution's state, kept for its allocations: the next execution resumes
    /// into it, copying only what differs from the snapshot.
    pub(crate) last: Option<State>,
    /// The program's initial state and its status, made once: an execution that starts
    /// from it copies it into `last` (a unit's first executions have no snapshot yet, and
    /// building it allocated every object afresh).
    pub(crate) initial: Option<(State, Status)>,
    /// Where simulations run sequences (see [`Simulated`]).
    ///
    /// [`Simulated`]: crate::weak::Simulated
    pub(crate) scratch: std::cell::RefCell<Option<State>>,
    /// A node state of an insertion that ended, kept for its allocations.
    pub(crate) spare: std::cell::RefCell<Option<State>>,
    pub(crate) judging: std::cell::RefCell<Judging>,
    /// The path of an insertion's [`Lazy`], kept for its allocation.
    ///
    /// [`Lazy`]: crate::weak::Lazy
    pub(crate) lazy_path: Vec<Step>,
    /// The machine state at some position of the current execution, moved forward as the
    /// races are reversed in order of their first event (see [`Cursor`]).
    pub(crate) cursor: std::cell::RefCell<Cursor>,
    /// What `reverse_race` judges a reversal by, kept for their allocations: the
    /// processes that sleep or were explored at the race, and how each starts it.
    pub(crate) judged: Vec<(Step, Access)>,
    pub(crate) starts: Vec<Option<wut::Start>>,
    /// The races `reverse_races` reverses, and the sequence of the one at hand.
    pub(crate) order: Vec<usize>,
    pub(crate) seq: Vec<usize>,
    /// A copy of the sequence for `wut::insert`, which consumes it.
    pub(crate) ins: Vec<usize>,
    /// Emptied wakeup-tree lists, for insertions to reuse.
    pub(crate) wut_spare: wut::Spare,
    _m: std::marker::PhantomData<M>,
}

/// `limit_hit` reads the clock once in this many calls (see `Dpor::clock_wait`).
const CLOCK_EVERY: u32 = 64;

impl<'a, M: MemoryModel> Dpor<'a, M> {
    pub(crate) fn new(
        prog: &'a Program,
        opts: &'a Options,
        traces: bool,
        obs: &'a mut dyn Observer,
    ) -> Self {
        Dpor {
            prog,
            opts,
            col: Collector::new(prog),
            hb: Hb::new(prog),
            weak: weak_mode(prog, M::KIND),
            depth: 0,
            sleep_buf: Vec::new(),
            found_buf: Vec::new(),
            pos: Vec::new(),
            vacant: Vec::new(),
            schedule: Vec::new(),
            events: Vec::new(),
            accs: Vec::new(),
            enabled: Vec::new(),
            pending: Vec::new(),
            new_races: 0,
            settled: Vec::new(),
            replayed: 0,
            sleep_blocked: 0,
            races: 0,
            reversed: 0,
            traces: traces.then(Vec::new),
            obs,
            root: 0,
            frontier: None,
            units: Vec::new(),
            fresh: usize::MAX,
            shared: None,
            unit: 0,
            cancelled: false,
            // The first call reads it: a split tree's unit may make fewer calls than
            // that in all, and a timeout must still stop it.
            clock_wait: CLOCK_EVERY - 1,
            uncounted: 0,
            unit_cap: usize::MAX,
            thin: false,
            above: None,
            sink: None,
            sent: Vec::new(),
            lead: None,
            reached: false,
            shallower: None,
            lead_last: 0,
            lead_src: None,
            kept: None,
            kept_at: None,
            kept_events: 0,
            kept_units: 0,
            record: None,
            rec_scratch: Box::default(),
            scout_kit: std::cell::Cell::new(None),
            rec_sink: None,
            cancel: None,
            inserted: Vec::new(),
            prefix_races: false,
            alone: None,
            snaps: Vec::new(),
            snap_pool: Vec::new(),
            snap_ok: true,
            scratch: std::cell::RefCell::new(None),
            judged: Vec::new(),
            starts: Vec::new(),
            order: Vec::new(),
            seq: Vec::new(),
            ins: Vec::new(),
            wut_spare: wut::Spare::default(),
            spare: std::cell::RefCell::new(None),
            judging: Default::default(),
            lazy_path: Vec::new(),
            last: None,
            initial: None,
            cursor: std::cell::RefCell::new(Cursor::default()),
            _m: std::marker::PhantomData,
        }
    }

    pub(crate) fn limit_hit(&mut self) -> bool {
        if self.col.stopped.is_some() || self.cancelled {
            return true;
        }
        if let Some(sh) = self.shared {
            // An exact split's unit has a flag of its own (it always has `shared`): one
            // worker's engine, without `shared`, reads neither.
            if sh.cancelled(self.unit) || self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                self.cancelled = true;
                return true;
            }
            if let Some(l) = sh.stopped() {
                self.col.stopped = Some(l);
                return true;
            }
        }
        if let Some(t) = self.opts.timeout {
            self.clock_wait += 1;
            if self.clock_wait >= CLOCK_EVERY {
                self.clock_wait = 0;
                if self.col.start.elapsed() >= t {
                    self.stop(Limit::Timeout);
                    return true;
                }
            }
        }
        if let Some(m) = self.opts.max_events {
            if self.shared.is_none() && self.col.stats.events >= m {
                self.stop(Limit::MaxEvents);
                return true;
            }
        }
        if let Some(m) = self.opts.max_executions {
            // An exact split's unit counts its own: the leader takes units in its order.
            let n = match self.shared {
                Some(sh) if self.record.is_none() => sh.executions(),
                _ => self.col.stats.executions,
            };
            if n >= m {
                self.stop(Limit::MaxExecutions);
                return true;
            }
        }
        false
    }

    pub(crate) fn stop(&mut self, l: Limit) {
        if let Some(sh) = self.shared {
            // An exact split's unit at its own execution limit stops alone.
            if self.record.is_none() || l != Limit::MaxExecutions {
                sh.stop(l.clone());
            }
        }
        self.col.stopped = Some(l);
    }

    fn run(mut self) -> (Report, Vec<u128>) {
        self.explore(0);
        self.finish()
    }

    /// Counts a complete execution with the other workers; false if that would pass
    /// `--max-executions`. Only that limit needs the count exact at every execution: a
    /// counter both workers write after every execution costs each of them a cache miss
    /// there (and on the flags `limit_hit` reads), so without it the count goes up in
    /// batches, which only the progress display sees.
    pub(crate) fn count(&mut self, sh: &parallel::Shared) -> bool {
        const BATCH: u64 = 512;
        let n = match self.opts.max_executions {
            Some(max) => match sh.ticket(1, Some(max)) {
                Some(n) => n,
                None => return false,
            },
            None => {
                self.uncounted += 1;
                if self.uncounted < BATCH {
                    return true;
                }
                sh.ticket(std::mem::take(&mut self.uncounted), None)
                    .expect("no limit to pass")
            }
        };
        if let Some(p) = &self.opts.progress {
            p.fetch_max(n, Ordering::Relaxed);
        }
        true
    }

    /// Adds the executions `count` has not passed on yet, when a unit is over.
    pub(crate) fn flush_count(&mut self) {
        if let (Some(sh), n @ 1..) = (self.shared, std::mem::take(&mut self.uncounted)) {
            let total = sh.ticket(n, None).expect("no limit to pass");
            if let Some(p) = &self.opts.progress {
                p.fetch_max(total, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn finish(self) -> (Report, Vec<u128>) {
        let mut report = self.col.finish("dpor", M::KIND.name());
        report.algo = Some(self.opts.algo.name().to_string());
        report.stats.sleep_blocked = Some(self.sleep_blocked);
        report.stats.races = Some(self.races);
        report.stats.reversed = Some(self.reversed);
        (report, self.traces.unwrap_or_default())
    }
}
