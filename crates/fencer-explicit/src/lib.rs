//! Explicit-state exploration of any transition system whose states are byte vectors of one
//! fixed width. The engine knows nothing of where the system comes from (DVE today): it
//! asks for the initial state and each state's successors, stores every state once in an
//! arena (a hash table of indices into it, so a stored state costs its bytes plus a few
//! words), and answers reachability of an error, a goal or a deadlock breadth-first, so
//! that the path it returns is a shortest one.

mod bfs;
mod codec;
pub mod dist;
mod store;

use codec::{Codec, Packed};
use std::time::{Duration, Instant};
use store::{Store, NO_PARENT};

/// Where a step leads: a state, or the run-time error (a message) it ends in.
pub type Next<'a> = Result<&'a [u8], String>;

/// What the engine needs of a system.
pub trait TransitionSystem {
    /// Names a step for counterexamples (which process took which transition).
    type Label: Copy;
    /// The width of every state vector.
    fn width(&self) -> usize;
    fn initial(&self) -> Vec<u8>;
    /// Calls `f` for each step from `s`: its label and the state it leads to, or the
    /// run-time error it ends in.
    fn successors(&self, s: &[u8], f: &mut dyn FnMut(Self::Label, Next<'_>));
    /// Whether `s` is accepting (for a product with a Büchi automaton).
    fn accepting(&self, _s: &[u8]) -> bool {
        false
    }
    /// For weak fairness: how many processes there are, and which ones a step moves.
    fn processes(&self) -> u32 {
        0
    }
    fn moved(&self, _l: Self::Label, _out: &mut Vec<u32>) {}
    /// Per byte of the state vector, every value it can hold in a reachable state (a
    /// 256-bit set; more is allowed, less is not): the engine then stores states
    /// bit-packed. `None`: any byte may hold anything.
    fn byte_values(&self) -> Option<Vec<[u64; 4]>> {
        None
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Stop at the first state with no successor.
    pub deadlock: bool,
    pub timeout: Option<Duration>,
    pub max_states: Option<u64>,
    /// Explore everything: count errors and goals instead of stopping at the first.
    pub exhaustive: bool,
    /// Threads for `reach` (0 or 1: the calling thread only). The answer is the same.
    pub jobs: usize,
    /// Store full state vectors even when the system's byte values allow packing them
    /// (to measure what packing saves).
    pub unpacked: bool,
    /// Search across these ranks (each process of an MPI job, say), every state stored by
    /// one of them; `None` or one rank: this process alone.
    pub ranks: Option<dist::Ranks>,
}

/// Why the search stopped at a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FoundKind {
    /// A step ended in a run-time error (the message says which).
    Error(String),
    /// The goal (an assertion that fails, `--reach`'s expression) holds.
    Goal(String),
    Deadlock,
}

#[derive(Clone, Debug)]
pub struct Found<L> {
    pub kind: FoundKind,
    /// The shortest path: the initial state, then each step and the state it leads to.
    pub initial: Vec<u8>,
    pub steps: Vec<(L, Vec<u8>)>,
    /// For an error: the step that failed.
    pub failed: Option<L>,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Distinct reachable states stored.
    pub states: u64,
    /// Steps generated (edges of the state graph, errors included).
    pub transitions: u64,
    /// States with no successor.
    pub deadlocks: u64,
    /// Steps that ended in a run-time error.
    pub errors: u64,
    /// States where the goal held.
    pub goals: u64,
    /// Breadth-first levels (the deepest state's distance + 1).
    pub levels: u64,
    pub elapsed: Duration,
    /// Bytes of the state arena and the table.
    pub memory: u64,
    /// Bytes a stored state takes in the arena (packed, when the system allows it).
    pub state_bytes: u64,
    /// A distributed search's ranks, in rank order (empty for one process): the counts
    /// above are their sums.
    pub ranks: Vec<RankStats>,
}

/// One rank's share of a distributed search.
#[derive(Clone, Debug, Default)]
pub struct RankStats {
    /// States this rank owns and stored.
    pub states: u64,
    /// Bytes of this rank's state arena and table.
    pub memory: u64,
    /// Time spent generating successors and storing states.
    pub work: Duration,
    /// Time spent exchanging states and agreeing on what to do next, waiting for slower
    /// ranks included.
    pub comm: Duration,
    /// Bytes this rank sent to other ranks.
    pub sent: u64,
}

#[derive(Clone, Debug)]
pub struct Outcome<L> {
    pub stats: Stats,
    pub found: Option<Found<L>>,
    /// `timeout` or `max-states` when a limit stopped the search.
    pub stopped: Option<&'static str>,
}

/// `sys` with bit-packed states, when it says which values its bytes hold and packing
/// saves enough.
fn packed<'a, S: TransitionSystem>(sys: &'a S, opts: &Options) -> Option<Packed<'a, S>> {
    if opts.unpacked {
        return None;
    }
    let sets = sys.byte_values()?;
    if sets.len() != sys.width() {
        return None;
    }
    Some(Packed::new(sys, Codec::new(&sets)?))
}

/// Breadth-first search of every reachable state, on `opts.jobs` threads (one if 0).
/// `goal(s)` names why a state stops the search (a failed assertion, a reached
/// expression; `None`: no state is a goal); errors always do, deadlocks with
/// `opts.deadlock`. Counts, ids and the counterexample (a shortest path) are the same for
/// any number of threads. States are stored bit-packed when the system allows it (see
/// `TransitionSystem::byte_values`).
pub fn reach<S>(sys: &S, opts: &Options, goal: Option<&Goal<'_>>) -> Outcome<S::Label>
where
    S: TransitionSystem + Sync,
    S::Label: Send + Sync,
{
    let none = |_: &[u8]| None;
    if let Some(r) = opts.ranks.as_ref().filter(|r| r.size() > 1) {
        let t = &*r.0;
        if let Some(p) = packed(sys, opts) {
            let o = match goal {
                Some(g) => dist::reach_states(&p, opts, &|s: &[u8]| p.with_full(s, g), t),
                None => dist::reach_states(&p, opts, &none, t),
            };
            // Every rank repeats the search unpacked if any one missed.
            if !dist::any(t, p.missed()) {
                return p.unpack_outcome(o);
            }
        }
        return dist::reach_states(sys, opts, goal.unwrap_or(&none), t);
    }
    if let Some(p) = packed(sys, opts) {
        // Without a goal, new states need not be unpacked to be judged.
        let o = match goal {
            Some(g) => bfs::reach_states(&p, opts, &|s: &[u8]| p.with_full(s, g)),
            None => bfs::reach_states(&p, opts, &none),
        };
        if !p.missed() {
            return p.unpack_outcome(o);
        }
    }
    bfs::reach_states(sys, opts, goal.unwrap_or(&none))
}

/// Why a state stops a search, if it does.
pub type Goal<'a> = dyn Fn(&[u8]) -> Option<String> + Sync + 'a;

/// Whether some reachable cycle goes through an accepting state, by nested depth-first
/// search (see `nested_dfs`), on bit-packed states when the system allows it.
pub fn accepting_cycle<S: TransitionSystem>(sys: &S, opts: &Options) -> LtlOutcome<S::Label> {
    if let Some(o) = distributed_cycle(sys, opts, false) {
        return o;
    }
    if let Some(p) = packed(sys, opts) {
        let o = nested_dfs(&p, opts);
        if !p.missed() {
            return p.unpack_ltl(o);
        }
    }
    nested_dfs(sys, opts)
}

/// Whether some reachable cycle through an accepting state is weakly fair (see
/// `fair_sccs`), on bit-packed states when the system allows it.
pub fn fair_accepting_cycle<S: TransitionSystem>(sys: &S, opts: &Options) -> LtlOutcome<S::Label> {
    if let Some(o) = distributed_cycle(sys, opts, true) {
        return o;
    }
    if let Some(p) = packed(sys, opts) {
        let o = fair_sccs(&p, opts);
        if !p.missed() {
            return p.unpack_ltl(o);
        }
    }
    fair_sccs(sys, opts)
}

/// With `opts.ranks` (more than one): an accepting cycle searched for across the ranks
/// (OWCTY, not depth-first: see `dist`), on bit-packed states when the system allows it.
fn distributed_cycle<S: TransitionSystem>(
    sys: &S,
    opts: &Options,
    fair: bool,
) -> Option<LtlOutcome<S::Label>> {
    let r = opts.ranks.as_ref().filter(|r| r.size() > 1)?;
    let t = &*r.0;
    if let Some(p) = packed(sys, opts) {
        let o = dist::accepting_cycle(&p, opts, t, fair);
        if !dist::any(t, p.missed()) {
            return Some(p.unpack_ltl(o));
        }
    }
    Some(dist::accepting_cycle(sys, opts, t, fair))
}

/// The final statistics: states stored, time since `start`, bytes held.
fn finish_stats(st: &Store, mut stats: Stats, start: Instant) -> Stats {
    stats.states = st.len() as u64;
    stats.elapsed = start.elapsed();
    stats.memory = st.memory();
    stats.state_bytes = st.width as u64;
    stats
}

/// An accepting cycle: the path to the cycle's first state, then the cycle back to it.
#[derive(Clone, Debug)]
pub struct Lasso<L> {
    pub initial: Vec<u8>,
    pub prefix: Vec<(L, Vec<u8>)>,
    pub cycle: Vec<(L, Vec<u8>)>,
}

#[derive(Clone, Debug)]
pub struct LtlOutcome<L> {
    pub stats: Stats,
    /// States of the product that are accepting.
    pub accepting: u64,
    pub lasso: Option<Lasso<L>>,
    pub stopped: Option<&'static str>,
}

/// Successor ids the nested search keeps for its red searches (4 bytes each): 512 MiB.
/// Past that, red searches generate successors again.
const MAX_CACHED_EDGES: usize = 1 << 27;

const BLUE: u8 = 1;
const RED: u8 = 2;
const ON_STACK: u8 = 4;

struct Frame<L> {
    state: u32,
    succs: Vec<(L, u32)>,
    next: usize,
}

/// Whether some reachable cycle goes through an accepting state (the product of a system
/// and the Büchi automaton of a negated property: the property holds iff there is none),
/// by nested depth-first search (Courcoubetis, Vardi, Wolper, Yannakakis): after the
/// blue search leaves an accepting state, a red search from it looks for a state on the
/// blue stack. Both searches are iterative. Run-time errors end their path.
fn nested_dfs<S: TransitionSystem>(sys: &S, opts: &Options) -> LtlOutcome<S::Label> {
    let start = Instant::now();
    let mut st = Store::new(sys.width(), 0);
    let mut flags: Vec<u8> = Vec::new();
    let mut stats = Stats::default();
    let mut accepting = 0u64;
    let init = sys.initial();
    st.insert(&init, NO_PARENT);
    flags.push(0);
    let mut cur = Vec::new();
    // Successors of state `i` as indices, storing new ones.
    // Successors as indices; new states get their flags.
    // Appends the successors of `i` to `out` as (label, id); new states get their flags.
    let mut expand = |i: u32,
                      st: &mut Store,
                      flags: &mut Vec<u8>,
                      stats: &mut Stats,
                      out: &mut Vec<(S::Label, u32)>| {
        st.expand_into(sys, i, &mut cur, stats, out);
        flags.resize(st.id_bound(), 0);
    };
    let finish = |stats: Stats, st: &Store, accepting, lasso, stopped| LtlOutcome {
        stats: finish_stats(st, stats, start),
        accepting,
        lasso,
        stopped,
    };
    // The blue search's successor ids, per state (`span`: start and count in `adj`), for
    // the red searches, which would otherwise generate every state's successors again.
    let mut adj: Vec<u32> = Vec::new();
    let mut span: Vec<(u32, u32)> = Vec::new();
    fn remember<L>(i: u32, succs: &[(L, u32)], adj: &mut Vec<u32>, span: &mut Vec<(u32, u32)>) {
        if adj.len() + succs.len() > MAX_CACHED_EDGES {
            return;
        }
        if span.len() <= i as usize {
            span.resize(i as usize + 1, (u32::MAX, 0));
        }
        span[i as usize] = (adj.len() as u32, succs.len() as u32);
        adj.extend(succs.iter().map(|x| x.1));
    }
    // Blue frames: a state and its successors, `stack[from..to]`.
    struct Blue {
        state: u32,
        from: usize,
        to: usize,
        next: usize,
    }
    let mut stack: Vec<(S::Label, u32)> = Vec::new();
    let mut blue: Vec<Blue> = Vec::new();
    expand(0, &mut st, &mut flags, &mut stats, &mut stack);
    remember(0, &stack, &mut adj, &mut span);
    flags[0] |= BLUE | ON_STACK;
    blue.push(Blue {
        state: 0,
        from: 0,
        to: stack.len(),
        next: 0,
    });
    // Red frames: a state and its successors' ids, in `adj` or (not remembered) in
    // `scratch` from `from`.
    struct Red {
        state: u32,
        cached: bool,
        from: usize,
        to: usize,
        next: usize,
    }
    let mut scratch: Vec<u32> = Vec::new();
    let mut steps = 0u64;
    while let Some(top) = blue.last_mut() {
        steps += 1;
        if steps.is_multiple_of(4096) && opts.timeout.is_some_and(|t| start.elapsed() >= t) {
            return finish(stats, &st, accepting, None, Some("timeout"));
        }
        if opts.max_states.is_some_and(|m| st.len() as u64 > m) {
            return finish(stats, &st, accepting, None, Some("max-states"));
        }
        if top.from + top.next < top.to {
            let (_, j) = stack[top.from + top.next];
            top.next += 1;
            if flags[j as usize] & BLUE == 0 {
                let from = stack.len();
                expand(j, &mut st, &mut flags, &mut stats, &mut stack);
                remember(j, &stack[from..], &mut adj, &mut span);
                flags[j as usize] |= BLUE | ON_STACK;
                blue.push(Blue {
                    state: j,
                    from,
                    to: stack.len(),
                    next: 0,
                });
            }
            continue;
        }
        // Post-order: the blue search is done with `seed`.
        let seed = top.state;
        if top.from == top.to {
            stats.deadlocks += 1;
        }
        if sys.accepting(st.get(seed)) {
            accepting += 1;
            // Red search from the seed for a state on the blue stack. It sees states
            // again: its expansions are not counted.
            let mut again = Stats::default();
            let mut red: Vec<Red> = Vec::new();
            scratch.clear();
            let mut push = |j: u32,
                            red: &mut Vec<Red>,
                            scratch: &mut Vec<u32>,
                            st: &mut Store,
                            flags: &mut Vec<u8>| {
                let frame = match span.get(j as usize) {
                    Some(&(a, n)) if a != u32::MAX => Red {
                        state: j,
                        cached: true,
                        from: a as usize,
                        to: (a + n) as usize,
                        next: a as usize,
                    },
                    _ => {
                        let from = scratch.len();
                        let mut succs = Vec::new();
                        expand(j, st, flags, &mut again, &mut succs);
                        scratch.extend(succs.iter().map(|x| x.1));
                        Red {
                            state: j,
                            cached: false,
                            from,
                            to: scratch.len(),
                            next: from,
                        }
                    }
                };
                red.push(frame);
            };
            push(seed, &mut red, &mut scratch, &mut st, &mut flags);
            let mut hit = None;
            while let Some(rt) = red.last_mut() {
                if rt.next == rt.to {
                    if !rt.cached {
                        scratch.truncate(rt.from);
                    }
                    red.pop();
                    continue;
                }
                let j = if rt.cached {
                    adj[rt.next]
                } else {
                    scratch[rt.next]
                };
                rt.next += 1;
                if flags[j as usize] & ON_STACK != 0 {
                    hit = Some(j);
                    break;
                }
                if flags[j as usize] & RED == 0 {
                    flags[j as usize] |= RED;
                    push(j, &mut red, &mut scratch, &mut st, &mut flags);
                }
            }
            if let Some(j) = hit {
                // Prefix: the blue stack up to `j`; cycle: the blue stack from `j` to the
                // seed, then the red path back to `j` (its labels found again, as for a
                // path: red frames keep only ids).
                let label_of = |f: &Blue| stack[f.from + f.next - 1].0;
                let k = blue
                    .iter()
                    .position(|f| f.state == j)
                    .expect("on the stack");
                let mut prefix = Vec::new();
                for w in 0..k {
                    prefix.push((label_of(&blue[w]), st.get(blue[w + 1].state).to_vec()));
                }
                let mut cycle = Vec::new();
                for w in k..blue.len() - 1 {
                    cycle.push((label_of(&blue[w]), st.get(blue[w + 1].state).to_vec()));
                }
                for (w, f) in red.iter().enumerate() {
                    let to = red.get(w + 1).map_or(j, |g| g.state);
                    cycle.push((st.label(sys, f.state, to), st.get(to).to_vec()));
                }
                let lasso = Lasso {
                    initial: st.get(0).to_vec(),
                    prefix,
                    cycle,
                };
                let lasso = shortest_prefix(sys, lasso, prefix_budget(&st));
                return finish(stats, &st, accepting, Some(lasso), None);
            }
        }
        flags[seed as usize] &= !ON_STACK;
        let done = blue.pop().expect("the top frame");
        stack.truncate(done.from);
    }
    finish(stats, &st, accepting, None, None)
}

/// Whether some reachable cycle through an accepting state is *weakly fair*: every process
/// that is enabled in every state of the cycle moves on it. Such a cycle exists iff some
/// strongly connected component of the product holds an accepting state and, for every
/// process, an edge inside it where the process moves or a state of it where the process
/// cannot move (a cycle through every state and edge of the component is then accepting
/// and fair; a process enabled throughout and never moving inside the component makes
/// every cycle in it unfair). Components come from Tarjan's algorithm, iteratively; the
/// lasso is a shortest path to the accepting state, then a cycle inside the component
/// through it and through one witness of each process's fairness.
fn fair_sccs<S: TransitionSystem>(sys: &S, opts: &Options) -> LtlOutcome<S::Label> {
    let start = Instant::now();
    let mut st = Store::new(sys.width(), 0);
    let mut stats = Stats::default();
    let init = sys.initial();
    st.insert(&init, NO_PARENT);
    let mut cur = Vec::new();
    let mut expand = |i: u32, st: &mut Store, stats: &mut Stats| st.expand(sys, i, &mut cur, stats);
    let finish = |stats: Stats, st: &Store, accepting, lasso, stopped| LtlOutcome {
        stats: finish_stats(st, stats, start),
        accepting,
        lasso,
        stopped,
    };
    let procs = sys.processes() as usize;
    // Tarjan, iteratively, keeping each state's successors while it is on the call stack.
    let mut index: Vec<u32> = Vec::new();
    let mut low: Vec<u32> = Vec::new();
    let mut on: Vec<bool> = Vec::new();
    let mut stack: Vec<u32> = Vec::new();
    let mut call: Vec<Frame<S::Label>> = Vec::new();
    let mut succs_of: rustc_hash::FxHashMap<u32, Vec<(S::Label, u32)>> = Default::default();
    let mut next_index = 0u32;
    let mut accepting = 0u64;
    let grow = |v: &mut Vec<u32>, n: usize, x: u32| {
        if v.len() < n {
            v.resize(n, x);
        }
    };
    let visit = |i: u32,
                 index: &mut Vec<u32>,
                 low: &mut Vec<u32>,
                 on: &mut Vec<bool>,
                 stack: &mut Vec<u32>,
                 next: &mut u32| {
        let n = i as usize + 1;
        grow(index, n, u32::MAX);
        grow(low, n, 0);
        if on.len() < n {
            on.resize(n, false);
        }
        index[i as usize] = *next;
        low[i as usize] = *next;
        *next += 1;
        stack.push(i);
        on[i as usize] = true;
    };
    let succs = expand(0, &mut st, &mut stats);
    visit(
        0,
        &mut index,
        &mut low,
        &mut on,
        &mut stack,
        &mut next_index,
    );
    call.push(Frame {
        state: 0,
        succs,
        next: 0,
    });
    let mut steps = 0u64;
    let mut moved = Vec::new();
    while let Some(top) = call.last_mut() {
        steps += 1;
        if steps.is_multiple_of(4096) && opts.timeout.is_some_and(|t| start.elapsed() >= t) {
            return finish(stats, &st, accepting, None, Some("timeout"));
        }
        if opts.max_states.is_some_and(|m| st.len() as u64 > m) {
            return finish(stats, &st, accepting, None, Some("max-states"));
        }
        let v = top.state;
        if top.next < top.succs.len() {
            let (_, w) = top.succs[top.next];
            top.next += 1;
            let seen = (w as usize) < index.len() && index[w as usize] != u32::MAX;
            if !seen {
                let succs = expand(w, &mut st, &mut stats);
                visit(
                    w,
                    &mut index,
                    &mut low,
                    &mut on,
                    &mut stack,
                    &mut next_index,
                );
                call.push(Frame {
                    state: w,
                    succs,
                    next: 0,
                });
            } else if on[w as usize] {
                low[v as usize] = low[v as usize].min(index[w as usize]);
            }
            continue;
        }
        let frame = call.pop().expect("non-empty");
        if let Some(parent) = call.last() {
            let p = parent.state as usize;
            low[p] = low[p].min(low[v as usize]);
        }
        succs_of.insert(v, frame.succs);
        if low[v as usize] != index[v as usize] {
            continue;
        }
        // `v` roots a component: the stack down to `v`.
        let k = stack.iter().rposition(|&x| x == v).expect("on the stack");
        let comp: Vec<u32> = stack.split_off(k);
        let members: rustc_hash::FxHashSet<u32> = comp.iter().copied().collect();
        for &x in &comp {
            on[x as usize] = false;
        }
        let inner = |x: u32| succs_of[&x].iter().filter(|(_, y)| members.contains(y));
        let nontrivial = comp.len() > 1 || inner(v).next().is_some();
        let acc_state = comp.iter().copied().find(|&x| sys.accepting(st.get(x)));
        accepting += comp.iter().filter(|&&x| sys.accepting(st.get(x))).count() as u64;
        if nontrivial {
            if let Some(a) = acc_state {
                // For each process: an inner edge where it moves, or a state where it
                // cannot move.
                let mut witness: Vec<Option<(u32, Option<u32>)>> = vec![None; procs];
                for &x in &comp {
                    let mut enabled = vec![false; procs];
                    for (l, y) in &succs_of[&x] {
                        moved.clear();
                        sys.moved(*l, &mut moved);
                        // Movers beyond the constraints the system declares are ignored.
                        for &p in moved.iter().filter(|&&p| (p as usize) < procs) {
                            enabled[p as usize] = true;
                            if members.contains(y) && witness[p as usize].is_none() {
                                witness[p as usize] = Some((x, Some(*y)));
                            }
                        }
                    }
                    for p in 0..procs {
                        if !enabled[p] && witness[p].is_none() {
                            witness[p] = Some((x, None));
                        }
                    }
                }
                if witness.iter().all(Option::is_some) {
                    let lasso = fair_lasso(sys, &st, &succs_of, &members, a, &witness);
                    let lasso = shortest_prefix(sys, lasso, prefix_budget(&st));
                    return finish(stats, &st, accepting, Some(lasso), None);
                }
            }
        }
        for x in comp {
            succs_of.remove(&x);
        }
    }
    finish(stats, &st, accepting, None, None)
}

/// A lasso for a fair accepting component: the stored (breadth-first... or depth-first)
/// path to `a`, then a cycle from `a` through each witness and back.
fn fair_lasso<L: Copy, S: TransitionSystem<Label = L>>(
    sys: &S,
    st: &Store,
    succs: &rustc_hash::FxHashMap<u32, Vec<(L, u32)>>,
    members: &rustc_hash::FxHashSet<u32>,
    a: u32,
    witness: &[Option<(u32, Option<u32>)>],
) -> Lasso<L> {
    // A path inside the component from `x` to `y` (breadth-first), as steps.
    let path = |x: u32, y: u32| -> Vec<(L, u32)> {
        if x == y {
            return Vec::new();
        }
        let mut from: rustc_hash::FxHashMap<u32, (u32, L)> = Default::default();
        let mut q = std::collections::VecDeque::from([x]);
        while let Some(u) = q.pop_front() {
            for &(l, v) in &succs[&u] {
                if members.contains(&v) && v != x && !from.contains_key(&v) {
                    from.insert(v, (u, l));
                    if v == y {
                        let mut out = Vec::new();
                        let mut c = y;
                        while c != x {
                            let (p, l) = from[&c];
                            out.push((l, c));
                            c = p;
                        }
                        out.reverse();
                        return out;
                    }
                    q.push_back(v);
                }
            }
        }
        unreachable!("a component is strongly connected")
    };
    let mut cycle: Vec<(L, u32)> = Vec::new();
    let mut at = a;
    for w in witness.iter().flatten() {
        let (x, y) = *w;
        cycle.extend(path(at, x));
        at = x;
        if let Some(y) = y {
            let l = succs[&x].iter().find(|(_, v)| *v == y).expect("the edge").0;
            cycle.push((l, y));
            at = y;
        }
    }
    if at != a || cycle.is_empty() {
        // Back to `a`; a cycle of one state needs its self loop (or a way round).
        let back = if at == a {
            let (l, v) = *succs[&a]
                .iter()
                .find(|(_, v)| members.contains(v))
                .expect("non-trivial");
            let mut p = vec![(l, v)];
            p.extend(path(v, a));
            p
        } else {
            path(at, a)
        };
        cycle.extend(back);
    }
    let (initial, prefix) = st.path(sys, a);
    Lasso {
        initial,
        prefix,
        cycle: cycle
            .into_iter()
            .map(|(l, s)| (l, st.get(s).to_vec()))
            .collect(),
    }
}

/// How many states the search for a shortest prefix may store: ten times what the cycle
/// search stored, and at least a million (a second or so).
fn prefix_budget(st: &Store) -> usize {
    (st.len() * 10).max(1 << 20)
}

/// The same cycle, entered by a shortest path: a breadth-first search from the initial
/// state stops at the first state of the cycle it meets, and the cycle is turned to start
/// there. The depth-first searches find their cycle through whatever path their stack
/// holds; this costs one search up to the cycle's depth, once a violation is known. A
/// violation found early in a huge product could make that search far dearer than the
/// one that found it: past `budget` states it gives up and the lasso stays as it was.
fn shortest_prefix<S: TransitionSystem>(
    sys: &S,
    lasso: Lasso<S::Label>,
    budget: usize,
) -> Lasso<S::Label> {
    let n = lasso.cycle.len();
    // `on[k]`: the state before the cycle's step `k` (the cycle's last state is its first).
    let on: Vec<&[u8]> = std::iter::once(&lasso.cycle[n - 1].1)
        .chain(lasso.cycle[..n - 1].iter().map(|x| &x.1))
        .map(Vec::as_slice)
        .collect();
    let index: std::collections::HashMap<&[u8], usize> =
        on.iter().enumerate().rev().map(|(k, s)| (*s, k)).collect();
    let mut st = Store::new(sys.width(), 0);
    st.insert(&lasso.initial, NO_PARENT);
    let mut next = 0u32;
    let mut cur = Vec::new();
    while (next as usize) < st.len() {
        if st.len() > budget {
            return lasso;
        }
        cur.clear();
        cur.extend_from_slice(st.get(next));
        if let Some(&k) = index.get(cur.as_slice()) {
            let (initial, prefix) = st.path(sys, next);
            let mut cycle = lasso.cycle[k..].to_vec();
            cycle.extend_from_slice(&lasso.cycle[..k]);
            return Lasso {
                initial,
                prefix,
                cycle,
            };
        }
        sys.successors(&cur, &mut |_, r| {
            if let Ok(s) = r {
                st.insert(s, next);
            }
        });
        next += 1;
    }
    unreachable!("the cycle is reachable")
}
