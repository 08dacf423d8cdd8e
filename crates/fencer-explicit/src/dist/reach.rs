//! Breadth-first search across ranks, with the one-process search's answer.
//!
//! States are owned by store shard: rank `r` owns a contiguous range of the 64 shards
//! (`owner`), stores their states and expands them. The search is level-synchronous. In a
//! round every rank expands up to `ROUND` states of its frontier and sends each successor,
//! with its key and its parent's id, to the successor's owner in one exchange.
//!
//! The one-process search (`bfs`) orders a level shard by shard, each shard's new states in
//! the order of their keys (the parent's position in the level, then the successor's
//! index), and gives a new state the first parent in that order. Owners here receive
//! candidates in another order, so each keeps, per new state, the smallest key seen and
//! that key's parent, and orders its new states by key at the end of the level; since
//! shards are owned in ranges, a rank's frontier is a contiguous range of positions, at
//! an offset the ranks agree on. States, parents and positions are thus the one-process
//! search's, and so is the earliest violation and its path. State ids too: a state's id
//! names its shard, which names its owner, so a parent link crosses ranks as a plain id.
//!
//! A violation is reported once no rank can still produce an earlier one: when its key
//! is below every rank's next unexpanded position. The counts when it stops can differ
//! from one process's (which stops at the end of its batch); with no violation they are
//! the same.

use super::Transport;
use crate::bfs::SHARD_BITS;
use crate::store::{hash, Store, NO_PARENT};
use crate::{Found, FoundKind, Options, Outcome, RankStats, Stats, TransitionSystem};
use std::time::{Duration, Instant};

pub(crate) const SHARDS: usize = 1 << SHARD_BITS;
/// Frontier states a rank expands between two exchanges: the successors of one round
/// are all a rank holds in flight.
const ROUND: usize = 1 << 14;
/// How far ahead of its insertion an arriving state's table slot is loaded.
const TOUCH: usize = 16;

/// The rank that owns shard `k` among `size` ranks (ranges of shards, in rank order).
pub(crate) fn owner(k: usize, size: usize) -> usize {
    k * size / SHARDS
}

/// The rank that owns state `id`.
pub(crate) fn owner_of(id: u32, size: usize) -> usize {
    owner(id as usize & (SHARDS - 1), size)
}

/// Whether any rank says yes.
pub(crate) fn any(t: &dyn Transport, yes: bool) -> bool {
    let mut v = [yes as u64];
    t.max(&mut v);
    v[0] == 1
}

/// Times the work and the talk of one rank.
pub(crate) struct Clock {
    pub(crate) work: Duration,
    pub(crate) comm: Duration,
    pub(crate) sent: u64,
    mark: Instant,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            work: Duration::ZERO,
            comm: Duration::ZERO,
            sent: 0,
            mark: Instant::now(),
        }
    }
    /// Counts the time since the last lap as work.
    pub(crate) fn worked(&mut self) {
        let now = Instant::now();
        self.work += now - self.mark;
        self.mark = now;
    }
    /// Counts the time since the last lap as communication.
    pub(crate) fn talked(&mut self) {
        let now = Instant::now();
        self.comm += now - self.mark;
        self.mark = now;
    }
    /// `t.exchange(out)`, timed as communication (what came before as work).
    pub(crate) fn exchange(&mut self, t: &dyn Transport, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        self.worked();
        let me = t.rank();
        self.sent += out
            .iter()
            .enumerate()
            .filter(|&(r, _)| r != me)
            .map(|(_, b)| b.len() as u64)
            .sum::<u64>();
        let got = t.exchange(out);
        self.talked();
        got
    }
}

/// An edge of the state graph, kept by the owner of its target: source id, target id,
/// and (for fairness) the processes the step moves as bits.
pub(crate) type Edge = (u32, u32, u64);

/// What `explore` is asked to do besides storing every reachable state.
pub(crate) struct Plan<'g> {
    /// Why a new state stops the search (`None`: keep every edge instead, for LTL).
    pub(crate) goal: Option<&'g crate::Goal<'g>>,
    /// Keep the edges (their targets' owners do).
    pub(crate) edges: bool,
    /// With each edge, the processes its step moves (for weak fairness).
    pub(crate) movers: bool,
}

/// What `explore` calls at the end of each level (see there).
pub(crate) type Hook<'a> = dyn FnMut(&Store, &[Edge], &[u32], &mut Clock) -> bool + 'a;

/// The earliest violation a rank knows of: its key in the one-process order, what it is
/// and where (the state it stops at).
struct Event {
    key: u64,
    kind: FoundKind,
    at: u32,
}

/// One rank's part of a finished (or stopped) exploration.
pub(crate) struct Explored {
    pub(crate) st: Store,
    pub(crate) stats: Stats,
    pub(crate) edges: Vec<Edge>,
    pub(crate) stopped: Option<&'static str>,
    pub(crate) clock: Clock,
    /// The earliest violation, the same on every rank.
    found: Option<(u64, FoundKind, u32)>,
}

/// Explores every reachable state across the ranks of `t`, each rank storing its own.
/// `hook`, if given, is called on every rank at the end of each level with the store, the
/// edges kept so far and the level's marks (per shard, the states below are expanded); it
/// ends the search by returning true.
pub(crate) fn explore<S: TransitionSystem>(
    sys: &S,
    opts: &Options,
    t: &dyn Transport,
    plan: &Plan<'_>,
    mut hook: Option<&mut Hook<'_>>,
) -> Explored {
    let start = Instant::now();
    let (me, size) = (t.rank(), t.size());
    assert!(
        size <= SHARDS,
        "a distributed search runs on at most {SHARDS} ranks"
    );
    let w = sys.width();
    let mut st = Store::new(w, SHARD_BITS);
    let mut stats = Stats::default();
    let mut clock = Clock::new();
    let mut edges: Vec<Edge> = Vec::new();
    let fair = plan.edges && plan.movers;
    let rec = w + 12 + if fair { 8 } else { 0 };
    let owned: Vec<usize> = (0..SHARDS).filter(|&k| owner(k, size) == me).collect();
    let init = sys.initial();
    let finish = |st: Store, stats: Stats, edges, stopped, clock, found| Explored {
        st,
        stats: Stats {
            elapsed: start.elapsed(),
            ..stats
        },
        edges,
        stopped,
        clock,
        found,
    };
    if let Some(why) = plan.goal.and_then(|g| g(&init)) {
        // Every rank judges the initial state alike; its owner stores it for the path.
        let h = hash(&init);
        let k = st.shard_of(h);
        let id = st.id(k, 0);
        if owner(k, size) == me {
            st.insert(&init, NO_PARENT);
        }
        return finish(
            st,
            stats,
            edges,
            None,
            clock,
            Some((0, FoundKind::Goal(why), id)),
        );
    }
    // The current level: ids in order, and the position of the first.
    let mut frontier: Vec<u32> = Vec::new();
    let mut offset = 0u64;
    {
        let k = st.shard_of(hash(&init));
        if owner(k, size) == me {
            frontier.push(st.insert(&init, NO_PARENT).0);
        } else {
            // Not stored here, but positions count it: rank order is position order.
            offset = u64::from(owner(k, size) < me);
        }
    }
    // Per owned shard, the keys of the states new in this level (from `mark[k]` on).
    let mut keys: Vec<Vec<u64>> = vec![Vec::new(); SHARDS];
    let mut goals: Vec<u32> = Vec::new();
    let mut cur = Vec::with_capacity(w);
    let mut moved = Vec::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut hashes: Vec<u64> = Vec::new();
    loop {
        let mut n = [frontier.len() as u64];
        clock.worked();
        t.sum(&mut n);
        clock.talked();
        if n[0] == 0 {
            return finish(st, stats, edges, None, clock, None);
        }
        stats.levels += 1;
        let marks: Vec<u32> = st.shards.iter().map(|s| s.len()).collect();
        for k in &owned {
            keys[*k].clear();
        }
        goals.clear();
        let mut rounds = [frontier.len().div_ceil(ROUND) as u64];
        t.max(&mut rounds);
        let mut event: Option<Event> = None;
        for j in 0..rounds[0] as usize {
            let from = (j * ROUND).min(frontier.len());
            let to = ((j + 1) * ROUND).min(frontier.len());
            // Last round's arrivals, emptied, carry this round's successors: their
            // capacity is about what a round needs.
            let mut out = std::mem::take(&mut spare);
            out.resize(size, Vec::new());
            for b in &mut out {
                b.clear();
            }
            for (i, &id) in frontier[from..to].iter().enumerate() {
                let pos = (offset + (from + i) as u64) << 32;
                cur.clear();
                cur.extend_from_slice(st.get(id));
                let mut n = 0u32;
                sys.successors(&cur, &mut |l, r| {
                    let key = pos | n as u64;
                    n += 1;
                    match r {
                        Err(msg) => {
                            stats.errors += 1;
                            if plan.goal.is_some() && !opts.exhaustive && event.is_none() {
                                event = Some(Event {
                                    key,
                                    kind: FoundKind::Error(msg),
                                    at: id,
                                });
                            }
                        }
                        Ok(s) => {
                            let b = &mut out[owner(st.shard_of(hash(s)), size)];
                            b.extend_from_slice(s);
                            b.extend_from_slice(&key.to_le_bytes());
                            b.extend_from_slice(&id.to_le_bytes());
                            if fair {
                                moved.clear();
                                sys.moved(l, &mut moved);
                                let bits = moved
                                    .iter()
                                    .filter(|&&p| p < 64)
                                    .fold(0u64, |m, &p| m | 1 << p);
                                b.extend_from_slice(&bits.to_le_bytes());
                            }
                        }
                    }
                });
                stats.transitions += n as u64;
                if n == 0 {
                    stats.deadlocks += 1;
                    if opts.deadlock && plan.goal.is_some() && !opts.exhaustive && event.is_none() {
                        event = Some(Event {
                            key: pos | u32::MAX as u64,
                            kind: FoundKind::Deadlock,
                            at: id,
                        });
                    }
                }
            }
            let got = clock.exchange(t, out);
            for buf in &got {
                // Hashes first, so that each state's table slot is loaded `TOUCH`
                // insertions ahead (as the one-process store does): the loads overlap.
                hashes.clear();
                hashes.extend(buf.chunks_exact(rec).map(|r| hash(&r[..w])));
                let mut touched = 0u64;
                for &h in hashes.iter().take(TOUCH) {
                    touched ^= st.shards[st.shard_of(h)].touch(w, h);
                }
                for (i, r) in buf.chunks_exact(rec).enumerate() {
                    if let Some(&a) = hashes.get(i + TOUCH) {
                        touched ^= st.shards[st.shard_of(a)].touch(w, a);
                    }
                    let s = &r[..w];
                    let key = u64::from_le_bytes(r[w..w + 8].try_into().expect("8 bytes"));
                    let parent = u32::from_le_bytes(r[w + 8..w + 12].try_into().expect("4"));
                    let h = hashes[i];
                    let k = st.shard_of(h);
                    let local = match st.shards[k].insert(w, s, h, parent) {
                        Ok(local) => {
                            keys[k].push(key);
                            if let Some(g) = plan.goal {
                                if g(s).is_some() {
                                    stats.goals += 1;
                                    goals.push(st.id(k, local));
                                }
                            }
                            local
                        }
                        Err(local) => {
                            if local >= marks[k] {
                                let x = &mut keys[k][(local - marks[k]) as usize];
                                if key < *x {
                                    *x = key;
                                    st.shards[k].set_parent(local, parent);
                                }
                            }
                            local
                        }
                    };
                    if plan.edges {
                        let bits = if fair {
                            u64::from_le_bytes(r[w + 12..w + 20].try_into().expect("8"))
                        } else {
                            0
                        };
                        edges.push((parent, st.id(k, local), bits));
                    }
                }
                std::hint::black_box(touched);
            }
            spare = got;
            // The earliest violation here, and the next position any rank has yet to
            // expand: once the one is below the other, no rank can find an earlier one.
            let key_of = |id: u32| {
                let k = id as usize & (SHARDS - 1);
                keys[k][((id >> SHARD_BITS) - marks[k]) as usize]
            };
            let goal_key = if opts.exhaustive {
                None
            } else {
                goals.iter().map(|&g| key_of(g)).min()
            };
            let mine = event
                .as_ref()
                .map(|e| e.key)
                .into_iter()
                .chain(goal_key)
                .min();
            let next = if to < frontier.len() {
                (offset + to as u64) << 32
            } else {
                u64::MAX
            };
            let late = opts.timeout.is_some_and(|d| start.elapsed() >= d);
            let mut v = [mine.unwrap_or(u64::MAX), next, u64::from(!late)];
            clock.worked();
            t.min(&mut v);
            let mut states = [st.len() as u64];
            t.sum(&mut states);
            clock.talked();
            let [earliest, next, on] = v;
            if earliest != u64::MAX && earliest < next {
                // Which rank holds it, and what it is: every rank learns both.
                let holds = mine == Some(earliest);
                let mut who = [if holds { me as u64 } else { u64::MAX }];
                t.min(&mut who);
                let root = who[0] as usize;
                let mut msg = Vec::new();
                if root == me {
                    let (kind, at) = match &event {
                        Some(e) if e.key == earliest => (e.kind.clone(), e.at),
                        _ => {
                            let g = goals
                                .iter()
                                .copied()
                                .find(|&g| key_of(g) == earliest)
                                .expect("the goal with that key");
                            let why =
                                plan.goal.expect("goals are judged")(st.get(g)).expect("a goal");
                            (FoundKind::Goal(why), g)
                        }
                    };
                    msg = encode_kind(&kind, at);
                }
                t.broadcast(root, &mut msg);
                let (kind, at) = decode_kind(&msg);
                return finish(st, stats, edges, None, clock, Some((earliest, kind, at)));
            }
            if on == 0 {
                return finish(st, stats, edges, Some("timeout"), clock, None);
            }
            if opts.max_states.is_some_and(|m| states[0] > m) {
                return finish(st, stats, edges, Some("max-states"), clock, None);
            }
        }
        if let Some(h) = hook.as_mut() {
            if h(&st, &edges, &marks, &mut clock) {
                return finish(st, stats, edges, None, clock, None);
            }
        }
        // The next level: each owned shard's new states by key, shard after shard.
        frontier.clear();
        for &k in &owned {
            let mut new: Vec<(u64, u32)> = keys[k]
                .iter()
                .enumerate()
                .map(|(i, &key)| (key, st.id(k, marks[k] + i as u32)))
                .collect();
            new.sort_unstable();
            frontier.extend(new.into_iter().map(|x| x.1));
        }
        let all = t.gather_all(&(frontier.len() as u64).to_le_bytes());
        clock.talked();
        offset = all[..me]
            .iter()
            .map(|b| u64::from_le_bytes(b[..8].try_into().expect("8 bytes")))
            .sum();
    }
}

fn encode_kind(kind: &FoundKind, at: u32) -> Vec<u8> {
    let (tag, text) = match kind {
        FoundKind::Error(m) => (0u8, m.as_str()),
        FoundKind::Goal(m) => (1, m.as_str()),
        FoundKind::Deadlock => (2, ""),
    };
    let mut v = vec![tag];
    v.extend_from_slice(&at.to_le_bytes());
    v.extend_from_slice(text.as_bytes());
    v
}

fn decode_kind(v: &[u8]) -> (FoundKind, u32) {
    let at = u32::from_le_bytes(v[1..5].try_into().expect("4 bytes"));
    let text = String::from_utf8_lossy(&v[5..]).into_owned();
    let kind = match v[0] {
        0 => FoundKind::Error(text),
        1 => FoundKind::Goal(text),
        _ => FoundKind::Deadlock,
    };
    (kind, at)
}

/// The bytes of the stored states `ids` (each stored by its owner), on every rank.
pub(crate) fn fetch(st: &Store, t: &dyn Transport, ids: &[u32]) -> Vec<Vec<u8>> {
    let (me, size) = (t.rank(), t.size());
    let mine: Vec<u8> = ids
        .iter()
        .filter(|&&i| owner_of(i, size) == me)
        .flat_map(|&i| st.get(i).iter().copied())
        .collect();
    let all = t.gather_all(&mine);
    let mut at = vec![0usize; size];
    ids.iter()
        .map(|&i| {
            let r = owner_of(i, size);
            let s = all[r][at[r]..at[r] + st.width].to_vec();
            at[r] += st.width;
            s
        })
        .collect()
}

/// The chain of ids from the initial state to `id`, following parent links across ranks.
pub(crate) fn chain(st: &Store, t: &dyn Transport, id: u32) -> Vec<u32> {
    let (me, size) = (t.rank(), t.size());
    let mut out = vec![id];
    loop {
        let last = *out.last().expect("non-empty");
        let root = owner_of(last, size);
        let mut b = if root == me {
            st.parent(last).to_le_bytes().to_vec()
        } else {
            Vec::new()
        };
        t.broadcast(root, &mut b);
        let p = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
        if p == NO_PARENT {
            out.reverse();
            return out;
        }
        out.push(p);
    }
}

/// The label of a step from `from` to `to` that moves `mover` (any step, if `None`).
pub(crate) fn label<S: TransitionSystem>(
    sys: &S,
    from: &[u8],
    to: &[u8],
    mover: Option<u32>,
) -> S::Label {
    let mut label = None;
    let mut moved = Vec::new();
    sys.successors(from, &mut |l, r| {
        if label.is_none() && r.as_deref() == Ok(to) {
            let fits = mover.is_none_or(|p| {
                moved.clear();
                sys.moved(l, &mut moved);
                moved.contains(&p)
            });
            if fits {
                label = Some(l);
            }
        }
    });
    label.expect("a stored state's successor is one of its successors")
}

/// The steps along states `path` (the first is where they start).
pub(crate) fn steps<S: TransitionSystem>(sys: &S, path: &[Vec<u8>]) -> Vec<(S::Label, Vec<u8>)> {
    path.windows(2)
        .map(|w| (label(sys, &w[0], &w[1], None), w[1].clone()))
        .collect()
}

/// Every rank's statistics, summed, with each rank's share.
pub(crate) fn totals(t: &dyn Transport, ex: &Explored) -> Stats {
    let mine = RankStats {
        states: ex.st.len() as u64,
        memory: ex.st.memory(),
        work: ex.clock.work,
        comm: ex.clock.comm,
        sent: ex.clock.sent,
    };
    let s = &ex.stats;
    let words = [
        mine.states,
        mine.memory,
        mine.work.as_nanos() as u64,
        mine.comm.as_nanos() as u64,
        mine.sent,
        s.transitions,
        s.deadlocks,
        s.errors,
        s.goals,
        s.elapsed.as_nanos() as u64,
    ];
    let all = t.gather_all(&super::transport::words_to_bytes(&words));
    let word = |b: &[u8], k: usize| u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().expect("8"));
    let ranks: Vec<RankStats> = all
        .iter()
        .map(|b| RankStats {
            states: word(b, 0),
            memory: word(b, 1),
            work: Duration::from_nanos(word(b, 2)),
            comm: Duration::from_nanos(word(b, 3)),
            sent: word(b, 4),
        })
        .collect();
    let sum = |k: usize| all.iter().map(|b| word(b, k)).sum::<u64>();
    Stats {
        states: sum(0),
        transitions: sum(5),
        deadlocks: sum(6),
        errors: sum(7),
        goals: sum(8),
        levels: s.levels,
        elapsed: Duration::from_nanos(all.iter().map(|b| word(b, 9)).max().unwrap_or(0)),
        memory: sum(1),
        state_bytes: ex.st.width as u64,
        ranks,
    }
}

/// `crate::reach` across the ranks of `t`: the same counts with no violation, the same
/// earliest violation and path with one, on every rank.
pub(crate) fn reach_states<S: TransitionSystem>(
    sys: &S,
    opts: &Options,
    goal: &crate::Goal<'_>,
    t: &dyn Transport,
) -> Outcome<S::Label> {
    let plan = Plan {
        goal: Some(goal),
        edges: false,
        movers: false,
    };
    let ex = explore(sys, opts, t, &plan, None);
    let stats = totals(t, &ex);
    let found = ex.found.as_ref().map(|(key, kind, at)| {
        let ids = chain(&ex.st, t, *at);
        let path = fetch(&ex.st, t, &ids);
        let failed = match kind {
            FoundKind::Error(_) => {
                let n = *key as u32;
                let mut k = 0u32;
                let mut l = None;
                sys.successors(path.last().expect("non-empty"), &mut |x, _| {
                    if k == n {
                        l = Some(x);
                    }
                    k += 1;
                });
                l
            }
            _ => None,
        };
        Found {
            kind: kind.clone(),
            initial: path[0].clone(),
            steps: steps(sys, &path),
            failed,
        }
    });
    Outcome {
        stats,
        found,
        stopped: ex.stopped,
    }
}
