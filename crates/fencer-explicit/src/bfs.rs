//! Breadth-first reachability on one core or several, with the same answer on any number.
//!
//! The search is level-synchronous and goes in rounds: a round takes up to `BATCH` states
//! of the current level, expands them (each thread a contiguous part, bucketing every
//! successor by the store shard its hash picks), then stores the successors (each thread
//! some shards, each shard's buckets in the order of the part they came from). Every shard
//! thus sees its candidates in one fixed order, the order a single thread would generate
//! them in, so which states are new, their ids, their parents and the next level's order
//! (shard by shard, in insertion order) do not depend on the number of threads or on
//! timing. The number of shards is fixed for the same reason.
//!
//! What stops the search (a run-time error, a goal, a deadlock) is recorded with its place
//! in that order, the round is finished, and the earliest one is reported: a shortest path,
//! and always the same one.

use crate::store::{hash, Shard, Store, NO_PARENT};
use crate::{Found, FoundKind, Options, Outcome, Stats, TransitionSystem};
use std::time::Instant;

const SHARD_BITS: u32 = 6;
/// Frontier states per round: small enough to stop soon after a violation and to keep the
/// buffered successors small, large enough that starting threads costs little.
const BATCH: usize = 1 << 14;
/// Rounds with fewer frontier states run on the calling thread.
const PAR_MIN: usize = 512;
/// How far ahead of its insertion a candidate's table slot (and stored state) is loaded.
const TOUCH: usize = 16;

/// Why the search stops, and where in the single-thread order: the frontier position in
/// the round (high half of `key`) and the successor's index (low half; a deadlock comes
/// after all).
struct Event<L> {
    key: u64,
    kind: FoundKind,
    at: u32,
    failed: Option<L>,
}

fn earliest<L>(a: Option<Event<L>>, b: Option<Event<L>>) -> Option<Event<L>> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.key < x.key { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Successors bound for one shard: their bytes, hashes and keys.
#[derive(Default)]
struct Bucket {
    bytes: Vec<u8>,
    hash: Vec<u64>,
    key: Vec<u64>,
}

/// One thread's expansion of its part of a round.
struct Part<L> {
    buckets: Vec<Bucket>,
    transitions: u64,
    errors: u64,
    deadlocks: u64,
    event: Option<Event<L>>,
}

impl<L> Part<L> {
    fn new() -> Part<L> {
        Part {
            buckets: (0..1 << SHARD_BITS).map(|_| Bucket::default()).collect(),
            transitions: 0,
            errors: 0,
            deadlocks: 0,
            event: None,
        }
    }
    fn clear(&mut self) {
        for b in &mut self.buckets {
            b.bytes.clear();
            b.hash.clear();
            b.key.clear();
        }
        self.transitions = 0;
        self.errors = 0;
        self.deadlocks = 0;
        self.event = None;
    }
}

/// Expands `states` (which start at position `first` of the round) into `out`.
fn expand<S: TransitionSystem>(
    sys: &S,
    st: &Store,
    states: &[u32],
    first: usize,
    opts: &Options,
    out: &mut Part<S::Label>,
) {
    let mut cur = Vec::with_capacity(st.width);
    for (j, &id) in states.iter().enumerate() {
        let pos = ((first + j) as u64) << 32;
        cur.clear();
        cur.extend_from_slice(st.get(id));
        let mut n = 0u32;
        sys.successors(&cur, &mut |l, r| {
            let key = pos | n as u64;
            n += 1;
            match r {
                Err(msg) => {
                    out.errors += 1;
                    if !opts.exhaustive && out.event.is_none() {
                        out.event = Some(Event {
                            key,
                            kind: FoundKind::Error(msg),
                            at: id,
                            failed: Some(l),
                        });
                    }
                }
                Ok(s) => {
                    let h = hash(s);
                    let b = &mut out.buckets[st.shard_of(h)];
                    b.bytes.extend_from_slice(s);
                    b.hash.push(h);
                    b.key.push(key);
                }
            }
        });
        out.transitions += n as u64;
        if n == 0 {
            out.deadlocks += 1;
            if opts.deadlock && !opts.exhaustive && out.event.is_none() {
                out.event = Some(Event {
                    key: pos | u32::MAX as u64,
                    kind: FoundKind::Deadlock,
                    at: id,
                    failed: None,
                });
            }
        }
    }
}

/// Stores the round's successors bound for `shards` (shard number, shard), judging each
/// new state with `goal`: how many goals, and the earliest.
fn store<L>(
    shards: Vec<(usize, &mut Shard)>,
    parts: &[Part<L>],
    round: &[u32],
    width: usize,
    opts: &Options,
    goal: &(dyn Fn(&[u8]) -> Option<String> + Sync),
) -> (u64, Option<Event<L>>) {
    let mut goals = 0;
    let mut event: Option<Event<L>> = None;
    for (k, shard) in shards {
        for p in parts {
            let b = &p.buckets[k];
            let mut touched = 0u64;
            for &h in b.hash.iter().take(TOUCH) {
                touched ^= shard.touch(width, h);
            }
            for (i, (&h, &key)) in b.hash.iter().zip(&b.key).enumerate() {
                if let Some(&ahead) = b.hash.get(i + TOUCH) {
                    touched ^= shard.touch(width, ahead);
                }
                let s = &b.bytes[i * width..(i + 1) * width];
                let parent = round[(key >> 32) as usize];
                if let Ok(local) = shard.insert(width, s, h, parent) {
                    if let Some(why) = goal(s) {
                        goals += 1;
                        if !opts.exhaustive && event.as_ref().is_none_or(|e| key < e.key) {
                            event = Some(Event {
                                key,
                                kind: FoundKind::Goal(why),
                                at: (local << SHARD_BITS) | k as u32,
                                failed: None,
                            });
                        }
                    }
                }
            }
            std::hint::black_box(touched);
        }
    }
    (goals, event)
}

/// One round: expand `round`, store the successors; the earliest event, if any.
fn round<S>(
    sys: &S,
    st: &mut Store,
    round: &[u32],
    opts: &Options,
    goal: &(dyn Fn(&[u8]) -> Option<String> + Sync),
    parts: &mut [Part<S::Label>],
    stats: &mut Stats,
) -> Option<Event<S::Label>>
where
    S: TransitionSystem + Sync,
    S::Label: Send + Sync,
{
    let threads = if round.len() < PAR_MIN {
        1
    } else {
        parts.len()
    };
    let chunk = round.len().div_ceil(threads);
    let used = round.chunks(chunk).len();
    let parts = &mut parts[..used];
    for p in parts.iter_mut() {
        p.clear();
    }
    {
        let st: &Store = st;
        if used == 1 {
            expand(sys, st, round, 0, opts, &mut parts[0]);
        } else {
            // The calling thread expands the first part itself: one thread fewer to start
            // and join in every round.
            std::thread::scope(|sc| {
                let mut work = round.chunks(chunk).zip(parts.iter_mut()).enumerate();
                let (_, (c0, p0)) = work.next().expect("two parts or more");
                for (t, (c, p)) in work {
                    sc.spawn(move || expand(sys, st, c, t * chunk, opts, p));
                }
                expand(sys, st, c0, 0, opts, p0);
            });
        }
    }
    let width = st.width;
    let mut groups: Vec<Vec<(usize, &mut Shard)>> = (0..threads).map(|_| Vec::new()).collect();
    for (k, sh) in st.shards.iter_mut().enumerate() {
        groups[k % threads].push((k, sh));
    }
    let parts_ref: &[Part<S::Label>] = parts;
    let stored: Vec<(u64, Option<Event<S::Label>>)> = if threads == 1 {
        groups
            .into_iter()
            .map(|g| store(g, parts_ref, round, width, opts, goal))
            .collect()
    } else {
        std::thread::scope(|sc| {
            let mut groups = groups.into_iter();
            let g0 = groups.next().expect("two groups or more");
            let hs: Vec<_> = groups
                .map(|g| sc.spawn(move || store(g, parts_ref, round, width, opts, goal)))
                .collect();
            let mut out = vec![store(g0, parts_ref, round, width, opts, goal)];
            out.extend(hs.into_iter().map(|h| h.join().expect("a worker panicked")));
            out
        })
    };
    let mut event = None;
    for p in parts.iter_mut() {
        stats.transitions += p.transitions;
        stats.errors += p.errors;
        stats.deadlocks += p.deadlocks;
        event = earliest(event, p.event.take());
    }
    for (g, e) in stored {
        stats.goals += g;
        event = earliest(event, e);
    }
    event
}

/// Breadth-first search of every reachable state, on `opts.jobs` threads (one if 0).
/// `goal(s)` names why a state stops the search (a failed assertion, a reached
/// expression); errors always do, deadlocks with `opts.deadlock`. Counts, ids and the
/// counterexample (a shortest path) are the same for any number of threads.
pub(crate) fn reach_states<S>(
    sys: &S,
    opts: &Options,
    goal: &(dyn Fn(&[u8]) -> Option<String> + Sync),
) -> Outcome<S::Label>
where
    S: TransitionSystem + Sync,
    S::Label: Send + Sync,
{
    let start = Instant::now();
    let mut st = Store::new(sys.width(), SHARD_BITS);
    let mut stats = Stats::default();
    let init = sys.initial();
    let (root, _) = st.insert(&init, NO_PARENT);
    let finish = |mut stats: Stats, st: &Store, event: Option<Event<S::Label>>, stopped| {
        let found = event.map(|e| {
            let (initial, steps) = st.path(sys, e.at);
            Found {
                kind: e.kind,
                initial,
                steps,
                failed: e.failed,
            }
        });
        stats.states = st.len() as u64;
        stats.elapsed = start.elapsed();
        stats.memory = st.memory();
        stats.state_bytes = st.width as u64;
        Outcome {
            stats,
            found,
            stopped,
        }
    };
    if let Some(why) = goal(&init) {
        let e = Event {
            key: 0,
            kind: FoundKind::Goal(why),
            at: root,
            failed: None,
        };
        return finish(stats, &st, Some(e), None);
    }
    let mut parts: Vec<Part<S::Label>> = (0..opts.jobs.max(1)).map(|_| Part::new()).collect();
    let mut frontier = vec![root];
    while !frontier.is_empty() {
        stats.levels += 1;
        let marks: Vec<u32> = st.shards.iter().map(Shard::len).collect();
        for batch in frontier.chunks(BATCH) {
            if opts.timeout.is_some_and(|t| start.elapsed() >= t) {
                return finish(stats, &st, None, Some("timeout"));
            }
            if opts.max_states.is_some_and(|m| st.len() as u64 > m) {
                return finish(stats, &st, None, Some("max-states"));
            }
            let event = round(sys, &mut st, batch, opts, goal, &mut parts, &mut stats);
            if event.is_some() {
                return finish(stats, &st, event, None);
            }
        }
        let st = &st;
        frontier = marks
            .iter()
            .enumerate()
            .flat_map(|(k, &m)| (m..st.shards[k].len()).map(move |i| st.id(k, i)))
            .collect();
    }
    finish(stats, &st, None, None)
}
