//! The reference explorer: every interleaving of thread steps and store-buffer updates,
//! without partial-order reduction. It is the oracle the other engines are tested against,
//! so it is written to be obviously correct rather than fast.
//!
//! Exploration is a depth-first search over pairs (machine state, Shasha-Snir trace so
//! far). Two paths that reach the same pair have the same futures and produce the same set
//! of complete traces, so the second is skipped: the memoisation loses no final state, no
//! violation and no trace. Complete executions are therefore counted once per distinct
//! Shasha-Snir trace, and the trace set is kept explicitly to count them.

use fencer_ir::{CondVar, Op, Program, Quantifier};
use fencer_machine::{Event, EventId, EventKind, ReadFrom, State, Status, Step};
use fencer_memory::{Loc, MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Counterexample, Limit, Report, Stats, Verdict};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Options {
    pub timeout: Option<Duration>,
    pub max_executions: Option<u64>,
    /// Most steps (updates included) in one execution; longer ones are cut.
    pub max_depth: usize,
    /// Most distinct (state, trace) pairs to remember.
    pub max_states: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: None,
            max_executions: None,
            max_depth: 10_000,
            max_states: Some(20_000_000),
        }
    }
}

/// One event of a Shasha-Snir trace, as seen in its thread's program order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct TraceEvent {
    /// The instruction's source position and kind identify the event within its thread.
    what: (u32, u32, u8),
    loc: Option<Loc>,
    /// For events that read memory: the store read from.
    rf: Option<ReadFromKey>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum ReadFromKey {
    Init,
    Store(u32, u32),
}

impl From<ReadFrom> for ReadFromKey {
    fn from(r: ReadFrom) -> Self {
        match r {
            ReadFrom::Init => ReadFromKey::Init,
            ReadFrom::Store(EventId { thread, index }) => ReadFromKey::Store(thread, index),
        }
    }
}

/// A Shasha-Snir trace: program order (each thread's events), store order (per location,
/// the stores in the order they reached memory) and the read-from map (in the events).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Trace {
    po: Vec<Vec<TraceEvent>>,
    so: BTreeMap<Loc, Vec<EventId>>,
}

impl Trace {
    fn record(&mut self, e: &Event) {
        let kind_code = |k: &EventKind| -> u8 {
            match k {
                EventKind::Load { .. } => 0,
                EventKind::Store { .. } => 1,
                EventKind::Update { .. } => 2,
                EventKind::Rmw { .. } => 3,
                EventKind::Fence => 4,
                EventKind::Lock { .. } => 5,
                EventKind::Unlock { .. } => 6,
                EventKind::Spawn { .. } => 7,
                EventKind::Join { .. } => 8,
                EventKind::Alloc { .. } => 9,
                EventKind::Free { .. } => 10,
                EventKind::Assume => 11,
                EventKind::AssumeFailed => 12,
                EventKind::Failed => 13,
            }
        };
        // Which store reaches memory at this step, if any.
        let mem_write = match (&e.kind, e.step) {
            (EventKind::Update { loc, store, .. }, _) => Some((*loc, *store)),
            (
                EventKind::Store {
                    loc,
                    buffered: false,
                    ..
                },
                _,
            ) => Some((*loc, e.id)),
            (
                EventKind::Rmw {
                    loc,
                    written: Some(_),
                    ..
                },
                _,
            ) => Some((*loc, e.id)),
            (EventKind::Lock { loc, .. } | EventKind::Unlock { loc, .. }, _) => Some((*loc, e.id)),
            _ => None,
        };
        if let Some((loc, id)) = mem_write {
            self.so.entry(loc).or_default().push(id);
        }
        if let Step::Thread(t) = e.step {
            let t = t as usize;
            if self.po.len() <= t {
                self.po.resize(t + 1, Vec::new());
            }
            let (loc, rf) = match &e.kind {
                EventKind::Store { loc, .. } => (Some(*loc), None),
                k => match k.read_loc() {
                    Some((l, r)) => (Some(l), Some(r.into())),
                    None => (None, None),
                },
            };
            self.po[t].push(TraceEvent {
                what: (e.src.line, e.src.col, kind_code(&e.kind)),
                loc,
                rf,
            });
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Node {
    state: State,
    trace: Trace,
}

/// Everything the exploration found, before it is turned into a [`Report`].
pub struct Outcome {
    pub report: Report,
    /// The distinct Shasha-Snir traces of complete executions.
    pub traces: HashSet<Trace>,
}

pub fn explore(prog: &Program, model: ModelKind, opts: &Options) -> Outcome {
    match model {
        ModelKind::Sc => Explorer::<Sc>::new(prog, opts).run(),
        ModelKind::Tso => Explorer::<Tso>::new(prog, opts).run(),
        ModelKind::Pso => Explorer::<Pso>::new(prog, opts).run(),
    }
}

struct Explorer<'a, M> {
    prog: &'a Program,
    opts: &'a Options,
    vars: Vec<CondVar>,
    start: Instant,
    stats: Stats,
    visited: HashSet<Node>,
    traces: HashSet<Trace>,
    final_states: BTreeSet<Vec<i64>>,
    cex: Option<Counterexample>,
    stopped: Option<Limit>,
    _m: std::marker::PhantomData<M>,
}

struct DfsFrame {
    node: Node,
    steps: Vec<Step>,
    next: usize,
}

impl<'a, M: MemoryModel> Explorer<'a, M> {
    fn new(prog: &'a Program, opts: &'a Options) -> Self {
        Explorer {
            prog,
            opts,
            vars: prog.reported_vars(),
            start: Instant::now(),
            stats: Stats::default(),
            visited: HashSet::new(),
            traces: HashSet::new(),
            final_states: BTreeSet::new(),
            cex: None,
            stopped: None,
            _m: std::marker::PhantomData,
        }
    }

    fn enabled(&self, s: &State) -> Vec<Step> {
        let mut v = Vec::new();
        s.enabled::<M>(self.prog, &mut v);
        v
    }

    fn run(mut self) -> Outcome {
        let (state, status) = State::initial(self.prog);
        let root = Node {
            state,
            trace: Trace::default(),
        };
        let mut path: Vec<Event> = Vec::new();
        if self.settle(&root, &status, &path) {
            let steps = self.enabled(&root.state);
            self.visited.insert(root.clone());
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
                self.stats.events += 1;
                child.trace.record(&ev);
                path.push(ev);
                let ok = self.settle(&child, &status, &path);
                if !ok || self.visited.contains(&child) {
                    path.pop();
                    continue;
                }
                if path.len() > self.opts.max_depth {
                    self.stats.blocked += 1;
                    self.stats.depth_cut += 1;
                    path.pop();
                    continue;
                }
                if self
                    .opts
                    .max_states
                    .is_some_and(|m| self.visited.len() as u64 >= m)
                {
                    self.stopped = Some(Limit::MaxStates);
                    break 'dfs;
                }
                self.visited.insert(child.clone());
                let steps = self.enabled(&child.state);
                self.leaf_if_terminal(&child, &steps, &path);
                stack.push(DfsFrame {
                    node: child,
                    steps,
                    next: 0,
                });
            }
        }
        self.finish()
    }

    fn limit_hit(&mut self) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        if let Some(t) = self.opts.timeout {
            // Checking the clock costs little next to cloning a state.
            if self.start.elapsed() >= t {
                self.stopped = Some(Limit::Timeout);
                return true;
            }
        }
        if self
            .opts
            .max_executions
            .is_some_and(|m| self.stats.executions >= m)
        {
            self.stopped = Some(Limit::MaxExecutions);
            return true;
        }
        false
    }

    /// Handles a step's status; returns whether exploration continues from the node.
    fn settle(&mut self, node: &Node, status: &Status, path: &[Event]) -> bool {
        match status {
            Status::Ok => true,
            Status::Blocked => {
                self.stats.blocked += 1;
                false
            }
            Status::Cut(_) => {
                self.stats.blocked += 1;
                self.stats.depth_cut += 1;
                false
            }
            Status::Fault(f) => {
                if self.cex.is_none() {
                    self.cex = Some(Counterexample {
                        kind: f.kind.name().to_string(),
                        message: format!(
                            "{} (thread {})",
                            f.message,
                            node.state.thread_name(self.prog, f.thread)
                        ),
                        file: Some(self.prog.file_name(f.src).to_string()),
                        line: Some(f.src.line),
                        column: Some(f.src.col),
                        events: {
                            // The faulting instruction is shown by a line of its own.
                            let mut ls = self.lines(&node.state, path);
                            if matches!(path.last(), Some(e) if e.kind == EventKind::Failed) {
                                ls.pop();
                            }
                            ls.push(fencer_report::TraceLine {
                                step: ls.len() + 1,
                                thread: node.state.thread_name(self.prog, f.thread),
                                file: self.prog.file_name(f.src).to_string(),
                                line: f.src.line,
                                column: f.src.col,
                                op: format!("FAILS: {}", f.message),
                                location: None,
                                value: None,
                                buffer_update: false,
                            });
                            ls
                        },
                        final_state: None,
                    });
                }
                false
            }
        }
    }

    fn lines(&self, s: &State, path: &[Event]) -> Vec<fencer_report::TraceLine> {
        path.iter()
            .enumerate()
            .map(|(i, e)| s.describe(self.prog, e, i + 1))
            .collect()
    }

    fn var_value(&self, s: &State, v: &CondVar) -> i64 {
        match v {
            CondVar::Reg { thread, reg } => s.reg_value(*thread, *reg),
            CondVar::Cell { obj, index } => s.cell_value(Loc {
                obj: *obj,
                index: *index,
            }),
        }
    }

    /// Records a complete execution or a deadlock, if the node is one.
    fn leaf_if_terminal(&mut self, node: &Node, steps: &[Step], path: &[Event]) {
        if !steps.is_empty() {
            return;
        }
        let s = &node.state;
        if s.is_complete() {
            self.stats.executions += 1;
            self.traces.insert(node.trace.clone());
            let vals: Vec<i64> = self.vars.iter().map(|v| self.var_value(s, v)).collect();
            self.final_states.insert(vals.clone());
            if let Some(c) = &self.prog.cond {
                let holds = c.expr.eval(&|v| self.var_value(s, v)) != 0;
                let violated = match c.quant {
                    Quantifier::Exists | Quantifier::NotExists => holds,
                    Quantifier::Forall => !holds,
                };
                if violated && self.cex.is_none() {
                    let msg = match c.quant {
                        Quantifier::Forall => format!("final state violates `{}`", c.text),
                        _ => format!("final state satisfies `{}`", c.text),
                    };
                    self.cex = Some(Counterexample {
                        kind: "condition".into(),
                        message: msg,
                        file: Some(self.prog.file_name(c.loc).to_string()),
                        line: Some(c.loc.line),
                        column: Some(c.loc.col),
                        events: self.lines(s, path),
                        final_state: Some(
                            self.vars
                                .iter()
                                .zip(&vals)
                                .map(|(v, x)| (self.prog.var_name(v), *x))
                                .collect(),
                        ),
                    });
                }
            }
        } else {
            // Nothing can move but some thread has not finished: a deadlock.
            self.stats.blocked += 1;
            if self.cex.is_none() {
                let waiting: Vec<String> = s
                    .threads
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| !t.finished)
                    .map(|(i, t)| {
                        let fr = t.frames.last().expect("frame");
                        let ins = &self.prog.functions[fr.func as usize].body[fr.pc as usize];
                        let what = match &ins.op {
                            Op::Lock(_) => "waits for a mutex",
                            Op::Join(_) => "waits to join a thread",
                            _ => "cannot proceed",
                        };
                        format!(
                            "{} {} at line {}",
                            s.thread_name(self.prog, i as u32),
                            what,
                            ins.loc.line
                        )
                    })
                    .collect();
                let first = s
                    .threads
                    .iter()
                    .find(|t| !t.finished)
                    .and_then(|t| t.frames.last())
                    .map(|fr| self.prog.functions[fr.func as usize].body[fr.pc as usize].loc);
                self.cex = Some(Counterexample {
                    kind: "deadlock".into(),
                    message: format!("deadlock: {}", waiting.join("; ")),
                    file: first.map(|l| self.prog.file_name(l).to_string()),
                    line: first.map(|l| l.line),
                    column: first.map(|l| l.col),
                    events: self.lines(s, path),
                    final_state: None,
                });
            }
        }
    }

    fn finish(mut self) -> Outcome {
        let ms = self.start.elapsed().as_millis() as u64;
        self.stats.elapsed_ms = ms;
        self.stats.traces = Some(self.traces.len() as u64);
        self.stats.states = Some(self.visited.len() as u64);
        if self.stopped.is_none() && self.stats.depth_cut > 0 {
            self.stopped = Some(Limit::Depth);
        }
        let verdict = if self.cex.is_some() {
            Verdict::Violation
        } else if self.stopped.is_some() {
            Verdict::Incomplete
        } else {
            Verdict::Safe
        };
        let report = Report {
            verdict,
            model: M::KIND.name().to_string(),
            engine: "reference".into(),
            program: self.prog.name.clone(),
            executions: self.stats.executions,
            blocked: self.stats.blocked,
            elapsed_ms: ms,
            condition: self.prog.cond.as_ref().map(|c| c.text.clone()),
            final_vars: self.vars.iter().map(|v| self.prog.var_name(v)).collect(),
            final_states: Some(self.final_states.into_iter().collect()),
            counterexample: self.cex,
            stopped_by: self.stopped,
            stats: self.stats,
        };
        Outcome {
            report,
            traces: self.traces,
        }
    }
}
