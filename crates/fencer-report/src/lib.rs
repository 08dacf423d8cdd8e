//! The result every engine returns, its JSON schema and its text rendering.
//!
//! The JSON field names are a public contract (scripts diff them across engines and
//! versions): `verdict`, `model`, `engine`, `executions`, `blocked`, `elapsed_ms`,
//! `final_states`, `counterexample` are kept by every engine.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every execution was explored and none violates anything.
    Safe,
    /// Some execution violates an assertion, the final condition, memory safety, or
    /// deadlocks.
    Violation,
    /// A limit stopped the exploration before it was complete, and no violation was found.
    Incomplete,
}

/// What the text report says of a complete exploration that found no violation.
pub const SAFE_HEADLINE: &str = "SAFE: no violation in any execution";

impl Verdict {
    /// The process exit code for this verdict: 0 safe, 1 violation, 3 stopped by a limit.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Safe => 0,
            Verdict::Violation => 1,
            Verdict::Incomplete => 3,
        }
    }
}

/// One line of a counterexample: one event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceLine {
    /// 1-based position in the execution.
    pub step: usize,
    /// `p`, or `upd(p)` / `upd(p,x)` for a store-buffer update.
    pub thread: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The function the event's instruction is in (C programs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// Human-readable operation, e.g. `store x = 1 (buffered)` or `load y -> 0`.
    pub op: String,
    /// The memory location acted on, if any.
    pub location: Option<String>,
    /// The value read or written, if any.
    pub value: Option<i64>,
    /// Whether the event is a store-buffer update (an event of an auxiliary thread).
    pub buffer_update: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counterexample {
    /// `assertion`, `condition`, `deadlock`, `memory-error`, `arithmetic`, `bad-join`,
    /// `bad-unlock`, `bad-mutex`.
    pub kind: String,
    pub message: String,
    /// Where the failing operation is, when there is one.
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub events: Vec<TraceLine>,
    /// The state at the end, over the reported variables (for condition violations).
    pub final_state: Option<Vec<(String, i64)>>,
    /// The execution's schedule: who took each step, one per executed event (the
    /// `events` above may add a line for the failing instruction). Not part of the JSON
    /// schema; `--save-trace` and the views replay it.
    #[serde(skip)]
    pub schedule: Vec<ScheduleStep>,
}

/// Who performed one step of an execution, as the machine names it (`fencer_machine::Step`),
/// in plain numbers so that reports need not know the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScheduleStep {
    /// Thread `t` executed its next visible instruction.
    Thread(u32),
    /// The oldest entry of a store buffer of thread `thread` reached memory: its one buffer
    /// (TSO: `loc` is `None`) or its buffer for cell `loc = (object, index)` (PSO).
    Update {
        thread: u32,
        loc: Option<(u32, u32)>,
    },
}

/// A schedule kept compactly, for the many kept at once (one per distinct final state):
/// each run of steps by one performer is its code and the run's length, in LEB128
/// varints. A step in [`ScheduleStep`] form takes 16 bytes; a run here takes two or three
/// bytes, and runs are long (a thread alone, a loop's iterations).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedSchedule(Box<[u8]>);

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    while let Some(&b) = bytes.get(*at) {
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

impl PackedSchedule {
    pub fn pack(steps: impl IntoIterator<Item = ScheduleStep>) -> PackedSchedule {
        let mut out = Vec::new();
        let mut run: Option<(ScheduleStep, u64)> = None;
        let flush = |out: &mut Vec<u8>, (s, n): (ScheduleStep, u64)| {
            match s {
                ScheduleStep::Thread(t) => put_varint(out, u64::from(t) << 2),
                ScheduleStep::Update { thread, loc: None } => {
                    put_varint(out, u64::from(thread) << 2 | 1)
                }
                ScheduleStep::Update {
                    thread,
                    loc: Some((obj, index)),
                } => {
                    put_varint(out, u64::from(thread) << 2 | 2);
                    put_varint(out, u64::from(obj));
                    put_varint(out, u64::from(index));
                }
            }
            put_varint(out, n);
        };
        for s in steps {
            run = match run {
                Some((r, n)) if r == s => Some((r, n + 1)),
                Some(prev) => {
                    flush(&mut out, prev);
                    Some((s, 1))
                }
                None => Some((s, 1)),
            };
        }
        if let Some(last) = run {
            flush(&mut out, last);
        }
        PackedSchedule(out.into_boxed_slice())
    }

    pub fn unpack(&self) -> Vec<ScheduleStep> {
        let b = &self.0;
        let mut at = 0;
        let mut steps = Vec::new();
        while at < b.len() {
            let code = get_varint(b, &mut at);
            let thread = (code >> 2) as u32;
            let s = match code & 3 {
                0 => ScheduleStep::Thread(thread),
                1 => ScheduleStep::Update { thread, loc: None },
                _ => {
                    let obj = get_varint(b, &mut at) as u32;
                    let index = get_varint(b, &mut at) as u32;
                    ScheduleStep::Update {
                        thread,
                        loc: Some((obj, index)),
                    }
                }
            };
            let n = get_varint(b, &mut at) as usize;
            steps.extend(std::iter::repeat_n(s, n));
        }
        steps
    }
}

/// Why an exploration stopped early.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    Timeout,
    MaxExecutions,
    /// An engine's budget of events ran out (a search fencer runs only if it is cheap).
    MaxEvents,
    MaxStates,
    /// Some thread executed more events than `--max-depth` allows in one execution.
    Depth,
    /// Some execution ran a loop more often than `--unroll` allows.
    Unroll,
    /// Some thread's call stack grew past the recursion bound.
    Recursion,
    /// Some thread ran the local-step bound without a visible event (a loop that touches
    /// no memory).
    LocalLoop,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Complete executions explored.
    pub executions: u64,
    /// Executions that did not complete because of the program or a bound: blocked by a
    /// false `assume`, deadlocked or hung, or cut by a bound. One per trace, like
    /// `executions`, so the same for any algorithm and any split of the tree. Not the
    /// explorations a sleep set stopped (`sleep_blocked`).
    pub blocked: u64,
    /// Of those, executions blocked by a false `assume` (spin loops waiting in vain).
    pub assume_blocked: u64,
    /// Of those, executions that ended with a thread waiting forever (a hang or a
    /// deadlock) under a policy that does not count that as a violation
    /// ([`HangPolicy::Blocked`]).
    #[serde(default)]
    pub waits_forever: u64,
    /// Of the `assume_blocked`, executions where a loop that reads an input repeated
    /// itself unchanged: discarded as at a false `assume` (another input value leaves the
    /// loop, in another execution), so such a loop waiting forever is not a hang.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub input_loops: u64,
    /// Assignments of input values explored, one run each (DPOR on programs with
    /// `__VERIFIER_nondet_*` inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_runs: Option<u64>,
    /// Of those, executions cut by the depth bound (the result then only holds up to it).
    pub depth_cut: u64,
    /// Of those, executions cut by the loop bound `--unroll`.
    pub unroll_cut: u64,
    /// Of those, executions cut by the recursion bound.
    pub recursion_cut: u64,
    /// Of those, executions cut by the bound on local steps between two events.
    pub local_loop_cut: u64,
    /// Distinct Shasha-Snir traces among the complete executions, when counted.
    pub traces: Option<u64>,
    /// Events executed, updates included.
    pub events: u64,
    /// Distinct states visited (engines that memoise).
    pub states: Option<u64>,
    /// Cubes visited by the parameterized engine (`.cub` files), as Cubicle counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// Transitions of the state graph (the explicit-state engine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transitions: Option<u64>,
    /// Bytes of the state table (arena, parent links, hash table) of the explicit-state
    /// engine, and the bytes one stored state takes (bit-packed when its values allow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_memory_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state_bytes: Option<u64>,
    /// Explorations abandoned because every enabled process was in the sleep set (DPOR):
    /// they would have repeated an execution explored elsewhere. Work of the engine, not
    /// executions of the program: none for Optimal-DPOR on one worker or with `--jobs`,
    /// some for Source-DPOR and for the units of a `--shard` frontier, as many as that
    /// exploration order gives.
    pub sleep_blocked: Option<u64>,
    /// Races found (DPOR).
    pub races: Option<u64>,
    /// Races reversed: those that led to a new backtrack point or wakeup-tree branch.
    pub reversed: Option<u64>,
    /// Complete executions per second of wall time.
    pub executions_per_sec: f64,
    /// Peak resident memory of the process, in KiB (where the OS reports it).
    pub peak_rss_kib: Option<u64>,
    /// Spin loops replaced by a load and an `assume` before exploring.
    pub spin_loops: u64,
    pub elapsed_ms: u64,
    /// A distributed run's ranks (under `mpirun`), each one's share: the counts above
    /// are their sums.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<RankShare>>,
}

/// What one rank of a distributed run did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankShare {
    pub rank: u64,
    /// States it owns and stored.
    pub states: u64,
    /// Bytes of its state table.
    pub state_memory_bytes: u64,
    /// Milliseconds spent generating and storing states.
    pub work_ms: u64,
    /// Milliseconds spent exchanging states and agreeing with the other ranks, waiting
    /// for slower ones included.
    pub comm_ms: u64,
    /// Bytes it sent to other ranks.
    pub sent_bytes: u64,
    /// Its peak resident memory, in KiB (where the OS reports it).
    #[serde(default)]
    pub peak_rss_kib: Option<u64>,
}

/// The version of the JSON a report is written as: `"schema": "fencer-report/1"` heads
/// every report, so that a script can tell which fields to expect. The number grows when a
/// field changes meaning or goes; new fields do not change it.
pub const SCHEMA: &str = "fencer-report/1";

/// A report's `schema` field: always [`SCHEMA`] when written; any value is accepted when
/// read (a newer fencer's shard results still merge).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Schema;

impl Serialize for Schema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(SCHEMA)
    }
}

impl<'de> Deserialize<'de> for Schema {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Schema, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Schema)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    #[serde(default)]
    pub schema: Schema,
    pub verdict: Verdict,
    pub model: String,
    pub engine: String,
    /// The engine's algorithm, for engines that have several (`source`, `optimal`).
    pub algo: Option<String>,
    pub program: String,
    pub executions: u64,
    pub blocked: u64,
    pub elapsed_ms: u64,
    pub stats: Stats,
    /// The condition, when the program has one: `exists (...)` or `forall (...)`.
    pub condition: Option<String>,
    /// Names of the variables each final state lists, in order.
    pub final_vars: Vec<String>,
    /// Every reachable final state, as values of `final_vars`, sorted.
    pub final_states: Option<Vec<Vec<i64>>>,
    /// For each final state, how many complete executions (one per trace with DPOR) end
    /// in it.
    pub final_state_executions: Option<Vec<u64>>,
    /// For each final state, the schedule of the first execution that ended in it (for
    /// drawing it: `check --all --view F --final ...`). Not part of the JSON.
    #[serde(skip)]
    pub final_schedules: Vec<PackedSchedule>,
    pub counterexample: Option<Counterexample>,
    /// The limit that stopped exploration, if one did.
    pub stopped_by: Option<Limit>,
    /// What the verdict takes for granted beyond the input's semantics (an option that
    /// narrowed them, an approximation): printed with the verdict, never hidden.
    #[serde(default)]
    pub assumptions: Vec<String>,
    /// What a thread that waits forever counted as; `None` for inputs without threads
    /// that wait (DVE, `.cub`) and engines that do not look for them (`abpress`, whose
    /// `assumptions` then say so).
    #[serde(default)]
    pub hangs: Option<HangPolicy>,
    /// What else was explored to reach the verdict, in words.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// What an execution that ends with a thread waiting forever (a hang) counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HangPolicy {
    /// A violation of kind `hang`, or `deadlock` when threads wait at locks or joins
    /// (fencer's default).
    Violation,
    /// A blocked execution, as Nidhugg and GenMC count it (`--hangs ignore`), and as
    /// SV-COMP's reachability property has it (counted in `stats.waits_forever`).
    Blocked,
}

impl Report {
    /// A report of `program` checked under `model` by `engine` that explored nothing
    /// yet: the fields every engine fills in, with everything else empty. Engines that
    /// are not DPOR's fill in what they have (`Report { stats, counterexample,
    /// ..Report::new(..) }`).
    pub fn new(
        verdict: Verdict,
        model: &str,
        engine: &str,
        program: &str,
        elapsed_ms: u64,
    ) -> Report {
        Report {
            schema: Schema,
            verdict,
            model: model.into(),
            engine: engine.into(),
            algo: None,
            program: program.into(),
            executions: 0,
            blocked: 0,
            elapsed_ms,
            stats: Stats {
                elapsed_ms,
                ..Default::default()
            },
            condition: None,
            final_vars: Vec::new(),
            final_states: None,
            final_schedules: Vec::new(),
            final_state_executions: None,
            counterexample: None,
            stopped_by: None,
            assumptions: Vec::new(),
            hangs: None,
            notes: Vec::new(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }

    /// Adds the exploration of the program's variant whose waits return only when signalled
    /// (`w`) to the report: its work, and its violation if it found one (a wait no signal
    /// ends: every other violation of the variant is one of the program too, found first).
    /// Whether the counterexample is now the variant's.
    pub fn add_wait_variant(&mut self, w: Report) -> bool {
        let report = self;
        let (a, b) = (&mut report.stats, &w.stats);
        a.executions += b.executions;
        a.blocked += b.blocked;
        a.assume_blocked += b.assume_blocked;
        a.waits_forever += b.waits_forever;
        a.depth_cut += b.depth_cut;
        a.unroll_cut += b.unroll_cut;
        a.recursion_cut += b.recursion_cut;
        a.local_loop_cut += b.local_loop_cut;
        a.events += b.events;
        a.elapsed_ms += b.elapsed_ms;
        report.executions = a.executions;
        report.blocked = a.blocked;
        report.elapsed_ms = a.elapsed_ms;
        report.notes.push(format!(
            "waits that no signal ends were looked for in {} more execution{}, in which \
             pthread_cond_wait returns only when signalled",
            b.executions,
            if b.executions == 1 { "" } else { "s" }
        ));
        match w.verdict {
            Verdict::Violation => {
                report.verdict = Verdict::Violation;
                report.stopped_by = None;
                // The message stays the variant's own, as its trace replays it (the trace
                // says `spurious-wakeups no`); the note above says where it was found.
                report.counterexample = w.counterexample;
                true
            }
            Verdict::Incomplete if report.verdict == Verdict::Safe => {
                report.verdict = Verdict::Incomplete;
                report.stopped_by = w.stopped_by;
                false
            }
            _ => false,
        }
    }

    /// The text a person reads: verdict, counterexample, final states, statistics.
    pub fn to_text(&self, verbose: bool) -> String {
        let mut s = String::new();
        let verdict = match self.verdict {
            Verdict::Safe if self.stats.executions == 0 => {
                "SAFE, but vacuously: no execution completed (every one was discarded by an assume or blocked)"
            }
            Verdict::Safe => SAFE_HEADLINE,
            Verdict::Violation => "VIOLATION",
            Verdict::Incomplete => "INCOMPLETE: stopped by a limit before exploring everything",
        };
        let _ = writeln!(
            s,
            "{} under {} ({} engine): {}",
            self.program,
            self.model.to_uppercase(),
            match &self.algo {
                Some(a) => format!("{}, {a}", self.engine),
                None => self.engine.clone(),
            },
            verdict
        );
        if let Some(l) = &self.stopped_by {
            let why = limit_text(l);
            let _ = writeln!(s, "  stopped: {why}");
        }
        for a in &self.assumptions {
            let _ = writeln!(s, "  assuming: {a}");
        }
        for n in &self.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        if self.hangs == Some(HangPolicy::Blocked) {
            let _ = writeln!(
                s,
                "  hangs: an execution that ends with a thread waiting forever (a hang or a \
                 deadlock) counts as blocked, not as a violation"
            );
        }
        if let Some(c) = &self.counterexample {
            s.push('\n');
            s.push_str(&render_counterexample(c));
        }
        if let Some(fs) = &self.final_states {
            let _ = writeln!(s, "\nfinal states ({}):", fs.len());
            for st in fs {
                let parts: Vec<String> = self
                    .final_vars
                    .iter()
                    .zip(st)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                let _ = writeln!(s, "  {}", parts.join(" "));
            }
        }
        if let Some(c) = &self.condition {
            let _ = writeln!(s, "condition: {c}");
        }
        let st = &self.stats;
        let _ = write!(
            s,
            "\nexecutions: {} ({:.0}/s)  blocked: {}",
            st.executions, st.executions_per_sec, st.blocked
        );
        if st.waits_forever > 0 {
            let _ = write!(
                s,
                " (assume {}, waiting forever {})",
                st.assume_blocked, st.waits_forever
            );
        } else {
            let _ = write!(s, " (assume {})", st.assume_blocked);
        }
        if st.input_loops > 0 {
            let _ = write!(s, " (input loops {})", st.input_loops);
        }
        if let Some(n) = st.sleep_blocked {
            let _ = write!(s, "  sleep-set blocked: {n}");
        }
        let _ = write!(s, "  events: {}", st.events);
        if let Some(n) = st.input_runs {
            let _ = write!(s, "  input runs: {n}");
        }
        if let Some(t) = st.traces {
            let _ = write!(s, "  traces: {t}");
        }
        if let Some(n) = st.states {
            let _ = write!(s, "  states: {n}");
        }
        if st.depth_cut > 0 {
            let _ = write!(s, "  depth-cut: {}", st.depth_cut);
        }
        if st.unroll_cut > 0 {
            let _ = write!(s, "  unroll-cut: {}", st.unroll_cut);
        }
        if st.recursion_cut > 0 {
            let _ = write!(s, "  recursion-cut: {}", st.recursion_cut);
        }
        if st.local_loop_cut > 0 {
            let _ = write!(s, "  local-loop-cut: {}", st.local_loop_cut);
        }
        let _ = write!(s, "\ntime: {} ms", st.elapsed_ms);
        if let Some(k) = st.peak_rss_kib {
            let _ = write!(s, "  peak memory: {:.1} MiB", k as f64 / 1024.0);
        }
        if st.spin_loops > 0 {
            let _ = write!(s, "  spin loops replaced: {}", st.spin_loops);
        }
        if verbose {
            if let (Some(r), Some(v)) = (st.races, st.reversed) {
                let _ = write!(s, "\nraces: {r} found, {v} reversed");
            }
        }
        s.push('\n');
        s
    }
}

/// One step of a happens-before cycle: the edge that leads into an event, and the event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CycleStep {
    /// `po`, `rf`, `co` or `fr`; on the first step, the edge that closes the cycle.
    pub edge: String,
    pub event: TraceLine,
}

/// A distinct violation of sequential consistency: the pair of source instructions
/// `(store, access)` (Burnim, Sen, Stergiou's grouping): `store` sat in its thread's
/// buffer while `access`, of another thread, acted on its location, and the store
/// happens before the event just before `access`, so the trace has the cycle
/// `store ->hb* prev ->po access ->c store`.
#[derive(Clone, Debug, Serialize)]
pub struct ScViolation {
    /// The delayed store (as it appears in the witness).
    pub store: TraceLine,
    /// The access of another thread that overtook it.
    pub access: TraceLine,
    /// How many explored executions exposed this pair (SC executions for the monitor,
    /// TSO/PSO executions for the exhaustive method).
    pub count: u64,
    /// The cycle in the witness's trace, from `store` back to it.
    pub cycle: Vec<CycleStep>,
    /// A TSO/PSO execution whose trace has the cycle, replayed in the machine.
    pub witness: Option<Counterexample>,
}

/// The answer of `fencer robust`: is every execution under the model sequentially
/// consistent? Keeps the contract fields of [`Report`] (`verdict` is `safe` when robust).
#[derive(Clone, Debug, Serialize)]
pub struct RobustReport {
    /// `true` robust, `false` not robust, `null` when a limit stopped the exploration
    /// before anything was found.
    pub robust: Option<bool>,
    /// `monitor` or `exhaustive`.
    pub method: String,
    /// With the monitor: milliseconds spent monitoring (witnesses included), out of the
    /// total `elapsed_ms`; the rest is SC exploration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitor_ms: Option<f64>,
    pub violations: Vec<ScViolation>,
    #[serde(flatten)]
    pub report: Report,
}

impl RobustReport {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }

    pub fn exit_code(&self) -> i32 {
        self.report.verdict.exit_code()
    }

    pub fn to_text(&self, verbose: bool) -> String {
        let r = &self.report;
        let mut s = String::new();
        let how = match self.method.as_str() {
            "monitor" => "monitor over SC executions",
            _ => "exhaustive, every execution under the model",
        };
        let answer = match self.robust {
            Some(true) if r.counterexample.is_some() => {
                "ROBUST, but a safety violation was found (below)".to_string()
            }
            Some(true) => "ROBUST: every execution is sequentially consistent".to_string(),
            Some(false) => format!(
                "NOT ROBUST: {} distinct violation{} of sequential consistency",
                self.violations.len(),
                if self.violations.len() == 1 { "" } else { "s" }
            ),
            None => "UNKNOWN: stopped by a limit before exploring everything".to_string(),
        };
        let _ = writeln!(
            s,
            "{} under {} ({how}): {answer}",
            r.program,
            r.model.to_uppercase()
        );
        for a in &r.assumptions {
            let _ = writeln!(s, "  assuming: {a}");
        }
        for (i, v) in self.violations.iter().enumerate() {
            let pos = |t: &TraceLine| {
                let f = t.file.rsplit('/').next().unwrap_or(&t.file);
                match &t.function {
                    Some(func) => format!("{f}:{} in {func}", t.line),
                    None => format!("{f}:{}:{}", t.line, t.column),
                }
            };
            let _ = writeln!(
                s,
                "\nviolation {} of {}: {}'s store at {} is overtaken by {} at {}\n  store:  {}\n  access: {}",
                i + 1,
                self.violations.len(),
                v.store.thread,
                pos(&v.store),
                v.access.thread,
                pos(&v.access),
                v.store.op,
                v.access.op,
            );
            let _ = writeln!(
                s,
                "  exposed by {} execution{}",
                v.count,
                if v.count == 1 { "" } else { "s" }
            );
            let _ = writeln!(s, "  cycle:");
            for (k, c) in v.cycle.iter().enumerate() {
                let edge = if k == 0 { "" } else { c.edge.as_str() };
                let _ = writeln!(
                    s,
                    "    {:<3} #{:<4} {:<8} {:<16} {}",
                    edge,
                    c.event.step,
                    c.event.thread,
                    pos(&c.event),
                    c.event.op
                );
            }
            if let Some(first) = v.cycle.first() {
                let _ = writeln!(s, "    {:<3} back to #{}", first.edge, first.event.step);
            }
            if let Some(w) = &v.witness {
                let _ = writeln!(
                    s,
                    "  witness: a {} execution replayed in the machine; its trace has this cycle",
                    r.model.to_uppercase()
                );
                for line in render_counterexample(w).lines().skip(1) {
                    let _ = writeln!(s, "  {line}");
                }
            }
        }
        if let Some(c) = &r.counterexample {
            let _ = writeln!(s, "\nsafety violation found while exploring:");
            s.push_str(&render_counterexample(c));
        }
        if let Some(l) = &r.stopped_by {
            let _ = writeln!(s, "\n  stopped: {}", limit_text(l));
        }
        let st = &r.stats;
        let _ = write!(
            s,
            "\nexecutions: {} ({:.0}/s)  blocked: {}  events: {}",
            st.executions, st.executions_per_sec, st.blocked, st.events
        );
        if verbose {
            if let (Some(x), Some(y)) = (st.races, st.reversed) {
                let _ = write!(s, "  races: {x} found, {y} reversed");
            }
        }
        let _ = write!(s, "\ntime: {} ms", st.elapsed_ms);
        if let Some(m) = self.monitor_ms {
            let _ = write!(s, " (monitoring {m:.0} ms)");
        }
        s.push('\n');
        s
    }
}

/// Why an exploration stopped, for people.
pub fn limit_text(l: &Limit) -> &'static str {
    match l {
        Limit::Timeout => "the --timeout ran out",
        Limit::MaxExecutions => "--max-executions was reached",
        Limit::MaxEvents => "the budget of events ran out",
        Limit::MaxStates => "--max-states was reached",
        Limit::Depth => {
            "some thread ran more events than --max-depth allows in one execution (the result holds up to that bound)"
        }
        Limit::Recursion => {
            "some thread's calls nested deeper than the recursion bound of 256 frames (the result holds up to that bound)"
        }
        Limit::LocalLoop => {
            "some thread ran 100000 local steps without touching memory (a loop that never ends?); the result holds up to that bound"
        }
        Limit::Unroll => {
            "some executions ran a loop more often than --unroll allows (the result holds up to that bound)"
        }
    }
}

/// One line per event: step, thread, source position, operation.
pub fn render_counterexample(c: &Counterexample) -> String {
    let mut s = String::new();
    let at = match (&c.file, c.line, c.column) {
        (Some(f), Some(l), Some(col)) => format!(" at {f}:{l}:{col}"),
        _ => String::new(),
    };
    let _ = writeln!(s, "counterexample ({}){}: {}", c.kind, at, c.message);
    let tw = c
        .events
        .iter()
        .map(|e| e.thread.len())
        .max()
        .unwrap_or(6)
        .max(6);
    if c.events.iter().any(|e| e.function.is_some()) {
        // C programs: each event names its source file, line, column and function (a
        // line of C often holds several accesses: `x = 1; r = y;`).
        let base = |f: &str| f.rsplit('/').next().unwrap_or(f).to_string();
        let pos = |e: &TraceLine| match (e.line, e.column) {
            (0, _) => "-".to_string(),
            (l, 0) => format!("{}:{l}", base(&e.file)),
            (l, c) => format!("{}:{l}:{c}", base(&e.file)),
        };
        let pw = c
            .events
            .iter()
            .map(|e| pos(e).len())
            .max()
            .unwrap_or(4)
            .max(4);
        let fw = c
            .events
            .iter()
            .map(|e| e.function.as_deref().unwrap_or("-").len())
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = writeln!(
            s,
            "  {:>4}  {:<tw$}  {:<pw$}  {:<fw$}  operation",
            "#", "thread", "source", "function"
        );
        for e in &c.events {
            let _ = writeln!(
                s,
                "  {:>4}  {:<tw$}  {:<pw$}  {:<fw$}  {}",
                e.step,
                e.thread,
                pos(e),
                e.function.as_deref().unwrap_or("-"),
                e.op
            );
        }
    } else {
        let _ = writeln!(
            s,
            "  {:>4}  {:<tw$}  {:<8}  operation",
            "#", "thread", "line"
        );
        for e in &c.events {
            let pos = if e.line == 0 {
                "-".to_string()
            } else {
                format!("{}:{}", e.line, e.column)
            };
            let _ = writeln!(
                s,
                "  {:>4}  {:<tw$}  {:<8}  {}",
                e.step, e.thread, pos, e.op
            );
        }
    }
    if let Some(fs) = &c.final_state {
        let parts: Vec<String> = fs.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let _ = writeln!(s, "  final: {}", parts.join(" "));
    }
    s
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(Verdict::Safe.exit_code(), 0);
        assert_eq!(Verdict::Violation.exit_code(), 1);
        assert_eq!(Verdict::Incomplete.exit_code(), 3);
    }

    #[test]
    fn json_keeps_the_contract_fields() {
        let r = Report {
            schema: Default::default(),
            verdict: Verdict::Safe,
            model: "sc".into(),
            engine: "reference".into(),
            algo: None,
            program: "p".into(),
            executions: 3,
            blocked: 0,
            elapsed_ms: 1,
            stats: Stats::default(),
            condition: None,
            final_vars: vec![],
            final_states: Some(vec![]),
            final_schedules: vec![],
            final_state_executions: Some(vec![]),
            counterexample: None,
            stopped_by: None,
            assumptions: vec![],
            hangs: Some(HangPolicy::Violation),
            notes: vec![],
        };
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        for k in [
            "verdict",
            "model",
            "engine",
            "executions",
            "blocked",
            "elapsed_ms",
            "final_states",
            "counterexample",
            "assumptions",
            "hangs",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert_eq!(v["verdict"], "safe");
        assert!(v["counterexample"].is_null());
    }

    fn step() -> impl proptest::strategy::Strategy<Value = ScheduleStep> {
        use proptest::prelude::*;
        // Few performers, so that runs form; ids up to u32::MAX, so that varints are long.
        let id = prop_oneof![0u32..3, Just(u32::MAX)];
        prop_oneof![
            id.clone().prop_map(ScheduleStep::Thread),
            id.clone()
                .prop_map(|thread| ScheduleStep::Update { thread, loc: None }),
            (id.clone(), id.clone(), id).prop_map(|(thread, o, i)| ScheduleStep::Update {
                thread,
                loc: Some((o, i)),
            }),
        ]
    }

    proptest::proptest! {
        #[test]
        fn a_packed_schedule_unpacks_to_itself(steps in proptest::collection::vec(step(), 0..200)) {
            proptest::prop_assert_eq!(PackedSchedule::pack(steps.iter().copied()).unpack(), steps);
        }
    }
}
