//! The reference explorer: every interleaving of thread steps and store-buffer updates,
//! without partial-order reduction. It is the oracle the other engines are tested against,
//! so it is written to be obviously correct rather than fast.
//!
//! Exploration is a depth-first search over pairs (machine state, Shasha-Snir trace so
//! far). Two paths that reach the same pair have the same futures and produce the same set
//! of complete traces, so the second is skipped: the memoisation loses no final state, no
//! violation and no trace. Complete executions are therefore counted once per distinct
//! Shasha-Snir trace, and the trace set is kept to count them.
//!
//! Pairs and traces are remembered by 128-bit fingerprints (hash compaction): a false
//! "already visited" needs two distinct pairs to collide, with probability about n^2/2^129
//! for n pairs, far below the chance of a hardware fault in any run this tool can make.

use fencer_ir::Program;
use fencer_machine::collect::Collector;
use fencer_machine::trace::TraceHash;
use fencer_machine::{Event, NoObserver, Observer, State, Status, Step};
use fencer_memory::{MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Limit, Report};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Options {
    pub timeout: Option<Duration>,
    pub max_executions: Option<u64>,
    /// Cut executions that take any backward jump more than this many times in one entry
    /// of its loop.
    pub unroll: Option<u32>,
    /// Most visible events one thread may execute in one execution; a thread that
    /// reaches it is cut while the others go on.
    pub max_depth: usize,
    /// Most distinct (state, trace) pairs to remember.
    pub max_states: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: None,
            max_executions: None,
            unroll: None,
            max_depth: 10_000,
            max_states: Some(20_000_000),
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Node {
    state: State,
    trace: TraceHash,
}

impl Node {
    /// 128-bit fingerprint of the node, for the visited set.
    fn fingerprint(&self) -> u128 {
        let mut a = std::collections::hash_map::DefaultHasher::new();
        (1u8, self).hash(&mut a);
        let mut b = std::collections::hash_map::DefaultHasher::new();
        (2u8, self).hash(&mut b);
        ((a.finish() as u128) << 64) | b.finish() as u128
    }
}

/// Everything the exploration found, before it is turned into a [`Report`].
pub struct Outcome {
    pub report: Report,
    /// Fingerprints of the distinct Shasha-Snir traces of complete executions.
    pub traces: HashSet<u128>,
}

pub fn explore(prog: &Program, model: ModelKind, opts: &Options) -> Outcome {
    explore_observed(prog, model, opts, &mut NoObserver)
}

/// Explores like [`explore`], showing `obs` every execution that ends (and every fault)
/// once per distinct (state, trace) it ends in.
pub fn explore_observed(
    prog: &Program,
    model: ModelKind,
    opts: &Options,
    obs: &mut dyn Observer,
) -> Outcome {
    match model {
        ModelKind::Sc => Explorer::<Sc>::new(prog, opts, obs).run(),
        ModelKind::Tso => Explorer::<Tso>::new(prog, opts, obs).run(),
        ModelKind::Pso => Explorer::<Pso>::new(prog, opts, obs).run(),
    }
}

struct Explorer<'a, M> {
    prog: &'a Program,
    opts: &'a Options,
    col: Collector<'a>,
    visited: HashSet<u128>,
    traces: HashSet<u128>,
    obs: &'a mut dyn Observer,
    _m: std::marker::PhantomData<M>,
}

struct DfsFrame {
    node: Node,
    steps: Vec<Step>,
    next: usize,
}

impl<'a, M: MemoryModel> Explorer<'a, M> {
    fn new(prog: &'a Program, opts: &'a Options, obs: &'a mut dyn Observer) -> Self {
        Explorer {
            prog,
            opts,
            col: Collector::new(prog),
            visited: HashSet::new(),
            traces: HashSet::new(),
            obs,
            _m: std::marker::PhantomData,
        }
    }

    fn enabled(&self, s: &State) -> Vec<Step> {
        let mut v = Vec::new();
        s.enabled::<M>(self.prog, &mut v);
        v
    }

    fn run(mut self) -> Outcome {
        let (state, status) = State::initial_limited(
            self.prog,
            self.opts.unroll.unwrap_or(u32::MAX),
            self.opts.max_depth.min(u32::MAX as usize) as u32,
        );
        let root = Node {
            state,
            trace: TraceHash::default(),
        };
        let mut path: Vec<Event> = Vec::new();
        if self.settle(&root, &status, &path) {
            let steps = self.enabled(&root.state);
            self.visited.insert(root.fingerprint());
            let mut stack = vec![DfsFrame {
                node: root,
                steps,
                next: 0,
            }];
            self.leaf_if_terminal(&stack[0].node, &stack[0].steps, &path);
            'dfs: while let Some(top) = stack.last_mut() {
                if top.next == top.steps.len() {
                    stack.pop();
                    path.pop();
                    continue;
                }
                let step = top.steps[top.next];
                top.next += 1;
                if self.limit_hit() {
                    break 'dfs;
                }
                let mut child = top.node.clone();
                let (ev, status) = child.state.step::<M>(self.prog, step);
                self.col.stats.events += 1;
                child.trace.record(&ev);
                path.push(ev);
                let ok = self.settle(&child, &status, &path);
                let fp = child.fingerprint();
                if !ok || self.visited.contains(&fp) {
                    path.pop();
                    continue;
                }
                // Per-thread bounds cut threads in the machine; this only stops programs
                // that spawn threads without bound.
                if path.len() > self.opts.max_depth.saturating_mul(64) {
                    self.col.stats.blocked += 1;
                    self.col.stats.depth_cut += 1;
                    path.pop();
                    continue;
                }
                if self
                    .opts
                    .max_states
                    .is_some_and(|m| self.visited.len() as u64 >= m)
                {
                    self.col.stopped = Some(Limit::MaxStates);
                    break 'dfs;
                }
                self.visited.insert(fp);
                let steps = self.enabled(&child.state);
                self.leaf_if_terminal(&child, &steps, &path);
                stack.push(DfsFrame {
                    node: child,
                    steps,
                    next: 0,
                });
            }
        }
        self.col.stats.traces = Some(self.traces.len() as u64);
        self.col.stats.states = Some(self.visited.len() as u64);
        Outcome {
            report: self.col.finish("reference", M::KIND.name()),
            traces: self.traces,
        }
    }

    fn limit_hit(&mut self) -> bool {
        if self.col.stopped.is_some() {
            return true;
        }
        if let Some(t) = self.opts.timeout {
            // Checking the clock costs little next to cloning a state.
            if self.col.start.elapsed() >= t {
                self.col.stopped = Some(Limit::Timeout);
                return true;
            }
        }
        if self
            .opts
            .max_executions
            .is_some_and(|m| self.col.stats.executions >= m)
        {
            self.col.stopped = Some(Limit::MaxExecutions);
            return true;
        }
        false
    }

    /// Handles a step's status; returns whether exploration continues from the node.
    fn settle(&mut self, node: &Node, status: &Status, path: &[Event]) -> bool {
        match status {
            Status::Ok => true,
            Status::Fault(f) => {
                self.col.fault(&node.state, f, path);
                self.obs.fault(&node.state, f, path);
                false
            }
        }
    }

    /// Records a complete execution or a deadlock, if the node is one.
    fn leaf_if_terminal(&mut self, node: &Node, steps: &[Step], path: &[Event]) {
        if !steps.is_empty() {
            return;
        }
        if node.state.is_complete::<M>(self.prog) {
            self.traces.insert(node.trace.value());
        }
        self.obs.execution(&node.state, path);
        self.col.end::<M>(&node.state, path);
    }
}
