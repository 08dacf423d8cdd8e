//! The race-driven split (`--jobs N`): the top of the tree is explored by Source-DPOR,
//! whose backtrack points come from the races the units below it find.
//!
//! The static frontier of `parallel.rs` expands the top of the tree fully, which splits
//! nothing when the threads' first steps commute: sleep sets then block every sibling of
//! the first path, and all traces lie below one unit (the indexer). Here the top is
//! instead a Source-DPOR tree of depth `D`:
//!
//! 1. A *unit* is a branch of the top: a node (a prefix of depth `k < D`), the step taken
//!    there, and the path that continues it down to depth `D` by taking, at each new node,
//!    the first enabled process that is not asleep (Source-DPOR's choice), with the sleep
//!    sets Source-DPOR computes. It stops earlier where its execution ends.
//! 2. A unit is explored by the ordinary engine (Optimal- or Source-DPOR) below its root;
//!    the races it finds whose first event lies above the root (including those among its
//!    own path's steps, which it is the first to take) are reported with the processes
//!    that can start their reversal (`Hb::initials`), and the top reverses them as
//!    Source-DPOR's `add_backtrack` does: unless one of them is already in the node's
//!    backtrack set, the first that is not asleep there is added, which makes a new unit.
//!    Its sleep set is what sleeps at the node or was explored there before it and
//!    commutes with it.
//! 3. So the whole tree is explored by Source-DPOR above `D` and the chosen algorithm
//!    below it. Every node's explored processes are a source set for what its sleep set
//!    does not block (Source-DPOR's argument, node by node: a race below a node is
//!    reported to it, from whatever unit finds it), sleep sets never complete a trace
//!    twice, and each unit explores every trace of its subtree: one complete execution
//!    per trace, the same final states and verdict as the engine without a split.
//!
//! **Determinism.** What Source-DPOR does at a node depends on the order in which its
//! races arrive. Reports are therefore applied in the order one worker would produce
//! them: units are *committed* in the depth-first order of the top tree (a node's
//! branches in the order they were added), and a unit's reports are applied when it is
//! the one being committed, as they arrive (so that the first unit's races make work for
//! other workers at once), or when the commit reaches it. Units are explored in any order,
//! as soon as they exist: a unit's content is fixed when it is made. The report is the
//! sum of the committed units in commit order, so it is the same for any number of
//! workers and any timing; with stop-on-violation, the commit stops at the first unit with
//! a violation, and its counterexample is reported.

use crate::parallel::{explore_unit, probing, unlimited, Shared, Unit, UnitOut};
use crate::{Algo, Dpor, Kit, Options};
use fencer_ir::Program;
use fencer_machine::{Access, NoObserver, Step};
use fencer_memory::MemoryModel;
use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Where a unit's engine sends the races it finds above its root.
pub(crate) trait Sink: Sync {
    fn races(&self, unit: usize, races: &mut Vec<(usize, Vec<Step>)>);
}

/// A node of the top tree: the state after a prefix of depth `< D`.
struct Node {
    /// The unit whose path made it: the first in its subtree.
    owner: usize,
    sleep: Vec<(Step, Access)>,
    /// Source-DPOR's backtrack set, in the order added.
    backtrack: Vec<Step>,
    /// The processes explored here, in order: one branch each.
    done: Vec<Step>,
    kids: Vec<Kid>,
}

#[derive(Clone, Copy)]
enum Kid {
    Node(usize),
    /// A unit's root.
    Leaf(usize),
    /// A unit whose path is not known yet.
    Pending(usize),
}

/// Where a branch of the top starts, fixed when it is made: what a worker needs to extend
/// it.
#[derive(Clone)]
struct Start {
    /// The prefix to the node it starts at (the node's depth is its length).
    base: Vec<Step>,
    /// The step taken at the node (`None`: the first unit takes the first enabled one).
    pick: Option<Step>,
    /// The node's sleep set, and what was explored there before this branch.
    node_sleep: Vec<(Step, Access)>,
    done_before: Vec<Step>,
}

/// A branch of the top tree.
struct Branch {
    start: Start,
    /// The node it starts at, with the nodes above it.
    base_path: Vec<usize>,
    /// The top nodes on the unit's prefix (one per position above its root).
    path: Vec<usize>,
    prefix: Vec<Step>,
    /// Its exploration's result (`Some(None)`: cancelled).
    out: Option<Option<UnitOut>>,
}

/// A report waiting: from unit `unit` to node `node`, and the unit it waits for last seen.
struct Wait {
    unit: usize,
    node: usize,
    initials: Vec<Step>,
    blocker: usize,
}

struct Top {
    nodes: Vec<Node>,
    branches: Vec<Branch>,
    queue: VecDeque<usize>,
    /// Reports not applied yet (unit, node, initials), in the order they came: a report
    /// to a node waits for the units before its own in that node's subtree.
    waiting: Vec<Wait>,
    /// How many reports wait, by unit and node, and by unit.
    waits: HashMap<(usize, usize), usize>,
    unit_waits: HashMap<usize, usize>,
    /// The depth-first walk of the commit: a node and its next branch to visit.
    stack: Vec<(usize, usize)>,
    committed: Vec<usize>,
    /// The walk is over (or stopped at a violation).
    finished: bool,
    stop_on_violation: bool,
}

impl Top {
    fn new(stop_on_violation: bool) -> Top {
        let root = Node {
            owner: 0,
            sleep: Vec::new(),
            backtrack: Vec::new(),
            done: Vec::new(),
            kids: vec![Kid::Pending(0)],
        };
        let first = Branch {
            start: Start {
                base: Vec::new(),
                pick: None,
                node_sleep: Vec::new(),
                done_before: Vec::new(),
            },
            base_path: vec![0],
            path: Vec::new(),
            prefix: Vec::new(),
            out: None,
        };
        Top {
            nodes: vec![root],
            branches: vec![first],
            queue: VecDeque::from([0]),
            waiting: Vec::new(),
            waits: HashMap::new(),
            unit_waits: HashMap::new(),
            stack: vec![(0, 0)],
            committed: Vec::new(),
            finished: false,
            stop_on_violation,
        }
    }

    /// Source-DPOR's reversal, at node `n` (position `i` of unit `u`'s prefix), of a race
    /// startable by `initials`.
    fn reverse(&mut self, u: usize, n: usize, i: usize, initials: &[Step]) {
        let node = &mut self.nodes[n];
        if initials.iter().any(|q| node.backtrack.contains(q)) {
            return;
        }
        let asleep = |q: &Step| node.sleep.iter().any(|(s, _)| s == q);
        let Some(pick) = initials
            .iter()
            .copied()
            .find(|q| !asleep(q))
            .or_else(|| initials.first().copied())
        else {
            return;
        };
        node.backtrack.push(pick);
        if asleep(&pick) || node.done.contains(&pick) {
            return;
        }
        let done_before = node.done.clone();
        let node_sleep = node.sleep.clone();
        node.done.push(pick);
        let v = self.branches.len();
        node.kids.push(Kid::Pending(v));
        let from = &self.branches[u];
        self.branches.push(Branch {
            start: Start {
                base: from.prefix[..i].to_vec(),
                pick: Some(pick),
                node_sleep,
                done_before,
            },
            base_path: from.path[..=i].to_vec(),
            path: Vec::new(),
            prefix: Vec::new(),
            out: None,
        });
        self.queue.push_back(v);
    }

    /// Registers unit `v`'s path: its prefix and the sleep sets at the new nodes on it.
    fn register(&mut self, v: usize, prefix: Vec<Step>, sleeps: Vec<Vec<(Step, Access)>>) {
        let b = &self.branches[v];
        let k = b.start.base.len();
        let origin = b.base_path[k];
        let mut path = b.base_path.clone();
        if v == 0 {
            path.clear();
            if let Some(&s) = prefix.first() {
                path.push(0);
                self.nodes[0].backtrack.push(s);
                self.nodes[0].done.push(s);
            }
        } else if prefix.len() == k {
            path.truncate(k);
        }
        // New nodes at depths k+1 .. prefix.len()-1, each continued by the next.
        let mut last: Option<usize> = None;
        for (t, sleep) in (k + 1..prefix.len()).zip(sleeps) {
            let id = self.nodes.len();
            self.nodes.push(Node {
                owner: v,
                sleep,
                backtrack: vec![prefix[t]],
                done: vec![prefix[t]],
                kids: Vec::new(),
            });
            match last {
                Some(p) => self.nodes[p].kids.push(Kid::Node(id)),
                None => self.set_kid(origin, v, Kid::Node(id)),
            }
            path.push(id);
            last = Some(id);
        }
        match last {
            Some(p) => self.nodes[p].kids.push(Kid::Leaf(v)),
            None => self.set_kid(origin, v, Kid::Leaf(v)),
        }
        let b = &mut self.branches[v];
        b.path = path;
        b.prefix = prefix;
    }

    fn set_kid(&mut self, node: usize, v: usize, kid: Kid) {
        for k in &mut self.nodes[node].kids {
            if matches!(k, Kid::Pending(w) if *w == v) {
                *k = kid;
                return;
            }
        }
        debug_assert!(false, "a pending branch is its node's kid");
    }

    /// Takes a report from unit `u`: a race whose first event is at position `i` of its
    /// prefix, startable by `initials`.
    fn report(&mut self, u: usize, i: usize, initials: Vec<Step>) {
        let Some(&n) = self.branches[u].path.get(i) else {
            debug_assert!(false, "a race above the root is on the unit's path");
            return;
        };
        // Backtrack sets only grow: a report one of whose initials is there already
        // changes nothing, whenever it is applied.
        if initials.iter().any(|q| self.nodes[n].backtrack.contains(q)) {
            return;
        }
        let blocker = if self.waits.contains_key(&(u, n)) {
            Some(u)
        } else {
            self.blocker(u, n)
        };
        match blocker {
            None => self.reverse(u, n, i, &initials),
            Some(b) => {
                *self.waits.entry((u, n)).or_default() += 1;
                *self.unit_waits.entry(u).or_default() += 1;
                self.waiting.push(Wait {
                    unit: u,
                    node: n,
                    initials,
                    blocker: b,
                });
            }
        }
    }

    /// Whether unit `u`'s reports to node `n` come next there in the order of one
    /// worker: every unit before `u` in `n`'s subtree (depth-first) has finished and
    /// has nothing waiting for `n`. If not, the first unit that holds them up.
    fn blocker(&self, u: usize, n: usize) -> Option<usize> {
        if self.nodes[n].owner == u {
            return None;
        }
        let mut stack = vec![(n, 0usize)];
        while let Some((m, ki)) = stack.last_mut() {
            let Some(&kid) = self.nodes[*m].kids.get(*ki) else {
                stack.pop();
                continue;
            };
            *ki += 1;
            match kid {
                Kid::Node(c) => stack.push((c, 0)),
                Kid::Leaf(w) | Kid::Pending(w) => {
                    if w == u {
                        return None;
                    }
                    if self.holds_up(w) {
                        return Some(w);
                    }
                }
            }
        }
        debug_assert!(false, "a reporting unit is in its node's subtree");
        Some(u)
    }

    /// Whether unit `w` holds up the reports of the units after it (in the subtree of a
    /// node): it has not finished, or has reports waiting. Waiting anywhere, not only at
    /// that node: a report of `w` to a node below it can make a unit that comes before
    /// them. (What a
    /// waiting report waits for is always earlier in depth-first order, so nothing waits
    /// in a cycle.)
    fn holds_up(&self, w: usize) -> bool {
        self.branches[w].out.is_none() || self.unit_waits.contains_key(&w)
    }

    /// Applies the waiting reports that have become ready, in order, until none is.
    fn settle(&mut self) {
        loop {
            let mut progress = false;
            let mut k = 0;
            while k < self.waiting.len() {
                let (u, n, b) = {
                    let w = &self.waiting[k];
                    (w.unit, w.node, w.blocker)
                };
                let first = !self.waiting[..k].iter().any(|w| w.unit == u && w.node == n);
                // Only a change of the unit that held it up can make it ready.
                let blocked = if !first || (b != u && self.holds_up(b)) {
                    true
                } else {
                    match self.blocker(u, n) {
                        None => false,
                        Some(b) => {
                            self.waiting[k].blocker = b;
                            true
                        }
                    }
                };
                if !blocked {
                    let Wait { initials: init, .. } = self.waiting.remove(k);
                    match self.waits.get_mut(&(u, n)) {
                        Some(c) if *c > 1 => *c -= 1,
                        _ => {
                            self.waits.remove(&(u, n));
                        }
                    }
                    match self.unit_waits.get_mut(&u) {
                        Some(c) if *c > 1 => *c -= 1,
                        _ => {
                            self.unit_waits.remove(&u);
                        }
                    }
                    let i = self.branches[u]
                        .path
                        .iter()
                        .position(|&m| m == n)
                        .expect("the node is on the unit's path");
                    self.reverse(u, n, i, &init);
                    progress = true;
                } else {
                    k += 1;
                }
            }
            if !progress {
                return;
            }
        }
    }

    /// Moves the commit on over the units that have finished with nothing waiting.
    fn advance(&mut self) {
        self.settle();
        while !self.finished {
            let Some((n, ki)) = self.stack.last_mut() else {
                self.finished = true;
                return;
            };
            let Some(&kid) = self.nodes[*n].kids.get(*ki) else {
                self.stack.pop();
                continue;
            };
            match kid {
                Kid::Pending(_) => return,
                Kid::Node(m) => {
                    *ki += 1;
                    self.stack.push((m, 0));
                }
                Kid::Leaf(u) => {
                    let Some(out) = &self.branches[u].out else {
                        return;
                    };
                    if self.unit_waits.contains_key(&u) {
                        return;
                    }
                    *ki += 1;
                    self.committed.push(u);
                    let violation = out.as_ref().is_some_and(|o| o.cex.is_some());
                    if violation && self.stop_on_violation {
                        self.finished = true;
                    }
                }
            }
        }
    }
}

struct Coord {
    top: Mutex<Top>,
    wake: Condvar,
}

/// Held by a worker while it works: if it panics, the others, which may wait for its
/// unit, are told to finish, and the panic reaches the caller instead of a hang.
struct WakeOnPanic<'a>(&'a Coord);

impl Drop for WakeOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut top = self.0.top.lock().unwrap_or_else(|e| e.into_inner());
            top.finished = true;
            self.0.wake.notify_all();
        }
    }
}

impl Sink for Coord {
    fn races(&self, unit: usize, races: &mut Vec<(usize, Vec<Step>)>) {
        let mut top = self.top.lock().expect("no worker panics holding it");
        let queued = top.queue.len();
        for (i, init) in races.drain(..) {
            top.report(unit, i, init);
        }
        if top.queue.len() > queued {
            self.wake.notify_all();
        }
    }
}

/// The depth of the top: the middle of the span of the first execution's races (by the
/// position of their first event). Above it, races are reversed by the top and make
/// units; below it, inside units. The middle of the span, rather than of the races, keeps
/// the number of units moderate where races crowd at the end of a long span (measured:
/// 96 units for fib_bench_longer-1, 145 for a 15-thread indexer, where the median race
/// gave 1,918 and 219), since every unit costs about one more execution than exploring
/// its subtree in place would.
pub(crate) fn depth<M: MemoryModel>(prog: &Program, opts: &Options, start: Instant) -> usize {
    races_span::<M>(prog, opts, start).0
}

/// [`depth`], and the position of the first event of the first execution's first race.
pub(crate) fn races_span<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    start: Instant,
) -> (usize, usize) {
    let eopts = Options {
        algo: Algo::Optimal,
        ..probing(opts)
    };
    let mut obs = NoObserver;
    let mut d = Dpor::<M>::new(prog, &eopts, false, &mut obs);
    d.col.start = start;
    d.execute(0);
    let first = d.pending.iter().map(|&(i, _)| i).min();
    let last = d.pending.iter().map(|&(i, _)| i).max();
    match (first, last) {
        (Some(a), Some(b)) => (a + (b - a) / 2 + 1, a),
        _ => (1, 0),
    }
}

/// Extends the branch that starts at `b` down to depth `top_depth`: the unit, and the
/// sleep sets at the new nodes of its path.
fn extend<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    b: &Start,
    top_depth: usize,
) -> (Unit, Vec<Vec<(Step, Access)>>) {
    let eopts = unlimited(opts);
    let mut obs = NoObserver;
    let mut d = Dpor::<M>::new(prog, &eopts, false, &mut obs);
    d.weak = crate::Weak::Initials;
    d.frontier = Some(top_depth);
    d.thin = true;
    let k = b.base.len();
    d.root = top_depth;
    d.schedule = b.base.clone();
    d.empty_positions(k + 1);
    d.depth = k + 1;
    {
        let p = &mut d.pos[k];
        p.sleep = b.node_sleep.clone();
        // Their accesses are computed again where they are compared.
        p.done = b.done_before.iter().map(|&s| (s, Access::Any)).collect();
        p.backtrack.extend(b.pick);
    }
    d.execute(k);
    let unit = d.units.pop().expect("an extension ends in a unit");
    let end = unit.prefix.len();
    let sleeps = (k + 1..end).map(|t| d.pos[t].sleep.clone()).collect();
    (unit, sleeps)
}

/// Explores with the race-driven split, `jobs` workers: the units' results in commit
/// order, how many units were made, and the top's depth.
pub(crate) fn explore<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    jobs: usize,
    top_depth: Option<usize>,
    shared: &Shared,
    traces: bool,
) -> (Vec<(usize, UnitOut)>, usize, usize) {
    let top_depth = top_depth
        .unwrap_or_else(|| depth::<M>(prog, opts, shared.start))
        .max(1);
    shared.timed_out(opts);
    let coord = Coord {
        top: Mutex::new(Top::new(opts.stop_on_violation)),
        wake: Condvar::new(),
    };
    let work = || {
        let mut kit = Kit::default();
        loop {
            let _wake = WakeOnPanic(&coord);
            let (v, branch) = {
                let mut top = coord.top.lock().expect("no worker panics holding it");
                loop {
                    if top.finished || shared.stopped().is_some() {
                        return;
                    }
                    if let Some(v) = top.queue.pop_front() {
                        break (v, top.branches[v].start.clone());
                    }
                    top = coord.wake.wait(top).expect("no worker panics holding it");
                }
            };
            let (unit, sleeps) = extend::<M>(prog, opts, &branch, top_depth);
            {
                let mut top = coord.top.lock().expect("no worker panics holding it");
                top.register(v, unit.prefix.clone(), sleeps);
                top.advance();
                coord.wake.notify_all();
            }
            let out =
                explore_unit::<M>(prog, opts, &unit, v, shared, traces, Some(&coord), &mut kit);
            let mut top = coord.top.lock().expect("no worker panics holding it");
            top.branches[v].out = Some(out);
            top.advance();
            if top.finished {
                shared.halt();
            }
            coord.wake.notify_all();
        }
    };
    if jobs <= 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(work);
            }
        });
    }
    let mut top = coord.top.into_inner().expect("no worker panicked");
    let made = top.branches.len();
    let mut order = std::mem::take(&mut top.committed);
    if !top.finished {
        // Stopped by a limit: the partial statistics include the units that finished
        // beyond the commit.
        order.extend(0..made);
    }
    // Units are named by their place in the commit order (their numbers depend on
    // timing).
    let outs: Vec<(usize, UnitOut)> = order
        .into_iter()
        .filter_map(|u| top.branches[u].out.take().flatten())
        .enumerate()
        .collect();
    // Units made beyond a violation depend on timing: those summed do not.
    let units = if top.finished { outs.len() } else { made };
    (outs, units, top_depth)
}
