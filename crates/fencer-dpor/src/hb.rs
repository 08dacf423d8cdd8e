//! The happens-before relation of chronological traces, computed on the fly with vector
//! clocks (Appendix B of the paper; `../shared/notes/chronological-traces.md`), and the
//! races it exposes.

use fencer_ir::{FenceKind, Op, Program, Value};
use fencer_machine::{family, Event, EventKind, Step};
use fencer_memory::{Chan, Drain, Loc, MemoryModel};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::VecDeque;

/// One executed event. Its clock is kept apart (`Hb::clocks`), so that an event is
/// plain data: a thread running alone records thousands of events with no clock, and
/// truncating them then neither reads nor frees anything.
#[derive(Clone, Copy)]
struct Ev {
    step: Step,
    proc: u32,
    /// 1-based index of the event within its process.
    idx: u32,
    /// Index of its clock in `Hb::clocks` (and of its position in `Hb::clocked`), or
    /// `NO_CLOCK` for an event recorded alone.
    slot: u32,
}

const NO_CLOCK: u32 = u32::MAX;

#[derive(Default)]
struct LocInfo {
    /// The latest event that wrote memory at this location (an update, an RMW, or a store
    /// under SC).
    last_write: Option<usize>,
    /// Per thread, the latest load that read the location's current memory value.
    readers: Vec<usize>,
    /// The latest acquisition of the mutex: the latest write that found it free and left
    /// it held (a lock, or a store of a non-zero value: a hand-made lock), or a destroy.
    last_lock: Option<usize>,
    last_unlock: Option<usize>,
    /// Whether the mutex is held: the memory value is not zero (it is, as the machine
    /// enables a lock only on a zero value), held since `last_lock`.
    held: bool,
    /// Whether it was held before `last_write`.
    held_before: bool,
    /// Whether it is held before any write: its initial value is not zero (a mutex
    /// initialised held, or a word a hand-made lock starts out holding).
    held_init: bool,
}

/// The state of `loc`, made on first use.
fn loc_info<'a>(
    locs: &'a mut HashMap<Loc, LocInfo>,
    held_init: &HashSet<Loc>,
    loc: Loc,
) -> &'a mut LocInfo {
    locs.entry(loc).or_insert_with(|| {
        let held = held_init.contains(&loc);
        LocInfo {
            held,
            held_init: held,
            ..LocInfo::default()
        }
    })
}

impl Clone for LocInfo {
    fn clone(&self) -> LocInfo {
        let mut c = LocInfo::default();
        c.clone_from(self);
        c
    }

    /// Keeps `readers`' allocation: saving and restoring the relation copies every
    /// location's state, thousands of times a second.
    fn clone_from(&mut self, s: &LocInfo) {
        let LocInfo {
            last_write,
            readers,
            last_lock,
            last_unlock,
            held,
            held_before,
            held_init,
        } = s;
        self.last_write = *last_write;
        self.readers.clone_from(readers);
        self.last_lock = *last_lock;
        self.last_unlock = *last_unlock;
        self.held = *held;
        self.held_before = *held_before;
        self.held_init = *held_init;
    }
}

/// Makes `dst` a copy of `src`, reusing the allocations of the values whose keys both
/// have (a map's own `clone_from` clones every value afresh).
fn copy_map<K, V>(dst: &mut HashMap<K, V>, src: &HashMap<K, V>)
where
    K: Copy + Eq + std::hash::Hash,
    V: Clone,
{
    dst.retain(|k, d| match src.get(k) {
        Some(v) => {
            d.clone_from(v);
            true
        }
        None => false,
    });
    // Usually both have the same locations: only then is every one copied already.
    if dst.len() < src.len() {
        for (k, v) in src {
            dst.entry(*k).or_insert_with(|| v.clone());
        }
    }
}

impl LocInfo {
    /// Records a write of `value` to the location's memory, at `pos`.
    fn wrote(&mut self, pos: usize, value: Value) {
        self.last_write = Some(pos);
        self.readers.clear();
        self.held_before = self.held;
        self.held = value != 0;
        if self.held && !self.held_before {
            self.last_lock = Some(pos);
        }
    }
}

/// Mirror of one store-buffer entry: the store, and the latest load forwarded from it.
#[derive(Clone)]
struct BufRec {
    loc: Loc,
    store: usize,
    load: Option<usize>,
    /// How many store-store fences its thread had run before it.
    epoch: u32,
}

/// Under PSO, the updates of one thread by store-store epoch (the number of store-store
/// fences before the store): an update, or a read-modify-write, of epoch `e` waits for
/// every store of an older epoch, so it happens after their updates. Those all come
/// before it in every execution, in epoch order, so two clocks suffice.
#[derive(Clone, Default)]
struct Epochs {
    /// The epoch of the latest update.
    epoch: u32,
    /// The join of the clocks of the updates of older epochs.
    older: Vec<u32>,
    /// The join of the clocks of the updates of `epoch`.
    current: Vec<u32>,
}

impl Epochs {
    /// Orders `c`, an event of epoch `e`, after the updates of the older epochs.
    fn order(&mut self, c: &mut Vec<u32>, e: u32) {
        if e > self.epoch {
            let cur = std::mem::take(&mut self.current);
            join(&mut self.older, &cur);
            self.current = cur;
            self.current.clear();
            self.epoch = e;
        }
        join(c, &self.older);
    }
}

/// The location that stands for a heap object's life: every access to the object reads it
/// (the access faults once the object is freed, or before it is allocated) and its
/// allocation and `free` write it, so that they race with the accesses they could follow
/// or precede.
fn life(obj: u32) -> Loc {
    Loc {
        obj,
        index: u32::MAX,
    }
}

/// The count of spawned threads, which every spawn reads and writes: thread ids are
/// taken in spawn order. (No object has this id: object ids stay below 2^31.)
const SPAWNS: Loc = Loc {
    obj: u32::MAX,
    index: 0,
};

/// The location that says thread `child` exists: its spawn writes it, and a join of the
/// thread could have come before, and faulted.
fn spawned(child: u32) -> Loc {
    Loc {
        obj: u32::MAX - 1,
        index: child,
    }
}

/// The arrivals at one barrier: those of the current generation and of the one before
/// (an arrival races with the previous generation's: swapped, it would have been in it).
#[derive(Clone, Default)]
struct BarrierGens {
    /// Each arrival, and whether its serial result is used.
    current: Vec<(usize, bool)>,
    previous: Vec<usize>,
}

/// What orders passes of barriers: per barrier its generations, per thread the clock its
/// pass joins (every arrival of its generation), set when the last arrival comes.
#[derive(Clone, Default)]
struct Barriers {
    gens: HashMap<Loc, BarrierGens>,
    pass: HashMap<u32, Vec<u32>>,
}

impl Barriers {
    fn clear(&mut self) {
        self.gens.clear();
        self.pass.clear();
    }
}

#[derive(Default)]
pub struct Hb {
    /// Objects from this one on are heap objects (allocated at run time, may be freed).
    heap_from: u32,
    /// The cells of globals whose initial value is not zero.
    held_init: HashSet<Loc>,
    /// The program has mutex operations, so whether each word is held must be known
    /// also after the writes of a thread running alone ([`Hb::wrote_alone`]).
    tracks_held: bool,
    /// Dense process numbers, stable across executions.
    procs: HashMap<Step, u32>,
    /// The same for threads, by thread id (`u32::MAX`: none yet): looked up for every
    /// event, where the map's hashing cost as much as the rest of a lone thread's event.
    thread_procs: Vec<u32>,
    /// The step of each process number.
    proc_step: Vec<Step>,
    /// The update processes of each thread.
    aux_of: Vec<Vec<u32>>,
    pclock: Vec<Vec<u32>>,
    pcount: Vec<u32>,
    ev: Vec<Ev>,
    /// The positions of the events that have a clock (not recorded alone), in order:
    /// `notdep` scans these, not the long runs of a thread running alone between them.
    clocked: Vec<usize>,
    /// The clocks of the events of `clocked`, in the same order.
    clocks: Vec<Vec<u32>>,
    /// Clock vectors of truncated events, kept for reuse.
    spare: Vec<Vec<u32>>,
    locs: HashMap<Loc, LocInfo>,
    bufs: HashMap<(u32, Chan), VecDeque<BufRec>>,
    /// Per thread, the store-store fences it ran (PSO only).
    fences: Vec<u32>,
    /// Per thread, its updates by epoch (PSO, once the thread ran a store-store fence).
    epochs: Vec<Epochs>,
    scratch: Vec<u32>,
    /// Clocks of the lock events that race with the previous acquisition, without the
    /// release that orders them after it; and of the joins that race with their child's
    /// spawn, without the child: `(event, acquisition or spawn, clock)`. Only the
    /// reversal of that one race uses it; the event's other races (with the readers of
    /// the value a lock overwrites, with a forwarded load) keep the release before it.
    lock_clock: Vec<(usize, usize, Vec<u32>)>,
    cand_buf: Vec<usize>,
    found_buf: Vec<usize>,
    barriers: Barriers,
}

/// What [`Hb::restore`] needs to come back to the point of [`Hb::save`]: everything an
/// event changes but the events themselves, which later events never change (they are
/// truncated instead).
#[derive(Default)]
pub struct Saved {
    at: usize,
    pclock: Vec<Vec<u32>>,
    pcount: Vec<u32>,
    locs: HashMap<Loc, LocInfo>,
    bufs: HashMap<(u32, Chan), VecDeque<BufRec>>,
    fences: Vec<u32>,
    epochs: Vec<Epochs>,
    barriers: Barriers,
}

fn get(c: &[u32], i: u32) -> u32 {
    c.get(i as usize).copied().unwrap_or(0)
}

fn join(dst: &mut Vec<u32>, src: &[u32]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = (*d).max(*s);
    }
}

impl Hb {
    pub fn new(prog: &Program) -> Hb {
        let held_init = prog
            .objects
            .iter()
            .enumerate()
            .flat_map(|(obj, o)| {
                o.init
                    .iter()
                    .filter(|&&(_, v)| v != 0)
                    .map(move |&(index, _)| Loc {
                        obj: obj as u32,
                        index,
                    })
            })
            .collect();
        let tracks_held = prog.functions.iter().any(|f| {
            f.body.iter().any(|i| {
                matches!(
                    i.op,
                    Op::Lock(_) | Op::TryLock { .. } | Op::Unlock(_) | Op::MutexDestroy(_)
                )
            })
        });
        Hb {
            heap_from: prog.objects.len() as u32,
            held_init,
            tracks_held,
            ..Hb::default()
        }
    }

    /// Forgets the current execution (keeps process numbers and allocations).
    pub fn reset(&mut self) {
        self.clocked.clear();
        self.spare.append(&mut self.clocks);
        self.ev.clear();
        for c in &mut self.pclock {
            c.clear();
        }
        for n in &mut self.pcount {
            *n = 0;
        }
        // Reset in place: the per-location and per-buffer vectors keep their allocations.
        for info in self.locs.values_mut() {
            info.last_write = None;
            info.readers.clear();
            info.last_lock = None;
            info.last_unlock = None;
            info.held = info.held_init;
            info.held_before = false;
        }
        for q in self.bufs.values_mut() {
            q.clear();
        }
        self.fences.iter_mut().for_each(|n| *n = 0);
        for e in &mut self.epochs {
            e.epoch = 0;
            e.older.clear();
            e.current.clear();
        }
        for (_, _, c) in self.lock_clock.drain(..) {
            self.spare.push(c);
        }
        self.barriers.clear();
    }

    /// How many events the current execution has recorded.
    pub fn recorded(&self) -> usize {
        self.ev.len()
    }

    /// Saves the relation as it is now, into `to` (whose vectors are reused).
    pub fn save(&self, to: &mut Saved) {
        to.at = self.ev.len();
        to.pclock.clone_from(&self.pclock);
        to.pcount.clone_from(&self.pcount);
        copy_map(&mut to.locs, &self.locs);
        copy_map(&mut to.bufs, &self.bufs);
        to.fences.clone_from(&self.fences);
        to.epochs.clone_from(&self.epochs);
        to.barriers.clone_from(&self.barriers);
    }

    /// Comes back to the point of `s`, saved in this execution or in one that shares its
    /// events up to there. Processes first seen after it keep their numbers, with no
    /// events.
    pub fn restore(&mut self, s: &Saved) {
        let kept = self.clocked.partition_point(|&k| k < s.at);
        self.clocked.truncate(kept);
        self.spare.extend(self.clocks.drain(kept..));
        self.ev.truncate(s.at);
        for (i, c) in self.pclock.iter_mut().enumerate() {
            c.clear();
            if let Some(sc) = s.pclock.get(i) {
                c.extend_from_slice(sc);
            }
        }
        for (i, n) in self.pcount.iter_mut().enumerate() {
            *n = s.pcount.get(i).copied().unwrap_or(0);
        }
        copy_map(&mut self.locs, &s.locs);
        copy_map(&mut self.bufs, &s.bufs);
        for (i, n) in self.fences.iter_mut().enumerate() {
            *n = s.fences.get(i).copied().unwrap_or(0);
        }
        for (i, e) in self.epochs.iter_mut().enumerate() {
            match s.epochs.get(i) {
                Some(se) => e.clone_from(se),
                None => {
                    e.epoch = 0;
                    e.older.clear();
                    e.current.clear();
                }
            }
        }
        self.barriers.clone_from(&s.barriers);
        let mut k = 0;
        while k < self.lock_clock.len() {
            if self.lock_clock[k].0 >= s.at {
                let (_, _, c) = self.lock_clock.swap_remove(k);
                self.spare.push(c);
            } else {
                k += 1;
            }
        }
    }

    fn proc(&mut self, s: Step) -> u32 {
        if let Step::Thread(t) = s {
            if let Some(&p) = self.thread_procs.get(t as usize) {
                if p != u32::MAX {
                    return p;
                }
            }
        }
        if let Some(&p) = self.procs.get(&s) {
            return p;
        }
        let p = self.procs.len() as u32;
        self.procs.insert(s, p);
        if let Step::Thread(t) = s {
            let t = t as usize;
            if self.thread_procs.len() <= t {
                self.thread_procs.resize(t + 1, u32::MAX);
            }
            self.thread_procs[t] = p;
        }
        self.proc_step.push(s);
        self.pclock.push(Vec::new());
        self.pcount.push(0);
        if let Step::Update(t, _) = s {
            let t = t as usize;
            if self.aux_of.len() <= t {
                self.aux_of.resize(t + 1, Vec::new());
            }
            self.aux_of[t].push(p);
        }
        p
    }

    /// Orders `c`, an event of thread `tid` that waited for `d` of its buffers, after
    /// their updates. What waits for a channel is a read-modify-write, whose write also
    /// waits for the stores before the thread's store-store fences.
    fn drained(&mut self, c: &mut Vec<u32>, tid: u32, d: Drain) {
        match d {
            Drain::Nothing => return,
            Drain::All => self.join_aux(c, tid, None),
            Drain::Chan(ch) => {
                if let Some(&a) = self.procs.get(&Step::Update(tid, ch)) {
                    join(c, &self.pclock[a as usize]);
                }
            }
        }
        let epoch = self.fences.get(tid as usize).copied().unwrap_or(0);
        if epoch > 0 {
            self.epochs[tid as usize].order(c, epoch);
        }
    }

    fn join_aux(&self, c: &mut Vec<u32>, tid: u32, only: Option<u32>) {
        if let Some(aux) = self.aux_of.get(tid as usize) {
            for &a in aux {
                if only.is_none_or(|o| o == a) {
                    join(c, &self.pclock[a as usize]);
                }
            }
        }
    }

    /// The clock of process `p`'s `idx`-th event before its other predecessors join in
    /// (a reused vector: the hot path allocates nothing).
    fn next_clock(&mut self, p: u32, idx: u32) -> Vec<u32> {
        let mut c = self.spare_clock();
        c.extend_from_slice(&self.pclock[p as usize]);
        if c.len() <= p as usize {
            c.resize(p as usize + 1, 0);
        }
        c[p as usize] = idx;
        c
    }

    /// An empty clock vector, a spare one if there is one, with room for a clock of every
    /// process so far: clocks lengthen as threads start, and a spare one that had to
    /// grow was the commonest allocation of an execution.
    fn spare_clock(&mut self) -> Vec<u32> {
        let mut c = self.spare.pop().unwrap_or_default();
        c.clear();
        let want = self.pclock.len().max(8);
        if c.capacity() < want {
            c.reserve_exact(want.next_power_of_two());
        }
        c
    }

    /// Appends an event with its clock.
    #[inline]
    fn push_clocked(&mut self, step: Step, proc: u32, idx: u32, clock: Vec<u32>) {
        self.ev.push(Ev {
            step,
            proc,
            idx,
            slot: self.clocks.len() as u32,
        });
        self.clocked.push(self.ev.len() - 1);
        self.clocks.push(clock);
    }

    /// The clock of the event at `k` (empty for one recorded alone).
    #[inline]
    fn clock(&self, k: usize) -> &[u32] {
        match self.ev[k].slot {
            NO_CLOCK => &[],
            s => &self.clocks[s as usize],
        }
    }

    /// Whether the event at `a` happens before the event whose clock is `c`.
    fn covered(&self, a: usize, c: &[u32]) -> bool {
        get(c, self.ev[a].proc) >= self.ev[a].idx
    }

    /// Whether every event so far of a process outside thread `tid`'s family happens
    /// before `tid`'s next event: then, while `tid` runs alone, none of its events can
    /// race (see [`Hb::record_alone`]).
    pub fn covers_others(&mut self, tid: u32) -> bool {
        let p = self.proc(Step::Thread(tid)) as usize;
        let own = &self.pclock[p];
        (0..self.pcount.len())
            .all(|q| family(self.proc_step[q]) == tid || get(own, q as u32) >= self.pcount[q])
    }

    /// Whether the updates pending in thread `tid`'s buffers will race with nothing that
    /// has run: every event of another family that such an update's write would race
    /// with (the location's last write and its readers, and for a heap cell the last
    /// write of its object's life) happens before the store it writes back. Then, with
    /// [`Hb::covers_others`], the thread and its updates can run alone.
    pub fn pending_updates_covered(&self, tid: u32) -> bool {
        let covered_by = |a: Option<usize>, s: usize| {
            a.is_none_or(|a| family(self.ev[a].step) == tid || self.covered(a, self.clock(s)))
        };
        self.bufs
            .iter()
            .filter(|((t, _), _)| *t == tid)
            .all(|(_, q)| {
                q.iter().all(|r| {
                    let at = |l: &Loc| self.locs.get(l);
                    at(&r.loc).is_none_or(|i| {
                        covered_by(i.last_write, r.store)
                            && i.readers.iter().all(|&x| covered_by(Some(x), r.store))
                    }) && (r.loc.obj < self.heap_from
                        || at(&life(r.loc.obj)).is_none_or(|i| covered_by(i.last_write, r.store)))
                })
            })
    }

    /// Records an event of thread `tid` running alone: every other thread has finished,
    /// its buffers are empty and its events happen before this one ([`Hb::covers_others`]),
    /// and the event is a load, an unbuffered store or a read-modify-write. Such an event
    /// races with nothing, and nothing that runs later races with it or with anything
    /// before it: a thread spawned later, the thread's own updates and its later events
    /// all happen after it. So neither the per-location race state nor the event's clock
    /// is needed: its clock is left empty, never read, because a race `(i, j)` has `i`
    /// after the last such event, and clocks are only read between `i` and `j`. The
    /// process's own count and clock entry advance, so events recorded fully afterwards
    /// are ordered after it. (Whether a mutex is held is state, not a race: a write
    /// also calls [`Hb::wrote_alone`].)
    pub fn record_alone(&mut self, step: Step) {
        let p = self.proc(step);
        self.pcount[p as usize] += 1;
        let idx = self.pcount[p as usize];
        let own = &mut self.pclock[p as usize];
        if own.len() <= p as usize {
            own.resize(p as usize + 1, 0);
        }
        own[p as usize] = idx;
        self.ev.push(Ev {
            step,
            proc: p,
            idx,
            slot: NO_CLOCK,
        });
    }

    /// The event [`Hb::record_alone`] just recorded wrote `value` to `loc`'s memory: it
    /// races with nothing, but whether the mutex there is held is state a later lock
    /// depends on (a store made while it was held does not race with the lock).
    pub fn wrote_alone(&mut self, loc: Loc, value: Value) {
        if self.tracks_held {
            let pos = self.ev.len() - 1;
            loc_info(&mut self.locs, &self.held_init, loc).wrote(pos, value);
        }
    }

    /// Records the event just executed. Races found are appended to `races` as positions
    /// of the earlier event, when given. For a fault, `waited` says what of its thread's
    /// buffers it waited for ([`fencer_machine::State::waits`]; asked of faults only,
    /// other events say it themselves).
    pub fn record<M: MemoryModel>(
        &mut self,
        step: Step,
        e: &Event,
        waited: impl FnOnce() -> Drain,
        races: Option<&mut Vec<usize>>,
    ) {
        let pos = self.ev.len();
        let p = self.proc(step);
        let tid = family(step);
        self.pcount[p as usize] += 1;
        let idx = self.pcount[p as usize];
        let mut c = self.next_clock(p, idx);
        // Race candidates: direct predecessors by src, cf or uu edges from other processes.
        // (Buffers reused across events: the hot path allocates nothing.)
        let mut cand = std::mem::take(&mut self.cand_buf);
        cand.clear();
        let other = |me: &Hb, q: usize| family(me.ev[q].step) != tid;
        let mut lock_race = None;
        // Candidates that order this event without racing with it.
        let mut no_race = [None; 2];
        match &e.kind {
            EventKind::Load {
                loc,
                forwarded: true,
                ..
            } => {
                if let Some(ch) = M::channel(*loc) {
                    if let Some(q) = self.bufs.get_mut(&(tid, ch)) {
                        if let Some(r) = q.iter_mut().rev().find(|r| r.loc == *loc) {
                            r.load = Some(pos);
                        }
                    }
                }
            }
            EventKind::Load { loc, .. } => {
                let info = loc_info(&mut self.locs, &self.held_init, *loc);
                let w = info.last_write;
                if let Some(w) = w {
                    if other(self, w) {
                        cand.push(w);
                    }
                }
                self.add_reader(*loc, tid, pos);
            }
            EventKind::Store {
                loc,
                buffered: true,
                ..
            } => {
                let ch = M::channel(*loc).expect("buffered store has a channel");
                let epoch = self.fences.get(tid as usize).copied().unwrap_or(0);
                self.bufs.entry((tid, ch)).or_default().push_back(BufRec {
                    loc: *loc,
                    store: pos,
                    load: None,
                    epoch,
                });
            }
            EventKind::Store { loc, value, .. } => {
                self.write_cands(*loc, tid, &mut cand);
                loc_info(&mut self.locs, &self.held_init, *loc).wrote(pos, *value);
            }
            EventKind::Update { loc, value, .. } => {
                let Step::Update(_, ch) = step else {
                    unreachable!("updates are made by update processes")
                };
                let rec = self
                    .bufs
                    .get_mut(&(tid, ch))
                    .and_then(|q| q.pop_front())
                    .expect("buffer mirror matches the machine");
                join(&mut c, self.clock(rec.store));
                if rec.epoch > 0 {
                    self.epochs[tid as usize].order(&mut c, rec.epoch);
                }
                self.write_cands(*loc, tid, &mut cand);
                let info = loc_info(&mut self.locs, &self.held_init, *loc);
                info.wrote(pos, *value);
                info.readers.extend(rec.load);
            }
            EventKind::Rmw { loc, written, .. } => {
                self.drained(&mut c, tid, M::rmw_drain(*loc));
                if let Some(v) = written {
                    self.write_cands(*loc, tid, &mut cand);
                    loc_info(&mut self.locs, &self.held_init, *loc).wrote(pos, *v);
                } else {
                    let w = loc_info(&mut self.locs, &self.held_init, *loc).last_write;
                    if let Some(w) = w {
                        if other(self, w) {
                            cand.push(w);
                        }
                    }
                    self.add_reader(*loc, tid, pos);
                }
            }
            EventKind::Fence(FenceKind::Full) => self.join_aux(&mut c, tid, None),
            EventKind::Fence(FenceKind::StoreStore) => {
                // It waits for nothing; what it orders is the thread's later updates.
                if !M::STORES_IN_ORDER {
                    let t = tid as usize;
                    if self.fences.len() <= t {
                        self.fences.resize(t + 1, 0);
                    }
                    if self.epochs.len() <= t {
                        self.epochs.resize_with(t + 1, Epochs::default);
                    }
                    if self.fences[t] == 0 {
                        // Updates are recorded by epoch from the first fence on; those
                        // before it are all of epoch 0.
                        let mut cur = std::mem::take(&mut self.epochs[t].current);
                        self.join_aux(&mut cur, tid, None);
                        self.epochs[t].current = cur;
                    }
                    self.fences[t] += 1;
                }
            }
            EventKind::Lock {
                loc,
                trylock,
                destroy,
                ..
            } => {
                self.join_aux(&mut c, tid, None);
                let info = loc_info(&mut self.locs, &self.held_init, *loc);
                let (ll, lu, lw) = (info.last_lock, info.last_unlock, info.last_write);
                let held_before = info.held_before;
                // What read the value this overwrites (a faulting unlock or destroy, which
                // the sleep sets see dependent with it) races with it, as with a store.
                let ev = &self.ev;
                cand.extend(
                    info.readers
                        .iter()
                        .copied()
                        .filter(|&r| family(ev[r].step) != tid),
                );
                // The mutex's value, as a failed trylock reads it: held from here on (a
                // destroy leaves it free, but is the last acquisition all the same).
                info.wrote(pos, Value::from(!destroy));
                info.last_lock = Some(pos);
                // A store to the mutex (`pthread_mutex_init` after a destroy) decides
                // whether this faults: they race, as a load races with a store (also a
                // buffer's update of it: docs/design/splits.md, "A store to a mutex races with the locks after it"). Not a
                // store made while the mutex was held (an init of a held mutex, the
                // release of a hand-made lock): this lock cannot run just before it, and
                // its race with the acquisition puts it before both. (A trylock or a
                // destroy can, never waiting: there it fails.) (Such a store still
                // orders this lock, which read what it wrote.)
                let stored = lw.filter(|&w| Some(w) != ll && Some(w) != lu && other(self, w));
                cand.extend(stored);
                no_race[0] = stored.filter(|_| !trylock && !destroy && held_before);
                let stored = stored.filter(|_| no_race[0].is_none());
                // Consecutive acquisitions race unless ordered otherwise than through the
                // release between them. (The clock without the release is kept for the
                // event, not for the race, so not when the store's race needs the release:
                // the acquisition's reversal then keeps it too, which only orders more.)
                if let Some(l) = ll {
                    if other(self, l) && !self.covered(l, &c) {
                        lock_race = Some(l);
                        if stored.is_none() {
                            self.keep_reversed_clock(pos, l, &c);
                        }
                    }
                }
                match lu {
                    // A trylock that took the mutex just released could have run before
                    // the release, and failed: a race with the unlock, reversible because
                    // a trylock never waits. So could a destroy (it faults there).
                    Some(u) if (*trylock || *destroy) && other(self, u) => cand.push(u),
                    Some(u) => {
                        join(&mut c, self.clock(u));
                    }
                    None => {}
                }
            }
            EventKind::Unlock { loc, .. } => {
                self.join_aux(&mut c, tid, None);
                // A failed trylock that found the mutex held races with its release; so
                // does a store another thread made to the mutex while it was held (the
                // unlock never waits, and it writes).
                self.write_cands(*loc, tid, &mut cand);
                let info = loc_info(&mut self.locs, &self.held_init, *loc);
                info.wrote(pos, 0);
                info.last_unlock = Some(pos);
            }
            EventKind::TryLockFailed { loc, .. } => {
                self.join_aux(&mut c, tid, None);
                // It read the acquisition that holds the mutex, and races with it: taken
                // first, the trylock would have succeeded.
                self.read_at(*loc, tid, pos, &mut cand);
            }
            EventKind::Spawn { child } => {
                self.join_aux(&mut c, tid, None);
                // Spawns take thread ids in the order they run: each writes the count.
                self.write_cands(SPAWNS, tid, &mut cand);
                let info = loc_info(&mut self.locs, &self.held_init, SPAWNS);
                info.last_write = Some(pos);
                info.readers.clear();
                // A join of the id that faulted before this spawn races with it.
                self.write_cands(spawned(*child), tid, &mut cand);
                let info = loc_info(&mut self.locs, &self.held_init, spawned(*child));
                info.last_write = Some(pos);
                info.readers.clear();
            }
            EventKind::FailedJoin { child } => self.read_at(spawned(*child), tid, pos, &mut cand),
            EventKind::BarrierArrive {
                loc, serial_used, ..
            } => {
                // It waits for the thread's buffers, reads the store that initialised the
                // barrier (a later store races with it, as with a load), and races with
                // the arrivals of the generation before (swapped, it would have been in
                // that one instead), and with those of its own generation whose serial
                // result, or its own, the program reads (their order decides who can be
                // the last).
                self.join_aux(&mut c, tid, None);
                self.read_at(*loc, tid, pos, &mut cand);
                let ev = &self.ev;
                if let Some(g) = self.barriers.gens.get(loc) {
                    cand.extend(
                        g.previous
                            .iter()
                            .copied()
                            .filter(|&a| family(ev[a].step) != tid),
                    );
                    cand.extend(
                        g.current
                            .iter()
                            .filter(|&&(a, used)| {
                                family(ev[a].step) != tid && (*serial_used || used)
                            })
                            .map(|&(a, _)| a),
                    );
                }
            }
            EventKind::BarrierPass { .. } => {
                if let Some(pc) = self.barriers.pass.remove(&tid) {
                    join(&mut c, &pc);
                }
            }
            EventKind::Join { child } => {
                // Run before the spawn of its child, the join would have faulted (no
                // thread has the id yet): a race, unless something other than the child
                // orders the join after the spawn (as reading the id from memory does).
                let s = self.locs.get(&spawned(*child)).and_then(|i| i.last_write);
                if let Some(s) = s {
                    if other(self, s) && !self.covered(s, &c) {
                        lock_race = Some(s);
                        self.keep_reversed_clock(pos, s, &c);
                    }
                }
                let cp = self.proc(Step::Thread(*child));
                let cc = std::mem::take(&mut self.pclock[cp as usize]);
                join(&mut c, &cc);
                self.pclock[cp as usize] = cc;
                self.join_aux(&mut c, *child, None);
            }
            // A fault waited for the buffers its instruction waits for (the machine
            // enables it only then): without that order a reversal could run it
            // before its thread's own updates.
            EventKind::Failed | EventKind::FaultedAccess { .. } => {
                self.drained(&mut c, tid, waited())
            }
            EventKind::Alloc { .. } | EventKind::Free { .. } | EventKind::Assume => {}
        }
        match &e.kind {
            EventKind::Load { loc, .. }
            | EventKind::Store { loc, .. }
            | EventKind::Rmw { loc, .. }
            | EventKind::Lock { loc, .. }
            | EventKind::Unlock { loc, .. }
            | EventKind::TryLockFailed { loc, .. }
                if loc.obj >= self.heap_from =>
            {
                let l = life(loc.obj);
                self.read_at(l, tid, pos, &mut cand);
            }
            EventKind::FaultedAccess { loc, lock } => {
                // A lock that faulted on a freed mutex that was held when freed could not
                // have run before the free: it waits while the mutex is held. It races
                // with the acquisition instead, ordered after it through the free, as a
                // lock is through the release (nor does it race with a store made while
                // the mutex was held).
                if *lock && loc.index != u32::MAX {
                    if let Some(info) = self.locs.get(loc).filter(|i| i.held) {
                        let (ll, lw) = (info.last_lock, info.last_write);
                        no_race[0] = lw.filter(|&w| Some(w) != ll);
                        no_race[1] = self.locs.get(&life(loc.obj)).and_then(|i| i.last_write);
                        if let Some(l) = ll {
                            if other(self, l) && !self.covered(l, &c) {
                                lock_race = Some(l);
                                self.keep_reversed_clock(pos, l, &c);
                            }
                        }
                    }
                }
                // Had the free come later, this would have accessed the cell: it depends
                // on the cell's writers as a load would (a dependence that holds in some
                // state is a dependence).
                if loc.index != u32::MAX {
                    self.read_at(*loc, tid, pos, &mut cand);
                }
                let l = life(loc.obj);
                self.read_at(l, tid, pos, &mut cand);
            }
            // An allocation begins its object's life, as a free ends it: an access made
            // through a pointer to the object before it existed faulted, and races with
            // it (the sleep sets see the same: `Access::Alloc`).
            EventKind::Free { obj: Some(o) } | EventKind::Alloc { obj: o, .. } => {
                let l = life(*o);
                self.write_cands(l, tid, &mut cand);
                let info = loc_info(&mut self.locs, &self.held_init, l);
                info.last_write = Some(pos);
                info.readers.clear();
            }
            _ => {}
        }
        // A candidate races with this event unless another predecessor already orders it.
        let mut found = std::mem::take(&mut self.found_buf);
        found.clear();
        for (k, &a) in cand.iter().enumerate() {
            let ordered = self.covered(a, &c)
                || cand
                    .iter()
                    .enumerate()
                    .any(|(m, &b)| m != k && b != a && self.covered(a, self.clock(b)));
            if !ordered && !found.contains(&a) {
                found.push(a);
            }
        }
        for &a in &cand {
            join(&mut c, self.clock(a));
        }
        if no_race != [None; 2] || lock_race.is_some() {
            found.retain(|&a| !no_race.contains(&Some(a)) && Some(a) != lock_race);
            found.extend(lock_race);
        }
        if let EventKind::Spawn { child } = &e.kind {
            let cp = self.proc(Step::Thread(*child));
            self.pclock[cp as usize].clear();
            self.pclock[cp as usize].extend_from_slice(&c);
        }
        if let EventKind::Update { .. } = e.kind {
            if let Some(ep) = self.epochs.get_mut(tid as usize) {
                join(&mut ep.current, &c);
            }
        }
        if let EventKind::BarrierArrive {
            loc,
            arrived,
            count,
            serial_used,
            ..
        } = &e.kind
        {
            let g = self.barriers.gens.entry(*loc).or_default();
            if arrived < count {
                g.current.push((pos, *serial_used));
            } else {
                // The generation is complete: each of its threads passes after all of it.
                let all = std::mem::take(&mut g.current);
                let mut gen_clock = c.clone();
                for &(a, _) in &all {
                    join(&mut gen_clock, self.clock(a));
                }
                for &(a, _) in &all {
                    let t = family(self.ev[a].step);
                    self.barriers.pass.insert(t, gen_clock.clone());
                }
                self.barriers.pass.insert(tid, gen_clock);
                let g = self.barriers.gens.get_mut(loc).expect("just made");
                g.previous.clear();
                g.previous.extend(all.iter().map(|&(a, _)| a));
                g.previous.push(pos);
            }
        }
        self.pclock[p as usize].clear();
        self.pclock[p as usize].extend_from_slice(&c);
        self.push_clocked(step, p, idx, c);
        if let Some(r) = races {
            r.extend_from_slice(&found);
        }
        self.cand_buf = cand;
        self.found_buf = found;
    }

    /// An execution ended with thread `tid` waiting to lock `loc`, which another thread
    /// holds: the attempt races with that acquisition, although it never happened.
    /// Appends the attempt as a virtual last event (its clock is the thread's, after its
    /// buffers) and returns the positions of the acquisition and the attempt, unless the
    /// acquisition happens before the attempt anyway.
    pub fn blocked_lock(&mut self, tid: u32, loc: Loc) -> Option<(usize, usize)> {
        let step = Step::Thread(tid);
        let l = self.locs.get(&loc)?.last_lock?;
        if family(self.ev[l].step) == tid {
            return None;
        }
        let p = self.proc(step);
        let idx = self.pcount[p as usize] + 1;
        let mut c = self.next_clock(p, idx);
        self.join_aux(&mut c, tid, None);
        if self.covered(l, &c) {
            self.spare.push(c);
            return None;
        }
        let pos = self.ev.len();
        self.keep_reversed_clock(pos, l, &c);
        self.push_clocked(step, p, idx, c);
        Some((l, pos))
    }

    /// Keeps `c` as the clock of the event at `pos` once it is moved before the event at
    /// `i`, with which it races (see [`Hb::before_reversed`]).
    fn keep_reversed_clock(&mut self, pos: usize, i: usize, c: &[u32]) {
        let mut saved = self.spare_clock();
        saved.extend_from_slice(c);
        self.lock_clock.push((pos, i, saved));
    }

    /// Forgets the virtual event [`Hb::blocked_lock`] appended at `pos`.
    pub fn drop_virtual(&mut self, pos: usize) {
        debug_assert_eq!(pos + 1, self.ev.len());
        self.ev.pop();
        if self.clocked.last() == Some(&pos) {
            self.clocked.pop();
            self.spare.extend(self.clocks.pop());
        }
        if let Some(k) = self.lock_clock.iter().position(|(p, _, _)| *p == pos) {
            let (_, _, c) = self.lock_clock.swap_remove(k);
            self.spare.push(c);
        }
    }

    /// The event at `pos` of thread `tid` reads `loc`: the write it read is a race
    /// candidate, and it is a reader of the current value.
    fn read_at(&mut self, loc: Loc, tid: u32, pos: usize, cand: &mut Vec<usize>) {
        let w = loc_info(&mut self.locs, &self.held_init, loc).last_write;
        if let Some(w) = w {
            if family(self.ev[w].step) != tid && !cand.contains(&w) {
                cand.push(w);
            }
        }
        self.add_reader(loc, tid, pos);
    }

    fn add_reader(&mut self, loc: Loc, tid: u32, pos: usize) {
        let ev = &self.ev;
        let info = loc_info(&mut self.locs, &self.held_init, loc);
        info.readers.retain(|&r| family(ev[r].step) != tid);
        info.readers.push(pos);
    }

    /// Race candidates of a memory write at `loc` by thread `tid`: the previous write and
    /// the loads of the current value, from other threads.
    fn write_cands(&mut self, loc: Loc, tid: u32, cand: &mut Vec<usize>) {
        let info = loc_info(&mut self.locs, &self.held_init, loc);
        if let Some(w) = info.last_write {
            if family(self.ev[w].step) != tid {
                cand.push(w);
            }
        }
        for &r in &info.readers {
            if family(self.ev[r].step) != tid {
                cand.push(r);
            }
        }
    }

    /// The processes that can start `notdep(i).j`: the events after `i` that do not happen
    /// after it, followed by `j`, restricted to those with no predecessor among them.
    pub fn initials(&mut self, i: usize, j: usize) -> Vec<Step> {
        let (pi, ii) = (self.ev[i].proc, self.ev[i].idx);
        let n = self.procs.len();
        self.scratch.clear();
        self.scratch.resize(n, u32::MAX);
        let mut seen: Vec<u32> = Vec::new();
        let mut out = Vec::new();
        for k in i + 1..=j {
            let e = self.ev[k];
            let clock = self.clock(k);
            if k < j && get(clock, pi) >= ii {
                continue;
            }
            if self.scratch[e.proc as usize] != u32::MAX {
                continue;
            }
            let has_pred = seen
                .iter()
                .any(|&r| get(clock, r) >= self.scratch[r as usize]);
            self.scratch[e.proc as usize] = e.idx;
            seen.push(e.proc);
            if !has_pred {
                out.push(e.step);
            }
        }
        out
    }
}

impl Hb {
    pub fn step(&self, k: usize) -> Step {
        self.ev[k].step
    }

    /// Whether the event at `a` happens before the event at `b` (`a < b`).
    pub fn before(&self, a: usize, b: usize) -> bool {
        self.covered(a, self.clock(b))
    }

    /// `notdep(i).j` as the paper and Nidhugg build it: the events after `i` that do not
    /// happen after it, in execution order, followed by `j`. Written to `out` as
    /// positions. The events after `j` belong in it: they carry the rest of the
    /// execution's trace into the wakeup sequence (with `v` cut at `j`, a sleeping process
    /// that commutes with `v` but not with what follows it hid traces the property test
    /// then found missing). None of them happens after `j` (it would happen after `i`), so
    /// each can run before `j`. An event recorded alone (no clock) happens after `i`:
    /// every event of another family, and its own thread's, happens before it, and an
    /// update of its thread that races with `j` happens before `j`, which does too.
    ///
    /// Why the clocks of the current execution order `v` exactly: `(i, j)` is a reversible
    /// race, so no event between them both follows `i` and precedes `j`; every path in the
    /// happens-before relation among the events of `v` stays inside `v`. The exceptions are
    /// a lock racing with the previous acquisition, ordered after it through the release
    /// between them, and a join racing with its child's spawn, ordered after it through the
    /// child: [`Hb::before_reversed`] leaves that release, or that child, out.
    ///
    /// With `to_j`, the events after `j` are left out (`notdep` cut at `j`, as used with
    /// initials alone, where a sleeping process covers `v` only by having an event in it).
    pub fn notdep(&self, i: usize, j: usize, to_j: bool, out: &mut Vec<usize>) {
        out.clear();
        let (pi, ii) = (self.ev[i].proc, self.ev[i].idx);
        let end = if to_j { j } else { self.ev.len() };
        let from = self.clocked.partition_point(|&k| k <= i);
        for &k in &self.clocked[from..] {
            if k >= end {
                break;
            }
            let c = self.clock(k);
            if k != j && !c.is_empty() && get(c, pi) < ii {
                out.push(k);
            }
        }
        out.push(j);
    }

    /// Whether an event at position `from` or later (past `i`) is not after the one at `i`,
    /// and so in `notdep(i)` (events recorded alone count as after it, as there).
    pub fn notdep_from(&self, i: usize, from: usize) -> bool {
        let (pi, ii) = (self.ev[i].proc, self.ev[i].idx);
        let at = self.clocked.partition_point(|&k| k < from.max(i + 1));
        self.clocked[at..].iter().any(|&k| {
            let c = self.clock(k);
            !c.is_empty() && get(c, pi) < ii
        })
    }

    /// For [`Hb::notdep_from`] asked of many events before one `from`: per process, the
    /// least entry for it among the clocks of the events at `from` or later (an entry a
    /// clock lacks is 0; events recorded alone are left out, as there). One pass over
    /// those events answers every question (`notdep_by_mins`), where asking each scanned
    /// them again: an execution re-judges every race of its replayed prefix, and a long
    /// one has thousands (GenMC's `pgsql` at the default depth: 59% of the time).
    pub fn suffix_mins(&self, from: usize) -> Vec<u32> {
        let mut mins = vec![u32::MAX; self.procs.len()];
        let at = self.clocked.partition_point(|&k| k < from);
        for &k in &self.clocked[at..] {
            let c = self.clock(k);
            if c.is_empty() {
                continue;
            }
            for (p, m) in mins.iter_mut().enumerate() {
                *m = (*m).min(get(c, p as u32));
            }
        }
        mins
    }

    /// [`Hb::notdep_from`]`(i, from)` for an `i` before `from`, from
    /// [`Hb::suffix_mins`]`(from)`.
    pub fn notdep_by_mins(&self, i: usize, from: usize, mins: &[u32]) -> bool {
        let (pi, ii) = (self.ev[i].proc, self.ev[i].idx);
        let by_mins = match mins.get(pi as usize) {
            Some(&m) if i < from => m < ii,
            _ => self.notdep_from(i, from),
        };
        debug_assert_eq!(by_mins, self.notdep_from(i, from));
        by_mins
    }

    /// Whether the event at `a` happens before the one at `b` in `notdep(i).j`, the
    /// sequence where the event at `j` is moved before the event at `i`, with which it
    /// races.
    pub fn before_in_reversal(&self, (i, j): (usize, usize), a: usize, b: usize) -> bool {
        if b == j {
            self.before_reversed(a, i, j)
        } else {
            self.before(a, b)
        }
    }

    /// The process and the index in it of the event at `k`.
    pub fn proc_idx(&self, k: usize) -> (u32, u32) {
        (self.ev[k].proc, self.ev[k].idx)
    }

    /// The clock that says what happens before the event at `b` in `notdep(i).j`
    /// ([`Hb::before_in_reversal`]): an event `a` does if the clock's entry for its
    /// process is at least its index.
    pub fn clock_in_reversal(&self, (i, j): (usize, usize), b: usize) -> &[u32] {
        if b == j {
            if let Some((_, _, c)) = self.lock_clock.iter().find(|(p, r, _)| *p == j && *r == i) {
                return c;
            }
        }
        self.clock(b)
    }

    /// Whether the event at `a` happens before the one at `j` once `j` is moved before
    /// the event at `i`, with which it races.
    pub fn before_reversed(&self, a: usize, i: usize, j: usize) -> bool {
        match self.lock_clock.iter().find(|(p, r, _)| *p == j && *r == i) {
            Some((_, _, c)) => self.covered(a, c),
            None => self.before(a, j),
        }
    }
}
