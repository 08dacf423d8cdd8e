//! `fencer`: checks concurrent programs under SC, x86-TSO and PSO.

use clap::{Parser, Subcommand, ValueEnum};
use fencer_memory::ModelKind;
use fencer_report::Report;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Exit code for bad input or usage.
const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "fencer",
    version,
    about = "Verify concurrent programs under the SC, x86-TSO and PSO memory models",
    long_about = "fencer explores the executions of a concurrent program under a memory model \
and reports whether any of them fails an assertion, deadlocks, or reaches the final state \
the program's `exists`/`forall` condition asks about, with a step-by-step counterexample.\n\n\
Exit codes: 0 no violation, 1 violation found, 2 bad input or usage, 3 stopped by a limit.",
    after_help = "Examples:\n  fencer check examples/sb.fen --model tso\n  fencer check examples/sb.fen --model sc --json\n  fencer check examples/mp.fen --model pso --timeout 10"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every execution of a program and report violations and final states.
    #[command(
        after_help = "The program is in fencer's text format (docs/text-format.md).\n\n\
Exit codes: 0 no violation, 1 violation (assertion failure, deadlock, memory error, \
satisfied `exists` or violated `forall`), 2 bad input or usage, 3 stopped by a limit."
    )]
    Check(CheckArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum ModelArg {
    /// Sequential consistency: every store reaches memory at once.
    Sc,
    /// x86-TSO: one FIFO store buffer per thread, with store forwarding.
    Tso,
    /// SPARC PSO: one FIFO store buffer per thread and location.
    Pso,
}

impl From<ModelArg> for ModelKind {
    fn from(m: ModelArg) -> Self {
        match m {
            ModelArg::Sc => ModelKind::Sc,
            ModelArg::Tso => ModelKind::Tso,
            ModelArg::Pso => ModelKind::Pso,
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
}

#[derive(Clone, Copy, ValueEnum)]
enum AlgoArg {
    /// Source-DPOR with sleep sets.
    Source,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The program to check (text format, usually `.fen`).
    file: PathBuf,
    /// Memory model to check under.
    #[arg(long, short, value_enum, default_value = "sc")]
    model: ModelArg,
    /// Exploration engine.
    #[arg(long, short, value_enum, default_value = "dpor")]
    engine: EngineArg,
    /// DPOR algorithm (with --engine dpor).
    #[arg(long, value_enum, default_value = "source")]
    algo: AlgoArg,
    /// Explore every execution even after a violation (to list every final state).
    #[arg(long)]
    all: bool,
    /// Print the result as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Stop after this many seconds (exit code 3 with the statistics so far).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Stop after this many complete executions (exit code 3).
    #[arg(long, value_name = "N")]
    max_executions: Option<u64>,
    /// Cut executions longer than this many steps; the result then holds up to the bound.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_depth: usize,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check(args) => check(args),
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

fn check(args: CheckArgs) -> ExitCode {
    let path = args.file.display().to_string();
    let src = match std::fs::read(&args.file) {
        Ok(b) => match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => {
                return usage_error(
                    args.json,
                    &format!(
                        "{path}: error: the file is not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                    None,
                )
            }
        },
        Err(e) => {
            return usage_error(
                args.json,
                &format!("{path}: error: cannot read the file: {e}"),
                None,
            )
        }
    };
    let prog = match fencer_text::parse_program(&path, &src) {
        Ok(p) => p,
        Err(d) => return usage_error(args.json, &d.render(&src), Some(&d)),
    };
    let timeout = match args.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return usage_error(
                args.json,
                "error: --timeout expects a positive number of seconds",
                None,
            )
        }
        t => t.map(Duration::from_secs_f64),
    };
    let model: ModelKind = args.model.into();
    let report: Report = match args.engine {
        EngineArg::Reference => {
            let opts = fencer_reference::Options {
                timeout,
                max_executions: args.max_executions,
                max_depth: args.max_depth,
                ..Default::default()
            };
            fencer_reference::explore(&prog, model, &opts).report
        }
        EngineArg::Dpor => {
            let opts = fencer_dpor::Options {
                algo: match args.algo {
                    AlgoArg::Source => fencer_dpor::Algo::Source,
                },
                timeout,
                max_executions: args.max_executions,
                max_depth: args.max_depth,
                stop_on_violation: !args.all,
            };
            fencer_dpor::explore(&prog, model, &opts)
        }
    };
    if args.json {
        out(&format!("{}\n", report.to_json()));
    } else {
        out(&report.to_text());
    }
    ExitCode::from(report.verdict.exit_code() as u8)
}

/// Writes to stdout, ignoring a closed pipe (`fencer ... | head` is not an error).
fn out(s: &str) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(s.as_bytes()).and_then(|_| o.flush());
}
