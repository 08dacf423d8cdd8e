//! The trace of an execution under any model and its happens-before relation (Burnim, Sen,
//! Stergiou, Definitions 2-3): program order, reads-from, store order and from-reads over
//! the real threads' events. A trace is sequentially consistent iff this relation is
//! acyclic (their Proposition 1). This is the exhaustive method's judge, and it checks
//! every witness the monitors produce, so it is written to be plainly right: one graph,
//! one strongly-connected-components pass, breadth-first searches for the explanations.

use fencer_ir::FenceKind;
use fencer_machine::{Event, EventId, EventKind, ReadFrom, Step};
use fencer_memory::{Loc, ModelKind};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A happens-before edge, by the relation it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edge {
    /// Program order, and thread creation and joining (a thread's first event is after
    /// its spawn; a join is after the joined thread's last event).
    Po,
    /// Reads-from: a write and a read that takes its value.
    Rf,
    /// Store order: consecutive writes to one location, in the order they reached memory.
    Co,
    /// From-read: a read and the first write to its location after the one it read.
    Fr,
}

impl Edge {
    pub fn name(self) -> &'static str {
        match self {
            Edge::Po => "po",
            Edge::Rf => "rf",
            Edge::Co => "co",
            Edge::Fr => "fr",
        }
    }
}

/// The count of spawned threads, as a location: every spawn reads and writes it, since
/// threads take ids in the order their spawns run (a spawn of another thread does not
/// commute with it). No object has this id: object ids stay below 2^31.
pub const SPAWNS: Loc = Loc {
    obj: u32::MAX,
    index: 0,
};
/// The object number of the locations that stand for heap objects' lives.
const LIFE: u32 = u32::MAX - 1;

/// The location that stands for heap object `obj`'s life: its allocation and its frees
/// write it.
fn life(obj: u32) -> Loc {
    Loc {
        obj: LIFE,
        index: obj,
    }
}

/// How an event touches memory, as far as traces are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acc {
    pub loc: Loc,
    pub read: bool,
    pub write: bool,
    /// A plain store: the only write a store buffer can hold back.
    pub store: bool,
}

/// The cell an access that faulted would have read (an uninitialised cell, or a freed
/// object's). Before any write to the cell has reached memory, it read the cell's initial
/// state, and it counts as a read of the initial value: reading memory no store has yet
/// reached is exactly what a delayed initialisation looks like on PSO. After one, it is a
/// use after free, which reads nothing.
pub fn faulted_read(kind: &EventKind) -> Option<Loc> {
    match *kind {
        EventKind::FaultedAccess { loc, .. } if loc.index != u32::MAX => Some(loc),
        _ => None,
    }
}

/// A read of `loc` (for [`faulted_read`]).
pub fn read_of(loc: Loc) -> Acc {
    Acc {
        loc,
        read: true,
        write: false,
        store: false,
    }
}

/// The memory access of an event, if it has one. Mutex operations read and write their
/// mutex; a failed trylock or compare-and-swap only reads. The trace must agree with
/// DPOR's clocks on which events commute: an edge between events that commute holds in
/// one execution of a trace and not in another, and both methods judge one execution per
/// trace; a missing edge between events that do not commute hides cycles.
pub fn access(kind: &EventKind) -> Option<Acc> {
    let a = |loc: Loc, read, write, store| {
        Some(Acc {
            loc,
            read,
            write,
            store,
        })
    };
    match *kind {
        EventKind::Load { loc, .. } | EventKind::TryLockFailed { loc, .. } => {
            a(loc, true, false, false)
        }
        EventKind::Store { loc, .. } => a(loc, false, true, true),
        EventKind::Rmw { loc, written, .. } => a(loc, true, written.is_some(), false),
        EventKind::Lock { loc, .. } | EventKind::Unlock { loc, .. } => a(loc, true, true, false),
        // An allocation begins its object's life and a free ends it: both act on the
        // object's life location, like writes that no buffer holds back, so a free is
        // ordered after the allocation and the other frees of its object. Allocations of
        // different objects commute: an object's identity is its thread and that
        // thread's allocation count, never a global count, so no location orders them
        // (the machine's `dependent` and DPOR's clocks say the same; an allocator
        // location here once made cycles of traces that are sequentially consistent).
        EventKind::Alloc { obj, .. } => a(life(obj), false, true, false),
        EventKind::Free { obj: Some(o) } => a(life(o), true, true, false),
        EventKind::Spawn { .. } => a(SPAWNS, true, true, false),
        _ => None,
    }
}

/// What an event does to the order in which its thread's events take effect in memory
/// (a load when it reads, a store when it leaves the buffer): the model's preserved
/// program order, as far as [`Graph::overtaking_from`] needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ppo {
    /// A buffered store: it takes effect later than it runs.
    Store(Loc),
    /// A store-store fence: under PSO the thread's later stores (and read-modify-writes)
    /// take effect after its earlier ones; it waits for nothing.
    StoreFence,
    /// Runs with every buffer of the thread empty (a full fence, spawn, lock, unlock,
    /// trylock).
    Drain,
    /// A read-modify-write: under TSO it drains the thread's buffer, under PSO the buffer
    /// of its location.
    Rmw(Loc),
    /// Anything else (loads, joins, allocations, ...): it takes effect when it runs.
    Other,
}

fn ppo_of(kind: &EventKind) -> Ppo {
    match *kind {
        EventKind::Store {
            loc,
            buffered: true,
            ..
        } => Ppo::Store(loc),
        EventKind::Fence(FenceKind::StoreStore) => Ppo::StoreFence,
        EventKind::Fence(FenceKind::Full)
        | EventKind::Spawn { .. }
        | EventKind::Lock { .. }
        | EventKind::Unlock { .. }
        | EventKind::TryLockFailed { .. } => Ppo::Drain,
        EventKind::Rmw { loc, .. } => Ppo::Rmw(loc),
        _ => Ppo::Other,
    }
}

pub struct Graph {
    /// Each node's position in the execution.
    pub pos: Vec<usize>,
    pub id: Vec<EventId>,
    pub acc: Vec<Option<Acc>>,
    pub succ: Vec<Vec<(usize, Edge)>>,
    /// The node before each node in its thread (for a thread's first event, its spawn).
    pub prev: Vec<Option<usize>>,
    /// The node after each node in its own thread.
    next: Vec<Option<usize>>,
    /// What each node's event orders in its own thread (see [`Ppo`]).
    ppo: Vec<Ppo>,
    /// Writes per location, in store order.
    co: FxHashMap<Loc, Vec<usize>>,
    /// Each write's place in its location's store order.
    co_index: Vec<usize>,
    /// Each read's source: `Some(None)` the initial value.
    src: Vec<Option<Option<usize>>>,
    node_of: FxHashMap<EventId, usize>,
}

impl Graph {
    /// The trace of `events`. A store still buffered when the execution stopped (a fault
    /// that ended it) is placed at the end of store order, in buffer order: that is one
    /// completion of the execution, so a cycle found is real.
    pub fn new(events: &[Event]) -> Graph {
        let mut g = Graph {
            pos: Vec::new(),
            id: Vec::new(),
            acc: Vec::new(),
            succ: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            ppo: Vec::new(),
            co: FxHashMap::default(),
            co_index: Vec::new(),
            src: Vec::new(),
            node_of: FxHashMap::default(),
        };
        let mut last: FxHashMap<u32, usize> = FxHashMap::default();
        let mut spawned_by: FxHashMap<u32, usize> = FxHashMap::default();
        let mut committed: FxHashMap<EventId, ()> = FxHashMap::default();
        let mut pending: Vec<usize> = Vec::new();
        let mut written: rustc_hash::FxHashSet<Loc> = Default::default();
        // Stores each thread has issued (a thread's own pending store is what its read
        // would see, so such a faulted read is a use after free, not an initial read).
        let mut issued: rustc_hash::FxHashSet<(Loc, u32)> = Default::default();
        for (i, e) in events.iter().enumerate() {
            match e.step {
                Step::Update(..) => {
                    if let EventKind::Update { loc, store, .. } = e.kind {
                        let n = g.node_of[&store];
                        g.co.entry(loc).or_default().push(n);
                        committed.insert(store, ());
                        written.insert(loc);
                    }
                    continue;
                }
                Step::Thread(t) => {
                    let n = g.pos.len();
                    g.pos.push(i);
                    g.id.push(e.id);
                    let mut acc = access(&e.kind);
                    let faulted = faulted_read(&e.kind)
                        .filter(|l| !written.contains(l) && !issued.contains(&(*l, t)));
                    if let Some(l) = faulted {
                        acc = Some(read_of(l));
                    }
                    g.acc.push(acc);
                    g.succ.push(Vec::new());
                    g.co_index.push(usize::MAX);
                    g.src.push(None);
                    g.node_of.insert(e.id, n);
                    let before = last
                        .get(&t)
                        .copied()
                        .or_else(|| spawned_by.get(&t).copied());
                    g.prev.push(before);
                    g.next.push(None);
                    g.ppo.push(ppo_of(&e.kind));
                    if let Some(&b) = last.get(&t) {
                        g.next[b] = Some(n);
                    }
                    if let Some(b) = before {
                        g.succ[b].push((n, Edge::Po));
                    }
                    last.insert(t, n);
                    match e.kind {
                        EventKind::Spawn { child } => {
                            spawned_by.insert(child, n);
                        }
                        EventKind::Join { child } => {
                            if let Some(&c) = last.get(&child) {
                                g.succ[c].push((n, Edge::Po));
                            }
                        }
                        _ => {}
                    }
                    if faulted.is_some() {
                        g.src[n] = Some(None);
                    }
                    if let Some((_, from)) = e.kind.read_loc() {
                        g.src[n] = Some(match from {
                            ReadFrom::Init => None,
                            ReadFrom::Store(id) => g.node_of.get(&id).copied(),
                        });
                    }
                    if let Some(a) = acc {
                        let buffered = matches!(e.kind, EventKind::Store { buffered: true, .. });
                        if a.write && !buffered {
                            g.co.entry(a.loc).or_default().push(n);
                            written.insert(a.loc);
                        } else if buffered {
                            pending.push(n);
                            issued.insert((a.loc, t));
                        }
                    }
                }
            }
        }
        for n in pending {
            if !committed.contains_key(&g.id[n]) {
                let loc = g.acc[n].expect("a store accesses memory").loc;
                g.co.entry(loc).or_default().push(n);
            }
        }
        for ws in g.co.values() {
            for (k, &w) in ws.iter().enumerate() {
                g.co_index[w] = k;
                if k + 1 < ws.len() {
                    g.succ[w].push((ws[k + 1], Edge::Co));
                }
            }
        }
        for r in 0..g.pos.len() {
            let Some(src) = g.src[r] else { continue };
            let loc = g.acc[r].map(|a| a.loc);
            if let Some(w) = src {
                if w != r {
                    g.succ[w].push((r, Edge::Rf));
                }
            }
            let Some(ws) = loc.and_then(|l| g.co.get(&l)) else {
                continue;
            };
            let k = match src {
                None => 0,
                Some(w) if g.co_index[w] != usize::MAX => g.co_index[w] + 1,
                Some(_) => continue,
            };
            let mut k = k;
            if k < ws.len() && ws[k] == r {
                // A read-modify-write is the write right after the one it read; what
                // follows is after it by store order already.
                k = ws.len();
            }
            if k < ws.len() {
                g.succ[r].push((ws[k], Edge::Fr));
            }
        }
        g
    }

    pub fn len(&self) -> usize {
        self.pos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    pub fn node(&self, id: EventId) -> Option<usize> {
        self.node_of.get(&id).copied()
    }

    /// Strongly connected components (Tarjan's algorithm, iteratively): the component of
    /// each node. A component of more than one node holds a cycle.
    pub fn components(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.len();
        let mut index = vec![usize::MAX; n];
        let mut low = vec![0; n];
        let mut on = vec![false; n];
        let mut stack = Vec::new();
        let mut comp = vec![usize::MAX; n];
        let mut sizes = Vec::new();
        let mut next = 0;
        let mut call: Vec<(usize, usize)> = Vec::new();
        for root in 0..n {
            if index[root] != usize::MAX {
                continue;
            }
            call.push((root, 0));
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root);
            on[root] = true;
            while let Some(&mut (v, ref mut k)) = call.last_mut() {
                if *k < self.succ[v].len() {
                    let w = self.succ[v][*k].0;
                    *k += 1;
                    if index[w] == usize::MAX {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w);
                        on[w] = true;
                        call.push((w, 0));
                    } else if on[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let c = sizes.len();
                    let mut size = 0;
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        on[w] = false;
                        comp[w] = c;
                        size += 1;
                        if w == v {
                            break;
                        }
                    }
                    sizes.push(size);
                }
            }
        }
        (comp, sizes)
    }

    /// Whether happens-before has a cycle: the trace is not sequentially consistent.
    pub fn cyclic(&self) -> bool {
        self.components().1.iter().any(|&s| s > 1)
    }

    /// Whether `e` conflicts with and precedes the store `s` in the trace: `e` is a write
    /// before `s` in store order, or a read of a value older than `s`'s.
    pub fn conflict_before(&self, e: usize, s: usize) -> bool {
        let (Some(ae), Some(as_)) = (self.acc[e], self.acc[s]) else {
            return false;
        };
        if ae.loc != as_.loc || !as_.write || e == s || self.co_index[s] == usize::MAX {
            return false;
        }
        let ks = self.co_index[s];
        if ae.write && self.co_index[e] != usize::MAX && self.co_index[e] < ks {
            return true;
        }
        if ae.read {
            return match self.src[e] {
                Some(None) => true,
                Some(Some(w)) => self.co_index[w] != usize::MAX && self.co_index[w] < ks,
                None => false,
            };
        }
        false
    }

    /// A shortest happens-before path from `a` to `b` (`a` itself when equal), with the
    /// edge into each node after the first.
    pub fn path(&self, a: usize, b: usize) -> Option<Vec<(usize, Option<Edge>)>> {
        let mut from: Vec<Option<(usize, Edge)>> = vec![None; self.len()];
        let mut seen = vec![false; self.len()];
        let mut q = VecDeque::new();
        seen[a] = true;
        q.push_back(a);
        while let Some(v) = q.pop_front() {
            if v == b {
                let mut out = vec![(b, None)];
                let mut cur = b;
                while let Some((p, e)) = from[cur] {
                    out.last_mut().expect("non-empty").1 = Some(e);
                    out.push((p, None));
                    cur = p;
                }
                out.reverse();
                return Some(out);
            }
            for &(w, e) in &self.succ[v] {
                if !seen[w] {
                    seen[w] = true;
                    from[w] = Some((v, e));
                    q.push_back(w);
                }
            }
        }
        None
    }

    /// Every SC violation of the trace in the paper's grouping: pairs `(s, e)` of a plain
    /// store `s` and an access `e` of another thread to its location such that
    /// `s ->po l ->hb* prev(e) ->po e ->c s` where `l`, a later event of `s`'s thread, can
    /// take effect before `s` leaves the buffer (`overtaking_from`): `e`
    /// overtook `s` while `s` sat in a buffer that `l` had passed.
    pub fn violating_pairs(&self, model: ModelKind) -> Vec<(usize, usize)> {
        let (comp, sizes) = self.components();
        let mut out = Vec::new();
        let mut after: FxHashMap<usize, Vec<bool>> = FxHashMap::default();
        for e in 0..self.len() {
            if sizes[comp[e]] < 2 {
                continue;
            }
            let (Some(ae), Some(p)) = (self.acc[e], self.prev[e]) else {
                continue;
            };
            let Some(ws) = self.co.get(&ae.loc) else {
                continue;
            };
            for &s in ws {
                if comp[s] != comp[e]
                    || self.id[s].thread == self.id[e].thread
                    || !self.acc[s].is_some_and(|a| a.store)
                    || !self.conflict_before(e, s)
                {
                    continue;
                }
                let after = after
                    .entry(s)
                    .or_insert_with(|| self.takes_effect_after(s, model));
                if self.overtaking_from(s, p, after).is_some() {
                    out.push((s, e));
                }
            }
        }
        out
    }

    /// Which nodes take effect after the store `s` leaves its buffer in every execution
    /// of this trace under `model`: those reached from `s` by the model's preserved
    /// program order and the edges between threads (reads-from another thread, store
    /// order, from-reads, spawn and join), along which taking effect is ordered in time.
    /// A read from the thread's own buffer orders nothing, and is left out.
    fn takes_effect_after(&self, s: usize, model: ModelKind) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut stack = vec![s];
        seen[s] = true;
        let mut push = |w: usize, stack: &mut Vec<usize>| {
            if !seen[w] {
                seen[w] = true;
                stack.push(w);
            }
        };
        while let Some(v) = stack.pop() {
            let t = self.id[v].thread;
            for &(w, edge) in &self.succ[v] {
                let across = self.id[w].thread != t;
                if across || matches!(edge, Edge::Co | Edge::Fr) {
                    push(w, &mut stack);
                }
            }
            match self.ppo[v] {
                // What takes effect when it runs is before everything its thread does
                // next.
                Ppo::Drain | Ppo::Rmw(_) | Ppo::Other => {
                    let mut n = self.next[v];
                    while let Some(w) = n {
                        push(w, &mut stack);
                        if !matches!(self.ppo[w], Ppo::Store(_) | Ppo::StoreFence) {
                            break;
                        }
                        n = self.next[w];
                    }
                }
                Ppo::Store(loc) => {
                    // The first later event of each kind that waits for this store.
                    let (mut store, mut rmw, mut fence) = (false, false, false);
                    let mut n = self.next[v];
                    while let Some(w) = n {
                        match self.ppo[w] {
                            Ppo::Drain => {
                                push(w, &mut stack);
                                break;
                            }
                            Ppo::Store(l) if !store && (model != ModelKind::Pso || l == loc) => {
                                store = true;
                                push(w, &mut stack);
                            }
                            Ppo::Rmw(l) if !rmw && (model != ModelKind::Pso || l == loc) => {
                                rmw = true;
                                push(w, &mut stack);
                            }
                            Ppo::StoreFence if !fence && model == ModelKind::Pso => {
                                fence = true;
                                push(w, &mut stack);
                            }
                            _ => {}
                        }
                        n = self.next[w];
                    }
                }
                // Under PSO, the stores and read-modify-writes after it up to the next
                // such fence (which carries the order on) or drain; under TSO stores are
                // in order anyway.
                Ppo::StoreFence => {
                    let mut n = self.next[v];
                    while let Some(w) = n {
                        match self.ppo[w] {
                            Ppo::Drain | Ppo::StoreFence => {
                                push(w, &mut stack);
                                break;
                            }
                            Ppo::Store(_) | Ppo::Rmw(_) => {
                                push(w, &mut stack);
                                if model != ModelKind::Pso {
                                    break;
                                }
                            }
                            Ppo::Other => {}
                        }
                        n = self.next[w];
                    }
                }
            }
        }
        seen
    }

    /// A shortest happens-before path from `s` to `p` that leaves `s`'s thread at a later
    /// event `l` of it that need not take effect after `s` (`after` is
    /// [`Graph::takes_effect_after`] of `s`): `s` ->po `l`, then from `l` an edge to
    /// another thread and any path on. Such an `l` ran while `s` could still be buffered
    /// (a load under TSO; also a store to another location under PSO), and the path is
    /// what makes `s` overtaken. A store followed by a fence before `l`, or whose path
    /// leaves its thread from `s` itself or from an event that waited for `s`, is not
    /// overtaken on that path. The nodes with the edge into each after the first.
    fn overtaking_from(
        &self,
        s: usize,
        p: usize,
        after: &[bool],
    ) -> Option<Vec<(usize, Option<Edge>)>> {
        let t = self.id[s].thread;
        let mut from: Vec<Option<(usize, Edge)>> = vec![None; self.len()];
        let mut seed = vec![false; self.len()];
        let mut seen = vec![false; self.len()];
        let mut q = VecDeque::new();
        let mut n = self.next[s];
        while let Some(l) = n {
            n = self.next[l];
            if after[l] {
                continue;
            }
            for &(w, edge) in &self.succ[l] {
                if self.id[w].thread != t && !seen[w] {
                    seen[w] = true;
                    seed[w] = true;
                    from[w] = Some((l, edge));
                    q.push_back(w);
                }
            }
        }
        let mut found = false;
        while let Some(v) = q.pop_front() {
            if v == p {
                found = true;
                break;
            }
            for &(w, e) in &self.succ[v] {
                if !seen[w] {
                    seen[w] = true;
                    from[w] = Some((v, e));
                    q.push_back(w);
                }
            }
        }
        if !found {
            return None;
        }
        // Back from `p` to the first node past `s`'s thread, to `l`, and along `s`'s
        // thread to `s`.
        let mut out = vec![(p, None)];
        let mut cur = p;
        loop {
            let (prev, e) = from[cur].expect("a path from l");
            out.last_mut().expect("non-empty").1 = Some(e);
            out.push((prev, None));
            if seed[cur] {
                cur = prev;
                break;
            }
            cur = prev;
        }
        while cur != s {
            let prev = self.prev[cur].expect("po back to s");
            out.last_mut().expect("non-empty").1 = Some(Edge::Po);
            out.push((prev, None));
            cur = prev;
        }
        out.reverse();
        Some(out)
    }

    /// Some edge `(v, w)` on a cycle, if happens-before has one.
    pub fn cycle_edge(&self) -> Option<(usize, usize)> {
        let (comp, sizes) = self.components();
        (0..self.len()).find_map(|v| {
            (sizes[comp[v]] > 1)
                .then(|| self.succ[v].iter().find(|&&(w, _)| comp[w] == comp[v]))
                .flatten()
                .map(|&(w, _)| (v, w))
        })
    }

    /// The cycle through the edge `(e, s)`: a path from `s` back to `e`, then the edge.
    pub fn closed_path(&self, s: usize, e: usize) -> Option<Vec<(usize, Edge)>> {
        let close = self.succ[e].iter().find(|&&(w, _)| w == s)?.1;
        let path = self.path(s, e)?;
        Some(
            path.into_iter()
                .map(|(n, into)| (n, into.unwrap_or(close)))
                .collect(),
        )
    }

    /// The cycle `s ->hb* prev(e) ->po e ->c s` of a violating pair, as nodes with the
    /// edge that leads into each (the first node's edge closes the cycle).
    pub fn cycle(&self, s: usize, e: usize) -> Option<Vec<(usize, Edge)>> {
        let p = self.prev[e]?;
        self.close(self.path(s, p)?, e)
    }

    /// The cycle of a violating pair of [`Graph::violating_pairs`], through the later
    /// event of `s`'s thread that overtook it.
    pub fn overtaking_cycle(
        &self,
        s: usize,
        e: usize,
        model: ModelKind,
    ) -> Option<Vec<(usize, Edge)>> {
        let p = self.prev[e]?;
        let path = self.overtaking_from(s, p, &self.takes_effect_after(s, model))?;
        self.close(path, e)
    }

    fn close(&self, path: Vec<(usize, Option<Edge>)>, e: usize) -> Option<Vec<(usize, Edge)>> {
        let close = if self.acc[e].is_some_and(|a| a.write) && self.co_index[e] != usize::MAX {
            Edge::Co
        } else {
            Edge::Fr
        };
        let mut out: Vec<(usize, Edge)> = path
            .into_iter()
            .map(|(n, into)| (n, into.unwrap_or(close)))
            .collect();
        out.push((e, Edge::Po));
        Some(out)
    }
}
