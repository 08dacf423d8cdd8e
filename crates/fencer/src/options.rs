//! The options of a check: what to ask of which input, with which engine and limits.
//!
//! With the cargo feature `cli` they are also `fencer check`'s command-line options (the
//! doc comments are its `--help`), so the library and the command cannot drift apart.

use crate::Error;
use fencer_memory::ModelKind;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Model {
    /// Sequential consistency: every store reaches memory at once.
    Sc,
    /// x86-TSO: one FIFO store buffer per thread, with store forwarding.
    Tso,
    /// SPARC PSO: one FIFO store buffer per thread and location.
    Pso,
    /// DVE models only: the DiVinE thesis's PSO, one buffer slot per process and location
    /// (a later write replaces a buffered one) flushed by a memory process.
    Pso1,
}

impl From<Model> for ModelKind {
    fn from(m: Model) -> Self {
        match m {
            Model::Sc => ModelKind::Sc,
            Model::Tso => ModelKind::Tso,
            // Refused before any program is loaded (see `program_model`).
            Model::Pso | Model::Pso1 => ModelKind::Pso,
        }
    }
}

/// The model for a program (not a DVE model): `pso1` is DVE's alone.
pub fn program_model(m: Model) -> Result<ModelKind, Error> {
    match m {
        Model::Pso1 => Err(Error::usage(
            "error: --model pso1 (one buffer slot per location, the DiVinE thesis's semantics) is for DVE models; programs and litmus tests take sc, tso or pso",
            None,
        )),
        m => Ok(m.into()),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Por {
    /// Source sets with sleep sets: a node expands one thread, and others as races ask;
    /// at a cover, races come from the coverer's summary of shared accesses.
    Source,
    /// Sleep sets only: every enabled thread not asleep.
    Sleep,
    /// Source sets, reading a coverer's subtree path by path instead of its summary (the
    /// paper's baseline, to measure what summaries save).
    SourceEnumerate,
}

impl From<Por> for fencer_symbolic::Por {
    fn from(p: Por) -> Self {
        match p {
            Por::Source => fencer_symbolic::Por::Source,
            Por::Sleep => fencer_symbolic::Por::Sleep,
            Por::SourceEnumerate => fencer_symbolic::Por::SourceEnumerate,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Engine {
    /// `dpor`, but for a C program under SC with an input too wide to enumerate (more
    /// values than --input-values), which `abpress` checks, or whose threads run past
    /// every bound of dpor's first rounds (loops that never end), which `abpress` tries
    /// for up to 5 s first, or whose `main` creates threads in a loop that never ends,
    /// which the parameterized engine checks for any number of threads (up to 60 s);
    /// the report names the engine that answered and why.
    Auto,
    /// Dynamic partial-order reduction on chronological traces: one execution per
    /// Shasha-Snir trace (or close to it), the fast engine.
    Dpor,
    /// Exhaustive enumeration of every interleaving, buffer updates included; the oracle
    /// other engines are tested against. Exact, but exponential.
    Reference,
    /// Symbolic (C programs, SC): inputs from `__VERIFIER_nondet_*` and loops without a
    /// bound, by lazy abstraction with covers and source sets (AbPress).
    Abpress,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Algo {
    /// Optimal-DPOR with wakeup trees: one complete execution per trace; each race is
    /// reversed by a whole sequence of events.
    Optimal,
    /// Source-DPOR with sleep sets: one complete execution per trace; each race is
    /// reversed by adding one process to a backtrack set.
    Source,
}

#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// The input: `.fen`, `.litmus`, `.c`, `.i`, `.ll`, `.bc`, `.dve` or `.cub` (the
    /// extension picks the front-end).
    pub file: PathBuf,
    /// C: define a macro (passed to clang as -D).
    #[cfg_attr(feature = "cli", arg(short = 'D', value_name = "NAME[=VALUE]"))]
    pub define: Vec<String>,
    /// C: add a directory to the include path (passed to clang as -I).
    #[cfg_attr(feature = "cli", arg(short = 'I', value_name = "DIR"))]
    pub include: Vec<PathBuf>,
    /// C: the language standard (passed to clang as -std=), e.g. c11.
    #[cfg_attr(feature = "cli", arg(long, value_name = "STD"))]
    pub std: Option<String>,
    /// C: the clang 14 to compile with (default: $FENCER_CLANG, clang-14 on PATH, or
    /// /usr/lib/llvm-14/bin/clang).
    #[cfg_attr(feature = "cli", arg(long, value_name = "PATH"))]
    pub clang: Option<PathBuf>,
    /// C: further compiler flags, after `--`.
    #[cfg_attr(feature = "cli", arg(last = true, value_name = "CFLAGS"))]
    pub cflags: Vec<String>,
    /// Memory model to check under.
    #[cfg_attr(
        feature = "cli",
        arg(long, short, value_enum, ignore_case = true, default_value = "sc")
    )]
    pub model: Model,
    /// Exploration engine.
    #[cfg_attr(feature = "cli", arg(long, short, value_enum, default_value = "auto"))]
    pub engine: Engine,
    /// C: most values an input (`__VERIFIER_nondet_*()`) may take for the explicit engines
    /// to try each one, one run per choice. `_Bool` has 2; an `int` narrowed by
    /// `__VERIFIER_assume(0 <= x && x < 4)` right after the call has 4, and one only ever
    /// compared with constants has one value per outcome. A wider input is refused
    /// (under SC, --engine auto hands the program to abpress).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = 256))]
    pub input_values: u64,
    /// DPOR algorithm (with --engine dpor).
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value = "optimal"))]
    pub algo: Algo,
    /// Partial-order reduction of --engine abpress.
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value = "source"))]
    pub por: Por,
    /// Also print the number of races found and reversed.
    #[cfg_attr(feature = "cli", arg(long, short))]
    pub verbose: bool,
    /// Explore every execution even after a violation (to list every final state).
    #[cfg_attr(feature = "cli", arg(long))]
    pub all: bool,
    /// Print the result as one JSON object instead of text.
    #[cfg_attr(feature = "cli", arg(long))]
    pub json: bool,
    /// Stop after this many seconds, loading (clang) included (exit code 3 with the
    /// statistics so far).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS"))]
    pub timeout: Option<f64>,
    /// Stop after this many complete executions (exit code 3).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_executions: Option<u64>,
    /// Most events one thread may execute in one execution: a thread that reaches it is
    /// stopped while the others go on, and the result then holds up to that bound. DPOR
    /// first tries 256 and then 16384 events within small budgets (not with --all or
    /// --shard), so that a bug at a loop's first iteration is found first.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "N", default_value_t = 100_000)
    )]
    pub max_depth: usize,
    /// Cut executions that run any loop more than N times in a row (each backward jump
    /// counted from the loop's entry: a nested loop, or one in a function called again,
    /// starts from 0); the result then holds up to that bound and the cut executions are
    /// counted.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub unroll: Option<u32>,
    /// DVE: also report a reachable state where no process can move.
    #[cfg_attr(feature = "cli", arg(long))]
    pub deadlock: bool,
    /// DVE: report a reachable state where this expression holds (over globals, `P.state`
    /// and `P->var`), e.g. `--reach 'P_0.CS + P_1.CS > 1'`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "EXPR"))]
    pub reach: Option<String>,
    /// DVE: check an LTL formula over the model (`--ltl 'G (wait0 -> F cs0)'`, atoms being
    /// the model's `expression`s or variables) or a DiVinE `.ltl` file (`#define NAME EXPR`
    /// and `#property FORMULA` lines; each property is answered).
    #[cfg_attr(feature = "cli", arg(long, value_name = "FORMULA|FILE.ltl"))]
    pub ltl: Option<String>,
    /// DVE, LTL: only weakly fair runs count (a process that stays enabled eventually
    /// moves), so a property is violated only by a fair run.
    #[cfg_attr(feature = "cli", arg(long))]
    pub fair: bool,
    /// DVE: stop after storing this many states (exit code 3).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_states: Option<u64>,
    /// DVE: do not stop at the first run-time error, failed assertion or goal: explore
    /// every reachable state (an error ends its run and is counted, not stored) and report
    /// the counts; the first one found is the counterexample.
    #[cfg_attr(feature = "cli", arg(long))]
    pub keep_going: bool,
    /// DVE under --model tso|pso: the most writes one process's store buffer holds (a
    /// process waits while its buffer is full; a SAFE verdict holds up to this bound).
    #[cfg_attr(feature = "cli", arg(long, value_name = "K", default_value_t = 2))]
    pub buffer_bound: u32,
    /// DVE under a relaxed model: keep a written-out buffer slot's old value instead of
    /// zeroing it (more states; to measure the reduction).
    #[cfg_attr(feature = "cli", arg(long))]
    pub keep_stale: bool,
    /// DVE under a relaxed model: buffer also the globals that only one process touches
    /// and no property reads (by default their writes go straight to memory: no one else
    /// could tell; more states; to measure the reduction).
    #[cfg_attr(feature = "cli", arg(long))]
    pub buffer_private: bool,
    /// DVE under a relaxed model (pso1, tso, pso): the writes that bypass the store buffers and the
    /// transitions that carry a full barrier, one per line: `atomic PROCESS LINE VAR|*`
    /// or `barrier PROCESS LINE` (LINE: where the transition starts in the model; `#`
    /// starts a comment). `fencer repair model.dve` writes such a file.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub atomic: Option<PathBuf>,
    /// DVE under a relaxed model, LTL: also count runs where a buffered write is delayed
    /// forever (by default a run must flush every buffer infinitely often, as the thesis
    /// assumes).
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_buffer_fairness: bool,
    /// .cub: stop after visiting this many cubes; --engine abpress: after this many tree
    /// nodes (default 2,000,000). Exit code 3.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_nodes: Option<u64>,
    /// .cub: print the inductive invariant of a SAFE answer (the negated visited cubes).
    #[cfg_attr(feature = "cli", arg(long))]
    pub invariant: bool,
    /// .cub: Cubicle's BRAB (`-brab N`): explore the instance with N processes forward and
    /// replace new cubes by candidate invariants no explored state satisfies; a candidate
    /// reachable from `init` is banned and the search restarts. The verdict stays exact.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=4)))]
    pub brab: Option<u8>,
    /// .cub with --brab: explore the instance at most this many steps forward (Cubicle's
    /// `-forward-depth`; default: every reachable state, up to 20,000).
    #[cfg_attr(feature = "cli", arg(long, value_name = "D", requires = "brab"))]
    pub forward_depth: Option<u32>,
    /// Worker threads (at most 1024); default: all cores. Programs (DPOR), with
    /// --algo optimal: one worker's exploration, the subtrees below a depth explored
    /// ahead by the others; the run is --jobs 1's (the same executions in the same
    /// order, final states, verdict, counterexample and statistics but `reversed`, none
    /// blocked by a sleep set) for any N and timing; where the subtrees come one after
    /// another and the split does not pay, it goes on as one worker (`--verbose`'s `split:` line
    /// says after which unit). With --algo source: the tree is
    /// split at its races (a Source-DPOR top whose branches are units, fed by the races
    /// the units find); the
    /// complete executions, final states and verdict are --jobs 1's, the counterexample
    /// the split tree's first in unit order, and a limit counts every worker's work. With
    /// --shard: at a static frontier. `--jobs 1` runs the engine unsplit.
    /// DVE: threads for reachability (errors, assertions, --reach, --deadlock; LTL uses
    /// one); the answer and the counterexample do not depend on the number of workers.
    #[cfg_attr(feature = "cli", arg(long, short = 'j', value_name = "N"))]
    pub jobs: Option<usize>,
    /// DVE: store full state vectors. By default each byte is stored in as few bits as the
    /// values it can hold need (a flag in one bit); this measures what that saves.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_pack: bool,
    /// Keep spin loops as they are. By default a waiting loop's back edge blocks the thread
    /// after an iteration that only read (the execution is discarded, or reported as a
    /// hang when nothing can ever release the loop), when no register it writes is read
    /// later.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_spin_assume: bool,
    /// C: `pthread_cond_wait` returns only when signalled. By default it may also return
    /// without a signal, as POSIX allows (a program that waits with `if` instead of
    /// `while` is then found wrong); with this the verdict says that it assumed otherwise.
    #[cfg_attr(feature = "cli", arg(long))]
    pub no_spurious_wakeups: bool,
    /// Programs: what an execution that ends with a thread waiting forever (in a loop no
    /// one can release, or at a lock, join or wait no one can end) counts as. `violation`
    /// reports it (fencer's default); `ignore` counts it as a blocked execution, as
    /// Nidhugg and GenMC do (to compare verdicts with them). Programs that follow
    /// SV-COMP's conventions (they name `reach_error`) default to `ignore`: their property
    /// is that the error function is never called.
    #[cfg_attr(feature = "cli", arg(long, value_enum, value_name = "POLICY"))]
    pub hangs: Option<Hangs>,
    /// Programs (DPOR): explore only shard I of N (1 <= I <= N) of the split tree, so that
    /// N runs (on N machines) explore everything exactly once between them; combine their
    /// `--json` results with `fencer merge`.
    #[cfg_attr(feature = "cli", arg(long, value_name = "I/N"))]
    pub shard: Option<String>,
    /// The options given explicitly (on the command line), even at their default values;
    /// an option whose value differs from its default counts as given too.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip)]
    pub given: crate::applies::Given,
    /// The input's text, read instead of `file` (which then only names it and picks the
    /// front-end). C is compiled from the file only.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip)]
    pub source: Option<String>,
    /// Counts complete executions as the DPOR engine finds them, for a progress display.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip)]
    pub progress: Option<Arc<AtomicU64>>,
    /// DVE models: search across these ranks (the processes of an MPI job: `fencer` sets
    /// this under `mpirun`), each storing the states whose hash it owns.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip)]
    pub ranks: Option<fencer_explicit::dist::Ranks>,
    /// A view of the result was asked for (`--view`, `--html`, `--sarif`, `--save-trace`,
    /// `--final`; the CLI's options): the flag, since views replay an execution, which a
    /// program with inputs cannot give them yet.
    #[cfg_attr(feature = "cli", arg(skip))]
    #[serde(skip)]
    pub replays: Option<&'static str>,
}

impl Default for Options {
    /// `fencer check`'s defaults (a test holds the two together), for an input with no
    /// name yet.
    fn default() -> Options {
        Options {
            file: PathBuf::new(),
            define: Vec::new(),
            include: Vec::new(),
            std: None,
            clang: None,
            cflags: Vec::new(),
            model: Model::Sc,
            engine: Engine::Auto,
            input_values: fencer_machine::input::DEFAULT_LIMIT,
            algo: Algo::Optimal,
            por: Por::Source,
            verbose: false,
            all: false,
            json: false,
            timeout: None,
            max_executions: None,
            max_depth: 100_000,
            unroll: None,
            deadlock: false,
            reach: None,
            ltl: None,
            fair: false,
            max_states: None,
            keep_going: false,
            buffer_bound: 2,
            keep_stale: false,
            buffer_private: false,
            atomic: None,
            no_buffer_fairness: false,
            max_nodes: None,
            invariant: false,
            brab: None,
            forward_depth: None,
            jobs: None,
            no_pack: false,
            no_spin_assume: false,
            no_spurious_wakeups: false,
            hangs: None,
            shard: None,
            given: Default::default(),
            source: None,
            progress: None,
            ranks: None,
            replays: None,
        }
    }
}

impl Options {
    /// Checks the file at `path` with the default options.
    pub fn file(path: impl Into<PathBuf>) -> Options {
        Options {
            file: path.into(),
            ..Options::default()
        }
    }

    /// Checks `source`, read as a file named `name` would be (its extension picks the
    /// front-end: `.fen`, `.litmus`, `.dve` or `.cub`).
    pub fn text(name: impl Into<PathBuf>, source: impl Into<String>) -> Options {
        Options {
            source: Some(source.into()),
            ..Options::file(name)
        }
    }

    /// The workers `jobs` asks for: by default one per core.
    pub fn workers(&self) -> usize {
        self.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }

    /// The memory model to check under.
    pub fn model(self, model: Model) -> Options {
        Options { model, ..self }
    }

    /// The exploration engine.
    pub fn engine(self, engine: Engine) -> Options {
        Options { engine, ..self }
    }

    /// The options set: those given explicitly, and those whose value differs from the
    /// default (by field name, which is also the option's id in [`crate::applies`]).
    pub fn set(&self) -> std::collections::BTreeSet<String> {
        let mine = serde_json::to_value(self).expect("options serialise");
        let blank = serde_json::to_value(Options {
            file: self.file.clone(),
            ..Options::default()
        })
        .expect("options serialise");
        let mut set: std::collections::BTreeSet<String> = self.given.ids().cloned().collect();
        if let (Some(a), Some(b)) = (mine.as_object(), blank.as_object()) {
            set.extend(
                a.iter()
                    .filter(|(k, v)| b.get(*k) != Some(v))
                    .map(|(k, _)| k.clone()),
            );
        }
        set
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Hangs {
    /// A thread that waits forever is a violation.
    Violation,
    /// An execution that ends so is discarded as blocked.
    Ignore,
}
