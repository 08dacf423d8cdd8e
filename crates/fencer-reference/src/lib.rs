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
use fencer_ir::Value;
use fencer_machine::collect::Collector;
use fencer_machine::input::InputPlan;
use fencer_machine::trace::TraceHash;
use fencer_machine::{Event, Fault, NoObserver, Observer, State, Status, Step};
use fencer_memory::{MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Limit, Report};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
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
    /// Most values an input (`__VERIFIER_nondet_*`) may have for each to be tried.
    pub input_values: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: None,
            max_executions: None,
            unroll: None,
            max_depth: 10_000,
            max_states: Some(20_000_000),
            input_values: fencer_machine::input::DEFAULT_LIMIT,
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
    /// For a program with inputs: the sites and their values, asked at every read.
    plan: Option<Arc<InputPlan>>,
    _m: std::marker::PhantomData<M>,
}

struct DfsFrame {
    node: Node,
    steps: Vec<Alt>,
    next: usize,
}

/// A way on from a node: a step, with the values its input reads take, in order (thread,
/// value). A step that reads an input is tried once per value of the input's site: the
/// attempt without enough values stops at the read (`Choice::need`) and is replaced by
/// those alternatives.
type Alt = (Step, Vec<(u32, Value)>);

/// Per-thread queues of input values for `reads` (the next one last).
fn queues(reads: &[(u32, Value)]) -> Vec<Vec<Value>> {
    let mut q: Vec<Vec<Value>> = Vec::new();
    for &(t, v) in reads.iter().rev() {
        if q.len() <= t as usize {
            q.resize(t as usize + 1, Vec::new());
        }
        q[t as usize].push(v);
    }
    q
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
            plan: prog.has_inputs().then(|| {
                Arc::new(InputPlan::asking(fencer_machine::input::plan_sites(
                    prog,
                    opts.input_values,
                )))
            }),
            _m: std::marker::PhantomData,
        }
    }

    fn enabled(&self, s: &State) -> Vec<Alt> {
        let mut v = Vec::new();
        s.enabled::<M>(self.prog, &mut v);
        v.into_iter().map(|s| (s, Vec::new())).collect()
    }

    /// The values to try at input site `site`; `Err` for one with too many.
    fn values(&self, site: u32) -> Result<Vec<Value>, String> {
        self.plan
            .as_ref()
            .expect("a plan where inputs are read")
            .sites()[site as usize]
            .values
            .clone()
    }

    /// The initial states, one per way the static threads' first local steps read inputs.
    fn roots(&mut self) -> Vec<(State, Status)> {
        let (unroll, max) = (
            self.opts.unroll.unwrap_or(u32::MAX),
            self.opts.max_depth.min(u32::MAX as usize) as u32,
        );
        let Some(plan) = self.plan.clone() else {
            return vec![State::initial_limited(self.prog, unroll, max)];
        };
        let mut out = Vec::new();
        let mut todo: Vec<Vec<(u32, Value)>> = vec![Vec::new()];
        while let Some(reads) = todo.pop() {
            // Main's first local steps may read without bound (`while (nondet()) c++;`):
            // the limits stop this as they stop the search.
            if self.limit_hit() {
                break;
            }
            if self
                .opts
                .max_states
                .is_some_and(|m| (out.len() + todo.len()) as u64 >= m)
            {
                self.col.stopped = Some(Limit::MaxStates);
                break;
            }
            let (s, status) =
                State::initial_planned(self.prog, unroll, max, plan.clone(), queues(&reads));
            match (&status, s.choice.need) {
                (Status::Fault(f), Some((t, site))) => match self.values(site) {
                    Ok(vals) => {
                        for v in vals.into_iter().rev() {
                            let mut r = reads.clone();
                            r.push((t, v));
                            todo.push(r);
                        }
                    }
                    Err(m) => out.push((
                        s,
                        Status::Fault(Fault {
                            message: m,
                            ..f.clone()
                        }),
                    )),
                },
                _ => out.push((s, status)),
            }
        }
        out
    }

    fn run(mut self) -> Outcome {
        for (state, status) in self.roots() {
            if self.limit_hit() {
                break;
            }
            self.explore_from(state, status);
        }
        self.col.stats.traces = Some(self.traces.len() as u64);
        self.col.stats.states = Some(self.visited.len() as u64);
        Outcome {
            report: self.col.finish("reference", M::KIND.name()),
            traces: self.traces,
        }
    }

    fn explore_from(&mut self, state: State, status: Status) {
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
                let (step, reads) = top.steps[top.next].clone();
                top.next += 1;
                if self.limit_hit() {
                    break 'dfs;
                }
                let mut child = top.node.clone();
                if !reads.is_empty() {
                    child.state.inputs = queues(&reads);
                }
                let (ev, status) = child.state.step::<M>(self.prog, step);
                if let (Status::Fault(_), Some((t, site))) = (&status, child.state.choice.need) {
                    // The step reads an input: try it once per value instead.
                    if let Ok(vals) = self.values(site) {
                        let at = top.next;
                        top.steps.splice(
                            at..at,
                            vals.into_iter().map(|v| {
                                let mut r = reads.clone();
                                r.push((t, v));
                                (step, r)
                            }),
                        );
                        continue;
                    }
                }
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
    fn leaf_if_terminal(&mut self, node: &Node, steps: &[Alt], path: &[Event]) {
        if !steps.is_empty() {
            return;
        }
        if node.state.is_complete::<M>(self.prog) {
            self.traces.insert(
                node.trace
                    .value()
                    .wrapping_add(node.state.choice.fingerprint()),
            );
        }
        self.obs.execution(&node.state, path);
        self.col.end::<M>(&node.state, path);
    }
}
