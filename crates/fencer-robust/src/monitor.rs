//! The SC-violation monitors of Burnim, Sen and Stergiou (`monitor_TSO`, `monitor_PSO`,
//! their Figures 4 and 5), run on the sequentially consistent executions the DPOR engine
//! explores.
//!
//! The paper's monitor simulates a TSO (PSO) execution along one SC execution, committing
//! each buffered store as late as the SC execution allows, and reports a pair `(e', e)`
//! when `e` accesses the location of a store `e'` of another thread that is still
//! pending and `e' ->hb* prev(e)`. Whether `e'` is still pending depends on the order in
//! which the SC execution happens to interleave independent events, but DPOR explores one
//! SC execution per trace. So this module evaluates the monitor's condition on the trace
//! itself: `e'` is reported for `e` iff *some* interleaving of the trace leaves `e'`
//! pending at `e`. The interleaving that does if any does runs, in order, everything
//! before `e` that is not after `e'`, then `e'`, then `I` (the events after `e'` and
//! before `e`), then `e`. Every event of `I` lies between `e'` and `e` in every
//! interleaving, and nothing else does in that one; so `e'` is pending at `e` in some
//! interleaving iff no event of `I` commits it. An event `g` of `I` commits `e'` when
//!
//! - `g` is a buffer-draining operation of `e'`'s thread (fence, lock, unlock, trylock,
//!   spawn; under TSO also any read-modify-write), or a join of that thread;
//! - TSO: `g`, of another thread, accesses a location to which `e'`'s thread has a store
//!   at or after `e'` that happens before `g` (the paper's line 11 flushes the FIFO up to
//!   the last such store);
//! - PSO: `g`, of another thread, accesses `e'`'s location (or is a read-modify-write of
//!   it by `e'`'s thread);
//! - PSO with store-store fences: `g` commits a store of `e'`'s thread issued after a
//!   store-store fence that follows `e'` (stores leave the buffers epoch by epoch), or `g`
//!   is a read-modify-write of `e'`'s thread after such a fence (its write waits for the
//!   older epochs). Both are tracked like TSO's commits: the commit vector's entry for the
//!   thread moves up to that fence.
//!
//! These are tracked with vector clocks alongside the happens-before clocks: a second
//! vector per clock carries, for each thread, the latest of its stores that some event
//! happening before here would have committed. The result is the union of the paper's
//! reports over every SC execution of the trace, in O(N * P) per execution plus the pairs
//! reported; with DPOR exploring every trace, the paper's completeness theorem (which
//! speaks of all SC executions) carries over. docs/design/robustness.md gives the argument.

use crate::trace::{access, faulted_read, read_of};
use fencer_ir::FenceKind;
use fencer_machine::{Event, EventId, EventKind, Step};
use fencer_memory::Loc;
use rustc_hash::FxHashMap;

#[derive(Default)]
struct LocState {
    /// Happens-before clock of the last write, and the join of the reads since.
    w_vc: Vec<u32>,
    r_vc: Vec<u32>,
    /// The same for the commit vectors.
    w_kb: Vec<u32>,
    r_kb: Vec<u32>,
    /// TSO: per thread, the indices of its plain stores here, in order.
    stores: Vec<Vec<u32>>,
    /// PSO: the thread that wrote here last, its plain stores since another thread (or
    /// its own read-modify-write) wrote here, and the other threads' reads since, as
    /// (thread, index, how many of those stores were before the read).
    owner: Option<u32>,
    run: Vec<u32>,
    reads: Vec<(u32, u32, usize)>,
    /// The owner's failed compare-and-swaps here since: each drains its buffer here.
    drains: Vec<u32>,
    /// Whether any write has been here in this execution.
    written: bool,
    used: bool,
}

/// A monitor, reusable across executions (its buffers are kept).
pub struct Monitor {
    pso: bool,
    n: usize,
    vc: Vec<Vec<u32>>,
    kb: Vec<Vec<u32>>,
    /// Per thread, the indices of its buffer-draining events.
    flushes: Vec<Vec<u32>>,
    /// Per thread, the indices of its store-store fences (PSO).
    ss_fences: Vec<Vec<u32>>,
    /// Per location (numbered in `loc_ids`), kept across executions.
    locs: Vec<LocState>,
    /// Location numbers: by object and cell for the usual small ones (no hashing on the
    /// hot path), by hash for the rest (huge arrays, the allocator's own locations).
    dense_ids: Vec<Vec<u32>>,
    loc_ids: FxHashMap<Loc, usize>,
    c: Vec<u32>,
    k: Vec<u32>,
}

fn join(into: &mut [u32], from: &[u32]) {
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

fn fit(v: &mut Vec<u32>, n: usize) {
    v.clear();
    v.resize(n, 0);
}

impl Monitor {
    pub fn new(pso: bool) -> Monitor {
        Monitor {
            pso,
            n: 0,
            vc: Vec::new(),
            kb: Vec::new(),
            flushes: Vec::new(),
            ss_fences: Vec::new(),
            locs: Vec::new(),
            dense_ids: Vec::new(),
            loc_ids: FxHashMap::default(),
            c: Vec::new(),
            k: Vec::new(),
        }
    }

    fn reset(&mut self, n: usize) {
        self.n = n;
        for v in [&mut self.vc, &mut self.kb] {
            v.resize_with(n.max(v.len()), Vec::new);
            for x in v.iter_mut() {
                fit(x, n);
            }
        }
        self.flushes
            .resize_with(n.max(self.flushes.len()), Vec::new);
        for f in &mut self.flushes {
            f.clear();
        }
        self.ss_fences
            .resize_with(n.max(self.ss_fences.len()), Vec::new);
        for f in &mut self.ss_fences {
            f.clear();
        }
        for l in self.locs.iter_mut() {
            if !l.used {
                continue;
            }
            l.used = false;
            fit(&mut l.w_vc, n);
            fit(&mut l.r_vc, n);
            fit(&mut l.w_kb, n);
            fit(&mut l.r_kb, n);
            l.stores.resize_with(n, Vec::new);
            for s in &mut l.stores {
                s.clear();
            }
            l.owner = None;
            l.written = false;
            l.run.clear();
            l.reads.clear();
            l.drains.clear();
        }
    }

    fn loc(&mut self, loc: Loc) -> usize {
        let n = self.n;
        let next = self.locs.len();
        let (o, c) = (loc.obj as usize, loc.index as usize);
        let i = if o < 1 << 16 && c < 1 << 12 {
            if self.dense_ids.len() <= o {
                self.dense_ids.resize_with(o + 1, Vec::new);
            }
            let ids = &mut self.dense_ids[o];
            if ids.len() <= c {
                ids.resize(c + 1, u32::MAX);
            }
            if ids[c] == u32::MAX {
                ids[c] = next as u32;
            }
            ids[c] as usize
        } else {
            *self.loc_ids.entry(loc).or_insert(next)
        };
        if i == next {
            self.locs.push(LocState::default());
        }
        let l = &mut self.locs[i];
        if !l.used {
            l.used = true;
            if l.w_vc.len() != n {
                fit(&mut l.w_vc, n);
                fit(&mut l.r_vc, n);
                fit(&mut l.w_kb, n);
                fit(&mut l.r_kb, n);
                l.stores.resize_with(n, Vec::new);
            }
        }
        i
    }

    /// The last store-store fence of thread `p` before its event `before`: every store of
    /// `p` before it reaches memory before any store of `p` after it.
    fn last_ss_fence(&self, p: usize, before: u32) -> Option<u32> {
        let f = &self.ss_fences[p];
        let k = f.partition_point(|&x| x < before);
        (k > 0).then(|| f[k - 1])
    }

    /// The last buffer-draining event of thread `p` among its first `upto` events.
    fn last_flush(&self, p: usize, upto: u32) -> Option<u32> {
        let f = &self.flushes[p];
        let k = f.partition_point(|&x| x < upto);
        (k > 0).then(|| f[k - 1])
    }

    /// Runs the monitor over one SC execution of `n` threads and calls `report(store, at)` for every
    /// store `store` that some SC execution of this trace still holds in a buffer when
    /// the event at position `at` overtakes it.
    pub fn run(&mut self, n: usize, events: &[Event], mut report: impl FnMut(EventId, usize)) {
        self.reset(n);
        let mut c = std::mem::take(&mut self.c);
        let mut k = std::mem::take(&mut self.k);
        for (i, e) in events.iter().enumerate() {
            debug_assert!(matches!(e.step, Step::Thread(_)), "the monitor runs on SC");
            let t = e.id.thread as usize;
            let idx = e.id.index;
            let mut acc = access(&e.kind);
            if let Some(l) = faulted_read(&e.kind) {
                let li = self.loc(l);
                if !self.locs[li].written {
                    acc = Some(read_of(l));
                }
            }
            let sync = matches!(e.kind, EventKind::Join { .. } | EventKind::Spawn { .. });
            if acc.is_none() && !sync {
                // Nothing but program order: the thread's clock moves, nothing else does.
                self.vc[t][t] = idx + 1;
                match e.kind {
                    EventKind::Fence(FenceKind::Full) => self.flushes[t].push(idx),
                    EventKind::Fence(FenceKind::StoreStore) if self.pso => {
                        self.ss_fences[t].push(idx)
                    }
                    _ => {}
                }
                continue;
            }
            c.clear();
            c.extend_from_slice(&self.vc[t]);
            k.clear();
            k.extend_from_slice(&self.kb[t]);
            if let EventKind::Join { child } = e.kind {
                let ch = child as usize;
                if ch < n {
                    join(&mut c, &self.vc[ch]);
                    join(&mut k, &self.kb[ch]);
                }
            }
            let li = acc.map(|a| self.loc(a.loc));
            if let (Some(a), Some(li)) = (acc, li) {
                let l = &self.locs[li];
                join(&mut c, &l.w_vc);
                join(&mut k, &l.w_kb);
                if a.write {
                    join(&mut c, &l.r_vc);
                    join(&mut k, &l.r_kb);
                }
                // `c` and `k` now cover exactly the events that happen before `e`.
                self.candidates(t, li, &c, &k, &mut |s| {
                    report(s, i);
                });
            }
            // The event's own clock and commit vector.
            c[t] = idx + 1;
            if let EventKind::Join { child } = e.kind {
                if (child as usize) < n {
                    k[child as usize] = u32::MAX;
                }
            }
            let pso = self.pso;
            if pso && matches!(e.kind, EventKind::Rmw { .. }) {
                // Its write waited for the stores before the thread's last store-store
                // fence.
                if let Some(f) = self.last_ss_fence(t, idx) {
                    k[t] = k[t].max(f);
                }
            }
            if let (Some(a), Some(li)) = (acc, li) {
                if pso {
                    // Committing another thread's stores here commits what it issued
                    // before the store-store fence before the last of them.
                    for (p, kp) in k.iter_mut().enumerate().take(n) {
                        if p != t {
                            if let Some(&last) = self.locs[li].stores[p].last() {
                                if let Some(f) = self.last_ss_fence(p, last) {
                                    *kp = (*kp).max(f);
                                }
                            }
                        }
                    }
                }
                let l = &mut self.locs[li];
                if !pso {
                    for (p, st) in l.stores.iter().enumerate() {
                        if p != t {
                            if let Some(&last) = st.last() {
                                k[p] = k[p].max(last + 1);
                            }
                        }
                    }
                }
                if a.read {
                    join(&mut l.r_vc, &c);
                    join(&mut l.r_kb, &k);
                }
                if a.write {
                    l.written = true;
                    l.w_vc.copy_from_slice(&c);
                    l.w_kb.copy_from_slice(&k);
                    l.r_vc.iter_mut().for_each(|x| *x = 0);
                    l.r_kb.iter_mut().for_each(|x| *x = 0);
                }
                if a.store {
                    l.stores[t].push(idx);
                }
                if pso {
                    let own = l.owner == Some(t as u32);
                    if a.write {
                        // A write here happens before every later access here: what was
                        // buffered before it is committed for all of them.
                        if !(a.store && own) {
                            l.owner = Some(t as u32);
                            l.run.clear();
                            l.reads.clear();
                            l.drains.clear();
                        }
                        if a.store {
                            l.run.push(idx);
                        }
                    } else if own && matches!(e.kind, EventKind::Rmw { .. }) {
                        // The owner's failed compare-and-swap drains its buffer for this
                        // location, but only events after it are ordered after it (the
                        // property test found the run cleared for a read it was
                        // unordered with).
                        l.drains.push(idx);
                    } else if a.read && !own && l.owner.is_some() {
                        l.reads.push((t as u32, idx, l.run.len()));
                    }
                }
            }
            let drains = match e.kind {
                EventKind::Fence(FenceKind::Full)
                | EventKind::Lock { .. }
                | EventKind::Unlock { .. }
                | EventKind::TryLockFailed { .. }
                | EventKind::Spawn { .. } => true,
                EventKind::Rmw { .. } => !pso,
                _ => false,
            };
            if drains {
                self.flushes[t].push(idx);
            }
            if let EventKind::Spawn { child } = e.kind {
                let ch = child as usize;
                if ch < n {
                    self.vc[ch].copy_from_slice(&c);
                    self.kb[ch].copy_from_slice(&k);
                }
            }
            self.vc[t].copy_from_slice(&c);
            self.kb[t].copy_from_slice(&k);
        }
        self.c = c;
        self.k = k;
    }

    /// The stores of other threads that `e` (thread `t`, access `a`, with happens-before
    /// clock `c` and commit vector `k` over its predecessors) can overtake.
    fn candidates(&self, t: usize, li: usize, c: &[u32], k: &[u32], out: &mut dyn FnMut(EventId)) {
        let prev = &self.vc[t];
        let l = &self.locs[li];
        let window = |p: usize| -> (u32, u32) {
            // Stores at or after `lo` survive the draining events and joins before `e`;
            // those before `hi` happen before `prev(e)`.
            let lo = self
                .last_flush(p, c[p])
                .map_or(0, |f| f + 1)
                .max(if k[p] == u32::MAX { u32::MAX } else { k[p] });
            (lo, prev[p])
        };
        if self.pso {
            let Some(p) = l.owner.map(|o| o as usize) else {
                return;
            };
            if p == t {
                return;
            }
            let seen = l
                .reads
                .iter()
                .filter(|&&(q, ridx, _)| c[q as usize] > ridx)
                .map(|&(_, _, cnt)| cnt)
                .max()
                .unwrap_or(0);
            let (mut lo, hi) = window(p);
            let k = l.drains.partition_point(|&d| d < c[p]);
            if k > 0 {
                lo = lo.max(l.drains[k - 1] + 1);
            }
            for &s in &l.run[seen..] {
                if s >= lo && s < hi {
                    out(EventId {
                        thread: p as u32,
                        index: s,
                    });
                }
            }
        } else {
            for (p, st) in l.stores.iter().enumerate() {
                if p == t || st.is_empty() {
                    continue;
                }
                let (lo, hi) = window(p);
                let from = st.partition_point(|&s| s < lo);
                for &s in &st[from..] {
                    if s >= hi {
                        break;
                    }
                    out(EventId {
                        thread: p as u32,
                        index: s,
                    });
                }
            }
        }
    }
}
