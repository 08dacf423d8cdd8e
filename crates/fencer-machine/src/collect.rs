//! What every engine records while it explores: final states, the first counterexample,
//! statistics; and how that becomes a [`Report`]. Engines differ in which executions they
//! visit, never in how an execution's outcome is judged, so the judging lives here.

use crate::{CutKind, Event, EventKind, Fault, State, Step};
use fencer_ir::{CondVar, Op, Program, Quantifier, SrcLoc};
use fencer_memory::{Chan, Loc, MemoryModel};
use fencer_report::{
    Counterexample, HangPolicy, Limit, PackedSchedule, Report, ScheduleStep, Stats, TraceLine,
    Verdict,
};
use std::collections::BTreeMap;
use std::time::Instant;

/// The schedule of an execution: who took each of its steps.
pub fn schedule(path: &[Event]) -> Vec<ScheduleStep> {
    path.iter().map(|e| schedule_step(e.step)).collect()
}

/// A machine step in the report's plain terms.
pub fn schedule_step(s: Step) -> ScheduleStep {
    match s {
        Step::Thread(t) => ScheduleStep::Thread(t),
        Step::Update(t, Chan::Thread) => ScheduleStep::Update {
            thread: t,
            loc: None,
        },
        Step::Update(t, Chan::Loc(l)) => ScheduleStep::Update {
            thread: t,
            loc: Some((l.obj, l.index)),
        },
    }
}

/// The machine step a schedule step names.
pub fn machine_step(s: ScheduleStep) -> Step {
    match s {
        ScheduleStep::Thread(t) => Step::Thread(t),
        ScheduleStep::Update { thread, loc: None } => Step::Update(thread, Chan::Thread),
        ScheduleStep::Update {
            thread,
            loc: Some((obj, index)),
        } => Step::Update(thread, Chan::Loc(Loc { obj, index })),
    }
}

/// A final state's record: how many complete executions reached it, and the schedule of
/// the first (packed: there can be millions of final states).
#[derive(Clone, Debug)]
pub struct FinalState {
    pub executions: u64,
    pub schedule: PackedSchedule,
}

pub struct Collector<'a> {
    pub prog: &'a Program,
    pub vars: Vec<CondVar>,
    pub stats: Stats,
    /// Every final state reached (values of `vars`).
    pub final_states: BTreeMap<Vec<i64>, FinalState>,
    pub cex: Option<Counterexample>,
    pub stopped: Option<Limit>,
    pub start: Instant,
    /// The state `State::hang` runs waiting threads in, kept for its allocations: every
    /// execution an `assume` blocks is tried that way.
    hang_scratch: crate::HangScratch,
    /// The final state's values, kept for their allocation.
    vals: Vec<i64>,
}

impl<'a> Collector<'a> {
    pub fn new(prog: &'a Program) -> Self {
        Collector {
            prog,
            vars: prog.reported_vars(),
            stats: Stats::default(),
            final_states: BTreeMap::new(),
            cex: None,
            stopped: None,
            start: Instant::now(),
            hang_scratch: Default::default(),
            vals: Vec::new(),
        }
    }

    /// The counterexample lines of an execution.
    pub fn lines(&self, s: &State, path: &[Event]) -> Vec<TraceLine> {
        let mut out: Vec<TraceLine> = path
            .iter()
            .enumerate()
            .map(|(i, e)| s.describe(self.prog, e, i + 1))
            .collect();
        if !s.choice.log.is_empty() {
            self.input_lines(s, path, &mut out);
        }
        out
    }

    /// Puts a line for each input read among an execution's lines: after the event of its
    /// thread whose step ran the read (the local code after a visible instruction runs in
    /// that instruction's step), or after the spawn of the thread for a read before its
    /// first event.
    fn input_lines(&self, s: &State, path: &[Event], out: &mut Vec<TraceLine>) {
        let Some(plan) = &s.choice.plan.0 else {
            return;
        };
        let mut reads: Vec<(usize, TraceLine)> = Vec::new();
        for r in &s.choice.log {
            let after = if r.event == 0 {
                path.iter()
                    .position(|e| matches!(e.kind, EventKind::Spawn { child } if child == r.thread))
                    .map_or(0, |i| i + 1)
            } else {
                path.iter()
                    .position(|e| e.step == Step::Thread(r.thread) && e.id.index + 1 == r.event)
                    .map_or(path.len(), |i| i + 1)
            };
            let site = &plan.sites()[r.site as usize];
            let function = self
                .prog
                .source_trace
                .then(|| self.prog.functions[site.func as usize].name.clone());
            reads.push((
                after,
                TraceLine {
                    step: 0,
                    function,
                    thread: s.thread_name(self.prog, r.thread),
                    file: self.prog.file_name(site.loc).to_string(),
                    line: site.loc.line,
                    column: site.loc.col,
                    op: format!("input -> {}", r.value),
                    location: None,
                    value: Some(r.value),
                    buffer_update: false,
                },
            ));
        }
        // Stable: reads placed at one point keep the order they were made in.
        reads.sort_by_key(|(after, _)| *after);
        let events = std::mem::take(out);
        let mut reads = reads.into_iter().peekable();
        for (i, line) in events.into_iter().enumerate() {
            while let Some((_, l)) = reads.next_if(|(after, _)| *after <= i) {
                out.push(l);
            }
            out.push(line);
        }
        out.extend(reads.map(|(_, l)| l));
        for (i, l) in out.iter_mut().enumerate() {
            l.step = i + 1;
        }
    }

    fn var_value(s: &State, v: &CondVar) -> i64 {
        match v {
            CondVar::Reg { thread, reg } => s.reg_value(*thread, *reg),
            CondVar::Cell { obj, index } => s.cell_value(Loc {
                obj: *obj,
                index: *index,
            }),
        }
    }

    /// Records a fault; `path` ends with the step that faulted.
    pub fn fault(&mut self, s: &State, f: &Fault, path: &[Event]) {
        // A fault before the run's assigned inputs were all read is another run's.
        if self.cex.is_some() || !s.choice.own() {
            return;
        }
        let mut ls = self.lines(s, path);
        // The faulting instruction is shown by a line of its own.
        if path.last().is_some_and(|e| e.kind.faulted()) {
            ls.pop();
        }
        let thread = s.thread_name(self.prog, f.thread);
        let function = self.prog.source_trace.then(|| {
            let fr = s.threads[f.thread as usize].frames.last().expect("frame");
            self.prog.functions[fr.func as usize].name.clone()
        });
        ls.push(TraceLine {
            step: ls.len() + 1,
            function,
            thread: thread.clone(),
            file: self.prog.file_name(f.src).to_string(),
            line: f.src.line,
            column: f.src.col,
            op: format!("FAILS: {}", f.message),
            location: None,
            value: None,
            buffer_update: false,
        });
        self.cex = Some(Counterexample {
            kind: f.kind.name().to_string(),
            message: format!("{} (thread {thread})", f.message),
            file: Some(self.prog.file_name(f.src).to_string()),
            line: Some(f.src.line),
            column: Some(f.src.col),
            events: ls,
            final_state: None,
            schedule: schedule(path),
        });
    }

    /// Records a complete execution: its final state, and the condition's verdict on it.
    pub fn complete(&mut self, s: &State, path: &[Event]) {
        self.stats.executions += 1;
        let mut vals = std::mem::take(&mut self.vals);
        vals.clear();
        vals.extend(self.vars.iter().map(|v| Self::var_value(s, v)));
        self.condition(s, path, &vals);
        // Most executions end in a final state seen before: looked up by slice, with no
        // key made.
        match self.final_states.get_mut(vals.as_slice()) {
            Some(f) => f.executions += 1,
            None => {
                self.final_states.insert(
                    vals.clone(),
                    FinalState {
                        executions: 1,
                        schedule: PackedSchedule::pack(path.iter().map(|e| schedule_step(e.step))),
                    },
                );
            }
        }
        self.vals = vals;
    }

    /// Judges the condition on the final state `vals` of a complete execution.
    fn condition(&mut self, s: &State, path: &[Event], vals: &[i64]) {
        let Some(c) = &self.prog.cond else {
            return;
        };
        let holds = c.expr.eval(&|v| Self::var_value(s, v)) != 0;
        let violated = match c.quant {
            Quantifier::Exists | Quantifier::NotExists => holds,
            Quantifier::Forall => !holds,
        };
        if violated && self.cex.is_none() {
            let message = match c.quant {
                Quantifier::Forall => format!("final state violates `{}`", c.text),
                _ => format!("final state satisfies `{}`", c.text),
            };
            self.cex = Some(Counterexample {
                kind: "condition".into(),
                message,
                file: Some(self.prog.file_name(c.loc).to_string()),
                line: Some(c.loc.line),
                column: Some(c.loc.col),
                events: self.lines(s, path),
                final_state: Some(
                    self.vars
                        .iter()
                        .zip(vals)
                        .map(|(v, x)| (self.prog.var_name(v), *x))
                        .collect(),
                ),
                schedule: schedule(path),
            });
        }
    }

    /// Records an execution cut short by a bound.
    pub fn cut(&mut self, kind: CutKind) {
        self.stats.blocked += 1;
        match kind {
            CutKind::Unroll => self.stats.unroll_cut += 1,
            CutKind::Depth => self.stats.depth_cut += 1,
            CutKind::Recursion => self.stats.recursion_cut += 1,
            CutKind::LocalLoop => self.stats.local_loop_cut += 1,
        }
    }

    /// Records an execution that cannot go on: complete, blocked by a false `assume`
    /// (discarded), or deadlocked.
    pub fn end<M: MemoryModel>(&mut self, s: &State, path: &[Event]) {
        if !s.choice.own() {
            // Its inputs are another run's: it is counted there.
            return;
        }
        if s.threads.iter().any(|t| t.faulted) {
            // The fault was recorded when it happened.
        } else if let Some(k) = s.cut() {
            self.cut(k);
        } else if s.is_complete::<M>(self.prog) {
            self.complete(s, path);
        } else if let Some((t, at)) = s.hang::<M>(self.prog, &mut self.hang_scratch) {
            if self.prog.hang_is_violation {
                self.hang(s, t, at, path);
            } else {
                self.stats.blocked += 1;
                self.stats.waits_forever += 1;
            }
        } else if s.assume_blocked(self.prog) {
            self.stats.blocked += 1;
            self.stats.assume_blocked += 1;
            if s.threads
                .iter()
                .any(|t| t.spin.blocked && t.spin.input_blocked)
            {
                self.stats.input_loops += 1;
            }
        } else if self.prog.hang_is_violation {
            self.deadlock(s, path);
        } else {
            self.stats.blocked += 1;
            self.stats.waits_forever += 1;
        }
    }

    /// Records a hang: thread `t` waits in the loop at `at` for something no thread will
    /// ever do.
    pub fn hang(&mut self, s: &State, t: u32, at: SrcLoc, path: &[Event]) {
        self.stats.blocked += 1;
        if self.cex.is_some() {
            return;
        }
        let name = s.thread_name(self.prog, t);
        self.cex = Some(Counterexample {
            kind: "hang".into(),
            message: format!(
                "hang: {name} waits forever in the loop at line {}: every other thread has \
                 finished or is blocked, and what the loop reads in final memory never lets it leave",
                at.line
            ),
            file: Some(self.prog.file_name(at).to_string()),
            line: Some(at.line),
            column: Some(at.col),
            events: self.lines(s, path),
            final_state: None,
            schedule: schedule(path),
        });
    }

    /// Records a deadlock: nothing can move, but some thread has not finished.
    pub fn deadlock(&mut self, s: &State, path: &[Event]) {
        self.stats.blocked += 1;
        if self.cex.is_some() {
            return;
        }
        let mut first = None;
        let waiting: Vec<String> = s
            .threads
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.finished)
            .map(|(i, t)| {
                let fr = t.frames.last().expect("frame");
                let ins = &self.prog.functions[fr.func as usize].body[fr.pc as usize];
                first.get_or_insert(ins.loc);
                let what = match &ins.op {
                    Op::Lock(_) => "waits for a mutex",
                    Op::BarrierPass(_) => "waits at a barrier",
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
        self.cex = Some(Counterexample {
            kind: "deadlock".into(),
            message: format!("deadlock: {}", waiting.join("; ")),
            file: first.map(|l| self.prog.file_name(l).to_string()),
            line: first.map(|l| l.line),
            column: first.map(|l| l.col),
            events: self.lines(s, path),
            final_state: None,
            schedule: schedule(path),
        });
    }

    /// The report: a violation if one was found, else incomplete if a limit cut anything.
    pub fn finish(mut self, engine: &str, model: &str) -> Report {
        let el = self.start.elapsed();
        let ms = el.as_millis() as u64;
        self.stats.elapsed_ms = ms;
        self.stats.executions_per_sec = self.stats.executions as f64 / el.as_secs_f64().max(1e-6);
        if self.stopped.is_none() && self.stats.depth_cut > 0 {
            self.stopped = Some(Limit::Depth);
        }
        if self.stopped.is_none() && self.stats.unroll_cut > 0 {
            self.stopped = Some(Limit::Unroll);
        }
        if self.stopped.is_none() && self.stats.recursion_cut > 0 {
            self.stopped = Some(Limit::Recursion);
        }
        if self.stopped.is_none() && self.stats.local_loop_cut > 0 {
            self.stopped = Some(Limit::LocalLoop);
        }
        let verdict = if self.cex.is_some() {
            Verdict::Violation
        } else if self.stopped.is_some() {
            Verdict::Incomplete
        } else {
            Verdict::Safe
        };
        let n = self.final_states.len();
        let (mut states, mut counts, mut schedules) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (vals, f) in self.final_states {
            states.push(vals);
            counts.push(f.executions);
            schedules.push(f.schedule);
        }
        Report {
            schema: Default::default(),
            verdict,
            model: model.to_string(),
            engine: engine.to_string(),
            algo: None,
            program: self.prog.name.clone(),
            executions: self.stats.executions,
            blocked: self.stats.blocked,
            elapsed_ms: ms,
            condition: self.prog.cond.as_ref().map(|c| c.text.clone()),
            final_vars: self.vars.iter().map(|v| self.prog.var_name(v)).collect(),
            final_state_executions: Some(counts),
            final_schedules: schedules,
            final_states: Some(states),
            counterexample: self.cex,
            stopped_by: self.stopped,
            stats: self.stats,
            assumptions: self.prog.assumptions.clone(),
            hangs: Some(if self.prog.hang_is_violation {
                HangPolicy::Violation
            } else {
                HangPolicy::Blocked
            }),
            notes: Vec::new(),
        }
    }
}
