//! `fencer`: checks concurrent programs under SC, x86-TSO and PSO.

mod bench;
mod bench_cat;
mod merge;
mod ranks;
mod repair;
mod robust;
mod views;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use fencer::applies;
use fencer::{program_model, Algo, Engine, Error, Model, Options};
use fencer_memory::ModelKind;
use fencer_report::Report;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit code for bad input or usage.
const EXIT_USAGE: u8 = 2;

#[cfg(feature = "c")]
macro_rules! c_front_end {
    () => {
        "yes (clang-14 compiles .c and .i files; LLVM 14 IR is read by fencer-llvm, a child \
         process installed beside fencer)"
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
    /// Answer litmus tests as herd7 does: every reachable final state, Ok/No, witnesses
    /// and the observation. X86 under the built-in models; X86 and C11 under a herd7
    /// `.cat` model with --cat.
    #[command(
        after_help = "The output follows herd7's layout line by line (without its Hash line), so \
the two can be diffed. Every execution is explored (one per Shasha-Snir trace); with --cat, \
every candidate execution herd7 would give the model (`Loop`, a warning and exit code 3 when a \
C loop ran past herd7's unrolling bound). Several files end with a summary table.\n\n\
Exit codes: 0 every test answered, 2 bad input or usage, 3 a limit stopped some test (its \
answer is partial).\n\n\
Examples:\n  fencer litmus examples/MP.litmus --model pso\n  fencer litmus T.litmus --cat rc11.cat --libdir HERD_LIBDIR   # herd7: -set-libdir DIR -model rc11.cat"
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
    Transform(TransformArgs),
    /// Print a shell completion script for fencer (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Example (bash):\n  fencer completions bash > ~/.local/share/bash-completion/completions/fencer"
    )]
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print fencer's manual page (roff), one page with every command.
    #[command(after_help = "Example:\n  fencer man > fencer.1 && man ./fencer.1")]
    Man,
}

#[derive(clap::Args)]
struct LitmusArgs {
    /// Litmus files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Memory model (X86 tests are x86-TSO by default).
    #[arg(long, short, value_enum, ignore_case = true, default_value = "tso")]
    model: Model,
    /// Exploration engine.
    #[arg(long, short, value_enum, default_value = "dpor")]
    engine: Engine,
    /// DPOR algorithm (with --engine dpor) [default: optimal].
    #[arg(long, value_enum)]
    algo: Option<Algo>,
    /// Print the answers as JSON instead of herd7's text.
    #[arg(long)]
    json: bool,
    /// Stop each test after this many seconds (its answer is then partial; exit code 3).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Judge candidate executions with this herd7 `.cat` model (a path, or a name in
    /// --libdir) instead of a built-in model; needed for C (C11) litmus tests. herd7's
    /// spelling `-model FILE` works too.
    #[arg(long, value_name = "FILE")]
    cat: Option<PathBuf>,
    /// herd7's model library (`-set-libdir`): where models, the files they include and
    /// stdlib.cat are found [default: $FENCER_HERD_LIBDIR, else the model's folder].
    #[arg(long, value_name = "DIR", requires = "cat")]
    libdir: Option<PathBuf>,
    /// A variant the model tests with `if "NAME"` (herd7's `-variant`); repeatable.
    #[arg(long, value_name = "NAME", requires = "cat")]
    variant: Vec<String>,
    #[command(flatten)]
    views: views::ViewArgs,
    #[arg(skip)]
    given: applies::Given,
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
    models: Vec<Model>,
    /// DPOR algorithm.
    #[arg(long, value_enum, default_value = "optimal")]
    algo: Algo,
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
    /// Measure litmus tests under this herd7 `.cat` model instead (`fencer litmus
    /// --cat`): per test, one process per run, the engine's time and the wall time; PATHS
    /// are litmus files or directories searched for them.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["robust", "scaling", "no_spin_assume", "models", "algo", "jobs"])]
    cat: Option<PathBuf>,
    /// With --cat: herd7's model library (`-set-libdir`) [default: $FENCER_HERD_LIBDIR].
    #[arg(long, value_name = "DIR", requires = "cat")]
    libdir: Option<PathBuf>,
    /// With --cat: also run this herd7 on every test, alternating with fencer, and check
    /// that both answer alike (exit code 1 if not).
    #[arg(long, value_name = "PATH", requires = "cat")]
    herd7: Option<PathBuf>,
    /// With --cat: runs per test (medians are reported).
    #[arg(long, value_name = "N", default_value_t = 3, requires = "cat")]
    rounds: usize,
}

/// `check`'s arguments, and the views of its counterexample.
#[derive(clap::Args)]
struct CheckCmd {
    #[command(flatten)]
    args: Options,
    #[command(flatten)]
    views: views::ViewArgs,
    /// Print only the verdict's line (the exit code tells it too); errors still print.
    #[arg(long, short, conflicts_with = "json")]
    quiet: bool,
    /// Nidhugg's spellings of `--model sc|tso|pso`, for scripts written for it.
    #[arg(long, hide = true, conflicts_with_all = ["model", "tso", "pso"])]
    sc: bool,
    #[arg(long, hide = true, conflicts_with_all = ["model", "pso"])]
    tso: bool,
    #[arg(long, hide = true, conflicts_with = "model")]
    pso: bool,
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
    ranks::silence_other_ranks();
    let parsed = Cli::command()
        .try_get_matches_from(herd_spellings(std::env::args_os().collect()))
        .and_then(|m| Ok((Cli::from_arg_matches(&m)?, m)));
    let cli = match parsed {
        Ok((mut c, m)) => {
            if let Some((_, sub)) = m.subcommand() {
                let given = applies::Given::from_matches(sub);
                match &mut c.command {
                    Command::Check(cmd) => cmd.args.given = given,
                    Command::Robust(a) => a.given = given,
                    Command::Repair(a) => a.given = given,
                    Command::Litmus(a) => a.given = given,
                    _ => {}
                }
            }
            c
        }
        Err(e) => {
            if !e.use_stderr() {
                if ranks::speaks() {
                    let _ = e.print();
                }
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
            if ranks::speaks() {
                let _ = e.print();
            }
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if ranks::launched() && !matches!(cli.command, Command::Check(_)) {
        return usage_error(
            false,
            "error: under mpirun, `fencer check` searches a DVE model across the ranks; other commands run without it",
            None,
        );
    }
    match cli.command {
        Command::Check(mut c) => {
            for (on, model) in [(c.sc, Model::Sc), (c.tso, Model::Tso), (c.pso, Model::Pso)] {
                if on {
                    c.args.model = model;
                    c.args.given.insert("model");
                }
            }
            match ranks::join() {
                Ok(r) => c.args.ranks = r,
                Err(e) => return usage_error(c.args.json, &e, None),
            }
            let code = check(c.args, &c.views, c.quiet);
            if ranks::leave() {
                code
            } else {
                ExitCode::SUCCESS
            }
        }
        Command::Litmus(args) => litmus(args),
        Command::Merge(args) => merge::merge(args),
        Command::Robust(args) => robust::robust(args),
        Command::Replay(args) => views::replay(args),
        Command::Repair(args) => repair::repair(args),
        Command::Transform(args) => transform(args),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "fencer", &mut out);
            self::out(&String::from_utf8_lossy(&out));
            ExitCode::SUCCESS
        }
        Command::Man => man_page(),
        Command::Bench(args) if args.cat.is_some() => bench_cat::bench(bench_cat::CatBench {
            paths: args.paths,
            cat: args.cat.expect("--cat"),
            libdir: args.libdir,
            herd7: args.herd7,
            rounds: args.rounds,
            json: args.json,
        }),
        Command::Bench(args) => bench::bench(bench::BenchOptions {
            paths: args.paths,
            models: args
                .models
                .iter()
                .map(|m| match m {
                    Model::Sc => "sc",
                    Model::Tso => "tso",
                    Model::Pso => "pso",
                    Model::Pso1 => "pso1",
                })
                .collect(),
            algo: match args.algo {
                Algo::Optimal => "optimal",
                Algo::Source => "source",
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
    if !ranks::speaks() {
        return ExitCode::from(EXIT_USAGE);
    }
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

/// A check that could not run, printed as `usage_error` or `internal_error` print.
fn failed(json: bool, e: &Error) -> ExitCode {
    if e.internal {
        internal_error(json, &e.message)
    } else {
        usage_error(json, &e.message, e.diagnostic.as_deref())
    }
}

fn check(mut args: Options, views: &views::ViewArgs, quiet: bool) -> ExitCode {
    let json = args.json;
    if let Err(e) = fencer::validate(&args) {
        return failed(json, &e);
    }
    if let Some(msg) = views::refuse_bad_paths(views) {
        return usage_error(json, &msg, None);
    }
    args.replays = views.flag();
    let progress = Progress::start();
    args.progress = Some(progress.count.clone());
    let outcome = fencer::check(args);
    progress.finish();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return failed(json, &e),
    };
    if quiet {
        // The verdict, and whatever qualifies it: what it takes for granted and the
        // bounds it holds up to are part of the answer, never noise.
        let mut lines = outcome.output.lines();
        let mut kept: Vec<&str> = lines.next().into_iter().collect();
        kept.extend(lines.filter(|l| {
            let t = l.trim_start();
            // A model with several properties has a headline each.
            let headline = !l.starts_with(' ')
                && [": SAFE", ": VIOLATION", ": INCOMPLETE"]
                    .iter()
                    .any(|v| l.contains(v));
            headline
                || t.starts_with("assuming:")
                || t.starts_with("stopped:")
                || t.contains("holds up to")
        }));
        out(&(kept.join("\n") + "\n"));
    } else {
        out(&outcome.output);
    }
    for m in outcome.messages.iter().filter(|_| ranks::speaks()) {
        eprintln!("{m}");
    }
    if let (Some(shown), Some(report)) = (&outcome.shown, &outcome.report) {
        if let Err(code) =
            views::after_check(&shown.options, views, &shown.program, shown.model, report)
        {
            return code;
        }
    }
    ExitCode::from(outcome.exit_code())
}

/// `fencer transform`'s arguments.
#[derive(clap::Args)]
struct TransformArgs {
    /// The DVE model.
    file: PathBuf,
    /// The memory model to build in.
    #[arg(long, short, value_enum, default_value = "pso1")]
    model: Model,
    /// Atomic writes and barriers (see `fencer check --help`, --atomic).
    #[arg(long, value_name = "FILE")]
    atomic: Option<PathBuf>,
    /// Where to write the transformed model (default: standard output).
    #[arg(long, short, value_name = "OUT.dve")]
    output: Option<PathBuf>,
    /// Set an `input` constant.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    define: Vec<String>,
    /// tso/pso: the most writes one process's buffer holds.
    #[arg(long, value_name = "K", default_value_t = 2)]
    buffer_bound: u32,
}

fn transform(a: TransformArgs) -> ExitCode {
    let text = match fencer::dve_relaxed::transform(
        &a.file,
        a.model,
        a.atomic.as_deref(),
        &a.define,
        a.buffer_bound,
    ) {
        Ok(t) => t,
        Err(e) => return failed(false, &e),
    };
    match a.output.as_ref().filter(|o| o.as_os_str() != "-") {
        None => {
            out(&text);
            ExitCode::SUCCESS
        }
        Some(o) => match std::fs::write(o, text) {
            Ok(()) => {
                eprintln!("wrote {}", o.display());
                ExitCode::SUCCESS
            }
            Err(e) => usage_error(
                false,
                &format!("{}: error: cannot write: {e}", o.display()),
                None,
            ),
        },
    }
}

/// `fencer man`: the top-level page, then each visible command's as a section of it, so
/// that one file documents everything.
fn man_page() -> ExitCode {
    let cmd = Cli::command();
    let mut page = Vec::new();
    let render = |c: clap::Command, buf: &mut Vec<u8>| clap_mangen::Man::new(c).render(buf);
    if render(cmd.clone(), &mut page).is_err() {
        return internal_error(
            false,
            "fencer: internal error: the manual page did not render",
        );
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("fencer {}", sub.get_name());
        page.extend_from_slice(format!(".SH \"{}\"\n", name.to_uppercase()).as_bytes());
        let man = clap_mangen::Man::new(sub.clone().name(name));
        let _ = man.render_synopsis_section(&mut page);
        let _ = man.render_description_section(&mut page);
        let _ = man.render_options_section(&mut page);
        let _ = man.render_extra_section(&mut page);
    }
    out(&String::from_utf8_lossy(&page));
    ExitCode::SUCCESS
}

fn litmus(args: LitmusArgs) -> ExitCode {
    if args.cat.is_some() {
        return litmus_cat(args);
    }
    let model = match program_model(args.model) {
        Ok(m) => m,
        Err(e) => return failed(args.json, &e),
    };
    let timeout = match fencer::timeout_arg(args.timeout) {
        Ok(t) => t,
        Err(e) => return failed(args.json, &e),
    };
    if matches!(args.engine, Engine::Abpress) {
        eprintln!(
            "error: --engine abpress checks C programs (fencer check FILE.c), not litmus tests"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    if args.algo.is_some() && !matches!(args.engine, Engine::Dpor | Engine::Auto) {
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
        let Some(src) = read_litmus(file, &path) else {
            code = EXIT_USAGE;
            continue;
        };
        let arch = fencer::cat::arch(&src);
        if arch != "X86" && arch != "x86" && !arch.is_empty() {
            eprintln!(
                "{path}: error: fencer's built-in models answer X86 litmus tests; a `{arch}` test \
                 needs a herd7 model: --cat FILE.cat (e.g. `--cat rc11.cat --libdir \
                 HERD_LIBDIR` for C11)"
            );
            code = EXIT_USAGE;
            continue;
        }
        let lit = match fencer_litmus::parse_litmus(&path, &src) {
            Ok(l) => l,
            Err(d) => {
                eprint!("{}", d.render(&src));
                code = EXIT_USAGE;
                continue;
            }
        };
        let report = match args.engine {
            Engine::Reference => {
                let opts = fencer_reference::Options {
                    timeout,
                    ..Default::default()
                };
                fencer_reference::explore(&lit.program, model, &opts).report
            }
            Engine::Auto | Engine::Dpor | Engine::Abpress => {
                let opts = fencer_dpor::Options {
                    algo: match args.algo.unwrap_or(Algo::Optimal) {
                        Algo::Optimal => fencer_dpor::Algo::Optimal,
                        Algo::Source => fencer_dpor::Algo::Source,
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
    litmus_summary(&args, &answers, started);
    ExitCode::from(code)
}

/// herd7's single-dash options, for `litmus`: `-model F` is `--cat F`, `-set-libdir D`
/// is `--libdir D`, `-variant V` is `--variant V`, so that a herd7 command line works.
fn herd_spellings(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let sub = args
        .iter()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'));
    if !matches!(sub, Some(a) if a == "litmus") {
        return args;
    }
    args.into_iter()
        .map(|a| match a.to_str() {
            Some("-model") => "--cat".into(),
            Some("-set-libdir") => "--libdir".into(),
            Some("-variant") => "--variant".into(),
            _ => a,
        })
        .collect()
}

/// `litmus --cat`: every test through a herd7 model.
fn litmus_cat(args: LitmusArgs) -> ExitCode {
    for (id, opt) in [
        ("model", "--model"),
        ("engine", "--engine"),
        ("algo", "--algo"),
    ] {
        if args.given.has(id) {
            return usage_error(
                args.json,
                &format!(
                    "error: {opt} does not apply with --cat: the .cat model is the memory model, \
                     and every candidate execution is enumerated"
                ),
                None,
            );
        }
    }
    if args.views.any() {
        return usage_error(
            args.json,
            "error: --view, --html, --sarif and --save-trace do not apply with --cat yet",
            None,
        );
    }
    let timeout = match fencer::timeout_arg(args.timeout) {
        Ok(t) => t,
        Err(e) => return failed(args.json, &e),
    };
    let cat = args.cat.as_deref().expect("--cat");
    let m = match fencer::cat::load(cat, args.libdir.as_deref(), &args.variant) {
        Ok(m) => m,
        Err(e) => return failed(args.json, &e),
    };
    let started = Instant::now();
    let mut answers = Vec::new();
    let mut code = 0u8;
    for file in &args.files {
        let path = file.display().to_string();
        let Some(src) = read_litmus(file, &path) else {
            code = EXIT_USAGE;
            continue;
        };
        match fencer::cat::litmus(&path, &src, &m, timeout) {
            Ok(answer) => {
                if answer.loop_cut {
                    eprintln!(
                        "{path}: warning: a loop ran past herd7's unrolling bound (its body \
                         twice): the executions that go further are left out, so the answer \
                         (`Loop`) holds up to the bound"
                    );
                }
                if (answer.incomplete || answer.loop_cut) && code == 0 {
                    code = 3;
                }
                if !args.json {
                    out(&answer.to_herd());
                    out("\n");
                }
                answers.push(answer);
            }
            Err(e) => {
                eprintln!("{e}");
                // Bad input outranks a limit, as an answer cut short does.
                if e.exit_code() != 3 || code == 0 {
                    code = e.exit_code();
                }
            }
        }
    }
    litmus_summary(&args, &answers, started);
    ExitCode::from(code)
}

/// A litmus file's text, or `None` after saying why it cannot be read.
fn read_litmus(file: &Path, path: &str) -> Option<String> {
    match std::fs::read_to_string(file) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("{path}: error: cannot read the file: {e}");
            None
        }
    }
}

/// After several tests: the JSON document, or a summary table.
fn litmus_summary(args: &LitmusArgs, answers: &[fencer_litmus::Answer], started: Instant) {
    if args.json {
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(
                &serde_json::json!({ "schema": "fencer-litmus/1", "tests": answers })
            )
            .expect("json")
        ));
    } else if args.files.len() > 1 {
        out(&format!(
            "{:<32} {:<5} {:<4} {:<10} {:>6} {:>10} {:>8}\n",
            "test", "model", "", "result", "states", "executions", "ms"
        ));
        for a in answers {
            out(&format!(
                "{:<32} {:<5} {:<4} {:<10} {:>6} {:>10} {:>8}\n",
                a.test,
                a.model,
                if a.flags.iter().any(|f| f == fencer_litmus::UNDEF) {
                    "Undef"
                } else if a.ok {
                    "Ok"
                } else {
                    "No"
                },
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

/// Writes to stdout, ignoring a closed pipe (`fencer ... | head` is not an error).
fn out(s: &str) {
    use std::io::Write;
    if !ranks::speaks() {
        return;
    }
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes()).and_then(|_| o.flush());
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::{CommandFactory, FromArgMatches};
    use fencer::applies::{rule_ids, Cmd};

    #[test]
    fn every_option_of_every_command_has_a_rule() {
        let cli = Cli::command();
        for (name, cmd) in [
            ("check", Cmd::Check),
            ("robust", Cmd::Robust),
            ("repair", Cmd::Repair),
        ] {
            let sub = cli.find_subcommand(name).expect("a command");
            let ruled = rule_ids(cmd);
            let mut missing = Vec::new();
            for a in sub.get_arguments() {
                let id = a.get_id().as_str();
                if id != "help" && !ruled.contains(&id) {
                    missing.push(id.to_string());
                }
            }
            assert!(
                missing.is_empty(),
                "options of `{name}` without a rule in fencer's applies.rs (say where each applies): {missing:?}"
            );
            // And no rule for an option that is gone.
            for id in ruled {
                assert!(
                    sub.get_arguments().any(|a| a.get_id().as_str() == id),
                    "applies.rs has a rule for `{name} {id}`, which `{name}` does not have"
                );
            }
        }
    }

    /// The library's defaults are the command's: a program that calls `fencer::check`
    /// with `Options::file(..)` asks what `fencer check FILE` asks.
    #[test]
    fn the_library_defaults_are_the_command_line_defaults() {
        let m = Cli::command()
            .try_get_matches_from(["fencer", "check", "x.fen"])
            .expect("parses");
        let Cli {
            command: super::Command::Check(c),
        } = Cli::from_arg_matches(&m).expect("a check")
        else {
            panic!("not check");
        };
        assert_eq!(
            format!("{:?}", c.args),
            format!("{:?}", fencer::Options::file("x.fen"))
        );
        assert!(fencer::Options::file("x.fen").set().is_empty());
    }
}
