//! Seeing one execution: an SVG timeline ([`svg`]), the execution graph in DOT ([`dot`]),
//! a self-contained HTML report ([`html`]) and SARIF 2.1.0 ([`sarif`]); and the trace
//! files that `--save-trace` writes and `fencer replay` reads ([`tracefile`]).
//!
//! Everything starts from a schedule (who took each step). [`replay`] runs it in the
//! machine from the initial state, so that every view sees the real events *and* the
//! machine state after each step (registers, store buffers, memory), and judges the end
//! with the same [`Collector`] the engines use, so a replayed counterexample is the
//! counterexample.

pub mod dot;
pub mod html;
pub mod sarif;
pub mod svg;
pub mod tracefile;

use fencer_ir::Program;
use fencer_machine::collect::Collector;
use fencer_machine::{loc_name, Event, EventKind, Fault, State, Status, Step};
use fencer_memory::{Chan, Loc, MemoryModel, ModelKind, Pso, Sc, Tso};
use fencer_report::{Counterexample, ScheduleStep, TraceLine};

/// One step of a schedule as a trace file names it: by thread index, and for a PSO update
/// by the cell's name (resolved against the buffers present when the step is taken).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceStep {
    /// `t3`: thread 3 runs its next visible instruction.
    Thread(u32),
    /// `upd(t3)` (TSO) or `upd(t3,x)` (PSO): the oldest entry of thread 3's buffer (for
    /// `x`) reaches memory.
    Update(u32, Option<String>),
}

impl TraceStep {
    /// The trace-file name of a schedule step of `prog`.
    pub fn of(prog: &Program, s: ScheduleStep) -> TraceStep {
        match s {
            ScheduleStep::Thread(t) => TraceStep::Thread(t),
            ScheduleStep::Update { thread, loc: None } => TraceStep::Update(thread, None),
            ScheduleStep::Update {
                thread,
                loc: Some((obj, index)),
            } => TraceStep::Update(thread, Some(loc_name(prog, Loc { obj, index }))),
        }
    }
}

impl std::fmt::Display for TraceStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceStep::Thread(t) => write!(f, "t{t}"),
            TraceStep::Update(t, None) => write!(f, "upd(t{t})"),
            TraceStep::Update(t, Some(l)) => write!(f, "upd(t{t},{l})"),
        }
    }
}

/// Bounds the exploration ran with: the replay must keep to them (a cut thread stops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub unroll: Option<u32>,
    pub max_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            unroll: None,
            max_depth: 100_000,
        }
    }
}

/// An execution re-run in the machine.
pub struct Execution<'p> {
    pub prog: &'p Program,
    pub model: ModelKind,
    pub events: Vec<Event>,
    /// `states[i]` is the state after `i` steps: `states[0]` the initial state, the last
    /// one the state at the end.
    pub states: Vec<State>,
    /// The step that faulted, if one did (the execution stops there).
    pub fault: Option<Fault>,
    /// The violation, judged as the engines judge it (`None`: this execution violates
    /// nothing, or it is not over).
    pub cex: Option<Counterexample>,
    /// Steps still enabled at the end (0 when the execution ended).
    pub enabled_at_end: usize,
    /// Positions in `events` to highlight (a robustness violation's cycle).
    pub highlight: Vec<usize>,
}

/// Why a schedule does not fit the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError {
    /// 1-based step number in the trace.
    pub step: usize,
    pub what: String,
    pub why: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {} ({}) cannot be taken: {}",
            self.step, self.what, self.why
        )
    }
}

/// Re-runs `steps` from the initial state under `model`: every step must be enabled when
/// its turn comes. Stops at a fault (steps after it are an error too: the program no
/// longer does what the trace says).
pub fn replay<'p>(
    prog: &'p Program,
    model: ModelKind,
    limits: Limits,
    steps: &[TraceStep],
) -> Result<Execution<'p>, ReplayError> {
    match model {
        ModelKind::Sc => replay_in::<Sc>(prog, limits, steps),
        ModelKind::Tso => replay_in::<Tso>(prog, limits, steps),
        ModelKind::Pso => replay_in::<Pso>(prog, limits, steps),
    }
}

/// [`replay`] of a schedule recorded in a report.
pub fn replay_schedule<'p>(
    prog: &'p Program,
    model: ModelKind,
    limits: Limits,
    schedule: &[ScheduleStep],
) -> Result<Execution<'p>, ReplayError> {
    let steps: Vec<TraceStep> = schedule.iter().map(|&s| TraceStep::of(prog, s)).collect();
    replay(prog, model, limits, &steps)
}

fn resolve(
    prog: &Program,
    state: &State,
    model: ModelKind,
    i: usize,
    s: &TraceStep,
) -> Result<Step, ReplayError> {
    let err = |why: String| ReplayError {
        step: i + 1,
        what: s.to_string(),
        why,
    };
    let thread_ok = |t: u32| -> Result<(), ReplayError> {
        if (t as usize) < state.threads.len() {
            Ok(())
        } else {
            Err(err(format!(
                "the program has {} thread{} at this point (t0..t{})",
                state.threads.len(),
                if state.threads.len() == 1 { "" } else { "s" },
                state.threads.len().saturating_sub(1)
            )))
        }
    };
    match s {
        TraceStep::Thread(t) => {
            thread_ok(*t)?;
            Ok(Step::Thread(*t))
        }
        TraceStep::Update(t, loc) => {
            thread_ok(*t)?;
            let chans: Vec<Chan> = state.bufs[*t as usize].channels().collect();
            let name = |c: &Chan| match c {
                Chan::Thread => "its buffer".to_string(),
                Chan::Loc(l) => loc_name(prog, *l),
            };
            if chans.is_empty() {
                return Err(err(format!(
                    "{}'s store buffers are empty",
                    state.thread_name(prog, *t)
                )));
            }
            match (model, loc) {
                (ModelKind::Pso, Some(l)) => chans
                    .iter()
                    .find(|c| matches!(c, Chan::Loc(x) if loc_name(prog, *x) == *l))
                    .map(|c| Step::Update(*t, *c))
                    .ok_or_else(|| {
                        err(format!(
                            "{} has no buffered store to {l} (its buffers hold: {})",
                            state.thread_name(prog, *t),
                            chans.iter().map(name).collect::<Vec<_>>().join(", ")
                        ))
                    }),
                (ModelKind::Pso, None) if chans.len() == 1 => Ok(Step::Update(*t, chans[0])),
                (ModelKind::Pso, None) => Err(err(format!(
                    "under PSO an update names its location (buffers: {})",
                    chans.iter().map(name).collect::<Vec<_>>().join(", ")
                ))),
                _ => Ok(Step::Update(*t, Chan::Thread)),
            }
        }
    }
}

/// Why thread `t` cannot run now, for an error message.
fn why_disabled(prog: &Program, state: &State, t: u32) -> String {
    let th = &state.threads[t as usize];
    let name = state.thread_name(prog, t);
    if th.finished {
        return format!("{name} has finished");
    }
    if th.faulted {
        return format!("{name} has faulted");
    }
    if let Some(c) = th.cut {
        return format!("{name} was stopped by a bound ({c:?})");
    }
    if th.spin.dropped {
        return format!(
            "{name} is blocked: an iteration of its loop changed nothing the next one did \
             not redo"
        );
    }
    if th.spin.blocked {
        return format!("{name} is blocked in a waiting loop that read nothing new");
    }
    let (_, ins) = state.current(prog, t);
    format!(
        "{name}'s next instruction (line {}) is not enabled (it waits for a lock, a join, \
         an empty store buffer or a true `assume`)",
        ins.loc.line
    )
}

fn replay_in<'p, M: MemoryModel>(
    prog: &'p Program,
    limits: Limits,
    steps: &[TraceStep],
) -> Result<Execution<'p>, ReplayError> {
    let (mut state, status) =
        State::initial_limited(prog, limits.unroll.unwrap_or(u32::MAX), limits.max_depth);
    let mut col = Collector::new(prog);
    let mut events: Vec<Event> = Vec::new();
    let mut states = vec![state.clone()];
    let mut fault = None;
    if let Status::Fault(f) = status {
        col.fault(&state, &f, &[]);
        state.threads[f.thread as usize].faulted = true;
        fault = Some(f);
    }
    let mut enabled = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if let Some(f) = &fault {
            return Err(ReplayError {
                step: i + 1,
                what: s.to_string(),
                why: format!(
                    "the execution already stopped at a fault ({}) after {} step{}",
                    f.message,
                    i,
                    if i == 1 { "" } else { "s" }
                ),
            });
        }
        let step = resolve(prog, &state, M::KIND, i, s)?;
        enabled.clear();
        state.enabled::<M>(prog, &mut enabled);
        if !enabled.contains(&step) {
            let why = match step {
                Step::Thread(t) => why_disabled(prog, &state, t),
                Step::Update(..) => "that buffer is empty".into(),
            };
            return Err(ReplayError {
                step: i + 1,
                what: s.to_string(),
                why,
            });
        }
        let (ev, status) = state.step::<M>(prog, step);
        events.push(ev);
        if let Status::Fault(f) = status {
            col.fault(&state, &f, &events);
            state.threads[f.thread as usize].faulted = true;
            fault = Some(f);
        }
        states.push(state.clone());
    }
    enabled.clear();
    state.enabled::<M>(prog, &mut enabled);
    if fault.is_none() && enabled.is_empty() {
        col.end::<M>(&state, &events);
    }
    Ok(Execution {
        prog,
        model: M::KIND,
        events,
        states,
        fault,
        cex: col.cex,
        enabled_at_end: enabled.len(),
        highlight: Vec::new(),
    })
}

impl Execution<'_> {
    /// The state at the end.
    pub fn last(&self) -> &State {
        self.states
            .last()
            .expect("the initial state is always there")
    }

    /// The counterexample lines of the events (as `check` prints them, without the line
    /// for a failing instruction).
    pub fn lines(&self) -> Vec<TraceLine> {
        let s = self.last();
        self.events
            .iter()
            .enumerate()
            .map(|(i, e)| s.describe(self.prog, e, i + 1))
            .collect()
    }

    /// The program name and model, e.g. `sb under TSO`.
    pub fn title(&self) -> String {
        format!("{} under {}", self.prog.name, self.model)
    }

    /// Thread names, by index.
    pub fn thread_names(&self) -> Vec<String> {
        let s = self.last();
        (0..s.threads.len() as u32)
            .map(|t| s.thread_name(self.prog, t))
            .collect()
    }

    /// The buffer channels that hold something at some step, in order of first use.
    pub fn channels(&self) -> Vec<(u32, Chan)> {
        let mut out = Vec::new();
        for s in &self.states {
            for (t, b) in s.bufs.iter().enumerate() {
                for c in b.channels() {
                    if !out.contains(&(t as u32, c)) {
                        out.push((t as u32, c));
                    }
                }
            }
        }
        out
    }

    /// Whether thread `t` could take a step in `state` (it may be waiting for a lock, a
    /// join, an empty buffer).
    pub fn can_move(&self, state: &State, t: u32) -> bool {
        match self.model {
            ModelKind::Sc => state.thread_enabled::<Sc>(self.prog, t),
            ModelKind::Tso => state.thread_enabled::<Tso>(self.prog, t),
            ModelKind::Pso => state.thread_enabled::<Pso>(self.prog, t),
        }
    }

    /// The memory cells the events act on, in order of first use (at most `max`).
    pub fn locations(&self, max: usize) -> Vec<Loc> {
        let mut out = Vec::new();
        for e in &self.events {
            if let Some(l) = event_loc(&e.kind) {
                if !out.contains(&l) && self.last().mem.get(l.obj).is_some() {
                    out.push(l);
                }
            }
            if out.len() >= max {
                break;
            }
        }
        out
    }

    /// A cell's contents in `state`, as shown: the value, `?` if never written, `-` if its
    /// object is freed.
    pub fn cell_text(&self, state: &State, l: Loc) -> String {
        let Some(o) = state.mem.get(l.obj) else {
            return "-".into();
        };
        if !o.alive {
            return "freed".into();
        }
        if l.index >= o.size() {
            return "-".into();
        }
        let c = o.get(l.index);
        match c.state {
            fencer_machine::CellState::Valid => c.value.to_string(),
            fencer_machine::CellState::Uninit => "?".into(),
            fencer_machine::CellState::Destroyed => "destroyed".into(),
        }
    }

    /// The contents of one buffer channel in `state`, oldest first: `x=1 y=2`.
    pub fn buffer_text(&self, state: &State, t: u32, chan: Chan) -> String {
        let Some(b) = state.bufs.get(t as usize) else {
            return String::new();
        };
        b.entries()
            .filter(|e| match chan {
                Chan::Thread => true,
                Chan::Loc(l) => e.loc == l,
            })
            .map(|e| format!("{}={}", loc_name(self.prog, e.loc), e.value))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Name of a buffer channel: `buf(p)` or `buf(p,x)`.
    pub fn channel_name(&self, t: u32, chan: Chan) -> String {
        let n = self.last().thread_name(self.prog, t);
        match chan {
            Chan::Thread => format!("buf({n})"),
            Chan::Loc(l) => format!("buf({n},{})", loc_name(self.prog, l)),
        }
    }

    /// A short description of an event for the timeline: `store x=1`, `load y→0`.
    pub fn short(&self, e: &Event) -> String {
        let n = |l: Loc| loc_name(self.prog, l);
        let tn = |t: u32| self.last().thread_name(self.prog, t);
        match &e.kind {
            EventKind::Load {
                loc,
                value,
                forwarded,
                ..
            } => format!(
                "load {}→{}{}",
                n(*loc),
                value,
                if *forwarded { " (own buffer)" } else { "" }
            ),
            EventKind::Store {
                loc,
                value,
                buffered,
            } => format!(
                "store {}={}{}",
                n(*loc),
                value,
                if *buffered { " (buffered)" } else { "" }
            ),
            EventKind::Update { loc, value, .. } => format!("{}={} → memory", n(*loc), value),
            EventKind::Rmw {
                loc, read, written, ..
            } => match written {
                Some(w) => format!("rmw {}: {}→{}", n(*loc), read, w),
                None => format!("cas {}: read {} (failed)", n(*loc), read),
            },
            EventKind::Fence(k) => k.name().into(),
            EventKind::Lock {
                loc,
                trylock,
                destroy,
                ..
            } => format!(
                "{} {}",
                if *destroy {
                    "destroy"
                } else if *trylock {
                    "trylock"
                } else {
                    "lock"
                },
                n(*loc)
            ),
            EventKind::Unlock { loc, .. } => format!("unlock {}", n(*loc)),
            EventKind::TryLockFailed { loc, .. } => format!("trylock {} (held)", n(*loc)),
            EventKind::Spawn { child } => format!("spawn {}", tn(*child)),
            EventKind::Join { child } => format!("join {}", tn(*child)),
            EventKind::BarrierArrive {
                loc,
                arrived,
                count,
                ..
            } => format!("barrier {} arrives {arrived}/{count}", n(*loc)),
            EventKind::BarrierPass { loc } => format!("barrier {} passes", n(*loc)),
            EventKind::Alloc { size, .. } => format!("alloc {size}"),
            EventKind::Free { .. } => "free".into(),
            EventKind::Assume => "assume".into(),
            EventKind::Failed | EventKind::FaultedAccess { .. } | EventKind::FailedJoin { .. } => {
                "fails".into()
            }
        }
    }

    /// Where an execution's violation is, and what it is: for the final row of the views.
    pub fn verdict_text(&self) -> String {
        match (&self.cex, self.enabled_at_end) {
            (Some(c), _) if c.message.starts_with(&c.kind) => c.message.clone(),
            (Some(c), _) => format!("{}: {}", c.kind, c.message),
            (None, 0) => "the execution ends without a violation".into(),
            (None, n) => format!(
                "the trace stops here; the execution is not over ({n} step{} enabled)",
                if n == 1 { "" } else { "s" }
            ),
        }
    }

    /// Threads the verdict row marks: the faulting thread, the blocked ones of a deadlock
    /// or a hang.
    pub fn marked_threads(&self) -> Vec<u32> {
        if let Some(f) = &self.fault {
            return vec![f.thread];
        }
        match self.cex.as_ref().map(|c| c.kind.as_str()) {
            Some("deadlock") | Some("hang") => {
                let s = self.last();
                (0..s.threads.len() as u32)
                    .filter(|&t| !s.threads[t as usize].finished)
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

/// The memory cell an event acts on.
pub fn event_loc(k: &EventKind) -> Option<Loc> {
    match k {
        EventKind::Load { loc, .. }
        | EventKind::Store { loc, .. }
        | EventKind::Update { loc, .. }
        | EventKind::Rmw { loc, .. }
        | EventKind::Lock { loc, .. }
        | EventKind::Unlock { loc, .. }
        | EventKind::TryLockFailed { loc, .. }
        | EventKind::BarrierArrive { loc, .. }
        | EventKind::BarrierPass { loc } => Some(*loc),
        EventKind::FaultedAccess { loc, .. } if loc.index != u32::MAX => Some(*loc),
        _ => None,
    }
}

/// A stable hash of the parts of a program that executions depend on (objects, code,
/// threads, condition; not file names), as 16 hex digits: FNV-1a over their debug form.
pub fn program_hash(prog: &Program) -> String {
    let text = format!(
        "{:?}{:?}{:?}{:?}",
        prog.objects, prog.functions, prog.threads, prog.cond
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Escapes text for XML and HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}
