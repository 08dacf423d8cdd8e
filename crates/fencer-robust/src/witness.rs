//! Witnesses: a monitor's report made concrete. From the SC execution on which the pair
//! `(e', e)` was reported, build the TSO (PSO) execution the monitor simulated: the SC
//! events in the interleaving that keeps `e'` pending longest (see `monitor.rs`), each
//! buffered store committed as late as the paper's line 11 allows, then `e` overtaking
//! `e'`, `e'` committed, and the rest of the program run to its end. The schedule is
//! replayed in the machine under the weak model, and the trace of what the machine did is
//! checked for the cycle; a witness is only shown when it replays.

use crate::trace::{access, faulted_read, read_of, Edge, Graph};
use fencer_ir::{FenceKind, Program};
use fencer_machine::{Event, EventId, EventKind, State, Status, Step};
use fencer_memory::{Chan, Loc, MemoryModel};
use std::collections::VecDeque;

/// A replayed execution under the weak model whose trace has the cycle.
pub struct Witness {
    pub state: State,
    pub events: Vec<Event>,
    /// The cycle as positions in `events`, each with the edge that leads into it (the
    /// first one's edge closes the cycle).
    pub cycle: Vec<(usize, Edge)>,
}

/// Limits the replay keeps to, as the exploration did.
#[derive(Clone, Copy)]
pub struct Limits {
    pub unroll: u32,
    pub max_depth: u32,
}

/// Happens-before clocks of every event of an SC execution: for each event, the clock of
/// its strict predecessors, so that `f ->hb e` iff `clock[e][thread f] > index f`.
fn strict_clocks(events: &[Event]) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let n = events
        .iter()
        .map(|e| match e.kind {
            EventKind::Spawn { child } => child.max(e.id.thread),
            _ => e.id.thread,
        })
        .max()
        .map_or(0, |t| t as usize + 1);
    let mut vc = vec![vec![0u32; n]; n];
    let mut w: rustc_hash::FxHashMap<Loc, (Vec<u32>, Vec<u32>)> = Default::default();
    let mut written: rustc_hash::FxHashSet<Loc> = Default::default();
    let mut strict = Vec::with_capacity(events.len());
    let mut full = Vec::with_capacity(events.len());
    let join = |a: &mut Vec<u32>, b: &[u32]| {
        for (x, y) in a.iter_mut().zip(b) {
            *x = (*x).max(*y);
        }
    };
    for e in events {
        let t = e.id.thread as usize;
        let mut c = vc[t].clone();
        if let EventKind::Join { child } = e.kind {
            let ch = vc[child as usize].clone();
            join(&mut c, &ch);
        }
        let mut acc = access(&e.kind);
        if let Some(l) = faulted_read(&e.kind).filter(|l| !written.contains(l)) {
            acc = Some(read_of(l));
        }
        if let Some(a) = acc {
            let (wv, rv) = w.entry(a.loc).or_insert_with(|| (vec![0; n], vec![0; n]));
            join(&mut c, wv);
            if a.write {
                join(&mut c, rv);
            }
        }
        strict.push(c.clone());
        c[t] = e.id.index + 1;
        if let Some(a) = acc {
            let (wv, rv) = w.get_mut(&a.loc).expect("inserted above");
            if a.read {
                join(rv, &c);
            }
            if a.write {
                *wv = c.clone();
                written.insert(a.loc);
                rv.iter_mut().for_each(|x| *x = 0);
            }
        }
        if let EventKind::Spawn { child } = e.kind {
            vc[child as usize] = c.clone();
        }
        vc[t] = c.clone();
        full.push(c);
    }
    (strict, full)
}

/// The simulated store buffers: pending stores in order, per thread (TSO) or per thread
/// and location (PSO), each with its store-store epoch (PSO: the thread's store-store
/// fences before it).
struct Bufs {
    pso: bool,
    q: Vec<VecDeque<(Loc, EventId, u32)>>,
    /// Per thread, the store-store fences it ran so far (PSO).
    epoch: Vec<u32>,
}

impl Bufs {
    fn chan(&self, loc: Loc) -> Chan {
        if self.pso {
            Chan::Loc(loc)
        } else {
            Chan::Thread
        }
    }

    /// Commits `p`'s oldest pending store to `loc` (PSO) or its oldest (TSO); under PSO
    /// the stores of older epochs first, which the machine requires.
    fn pop(&mut self, p: usize, loc: Loc, out: &mut Vec<Step>) -> EventId {
        let q = &mut self.q[p];
        let k = if self.pso {
            q.iter()
                .position(|(l, _, _)| *l == loc)
                .expect("pending store")
        } else {
            0
        };
        let epoch = q[k].2;
        if self.pso {
            // The first pending store is the oldest of its buffer and of the oldest epoch.
            while let Some(&(l, _, e)) = self.q[p].front() {
                if e >= epoch {
                    break;
                }
                self.pop(p, l, out);
            }
        }
        let q = &mut self.q[p];
        let k = if self.pso {
            q.iter()
                .position(|(l, _, _)| *l == loc)
                .expect("pending store")
        } else {
            0
        };
        let (l, id, _) = q.remove(k).expect("pending store");
        out.push(Step::Update(p as u32, self.chan(l)));
        id
    }

    /// Commits what a read-modify-write of thread `p` waits for beyond its own buffer:
    /// the stores before its last store-store fence.
    fn older_epochs(&mut self, p: usize, out: &mut Vec<Step>) {
        while let Some(&(l, _, e)) = self.q[p].front() {
            if e >= self.epoch[p] {
                break;
            }
            self.pop(p, l, out);
        }
    }

    /// The paper's line 11: commit other threads' pending stores to `loc`.
    fn commit_others(&mut self, t: usize, loc: Loc, out: &mut Vec<Step>) {
        for p in 0..self.q.len() {
            if p == t {
                continue;
            }
            while let Some(last) = self.q[p].iter().rposition(|(l, _, _)| *l == loc) {
                if self.pso {
                    self.pop(p, loc, out);
                } else {
                    for _ in 0..=last {
                        self.pop(p, loc, out);
                    }
                }
            }
        }
    }

    fn drain(&mut self, p: usize, only: Option<Loc>, out: &mut Vec<Step>) {
        match only {
            Some(loc) if self.pso => {
                while self.q[p].iter().any(|(l, _, _)| *l == loc) {
                    self.pop(p, loc, out);
                }
            }
            _ => {
                while let Some(&(l, _, _)) = self.q[p].front() {
                    self.pop(p, l, out);
                }
            }
        }
    }
}

/// Builds and replays the witness of the pair `(store, at)` reported on the SC execution
/// `sc`. `None` if the replay does not show the cycle (which would be a bug: the property
/// test holds every witness to it).
pub fn build<M: MemoryModel>(
    prog: &Program,
    limits: Limits,
    sc: &[Event],
    store: EventId,
    at: usize,
) -> Option<Witness> {
    let pso = matches!(M::KIND, fencer_memory::ModelKind::Pso);
    let (strict, full) = strict_clocks(sc);
    let sp = sc.iter().position(|e| e.id == store)?;
    let e = &sc[at];
    let before_e = |f: usize| strict[at][sc[f].id.thread as usize] > sc[f].id.index;
    let after_s = |f: usize| full[f][store.thread as usize] > store.index;
    let mut order: Vec<usize> = (0..at).filter(|&f| before_e(f) && !after_s(f)).collect();
    order.extend((sp..at).filter(|&f| before_e(f) && after_s(f)));
    order.push(at);
    let n = strict.first().map_or(0, |c| c.len()).max(1);
    let mut bufs = Bufs {
        pso,
        q: vec![VecDeque::new(); n],
        epoch: vec![0; n],
    };
    let mut steps = Vec::new();
    for &f in &order {
        let ev = &sc[f];
        let t = ev.id.thread as usize;
        let acc = access(&ev.kind);
        if let (Some(a), false) = (acc, f == at) {
            bufs.commit_others(t, a.loc, &mut steps);
        }
        match ev.kind {
            EventKind::Fence(FenceKind::Full)
            | EventKind::Lock { .. }
            | EventKind::Unlock { .. }
            | EventKind::TryLockFailed { .. }
            | EventKind::Spawn { .. } => bufs.drain(t, None, &mut steps),
            // With nothing pending it orders nothing.
            EventKind::Fence(FenceKind::StoreStore) if pso && !bufs.q[t].is_empty() => {
                bufs.epoch[t] += 1;
            }
            EventKind::Rmw { loc, .. } => {
                bufs.drain(t, Some(loc), &mut steps);
                if pso {
                    bufs.older_epochs(t, &mut steps);
                }
            }
            EventKind::Join { child } if (child as usize) < n => {
                bufs.drain(child as usize, None, &mut steps)
            }
            _ => {}
        }
        steps.push(Step::Thread(t as u32));
        if let EventKind::Store { loc, .. } = ev.kind {
            bufs.q[t].push_back((loc, ev.id, bufs.epoch[t]));
        }
    }
    // `e` overtakes the store; a store `e` is committed first, then the store.
    let t = e.id.thread as usize;
    let loc = access(&e.kind)?.loc;
    if matches!(e.kind, EventKind::Store { .. }) {
        bufs.drain(t, Some(loc), &mut steps);
    }
    let p = store.thread as usize;
    while bufs.q[p].iter().any(|&(_, id, _)| id == store) {
        let l = bufs.q[p].front().map(|x| x.0).expect("pending");
        let l = if pso { loc } else { l };
        bufs.pop(p, l, &mut steps);
    }
    replay::<M>(prog, limits, &steps, store, e.id)
}

/// Runs `steps` in the machine, then the rest of the program (buffers first, then the
/// lowest-numbered thread that can move), and checks the cycle through `(store, at)`.
pub fn replay<M: MemoryModel>(
    prog: &Program,
    limits: Limits,
    steps: &[Step],
    store: EventId,
    at: EventId,
) -> Option<Witness> {
    let (mut state, status) = State::initial_limited(prog, limits.unroll, limits.max_depth);
    if let Status::Fault(f) = status {
        state.threads[f.thread as usize].faulted = true;
    }
    let mut events = Vec::new();
    let mut enabled = Vec::new();
    for &s in steps {
        enabled.clear();
        state.enabled::<M>(prog, &mut enabled);
        if !enabled.contains(&s) {
            return None;
        }
        let (ev, status) = state.step::<M>(prog, s);
        if let Status::Fault(f) = status {
            state.threads[f.thread as usize].faulted = true;
        }
        events.push(ev);
    }
    // Running on: at most as far as the exploration's own bound on one execution.
    let cap = (limits.max_depth as usize).saturating_mul(64).max(1 << 16);
    while events.len() < cap {
        enabled.clear();
        state.enabled::<M>(prog, &mut enabled);
        let Some(&s) = enabled
            .iter()
            .find(|s| matches!(s, Step::Update(..)))
            .or_else(|| enabled.first())
        else {
            break;
        };
        let (ev, status) = state.step::<M>(prog, s);
        if let Status::Fault(f) = status {
            state.threads[f.thread as usize].faulted = true;
        }
        events.push(ev);
    }
    let g = Graph::new(&events);
    let (s, e) = (g.node(store)?, g.node(at)?);
    if !g.conflict_before(e, s) {
        return None;
    }
    let cycle = g.cycle(s, e)?;
    let cycle = cycle
        .into_iter()
        .map(|(n, edge)| (g.pos[n], edge))
        .collect();
    Some(Witness {
        state,
        events,
        cycle,
    })
}
