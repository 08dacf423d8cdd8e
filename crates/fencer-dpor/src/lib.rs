//! Stateless model checking with dynamic partial-order reduction on chronological traces
//! (Abdulla, Aronis, Atig, Jonsson, Leonardsson, Sagonas: "Stateless model checking for TSO
//! and PSO"), with Source-DPOR and sleep sets (Abdulla, Aronis, Jonsson, Sagonas: "Optimal
//! dynamic partial order reduction").
//!
//! Processes are the real threads and the auxiliary update threads of their store buffers
//! (`upd(p)` under TSO, `upd(p,x)` under PSO); a process is named by the [`Step`] that
//! schedules it. The happens-before relation of the chronological trace is computed on the
//! fly with vector clocks (the paper's Appendix B): a load that reads its own buffer is
//! attached to the buffer entry and ordered with memory only when the entry's update
//! happens. The races are the cross-process `src`, `cf` and `uu` edges (and, for mutexes,
//! consecutive acquisitions); each is reversed by adding a backtrack point.
//!
//! Exploration is stateless: after each execution the engine backtracks to the deepest
//! position with work left and replays the schedule from the initial state.

mod hb;

use fencer_ir::Program;
use fencer_machine::collect::Collector;
use fencer_machine::{dependent, Event, State, Status, Step};
use fencer_memory::{MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Limit, Report};
use hb::Hb;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Source-DPOR with sleep sets.
    Source,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub algo: Algo,
    pub timeout: Option<Duration>,
    pub max_executions: Option<u64>,
    /// Most steps in one execution; longer executions are cut (the result is then bounded).
    pub max_depth: usize,
    /// Stop at the first violation (the normal use); `false` explores everything, so that
    /// the final states can be compared with the reference explorer.
    pub stop_on_violation: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algo: Algo::Source,
            timeout: None,
            max_executions: None,
            max_depth: 100_000,
            stop_on_violation: true,
        }
    }
}

pub fn explore(prog: &Program, model: ModelKind, opts: &Options) -> Report {
    run(prog, model, opts, false).0
}

/// Explores, and also returns the Shasha-Snir trace fingerprint of every complete
/// execution, in the order explored (for testing the engine against the reference).
pub fn explore_traces(prog: &Program, model: ModelKind, opts: &Options) -> (Report, Vec<u128>) {
    run(prog, model, opts, true)
}

fn run(prog: &Program, model: ModelKind, opts: &Options, traces: bool) -> (Report, Vec<u128>) {
    match model {
        ModelKind::Sc => Dpor::<Sc>::new(prog, opts, traces).run(),
        ModelKind::Tso => Dpor::<Tso>::new(prog, opts, traces).run(),
        ModelKind::Pso => Dpor::<Pso>::new(prog, opts, traces).run(),
    }
}

/// What the engine knows about one position of the current execution: the state before
/// its event.
#[derive(Default)]
struct Pos {
    /// Processes to explore from here.
    backtrack: Vec<Step>,
    /// Processes already explored from here.
    done: Vec<Step>,
    /// Processes whose next event need not be explored from here.
    sleep: Vec<Step>,
}

struct Dpor<'a, M> {
    prog: &'a Program,
    opts: &'a Options,
    col: Collector<'a>,
    hb: Hb,
    pos: Vec<Pos>,
    /// The steps of the current execution.
    schedule: Vec<Step>,
    /// Its events (for counterexamples).
    events: Vec<Event>,
    enabled: Vec<Step>,
    sleep_blocked: u64,
    races: u64,
    /// Trace fingerprints of complete executions, when asked for.
    traces: Option<Vec<u128>>,
    _m: std::marker::PhantomData<M>,
}

impl<'a, M: MemoryModel> Dpor<'a, M> {
    fn new(prog: &'a Program, opts: &'a Options, traces: bool) -> Self {
        Dpor {
            prog,
            opts,
            col: Collector::new(prog),
            hb: Hb::default(),
            pos: Vec::new(),
            schedule: Vec::new(),
            events: Vec::new(),
            enabled: Vec::new(),
            sleep_blocked: 0,
            races: 0,
            traces: traces.then(Vec::new),
            _m: std::marker::PhantomData,
        }
    }

    fn limit_hit(&mut self) -> bool {
        if self.col.stopped.is_some() {
            return true;
        }
        if let Some(t) = self.opts.timeout {
            if self.col.start.elapsed() >= t {
                self.col.stopped = Some(Limit::Timeout);
                return true;
            }
        }
        if let Some(m) = self.opts.max_executions {
            if self.col.stats.executions >= m {
                self.col.stopped = Some(Limit::MaxExecutions);
                return true;
            }
        }
        false
    }

    fn run(mut self) -> (Report, Vec<u128>) {
        let mut replay = 0usize;
        loop {
            self.execute(replay);
            if self.limit_hit() || (self.opts.stop_on_violation && self.col.cex.is_some()) {
                break;
            }
            // Backtrack to the deepest position with a process left to explore.
            let next = (0..self.pos.len()).rev().find(|&d| {
                let p = &self.pos[d];
                p.backtrack
                    .iter()
                    .any(|s| !p.done.contains(s) && !p.sleep.contains(s))
            });
            match next {
                Some(d) => {
                    self.pos.truncate(d + 1);
                    self.schedule.truncate(d);
                    replay = d;
                }
                None => break,
            }
        }
        let algo = self.algo_name();
        let mut report = self.col.finish("dpor", M::KIND.name());
        report.algo = Some(algo.to_string());
        report.stats.sleep_blocked = Some(self.sleep_blocked);
        report.stats.races = Some(self.races);
        (report, self.traces.unwrap_or_default())
    }

    fn algo_name(&self) -> &'static str {
        match self.opts.algo {
            Algo::Source => "source",
        }
    }

    /// Runs one execution: replays the first `replay` steps of the schedule, then takes a
    /// new step at position `replay` and continues to the end.
    fn execute(&mut self, replay: usize) {
        let (mut state, status) = State::initial(self.prog);
        self.hb.reset();
        self.events.clear();
        if let Status::Fault(f) = &status {
            self.col.fault(&state, f, &[]);
            return;
        }
        if status != Status::Ok {
            self.col.stats.blocked += 1;
            return;
        }
        for d in 0..replay {
            let step = self.schedule[d];
            let (ev, _) = state.step::<M>(self.prog, step);
            self.hb.record::<M>(step, &ev, None);
            self.events.push(ev);
        }
        let mut d = replay;
        loop {
            if d >= self.opts.max_depth {
                self.col.stats.blocked += 1;
                self.col.stats.depth_cut += 1;
                return;
            }
            self.enabled.clear();
            state.enabled::<M>(self.prog, &mut self.enabled);
            if d == self.pos.len() {
                self.pos.push(Pos::default());
            }
            let chosen = {
                let p = &self.pos[d];
                if p.backtrack.is_empty() {
                    self.enabled.iter().copied().find(|s| !p.sleep.contains(s))
                } else {
                    p.backtrack
                        .iter()
                        .copied()
                        .find(|s| !p.done.contains(s) && !p.sleep.contains(s))
                }
            };
            let Some(step) = chosen else {
                if self.enabled.is_empty() {
                    if let Some(t) = &mut self.traces {
                        if state.is_complete() {
                            let mut h = fencer_machine::trace::TraceHash::default();
                            for e in &self.events {
                                h.record(e);
                            }
                            t.push(h.value());
                        }
                    }
                    self.col.end(&state, &self.events);
                } else {
                    // Every enabled process sleeps: this execution would repeat another.
                    self.sleep_blocked += 1;
                    self.col.stats.blocked += 1;
                }
                return;
            };
            debug_assert!(self.enabled.contains(&step), "chosen step must be enabled");
            // The child's sleep set: what sleeps here or was explored here before, and
            // commutes with the step taken.
            let acc = state.next_access::<M>(self.prog, step);
            let mut child_sleep = Vec::new();
            {
                let p = &self.pos[d];
                for &q in p.sleep.iter().chain(p.done.iter()) {
                    if q != step
                        && !child_sleep.contains(&q)
                        && !dependent::<M>((q, state.next_access::<M>(self.prog, q)), (step, acc))
                    {
                        child_sleep.push(q);
                    }
                }
            }
            let p = &mut self.pos[d];
            if p.backtrack.is_empty() {
                p.backtrack.push(step);
            }
            p.done.push(step);
            self.schedule.truncate(d);
            self.schedule.push(step);
            let (ev, status) = state.step::<M>(self.prog, step);
            self.col.stats.events += 1;
            let mut races = Vec::new();
            self.hb.record::<M>(step, &ev, Some(&mut races));
            self.events.push(ev);
            for i in races {
                self.races += 1;
                self.add_backtrack(i, d);
            }
            match status {
                Status::Ok => {}
                Status::Cut(_) => {
                    self.col.stats.blocked += 1;
                    self.col.stats.depth_cut += 1;
                    return;
                }
                Status::Fault(f) => {
                    self.col.fault(&state, &f, &self.events);
                    return;
                }
            }
            d += 1;
            if d == self.pos.len() {
                self.pos.push(Pos::default());
            }
            self.pos[d].sleep = child_sleep;
            self.pos[d].backtrack.clear();
            self.pos[d].done.clear();
            if self.limit_hit() {
                return;
            }
        }
    }

    /// Reverses the race between the events at positions `i` and `j`: makes sure that from
    /// the state before `i`, some process that starts `notdep(i).j` will be explored.
    fn add_backtrack(&mut self, i: usize, j: usize) {
        let initials = self.hb.initials(i, j);
        let p = &mut self.pos[i];
        if initials.iter().any(|q| p.backtrack.contains(q)) {
            return;
        }
        let pick = initials
            .iter()
            .copied()
            .find(|q| !p.sleep.contains(q))
            .or_else(|| initials.first().copied());
        if let Some(q) = pick {
            p.backtrack.push(q);
        }
    }
}
