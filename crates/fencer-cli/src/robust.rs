//! `fencer robust`: is every execution under TSO (PSO) sequentially consistent?

use super::*;

pub const AFTER_HELP: &str = "A program is robust against a memory model when every \
execution under it has a sequentially consistent trace: its happens-before relation \
(program order, reads-from, store order, from-reads) has no cycle. A program that is \
robust behaves under TSO (PSO) exactly as under SC, so whatever holds of it under SC holds \
on the weak model too.\n\n\
--method monitor (the default) explores only SC executions, one per trace, and runs the \
SC-violation monitors of Burnim, Sen and Stergiou on each; --method exhaustive explores \
every execution under the model and checks each trace for a cycle (slower; the monitor's \
oracle). Each distinct violation is a pair of source instructions: a store that sat in its \
thread's buffer, and another thread's access that overtook it. For each, fencer shows how \
many executions exposed it, the cycle, and a witness: an execution under the model, \
replayed in the machine, whose trace has that cycle.\n\n\
Final conditions (`exists`/`forall`, litmus outcomes) are not checked here: use `check` or \
`litmus`. Assertion failures, deadlocks and memory errors found on the way are reported.\n\n\
Examples:\n  fencer robust examples/sb.fen --model tso\n  fencer robust prog.c --model pso --json\n\n\
Exit codes: 0 robust, 1 not robust (or a safety violation), 2 bad input or usage, 3 stopped \
by a limit before anything was found.";

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum WeakModel {
    /// x86-TSO: one FIFO store buffer per thread.
    Tso,
    /// PSO: one FIFO store buffer per thread and location.
    Pso,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum MethodArg {
    /// Explore SC executions and monitor each for what TSO/PSO could do differently.
    Monitor,
    /// Explore every TSO/PSO execution and check its trace for a happens-before cycle.
    Exhaustive,
}

#[derive(clap::Args)]
pub struct RobustArgs {
    /// The program: `.fen`, `.litmus`, `.c`/`.i`, `.ll`/`.bc`.
    file: PathBuf,
    /// The weak memory model to check robustness against.
    #[arg(long, short, value_enum, ignore_case = true, default_value = "tso")]
    model: WeakModel,
    /// How to decide.
    #[arg(long, value_enum, default_value = "monitor")]
    method: MethodArg,
    /// DPOR algorithm.
    #[arg(long, value_enum, default_value = "optimal")]
    algo: Algo,
    /// C: define a macro (passed to clang as -D).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// C: add a directory to the include path (passed to clang as -I).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// C: the language standard (passed to clang as -std=), e.g. c11.
    #[arg(long, value_name = "STD")]
    std: Option<String>,
    /// C: the clang 14 to compile with.
    #[arg(long, value_name = "PATH")]
    clang: Option<PathBuf>,
    /// C: further compiler flags, after `--`.
    #[arg(last = true, value_name = "CFLAGS")]
    cflags: Vec<String>,
    /// Print the result as one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also print the number of races found and reversed.
    #[arg(long, short)]
    verbose: bool,
    /// Stop after this many seconds, loading included (exit code 3 unless a violation was
    /// found by then; what was found is reported).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Stop after this many executions (exit code 3 unless a violation was found).
    #[arg(long, value_name = "N")]
    max_executions: Option<u64>,
    /// Most events one thread may execute in one execution (the result then holds up to
    /// that bound).
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_depth: usize,
    /// Cut executions that run any loop more than N times (the result then holds up to
    /// that bound).
    #[arg(long, value_name = "N")]
    unroll: Option<u32>,
    /// Keep spin loops as they are (see `fencer check --help`).
    #[arg(long)]
    no_spin_assume: bool,
    /// C: `pthread_cond_wait` returns only when signalled (see `fencer check --help`).
    #[arg(long)]
    no_spurious_wakeups: bool,
    #[command(flatten)]
    views: views::ViewArgs,
    /// The options given on the command line, for `applies`.
    #[arg(skip)]
    pub(crate) given: fencer::applies::Given,
}

pub fn robust(a: RobustArgs) -> ExitCode {
    let model = match a.model {
        WeakModel::Tso => ModelKind::Tso,
        WeakModel::Pso => ModelKind::Pso,
    };
    let method = match a.method {
        MethodArg::Monitor => fencer_robust::Method::Monitor,
        MethodArg::Exhaustive => fencer_robust::Method::Exhaustive,
    };
    let started = Instant::now();
    let timeout = match fencer::timeout_arg(a.timeout) {
        Ok(t) => t,
        Err(e) => return failed(a.json, &e),
    };
    // The loaders read `check`'s arguments; the program is lowered for the weak model
    // (C11 fences and atomics map differently per model), whichever model explores it.
    let args = Arc::new(Options {
        file: a.file,
        define: a.define,
        include: a.include,
        std: a.std,
        clang: a.clang,
        cflags: a.cflags,
        model: match a.model {
            WeakModel::Tso => Model::Tso,
            WeakModel::Pso => Model::Pso,
        },
        algo: a.algo,
        verbose: a.verbose,
        all: true,
        json: a.json,
        timeout: a.timeout,
        max_executions: a.max_executions,
        max_depth: a.max_depth,
        unroll: a.unroll,
        no_spin_assume: a.no_spin_assume,
        no_spurious_wakeups: a.no_spurious_wakeups,
        given: a.given.clone(),

        ..Options::default()
    });
    if let Some(msg) = fencer::applies::refusal_in(fencer::applies::Cmd::Robust, &args)
        .or_else(|| views::refuse_bad_paths(&a.views))
    {
        return usage_error(args.json, &msg, None);
    }
    let mut prog = match fencer::load_within(&args, model, timeout) {
        Ok(Some(p)) => p,
        Err(e) => return failed(args.json, &e),
        Ok(None) => {
            let o = fencer::stopped_while_loading(&args, model, started);
            out(&o.output);
            for m in &o.messages {
                eprintln!("{m}");
            }
            return ExitCode::from(o.exit_code());
        }
    };
    if let Err(e) = fencer::inputs::refuse_program("robust", &prog) {
        return failed(args.json, &e);
    }
    // Final conditions ask about outcomes; robustness is about every execution.
    prog.cond = None;
    // The monitors know waiting loops, not barriers as operations.
    fencer_ir::barrier::as_loops(&mut prog);
    let spin_loops = if args.no_spin_assume {
        0
    } else {
        fencer_ir::spin::spin_assume(&mut prog)
    };
    let progress = Progress::start();
    let opts = fencer_dpor::Options {
        max_events: None,
        algo: match args.algo {
            Algo::Optimal => fencer_dpor::Algo::Optimal,
            Algo::Source => fencer_dpor::Algo::Source,
        },
        timeout: timeout.map(|t| t.saturating_sub(started.elapsed())),
        max_executions: args.max_executions,
        max_depth: args.max_depth,
        unroll: args.unroll,
        stop_on_violation: false,
        progress: Some(progress.count.clone()),
        ..Default::default()
    };
    let outcome = fencer_robust::check(&prog, model, method, &opts);
    progress.finish();
    if let Err(e) = fencer::unsupported(&outcome.report) {
        return failed(args.json, &e);
    }
    let mut report = outcome.into_report(&prog, model, method);
    report.report.stats.spin_loops = spin_loops as u64;
    report.report.stats.peak_rss_kib = fencer::peak_rss_kib();
    if args.json {
        out(&format!("{}\n", report.to_json()));
    } else {
        out(&report.to_text(args.verbose));
    }
    if let Err(code) = views::after_robust(&a.views, &args, &prog, model, &report) {
        return code;
    }
    ExitCode::from(report.exit_code() as u8)
}
