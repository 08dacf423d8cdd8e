//! Stateless model checking with dynamic partial-order reduction on chronological traces
//! (Abdulla, Aronis, Atig, Jonsson, Leonardsson, Sagonas: "Stateless model checking for TSO
//! and PSO"), with Source-DPOR and sleep sets (Abdulla, Aronis, Jonsson, Sagonas: "Optimal
//! dynamic partial order reduction").
//!
//! Processes are the real threads and the auxiliary update threads of their store buffers
//! (`upd(p)` under TSO, `upd(p,x)` under PSO); a process is named by the [`Step`] that
//! schedules it. The happens-before relation of the chronological trace is computed on the
//! fly with vector clocks (the paper's Appendix B): a load that reads its own buffer is
//! attached to the buffer entry and ordered with memory only when the entry's update
//! happens. The races are the cross-process `src`, `cf` and `uu` edges (and, for mutexes,
//! consecutive acquisitions); each is reversed by adding a backtrack point.
//!
//! Exploration is stateless: after each execution the engine backtracks to the deepest
//! position with work left and replays the schedule from the initial state.

mod dynamic;
mod exact;
mod hb;
mod parallel;
mod wut;

pub use parallel::{explore_split, predicted_speedup, Method, Shard, Split, SplitResult, UNITS};

use fencer_ir::Op;
use fencer_ir::Program;
use fencer_machine::collect::Collector;
use fencer_machine::{dependent, Access, Event, EventKind, State, Status, Step};
use fencer_memory::{Drain, MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Limit, Report};
use hb::Hb;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Optimal-DPOR: sleep sets and wakeup trees (races reversed by whole event
    /// sequences). One complete execution per trace, and none blocked by a sleep set
    /// where [`optimal_exact`] holds; elsewhere some executions are blocked.
    Optimal,
    /// Source-DPOR with sleep sets (races reversed by one process each): also one
    /// complete execution per trace, with executions its sleep sets block.
    Source,
}

impl Algo {
    pub fn name(self) -> &'static str {
        match self {
            Algo::Optimal => "optimal",
            Algo::Source => "source",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub algo: Algo,
    pub timeout: Option<Duration>,
    pub max_executions: Option<u64>,
    /// Cut executions that take any backward jump more than this many times in one entry
    /// of its loop.
    pub unroll: Option<u32>,
    /// Most visible events one thread may execute in one execution: a thread that reaches
    /// it is cut while the others go on (the result is then bounded). Executions longer
    /// than 64 times this (only programs that spawn threads without bound get there) are
    /// cut whole.
    pub max_depth: usize,
    /// Stop at the first violation (the normal use); `false` explores everything, so that
    /// the final states can be compared with the reference explorer.
    pub stop_on_violation: bool,
    /// Kept up to date with the number of complete executions, for a progress display
    /// running in another thread (one relaxed store per execution).
    pub progress: Option<Arc<AtomicU64>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algo: Algo::Optimal,
            timeout: None,
            max_executions: None,
            unroll: None,
            max_depth: 100_000,
            stop_on_violation: true,
            progress: None,
        }
    }
}

pub fn explore(prog: &Program, model: ModelKind, opts: &Options) -> Report {
    run(prog, model, opts, false, &mut NoObserver).0
}

pub use fencer_machine::{NoObserver, Observer};

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
    match model {
        ModelKind::Sc => Dpor::<Sc>::new(prog, opts, traces, obs).run(),
        ModelKind::Tso => Dpor::<Tso>::new(prog, opts, traces, obs).run(),
        ModelKind::Pso => Dpor::<Pso>::new(prog, opts, traces, obs).run(),
    }
}

/// What the engine knows about one position of the current execution: the state before
/// its event.
#[derive(Clone, Default)]
struct Pos {
    /// Source-DPOR: processes to explore from here.
    backtrack: Vec<Step>,
    /// Optimal-DPOR: the wakeup tree of sequences to explore from here.
    wut: Vec<wut::Node>,
    /// Processes already explored from here, with what their event accesses here (for
    /// weak initials).
    done: Vec<(Step, Access)>,
    /// Processes whose next event need not be explored from here, with the same.
    sleep: Vec<(Step, Access)>,
}

impl Pos {
    /// Makes this the position after a new step (keeping the vectors' allocations, and
    /// the old tree's in `spare`).
    fn reset(&mut self, sleep: &[(Step, Access)], wut: Vec<wut::Node>, spare: &mut wut::Spare) {
        self.backtrack.clear();
        self.done.clear();
        self.sleep.clear();
        self.sleep.extend_from_slice(sleep);
        // A new tree that is empty and never held anything (a leaf's): the old one's
        // list takes what insertion puts here.
        if wut.capacity() == 0 {
            self.wut.clear();
        } else {
            spare.give(std::mem::replace(&mut self.wut, wut));
        }
    }

    fn asleep(&self, s: Step) -> bool {
        self.sleep.iter().any(|&(q, _)| q == s)
    }

    fn explored(&self, s: Step) -> bool {
        self.done.iter().any(|&(q, _)| q == s)
    }

    /// Whether something is left to explore from here.
    fn pending(&self, algo: Algo) -> bool {
        match algo {
            Algo::Source => self
                .backtrack
                .iter()
                .any(|&s| !self.explored(s) && !self.asleep(s)),
            Algo::Optimal => !self.wut.is_empty(),
        }
    }
}

struct Dpor<'a, M> {
    prog: &'a Program,
    opts: &'a Options,
    col: Collector<'a>,
    hb: Hb,
    /// How many positions of `pos` belong to the current execution. Those past it are
    /// kept for their allocations: a position is reset in place when an execution gets
    /// there again, so the hot path allocates nothing per event.
    depth: usize,
    /// The next position's sleep set while it is computed.
    sleep_buf: Vec<(Step, Access)>,
    /// The races an event's record finds, kept for the allocation.
    found_buf: Vec<usize>,
    /// How weak initials are judged: by the current execution's kinds where every event's
    /// kind is the same wherever it runs (`kinds_stable`), else by simulation.
    weak: Weak,
    pos: Vec<Pos>,
    /// Positions after a step that ran alone, whose `Pos` was not reset (as `pos`, by
    /// position): they are empty, with nothing to explore, and readers skip them. A long
    /// tail run alone then writes one byte per event here instead of a `Pos`, and the
    /// backtracking scan reads that byte: on `bench/c/indexer16.c` the 8,000 `Pos` of
    /// the tail (96 bytes each) pushed the execution's working set out of L2.
    vacant: Vec<bool>,
    /// The steps of the current execution.
    schedule: Vec<Step>,
    /// Its events (for counterexamples).
    events: Vec<Event>,
    /// What each event accessed (for weak initials); kept across executions like the
    /// schedule, since a replayed prefix repeats its events.
    accs: Vec<Access>,
    enabled: Vec<Step>,
    /// Races of the current execution, for Optimal-DPOR to reverse once it has ended, in
    /// order of their second event; kept across executions like the schedule (a replayed
    /// prefix has the same races).
    pending: Vec<(usize, usize)>,
    /// Where the races of the current execution's new events start in `pending`.
    new_races: usize,
    /// What the last reversal of each race of `pending` showed (by index, with the race
    /// itself to check it is the same one; see `reverse_races`).
    settled: Vec<((usize, usize), Memo)>,
    /// The current execution replayed its first this many steps from the last one.
    replayed: usize,
    sleep_blocked: u64,
    races: u64,
    reversed: u64,
    /// Trace fingerprints of complete executions, when asked for.
    traces: Option<Vec<u128>>,
    obs: &'a mut dyn Observer,
    /// Positions before this one are not this engine's to explore (a frontier unit's
    /// prefix, or the fully expanded top of the tree): races whose reversal would go there
    /// are dropped (see `parallel.rs` for why that loses nothing).
    root: usize,
    /// Frontier enumeration (`parallel.rs`): positions before this depth are expanded
    /// fully (every enabled process that is not asleep), and every execution stops at it
    /// (or where it ends earlier), recording a unit instead of being judged.
    frontier: Option<usize>,
    units: Vec<parallel::Unit>,
    /// A unit's first execution: the prefix steps from this position on were taken first
    /// by this unit in the frontier's order, so their faults are reported as new steps'.
    fresh: usize,
    /// Parallel or sharded exploration: the limits and the cancellation all units share.
    shared: Option<&'a parallel::Shared>,
    /// This unit's index (with `shared`).
    unit: usize,
    /// A unit of a larger index than a violating one: abandoned, its result unused.
    cancelled: bool,
    /// Calls of `limit_hit` since the clock was last read: `--timeout` reads it once in
    /// `CLOCK_EVERY` calls, since a read per event (a call a step) cost more than a lone
    /// event's whole step (indexer16 under TSO: 2.73 s against 2.2 s without a timeout).
    clock_wait: u32,
    /// Complete executions not yet added to the workers' shared count (see `count`).
    uncounted: u64,
    /// Frontier enumeration: stop once this many units are known.
    unit_cap: usize,
    /// Frontier enumeration takes one path only: at each position above the frontier the
    /// step already in the backtrack set, else the first enabled process that is not
    /// asleep (the race-driven split extends a new branch of its top this way).
    thin: bool,
    /// Race-driven split (`dynamic.rs`): races whose reversal would go above the root are
    /// not dropped but collected here, as the position and the processes that can start
    /// the reversal (Source-DPOR's initials), for the top of the tree to reverse.
    above: Option<Vec<(usize, Vec<Step>)>>,
    /// Where they go, after every execution.
    sink: Option<&'a dyn dynamic::Sink>,
    /// The races sent there, by position: one whose processes include all of an earlier
    /// one's changes nothing at the top (that one's reversal puts one of them in the
    /// backtrack set there), so it is not sent.
    sent: Vec<Vec<Vec<Step>>>,
    /// The exact split's leader (`exact.rs`): executions stop at this depth, where the
    /// unit below is explored elsewhere and its result adopted.
    lead: Option<usize>,
    /// The leader's execution stopped at its depth (not where it ended).
    reached: bool,
    /// The exact split's leader: moves its depth up while units prove small.
    shallower: Option<exact::Shallower>,
    /// An exact split's unit: units finished at a deeper depth before the leader moved
    /// up, taken where this unit's executions reach them (see [`exact::Kept`]); the one
    /// the current execution reached, and the events taken so.
    kept: Option<Arc<exact::Kept>>,
    kept_at: Option<Arc<exact::KeptUnit>>,
    kept_events: u64,
    /// How many kept units it took (with those they took in turn).
    kept_units: u64,
    /// The exact split's leader: the depth of the last unit it took.
    lead_last: usize,
    /// Where the leader gets the units below its depth explored.
    lead_src: Option<&'a dyn exact::Units>,
    /// An exact split's unit: the reversals that go above the root (not redundant there)
    /// are recorded here, in order, for the leader to insert.
    record: Option<Vec<Arc<exact::RecSeq>>>,
    rec_scratch: Box<exact::Scratch>,
    /// The exact split's leader: the tables its predictions leave for the next one.
    scout_kit: std::cell::Cell<Option<Box<Kit>>>,
    /// The exact split's leader: the units' insertions made at each position since it
    /// took its step. A unit: the reversals it recorded at each position above its root.
    inserted: Vec<Vec<Arc<exact::RecSeq>>>,
    /// An exact split's unit stops when this is set (it was mispredicted).
    cancel: Option<&'a std::sync::atomic::AtomicBool>,
    /// Where an exact split's unit sends them, after every execution (so that the leader
    /// can insert them, and foresee more units, while the unit is explored).
    rec_sink: Option<&'a dyn exact::RecSink>,
    /// An exact split's unit, first execution: the replayed prefix's races are found (the
    /// leader took those steps; the unit reverses their races after each execution).
    prefix_races: bool,
    /// A thread that runs alone from the current position on: every other thread has
    /// finished with empty buffers and happens before it, the stores pending in its own
    /// buffers race with nothing that ran, and nothing sleeps or waits in a wakeup tree
    /// here. Its loads, stores and read-modify-writes then race with nothing (see
    /// [`Hb::record_alone`]) and nothing can be explored instead of them, so they are
    /// executed without the enabled set, sleep sets, access prediction or race
    /// detection: the long tail of a `main` that checks its results after the joins
    /// costs little more than interpreting it.
    alone: Option<u32>,
    /// Snapshots of the current execution at some of its positions, deepest last (see
    /// [`Snapshot`]); and spent ones, kept for their allocations.
    snaps: Vec<Snapshot>,
    snap_pool: Vec<Snapshot>,
    /// Snapshots are off where the initial state faults (its fault is reported by every
    /// execution that starts from it).
    snap_ok: bool,
    /// The last execution's state, kept for its allocations: the next execution resumes
    /// into it, copying only what differs from the snapshot.
    last: Option<State>,
    /// The program's initial state and its status, made once: an execution that starts
    /// from it copies it into `last` (a unit's first executions have no snapshot yet, and
    /// building it allocated every object afresh).
    initial: Option<(State, Status)>,
    /// Where simulations run sequences (see [`Simulated`]).
    scratch: std::cell::RefCell<Option<State>>,
    /// A node state of an insertion that ended, kept for its allocations.
    spare: std::cell::RefCell<Option<State>>,
    judging: std::cell::RefCell<Judging>,
    /// The path of an insertion's [`Lazy`], kept for its allocation.
    lazy_path: Vec<Step>,
    /// The machine state at some position of the current execution, moved forward as the
    /// races are reversed in order of their first event (see [`Cursor`]).
    cursor: std::cell::RefCell<Cursor>,
    /// What `reverse_race` judges a reversal by, kept for their allocations: the
    /// processes that sleep or were explored at the race, and how each starts it.
    judged: Vec<(Step, Access)>,
    starts: Vec<Option<wut::Start>>,
    /// The races `reverse_races` reverses, and the sequence of the one at hand.
    order: Vec<usize>,
    seq: Vec<usize>,
    /// A copy of the sequence for `wut::insert`, which consumes it.
    ins: Vec<usize>,
    /// Emptied wakeup-tree lists, for insertions to reuse.
    wut_spare: wut::Spare,
    _m: std::marker::PhantomData<M>,
}

/// The machine and the happens-before relation after the first `sched.len()` steps of an
/// execution: an execution whose schedule starts with those steps resumes here instead of
/// replaying them from the initial state. Exploration backtracks depth-first, so the
/// snapshots valid for the next execution are a stack: those at or above the backtrack
/// point. One is taken at the end of a replay that ran [`SNAP_GAP`] steps or more past the
/// snapshot it started from, so an execution replays fewer than that many steps after the
/// first return to a point, and there are at most [`SNAP_CAP`] of them (memory: that many
/// machine states and per-location tables, besides the events they share with the
/// execution).
struct Snapshot {
    sched: Vec<Step>,
    state: State,
    hb: hb::Saved,
}

const SNAP_GAP: usize = 8;
const SNAP_CAP: usize = 64;

/// `limit_hit` reads the clock once in this many calls (see `Dpor::clock_wait`).
const CLOCK_EVERY: u32 = 64;

/// How wakeup-tree insertion and the redundancy test judge a process that has no event in
/// the sequence: whether it commutes with all of it (the paper's weak initials).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Weak {
    /// Events keep their kinds wherever they run ([`kinds_stable`]): by what each event
    /// of the sequence accessed in the current execution.
    Stable,
    /// By running the sequence from the machine state at the node, judging each pair as
    /// the sleep sets will judge it there (kinds where the events run).
    Simulate,
    /// Never: weak initials restricted to initials (a split tree's units).
    Initials,
}

/// What the last reversal of a race showed, for the executions that keep the race (those
/// that replay past its `j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Memo {
    /// Not reversed yet.
    Open,
    /// Redundant after every suffix: a process that sleeps or was explored before `i` is
    /// an initial of `notdep(i).j` by an event at or before `j`, as the clocks (or a run
    /// of events before `j`) show; all of that is in the prefix.
    Settled,
    /// The last position (before `j`'s) of the sequence reversed: if it is in the
    /// replayed prefix and the new suffix adds no event to `notdep(i)`, the sequence is
    /// the same and so is its reversal.
    Tail(usize),
}

/// The current execution's events as the wakeup-tree insertion sees them, where kinds are
/// stable.
struct Current<'e, M> {
    hb: &'e Hb,
    stable: bool,
    accs: &'e [Access],
    /// The race reversed: the racing event at `j` is moved to the end of the sequence,
    /// before the event at `i`.
    i: usize,
    j: usize,
    _m: std::marker::PhantomData<M>,
}

impl<M: MemoryModel> Current<'_, M> {
    /// Whether `p`'s next event, accessing `acc`, commutes with every event of `w` by the
    /// kinds they had in the current execution (only where those are stable).
    fn commutes(&self, p: Step, acc: Access, w: &[usize]) -> bool {
        self.stable
            && w.iter()
                .all(|&k| !dependent::<M>((p, acc), (self.hb.step(k), self.accs[k])))
    }
}

impl<M: MemoryModel> wut::Events for Current<'_, M> {
    type Ctx = ();
    fn step(&self, k: usize) -> Step {
        self.hb.step(k)
    }
    fn access(&self, k: usize) -> Access {
        self.accs[k]
    }
    fn weak_initials(
        &self,
        _: &(),
        w: &[usize],
        ps: &[(Step, Access)],
        out: &mut Vec<Option<wut::Start>>,
    ) {
        out.clear();
        out.extend(ps.iter().map(|&(p, acc)| {
            wut::initial_by(
                w,
                p,
                |k| self.hb.step(k),
                |a, b| self.hb.before_in_reversal((self.i, self.j), a, b),
                || self.commutes(p, acc, w),
            )
        }));
    }
    fn advance(&self, _: &mut (), _: Step) {}
}

/// The current execution's events as insertion sees them where kinds can change: a
/// process commutes with a sequence if, running the sequence from the machine state at the
/// node, each of its events is independent of the process's next event *in the state
/// where that event runs*, both judged by what they do there (a CAS that fails there only
/// reads; a load forwarded there touches no memory). That is the test the sleep sets apply
/// step by step when the sequence is explored, so insertion, the redundancy test and the
/// sleep sets all see one dependence relation. A node that could not be run is judged as
/// commuting with nothing, which only inserts more.
///
/// Most judgements need no run (the clocks show an initial), and a run needs the machine
/// state before `i`: so the state of a node is made only when a judgement there needs it
/// ([`Lazy`]), from the state before `i`, which is made from a cursor that moves forward
/// over the current execution as the races are reversed in order of `i`, or from the
/// deepest snapshot on the way.
struct Simulated<'e, M> {
    prog: &'e Program,
    opts: &'e Options,
    /// Where sequences are run: a state kept across runs, so that cloning the node's
    /// state into it reuses its allocations.
    scratch: &'e std::cell::RefCell<Option<State>>,
    spare: &'e std::cell::RefCell<Option<State>>,
    judging: &'e std::cell::RefCell<Judging>,
    cursor: &'e std::cell::RefCell<Cursor>,
    snaps: &'e [Snapshot],
    schedule: &'e [Step],
    hb: &'e Hb,
    accs: &'e [Access],
    i: usize,
    j: usize,
    _m: std::marker::PhantomData<M>,
}

/// A wakeup-tree node below position `i`, as the steps from `i` to it; its machine state
/// is made when a judgement there first needs it, and then brought down the path only when
/// a judgement further down needs it (most of a descent needs no run, and stepping every
/// node on the way cost more than the runs' copies). `state` is that state and how many
/// steps of `path` it has taken (`None` in it: a node that cannot be run, a step on the
/// way not enabled). At `i` itself the state is the cursor's, copied into the scratch
/// state without allocating.
#[derive(Default)]
struct Lazy {
    path: Vec<Step>,
    state: std::cell::RefCell<Option<(Option<State>, usize)>>,
}

impl Lazy {
    /// The state at the node, made from `base` (the state at the tree's root) or brought
    /// down to the node now if it was not yet.
    fn state<M: MemoryModel>(
        &self,
        prog: &Program,
        base: impl FnOnce() -> State,
    ) -> Option<std::cell::Ref<'_, State>> {
        {
            let mut slot = self.state.borrow_mut();
            let (state, at) = slot.get_or_insert_with(|| (Some(base()), 0));
            while *at < self.path.len() {
                let Some(st) = state else { break };
                let p = self.path[*at];
                if !st.step_enabled::<M>(prog, p) {
                    *state = None;
                    break;
                }
                take::<M>(prog, st, p);
                *at += 1;
            }
        }
        std::cell::Ref::filter_map(self.state.borrow(), |slot| {
            slot.as_ref().and_then(|(state, _)| state.as_ref())
        })
        .ok()
    }

    /// The tree's root, with `path` (emptied) for the steps down from it.
    fn on(mut path: Vec<Step>) -> Lazy {
        path.clear();
        Lazy {
            path,
            state: Default::default(),
        }
    }

    /// Keeps the state of the node in `spare`, for the next insertion's allocations, and
    /// gives back the path's.
    fn recycle(self, spare: &std::cell::RefCell<Option<State>>) -> Vec<Step> {
        if let Some((Some(st), _)) = self.state.into_inner() {
            *spare.borrow_mut() = Some(st);
        }
        self.path
    }
}

/// An emptied vector, with its allocation.
fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}

/// The tables an engine leaves for the next one on the same thread: an exact split's
/// worker explores unit after unit, and building each unit's tables afresh (positions,
/// events, clocks, machine snapshots) went through the allocator's slow paths, 7% of the
/// Treiber stack's units' time. Only allocations pass; what they hold is cleared or, for
/// the clocks, reset by the first execution.
#[derive(Default)]
pub(crate) struct Kit {
    hb: Option<Hb>,
    pos: Vec<Pos>,
    vacant: Vec<bool>,
    schedule: Vec<Step>,
    events: Vec<Event>,
    accs: Vec<Access>,
    enabled: Vec<Step>,
    pending: Vec<(usize, usize)>,
    settled: Vec<((usize, usize), Memo)>,
    snaps: Vec<Snapshot>,
    scratch: Option<State>,
    spare: Option<State>,
    last: Option<State>,
    initial: Option<(State, Status)>,
    cursor: Cursor,
    rec_scratch: Box<exact::Scratch>,
    wut_spare: wut::Spare,
}

/// The machine state before a position of the current execution, for simulations: moved
/// forward step by step while the races are reversed in order of their first event, or
/// refilled from the deepest snapshot on the way (or the initial state) where that is
/// nearer. The states keep their allocations across executions.
#[derive(Default)]
struct Cursor {
    /// Where `state` is, if it is for the current execution.
    at: Option<usize>,
    state: Option<State>,
    initial: Option<State>,
}

/// A snapshot is copied in at about the cost of this many steps.
const COPY_STEPS: usize = 4;

impl Cursor {
    /// Brings the cursor to position `i` of the execution with schedule `schedule`.
    fn seek<M: MemoryModel>(
        &mut self,
        prog: &Program,
        opts: &Options,
        snaps: &[Snapshot],
        schedule: &[Step],
        i: usize,
    ) -> &State {
        let snap = deepest_snapshot(snaps, schedule, i);
        let from = snap.map_or(0, |s| s.sched.len());
        let mut at = match (self.at, &mut self.state) {
            (Some(at), Some(_)) if at <= i && at + COPY_STEPS >= from => at,
            (_, state) => {
                let src = match snap {
                    Some(s) => &s.state,
                    None => self.initial.get_or_insert_with(|| {
                        let (mut state, status) = initial_state(prog, opts);
                        if let Status::Fault(f) = status {
                            state.threads[f.thread as usize].faulted = true;
                        }
                        state
                    }),
                };
                copy_into(state, src);
                from
            }
        };
        let state = self.state.as_mut().expect("a state");
        while at < i {
            take::<M>(prog, state, schedule[at]);
            at += 1;
        }
        self.at = Some(at);
        state
    }
}

fn deepest_snapshot<'s>(
    snaps: &'s [Snapshot],
    schedule: &[Step],
    i: usize,
) -> Option<&'s Snapshot> {
    snaps.iter().rev().find(|s| {
        let at = s.sched.len();
        at <= i && s.sched[..] == schedule[..at]
    })
}

/// The program's initial state under `opts`' bounds, and whether it faults already.
fn initial_state(prog: &Program, opts: &Options) -> (State, Status) {
    let (unroll, max_events) = bounds(opts);
    State::initial_limited(prog, unroll, max_events)
}

/// `--unroll` and `--max-depth` as the machine state keeps them.
fn bounds(opts: &Options) -> (u32, u32) {
    (
        opts.unroll.unwrap_or(u32::MAX),
        opts.max_depth.min(u32::MAX as usize) as u32,
    )
}

/// Whether taking `s`, which accesses `sa`, leaves what `p`'s next event accesses (`pa`)
/// as it was. A thread's next access depends on its own registers and frames, on the
/// objects it points into (alive or freed, their sizes), on the value and state of the cell
/// a CAS, a mutex operation or a read-modify-write of uninitialised memory reads (whether
/// it succeeds or faults), on its own buffers (a forwarded load) and on
/// how many threads there are (a join). A step of another thread that only reads memory,
/// waits, or touches its own buffer changes none of those (what follows it locally
/// touches that thread only); one that writes a cell (a store, an update, a
/// read-modify-write) changes only that cell's value. An update's access is its buffer's
/// front, which its thread's stores can change: always worked out again.
fn keeps_access(s: Step, sa: Access, p: Step, pa: Access) -> bool {
    let Step::Thread(t) = p else {
        return false;
    };
    if t == fencer_machine::family(s) {
        return false;
    }
    match sa {
        Access::Read(_)
        | Access::RmwRead(_)
        | Access::MutexRead(_)
        | Access::Join(_)
        | Access::Local
        | Access::Buffered(_) => true,
        Access::Write(l) | Access::Rmw(l) => !matches!(
            pa,
            Access::Rmw(x)
                | Access::RmwRead(x)
                | Access::Mutex(x)
                | Access::MutexRead(x)
                | Access::Faulted(x)
                if x == l
        ),
        _ => false,
    }
}

/// Checks, in release builds too, that a step taken from a wakeup tree or a backtrack set
/// (planned in another execution) is enabled at depth `d`: running a step the machine has
/// not enabled would explore an execution the program cannot take, and report on it.
/// (Steps picked from the enabled set need no check.)
fn planned_enabled(enabled: &[Step], step: Step, d: usize) {
    assert!(
        enabled.contains(&step),
        "a planned step is not enabled: {step:?} at depth {d}; enabled {enabled:?}"
    );
}

/// What of its thread's buffers a fault of `step`, just run to `state`, waited for (the
/// thread stays at the instruction); the hb relation reads that of other events from the
/// events themselves.
fn waited<M: MemoryModel>(prog: &Program, state: &State, step: Step) -> Drain {
    match step {
        Step::Thread(t) => state.waits::<M>(prog, t),
        Step::Update(..) => Drain::Nothing,
    }
}

/// Takes `step` as a replay does: a faulting thread stops, the others go on.
fn take<M: MemoryModel>(prog: &Program, state: &mut State, step: Step) {
    let (_, status) = state.step::<M>(prog, step);
    if let Status::Fault(f) = status {
        state.threads[f.thread as usize].faulted = true;
    }
}

/// What judging weak initials by running a sequence works in, kept across judgements for
/// the allocations (an insertion judges at every node it passes).
#[derive(Default)]
pub(crate) struct Judging {
    /// The processes of `ps` not yet judged.
    left: Vec<usize>,
    /// What each process's next event accesses, kept while the steps of `w` cannot
    /// change it (see `keeps_access`): most of `w` are loads and other threads' buffered
    /// stores, and working the access out again each step costs an address resolution.
    accs: Vec<Option<Access>>,
}

/// Runs `w` (whose events are processes `step_of(k)`) from `state` for the processes
/// `bufs.left` of `ps`, judging weak initials as [`Simulated::judge`] says.
#[allow(clippy::too_many_arguments)]
fn run_judged<M: MemoryModel>(
    prog: &Program,
    state: &mut State,
    w: &[usize],
    step_of: impl Fn(usize) -> Step,
    ps: &[(Step, Access)],
    bufs: &mut Judging,
    any: bool,
    out: &mut [Option<wut::Start>],
) {
    let Judging { left, accs } = bufs;
    accs.clear();
    accs.resize(ps.len(), None);
    for (at, &k) in w.iter().enumerate() {
        let s = step_of(k);
        let before = left.len();
        left.retain(|&n| {
            if ps[n].0 == s {
                out[n] = Some(wut::Start::Initial(at));
                false
            } else {
                true
            }
        });
        if left.is_empty() || (any && left.len() < before) || !state.step_enabled::<M>(prog, s) {
            return;
        }
        let sa = state.next_access::<M>(prog, s);
        left.retain(|&n| {
            let p = ps[n].0;
            let pa = *accs[n].get_or_insert_with(|| state.next_access::<M>(prog, p));
            debug_assert_eq!(pa, state.next_access::<M>(prog, p));
            !dependent::<M>((p, pa), (s, sa))
        });
        take::<M>(prog, state, s);
        for &n in left.iter() {
            if let Some(pa) = accs[n] {
                if !keeps_access(s, sa, ps[n].0, pa) {
                    accs[n] = None;
                }
            }
        }
    }
    for &n in left.iter() {
        out[n] = Some(wut::Start::Commutes);
    }
}

impl<M: MemoryModel> Simulated<'_, M> {
    /// Weak initials of `w` among `ps` at the node whose state is `state`: `w` runs from
    /// there, once for all of them, until each process's own event, each event judged
    /// against the process's next event with `dependent` in the state where it runs; the
    /// process starts `w` if none of them is dependent. Where the current execution's
    /// clocks see no predecessor of the process's event in `w`, none is there: those
    /// events keep the values they read, and so their kinds, wherever `w` puts them (no
    /// need to run `w`). Where they see one, the run decides: an event may do something
    /// else where `w` puts it (a load forwarded from its thread's buffer instead of
    /// reading memory no longer precedes another thread's write to that location), and
    /// then the clocks see a predecessor the sleep sets do not, and a branch they would
    /// block gets in. Where `w` cannot run as it stands (a step not enabled), or the node
    /// could not be run, the processes left are not counted. With `any`, it stops at the
    /// first weak initial found (the others are left uncounted).
    fn judge(
        &self,
        ctx: &Lazy,
        w: &[usize],
        ps: &[(Step, Access)],
        any: bool,
        out: &mut Vec<Option<wut::Start>>,
    ) {
        out.clear();
        out.resize(ps.len(), None);
        let mut bufs = self.judging.borrow_mut();
        let left = &mut bufs.left;
        left.clear();
        for (n, &(p, _)) in ps.iter().enumerate() {
            match w.iter().position(|&k| self.hb.step(k) == p) {
                Some(at)
                    if !w[..at]
                        .iter()
                        .any(|&a| self.hb.before_in_reversal((self.i, self.j), a, w[at])) =>
                {
                    out[n] = Some(wut::Start::Initial(at));
                    if any {
                        return;
                    }
                }
                _ => left.push(n),
            }
        }
        if left.is_empty() {
            return;
        }
        if ctx.path.is_empty() {
            // At `i` itself: `w` runs on the cursor's state, which is then spent (it is
            // mostly refilled from a snapshot for the next race anyway).
            let mut cursor = self.cursor.borrow_mut();
            cursor.seek::<M>(self.prog, self.opts, self.snaps, self.schedule, self.i);
            cursor.at = None;
            let state = cursor.state.as_mut().expect("a state");
            self.run(state, w, ps, &mut bufs, any, out);
            return;
        }
        let Some(src) = ctx.state::<M>(self.prog, || self.base()) else {
            return;
        };
        let mut slot = self.scratch.borrow_mut();
        let state = copy_into(&mut slot, &src);
        drop(src);
        self.run(state, w, ps, &mut bufs, any, out);
    }

    /// Runs `w` from `state` for the processes `bufs.left` of `ps` (see
    /// [`Simulated::judge`]).
    fn run(
        &self,
        state: &mut State,
        w: &[usize],
        ps: &[(Step, Access)],
        bufs: &mut Judging,
        any: bool,
        out: &mut [Option<wut::Start>],
    ) {
        run_judged::<M>(self.prog, state, w, |k| self.hb.step(k), ps, bufs, any, out);
    }

    /// The machine state before `i` (the cursor is left there).
    fn base(&self) -> State {
        let mut cursor = self.cursor.borrow_mut();
        let src = cursor.seek::<M>(self.prog, self.opts, self.snaps, self.schedule, self.i);
        copy_of(self.spare, src)
    }
}

/// A copy of `src`, in the allocations of the state kept in `spare` if there is one.
fn copy_of(spare: &std::cell::RefCell<Option<State>>, src: &State) -> State {
    let mut slot = spare.borrow_mut().take();
    copy_into(&mut slot, src);
    slot.expect("just filled")
}

/// Makes `slot` a copy of `src`, in its state's allocations if it holds one.
fn copy_into<'s>(slot: &'s mut Option<State>, src: &State) -> &'s mut State {
    match slot {
        Some(st) => {
            st.clone_from(src);
            st
        }
        None => slot.insert(src.clone()),
    }
}

impl<M: MemoryModel> wut::Events for Simulated<'_, M> {
    type Ctx = Lazy;
    fn step(&self, k: usize) -> Step {
        self.hb.step(k)
    }
    fn access(&self, k: usize) -> Access {
        self.accs[k]
    }
    fn weak_initials(
        &self,
        ctx: &Lazy,
        w: &[usize],
        ps: &[(Step, Access)],
        out: &mut Vec<Option<wut::Start>>,
    ) {
        self.judge(ctx, w, ps, false, out);
    }
    fn advance(&self, ctx: &mut Lazy, p: Step) {
        ctx.path.push(p);
    }
}

impl<'a, M: MemoryModel> Dpor<'a, M> {
    fn new(prog: &'a Program, opts: &'a Options, traces: bool, obs: &'a mut dyn Observer) -> Self {
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

    fn limit_hit(&mut self) -> bool {
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

    fn stop(&mut self, l: Limit) {
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

    /// Explores from the current schedule's first `replay` steps until nothing is left
    /// (at positions from `root` on), a limit stops it, or a violation does.
    fn explore(&mut self, mut replay: usize) {
        loop {
            self.execute(replay);
            self.fresh = usize::MAX;
            self.prefix_races = false;
            // The leader of an exact split stopped at its depth: the unit below is
            // explored elsewhere, and it reverses this execution's races too.
            let adopted = std::mem::take(&mut self.reached);
            if adopted {
                if self.kept_at.is_some() {
                    self.adopt_kept();
                } else {
                    self.adopt();
                }
            }
            self.send_above();
            if let Some(sink) = self.rec_sink {
                sink.serve(self.unit);
            }
            if self.shared.is_none() {
                if let Some(p) = &self.opts.progress {
                    p.store(self.col.stats.executions, Ordering::Relaxed);
                }
            }
            if self.limit_hit() || (self.opts.stop_on_violation && self.col.cex.is_some()) {
                break;
            }
            if self.frontier.is_some() && self.units.len() >= self.unit_cap {
                break;
            }
            if self.opts.algo == Algo::Optimal && !adopted {
                self.reverse_races();
            }
            match self.backtrack_point() {
                Some(d) => {
                    if let Some(v) = self.inserted.get_mut(d..) {
                        v.iter_mut().for_each(Vec::clear);
                    }
                    if let Some(lead) = self.lead {
                        if let Some(n) = self.shallower.as_mut().and_then(|s| s.moved(lead, d)) {
                            self.lead = Some(n);
                            if let Some(src) = self.lead_src {
                                src.redepth();
                            }
                        }
                    }
                    self.depth = d + 1;
                    self.schedule.truncate(d);
                    replay = d;
                }
                None => break,
            }
        }
    }

    /// The deepest position with something left to explore.
    fn backtrack_point(&self) -> Option<usize> {
        let algo = self.opts.algo;
        let full = self.frontier.unwrap_or(0);
        (0..self.depth).rev().find(|&d| {
            let p = &self.pos[d];
            if self.vacant[d] {
                false
            } else if d < full {
                p.backtrack.iter().any(|&s| !p.explored(s) && !p.asleep(s))
            } else {
                p.pending(algo)
            }
        })
    }

    /// Collects race `(i, j)`, whose reversal goes above the root, for the top of a
    /// race-driven split.
    fn race_above(&mut self, i: usize, j: usize) {
        let init = self.hb.initials(i, j);
        if init.is_empty() {
            return;
        }
        if self.sent.len() <= i {
            self.sent.resize_with(i + 1, Vec::new);
        }
        let sent = &mut self.sent[i];
        if sent.iter().any(|s| s.iter().all(|q| init.contains(q))) {
            return;
        }
        sent.push(init.clone());
        if let Some(a) = &mut self.above {
            a.push((i, init));
        }
    }

    /// Hands the races collected for the top of a race-driven split to it.
    fn send_above(&mut self) {
        if let (Some(above), Some(sink)) = (&mut self.above, self.sink) {
            if !above.is_empty() {
                sink.races(self.unit, above);
                above.clear();
            }
        }
        if let (Some(recs), Some(sink)) = (&mut self.record, self.rec_sink) {
            if !recs.is_empty() {
                sink.recs(self.unit, recs);
            }
        }
    }

    /// Counts a complete execution with the other workers; false if that would pass
    /// `--max-executions`. Only that limit needs the count exact at every execution: a
    /// counter both workers write after every execution costs each of them a cache miss
    /// there (and on the flags `limit_hit` reads), so without it the count goes up in
    /// batches, which only the progress display sees.
    fn count(&mut self, sh: &parallel::Shared) -> bool {
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
    fn flush_count(&mut self) {
        if let (Some(sh), n @ 1..) = (self.shared, std::mem::take(&mut self.uncounted)) {
            let total = sh.ticket(n, None).expect("no limit to pass");
            if let Some(p) = &self.opts.progress {
                p.fetch_max(total, Ordering::Relaxed);
            }
        }
    }

    fn finish(self) -> (Report, Vec<u128>) {
        let mut report = self.col.finish("dpor", M::KIND.name());
        report.algo = Some(self.opts.algo.name().to_string());
        report.stats.sleep_blocked = Some(self.sleep_blocked);
        report.stats.races = Some(self.races);
        report.stats.reversed = Some(self.reversed);
        (report, self.traces.unwrap_or_default())
    }

    /// Runs one execution: replays the first `replay` steps of the schedule, then takes a
    /// new step at position `replay` and continues to the end.
    fn execute(&mut self, replay: usize) {
        self.replayed = replay;
        self.accs.truncate(replay);
        // The races of the replayed prefix stay: every execution reverses all of its
        // races (see `reverse_races`).
        let keep = self.pending.partition_point(|&(_, j)| j < replay);
        self.pending.truncate(keep);
        self.new_races = keep;
        self.alone = None;
        let snaps = self.snap_ok && self.frontier.is_none() && self.fresh >= replay;
        let resumed = if snaps { self.resume(replay) } else { None };
        let (mut state, start) = match resumed {
            Some(r) => r,
            None => match self.start(replay) {
                Some(state) => (state, 0),
                None => return,
            },
        };
        self.execute_from(&mut state, start, replay, snaps);
        // The next execution resumes into its allocations.
        self.last = Some(state);
    }

    /// Runs the execution from `state`, which is at position `start`: replays the
    /// schedule up to `replay`, then explores.
    fn execute_from(&mut self, state: &mut State, start: usize, replay: usize, snaps: bool) {
        let mut found = std::mem::take(&mut self.found_buf);
        self.execute_with(state, start, replay, snaps, &mut found);
        self.found_buf = found;
    }

    /// [`Dpor::execute_from`], with `found` for the races each event's record finds.
    fn execute_with(
        &mut self,
        state: &mut State,
        start: usize,
        replay: usize,
        snaps: bool,
        found: &mut Vec<usize>,
    ) {
        for d in start..replay.min(self.fresh) {
            let step = self.schedule[d];
            self.replayed_access(state, d, step);
            let (ev, status) = state.step::<M>(self.prog, step);
            if let Status::Fault(f) = status {
                state.threads[f.thread as usize].faulted = true;
            }
            self.hb
                .record::<M>(step, &ev, || waited::<M>(self.prog, state, step), None);
            self.events.push(ev);
        }
        if snaps && replay - start >= SNAP_GAP && self.snaps.len() < SNAP_CAP {
            let mut snap = match self.snap_pool.pop() {
                Some(mut snap) => {
                    snap.state.clone_from(state);
                    snap
                }
                None => Snapshot {
                    sched: Vec::new(),
                    state: state.clone(),
                    hb: hb::Saved::default(),
                },
            };
            snap.sched.clear();
            snap.sched.extend_from_slice(&self.schedule[..replay]);
            self.hb.save(&mut snap.hb);
            self.snaps.push(snap);
        }
        // A unit's prefix steps that no earlier unit took: new, as in the exploration
        // without a frontier (their faults are reported).
        for d in self.fresh.min(replay)..replay {
            let step = self.schedule[d];
            self.replayed_access(state, d, step);
            let (ev, status) = state.step::<M>(self.prog, step);
            if self.prefix_races || self.above.is_some() {
                found.clear();
                self.hb.record::<M>(
                    step,
                    &ev,
                    || waited::<M>(self.prog, state, step),
                    Some(&mut *found),
                );
                self.events.push(ev);
                if self.prefix_races {
                    // An exact split's unit: the leader took these steps (and counted
                    // them, and reported their faults); their races are reversed here.
                    self.pending.extend(found.iter().map(|&i| (i, d)));
                    if let Status::Fault(f) = status {
                        state.threads[f.thread as usize].faulted = true;
                    }
                    continue;
                }
                // The top of a race-driven split took these steps for this unit: their
                // races are reversed there, and this unit is the one to find them.
                for &i in found.iter() {
                    self.races += 1;
                    self.race_above(i, d);
                }
            } else {
                self.hb
                    .record::<M>(step, &ev, || waited::<M>(self.prog, state, step), None);
                self.events.push(ev);
            }
            self.col.stats.events += 1;
            if let Status::Fault(f) = status {
                self.col.fault(state, &f, &self.events);
                self.obs.fault(state, &f, &self.events);
                if self.opts.stop_on_violation {
                    return;
                }
                state.threads[f.thread as usize].faulted = true;
            }
        }
        let mut d = replay;
        // The position whose step running alone declined: it takes the normal path, and
        // the check whether the thread runs alone is not repeated there.
        let mut declined = usize::MAX;
        loop {
            if d >= self.opts.max_depth.saturating_mul(64) {
                if self.frontier.is_some() {
                    self.record_unit(d, Vec::new(), replay, false);
                    return;
                }
                self.col.stats.blocked += 1;
                self.col.stats.depth_cut += 1;
                return;
            }
            if let Some(t) = self.alone {
                match self.step_alone(state, t, d) {
                    Some(true) => {
                        d += 1;
                        continue;
                    }
                    Some(false) => return,
                    None => {
                        self.alone = None;
                        declined = d;
                    }
                }
            }
            self.enabled.clear();
            state.enabled::<M>(self.prog, &mut self.enabled);
            // A fresh position, or the first one after a run alone.
            if d == self.depth || self.vacant[d] {
                self.occupy(d, &[], Vec::new());
                self.depth = self.depth.max(d + 1);
            }
            if self.frontier == Some(d) {
                let sleep = self.pos[d].sleep.clone();
                self.record_unit(d, sleep, replay, true);
                return;
            }
            if self.lead == Some(d) || self.finds_kept(d) {
                self.reached = true;
                return;
            }
            if let Some(&Step::Thread(t)) = self.enabled.first() {
                if d >= replay
                    && d != declined
                    && self.frontier.is_none()
                    && self.lead.is_none()
                    // Kept units were found by a leader that never runs alone above its
                    // depth: its positions there are what their keys hold.
                    && self.kept.as_ref().is_none_or(|k| d >= k.depth)
                    && self.runs_alone(state, t, d)
                {
                    self.alone = Some(t);
                    continue;
                }
            }
            let Some((step, subtree)) = self.choose(d) else {
                if self.frontier.is_some() {
                    let sleep = self.pos[d].sleep.clone();
                    self.record_unit(d, sleep, replay, false);
                    return;
                }
                if self.enabled.is_empty() {
                    if let Some(sh) = self.shared.filter(|_| self.record.is_none()) {
                        // Workers count complete executions together, before judging one,
                        // so that --max-executions stops at exactly that many.
                        let completes = state.is_complete::<M>(self.prog)
                            && state.cut().is_none()
                            && !state.threads.iter().any(|t| t.faulted);
                        if completes && !self.count(sh) {
                            self.stop(Limit::MaxExecutions);
                            return;
                        }
                    }
                    self.blocked_locks(state, d);
                    if let Some(t) = &mut self.traces {
                        if state.is_complete::<M>(self.prog) {
                            let mut h = fencer_machine::trace::TraceHash::default();
                            for e in &self.events {
                                h.record(e);
                            }
                            t.push(h.value());
                        }
                    }
                    self.obs.execution(state, &self.events);
                    self.col.end::<M>(state, &self.events);
                } else {
                    // Every enabled process sleeps: this execution would repeat another.
                    // Its threads that wait for a mutex for good still race with the
                    // acquisition that blocks them: the executions the sleeping processes
                    // lead to start elsewhere and do not reverse that race here.
                    self.blocked_locks(state, d);
                    // Not `blocked`: how many explorations a sleep set stops depends on
                    // how the tree is explored (Source-DPOR, a frontier split), while the
                    // executions the program blocks are one per trace, whatever the split.
                    self.sleep_blocked += 1;
                }
                return;
            };
            // The child's sleep set: what sleeps here or was explored here before, and
            // commutes with the step taken.
            let acc = state.next_access::<M>(self.prog, step);
            let mut child_sleep = std::mem::take(&mut self.sleep_buf);
            child_sleep.clear();
            {
                let p = &self.pos[d];
                for &(q, _) in p.sleep.iter().chain(p.done.iter()) {
                    if q != step && !child_sleep.iter().any(|&(r, _)| r == q) {
                        let qa = state.next_access::<M>(self.prog, q);
                        if !dependent::<M>((q, qa), (step, acc)) {
                            child_sleep.push((q, qa));
                        }
                    }
                }
            }
            let full = self.frontier.is_some_and(|f| d < f);
            let p = &mut self.pos[d];
            if self.opts.algo == Algo::Source && p.backtrack.is_empty() && !full {
                p.backtrack.push(step);
            }
            p.done.push((step, acc));
            self.schedule.truncate(d);
            self.schedule.push(step);
            let (ev, status) = state.step::<M>(self.prog, step);
            self.col.stats.events += 1;
            found.clear();
            self.hb.record::<M>(
                step,
                &ev,
                || waited::<M>(self.prog, state, step),
                Some(&mut *found),
            );
            self.events.push(ev);
            self.accs.truncate(d);
            self.accs.push(acc);
            for &i in found.iter() {
                self.races += 1;
                if i < self.root && self.record.is_none() {
                    // Above the root every process is explored or asleep: the reversal
                    // is covered there (`parallel.rs`); or the top of a race-driven split
                    // reverses it (`dynamic.rs`).
                    if self.above.is_some() {
                        self.race_above(i, d);
                    }
                    continue;
                }
                match self.opts.algo {
                    Algo::Source => self.add_backtrack(i, d),
                    Algo::Optimal => self.pending.push((i, d)),
                }
            }
            if let Status::Fault(f) = status {
                if self.frontier.is_some() {
                    // The unit's explorer reports the fault (it is a new step there).
                    if self.opts.stop_on_violation {
                        self.record_unit(d + 1, Vec::new(), replay, false);
                        return;
                    }
                } else {
                    self.col.fault(state, &f, &self.events);
                    self.obs.fault(state, &f, &self.events);
                    if self.opts.stop_on_violation {
                        return;
                    }
                }
                // Exploring everything: the faulting thread stops, the others go on, so
                // that the races of the events they have yet to run are seen.
                state.threads[f.thread as usize].faulted = true;
            }
            d += 1;
            self.occupy(d, &child_sleep, subtree);
            self.depth = d + 1;
            self.sleep_buf = child_sleep;
            if self.limit_hit() {
                return;
            }
        }
    }

    /// The initial state, with the relation and the events reset: `None` if the execution
    /// stops at once (a fault of the initial state, when violations stop the search).
    fn start(&mut self, replay: usize) -> Option<State> {
        let (unroll, max_events) = bounds(self.opts);
        let (mut state, status) = match &self.initial {
            // Made under the same bounds (a kit can come from an engine with others).
            Some((init, status)) if init.unroll == unroll && init.max_events == max_events => {
                let state = match self.last.take() {
                    Some(mut last) => {
                        last.clone_from(init);
                        last
                    }
                    None => init.clone(),
                };
                (state, status.clone())
            }
            _ => {
                let made = initial_state(self.prog, self.opts);
                self.initial = Some(made.clone());
                made
            }
        };
        self.hb.reset();
        self.events.clear();
        if let Status::Fault(f) = &status {
            self.snap_ok = false;
            self.snaps.clear();
            if self.frontier.is_some() {
                // The enumeration judges nothing: the unit's explorer meets this fault.
                if self.opts.stop_on_violation {
                    self.record_unit(0, Vec::new(), replay, false);
                    return None;
                }
                state.threads[f.thread as usize].faulted = true;
            } else {
                self.col.fault(&state, f, &[]);
                self.obs.fault(&state, f, &[]);
                if self.opts.stop_on_violation {
                    return None;
                }
                state.threads[f.thread as usize].faulted = true;
            }
        }
        Some(state)
    }

    /// The state at the deepest snapshot on the way to position `replay`, with the
    /// relation and the events brought back there; the snapshots past it are dropped.
    fn resume(&mut self, replay: usize) -> Option<(State, usize)> {
        while let Some(s) = self.snaps.last() {
            let at = s.sched.len();
            if at <= replay
                && at <= self.events.len()
                && at <= self.hb.recorded()
                && s.sched[..] == self.schedule[..at]
            {
                break;
            }
            let s = self.snaps.pop().expect("a snapshot");
            self.snap_pool.push(s);
        }
        let s = self.snaps.last()?;
        let at = s.sched.len();
        self.hb.restore(&s.hb);
        self.events.truncate(at);
        // Copies only the objects and threads that differ from the last execution's.
        let state = match self.last.take() {
            Some(mut last) => {
                last.clone_from(&s.state);
                last
            }
            None => s.state.clone(),
        };
        Some((state, at))
    }

    /// Whether thread `t`, the first enabled step at the fresh position `d`, runs alone
    /// from here (see [`Dpor::alone`]): the other enabled steps are its own updates, which
    /// the exploration would take only when the thread cannot move.
    fn runs_alone(&mut self, state: &State, t: u32, d: usize) -> bool {
        let p = &self.pos[d];
        p.sleep.is_empty()
            && p.done.is_empty()
            && p.wut.is_empty()
            && p.backtrack.is_empty()
            && self.enabled[1..]
                .iter()
                .all(|s| matches!(s, Step::Update(u, _) if *u == t))
            && state
                .threads
                .iter()
                .enumerate()
                .all(|(u, th)| u as u32 == t || th.finished && !th.faulted && th.cut.is_none())
            && state
                .bufs
                .iter()
                .enumerate()
                .all(|(u, b)| u as u32 == t || b.is_empty())
            && self.hb.covers_others(t)
            && self.hb.pending_updates_covered(t)
    }

    /// Takes the next step of thread `t` running alone, at position `d`: `Some(true)` if
    /// the execution goes on, `Some(false)` if it stops here (a violation or a limit),
    /// `None` if this step is not one to take alone (the normal path takes it).
    fn step_alone(&mut self, state: &mut State, t: u32, d: usize) -> Option<bool> {
        {
            let th = &state.threads[t as usize];
            if th.finished || th.cut.is_some() || th.spin.blocked || th.faulted {
                return None;
            }
            // Loads and stores are always enabled; a read-modify-write is when the
            // thread's buffers are empty. Anything else takes the normal path, and the
            // updates of the thread's buffers run only when the thread cannot: the
            // exploration's first choice, which nothing reverses.
            match &state.current(self.prog, t).1.op {
                Op::Load { .. } | Op::Store { .. } => {}
                Op::Rmw { .. } if state.bufs[t as usize].is_empty() => {}
                _ => return None,
            }
        }
        let step = Step::Thread(t);
        self.schedule.truncate(d);
        self.schedule.push(step);
        let (ev, status) = state.step::<M>(self.prog, step);
        self.col.stats.events += 1;
        let acc = match ev.kind {
            EventKind::Load {
                loc,
                forwarded: true,
                ..
            } => Some(Access::Buffered(loc)),
            EventKind::Load { loc, .. } => Some(Access::Read(loc)),
            EventKind::Store {
                loc,
                buffered: false,
                ..
            } => Some(Access::Write(loc)),
            EventKind::Rmw {
                loc,
                written: Some(_),
                ..
            } => Some(Access::Rmw(loc)),
            EventKind::Rmw {
                loc, written: None, ..
            } => Some(Access::RmwRead(loc)),
            _ => None,
        };
        self.accs.truncate(d);
        match acc {
            Some(acc) => {
                self.hb.record_alone(step);
                match ev.kind {
                    EventKind::Store { loc, value, .. }
                    | EventKind::Rmw {
                        loc,
                        written: Some(value),
                        ..
                    } => self.hb.wrote_alone(loc, value),
                    _ => {}
                }
                self.accs.push(acc);
            }
            None => {
                // A buffered store (its update needs the store's clock and its place in
                // the buffer's mirror), or a fault (a bad address or uninitialised
                // memory: what it would have accessed is what later events race with).
                let mut found = Vec::new();
                self.hb.record::<M>(
                    step,
                    &ev,
                    || waited::<M>(self.prog, state, step),
                    Some(&mut found),
                );
                debug_assert!(found.is_empty(), "an event running alone races");
                match ev.kind {
                    EventKind::Store { loc, .. } => self.accs.push(Access::Buffered(loc)),
                    _ => {
                        // The fault left the thread at the instruction: its access is
                        // what the sleep sets would have seen.
                        let acc = state.next_access::<M>(self.prog, step);
                        self.accs.push(acc);
                        self.alone = None;
                    }
                }
            }
        }
        self.events.push(ev);
        if let Status::Fault(f) = status {
            self.col.fault(state, &f, &self.events);
            self.obs.fault(state, &f, &self.events);
            if self.opts.stop_on_violation {
                return Some(false);
            }
            state.threads[t as usize].faulted = true;
            self.alone = None;
        }
        let d = d + 1;
        if d == self.pos.len() {
            self.pos.push(Pos::default());
            self.vacant.push(true);
        }
        self.depth = d + 1;
        self.vacant[d] = true;
        Some(!self.limit_hit())
    }

    /// Frontier enumeration: the execution stops here, at position `end` (the frontier,
    /// or where it ended earlier); the schedule's first `end` steps and the sleep set
    /// there become a unit.
    fn record_unit(&mut self, end: usize, sleep: Vec<(Step, Access)>, fresh: usize, open: bool) {
        self.units.push(parallel::Unit {
            prefix: self.schedule[..end].to_vec(),
            sleep,
            fresh,
            open,
        });
    }

    /// Makes position `d` (at most one past the last) the one after a new step, with this
    /// sleep set and wakeup tree.
    fn occupy(&mut self, d: usize, sleep: &[(Step, Access)], wut: Vec<wut::Node>) {
        if d == self.pos.len() {
            self.pos.push(Pos::default());
            self.vacant.push(false);
        }
        self.pos[d].reset(sleep, wut, &mut self.wut_spare);
        self.vacant[d] = false;
    }

    /// Makes the first `n` positions empty ones, for a unit or top branch to start at
    /// the last.
    fn empty_positions(&mut self, n: usize) {
        self.pos.clear();
        self.pos.resize_with(n, Pos::default);
        self.vacant.clear();
        self.vacant.resize(n, false);
    }

    /// Takes over the tables a finished engine left in `kit` (see [`Kit`]).
    fn use_kit(&mut self, kit: Kit) {
        let Kit {
            hb,
            pos,
            vacant,
            schedule,
            events,
            accs,
            enabled,
            pending,
            settled,
            snaps,
            scratch,
            spare,
            last,
            initial,
            cursor,
            rec_scratch,
            wut_spare,
        } = kit;
        self.last = last;
        self.initial = initial;
        // Reset by the first execution, which starts from the initial state.
        if let Some(hb) = hb {
            self.hb = hb;
        }
        self.pos = emptied(pos);
        self.vacant = emptied(vacant);
        self.schedule = emptied(schedule);
        self.events = emptied(events);
        self.accs = emptied(accs);
        self.enabled = emptied(enabled);
        self.pending = emptied(pending);
        self.settled = emptied(settled);
        // Every snapshot is spent: they are of another unit's executions.
        self.snap_pool = snaps;
        *self.scratch.get_mut() = scratch;
        *self.spare.get_mut() = spare;
        *self.cursor.get_mut() = Cursor { at: None, ..cursor };
        self.rec_scratch = rec_scratch;
        self.wut_spare = wut_spare;
    }

    /// Leaves this engine's tables for the next one on the thread.
    fn take_kit(&mut self) -> Kit {
        let mut snaps = std::mem::take(&mut self.snap_pool);
        snaps.append(&mut self.snaps);
        Kit {
            hb: Some(std::mem::take(&mut self.hb)),
            pos: std::mem::take(&mut self.pos),
            vacant: std::mem::take(&mut self.vacant),
            schedule: std::mem::take(&mut self.schedule),
            events: std::mem::take(&mut self.events),
            accs: std::mem::take(&mut self.accs),
            enabled: std::mem::take(&mut self.enabled),
            pending: std::mem::take(&mut self.pending),
            settled: std::mem::take(&mut self.settled),
            snaps,
            scratch: self.scratch.get_mut().take(),
            spare: self.spare.get_mut().take(),
            last: self.last.take(),
            initial: self.initial.take(),
            cursor: std::mem::take(self.cursor.get_mut()),
            rec_scratch: std::mem::take(&mut self.rec_scratch),
            wut_spare: std::mem::take(&mut self.wut_spare),
        }
    }

    /// Records what a replayed step accesses, unless an earlier execution of this engine
    /// did (a unit's prefix is new to its engine).
    fn replayed_access(&mut self, state: &State, d: usize, step: Step) {
        if self.accs.len() == d {
            self.accs.push(state.next_access::<M>(self.prog, step));
        }
    }

    /// The execution ended with threads waiting for mutexes that others hold (for good: a
    /// holder that never unlocks). Each attempt races with the acquisition that blocks
    /// it, and the race must be reversed like any other, or the executions in which the
    /// waiting thread gets the mutex first are never explored.
    fn blocked_locks(&mut self, state: &State, end: usize) {
        for t in 0..state.threads.len() as u32 {
            let th = &state.threads[t as usize];
            // A lock waits for the thread's buffers too; with entries left (an execution
            // that sleep sets stopped early) the attempt could not run yet.
            if th.finished || th.cut.is_some() || th.spin.blocked || th.faulted {
                continue;
            }
            if !state.bufs[t as usize].is_empty() {
                continue;
            }
            let (fr, ins) = state.current(self.prog, t);
            let fencer_ir::Op::Lock(addr) = &ins.op else {
                continue;
            };
            let Ok(loc) = state.resolve(self.prog, fr, addr) else {
                continue;
            };
            if state.cell_value(loc) == 0 {
                continue;
            }
            // Each attempt is reversed on its own and then forgotten: another blocked
            // thread's attempt must not appear in its reversal (it never ran).
            if let Some((i, j)) = self.hb.blocked_lock(t, loc) {
                debug_assert!(i < end && j >= end);
                self.accs.truncate(j);
                self.accs.push(Access::Mutex(loc));
                self.races += 1;
                if i < self.root && self.record.is_none() {
                    if self.above.is_some() {
                        self.race_above(i, j);
                    }
                    self.hb.drop_virtual(j);
                    continue;
                }
                match self.opts.algo {
                    Algo::Source => self.add_backtrack(i, j),
                    Algo::Optimal => {
                        let mut v = Vec::new();
                        self.cursor.get_mut().at = None;
                        self.reverse_race(i, j, &mut v);
                    }
                }
                self.hb.drop_virtual(j);
                self.accs.truncate(j);
            }
        }
    }

    /// The step to take at position `d` of the current execution, and (Optimal-DPOR) the
    /// wakeup tree to follow after it.
    fn choose(&mut self, d: usize) -> Option<(Step, Vec<wut::Node>)> {
        let p = &mut self.pos[d];
        if self.frontier.is_some_and(|f| d < f) {
            if self.thin {
                let step = match p
                    .backtrack
                    .iter()
                    .find(|&&s| !p.explored(s) && !p.asleep(s))
                {
                    Some(&s) => {
                        planned_enabled(&self.enabled, s, d);
                        Some(s)
                    }
                    None if p.done.is_empty() => {
                        self.enabled.iter().copied().find(|&s| !p.asleep(s))
                    }
                    None => None,
                };
                return step.map(|s| (s, Vec::new()));
            }
            // The top of a split tree: every enabled process that is not asleep, in
            // enabled order (the same on every replay).
            if p.done.is_empty() && p.backtrack.is_empty() {
                p.backtrack.extend_from_slice(&self.enabled);
            }
            let step = p
                .backtrack
                .iter()
                .copied()
                .find(|&s| !p.explored(s) && !p.asleep(s));
            step.inspect(|&s| planned_enabled(&self.enabled, s, d));
            return step.map(|s| (s, Vec::new()));
        }
        match self.opts.algo {
            Algo::Source => {
                let step = if p.backtrack.is_empty() {
                    self.enabled.iter().copied().find(|&s| !p.asleep(s))
                } else {
                    let s = p
                        .backtrack
                        .iter()
                        .copied()
                        .find(|&s| !p.explored(s) && !p.asleep(s));
                    s.inspect(|&s| planned_enabled(&self.enabled, s, d))
                };
                step.map(|s| (s, Vec::new()))
            }
            Algo::Optimal => {
                while !p.wut.is_empty() {
                    let node = p.wut.remove(0);
                    // Insertion keeps sleeping processes out of the tree as far as weak
                    // initials let it see; where one slips in, skipping it is sound: a
                    // sleeping process's executions have all been explored.
                    if p.asleep(node.step) || p.explored(node.step) {
                        continue;
                    }
                    planned_enabled(&self.enabled, node.step, d);
                    return Some((node.step, node.children));
                }
                if !p.done.is_empty() {
                    return None;
                }
                let step = self.enabled.iter().copied().find(|&s| !p.asleep(s))?;
                Some((step, Vec::new()))
            }
        }
    }

    /// Reverses the races of the execution that just ended (Optimal-DPOR): for each race
    /// `(i, j)`, puts `notdep(i).j` into the wakeup tree before `i`, unless a process that
    /// sleeps there can start it (then its traces have been or will be explored). All its
    /// races, as the paper's algorithm does, not only those of its new events: `notdep(i)`
    /// runs to the end of the execution, so a race of the replayed prefix asks for a new
    /// sequence after each new suffix (reversing each race once lost traces where a
    /// sleeping process commutes with one suffix's sequence and not another's).
    ///
    /// Except where the answer cannot change ([`Memo`]). A race of the replayed prefix
    /// (`j` before the replay point `r`) is reversed again only if its sequence can have
    /// changed: what decides a reversal is the sequence, the clocks and accesses of its
    /// events, the state before `i`, what sleeps or was explored at `i` and the wakeup tree
    /// there; while position `i` keeps its step, the last two only grow by other races'
    /// sequences (a tree loses a branch only when `i` takes it), so insertion descends the
    /// same way and finds the leaf it made or found before.
    fn reverse_races(&mut self) {
        let mut pending = std::mem::take(&mut self.pending);
        let mut settled = std::mem::take(&mut self.settled);
        let mut v = std::mem::take(&mut self.seq);
        let mut order = std::mem::take(&mut self.order);
        // With initials alone, `v` ends at `j` and is the same after every suffix: a race
        // is reversed once, by the execution that ran its `j` first.
        let from = if self.weak == Weak::Initials {
            self.new_races
        } else {
            0
        };
        // The races kept from the last execution are its first `new_races`, in order.
        let kept = settled
            .iter()
            .zip(&pending[..self.new_races])
            .take_while(|((r, _), p)| r == *p)
            .count();
        settled.truncate(kept);
        settled.extend(pending[kept..].iter().map(|&r| (r, Memo::Open)));
        let r = self.replayed;
        let hb = &self.hb;
        order.clear();
        order.extend((from..pending.len()).filter(|&n| match settled[n].1 {
            Memo::Open => true,
            Memo::Settled => false,
            Memo::Tail(last) => last >= r || hb.notdep_from(pending[n].0, r),
        }));
        if self.weak == Weak::Simulate {
            // A run needs the machine state before `i`: one cursor moves forward over the
            // execution, in order of `i` (races at one position keep their order).
            order.sort_by_key(|&n| pending[n].0);
            self.cursor.get_mut().at = None;
        }
        for &n in &order {
            let (i, j) = pending[n];
            settled[n].1 = self.reverse_race(i, j, &mut v);
        }
        std::mem::swap(&mut self.pending, &mut pending);
        self.settled = settled;
        self.seq = v;
        self.order = order;
    }

    /// The processes asleep at `i` that have slept since the root of a split tree's unit
    /// (none on one worker). Below a unit's root they start a reversal only as initials:
    /// one that commutes with a whole reversal is redundant only where its own subtree
    /// sends back, through the wakeup trees above, the reversals that cover what it does
    /// not commute with later, and that subtree is another unit's, whose reversals above
    /// its root are dropped. A process that sleeps at `i` without having been explored
    /// at a node since the root has slept all the way (a child's sleep set comes from
    /// the node's sleep set and what was explored there).
    fn inherited(&self, i: usize) -> Vec<Step> {
        if self.root == 0
            || self.weak == Weak::Initials
            || self.record.is_some()
            || self.pos[self.root].sleep.is_empty()
        {
            return Vec::new();
        }
        self.pos[i]
            .sleep
            .iter()
            .map(|&(q, _)| q)
            .filter(|&q| {
                (self.root..i)
                    .all(|k| self.vacant[k] || self.pos[k].done.iter().all(|&(d, _)| d != q))
            })
            .collect()
    }

    /// Puts `notdep(i).j` into the wakeup tree before `i` unless a process that sleeps or
    /// was explored there is a weak initial of it; says what a later execution with the
    /// same prefix can reuse of that ([`Memo`]). With [`Weak::Simulate`], the cursor must
    /// be at or before `i`, or nowhere, in the current execution.
    fn reverse_race(&mut self, i: usize, j: usize, v: &mut Vec<usize>) -> Memo {
        debug_assert!(!self.vacant[i], "race ({i}, {j}) starts in a run alone");
        self.hb.notdep(i, j, self.weak == Weak::Initials, v);
        let taken = self.schedule[i];
        // A process asleep at `i` starts `v` with no event but `j`: the step that woke it
        // happens before its event, so that event happens after `i` or after another
        // event of `v`. If the sleep sets saw a dependence the clocks do not (an access
        // judged `Any`), a sleeping process would start `v` here, and its own subtree,
        // where that reversal would come back from, may be another unit's.
        debug_assert!(
            self.pos[i].sleep.iter().all(|&(q, _)| {
                match v.iter().position(|&k| self.hb.step(k) == q) {
                    Some(at) if at + 1 < v.len() => v[..at]
                        .iter()
                        .any(|&a| self.hb.before_in_reversal((i, j), a, v[at])),
                    _ => true,
                }
            }),
            "a process asleep at {i} starts notdep({i}) with an event other than {j}"
        );
        let tail = Memo::Tail(if v.len() >= 2 { v[v.len() - 2] } else { i });
        let settles = |hb: &Hb, at: usize| {
            let k = v[at];
            if k < j || (k == j && !v[..at].iter().any(|&a| hb.before_in_reversal((i, j), a, k))) {
                Memo::Settled
            } else {
                tail
            }
        };

        // Processes asleep at `i` since a split tree's unit root: they start `v` only as
        // initials (see `Dpor::inherited`).
        let inherited = self.inherited(i);
        // An exact split's unit: a reversal above the root goes to the leader's tree.
        let rec = i < self.root && self.record.is_some();
        let before = |a, b| self.hb.before_in_reversal((i, j), a, b);
        let as_initial = inherited
            .iter()
            .find_map(|&q| wut::initial_by(v, q, |k| self.hb.step(k), before, || false));

        // How a process that sleeps or was explored at `i` starts `v`, if one does; the
        // tree takes `v` otherwise.
        let start = if as_initial.is_some() {
            as_initial
        } else if self.weak == Weak::Simulate {
            let ev = Simulated::<M> {
                prog: self.prog,
                opts: self.opts,
                scratch: &self.scratch,
                spare: &self.spare,
                judging: &self.judging,
                cursor: &self.cursor,
                snaps: &self.snaps,
                schedule: &self.schedule,
                hb: &self.hb,
                accs: &self.accs,
                i,
                j,
                _m: std::marker::PhantomData,
            };
            let p = &mut self.pos[i];
            let mut ps = std::mem::take(&mut self.judged);
            ps.clear();
            ps.extend(
                p.sleep
                    .iter()
                    .chain(p.done.iter())
                    .copied()
                    .filter(|&(q, _)| q != taken && !inherited.contains(&q)),
            );
            let mut starts = std::mem::take(&mut self.starts);
            let mut ctx = Lazy::on(std::mem::take(&mut self.lazy_path));
            ev.judge(&ctx, v, &ps, true, &mut starts);
            let start = starts.iter().find_map(|s| *s);
            if start.is_none() && !rec {
                self.ins.clone_from(v);
                wut::insert(
                    &ev,
                    &mut ctx,
                    &mut p.wut,
                    &mut self.ins,
                    &mut self.wut_spare,
                );
            }
            self.lazy_path = ctx.recycle(&self.spare);
            self.judged = ps;
            self.starts = starts;
            start
        } else {
            let ev = Current::<M> {
                hb: &self.hb,
                stable: self.weak == Weak::Stable,
                accs: &self.accs,
                i,
                j,
                _m: std::marker::PhantomData,
            };
            let p = &mut self.pos[i];
            let start = p
                .sleep
                .iter()
                .chain(p.done.iter())
                .filter(|&&(q, _)| q != taken && !inherited.contains(&q))
                .find_map(|&(q, acc)| {
                    wut::initial_by(
                        v,
                        q,
                        |k| ev.hb.step(k),
                        |a, b| ev.hb.before_in_reversal((i, j), a, b),
                        || ev.commutes(q, acc, v),
                    )
                });
            if start.is_none() && !rec {
                self.ins.clone_from(v);
                wut::insert(&ev, &mut (), &mut p.wut, &mut self.ins, &mut self.wut_spare);
            }
            start
        };
        if start.is_none() && rec {
            let seq = exact::RecSeq::new(&self.hb, &self.accs, (i, j), v, &mut self.rec_scratch);
            // Its position keeps its step for the whole unit: a reversal recorded again
            // (every execution reverses the prefix's races) would be skipped by the
            // leader, and kept until then.
            let seq = Arc::new(seq);
            if exact::first_at(&mut self.inserted, &seq) {
                self.record.as_mut().expect("recording").push(seq);
            }
        }
        match start {
            None => {
                self.reversed += 1;
                tail
            }
            Some(wut::Start::Initial(at)) => settles(&self.hb, at),
            Some(wut::Start::Commutes) => tail,
        }
    }

    /// Reverses the race between the events at positions `i` and `j` (Source-DPOR): makes
    /// sure that from the state before `i`, some process that starts `notdep(i).j` will
    /// be explored.
    fn add_backtrack(&mut self, i: usize, j: usize) {
        debug_assert!(!self.vacant[i], "race ({i}, {j}) starts in a run alone");
        let initials = self.hb.initials(i, j);
        let p = &mut self.pos[i];
        if initials.iter().any(|q| p.backtrack.contains(q)) {
            return;
        }
        self.reversed += 1;
        let pick = initials
            .iter()
            .copied()
            .find(|&q| !p.asleep(q))
            .or_else(|| initials.first().copied());
        if let Some(q) = pick {
            p.backtrack.push(q);
        }
    }
}

/// How weak initials are judged for `prog` under `model` on one worker: by the current
/// execution's kinds where they are stable, else by simulation (CAS, trylock, forwarded
/// loads, heap objects, pointers and indirect calls).
fn weak_mode(prog: &Program, model: ModelKind) -> Weak {
    if kinds_stable(prog, model) {
        Weak::Stable
    } else {
        Weak::Simulate
    }
}

/// Whether Optimal-DPOR blocks no execution with a sleep set on `prog` under `model` (the
/// property test asserts it) with `opts`: on one worker, wherever weak initials are
/// judged (by stable kinds, or by simulation), which is every program; not Source-DPOR,
/// and not a split tree's units (`explore_split`), where they are restricted to initials.
pub fn optimal_exact(prog: &Program, model: ModelKind, opts: &Options) -> bool {
    opts.algo == Algo::Optimal && weak_mode(prog, model) != Weak::Initials
}

/// Whether no event of the program can change kind when a reordering moves it: no
/// compare-and-swap (it fails or succeeds), no trylock (likewise), no mutex destroy (a
/// lock after it faults, and one after a re-initialisation does not), no heap objects, no
/// addresses through pointers and no indirect calls (an access faults or not, a free races
/// with it), spawns in one thread at most (which id a spawn gives), and under TSO and PSO
/// no thread that both stores and loads an object (a load may be forwarded from the
/// thread's buffer or read memory). Every function is taken as a possible thread entry,
/// with the functions it calls. (A join moved before its child's spawn faults: its
/// access, and what it depends on there, are the same.)
///
/// Optimal-DPOR's weak initials count a process whose next event commutes with a whole
/// sequence. Where kinds are stable, the kinds of the current execution's events decide
/// it. Elsewhere they are not the kinds the events will have where the sequence puts them
/// (a CAS that succeeded may fail there, a load read memory may be forwarded), and judging
/// by kinds widened to cover every place is *not* enough: insertion then sees dependences
/// the sleep sets do not (the property test found such programs: a failing CAS and two
/// reads of its location). So elsewhere the sequence is simulated from the machine state
/// at the tree node, as the sleep sets will judge it (`weak_mode`).
pub fn kinds_stable(prog: &Program, model: ModelKind) -> bool {
    use fencer_ir::{Addr, Op, RmwOp};
    let n = prog.functions.len();
    let mut loads = vec![Vec::new(); n];
    let mut stores = vec![Vec::new(); n];
    let mut calls = vec![Vec::new(); n];
    let mut spawns = vec![false; n];
    let mut targets = Vec::new();
    for (fi, f) in prog.functions.iter().enumerate() {
        for ins in &f.body {
            match &ins.op {
                Op::Spawn { func, .. } => {
                    spawns[fi] = true;
                    targets.push(*func as usize);
                }
                Op::SpawnIndirect { .. } => {
                    spawns[fi] = true;
                    targets.extend(0..n);
                }
                Op::Rmw {
                    op: RmwOp::Cas { .. },
                    ..
                }
                | Op::TryLock { .. }
                | Op::MutexDestroy(_)
                | Op::Alloc { .. }
                | Op::Free(_)
                | Op::CallIndirect { .. } => return false,
                Op::Load { addr, .. } | Op::Store { addr, .. } | Op::Rmw { addr, .. } => {
                    let Addr::Global { obj, .. } = addr else {
                        return false;
                    };
                    match ins.op {
                        Op::Load { .. } => loads[fi].push(*obj),
                        Op::Store { .. } => stores[fi].push(*obj),
                        _ => {}
                    }
                }
                Op::Lock(a) | Op::Unlock(a) if !matches!(a, Addr::Global { .. }) => {
                    return false;
                }
                Op::Call { func, .. } => calls[fi].push(*func as usize),
                _ => {}
            }
        }
    }
    // The functions a thread starting at `root` may run.
    let reach = |root: usize| {
        let mut seen = vec![false; n];
        let mut todo = vec![root];
        while let Some(f) = todo.pop() {
            if f < n && !std::mem::replace(&mut seen[f], true) {
                todo.extend(calls[f].iter().copied());
            }
        }
        seen
    };
    // Thread ids are taken in the order spawns run: where two threads can spawn, a
    // reordering changes which thread a spawn starts, and so what a join of that id
    // waits for. A thread started by a spawn counts twice (it can be started again).
    let spawning = |root: usize| reach(root).iter().zip(&spawns).any(|(&r, &s)| r && s);
    let declared = prog
        .threads
        .iter()
        .filter(|t| spawning(t.func as usize))
        .count();
    let started = targets.iter().any(|&f| f < n && spawning(f));
    if declared + 2 * started as usize > 1 {
        return false;
    }
    if model == ModelKind::Sc {
        return true;
    }
    (0..n).all(|root| {
        let seen = reach(root);
        let (mut l, mut st) = (Vec::new(), Vec::new());
        for f in (0..n).filter(|&f| seen[f]) {
            l.extend_from_slice(&loads[f]);
            st.extend_from_slice(&stores[f]);
        }
        !l.iter().any(|o| st.contains(o))
    })
}
