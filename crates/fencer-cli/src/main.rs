//! `fencer`: checks concurrent programs under SC, x86-TSO and PSO.

mod applies;
mod bench;
mod cub;
mod dve;
mod dve_relaxed;
mod merge;
mod repair;
mod robust;
mod symbolic;
mod views;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code for bad input or usage.
const EXIT_USAGE: u8 = 2;
/// Workers `--jobs` accepts: more threads than this only cost their start-up (a split
/// tree has a few hundred units at most).
const MAX_JOBS: usize = 1024;

#[cfg(feature = "c")]
macro_rules! c_front_end {
    () => {
        "yes (clang-14 compiles .c and .i files; LLVM 14 IR is read in-process)"
    };
}
#[cfg(not(feature = "c"))]
macro_rules! c_front_end {
    () => {
        "no (built without the cargo feature `c`)"
    };
}

/// `fencer --version`: the version, the commit it was built from, and whether the C
/// front-end (which needs LLVM 14) is in.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("FENCER_COMMIT"),
    ")\nC front-end: ",
    c_front_end!(),
    "\nexit codes: 0 no violation, 1 violation, 2 bad input or usage, 3 stopped by a limit, 4 internal error"
);

#[derive(Parser)]
#[command(
    name = "fencer",
    version,
    long_version = LONG_VERSION,
    about = "Verify concurrent programs under the SC, x86-TSO and PSO memory models",
    long_about = "fencer explores the executions of a concurrent program under a memory model \
and reports whether any of them fails an assertion, deadlocks, or reaches the final state \
the program's `exists`/`forall` condition asks about, with a step-by-step counterexample. \
`robust` asks whether every execution under TSO/PSO is sequentially consistent, `repair` \
finds the fewest fences that make a program correct and writes them into the source, and \
DiVinE's `.dve` models are checked (reachability, deadlocks, LTL property processes) by an \
explicit-state engine.\n\n\
Exit codes: 0 no violation, 1 violation found, 2 bad input or usage, 3 stopped by a limit, \
4 an internal error (a bug in fencer, never a verdict).",
    after_help = "Examples:\n  fencer check examples/sb.fen --model tso\n  fencer check examples/sb.fen --model sc --json\n  fencer check examples/mp.fen --model pso --timeout 10\n  fencer robust examples/mp.fen --model pso\n  fencer repair examples/sb.fen --model tso --diff\n  fencer check examples/dve/philosophers.dve --deadlock"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every execution of a program and report violations and final states.
    #[command(
        after_help = "The extension picks the front-end: `.fen` is fencer's text format \
(docs/text-format.md), `.litmus` a herd7 X86 litmus test, `.c`/`.i` C with pthreads (also \
LLVM 14 IR as `.ll` or `.bc`), compiled with clang-14 at -O0: every access \
the source makes is kept (see docs/c.md for what each C construct means on TSO and PSO). \
Compiler flags pass through: -D, -I, --std, and anything after `--`. A `.dve` file is a \
DiVinE model, checked by the explicit-state engine: run-time errors and assertions, \
`--reach EXPR`, `--deadlock`, LTL (`--ltl FORMULA|FILE.ltl`, `property ltl` items or a \
property process, `--fair` for weakly fair runs), `-D NAME=VALUE` for `input` constants. \
A `.cub` file is a Cubicle model, checked for any number of processes.\n\n\
Each option says in its help what it applies to; one given where it does not apply (another \
kind of input, another engine, a question this run does not ask) is an error, never ignored.\n\n\
Examples:\n  fencer check prog.c --model tso\n  fencer check prog.c -m pso -DN=3 -- -Wall\n\n\
Exit codes: 0 no violation, 1 violation (assertion failure, deadlock, memory error, \
satisfied `exists` or violated `forall`), 2 bad input or usage, 3 stopped by a limit, \
4 internal error (a counterexample that fencer could not confirm: never a verdict)."
    )]
    Check(CheckCmd),
    /// Time `check` on a set of programs under each model: verdict, executions,
    /// executions per second, wall time and peak memory, as a table or JSON.
    #[command(
        after_help = "Each run is a separate `fencer check` process, so that its peak memory is \
its own. A program's `// expect: sc=... tso=... pso=...` line, when it has one, is checked: \
a run that disagrees is marked `!` and the exit code is 1.\n\n\
Example:\n  fencer bench bench/fen --models sc,tso,pso"
    )]
    Bench(BenchArgs),
    /// Combine the `--json` results of `check --shard I/N` runs (one per shard) into one
    /// verdict and statistics.
    #[command(after_help = merge::AFTER_HELP)]
    Merge(merge::MergeArgs),
    /// Answer litmus tests (herd7's X86 format) as herd7 does: every reachable final
    /// state, Ok/No, witnesses and the observation.
    #[command(
        after_help = "The output follows herd7's layout line by line (without its Hash line), so \
the two can be diffed. Every execution is explored (one per Shasha-Snir trace). Several files \
end with a summary table.\n\n\
Exit codes: 0 every test answered, 2 bad input or usage, 3 a limit stopped some test (its \
answer is partial).\n\n\
Example:\n  fencer litmus examples/MP.litmus --model pso"
    )]
    Litmus(LitmusArgs),
    /// Is every execution under TSO (PSO) sequentially consistent? Finds every distinct
    /// SC violation, with a replayed witness and its happens-before cycle.
    #[command(after_help = robust::AFTER_HELP)]
    Robust(robust::RobustArgs),
    /// Re-execute the execution a trace file (`check --save-trace`) describes, and print it.
    #[command(after_help = views::REPLAY_HELP)]
    Replay(views::ReplayArgs),
    /// Find the fewest fences that make a program correct under TSO or PSO, apply them to
    /// the source and re-check it.
    #[command(after_help = repair::AFTER_HELP)]
    Repair(repair::RepairArgs),
    /// Write a DVE model with store buffers built in (`--model pso1|tso|pso`), as the model
    /// that `check --model ...` explores: an ordinary DVE model, readable by fencer and
    /// DiVinE 2.
    #[command(
        after_help = "Example:\n  fencer transform examples/dve/peterson.dve --model pso1 -o peterson.pso1.dve\n  fencer check peterson.pso1.dve   # the same states as `check peterson.dve --model pso1`"
    )]
    Transform(dve_relaxed::TransformArgs),
    /// Internal: reads an LLVM IR file and exits 0, or dies. `check` runs it in a child
    /// process first, because LLVM aborts or crashes on some malformed IR instead of
    /// returning an error.
    #[command(hide = true, name = "internal-read-llvm")]
    InternalReadLlvm { file: PathBuf },
}

#[derive(clap::Args)]
struct LitmusArgs {
    /// Litmus files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Memory model (X86 tests are x86-TSO by default).
    #[arg(long, short, value_enum, ignore_case = true, default_value = "tso")]
    model: ModelArg,
    /// Exploration engine.
    #[arg(long, short, value_enum, default_value = "dpor")]
    engine: EngineArg,
    /// DPOR algorithm (with --engine dpor) [default: optimal].
    #[arg(long, value_enum)]
    algo: Option<AlgoArg>,
    /// Print the answers as JSON instead of herd7's text.
    #[arg(long)]
    json: bool,
    /// Stop each test after this many seconds (its answer is then partial; exit code 3).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    #[command(flatten)]
    views: views::ViewArgs,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Programs, or directories of `.fen` programs.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Models to run each program under.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        value_delimiter = ',',
        default_value = "sc,tso,pso"
    )]
    models: Vec<ModelArg>,
    /// DPOR algorithm.
    #[arg(long, value_enum, default_value = "optimal")]
    algo: AlgoArg,
    /// Per-run time limit in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 600.0)]
    timeout: f64,
    /// Print the rows as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Measure `fencer robust` instead of `check`: per program and weak model, SC
    /// exploration time, monitoring time and its overhead, and the exhaustive method's
    /// time, with both methods' verdicts (a `// robust: tso=yes pso=no` line is checked).
    #[arg(long)]
    robust: bool,
    /// Worker threads for each run: DPOR's split exploration, DVE reachability
    /// (benchmarks are one core unless said).
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1)]
    jobs: usize,
    /// Measure how `--jobs N` (N from --jobs, at least 2) scales instead: ROUNDS rounds,
    /// each of one `check --all` run with one worker, one with N, and N one-worker runs
    /// side by side (what N cores give N processes: the ceiling); medians and minima of
    /// the engine's time, and the speedup. Every N-worker run must explore the
    /// one-worker run's executions. Programs only; run it on an idle machine.
    #[arg(long, value_name = "ROUNDS", conflicts_with = "robust", value_parser = clap::value_parser!(u64).range(1..=1000))]
    scaling: Option<u64>,
    /// Keep spin loops as written in every DPOR run (`check --no-spin-assume`): to measure
    /// a program's whole tree, or the engine on a program the rewrite makes small.
    #[arg(long, conflicts_with = "robust")]
    no_spin_assume: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ModelArg {
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

impl From<ModelArg> for ModelKind {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Sc => ModelKind::Sc,
            ModelArg::Tso => ModelKind::Tso,
            // Refused before any program is loaded (see `program_model`).
            ModelArg::Pso | ModelArg::Pso1 => ModelKind::Pso,
        }
    }
}

/// The model for a program (not a DVE model): `pso1` is DVE's alone.
fn program_model(m: ModelArg, json: bool) -> Result<ModelKind, ExitCode> {
    match m {
        ModelArg::Pso1 => Err(usage_error(
            json,
            "error: --model pso1 (one buffer slot per location, the DiVinE thesis's semantics) is for DVE models; programs and litmus tests take sc, tso or pso",
            None,
        )),
        m => Ok(m.into()),
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum PorArg {
    /// Source sets with sleep sets: a node expands one thread, and others as races ask;
    /// at a cover, races come from the coverer's summary of shared accesses.
    Source,
    /// Sleep sets only: every enabled thread not asleep.
    Sleep,
    /// Source sets, reading a coverer's subtree path by path instead of its summary (the
    /// paper's baseline, to measure what summaries save).
    SourceEnumerate,
}

impl From<PorArg> for fencer_symbolic::Por {
    fn from(p: PorArg) -> Self {
        match p {
            PorArg::Source => fencer_symbolic::Por::Source,
            PorArg::Sleep => fencer_symbolic::Por::Sleep,
            PorArg::SourceEnumerate => fencer_symbolic::Por::SourceEnumerate,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum EngineArg {
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

#[derive(Clone, Copy, ValueEnum)]
enum AlgoArg {
    /// Optimal-DPOR with wakeup trees: one complete execution per trace; each race is
    /// reversed by a whole sequence of events.
    Optimal,
    /// Source-DPOR with sleep sets: one complete execution per trace; each race is
    /// reversed by adding one process to a backtrack set.
    Source,
}

#[derive(clap::Args, Clone)]
struct CheckArgs {
    /// The program to check: `.fen` (text format), `.c`, `.ll` or `.bc`.
    file: PathBuf,
    /// C: define a macro (passed to clang as -D).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// C: add a directory to the include path (passed to clang as -I).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// C: the language standard (passed to clang as -std=), e.g. c11.
    #[arg(long, value_name = "STD")]
    std: Option<String>,
    /// C: the clang 14 to compile with (default: $FENCER_CLANG, clang-14 on PATH, or
    /// /usr/lib/llvm-14/bin/clang).
    #[arg(long, value_name = "PATH")]
    clang: Option<PathBuf>,
    /// C: further compiler flags, after `--`.
    #[arg(last = true, value_name = "CFLAGS")]
    cflags: Vec<String>,
    /// Memory model to check under.
    #[arg(long, short, value_enum, ignore_case = true, default_value = "sc")]
    model: ModelArg,
    /// Exploration engine.
    #[arg(long, short, value_enum, default_value = "dpor")]
    engine: EngineArg,
    /// DPOR algorithm (with --engine dpor).
    #[arg(long, value_enum, default_value = "optimal")]
    algo: AlgoArg,
    /// Partial-order reduction of --engine abpress.
    #[arg(long, value_enum, default_value = "source")]
    por: PorArg,
    /// Also print the number of races found and reversed.
    #[arg(long, short)]
    verbose: bool,
    /// Explore every execution even after a violation (to list every final state).
    #[arg(long)]
    all: bool,
    /// Print the result as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Stop after this many seconds, loading (clang) included (exit code 3 with the
    /// statistics so far).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Stop after this many complete executions (exit code 3).
    #[arg(long, value_name = "N")]
    max_executions: Option<u64>,
    /// Most events one thread may execute in one execution: a thread that reaches it is
    /// stopped while the others go on, and the result then holds up to that bound.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_depth: usize,
    /// Cut executions that run any loop more than N times in a row (each backward jump
    /// counted from the loop's entry: a nested loop, or one in a function called again,
    /// starts from 0); the result then holds up to that bound and the cut executions are
    /// counted.
    #[arg(long, value_name = "N")]
    unroll: Option<u32>,
    /// DVE: also report a reachable state where no process can move.
    #[arg(long)]
    deadlock: bool,
    /// DVE: report a reachable state where this expression holds (over globals, `P.state`
    /// and `P->var`), e.g. `--reach 'P_0.CS + P_1.CS > 1'`.
    #[arg(long, value_name = "EXPR")]
    reach: Option<String>,
    /// DVE: check an LTL formula over the model (`--ltl 'G (wait0 -> F cs0)'`, atoms being
    /// the model's `expression`s or variables) or a DiVinE `.ltl` file (`#define NAME EXPR`
    /// and `#property FORMULA` lines; each property is answered).
    #[arg(long, value_name = "FORMULA|FILE.ltl")]
    ltl: Option<String>,
    /// DVE, LTL: only weakly fair runs count (a process that stays enabled eventually
    /// moves), so a property is violated only by a fair run.
    #[arg(long)]
    fair: bool,
    /// DVE: stop after storing this many states (exit code 3).
    #[arg(long, value_name = "N")]
    max_states: Option<u64>,
    /// DVE: do not stop at the first run-time error, failed assertion or goal: explore
    /// every reachable state (an error ends its run and is counted, not stored) and report
    /// the counts; the first one found is the counterexample.
    #[arg(long)]
    keep_going: bool,
    /// DVE under --model tso|pso: the most writes one process's store buffer holds (a
    /// process waits while its buffer is full; a SAFE verdict holds up to this bound).
    #[arg(long, value_name = "K", default_value_t = 2)]
    buffer_bound: u32,
    /// DVE under a relaxed model: keep a written-out buffer slot's old value instead of
    /// zeroing it (more states; to measure the reduction).
    #[arg(long)]
    keep_stale: bool,
    /// DVE under a relaxed model: buffer also the globals that only one process touches
    /// and no property reads (by default their writes go straight to memory: no one else
    /// could tell; more states; to measure the reduction).
    #[arg(long)]
    buffer_private: bool,
    /// DVE under a relaxed model (pso1, tso, pso): the writes that bypass the store buffers and the
    /// transitions that carry a full barrier, one per line: `atomic PROCESS LINE VAR|*`
    /// or `barrier PROCESS LINE` (LINE: where the transition starts in the model; `#`
    /// starts a comment). `fencer repair model.dve` writes such a file.
    #[arg(long, value_name = "FILE")]
    atomic: Option<PathBuf>,
    /// DVE under a relaxed model, LTL: also count runs where a buffered write is delayed
    /// forever (by default a run must flush every buffer infinitely often, as the thesis
    /// assumes).
    #[arg(long)]
    no_buffer_fairness: bool,
    /// .cub: stop after visiting this many cubes; --engine abpress: after this many tree
    /// nodes (default 2,000,000). Exit code 3.
    #[arg(long, value_name = "N")]
    max_nodes: Option<u64>,
    /// .cub: print the inductive invariant of a SAFE answer (the negated visited cubes).
    #[arg(long)]
    invariant: bool,
    /// .cub: Cubicle's BRAB (`-brab N`): explore the instance with N processes forward and
    /// replace new cubes by candidate invariants no explored state satisfies; a candidate
    /// reachable from `init` is banned and the search restarts. The verdict stays exact.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=4))]
    brab: Option<u8>,
    /// .cub with --brab: explore the instance at most this many steps forward (Cubicle's
    /// `-forward-depth`; default: every reachable state, up to 20,000).
    #[arg(long, value_name = "D", requires = "brab")]
    forward_depth: Option<u32>,
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
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// DVE: store full state vectors. By default each byte is stored in as few bits as the
    /// values it can hold need (a flag in one bit); this measures what that saves.
    #[arg(long)]
    no_pack: bool,
    /// Keep spin loops as they are. By default a waiting loop's back edge blocks the thread
    /// after an iteration that only read (the execution is discarded, or reported as a
    /// hang when nothing can ever release the loop), when no register it writes is read
    /// later.
    #[arg(long)]
    no_spin_assume: bool,
    /// C: `pthread_cond_wait` returns only when signalled. By default it may also return
    /// without a signal, as POSIX allows (a program that waits with `if` instead of
    /// `while` is then found wrong); with this the verdict says that it assumed otherwise.
    #[arg(long)]
    no_spurious_wakeups: bool,
    /// Programs: what an execution that ends with a thread waiting forever (in a loop no
    /// one can release, or at a lock, join or wait no one can end) counts as. `violation`
    /// reports it (fencer's default); `ignore` counts it as a blocked execution, as
    /// Nidhugg and GenMC do (to compare verdicts with them). Programs that follow
    /// SV-COMP's conventions (they name `reach_error`) default to `ignore`: their property
    /// is that the error function is never called.
    #[arg(long, value_enum, value_name = "POLICY")]
    hangs: Option<HangsArg>,
    /// The options given on the command line (not defaulted), for `applies`.
    #[arg(skip)]
    given: applies::Given,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum HangsArg {
    /// A thread that waits forever is a violation.
    Violation,
    /// An execution that ends so is discarded as blocked.
    Ignore,
}

/// The program-level options that change what counts as a violation, applied to a loaded
/// program (`--hangs`).
fn apply_conventions(args: &CheckArgs, prog: &mut fencer_ir::Program) {
    match args.hangs {
        Some(HangsArg::Violation) => prog.hang_is_violation = true,
        Some(HangsArg::Ignore) => prog.hang_is_violation = false,
        None => {}
    }
}

/// `check`'s arguments, and the views of its counterexample.
#[derive(clap::Args)]
struct CheckCmd {
    #[command(flatten)]
    args: CheckArgs,
    #[command(flatten)]
    views: views::ViewArgs,
    /// Programs (DPOR): explore only shard I of N (1 <= I <= N) of the split tree, so that
    /// N runs (on N machines) explore everything exactly once between them; combine their
    /// `--json` results with `fencer merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
}

/// Asks glibc's allocator for 64 MiB more each time a heap grows. A thread's own heap
/// otherwise grows a page run at a time, each a system call that the other threads' cores
/// must hear of: on two threads the explicit-state search spent twice the system time of
/// one (peterson.4: 0.15 s against 0.05 s, 0.075 s with the pad). The pad is address
/// space, not memory, until it is used.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn pad_heaps() {
    extern "C" {
        fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
    }
    const M_TOP_PAD: std::ffi::c_int = -2;
    // SAFETY: a plain glibc call, made before any other thread exists.
    unsafe {
        mallopt(M_TOP_PAD, 64 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn pad_heaps() {}

/// Exit code for an internal error: a bug in fencer (a panic, or a result it could not
/// confirm), never a verdict on the input.
const EXIT_INTERNAL: u8 = 4;

/// Says that fencer failed, not the input: one line on stderr, and with `--json` an object
/// on stdout in `usage_error`'s shape with `verdict: "error"` added, so that a script that
/// reads the JSON learns why there is no result.
fn internal_error(json: bool, msg: &str) -> ExitCode {
    internal_error_text(json, msg);
    ExitCode::from(EXIT_INTERNAL)
}

fn internal_error_text(json: bool, msg: &str) {
    if json {
        let err = serde_json::json!({
            "verdict": "error",
            "error": { "message": msg, "internal": true },
        });
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&err).expect("json")
        ));
    }
    // Not `eprintln!`, which panics when stderr is gone: a panic in the panic hook aborts.
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// A panic is a bug in fencer, not in the input: the first one (on any thread: the
/// loader's, `--jobs` workers, the explicit-state pool) ends the process at once with
/// exit code 4 and one line saying so, with where it happened. Exiting in the hook,
/// before unwinding, is what makes this hold everywhere: a worker's panic unwound
/// first could be caught and re-raised, turned into a closed channel (the loader's
/// reads as a timeout), or leave the process waiting on its siblings. Threads that
/// panic meanwhile wait in the `Once` until the exit. `RUST_BACKTRACE=1` adds Rust's
/// own report and backtrace.
fn report_internal_errors() {
    let rust_report = std::panic::take_hook();
    let once = std::sync::Once::new();
    std::panic::set_hook(Box::new(move |info| {
        once.call_once(|| {
            let what = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            // `assert_eq!` and friends spread their message over lines.
            let what = what.split_whitespace().collect::<Vec<_>>().join(" ");
            let at = info
                .location()
                .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            let json = std::env::args_os().any(|a| a == "--json");
            internal_error_text(
                json,
                &format!(
                    "fencer: internal error{at}: {what} (a bug in fencer, not a verdict on \
                     the input; please report it with the command line and the input file, \
                     RUST_BACKTRACE=1 shows a backtrace)"
                ),
            );
            if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
                rust_report(info);
            }
            std::process::exit(EXIT_INTERNAL.into());
        });
    }));
}

/// Test only (`tests/cli.rs`): `FENCER_TEST_PANIC=main|thread|workers` panics on purpose,
/// on the main thread, on a thread of its own that `main` waits for, or on one of several
/// scoped workers as `--jobs` runs them, so that every kind of thread is held to exit
/// code 4. No input is known to make fencer panic (one that did would be a bug to fix,
/// and no longer a test once fixed).
fn test_panic() {
    let Some(place) = std::env::var_os("FENCER_TEST_PANIC") else {
        return;
    };
    match place.to_str() {
        Some("thread") => {
            let _ = std::thread::spawn(|| panic!("FENCER_TEST_PANIC on a thread")).join();
        }
        Some("workers") => std::thread::scope(|s| {
            for k in 0..3 {
                s.spawn(move || {
                    if k == 1 {
                        panic!("FENCER_TEST_PANIC on worker {k}");
                    }
                    std::thread::sleep(Duration::from_millis(200));
                });
            }
        }),
        _ => panic!("FENCER_TEST_PANIC on the main thread"),
    }
}

fn main() -> ExitCode {
    pad_heaps();
    report_internal_errors();
    test_panic();
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|m| Ok((Cli::from_arg_matches(&m)?, m)));
    let cli = match parsed {
        Ok((mut c, m)) => {
            if let Some((_, sub)) = m.subcommand() {
                let given = applies::Given::from_matches(sub);
                match &mut c.command {
                    Command::Check(cmd) => cmd.args.given = given,
                    Command::Robust(a) => a.given = given,
                    Command::Repair(a) => a.given = given,
                    _ => {}
                }
            }
            c
        }
        Err(e) => {
            if !e.use_stderr() {
                let _ = e.print();
                return ExitCode::from(0);
            }
            // A script that asked for JSON gets JSON, even when its arguments are wrong.
            if std::env::args_os().any(|a| a == "--json") {
                let msg = e.render().to_string();
                let first = msg
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ");
                return usage_error(true, first, None);
            }
            let _ = e.print();
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match cli.command {
        Command::Check(c) => check(c.args, &c.views, c.shard.as_deref()),
        Command::Litmus(args) => litmus(args),
        Command::Merge(args) => merge::merge(args),
        Command::Robust(args) => robust::robust(args),
        Command::Replay(args) => views::replay(args),
        Command::Repair(args) => repair::repair(args),
        Command::Transform(args) => dve_relaxed::transform(args),
        Command::InternalReadLlvm { file } => read_llvm_alone(&file),
        Command::Bench(args) => bench::bench(bench::BenchOptions {
            paths: args.paths,
            models: args
                .models
                .iter()
                .map(|m| match m {
                    ModelArg::Sc => "sc",
                    ModelArg::Tso => "tso",
                    ModelArg::Pso => "pso",
                    ModelArg::Pso1 => "pso1",
                })
                .collect(),
            algo: match args.algo {
                AlgoArg::Optimal => "optimal",
                AlgoArg::Source => "source",
            },
            timeout: args.timeout,
            json: args.json,
            robust: args.robust,
            jobs: args.jobs,
            scaling: args.scaling.map(|r| r as usize),
            no_spin_assume: args.no_spin_assume,
        }),
    }
}

fn usage_error(json: bool, msg: &str, diag: Option<&fencer_text::Diagnostic>) -> ExitCode {
    if json {
        let err = match diag {
            Some(d) => serde_json::json!({
                "error": {
                    "message": d.message,
                    "file": d.file,
                    "line": d.line,
                    "column": d.col,
                    "help": d.help,
                }
            }),
            None => serde_json::json!({ "error": { "message": msg } }),
        };
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&err).expect("json")
        ));
    } else {
        eprint!("{msg}");
        if !msg.ends_with('\n') {
            eprintln!();
        }
    }
    ExitCode::from(EXIT_USAGE)
}

/// `--timeout SECS` as a duration; a usage error unless positive and finite. A timeout too
/// long for a `Duration` (centuries) is no limit at all.
fn timeout_arg(t: Option<f64>) -> Result<Option<Duration>, &'static str> {
    match t {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            Err("error: --timeout expects a positive number of seconds")
        }
        Some(t) => Ok(Duration::try_from_secs_f64(t).ok()),
        None => Ok(None),
    }
}

/// The front-ends `check` reads, by file extension.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Input {
    Text,
    Litmus,
    C,
}

const EXTENSIONS: &str = "`.fen` (fencer's text format), `.litmus` (herd7 X86 litmus tests), \
    `.c`/`.i` (C with pthreads), `.ll`/`.bc` (LLVM 14 IR), `.dve` (DiVinE models, with `check`), \
    `.cub` (Cubicle models, with `check`)";

fn input_kind(path: &std::path::Path) -> Option<Input> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("fen") => Some(Input::Text),
        Some("litmus") => Some(Input::Litmus),
        Some("c" | "i" | "ll" | "bc") => Some(Input::C),
        _ => None,
    }
}

fn load_litmus(args: &CheckArgs) -> Result<fencer_ir::Program, ExitCode> {
    let path = args.file.display().to_string();
    let src = std::fs::read_to_string(&args.file).map_err(|e| {
        usage_error(
            args.json,
            &format!("{path}: error: cannot read the file: {e}"),
            None,
        )
    })?;
    fencer_litmus::parse_litmus(&path, &src)
        .map(|l| l.program)
        .map_err(|d| usage_error(args.json, &d.render(&src), Some(&d)))
}

fn load_text(args: &CheckArgs) -> Result<fencer_ir::Program, ExitCode> {
    let path = args.file.display().to_string();
    let src = match std::fs::read(&args.file) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => {
                return Err(usage_error(
                    args.json,
                    &format!(
                        "{path}: error: the file is not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                    None,
                ))
            }
        },
        Err(e) => {
            return Err(usage_error(
                args.json,
                &format!("{path}: error: cannot read the file: {e}"),
                None,
            ))
        }
    };
    fencer_text::parse_program(&path, &src)
        .map_err(|d| usage_error(args.json, &d.render(&src), Some(&d)))
}

/// clang's options from `-D`, `-I`, `--std`, the flags after `--` and `--clang`.
#[cfg(feature = "c")]
fn c_options(args: &CheckArgs) -> fencer_c::CompileOptions {
    let mut flags: Vec<String> = args.define.iter().map(|d| format!("-D{d}")).collect();
    flags.extend(args.include.iter().map(|i| format!("-I{}", i.display())));
    if let Some(std) = &args.std {
        flags.push(format!("-std={std}"));
    }
    flags.extend(args.cflags.iter().cloned());
    fencer_c::CompileOptions {
        clang: args.clang.clone(),
        flags,
        no_spurious_wakeups: args.no_spurious_wakeups,
    }
}

#[cfg(feature = "c")]
fn load_c(args: &CheckArgs, model: ModelKind) -> Result<fencer_ir::Program, ExitCode> {
    let opts = c_options(args);
    if let Some(msg) = llvm_crashes_on(&args.file) {
        return Err(usage_error(args.json, &msg, None));
    }
    fencer_c::load(&args.file, &opts, model).map_err(|e| c_load_error(args, &e))
}

/// A C program that does not load: the message with the offending source line and a
/// caret when the position is known, and the position in the JSON.
#[cfg(feature = "c")]
fn c_load_error(args: &CheckArgs, e: &fencer_c::Error) -> ExitCode {
    {
        let mut msg = e.to_string();
        if e.line > 0 {
            if let Some(text) = std::fs::read_to_string(&e.file)
                .ok()
                .and_then(|s| s.lines().nth(e.line as usize - 1).map(str::to_string))
            {
                let caret = " ".repeat(e.col.saturating_sub(1) as usize);
                msg = format!("{}\n  | {text}\n  | {caret}^", msg);
            }
        }
        let d = fencer_text::Diagnostic {
            file: e.file.clone(),
            line: e.line,
            col: e.col,
            span: Default::default(),
            message: e.message.clone(),
            label: String::new(),
            help: e.help.clone(),
        };
        usage_error(args.json, &msg, Some(&d))
    }
}

/// Reads an LLVM IR file in this process, for [`llvm_crashes_on`]'s child.
fn read_llvm_alone(file: &std::path::Path) -> ExitCode {
    #[cfg(feature = "c")]
    {
        let opts = fencer_c::CompileOptions::default();
        let _ = fencer_c::load(file, &opts, ModelKind::Sc);
    }
    #[cfg(not(feature = "c"))]
    let _ = file;
    ExitCode::SUCCESS
}

/// For a user's `.ll` or `.bc` file: whether LLVM kills the process that reads it (a
/// malformed datalayout or a module that fails verification abort; some malformed debug
/// information crashes). The file is read once in a child process; its death becomes an
/// error message. Clang's own output is trusted and not checked.
#[cfg(feature = "c")]
fn llvm_crashes_on(file: &std::path::Path) -> Option<String> {
    let ext = file.extension().and_then(|e| e.to_str());
    if !matches!(ext, Some("ll" | "bc")) {
        return None;
    }
    // LLVM's verifier can also loop forever (a lexical block that is its own scope): the
    // child gets a minute, far more than reading any real module takes.
    const LIMIT: Duration = Duration::from_secs(60);
    let exe = std::env::current_exe().ok()?;
    let mut child = std::process::Command::new(exe)
        .arg("internal-read-llvm")
        .arg(file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let mut stderr_pipe = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr_pipe, &mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if started.elapsed() < LIMIT => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Err(_) => return None,
        }
    };
    let stderr = reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Some(format!(
            "{}: error: LLVM did not finish reading this IR within {} s (malformed debug \
             information can make its verifier loop)\n  help: fencer reads LLVM 14 IR as \
             clang-14 writes it; check the file with `llvm-as-14 {} -o /dev/null`",
            file.display(),
            LIMIT.as_secs(),
            file.display()
        ));
    };
    if status.success() {
        return None;
    }
    let out = std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: stderr.into_bytes(),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            !l.trim().is_empty() && !l.contains("PLEASE submit") && !l.starts_with("Stack dump")
        })
        .take(4)
        .collect();
    let how = match out.status.code() {
        Some(c) => format!("exit code {c}"),
        None => "a crash".into(),
    };
    Some(format!(
        "{}: error: LLVM cannot read this IR (it stopped with {how}){}\n  help: fencer reads \
         LLVM 14 IR as clang-14 writes it; check the file with `llvm-as-14 {} -o /dev/null`",
        file.display(),
        if why.is_empty() {
            String::new()
        } else {
            format!(":\n  {}", why.join("\n  "))
        },
        file.display()
    ))
}

#[cfg(not(feature = "c"))]
fn load_c(args: &CheckArgs, _model: ModelKind) -> Result<fencer_ir::Program, ExitCode> {
    Err(usage_error(
        args.json,
        &format!(
            "{}: error: this fencer was built without C support (cargo feature `c`)",
            args.file.display()
        ),
        None,
    ))
}

fn check(args: CheckArgs, views: &views::ViewArgs, shard: Option<&str>) -> ExitCode {
    let started = Instant::now();
    let timeout = match timeout_arg(args.timeout) {
        Ok(t) => t,
        Err(msg) => return usage_error(args.json, msg, None),
    };
    let shard = match shard.map(merge::parse_shard).transpose() {
        Ok(s) => s,
        Err(msg) => return usage_error(args.json, &msg, None),
    };
    if let Some(msg) = applies::refusal(&args).or_else(|| views::refuse_bad_paths(views)) {
        return usage_error(args.json, &msg, None);
    }
    if args.jobs == Some(0) {
        return usage_error(args.json, "error: --jobs expects at least 1 worker", None);
    }
    if args.jobs.is_some_and(|n| n > MAX_JOBS) {
        return usage_error(
            args.json,
            &format!("error: --jobs expects at most {MAX_JOBS} workers"),
            None,
        );
    }
    if args.file.extension().is_some_and(|e| e == "cub") {
        return cub::check(&args, timeout);
    }
    if matches!(args.engine, EngineArg::Abpress) {
        return symbolic::check_with(&args, timeout, args.por.into());
    }
    if args.file.extension().is_some_and(|e| e == "dve") {
        return dve::check(&args, timeout);
    }
    let model = match program_model(args.model, args.json) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let args = Arc::new(args);
    let mut prog = match load_program(&args, model, timeout) {
        Ok(p) => p,
        Err(Some(code)) => return code,
        Err(None) => return stopped_while_loading(&args, model, started),
    };
    let timeout = timeout.map(|t| t.saturating_sub(started.elapsed()));
    let spin_loops = if args.no_spin_assume {
        0
    } else {
        fencer_ir::spin::spin_assume(&mut prog)
    };
    let (mut report, split_info) = explore_program(&args, &prog, model, timeout, shard);
    if let Some(code) = unsupported(args.json, &report) {
        return code;
    }
    // With spurious wake-ups a wait never blocks: the waits no signal ends are looked for
    // in the program's variant without them (`Program::wait_variant`).
    let mut shown = (&prog, args.clone());
    let variant = prog
        .wait_variant
        .as_deref()
        .filter(|_| report.verdict != Verdict::Violation && prog.hang_is_violation);
    let mut variant_prog;
    if let Some(v) = variant {
        variant_prog = v.clone();
        if !args.no_spin_assume {
            fencer_ir::spin::spin_assume(&mut variant_prog);
        }
        let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
        let (w, _) = explore_program(&args, &variant_prog, model, left, shard);
        if let Some(code) = unsupported(args.json, &w) {
            return code;
        }
        if report.add_wait_variant(w) {
            let mut a = (*args).clone();
            a.no_spurious_wakeups = true;
            shown = (&variant_prog, Arc::new(a));
        }
    }
    report.stats.spin_loops = spin_loops as u64;
    report.stats.peak_rss_kib = peak_rss_kib();
    if args.json {
        match &split_info {
            Some(info) => out(&format!("{}\n", merge::with_split(&report, info))),
            None => out(&format!("{}\n", report.to_json())),
        }
    } else {
        let mut text = report.to_text(args.verbose);
        if let Some(h) = split_info
            .as_ref()
            .filter(|_| report.verdict == Verdict::Safe)
            .and_then(merge::shard_headline)
        {
            text = text.replacen(fencer_report::SAFE_HEADLINE, &h, 1);
        }
        out(&text);
        // How the tree was split is for whoever tunes --jobs (or runs a shard), not for
        // every reader of a verdict; the JSON always has it.
        if let Some(info) = split_info
            .as_ref()
            .filter(|_| args.verbose || shard.is_some())
        {
            out(&merge::split_text(info));
        }
    }
    if let Err(code) = views::after_check(&shown.1, views, shown.0, model, &report) {
        return code;
    }
    ExitCode::from(report.verdict.exit_code() as u8)
}

/// One exploration of `prog` by the engine `args` asks for (and the split's summary for
/// the JSON, when it was split).
fn explore_program(
    args: &Arc<CheckArgs>,
    prog: &fencer_ir::Program,
    model: ModelKind,
    timeout: Option<Duration>,
    shard: Option<fencer_dpor::Shard>,
) -> (Report, Option<serde_json::Value>) {
    match args.engine {
        EngineArg::Reference => {
            let opts = fencer_reference::Options {
                timeout,
                max_executions: args.max_executions,
                max_depth: args.max_depth,
                unroll: args.unroll,
                ..Default::default()
            };
            (fencer_reference::explore(prog, model, &opts).report, None)
        }
        EngineArg::Dpor | EngineArg::Abpress => {
            let progress = Progress::start();
            let opts = fencer_dpor::Options {
                algo: match args.algo {
                    AlgoArg::Optimal => fencer_dpor::Algo::Optimal,
                    AlgoArg::Source => fencer_dpor::Algo::Source,
                },
                timeout,
                max_executions: args.max_executions,
                max_depth: args.max_depth,
                unroll: args.unroll,
                stop_on_violation: !args.all,
                progress: Some(progress.count.clone()),
            };
            let jobs = args.jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            let r = if jobs == 1 && shard.is_none() {
                (fencer_dpor::explore(prog, model, &opts), None)
            } else {
                let split = fencer_dpor::Split {
                    shard,
                    ..fencer_dpor::Split::jobs(jobs)
                };
                let s = fencer_dpor::explore_split(prog, model, &opts, &split, false);
                let info = merge::split_json(args, prog, jobs, shard, &s);
                (s.report, Some(info))
            };
            progress.finish();
            r
        }
    }
}

/// Loads the program `args` names with the front-end its extension picks, for `model`.
/// Loading (clang, parsing, lowering) counts against `timeout` too: it runs on a thread of
/// its own so that a slow compile still stops on time. `Err(None)`: the time ran out.
fn load_program(
    args: &Arc<CheckArgs>,
    model: ModelKind,
    timeout: Option<Duration>,
) -> Result<fencer_ir::Program, Option<ExitCode>> {
    let Some(kind) = input_kind(&args.file) else {
        return Err(Some(usage_error(
            args.json,
            &format!(
                "{}: error: fencer does not know this kind of file\n  help: fencer reads {EXTENSIONS}",
                args.file.display()
            ),
            None,
        )));
    };
    let loaded = {
        let args = args.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let r = match kind {
                Input::C => load_c(&args, model),
                Input::Litmus => load_litmus(&args),
                Input::Text => load_text(&args),
            };
            let _ = tx.send(r);
        });
        match timeout {
            Some(t) => rx.recv_timeout(t).ok(),
            None => rx.recv().ok(),
        }
    };
    match loaded {
        Some(Ok(mut p)) => {
            apply_conventions(args, &mut p);
            Ok(p)
        }
        Some(Err(code)) => Err(Some(code)),
        None => Err(None),
    }
}

/// The C front-end refuses lazily: a program is judged unloadable only when exploration
/// reaches what it cannot model. That is bad input (exit code 2), not a violation.
fn unsupported(json: bool, report: &Report) -> Option<ExitCode> {
    let c = report
        .counterexample
        .as_ref()
        .filter(|c| c.kind == "unsupported")?;
    let full = c
        .message
        .rsplit_once(" (thread ")
        .map_or(&*c.message, |(m, _)| m);
    let (message, help) = match full.split_once("\n  help: ") {
        Some((m, h)) => (m.to_string(), Some(h.to_string())),
        None => (full.to_string(), None),
    };
    let (file, line, col) = (
        c.file.clone().unwrap_or_default(),
        c.line.unwrap_or(0),
        c.column.unwrap_or(0),
    );
    let d = fencer_text::Diagnostic {
        file: file.clone(),
        line,
        col,
        span: Default::default(),
        message,
        label: String::new(),
        help,
    };
    let text = match line {
        0 => format!("{file}: error: {full}"),
        _ => format!("{file}:{line}:{col}: error: {full}"),
    };
    Some(usage_error(json, &text, Some(&d)))
}

/// `--timeout` ran out before the program was even loaded: nothing was explored.
fn stopped_while_loading(args: &CheckArgs, model: ModelKind, started: Instant) -> ExitCode {
    let ms = started.elapsed().as_millis() as u64;
    let report = Report {
        verdict: fencer_report::Verdict::Incomplete,
        model: model.name().to_string(),
        engine: match args.engine {
            EngineArg::Dpor => "dpor".into(),
            EngineArg::Reference => "reference".into(),
            EngineArg::Abpress => "abpress".into(),
        },
        algo: None,
        program: args
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        executions: 0,
        blocked: 0,
        elapsed_ms: ms,
        stats: fencer_report::Stats {
            elapsed_ms: ms,
            peak_rss_kib: peak_rss_kib(),
            ..Default::default()
        },
        condition: None,
        final_vars: Vec::new(),
        final_states: None,
        final_schedules: Vec::new(),
        final_state_executions: None,
        counterexample: None,
        stopped_by: Some(fencer_report::Limit::Timeout),
        assumptions: Vec::new(),
        hangs: None,
        notes: Vec::new(),
    };
    if args.json {
        out(&format!("{}\n", report.to_json()));
    } else {
        out(&report.to_text(args.verbose));
        eprintln!(
            "{}: the --timeout ran out while loading the program",
            args.file.display()
        );
    }
    ExitCode::from(report.verdict.exit_code() as u8)
}

fn litmus(args: LitmusArgs) -> ExitCode {
    let model = match program_model(args.model, args.json) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let timeout = match timeout_arg(args.timeout) {
        Ok(t) => t,
        Err(msg) => return usage_error(args.json, msg, None),
    };
    if matches!(args.engine, EngineArg::Abpress) {
        eprintln!(
            "error: --engine abpress checks C programs (fencer check FILE.c), not litmus tests"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if args.algo.is_some() && !matches!(args.engine, EngineArg::Dpor) {
        return usage_error(
            args.json,
            "error: --algo does not apply to this run: it applies to --engine dpor; this run uses --engine reference",
            None,
        );
    }
    let started = Instant::now();
    let mut answers = Vec::new();
    let mut code = 0u8;
    for file in &args.files {
        let path = file.display().to_string();
        let src = match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{path}: error: cannot read the file: {e}");
                code = EXIT_USAGE;
                continue;
            }
        };
        let lit = match fencer_litmus::parse_litmus(&path, &src) {
            Ok(l) => l,
            Err(d) => {
                eprint!("{}", d.render(&src));
                code = EXIT_USAGE;
                continue;
            }
        };
        let report = match args.engine {
            EngineArg::Reference => {
                let opts = fencer_reference::Options {
                    timeout,
                    ..Default::default()
                };
                fencer_reference::explore(&lit.program, model, &opts).report
            }
            EngineArg::Dpor | EngineArg::Abpress => {
                let opts = fencer_dpor::Options {
                    algo: match args.algo.unwrap_or(AlgoArg::Optimal) {
                        AlgoArg::Optimal => fencer_dpor::Algo::Optimal,
                        AlgoArg::Source => fencer_dpor::Algo::Source,
                    },
                    timeout,
                    stop_on_violation: false,
                    ..Default::default()
                };
                fencer_dpor::explore(&lit.program, model, &opts)
            }
        };
        let answer = lit.answer(&report);
        if answer.incomplete && code == 0 {
            code = 3;
        }
        if !args.json {
            out(&answer.to_herd());
            out("\n");
        }
        answers.push(answer);
        if let Err(c) = views::after_litmus(
            &args.views,
            file,
            args.files.len(),
            &lit.program,
            model,
            &report,
        ) {
            return c;
        }
    }
    if args.json {
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&serde_json::json!({ "tests": answers })).expect("json")
        ));
    } else if args.files.len() > 1 {
        out(&format!(
            "{:<32} {:<5} {:<4} {:<10} {:>6} {:>10} {:>8}\n",
            "test", "model", "", "result", "states", "executions", "ms"
        ));
        for a in &answers {
            out(&format!(
                "{:<32} {:<5} {:<4} {:<10} {:>6} {:>10} {:>8}\n",
                a.test,
                a.model,
                if a.ok { "Ok" } else { "No" },
                a.observation,
                a.states.len(),
                a.executions,
                a.elapsed_ms
            ));
        }
        out(&format!(
            "{} tests, {} answered, in {:.3} s\n",
            args.files.len(),
            answers.len(),
            started.elapsed().as_secs_f64()
        ));
    }
    ExitCode::from(code)
}

/// A progress line on stderr for long runs: shown only when stderr is a terminal and the
/// run has lasted a second, so that short runs and pipelines see nothing.
struct Progress {
    count: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start() -> Progress {
        let count = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let (count, done) = (count.clone(), done.clone());
            std::thread::spawn(move || {
                let start = Instant::now();
                let tick = Duration::from_millis(100);
                while start.elapsed() < Duration::from_secs(1) {
                    if done.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(tick);
                }
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                        .expect("a valid template"),
                );
                while !done.load(Ordering::Relaxed) {
                    let n = count.load(Ordering::Relaxed);
                    let rate = n as f64 / start.elapsed().as_secs_f64();
                    bar.set_message(format!("{n} executions, {rate:.0}/s"));
                    bar.tick();
                    std::thread::sleep(tick);
                }
                bar.finish_and_clear();
            })
        });
        Progress {
            count,
            done,
            thread,
        }
    }

    fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The process's peak resident memory (Linux's `VmHWM`), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Writes to stdout, ignoring a closed pipe (`fencer ... | head` is not an error).
fn out(s: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes()).and_then(|_| o.flush());
}
