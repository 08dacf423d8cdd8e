//! Breadth-first reachability on one core or several, with the same answer on any number.
//!
//! The search is level-synchronous and goes in rounds: a round takes up to `BATCH` states
//! of the current level, expands them (cut into contiguous parts, several a thread, which
//! threads take as they get free, bucketing every successor by the store shard its hash
//! picks), then stores the successors (threads take shards as they get free, each shard's
//! buckets in the order of the part they came from). Every shard
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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

pub(crate) const SHARD_BITS: u32 = 6;
/// Frontier states per round: small enough to stop soon after a violation and to keep the
/// buffered successors small, large enough that starting threads costs little.
const BATCH: usize = 1 << 14;
/// Rounds with fewer frontier states run on the calling thread.
const PAR_MIN: usize = 512;
/// Parts a round is cut into per thread.
const PIECES: usize = 16;
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

/// Stores the round's successors bound for shard `k`, judging each new state with `goal`:
/// how many goals, and the earliest.
fn store<L>(
    k: usize,
    shard: &mut Shard,
    parts: &[Part<L>],
    round: &[u32],
    width: usize,
    opts: &Options,
    goal: &(dyn Fn(&[u8]) -> Option<String> + Sync),
) -> (u64, Option<Event<L>>) {
    let mut goals = 0;
    let mut event: Option<Event<L>> = None;
    // The shard's candidates part after part; the touches run ahead across parts, so that
    // a round cut into many parts keeps its loads overlapping.
    let bs: Vec<&Bucket> = parts.iter().map(|p| &p.buckets[k]).collect();
    // The next candidate's hash to touch: (bucket, index).
    let (mut ab, mut ai) = (0, 0);
    let mut ahead = || {
        while let Some(b) = bs.get(ab) {
            if let Some(&h) = b.hash.get(ai) {
                ai += 1;
                return Some(h);
            }
            (ab, ai) = (ab + 1, 0);
        }
        None
    };
    let mut touched = 0u64;
    for _ in 0..TOUCH {
        if let Some(h) = ahead() {
            touched ^= shard.touch(width, h);
        }
    }
    for b in &bs {
        for i in 0..b.hash.len() {
            if let Some(h) = ahead() {
                touched ^= shard.touch(width, h);
            }
            let (h, key) = (b.hash[i], b.key[i]);
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
    }
    std::hint::black_box(touched);
    (goals, event)
}

/// Worker threads kept for the whole search: starting threads anew for both phases of
/// every round cost 40-200 us each on two cores (a stack mapped, a thread woken), ten
/// percent of a round's time. A worker spins a little for the next job (the phases follow
/// each other closely) and then sleeps.
struct Pool {
    workers: usize,
    /// Bumped when a job is posted.
    posted: AtomicU64,
    job: Mutex<Option<JobRef>>,
    /// Workers still running the current job.
    running: AtomicUsize,
    quit: AtomicBool,
    panicked: AtomicBool,
    sleep: Mutex<()>,
    wake: Condvar,
}

/// The current job, its lifetime erased: `Pool::run` does not return before every worker
/// is done with it.
#[derive(Clone, Copy)]
struct JobRef(*const (dyn Fn() + Sync));

// SAFETY: the job is `Sync` and outlives every use (see `Pool::run`).
unsafe impl Send for JobRef {}

/// How long a waiting thread spins before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

impl Pool {
    fn new(workers: usize) -> Pool {
        Pool {
            workers,
            posted: AtomicU64::new(0),
            job: Mutex::new(None),
            running: AtomicUsize::new(0),
            quit: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Spins, then sleeps, until `ready`.
    fn wait(&self, ready: impl Fn() -> bool) {
        let t = Instant::now();
        let mut n = 0u32;
        while !ready() {
            n += 1;
            if !n.is_multiple_of(64) || t.elapsed() < SPIN {
                std::hint::spin_loop();
                continue;
            }
            let g = self.sleep.lock().expect("no panic holds it");
            if !ready() {
                drop(self.wake.wait(g).expect("no panic holds it"));
            }
        }
    }

    fn notify(&self) {
        let _g = self.sleep.lock().expect("no panic holds it");
        self.wake.notify_all();
    }

    fn worker(&self) {
        let mut seen = 0;
        loop {
            self.wait(|| {
                self.quit.load(Ordering::Acquire) || self.posted.load(Ordering::Acquire) != seen
            });
            if self.quit.load(Ordering::Acquire) {
                return;
            }
            seen = self.posted.load(Ordering::Acquire);
            let job = self.job.lock().expect("no panic holds it").expect("a job");
            // SAFETY: `run` keeps the job alive until `running` is back to 0.
            let f = unsafe { &*job.0 };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
                self.notify();
            }
        }
    }

    /// Runs `f` on the calling thread and on every worker, and returns when all are done.
    fn run(&self, f: &(dyn Fn() + Sync)) {
        if self.workers == 0 {
            return f();
        }
        // SAFETY: only the lifetime changes; the workers drop the reference before
        // `running` reaches 0, which this function waits for (even when `f` panics here).
        let erased: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(f) };
        self.running.store(self.workers, Ordering::Release);
        *self.job.lock().expect("no panic holds it") = Some(JobRef(erased));
        {
            let _g = self.sleep.lock().expect("no panic holds it");
            self.posted.fetch_add(1, Ordering::AcqRel);
            self.wake.notify_all();
        }
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        self.wait(|| self.running.load(Ordering::Acquire) == 0);
        if let Err(p) = mine {
            std::panic::resume_unwind(p);
        }
        assert!(!self.panicked.load(Ordering::Acquire), "a worker panicked");
    }

    fn stop(&self) {
        self.quit.store(true, Ordering::Release);
        self.notify();
    }
}

/// Runs `work` on every item `items` yields, on the pool's threads or (`alone`) the
/// calling one only, each taking the next item when done with one: a thread that starts
/// late or is descheduled leaves its share to the others instead of holding up the round.
fn share<T: Send, R: Send>(
    pool: &Pool,
    alone: bool,
    items: impl Iterator<Item = T> + Send,
    init: impl Fn() -> R + Sync,
    work: impl Fn(&mut R, T) + Sync,
) -> Vec<R> {
    let items = Mutex::new(items);
    let run = || {
        let mut acc = init();
        loop {
            let item = items.lock().expect("no worker panicked").next();
            match item {
                Some(x) => work(&mut acc, x),
                None => return acc,
            }
        }
    };
    if alone {
        return vec![run()];
    }
    let out = Mutex::new(Vec::new());
    pool.run(&|| {
        let r = run();
        out.lock().expect("no worker panicked").push(r);
    });
    out.into_inner().expect("no worker panicked")
}

/// What every round of one search shares.
struct Ctx<'a, S: TransitionSystem> {
    sys: &'a S,
    opts: &'a Options,
    goal: &'a (dyn Fn(&[u8]) -> Option<String> + Sync),
    pool: &'a Pool,
}

/// One round: expand `round`, store the successors; the earliest event, if any.
fn round<S>(
    cx: &Ctx<'_, S>,
    st: &mut Store,
    round: &[u32],
    parts: &mut Vec<Part<S::Label>>,
    stats: &mut Stats,
) -> Option<Event<S::Label>>
where
    S: TransitionSystem + Sync,
    S::Label: Send + Sync,
{
    let (sys, opts, goal, pool) = (cx.sys, cx.opts, cx.goal, cx.pool);
    let threads = if round.len() < PAR_MIN {
        1
    } else {
        opts.jobs.max(1)
    };
    // Several parts a thread, taken as threads get free: the last to finish is at most a
    // small part behind. Parts are cut by position only, so they change no result.
    let pieces = if threads == 1 { 1 } else { threads * PIECES };
    let chunk = round.len().div_ceil(pieces);
    let used = round.chunks(chunk).len();
    while parts.len() < used {
        parts.push(Part::new());
    }
    let parts = &mut parts[..used];
    for p in parts.iter_mut() {
        p.clear();
    }
    {
        let st: &Store = st;
        let work = round.chunks(chunk).zip(parts.iter_mut()).enumerate();
        share(
            pool,
            threads == 1,
            work,
            || (),
            |_, (t, (c, p))| expand(sys, st, c, t * chunk, opts, p),
        );
    }
    let width = st.width;
    let parts_ref: &[Part<S::Label>] = parts;
    let stored = share(
        pool,
        threads == 1,
        st.shards.iter_mut().enumerate(),
        || (0u64, None),
        |acc: &mut (u64, Option<Event<S::Label>>), (k, shard)| {
            let (g, e) = store(k, shard, parts_ref, round, width, opts, goal);
            acc.0 += g;
            acc.1 = earliest(acc.1.take(), e);
        },
    );
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
    let pool = Pool::new(opts.jobs.max(1) - 1);
    std::thread::scope(|sc| {
        for _ in 0..pool.workers {
            sc.spawn(|| pool.worker());
        }
        // Stops the workers however the search ends, before the scope waits for them.
        struct Stop<'p>(&'p Pool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.stop();
            }
        }
        let _stop = Stop(&pool);
        let cx = Ctx {
            sys,
            opts,
            goal,
            pool: &pool,
        };
        let mut parts: Vec<Part<S::Label>> = Vec::new();
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
                let event = round(&cx, &mut st, batch, &mut parts, &mut stats);
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
    })
}
