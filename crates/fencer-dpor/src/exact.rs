//! The exact split (`--jobs N` with Optimal-DPOR): one worker's exploration, with the
//! subtrees below a depth `D` explored ahead of time by other workers.
//!
//! Optimal-DPOR explores a node's branches one after the other because each branch's
//! exploration inserts sequences into the wakeup trees of the nodes above it, below the
//! branches still to come: a later branch's subtree is fixed only once every branch before
//! it has finished (docs/design/splits.md, *Why a split tree is not optimal*). So this split
//! does not give subtrees away: a *leader* runs the one-worker engine above `D`, in its
//! order, and only the exploration below `D` is done elsewhere.
//!
//! 1. What the engine does below position `D` depends on the prefix, the sleep set and
//!    the wakeup tree at `D`, and on the sleep sets and explored processes of the
//!    positions above (they decide which reversals above `D` are redundant); never on
//!    the wakeup trees above. That is a unit's [`Key`]. Its exploration changes the
//!    wakeup trees above `D` only by inserting the reversals that are not redundant there.
//! 2. A unit's engine explores below `D` as the one-worker engine does and records those
//!    insertions instead of making them ([`RecSeq`]: the sequence, what its events
//!    access, and the happens-before relation among them). The leader, when its execution
//!    reaches `D`, takes the unit with its key, adds up its result, and makes the recorded
//!    insertions into its own wakeup trees, in order, judging weak initials as the unit's
//!    engine would have (by the recorded relation and accesses, or by running the sequence
//!    from the leader's own machine state at the node).
//! 3. Units are explored by workers, the leader's next one first. Their recorded
//!    insertions stream to the leader after every execution: those of the unit the
//!    leader waits on are inserted at once (they come first in the one-worker order, and
//!    the units after it show sooner). The same reversal recorded again (every unit's
//!    first execution reverses its prefix's races) is inserted once while its position
//!    keeps its step: the tree there only grows, so the second insertion would find the
//!    leaf the first made or found.
//! 4. Workers explore ahead: the leader predicts the next units by following its own
//!    tree as it stands ([`Dpor::scout`]), with the insertions of the predicted units
//!    that workers have finished. A unit runs only if its key is the one the leader
//!    reaches; one explored for another key at the same place of the tree (an insertion
//!    reached its wakeup tree since) is stopped or thrown away.
//!
//! So the leader's exploration is the one-worker engine's, step for step: the same
//! executions in the same order, the same final states, counterexample and verdict, no
//! execution blocked by a sleep set, whatever the timing and the number of workers.
//! What parallelism there is depends on how far ahead the tree shows itself: a unit's
//! successors are known only once the units before them have reported.

use crate::parallel::{self, Shared, Totals, UnitOut};
use crate::wut::{self, Events};
use crate::{copy_into, copy_of, run_judged, Cursor, Dpor, Kit, Lazy, Options, Weak};
use fencer_ir::Program;
use fencer_machine::{dependent, Access, NoObserver, State, Step};
use fencer_memory::MemoryModel;
use fencer_report::Report;
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How many units the leader predicts ahead, per worker.
const LOOKAHEAD: usize = 8;

/// Whether units whose exploration took `useful`, `early` of it before the leader needed
/// them, say that the split does not pay.
fn loses(early: Duration, useful: Duration) -> bool {
    early.as_secs_f64() < EARLY * useful.as_secs_f64()
}

thread_local! {
    /// How long this worker has spent on units it explored while another was paused
    /// (`RecSink::serve`): not part of the paused unit's time.
    static SERVED: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// The leader judges whether the split pays only after this long: a short run loses
/// little either way, and its first units say little.
const WARMUP: Duration = Duration::from_millis(500);
/// How often the leader, waiting for a unit, looks whether the split still pays.
const LOOK_EVERY: Duration = Duration::from_millis(50);
/// The leader goes on alone if less than this part of its units' work was done before
/// it needed them. With two workers, half is as well as it goes (the leader waits for
/// one unit while another is explored ahead): the programs that split well measure
/// 0.5-0.6, and `indexer.c` under TSO, which loses, 0.03.
const EARLY: f64 = 0.25;

/// A reversal that a unit found above its root, for the leader to insert: `notdep(i).j`
/// as a sequence of its own (its events named by their index in it).
#[derive(PartialEq)]
pub(crate) struct RecSeq {
    /// The position whose wakeup tree takes it.
    pub i: usize,
    /// A hash of the rest: the same reversal comes back from unit after unit, and is
    /// inserted once (see `Dpor::insert_recorded`).
    hash: u64,
    steps: Vec<Step>,
    accs: Vec<Access>,
    /// Each event's process, numbered in order of first appearance in the sequence.
    proc: Vec<u16>,
    /// How many events of its process come before it in the sequence.
    rank: Counts,
    procs: usize,
    /// For event `b` and process `p`, how many of `p`'s events in the sequence happen
    /// before `b` (`b * procs + p`): always the first ones, since what happens before an
    /// event of a process happens before its later events too.
    pre: Counts,
}

/// Counts of events in a recorded sequence: in 16 bits where the sequence is short
/// enough (nearly always), which halves what the recordings hold (the leader keeps every
/// one it inserted while its position keeps its step).
#[derive(PartialEq, Hash)]
enum Counts {
    Short(Vec<u16>),
    Long(Vec<u32>),
}

impl Counts {
    fn new(v: &[u32], short: bool) -> Counts {
        if short {
            Counts::Short(v.iter().map(|&x| x as u16).collect())
        } else {
            Counts::Long(v.to_vec())
        }
    }

    fn get(&self, i: usize) -> u32 {
        match self {
            Counts::Short(v) => u32::from(v[i]),
            Counts::Long(v) => v[i],
        }
    }
}

/// Buffers that recording reuses from one sequence to the next (a unit records thousands).
#[derive(Default)]
pub(crate) struct Scratch {
    /// The sequence's processes, in order of first appearance.
    names: Vec<Step>,
    /// Each one's number in the clocks.
    hb_proc: Vec<u32>,
    /// Where each one's events start in `idx`.
    start: Vec<usize>,
    /// How many of each one's events come before the event at hand.
    seen: Vec<usize>,
    /// The events' indexes in their processes, grouped by process.
    idx: Vec<u32>,
    /// The sequence's `rank` and `pre`, before they are stored.
    rank: Vec<u32>,
    pre: Vec<u32>,
}

impl RecSeq {
    pub(crate) fn new(
        hb: &crate::hb::Hb,
        accs: &[Access],
        (i, j): (usize, usize),
        v: &[usize],
        sc: &mut Scratch,
    ) -> RecSeq {
        let n = v.len();
        let mut steps = Vec::with_capacity(n);
        let mut proc = Vec::with_capacity(n);
        let rank = &mut sc.rank;
        rank.clear();
        sc.names.clear();
        sc.hb_proc.clear();
        sc.seen.clear();
        for &k in v {
            let s = hb.step(k);
            steps.push(s);
            let p = match sc.names.iter().position(|&q| q == s) {
                Some(p) => p,
                None => {
                    sc.names.push(s);
                    sc.hb_proc.push(hb.proc_idx(k).0);
                    sc.seen.push(0);
                    sc.names.len() - 1
                }
            };
            proc.push(p as u16);
            rank.push(sc.seen[p] as u32);
            sc.seen[p] += 1;
        }
        let procs = sc.names.len();
        sc.start.clear();
        let mut at = 0;
        for c in &mut sc.seen {
            sc.start.push(at);
            at += std::mem::take(c);
        }
        sc.idx.clear();
        sc.idx.resize(n, 0);
        for (t, &k) in v.iter().enumerate() {
            sc.idx[sc.start[proc[t] as usize] + rank[t] as usize] = hb.proc_idx(k).1;
        }
        // What happens before an event is, for each process, those of its events up to
        // the event's clock entry for it.
        let pre = &mut sc.pre;
        pre.clear();
        pre.resize(n * procs, 0);
        for (t, &b) in v.iter().enumerate() {
            let c = hb.clock_in_reversal((i, j), b);
            for p in 0..procs {
                let bound = c.get(sc.hb_proc[p] as usize).copied().unwrap_or(0);
                let from = sc.start[p];
                let count = sc.idx[from..from + sc.seen[p]].partition_point(|&x| x <= bound);
                debug_assert!(
                    (0..t)
                        .filter(|&a| proc[a] as usize == p)
                        .enumerate()
                        .all(|(r, a)| hb.before_in_reversal((i, j), v[a], b) == (r < count)),
                    "what happens before an event is a prefix of each process's events"
                );
                pre[t * procs + p] = count as u32;
            }
            sc.seen[proc[t] as usize] += 1;
        }
        let accs: Vec<Access> = v.iter().map(|&k| accs[k]).collect();
        // No count exceeds the sequence's length.
        let short = n <= usize::from(u16::MAX);
        let pre = Counts::new(pre, short);
        let rank = Counts::new(rank, short);
        let hash = fx_hash(&(&steps, &accs, &pre));
        RecSeq {
            i,
            hash,
            steps,
            accs,
            proc,
            rank,
            procs,
            pre,
        }
    }

    fn len(&self) -> usize {
        self.steps.len()
    }

    /// Whether event `a` happens before event `b` in the sequence.
    fn before(&self, a: usize, b: usize) -> bool {
        self.rank.get(a) < self.pre.get(b * self.procs + self.proc[a] as usize)
    }
}

/// Notes `seq` among the insertions made at its position (`done`, by position): false if
/// it is there already. Kept in order of hash: the lists reach hundreds on long
/// executions.
pub(crate) fn first_at(done: &mut Vec<Vec<Arc<RecSeq>>>, seq: &Arc<RecSeq>) -> bool {
    if done.len() <= seq.i {
        done.resize_with(seq.i + 1, Vec::new);
    }
    let done = &mut done[seq.i];
    let at = done.partition_point(|r| r.hash < seq.hash);
    if done[at..]
        .iter()
        .take_while(|r| r.hash == seq.hash)
        .any(|r| **r == **seq)
    {
        return false;
    }
    done.insert(at, seq.clone());
    true
}

/// A hash for comparing recorded sequences and keys: SipHash was a quarter of building a
/// recorded sequence.
fn fx_hash(x: &(impl std::hash::Hash + ?Sized)) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    x.hash(&mut h);
    h.finish()
}

/// A recorded sequence as the leader's insertion sees it: weak initials judged as the
/// unit's engine judges them, by the recorded relation, and (where kinds can change) by
/// running the sequence from the leader's machine state at the node.
struct Replayed<'e, M> {
    prog: &'e Program,
    seq: &'e RecSeq,
    weak: Weak,
    /// The machine state before position `seq.i` (where kinds can change).
    base: Option<&'e State>,
    scratch: &'e std::cell::RefCell<Option<State>>,
    /// A node's state, kept for the next insertion's allocations.
    spare: &'e std::cell::RefCell<Option<State>>,
    judging: &'e std::cell::RefCell<crate::Judging>,
    _m: std::marker::PhantomData<M>,
}

impl<M: MemoryModel> Events for Replayed<'_, M> {
    /// The steps from the tree's root to the node insertion stands at.
    type Ctx = Lazy;
    fn step(&self, k: usize) -> Step {
        self.seq.steps[k]
    }
    fn access(&self, k: usize) -> Access {
        self.seq.accs[k]
    }
    fn weak_initials(
        &self,
        ctx: &Lazy,
        w: &[usize],
        ps: &[(Step, Access)],
        out: &mut Vec<Option<wut::Start>>,
    ) {
        let seq = self.seq;
        out.clear();
        out.resize(ps.len(), None);
        let mut bufs = self.judging.borrow_mut();
        let left = &mut bufs.left;
        left.clear();
        for (n, &(p, acc)) in ps.iter().enumerate() {
            if self.weak == Weak::Simulate {
                match w.iter().position(|&k| seq.steps[k] == p) {
                    Some(at) if !w[..at].iter().any(|&a| seq.before(a, w[at])) => {
                        out[n] = Some(wut::Start::Initial(at));
                    }
                    _ => left.push(n),
                }
                continue;
            }
            out[n] = wut::initial_by(
                w,
                p,
                |k| seq.steps[k],
                |a, b| seq.before(a, b),
                || {
                    self.weak == Weak::Stable
                        && w.iter()
                            .all(|&k| !dependent::<M>((p, acc), (seq.steps[k], seq.accs[k])))
                },
            );
        }
        if left.is_empty() {
            return;
        }
        let Some(base) = self.base else {
            return;
        };
        // Below the root, the node's state is made once per insertion and brought down
        // the path as judgements need it, as `Simulated` does.
        let node = if ctx.path.is_empty() {
            None
        } else {
            match ctx.state::<M>(self.prog, || copy_of(self.spare, base)) {
                Some(st) => Some(st),
                // A node that cannot be run is judged as commuting with nothing.
                None => return,
            }
        };
        let from: &State = node.as_deref().unwrap_or(base);
        let mut slot = self.scratch.borrow_mut();
        let state = copy_into(&mut slot, from);
        drop(node);
        run_judged::<M>(
            self.prog,
            state,
            w,
            |k| seq.steps[k],
            ps,
            &mut bufs,
            false,
            out,
        );
    }
    fn advance(&self, ctx: &mut Lazy, p: Step) {
        ctx.path.push(p);
    }
}

/// A position above a unit's root: its sleep set and its explored processes, with what
/// their next events access there.
type Above = (Vec<(Step, Access)>, Vec<(Step, Access)>);

/// What a unit's exploration depends on (see the module's comment).
#[derive(Clone)]
pub(crate) struct Key {
    /// A hash of the rest: the leader compares keys with every unit a worker holds.
    hash: u64,
    prefix: Vec<Step>,
    /// The sleep set and the explored processes of each position above the root.
    above: Vec<Above>,
    sleep: Vec<(Step, Access)>,
    wut: Vec<wut::Node>,
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        self.hash == o.hash
            && self.prefix == o.prefix
            && self.above == o.above
            && self.sleep == o.sleep
            && self.wut == o.wut
    }
}

/// What the leader gets when it waits on its current unit.
pub(crate) enum Got {
    /// Insertions the unit found since the last call; it is still being explored.
    Recs(Vec<Arc<RecSeq>>),
    /// The unit is explored: its last insertions and its result.
    Done(Vec<Arc<RecSeq>>, Box<UnitOut>),
    /// The exploration was halted.
    Halted,
    /// Nothing new on the unit, but the workers are running out of predicted units and
    /// other units have found insertions since the last prediction.
    Predict,
}

/// Where the leader gets its units.
pub(crate) trait Units {
    /// The units the leader expects after `current`, in order (replacing the last
    /// prediction).
    fn predict(&self, current: &Key, keys: Vec<Key>);
    /// Waits for news of the unit `key`, which is explored by a worker (it is put first
    /// in line if none has it); `first`: the leader's first call for this unit.
    fn poll(&self, key: &Key, first: bool) -> Got;
    /// The unit `key` stopped after `max` complete executions, explored here.
    fn limited(&self, key: &Key, max: u64) -> Option<(Vec<Arc<RecSeq>>, UnitOut)>;
    /// Called after each unit: whether the leader goes on alone from here (the split
    /// costs more than it gains); the workers are then told to finish.
    fn fall_back(&self) -> bool;
    /// How many units to predict.
    fn lookahead(&self) -> usize;
    /// Whether the workers may soon run out of predicted units.
    fn hungry(&self) -> bool;
    /// Whether the last prediction has the unit `key`.
    fn expected(&self, key: &Key) -> bool;
    /// The insertions of the unit `key`, if a worker has finished it.
    fn peek(&self, key: &Key) -> Vec<Arc<RecSeq>>;
    /// The leader moved its depth: every unit predicted or explored at the old one is
    /// dropped.
    fn redepth(&self);
}

/// Units that prove small move the leader's depth up. A unit costs about one execution
/// more than its subtree explored in place, and 80-150 µs between worker and leader;
/// where the depth chosen from the first execution makes many small units (the Treiber
/// stack under SC: 160 of 5,800 events each at depth 17), they cost more than their
/// number helps the balance. Units' sizes are counted in events, so that the depths
/// taken, like the executions, do not depend on timing: the leader takes units in the
/// one-worker order.
///
/// Every move drops what the workers explored ahead at the old depth past the leader's
/// backtrack point, so a move goes as far as the subtrees just finished say in one go:
/// to the deepest whose subtree had [`UNIT_EVENTS`] events, or four times the units'
/// average if that is less, at most [`MAX_JUMP`] up
/// (the subtree sizes grow unevenly with height: fib_bench under TSO has fewer than
/// 20,000 events below position 9 and jumped from 21 to 8, where its 12 units of
/// 130,000 events on average are too few for the balance), else one up. Moving one up
/// at a time took five to seven moves on the Treiber stack and fib_bench, and the
/// workers explored 9-23% more events than the leader took (the mean of 6 runs); moving
/// this way, 1-8%.
pub(crate) struct Shallower {
    /// Not above this depth: the first race of the first execution is one above it.
    min: usize,
    /// The units taken at the current depth, and their events.
    units: u64,
    events: u64,
    /// For each position `p` above the depth, the events of the units taken since the
    /// leader last took a step there: below its first `p` steps, the subtree so far.
    below: Vec<u64>,
}

/// Units are judged once there are this many at one depth.
const JUDGE_UNITS: u64 = 4;
/// Units of fewer events than this on average move the depth up.
const UNIT_EVENTS: u64 = 20_000;
/// How many positions up one move goes at most.
const MAX_JUMP: usize = 4;

impl Shallower {
    pub(crate) fn new(min: usize) -> Shallower {
        Shallower {
            min,
            units: 0,
            events: 0,
            below: Vec::new(),
        }
    }

    /// Counts a unit at depth `d` with `events` events.
    fn note(&mut self, d: usize, events: u64) {
        self.units += 1;
        self.events += events;
        if self.below.len() < d {
            self.below.resize(d, 0);
        }
        for e in &mut self.below[self.min.min(d)..d] {
            *e += events;
        }
    }

    /// The depth to move to as the leader, at depth `d`, backtracks to position `b`:
    /// the subtrees below positions `b + 1` to `d - 1` are finished, and a unit may start
    /// at any of them, since they are made afresh from here.
    pub(crate) fn moved(&mut self, d: usize, b: usize) -> Option<usize> {
        let small = self.units >= JUDGE_UNITS && self.events < UNIT_EVENTS * self.units;
        // Four times the units' size is worth a move even short of `UNIT_EVENTS`: small
        // units grow that way in fewer moves.
        let enough = UNIT_EVENTS.min(4 * self.events / self.units.max(1));
        let done = (b + 1).min(self.below.len())..self.below.len().min(d);
        let to = if !small {
            None
        } else if let Some(p) = done
            .clone()
            .rev()
            .find(|&p| p >= self.min && self.below[p] >= enough)
        {
            // Positions from `b + 1` on are all made afresh, so any between is a depth.
            Some(p.max(d - MAX_JUMP.min(d)))
        } else {
            (b + 1 < d && d > self.min.max(1)).then(|| d - 1)
        };
        self.below[done].fill(0);
        if to.is_some() {
            self.units = 0;
            self.events = 0;
        }
        to
    }
}

/// Units a depth move left behind, finished at the old depth: the units at the new depth
/// take them where their executions reach them, instead of exploring their subtrees
/// again. A unit at the new depth explores its subtree as one worker does, so above the
/// old depth it is the leader that predicted them: where its execution reaches one of
/// their keys, that unit is the one one worker would explore there, and it takes its
/// result and insertions as the leader takes a unit's (those above its own root it
/// records in turn, for the leader). Three moves on the Treiber stack under SC dropped
/// 60,000 events, 6.5% of the run: 27,000 in finished units, 23,000 in units the moves
/// stopped. Those are stopped still: let run on, they finished after the unit at the new
/// depth had passed them and explored it again, and the workers threw away 4-16% (over
/// 11% in three runs of four).
#[derive(Default)]
pub(crate) struct Kept {
    pub depth: usize,
    /// Hashes of the units' prefixes: a unit at the new depth makes a key only where its
    /// path is one of them.
    prefixes: rustc_hash::FxHashSet<u64>,
    units: Vec<Arc<KeptUnit>>,
}

pub(crate) struct KeptUnit {
    key: Key,
    recs: Vec<Arc<RecSeq>>,
    out: UnitOut,
}

impl Kept {
    /// Keeps a finished unit, if its result can stand for its subtree's anywhere: not
    /// one that stopped (a violation, a limit).
    fn add(&mut self, key: Key, recs: Vec<Arc<RecSeq>>, out: UnitOut) {
        if out.cex.is_some() || out.stopped.is_some() {
            return;
        }
        self.depth = key.prefix.len();
        self.prefixes.insert(fx_hash(&key.prefix[..]));
        self.units.push(Arc::new(KeptUnit { key, recs, out }));
    }
}

/// Where a unit's engine sends the insertions it records, after every execution.
pub(crate) trait RecSink: Sync {
    fn recs(&self, unit: usize, recs: &mut Vec<Arc<RecSeq>>);
    /// Called by a unit between its executions: if the leader waits for a unit that no
    /// worker has started and none is free, the caller explores that one first.
    fn serve(&self, unit: usize);
    /// Called by a unit once it stops, with the events it explored (taken by the leader
    /// or not).
    fn explored(&self, events: u64);
}

impl<M: MemoryModel> Dpor<'_, M> {
    /// Whether the execution, at position `d`, reaches a unit kept from a deeper depth
    /// (noted in `kept_at`). Asked at every step: inlined, it costs one test where no
    /// unit is kept at `d`.
    #[inline]
    pub(crate) fn finds_kept(&mut self, d: usize) -> bool {
        let Some(kept) = self.kept.as_ref().filter(|k| k.depth == d) else {
            return false;
        };
        if !kept.prefixes.contains(&fx_hash(&self.schedule[..d])) {
            return false;
        }
        let key = self.exact_key(d);
        self.kept_at = kept.units.iter().find(|u| u.key == key).cloned();
        self.kept_at.is_some()
    }

    /// Takes the kept unit the execution reached, as the leader takes a unit: its
    /// insertions at this unit's positions are made here, those above its root recorded
    /// for the leader, and its result added.
    pub(crate) fn adopt_kept(&mut self) {
        let unit = self.kept_at.take().expect("a kept unit reached");
        let KeptUnit { recs, out, .. } = &*unit;
        let d = self.kept.as_ref().expect("a unit with kept units").depth;
        self.pos[d].wut.clear();
        self.depth = d;
        let mut here = Vec::new();
        for seq in recs {
            if seq.i >= self.root {
                here.push(seq.clone());
            } else if first_at(&mut self.inserted, seq) {
                self.record
                    .as_mut()
                    .expect("an exact split's unit records")
                    .push(seq.clone());
            }
        }
        self.insert_recorded(d, &here);
        self.kept_events += out.stats.events;
        self.kept_units += 1 + out.kept;
        self.add_unit(out.clone());
    }

    /// Adds a unit's result to this exploration's, in the one-worker order.
    fn add_unit(&mut self, out: UnitOut) {
        let mut traces = self.traces.take();
        let mut none = Vec::new();
        out.add_to(Totals {
            col: &mut self.col,
            sleep_blocked: &mut self.sleep_blocked,
            races: &mut self.races,
            reversed: &mut self.reversed,
            traces: traces.as_mut().unwrap_or(&mut none),
        });
        self.traces = traces;
        // The memos of reversals were made before the unit's insertions.
        self.settled.clear();
    }

    fn exact_key(&self, d: usize) -> Key {
        let prefix = self.schedule[..d].to_vec();
        let above: Vec<Above> = self.pos[..d]
            .iter()
            .map(|p| (p.sleep.clone(), p.done.clone()))
            .collect();
        let sleep = self.pos[d].sleep.clone();
        let wut = self.pos[d].wut.clone();
        Key {
            hash: fx_hash(&(&prefix, &above, &sleep, &wut)),
            prefix,
            above,
            sleep,
            wut,
        }
    }

    /// The leader's execution has reached its depth: the unit below is explored by a
    /// worker (or was, ahead), its insertions are made here as they come, and its result
    /// is added once it is over.
    pub(crate) fn adopt(&mut self) {
        let d = self.lead.expect("the leader of an exact split");
        self.lead_last = d;
        let key = self.exact_key(d);
        // Position `d` is the unit's: the leader backtracks above it.
        self.pos[d].wut.clear();
        self.depth = d;
        let src = self.lead_src.expect("a source of units");
        // The last prediction stands while it has this unit and enough after it (the
        // workers check each unit's key anyway).
        if src.hungry() || !src.expected(&key) {
            src.predict(&key, self.scout(d, src.lookahead()));
        }
        let mut first = true;
        let (recs, out) = loop {
            let got = src.poll(&key, first);
            first = false;
            match got {
                Got::Recs(recs) => {
                    // The unit is first in the one-worker order: its insertions are made
                    // now, as one worker makes them during the unit, and show the units
                    // after it sooner.
                    self.insert_recorded(d, &recs);
                    if src.hungry() {
                        src.predict(&key, self.scout(d, src.lookahead()));
                    }
                }
                Got::Predict => src.predict(&key, self.scout(d, src.lookahead())),
                Got::Done(recs, out) => break (recs, *out),
                Got::Halted => {
                    self.cancelled = true;
                    return;
                }
            }
        };
        let out = match self.opts.max_executions {
            // One worker would stop inside this unit, right after its `max`-th execution;
            // the exploration ends there, so the tree above no longer matters.
            Some(max) if out.stats.executions >= max.saturating_sub(self.col.stats.executions) => {
                let left = max.saturating_sub(self.col.stats.executions);
                match src.limited(&key, left) {
                    Some((_, out)) => out,
                    None => {
                        self.cancelled = true;
                        return;
                    }
                }
            }
            _ => {
                self.insert_recorded(d, &recs);
                out
            }
        };
        if let Some(sh) = &mut self.shallower {
            sh.note(d, out.stats.events);
        }
        self.add_unit(out);
        // The leader's state is now one worker's after this unit's subtree: from here it
        // can go on below its depth itself, as one worker does.
        if src.fall_back() {
            self.lead = None;
        }
    }

    /// Inserts a unit's recorded reversals into the wakeup trees above `d`, in order.
    fn insert_recorded(&mut self, d: usize, recs: &[Arc<RecSeq>]) {
        let prog = self.prog;
        let opts = self.opts;
        let weak = self.weak;
        let mut cursor = Cursor::default();
        let scratch = std::cell::RefCell::new(None);
        let spare = std::cell::RefCell::new(None);
        // Insertions at different positions do not meet: in order of position (and at one
        // position in the order found), the cursor only moves forward.
        let mut order: Vec<&Arc<RecSeq>> = recs.iter().collect();
        order.sort_by_key(|r| r.i);
        for seq in order {
            // The same reversal inserted again while its position keeps its step finds
            // the leaf it made or found before (the tree there only grows): a unit's
            // first execution reverses all of its prefix's races again.
            if !first_at(&mut self.inserted, seq) {
                continue;
            }
            let base = (weak == Weak::Simulate)
                .then(|| cursor.seek::<M>(prog, opts, &self.snaps, &self.schedule[..d], seq.i));
            let ev = Replayed::<M> {
                prog,
                seq,
                weak,
                base,
                scratch: &scratch,
                spare: &spare,
                judging: &self.judging,
                _m: std::marker::PhantomData,
            };
            self.ins.clear();
            self.ins.extend(0..seq.len());
            let mut ctx = Lazy::on(std::mem::take(&mut self.lazy_path));
            wut::insert(
                &ev,
                &mut ctx,
                &mut self.pos[seq.i].wut,
                &mut self.ins,
                &mut self.wut_spare,
            );
            self.lazy_path = ctx.recycle(&spare);
        }
    }

    /// The next `k` units the leader will explore if no insertion changes its tree: its
    /// own order, followed from a copy of its positions above `d`.
    fn scout(&self, d: usize, k: usize) -> Vec<Key> {
        let opts = parallel::unlimited(self.opts);
        let mut obs = NoObserver;
        let mut s = Dpor::<M>::new(self.prog, &opts, false, &mut obs);
        if let Some(kit) = self.scout_kit.take() {
            s.use_kit(*kit);
        }
        s.lead = Some(d);
        s.weak = self.weak;
        s.pos.extend_from_slice(&self.pos[..d]);
        s.vacant.resize(d, false);
        s.schedule.extend_from_slice(&self.schedule[..d]);
        s.depth = d;
        // What the leader inserted stays inserted: peeked units' insertions that repeat
        // it are skipped as the leader would skip them.
        s.inserted = self.inserted.iter().take(d).cloned().collect();
        let mut keys = Vec::new();
        while keys.len() < k {
            let Some(b) = s.backtrack_point() else {
                break;
            };
            if let Some(v) = s.inserted.get_mut(b..) {
                v.iter_mut().for_each(Vec::clear);
            }
            s.depth = b + 1;
            s.schedule.truncate(b);
            s.execute(b);
            if std::mem::take(&mut s.reached) {
                let key = s.exact_key(d);
                // What a worker has found there already comes next in the one-worker
                // order: with it, the units after it show sooner.
                if let Some(src) = self.lead_src {
                    let recs = src.peek(&key);
                    if !recs.is_empty() {
                        s.insert_recorded(d, &recs);
                    }
                }
                keys.push(key);
                s.pos[d].wut.clear();
                s.depth = d;
            }
        }
        self.scout_kit.set(Some(Box::new(s.take_kit())));
        keys
    }
}

/// Explores the unit `key` (its root at the prefix's end), sending the insertions it
/// records above the root to `sink` (with `id`) or keeping them; with the tables in
/// `kit`, which it leaves there for the next unit.
#[allow(clippy::too_many_arguments)]
fn explore_unit<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    key: &Key,
    traces: bool,
    start: Instant,
    shared: Option<&Shared>,
    sink: Option<(&dyn RecSink, usize, &AtomicBool)>,
    mut kit: Option<&mut Kit>,
    kept: Option<Arc<Kept>>,
) -> Option<(Vec<Arc<RecSeq>>, UnitOut)> {
    let mut obs = NoObserver;
    let mut d = Dpor::<M>::new(prog, opts, traces, &mut obs);
    if let Some(k) = kit.as_mut() {
        d.use_kit(std::mem::take(*k));
    }
    d.col.start = start;
    d.shared = shared;
    if let Some((sink, id, cancel)) = sink {
        d.rec_sink = Some(sink);
        d.unit = id;
        d.cancel = Some(cancel);
    }
    let root = key.prefix.len();
    d.root = root;
    d.record = Some(Vec::new());
    d.prefix_races = true;
    d.fresh = 0;
    d.kept = kept.filter(|k| k.depth > key.prefix.len());
    d.schedule.extend_from_slice(&key.prefix);
    d.empty_positions(root + 1);
    for (p, (sleep, done)) in d.pos.iter_mut().zip(&key.above) {
        p.sleep = sleep.clone();
        p.done = done.clone();
    }
    d.pos[root].sleep = key.sleep.clone();
    d.pos[root].wut = key.wut.clone();
    d.depth = root + 1;
    d.explore(root);
    d.send_above();
    if let Some((sink, ..)) = sink {
        // Kept units' events were counted when they were explored.
        sink.explored(d.col.stats.events - d.kept_events);
    }
    let recs = d.record.take().unwrap_or_default();
    if let Some(k) = kit {
        *k = d.take_kit();
    }
    parallel::unit_out(d).map(|out| (recs, out))
}

/// A unit a worker has started.
struct Run {
    id: usize,
    key: Arc<Key>,
    /// Insertions found and not yet taken by the leader.
    recs: Vec<Arc<RecSeq>>,
    /// Its result once it is over (`Some(None)`: halted).
    out: Option<Option<UnitOut>>,
    /// How long its exploration took (once it is over; without a unit it paused for).
    took: Duration,
    /// When it started, and when the leader first asked for it.
    began: Instant,
    needed: Option<Instant>,
    /// Set when it turns out mispredicted: its engine stops.
    cancel: Arc<AtomicBool>,
    /// The leader waits on it: its insertions are news.
    wanted: bool,
}

#[derive(Default)]
struct Work {
    /// Predicted units no worker has taken yet, in the leader's order.
    queue: VecDeque<Arc<Key>>,
    runs: Vec<Run>,
    next_id: usize,
    quit: bool,
    /// Counts the units workers have finished, and its value at the last prediction.
    sent: u64,
    predicted: u64,
    /// The unit the leader waits on, and the run exploring it once one does (the leader
    /// then finds it by number, not by comparing keys at every poll).
    current: Option<Arc<Key>>,
    current_run: Option<usize>,
    /// How long the units the leader took took: what one worker would have spent on
    /// them.
    useful: Duration,
    /// What of that they spent before the leader needed them: the work the split did
    /// beside the leader.
    early: Duration,
    /// Workers waiting for a unit, and whether the leader waits for news: a condition
    /// variable's notification is a system call even with nobody waiting, and units
    /// send recordings after every execution.
    idle: usize,
    leader_waits: bool,
    /// The split is found not to pay: nothing more is predicted, and the leader goes on
    /// alone after its current unit.
    throttled: bool,
    /// The units the last depth move left finished.
    kept: Option<Arc<Kept>>,
}

struct Coord<'p, M> {
    prog: &'p Program,
    /// The units' options: no progress line (the leader's count is the one shown).
    opts: Options,
    shared: &'p Shared,
    traces: bool,
    jobs: usize,
    work: Mutex<Work>,
    /// Workers wait here for units, the leader for news of its unit.
    wake: Condvar,
    news: Condvar,
    /// Units the leader took, and how many of them a worker had started before the
    /// leader needed them.
    taken: AtomicUsize,
    ahead: AtomicUsize,
    /// The events workers explored in units, and those of the units the leader took:
    /// the difference is work thrown away (mispredicted units, and those a depth move
    /// or going on alone dropped).
    explored: AtomicU64,
    taken_events: AtomicU64,
    /// Kept units (see [`Kept`]) that the units the leader took took.
    kept_taken: AtomicU64,
    /// When the leader started.
    began: Instant,
    /// The leader waits for a unit that no worker has started and none is free to take.
    urgent: AtomicBool,
    /// Spare tables for units explored while another is paused (`serve`).
    kits: Mutex<Vec<Kit>>,
    /// The leader goes on alone after this many units, whatever the timing (tests).
    give_up: Option<usize>,
    /// Before a depth move, the leader waits for the started units to finish (tests).
    settle: bool,
    /// How many units the leader had taken when it went on alone (0: it did not).
    fell_back: AtomicUsize,
    _m: std::marker::PhantomData<fn() -> M>,
}

impl<M: MemoryModel> Coord<'_, M> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Work> {
        self.work.lock().expect("no worker panics holding it")
    }

    /// The leader waits for news from the workers, or `LOOK_EVERY` at most.
    fn await_news<'w>(
        &self,
        mut w: std::sync::MutexGuard<'w, Work>,
    ) -> std::sync::MutexGuard<'w, Work> {
        w.leader_waits = true;
        w = self
            .news
            .wait_timeout(w, LOOK_EVERY)
            .expect("no worker panics holding it")
            .0;
        w.leader_waits = false;
        w
    }

    /// A worker: explores predicted units until the leader is done.
    fn work(&self) {
        let _guard = QuitOnPanic(self);
        let mut kit = Kit::default();
        loop {
            let (key, id, cancel, kept) = {
                let mut w = self.lock();
                loop {
                    if w.quit {
                        return;
                    }
                    if let Some(key) = w.queue.pop_front() {
                        let (id, cancel) = self.start(&mut w, &key);
                        break (key, id, cancel, w.kept.clone());
                    }
                    w.idle += 1;
                    w = self.wake.wait(w).expect("no worker panics holding it");
                    w.idle -= 1;
                }
            };
            self.run(&key, id, &cancel, &mut kit, kept);
        }
    }

    /// Notes that a worker explores `key`, taken from the queue: its run's number and
    /// the flag that stops it.
    fn start(&self, w: &mut Work, key: &Arc<Key>) -> (usize, Arc<AtomicBool>) {
        let id = w.next_id;
        w.next_id += 1;
        let cancel = Arc::new(AtomicBool::new(false));
        let wanted = w.current.as_ref().is_some_and(|c| **c == **key);
        if wanted {
            w.current_run = Some(id);
            self.urgent.store(false, Ordering::Relaxed);
        }
        w.runs.push(Run {
            id,
            key: key.clone(),
            recs: Vec::new(),
            out: None,
            cancel: cancel.clone(),
            wanted,
            took: Duration::ZERO,
            began: Instant::now(),
            needed: None,
        });
        (id, cancel)
    }

    /// Explores a started unit and files its result.
    fn run(
        &self,
        key: &Key,
        id: usize,
        cancel: &AtomicBool,
        kit: &mut Kit,
        kept: Option<Arc<Kept>>,
    ) {
        let t0 = Instant::now();
        let served = SERVED.with(Cell::get);
        let got = explore_unit::<M>(
            self.prog,
            &self.opts,
            key,
            self.traces,
            self.shared.start,
            Some(self.shared),
            Some((self, id, cancel)),
            Some(kit),
            kept,
        );
        // What it took alone: without the unit it paused for (`serve`).
        let took = t0.elapsed().saturating_sub(SERVED.with(Cell::get) - served);
        let mut w = self.lock();
        let mut news = false;
        if let Some(run) = w.runs.iter_mut().find(|r| r.id == id) {
            run.took = took;
            run.out = Some(got.map(|(recs, out)| {
                run.recs.extend(recs);
                out
            }));
            news = run.wanted;
            w.sent += 1;
        }
        // The leader waits for its own unit, or for a prediction once the workers run
        // short: waking it for anything else takes a core from a worker for nothing.
        if w.leader_waits && (news || w.queue.len() < self.jobs || w.quit || self.settle) {
            self.news.notify_all();
        }
    }

    /// While the leader waits for a unit: if, counting what that unit has taken so far,
    /// too little of the units' work was done ahead (see `fall_back`), the predicted
    /// units are stopped now, so that the leader's unit has a core to itself until it
    /// ends and the leader goes on alone.
    fn throttle(&self, w: &mut Work) {
        if w.throttled || self.give_up.is_some() || self.began.elapsed() < WARMUP {
            return;
        }
        let Some(run) = w
            .current_run
            .and_then(|id| w.runs.iter().find(|r| r.id == id))
        else {
            return;
        };
        let now = Instant::now();
        let useful = w.useful + now.duration_since(run.began);
        let early = w.early + run.needed.unwrap_or(now).duration_since(run.began);
        if !loses(early, useful) {
            return;
        }
        let current = run.id;
        w.throttled = true;
        w.queue.clear();
        w.runs.retain(|r| {
            let keep = r.id == current;
            if !keep {
                r.cancel.store(true, Ordering::Relaxed);
            }
            keep
        });
    }

    fn quit(&self) {
        self.lock().quit = true;
        self.wake.notify_all();
        self.news.notify_all();
    }
}

/// Held by the leader and every worker: if one panics, the others, which may wait for
/// it, are told to finish, and the panic reaches the caller instead of a hang.
struct QuitOnPanic<'c, 'p, M>(&'c Coord<'p, M>);

impl<M> Drop for QuitOnPanic<'_, '_, M> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut w = self.0.work.lock().unwrap_or_else(|e| e.into_inner());
            w.quit = true;
            self.0.wake.notify_all();
            self.0.news.notify_all();
        }
    }
}

impl<M: MemoryModel> RecSink for Coord<'_, M> {
    fn serve(&self, unit: usize) {
        if !self.urgent.load(Ordering::Relaxed) {
            return;
        }
        let (key, id, cancel, kept) = {
            let mut w = self.lock();
            // The unit the leader waits on is never paused for another.
            if w.quit || w.current_run.is_some() || w.runs.iter().any(|r| r.id == unit && r.wanted)
            {
                return;
            }
            let Some(current) = w.current.clone() else {
                return;
            };
            let Some(at) = w.queue.iter().position(|k| **k == *current) else {
                return;
            };
            let key = w.queue.remove(at).expect("found in the queue");
            let (id, cancel) = self.start(&mut w, &key);
            (key, id, cancel, w.kept.clone())
        };
        let mut kit = self
            .kits
            .lock()
            .expect("no worker panics holding it")
            .pop()
            .unwrap_or_default();
        let t0 = Instant::now();
        self.run(&key, id, &cancel, &mut kit, kept);
        SERVED.with(|c| c.set(c.get() + t0.elapsed()));
        self.kits
            .lock()
            .expect("no worker panics holding it")
            .push(kit);
    }

    fn explored(&self, events: u64) {
        self.explored.fetch_add(events, Ordering::Relaxed);
    }

    fn recs(&self, unit: usize, recs: &mut Vec<Arc<RecSeq>>) {
        let mut w = self.lock();
        if let Some(run) = w.runs.iter_mut().find(|r| r.id == unit) {
            run.recs.append(recs);
            if run.wanted && w.leader_waits {
                self.news.notify_all();
            }
        } else {
            // Dropped as mispredicted: nobody will take them.
            recs.clear();
        }
    }
}

impl<M: MemoryModel> Units for Coord<'_, M> {
    fn lookahead(&self) -> usize {
        LOOKAHEAD * self.jobs
    }

    fn hungry(&self) -> bool {
        let w = self.lock();
        w.queue.len() < self.jobs && !w.throttled
    }

    fn expected(&self, key: &Key) -> bool {
        let w = self.lock();
        w.runs.iter().any(|r| *r.key == *key) || w.queue.iter().any(|k| **k == *key)
    }

    fn peek(&self, key: &Key) -> Vec<Arc<RecSeq>> {
        let w = self.lock();
        w.runs
            .iter()
            .find(|r| *r.key == *key && r.out.is_some())
            .map(|r| r.recs.clone())
            .unwrap_or_default()
    }

    fn redepth(&self) {
        let mut w = self.lock();
        w.queue.clear();
        while self.settle && !w.quit && w.runs.iter().any(|r| r.out.is_none()) {
            w = self.await_news(w);
        }
        let mut kept = Kept::default();
        for r in w.runs.drain(..) {
            r.cancel.store(true, Ordering::Relaxed);
            // A kept unit's result may stand for the whole run's: not where a limit on
            // executions could stop inside it.
            if let (Some(Some(out)), false, None) = (r.out, r.wanted, self.opts.max_executions) {
                kept.add((*r.key).clone(), r.recs, out);
            }
        }
        // Units at the new depth reach those of the last move too, but each unit looks
        // at one depth only.
        if !kept.units.is_empty() {
            w.kept = Some(Arc::new(kept));
        }
        w.current = None;
        w.current_run = None;
    }

    fn predict(&self, current: &Key, keys: Vec<Key>) {
        let mut w = self.lock();
        if w.throttled {
            return;
        }
        w.predicted = w.sent;
        let Work { queue, runs, .. } = &mut *w;
        // A unit explored for a key the leader no longer expects was mispredicted.
        // A unit explored for another key at the same place of the tree was mispredicted
        // (an insertion reached its wakeup tree since): stopped, or thrown away. Others
        // not in the prediction may still come (the prediction looks only so far ahead).
        runs.retain(|r| {
            let wrong = keys
                .iter()
                .chain(std::iter::once(current))
                .any(|k| k.prefix == r.key.prefix && *k != *r.key);
            if wrong {
                r.cancel.store(true, Ordering::Relaxed);
            }
            !wrong
        });
        let spare = runs
            .iter()
            .filter(|r| r.out.is_some() && *r.key != *current && !keys.iter().any(|k| *r.key == *k))
            .count();
        if spare > LOOKAHEAD * self.jobs {
            // Keep the memory bounded: the results furthest from the prediction go.
            let mut extra = spare - LOOKAHEAD * self.jobs;
            runs.retain(|r| {
                let drop = extra > 0
                    && r.out.is_some()
                    && *r.key != *current
                    && !keys.iter().any(|k| *r.key == *k);
                if drop {
                    extra -= 1;
                }
                !drop
            });
        }
        queue.clear();
        for k in keys {
            if !runs.iter().any(|r| *r.key == k) {
                queue.push_back(Arc::new(k));
            }
        }
        if w.idle > 0 {
            self.wake.notify_all();
        }
    }

    fn poll(&self, key: &Key, first: bool) -> Got {
        let mut w = self.lock();
        if first {
            w.current = Some(Arc::new(key.clone()));
            w.current_run = w.runs.iter().find(|r| *r.key == *key).map(|r| r.id);
            self.taken.fetch_add(1, Ordering::Relaxed);
            if w.current_run.is_some() {
                self.ahead.fetch_add(1, Ordering::Relaxed);
            }
        }
        if w.current_run.is_none() {
            w.queue.retain(|k| **k != *key);
            w.queue.push_front(Arc::new(key.clone()));
            // No worker is free to take it: one pauses its predicted unit for it.
            if w.idle == 0 {
                self.urgent.store(true, Ordering::Relaxed);
            } else {
                self.wake.notify_all();
            }
        }
        loop {
            let id = w.current_run;
            if let Some(at) = id.and_then(|id| w.runs.iter().position(|r| r.id == id)) {
                let run = &mut w.runs[at];
                run.wanted = true;
                run.needed.get_or_insert_with(Instant::now);
                if run.out.is_some() {
                    let run = w.runs.swap_remove(at);
                    if let Some(Some(out)) = &run.out {
                        self.taken_events
                            .fetch_add(out.stats.events, Ordering::Relaxed);
                        self.kept_taken.fetch_add(out.kept, Ordering::Relaxed);
                    }
                    w.useful += run.took;
                    // The part of it explored before the leader needed it.
                    let needed = run.needed.unwrap_or(run.began);
                    w.early += needed.duration_since(run.began).min(run.took);
                    return match run.out {
                        Some(Some(out)) => Got::Done(run.recs, Box::new(out)),
                        _ => Got::Halted,
                    };
                }
                if !run.recs.is_empty() {
                    return Got::Recs(std::mem::take(&mut run.recs));
                }
            }
            if w.sent != w.predicted && w.queue.len() < self.jobs && !w.throttled {
                w.predicted = w.sent;
                return Got::Predict;
            }
            if w.quit {
                // A worker panicked: the scope passes its panic on.
                return Got::Halted;
            }
            w = self.await_news(w);
            self.throttle(&mut w);
        }
    }

    fn fall_back(&self) -> bool {
        let mut w = self.lock();
        let taken = self.taken.load(Ordering::Relaxed);
        let go = match self.give_up {
            Some(n) => taken >= n,
            None => {
                // The split gains only by what units do before the leader needs them:
                // the rest the leader waits for, as one worker would have spent it, plus
                // what splitting costs. Where units come one after another (each one's
                // insertions change what follows), that is little, the split is a loss,
                // and the leader, one worker's engine, goes on as one.
                w.throttled || self.began.elapsed() >= WARMUP && loses(w.early, w.useful)
            }
        };
        if go {
            w.quit = true;
            w.queue.clear();
            for r in w.runs.drain(..) {
                r.cancel.store(true, Ordering::Relaxed);
            }
            self.wake.notify_all();
            self.fell_back.store(taken, Ordering::Relaxed);
        }
        go
    }

    fn limited(&self, key: &Key, max: u64) -> Option<(Vec<Arc<RecSeq>>, UnitOut)> {
        let opts = Options {
            max_executions: Some(max),
            ..self.opts.clone()
        };
        explore_unit::<M>(
            self.prog,
            &opts,
            key,
            self.traces,
            self.shared.start,
            None,
            None,
            None,
            None,
        )
    }
}

/// What an exact split found.
pub(crate) struct ExactRun {
    pub report: Report,
    pub traces: Vec<u128>,
    /// Units the leader took, and how many a worker had started before it needed them.
    pub units: usize,
    pub ahead: usize,
    pub depth: usize,
    /// The depth of its last unit (units that prove small move it up).
    pub last_depth: usize,
    /// How many units the leader had taken when it went on alone, if it did.
    pub fell_back: Option<usize>,
    /// The events of the units the leader took, and those workers explored in units it
    /// did not take.
    pub unit_events: u64,
    pub dropped_events: u64,
    /// Kept units taken (see [`Kept`]).
    pub kept_units: u64,
}

/// Explores `prog` with the exact split: the leader here, `split.jobs` workers beside
/// it, its units below `depth` (`None`: chosen from the first execution).
pub(crate) fn explore<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    split: &parallel::Split,
    depth: Option<usize>,
    shared: &Shared,
    traces: bool,
) -> ExactRun {
    let jobs = split.jobs.max(1);
    // A depth given is kept; one chosen from the first execution moves up while units
    // prove small.
    let (depth, min) = match depth {
        Some(d) => (d.max(1), None),
        None => {
            let (d, first) = crate::dynamic::races_span::<M>(prog, opts, shared.start);
            (d.max(1), Some(first + 1))
        }
    };
    shared.timed_out(opts);
    let coord = Coord::<M> {
        prog,
        // A unit never needs more executions than the whole run may have; past what is
        // left when the leader reaches it, it is explored again with the rest.
        opts: Options {
            progress: None,
            ..opts.clone()
        },
        shared,
        traces,
        jobs,
        work: Mutex::new(Work::default()),
        wake: Condvar::new(),
        news: Condvar::new(),
        taken: AtomicUsize::new(0),
        ahead: AtomicUsize::new(0),
        explored: AtomicU64::new(0),
        taken_events: AtomicU64::new(0),
        kept_taken: AtomicU64::new(0),
        began: Instant::now(),
        urgent: AtomicBool::new(false),
        kits: Mutex::new(Vec::new()),
        give_up: split.give_up,
        settle: split.settle,
        fell_back: AtomicUsize::new(0),
        _m: std::marker::PhantomData,
    };
    let mut last = depth;
    let (report, traces) = std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| coord.work());
        }
        let _guard = QuitOnPanic(&coord);
        let mut obs = NoObserver;
        let mut lead = Dpor::<M>::new(prog, opts, traces, &mut obs);
        lead.col.start = shared.start;
        lead.lead = Some(depth);
        lead.shallower = min.map(Shallower::new);
        lead.lead_src = Some(&coord);
        lead.explore(0);
        shared.halt();
        coord.quit();
        last = lead.lead_last;
        lead.finish()
    });
    ExactRun {
        report,
        traces,
        units: coord.taken.load(Ordering::Relaxed),
        ahead: coord.ahead.load(Ordering::Relaxed),
        depth,
        last_depth: last,
        fell_back: Some(coord.fell_back.load(Ordering::Relaxed)).filter(|&n| n > 0),
        unit_events: coord.taken_events.load(Ordering::Relaxed),
        dropped_events: coord
            .explored
            .load(Ordering::Relaxed)
            .saturating_sub(coord.taken_events.load(Ordering::Relaxed)),
        kept_units: coord.kept_taken.load(Ordering::Relaxed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_units_move_the_depth_to_the_deepest_large_finished_subtree() {
        let mut s = Shallower::new(2);
        s.note(12, 5_000);
        s.note(12, 5_000);
        assert_eq!(
            s.moved(12, 10),
            None,
            "judged only after {JUDGE_UNITS} units"
        );
        // Position 11 took a new step: only 10,000 events below it since, 20,000 above.
        s.note(12, 5_000);
        s.note(12, 5_000);
        assert_eq!(
            s.moved(12, 5),
            Some(10),
            "two up at once, where 20,000 were"
        );
        // At the new depth, units are counted afresh.
        for _ in 0..JUDGE_UNITS - 1 {
            s.note(10, 100);
        }
        assert_eq!(s.moved(10, 3), None);
    }

    #[test]
    fn a_move_goes_one_up_without_a_large_subtree_and_at_most_max_jump_with_one() {
        let mut s = Shallower::new(0);
        for _ in 0..JUDGE_UNITS {
            s.note(12, 100);
        }
        assert_eq!(s.moved(12, 11), None, "nothing finished above the depth");
        assert_eq!(s.moved(12, 10), Some(11));
        // A large subtree only far up: below position 3 (position 4 took a new step).
        s.note(11, UNIT_EVENTS);
        assert_eq!(s.moved(11, 3), None);
        for _ in 0..JUDGE_UNITS - 1 {
            s.note(11, 100);
        }
        assert_eq!(s.moved(11, 0), Some(11 - MAX_JUMP));
    }

    #[test]
    fn a_subtree_four_times_the_units_is_worth_a_move_short_of_unit_events() {
        let mut s = Shallower::new(0);
        s.note(12, 1_000);
        assert_eq!(s.moved(12, 8), None);
        for _ in 0..JUDGE_UNITS - 1 {
            s.note(12, 1_000);
        }
        // 3,000 events below positions 9 to 11 since position 8 took a step, 4,000 above.
        assert_eq!(s.moved(12, 2), Some(8));
    }

    #[test]
    fn the_depth_never_reaches_the_first_race() {
        let mut s = Shallower::new(11);
        for _ in 0..JUDGE_UNITS {
            s.note(12, 10_000);
        }
        assert_eq!(s.moved(12, 3), Some(11));
        for _ in 0..JUDGE_UNITS {
            s.note(11, 10_000);
        }
        assert_eq!(s.moved(11, 3), None, "11 is one below the first race");
    }

    #[test]
    fn units_large_on_average_keep_the_depth() {
        let mut s = Shallower::new(0);
        for e in [10, 10, 10, 4 * UNIT_EVENTS] {
            s.note(12, e);
        }
        assert_eq!(s.moved(12, 0), None);
    }
}
