//! Accepting cycles across ranks, without depth-first order: OWCTY ("one way to catch
//! them young", Černá and Pelánek), generalised to weak fairness.
//!
//! The product is explored breadth-first (`explore`, keeping every edge at its target's
//! owner; for a check, each edge travels to its source's owner). OWCTY runs on the
//! expanded states each time the stored states double, and on the whole product at the
//! end: a cycle among expanded states is a real one. The conditions a cycle must meet
//! are bits: bit 0 an accepting state; with fairness, bit `1 + p` for process `p`, met
//! by a state where `p` cannot move or by a step that moves `p` (its target carries the
//! bit). Starting from every state checked, the set `S` is narrowed until it stops
//! changing:
//! - *reset*: keep the states of `S` that every condition reaches within `S` (forward
//!   propagation of bit sets along the edges of `S`, in rounds);
//! - *elimination*: remove, again and again, the states of `S` with no predecessor in `S`.
//!
//! `S` ends non-empty iff some cycle meets every condition: a fixpoint's top strongly
//! connected component (no edge enters it from the rest of `S`) has a predecessor for each
//! of its states, so it is a cycle, and every condition reaches it from inside it. Each
//! step is a sequence of exchanges, so no rank waits on another's depth-first stack.
//!
//! The lasso: every rank receives the final `S` as a graph of ids (typically far smaller
//! than the product), finds the same component meeting every condition, and builds a
//! cycle through an accepting state and one witness per process; the prefix is the
//! breadth-first parent chain to it, so it is a shortest path to the cycle's entry.

use super::reach::{
    chain, explore, fetch, label, owner_of, steps, totals, Clock, Edge, Plan, SHARDS,
};
use super::Transport;
use crate::bfs::SHARD_BITS;
use crate::store::Store;
use crate::{Lasso, LtlOutcome, Options, TransitionSystem};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// Whether some reachable cycle through an accepting state exists (with `fair`: a weakly
/// fair one, every process enabled throughout the cycle moving on it), on every rank of
/// `t` alike. OWCTY runs on the expanded part of the product each time the stored states
/// double (a cycle among expanded states is a real one), so a violation near the start
/// of a large product is found without storing all of it; and once on the whole.
pub(crate) fn accepting_cycle<S: TransitionSystem>(
    sys: &S,
    opts: &Options,
    t: &dyn Transport,
    fair: bool,
) -> LtlOutcome<S::Label> {
    let procs = if fair { sys.processes() as usize } else { 0 };
    // Conditions are the bits of a u64: bit 0 and one per process.
    assert!(
        procs <= super::MAX_FAIR_PROCESSES,
        "weak fairness across ranks covers up to {} processes (callers refuse more)",
        super::MAX_FAIR_PROCESSES
    );
    let plan = Plan {
        goal: None,
        edges: true,
        movers: procs > 0,
    };
    let began = Instant::now();
    let mut early = Cycle::None;
    let mut ex = {
        let mut next_check = EARLY;
        let mut hook = |st: &Store, edges: &[Edge], marks: &[u32], clock: &mut Clock| {
            let mut total = [st.len() as u64];
            t.sum(&mut total);
            if total[0] < next_check {
                return false;
            }
            next_check = total[0].saturating_mul(2);
            early = owcty(sys, opts, t, st, edges, Some(marks), procs, clock, began);
            !matches!(early, Cycle::None)
        };
        explore(sys, opts, t, &plan, Some(&mut hook))
    };
    let mut acc = [(0..SHARDS)
        .flat_map(|k| (0..ex.st.shards[k].len()).map(move |i| (k, i)))
        .filter(|&(k, i)| sys.accepting(ex.st.get(ex.st.id(k, i))))
        .count() as u64];
    t.sum(&mut acc);
    let finish = |ex: &super::reach::Explored, lasso, stopped| LtlOutcome {
        stats: totals(t, ex),
        accepting: acc[0],
        lasso,
        stopped,
    };
    if ex.stopped.is_some() {
        let stopped = ex.stopped;
        return finish(&ex, None, stopped);
    }
    let cycle = match early {
        Cycle::None => {
            let edges = std::mem::take(&mut ex.edges);
            let mut clock = std::mem::replace(&mut ex.clock, Clock::new());
            let c = owcty(sys, opts, t, &ex.st, &edges, None, procs, &mut clock, began);
            ex.clock = clock;
            c
        }
        c => c,
    };
    let (a, cycle) = match cycle {
        Cycle::Found(a, c) => (a, c),
        Cycle::None => return finish(&ex, None, None),
        Cycle::Timeout => return finish(&ex, None, Some("timeout")),
    };
    let st = &ex.st;
    let mut want = chain(st, t, a);
    let prefix_len = want.len();
    want.extend(cycle.iter().map(|x| x.0));
    let bytes = fetch(st, t, &want);
    let prefix = steps(sys, &bytes[..prefix_len]);
    let mut cyc = Vec::with_capacity(cycle.len());
    let mut prev = &bytes[prefix_len - 1];
    for (k, &(_, mover)) in cycle.iter().enumerate() {
        let next = &bytes[prefix_len + k];
        cyc.push((label(sys, prev, next, mover), next.clone()));
        prev = next;
    }
    let lasso = Lasso {
        initial: bytes[0].clone(),
        prefix,
        cycle: cyc,
    };
    finish(&ex, Some(lasso), None)
}

/// What OWCTY found.
enum Cycle {
    /// An accepting state and the cycle from it back to it (see `Graph::lasso`).
    Found(u32, Vec<(u32, Option<u32>)>),
    None,
    Timeout,
}

/// The first OWCTY check once this many states are stored, and at every doubling after.
const EARLY: u64 = 1 << 12;

/// OWCTY on the stored states (only those below `expanded`'s marks, when given: the
/// states whose successors are all known) and `edges`; every rank alike.
#[allow(clippy::too_many_arguments)]
fn owcty<S: TransitionSystem>(
    sys: &S,
    opts: &Options,
    t: &dyn Transport,
    st: &Store,
    edges: &[Edge],
    expanded: Option<&[u32]>,
    procs: usize,
    clock: &mut Clock,
    began: Instant,
) -> Cycle {
    let size = t.size();
    // Dense indices of the states this rank owns: shard by shard.
    let mut base = vec![0usize; SHARDS];
    let mut n = 0usize;
    for (k, b) in base.iter_mut().enumerate() {
        *b = n;
        n += st.shards[k].len() as usize;
    }
    let dense = |id: u32| base[id as usize & (SHARDS - 1)] + (id >> SHARD_BITS) as usize;
    let mut ids = vec![0u32; n];
    for k in 0..SHARDS {
        for i in 0..st.shards[k].len() {
            ids[base[k] + i as usize] = st.id(k, i);
        }
    }
    let accepting: Vec<bool> = ids.iter().map(|&i| sys.accepting(st.get(i))).collect();
    // Each edge to its source's owner, then as lists of successors per state.
    let rec = if procs > 0 { 16 } else { 8 };
    let mut out: Vec<Vec<u8>> = vec![Vec::new(); size];
    for &(from, to, m) in edges {
        let b = &mut out[owner_of(from, size)];
        b.extend_from_slice(&from.to_le_bytes());
        b.extend_from_slice(&to.to_le_bytes());
        if procs > 0 {
            b.extend_from_slice(&m.to_le_bytes());
        }
    }
    let got = clock.exchange(t, out);
    let mut deg = vec![0u32; n + 1];
    let word4 = |r: &[u8], at: usize| u32::from_le_bytes(r[at..at + 4].try_into().expect("4"));
    for b in &got {
        for r in b.chunks_exact(rec) {
            deg[dense(word4(r, 0)) + 1] += 1;
        }
    }
    for i in 0..n {
        deg[i + 1] += deg[i];
    }
    let start = deg.clone();
    let mut fill = deg;
    let edges = start[n] as usize;
    let mut succ = vec![0u32; edges];
    let mut moves = vec![0u64; if procs > 0 { edges } else { 0 }];
    for b in &got {
        for r in b.chunks_exact(rec) {
            let x = dense(word4(r, 0));
            let at = fill[x] as usize;
            fill[x] += 1;
            succ[at] = word4(r, 4);
            if procs > 0 {
                moves[at] = u64::from_le_bytes(r[8..16].try_into().expect("8"));
            }
        }
    }
    drop(got);
    let out_of = |x: usize| start[x] as usize..start[x + 1] as usize;
    // Bits 0..=procs, and bits 0..procs (no shift by 64: 63 processes fill the word).
    let all: u64 = u64::MAX >> (63 - procs);
    let proc_mask: u64 = all >> 1;
    // The conditions each state meets by itself: accepting, processes that cannot move.
    let own: Vec<u64> = (0..n)
        .map(|x| {
            let enabled = out_of(x).fold(0u64, |m, e| m | if procs > 0 { moves[e] } else { 0 });
            u64::from(accepting[x]) | (proc_mask & !enabled) << 1
        })
        .collect();
    let edge_bits = |e: usize| if procs > 0 { moves[e] << 1 } else { 0 };
    // S starts as every expanded state: one not expanded yet has successors to come.
    let mut alive = vec![true; n];
    if let Some(m) = expanded {
        for k in 0..SHARDS {
            for i in m[k]..st.shards[k].len() {
                alive[base[k] + i as usize] = false;
            }
        }
    }
    let mut size_before = u64::MAX;
    // Sends, for each `(x, v)` of `from` and each edge `e` of `x`, `v` (with the step's
    // condition bits if `bits`) to the edge target's owner, and hands every arrival
    // (dense target, value) to `g`.
    let send = |from: &[(usize, u64)],
                bits: bool,
                g: &mut dyn FnMut(usize, u64),
                clock: &mut super::reach::Clock| {
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); size];
        for &(x, v) in from {
            for e in out_of(x) {
                let b = &mut out[owner_of(succ[e], size)];
                b.extend_from_slice(&succ[e].to_le_bytes());
                let v = if bits { v | edge_bits(e) } else { v };
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        for b in clock.exchange(t, out) {
            for r in b.chunks_exact(12) {
                g(
                    dense(word4(r, 0)),
                    u64::from_le_bytes(r[4..12].try_into().expect("8")),
                );
            }
        }
    };
    // Each round's sum carries whether this rank is past the timeout: all stop together.
    let late = || u64::from(opts.timeout.is_some_and(|d| began.elapsed() >= d));
    // Whether no rank has anything left (`left` here) to do in this step; `None` once a
    // rank is past the timeout.
    let settled = |left: usize, clock: &mut super::reach::Clock| {
        let mut v = [left as u64, late()];
        t.sum(&mut v);
        clock.talked();
        (v[1] == 0).then_some(v[0] == 0)
    };
    let mut timed_out = false;
    'owcty: loop {
        // Reset: the conditions that reach each state within S.
        let mut reach: Vec<u64> = (0..n).map(|x| if alive[x] { own[x] } else { 0 }).collect();
        let mut changed: Vec<usize> = (0..n).filter(|&x| alive[x]).collect();
        let mut mark = vec![false; n];
        loop {
            let from: Vec<(usize, u64)> = changed.iter().map(|&x| (x, reach[x])).collect();
            let mut next = Vec::new();
            send(
                &from,
                true,
                &mut |y, bits| {
                    if alive[y] && reach[y] | bits != reach[y] {
                        reach[y] |= bits;
                        if !mark[y] {
                            mark[y] = true;
                            next.push(y);
                        }
                    }
                },
                &mut *clock,
            );
            for &y in &next {
                mark[y] = false;
            }
            match settled(next.len(), &mut *clock) {
                None => {
                    timed_out = true;
                    break 'owcty;
                }
                Some(true) => break,
                Some(false) => changed = next,
            }
        }
        for x in 0..n {
            if alive[x] && reach[x] != all {
                alive[x] = false;
            }
        }
        // Elimination: states with no predecessor in S, until there are none.
        let mut indeg = vec![0u32; n];
        let living: Vec<(usize, u64)> = (0..n).filter(|&x| alive[x]).map(|x| (x, 0)).collect();
        send(
            &living,
            false,
            &mut |y, _| {
                if alive[y] {
                    indeg[y] += 1;
                }
            },
            &mut *clock,
        );
        let mut gone: Vec<(usize, u64)> =
            living.into_iter().filter(|&(x, _)| indeg[x] == 0).collect();
        loop {
            for &(x, _) in &gone {
                alive[x] = false;
            }
            match settled(gone.len(), &mut *clock) {
                None => {
                    timed_out = true;
                    break 'owcty;
                }
                Some(true) => break,
                Some(false) => {}
            }
            let mut next = Vec::new();
            send(
                &gone,
                false,
                &mut |y, _| {
                    if alive[y] {
                        indeg[y] -= 1;
                        if indeg[y] == 0 {
                            next.push((y, 0));
                        }
                    }
                },
                &mut *clock,
            );
            gone = next;
        }
        let mut left = [alive.iter().filter(|&&a| a).count() as u64];
        t.sum(&mut left);
        clock.talked();
        if left[0] == 0 || left[0] == size_before {
            size_before = left[0];
            break;
        }
        size_before = left[0];
    }
    if timed_out {
        return Cycle::Timeout;
    }
    if size_before == 0 {
        return Cycle::None;
    }
    // The final S as a graph of ids, on every rank.
    let mut mine = Vec::new();
    for x in (0..n).filter(|&x| alive[x]) {
        mine.extend_from_slice(&ids[x].to_le_bytes());
        mine.extend_from_slice(&own[x].to_le_bytes());
        mine.extend_from_slice(&(out_of(x).len() as u32).to_le_bytes());
        for e in out_of(x) {
            mine.extend_from_slice(&succ[e].to_le_bytes());
            mine.extend_from_slice(&edge_bits(e).to_le_bytes());
        }
    }
    let parts = t.gather_all(&mine);
    let graph = Graph::read(&parts);
    let (a, cycle) = graph.lasso(all);
    Cycle::Found(a, cycle)
}

/// The states left by OWCTY and their edges, by id.
struct Graph {
    /// Ids in ascending order: every rank walks them alike.
    ids: Vec<u32>,
    own: Vec<u64>,
    /// Successors inside the graph: (index, condition bits of the step).
    succ: Vec<Vec<(usize, u64)>>,
}

impl Graph {
    fn read(parts: &[Vec<u8>]) -> Graph {
        let w4 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4"));
        let w8 = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8"));
        // (id, its own conditions, its edges: target and the step's conditions)
        type Row = (u32, u64, Vec<(u32, u64)>);
        let mut raw: Vec<Row> = Vec::new();
        for b in parts {
            let mut at = 0;
            while at < b.len() {
                let (id, own, d) = (w4(b, at), w8(b, at + 4), w4(b, at + 12) as usize);
                at += 16;
                let es = (0..d)
                    .map(|j| (w4(b, at + 12 * j), w8(b, at + 12 * j + 4)))
                    .collect();
                at += 12 * d;
                raw.push((id, own, es));
            }
        }
        raw.sort_by_key(|r| r.0);
        let index: HashMap<u32, usize> = raw.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
        Graph {
            ids: raw.iter().map(|r| r.0).collect(),
            own: raw.iter().map(|r| r.1).collect(),
            succ: raw
                .iter()
                .map(|r| {
                    r.2.iter()
                        .filter_map(|&(y, m)| index.get(&y).map(|&j| (j, m)))
                        .collect()
                })
                .collect(),
        }
    }

    /// Strongly connected components (Tarjan, iteratively), as lists of indices.
    fn components(&self) -> Vec<Vec<usize>> {
        let n = self.ids.len();
        let mut index = vec![u32::MAX; n];
        let mut low = vec![0u32; n];
        let mut on = vec![false; n];
        let mut stack = Vec::new();
        let mut out = Vec::new();
        let mut next = 0u32;
        for root in 0..n {
            if index[root] != u32::MAX {
                continue;
            }
            let mut call: Vec<(usize, usize)> = vec![(root, 0)];
            index[root] = next;
            low[root] = next;
            next += 1;
            stack.push(root);
            on[root] = true;
            while let Some(&mut (v, ref mut i)) = call.last_mut() {
                if let Some(&(w, _)) = self.succ[v].get(*i) {
                    *i += 1;
                    if index[w] == u32::MAX {
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
                if let Some(&(p, _)) = call.last() {
                    low[p] = low[p].min(low[v]);
                }
                if low[v] == index[v] {
                    let k = stack.iter().rposition(|&x| x == v).expect("on the stack");
                    let comp = stack.split_off(k);
                    for &x in &comp {
                        on[x] = false;
                    }
                    out.push(comp);
                }
            }
        }
        out
    }

    /// An accepting state and a cycle from it back to it that meets every condition of
    /// `all`: the cycle's states (ids) in order, each with the process its step must move
    /// (for a step that witnesses that process's fairness).
    #[allow(clippy::type_complexity)]
    fn lasso(&self, all: u64) -> (u32, Vec<(u32, Option<u32>)>) {
        for comp in self.components() {
            let inside: std::collections::HashSet<usize> = comp.iter().copied().collect();
            let inner = |x: usize| self.succ[x].iter().filter(|(y, _)| inside.contains(y));
            if comp.len() == 1 && inner(comp[0]).next().is_none() {
                continue;
            }
            let mut met = 0u64;
            for &x in &comp {
                met |= self.own[x];
                for &(_, m) in inner(x) {
                    met |= m;
                }
            }
            if met & all != all {
                continue;
            }
            let mut sorted = comp.clone();
            sorted.sort_unstable();
            let a = *sorted
                .iter()
                .find(|&&x| self.own[x] & 1 == 1)
                .expect("an accepting state");
            // One witness per fairness condition: a state that meets it, or a step.
            let mut witness: Vec<(usize, Option<(usize, u32)>)> = Vec::new();
            let mut bit = 2u64;
            let mut p = 0u32;
            while bit <= all && bit != 0 {
                let w = sorted
                    .iter()
                    .find_map(|&x| {
                        inner(x)
                            .find(|(_, m)| m & bit != 0)
                            .map(|&(y, _)| (x, Some((y, p))))
                    })
                    .or_else(|| {
                        sorted
                            .iter()
                            .find(|&&x| self.own[x] & bit != 0)
                            .map(|&x| (x, None))
                    })
                    .expect("the component meets every condition");
                witness.push(w);
                bit <<= 1;
                p += 1;
            }
            // From `a` through each witness and back to `a`, inside the component.
            let mut cycle: Vec<(usize, Option<u32>)> = Vec::new();
            let mut at = a;
            for (x, step) in witness {
                cycle.extend(self.path(&inside, at, x).into_iter().map(|y| (y, None)));
                at = x;
                if let Some((y, p)) = step {
                    cycle.push((y, Some(p)));
                    at = y;
                }
            }
            if at != a || cycle.is_empty() {
                // Back to `a`; from `a` itself, out of it first.
                if at == a {
                    let (y, _) = *inner(a).next().expect("non-trivial");
                    cycle.push((y, None));
                    at = y;
                }
                cycle.extend(self.path(&inside, at, a).into_iter().map(|y| (y, None)));
            }
            return (
                self.ids[a],
                cycle.into_iter().map(|(x, p)| (self.ids[x], p)).collect(),
            );
        }
        unreachable!("OWCTY left a component that meets every condition")
    }

    /// A shortest path inside `inside` from `x` to `y`: the states after `x`.
    fn path(&self, inside: &std::collections::HashSet<usize>, x: usize, y: usize) -> Vec<usize> {
        if x == y {
            return Vec::new();
        }
        let mut from: HashMap<usize, usize> = HashMap::new();
        let mut q = VecDeque::from([x]);
        while let Some(u) = q.pop_front() {
            for &(v, _) in &self.succ[u] {
                if inside.contains(&v) && v != x && !from.contains_key(&v) {
                    from.insert(v, u);
                    if v == y {
                        let mut out = vec![y];
                        let mut c = y;
                        while from[&c] != x {
                            c = from[&c];
                            out.push(c);
                        }
                        out.reverse();
                        return out;
                    }
                    q.push_back(v);
                }
            }
        }
        unreachable!("a component is strongly connected")
    }
}
