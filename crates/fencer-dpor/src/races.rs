//! Reversing races: Source-DPOR's backtrack points, Optimal-DPOR's wakeup-tree insertions
//! (with what a later execution can reuse of them), races of threads blocked on a mutex,
//! and races whose reversal goes above a split unit's root.

use crate::engine::Dpor;
use crate::hb::Hb;
use crate::options::Algo;
use crate::weak::{Current, Lazy, Simulated, Weak};
use crate::{exact, wut};
use fencer_machine::{Access, State, Step};
use fencer_memory::MemoryModel;
use std::sync::Arc;

/// What the last reversal of a race showed, for the executions that keep the race (those
/// that replay past its `j`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Memo {
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

impl<'a, M: MemoryModel> Dpor<'a, M> {
    /// Collects race `(i, j)`, whose reversal goes above the root, for the top of a
    /// race-driven split.
    pub(crate) fn race_above(&mut self, i: usize, j: usize) {
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
    pub(crate) fn send_above(&mut self) {
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

    /// The execution ended with threads waiting for mutexes that others hold (for good: a
    /// holder that never unlocks). Each attempt races with the acquisition that blocks
    /// it, and the race must be reversed like any other, or the executions in which the
    /// waiting thread gets the mutex first are never explored.
    pub(crate) fn blocked_locks(&mut self, state: &State, end: usize) {
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
    pub(crate) fn reverse_races(&mut self) {
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
        let mut mins: Option<Vec<u32>> = None;
        order.extend((from..pending.len()).filter(|&n| match settled[n].1 {
            Memo::Open => true,
            Memo::Settled => false,
            Memo::Tail(last) => {
                last >= r || {
                    let m = mins.get_or_insert_with(|| hb.suffix_mins(r));
                    hb.notdep_by_mins(pending[n].0, r, m)
                }
            }
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
    pub(crate) fn add_backtrack(&mut self, i: usize, j: usize) {
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
