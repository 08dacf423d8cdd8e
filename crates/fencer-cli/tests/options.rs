//! No option of `check` is ever ignored: every option, on every kind of input, is either
//! honoured or refused (exit 2, naming the option and what it applies to). The expected
//! table below is written from what each front-end and engine reads (an audit of the CLI
//! run option by option), independently of `src/applies.rs`'s rules.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fencer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencer"))
        .args(args)
        .output()
        .expect("run fencer")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("fencer-options-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

fn has_clang() -> bool {
    Command::new("clang-14").arg("--version").output().is_ok()
        || Path::new("/usr/lib/llvm-14/bin/clang").exists()
}

/// An option as a user writes it, with a value that makes sense for it.
fn option(id: &str, kind: &str) -> Vec<String> {
    let v: Vec<&str> = match id {
        "define" if kind == "dve" => vec!["-D", "limit=3"],
        "define" => vec!["-DX=1"],
        "include" => vec!["-I", "/tmp"],
        "std" => vec!["--std", "gnu11"],
        "clang" => vec!["--clang", "clang-14"],
        "model" => vec!["--model", "sc"],
        "engine" => vec!["--engine", "dpor"],
        "algo" => vec!["--algo", "source"],
        "por" => vec!["--por", "sleep"],
        "verbose" => vec!["--verbose"],
        "all" => vec!["--all"],
        "json" => vec!["--json"],
        "timeout" => vec!["--timeout", "60"],
        "max_executions" => vec!["--max-executions", "1000000"],
        "max_depth" => vec!["--max-depth", "100000"],
        "unroll" => vec!["--unroll", "100"],
        "deadlock" => vec!["--deadlock"],
        "reach" => vec!["--reach", "n > 2"],
        "ltl" => vec!["--ltl", "F n"],
        "fair" => vec!["--fair"],
        "max_states" => vec!["--max-states", "1000000"],
        "keep_going" => vec!["--keep-going"],
        "buffer_bound" => vec!["--buffer-bound", "3"],
        "keep_stale" => vec!["--keep-stale"],
        "buffer_private" => vec!["--buffer-private"],
        "atomic" => vec!["--atomic", "/nonexistent.atomic"],
        "no_buffer_fairness" => vec!["--no-buffer-fairness"],
        "max_nodes" => vec!["--max-nodes", "100000"],
        "invariant" => vec!["--invariant"],
        "brab" => vec!["--brab", "2"],
        "forward_depth" => vec!["--brab", "2", "--forward-depth", "3"],
        "jobs" => vec!["--jobs", "1"],
        "no_pack" => vec!["--no-pack"],
        "no_spin_assume" => vec!["--no-spin-assume"],
        "no_spurious_wakeups" => vec!["--no-spurious-wakeups"],
        "hangs" => vec!["--hangs", "ignore"],
        "view" => return vec!["--view".into(), scratch(&format!("{kind}.svg"))],
        "html" => return vec!["--html".into(), scratch(&format!("{kind}.html"))],
        "sarif" => return vec!["--sarif".into(), scratch(&format!("{kind}.sarif"))],
        "save_trace" => return vec!["--save-trace".into(), scratch(&format!("{kind}.trace"))],
        "final_state" => vec!["--final", "x=1"],
        "shard" => vec!["--shard", "1/2"],
        "cflags" => vec!["--", "-DY=2"],
        other => panic!("no sample value for `{other}`: add one to this test"),
    };
    v.into_iter().map(String::from).collect()
}

/// The option's spelling in messages.
fn flag(id: &str) -> String {
    match id {
        "define" => "-D".into(),
        "include" => "-I".into(),
        "cflags" => "-- CFLAGS".into(),
        "final_state" => "--final".into(),
        "forward_depth" => "--brab".into(), // refused on its companion first elsewhere
        id => format!("--{}", id.replace('_', "-")),
    }
}

const ALL: &[&str] = &[
    "define",
    "include",
    "std",
    "clang",
    "cflags",
    "model",
    "engine",
    "algo",
    "por",
    "verbose",
    "all",
    "json",
    "timeout",
    "max_executions",
    "max_depth",
    "unroll",
    "deadlock",
    "reach",
    "ltl",
    "fair",
    "max_states",
    "keep_going",
    "buffer_bound",
    "keep_stale",
    "buffer_private",
    "atomic",
    "no_buffer_fairness",
    "max_nodes",
    "invariant",
    "brab",
    "forward_depth",
    "jobs",
    "no_pack",
    "no_spin_assume",
    "no_spurious_wakeups",
    "hangs",
    "view",
    "html",
    "sarif",
    "save_trace",
    "final_state",
    "shard",
];

/// The options each input honours with `check`'s defaults (dpor engine, SC).
fn honoured(kind: &str) -> &'static [&'static str] {
    const PROGRAM: &[&str] = &[
        "model",
        "engine",
        "algo",
        "verbose",
        "all",
        "json",
        "timeout",
        "max_executions",
        "max_depth",
        "unroll",
        "jobs",
        "no_spin_assume",
        "hangs",
        "view",
        "html",
        "sarif",
        "save_trace",
        "final_state",
        "shard",
    ];
    match kind {
        "fen" | "litmus" => PROGRAM,
        "c" => &[
            "define",
            "include",
            "std",
            "clang",
            "cflags",
            "model",
            "engine",
            "algo",
            "verbose",
            "all",
            "json",
            "timeout",
            "max_executions",
            "max_depth",
            "unroll",
            "jobs",
            "no_spin_assume",
            "no_spurious_wakeups",
            "hangs",
            "view",
            "html",
            "sarif",
            "save_trace",
            "final_state",
            "shard",
        ],
        // Under SC with no LTL property: the store-buffer options and --fair,
        // --no-buffer-fairness are refused (their question is not this run's).
        "dve" => &[
            "define",
            "model",
            "json",
            "timeout",
            "deadlock",
            "reach",
            "ltl",
            "max_states",
            "keep_going",
            "jobs",
            "no_pack",
        ],
        "cub" => &[
            "model",
            "json",
            "timeout",
            "max_nodes",
            "invariant",
            "brab",
            "forward_depth",
        ],
        _ => unreachable!(),
    }
}

fn input(kind: &str) -> PathBuf {
    match kind {
        "fen" => root().join("examples/sb.fen"),
        "litmus" => root().join("crates/fencer-litmus/tests/pso/MP.litmus"),
        "c" => root().join("examples/c/sb.c"),
        "dve" => root().join("examples/dve/counter.dve"),
        "cub" => root().join("examples/cub/lock.cub"),
        _ => unreachable!(),
    }
}

/// `check FILE OPTIONS`: `Err(stderr)` when an option was refused as not applying,
/// `Ok(exit code)` otherwise.
fn run(file: &Path, opts: &[String]) -> Result<i32, String> {
    let f = file.display().to_string();
    let mut args: Vec<&str> = vec!["check", &f, "--timeout", "60"];
    if opts.first().map(String::as_str) == Some("--timeout") {
        args.truncate(2);
    }
    args.extend(opts.iter().map(String::as_str));
    let o = fencer(&args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let code = o.status.code().unwrap_or(-1);
    let refused = ["does not apply", " applies to ", "cannot be combined"];
    if code == 2 && refused.iter().any(|r| err.contains(r)) {
        Err(err)
    } else {
        Ok(code)
    }
}

#[test]
fn every_option_on_every_input_is_honoured_or_refused() {
    let mut wrong = Vec::new();
    for kind in ["fen", "litmus", "c", "dve", "cub"] {
        if kind == "c" && !has_clang() {
            eprintln!("skipped C: clang-14 is not installed");
            continue;
        }
        let file = input(kind);
        for &id in ALL {
            let want = honoured(kind).contains(&id);
            match (run(&file, &option(id, kind)), want) {
                (Ok(code), true) => {
                    // --final names a variable these inputs lack: it looked, and says so.
                    if (code == 2 && id != "final_state") || code == 4 {
                        wrong.push(format!("{kind} {id}: honoured, but exit {code}"));
                    }
                }
                (Err(err), false) => {
                    if !err.contains(&flag(id)) {
                        wrong.push(format!("{kind} {id}: refused without naming it: {err}"));
                    }
                }
                (Ok(code), false) => wrong.push(format!(
                    "{kind} {id}: accepted (exit {code}), but it does not apply"
                )),
                (Err(err), true) => wrong.push(format!("{kind} {id}: refused: {err}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn options_that_depend_on_the_engine_or_the_question() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let dve = input("dve");
    let fen = input("fen");
    // Accepted where they apply.
    for (file, opts) in [
        (&dve, s(&["--ltl", "F n", "--fair"])),
        (&dve, s(&["--model", "tso", "--buffer-bound", "3"])),
        (
            &dve,
            s(&["--model", "pso1", "--keep-stale", "--buffer-private"]),
        ),
        (
            &fen,
            s(&["--engine", "reference", "--all", "--max-depth", "50"]),
        ),
    ] {
        assert!(run(file, &opts).is_ok(), "{} {opts:?}", file.display());
    }
    // Refused: a bound with pso1's one slot, LTL's fairness in a reachability run,
    // reachability's options under LTL, --ltl with --reach, DPOR's options elsewhere.
    for (file, opts, named) in [
        (
            &dve,
            s(&["--model", "pso1", "--buffer-bound", "3"]),
            "--buffer-bound",
        ),
        (&dve, s(&["--deadlock", "--fair"]), "--fair"),
        (&dve, s(&["--ltl", "F n", "--keep-going"]), "--keep-going"),
        (&dve, s(&["--reach", "n > 2", "--ltl", "F n"]), "--ltl"),
        (&dve, s(&["--engine", "reference"]), "--engine"),
        (
            &fen,
            s(&["--engine", "reference", "--algo", "source"]),
            "--algo",
        ),
        (
            &fen,
            s(&["--engine", "reference", "--shard", "1/2"]),
            "--shard",
        ),
        (
            &fen,
            s(&["--engine", "reference", "--verbose"]),
            "--verbose",
        ),
    ] {
        match run(file, &opts) {
            Err(e) => assert!(e.contains(named), "{opts:?}: {e}"),
            Ok(code) => panic!("{} {opts:?}: accepted (exit {code})", file.display()),
        }
    }
    // A -D that names no `input` constant would check the model unchanged.
    let o = fencer(&["check", &dve.display().to_string(), "-D", "nosuch=1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no `input` constant `nosuch`") && err.contains("limit"),
        "{err}"
    );
    if !has_clang() {
        return;
    }
    // The symbolic engine answers for unbounded loops and stops at the first violation.
    let c = input("c");
    for (opts, named) in [
        (
            s(&["--engine", "abpress", "--max-depth", "10"]),
            "--max-depth",
        ),
        (s(&["--engine", "abpress", "--unroll", "3"]), "--unroll"),
        (s(&["--engine", "abpress", "--all"]), "--all"),
        (
            s(&["--engine", "abpress", "--max-executions", "5"]),
            "--max-executions",
        ),
        (
            s(&["--engine", "abpress", "--hangs", "violation"]),
            "--hangs",
        ),
        (
            s(&["--engine", "abpress", "--save-trace", "/tmp/x.trace"]),
            "--save-trace",
        ),
    ] {
        match run(&c, &opts) {
            Err(e) => assert!(e.contains(named), "{opts:?}: {e}"),
            Ok(code) => panic!("{opts:?}: accepted (exit {code})"),
        }
    }
    for opts in [
        s(&[
            "--engine",
            "abpress",
            "--por",
            "sleep",
            "--max-nodes",
            "100000",
        ]),
        s(&["--engine", "abpress", "--hangs", "ignore"]),
    ] {
        assert!(run(&c, &opts).is_ok(), "{opts:?}");
    }
}

#[test]
fn a_shard_says_what_it_covered_never_safe() {
    let f = input("fen").display().to_string();
    let peterson = root().join("examples/peterson.fen").display().to_string();
    let o = fencer(&["check", &peterson, "--shard", "1/3"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    let first = text.lines().next().unwrap_or("");
    assert!(!first.contains("SAFE"), "{first}");
    assert!(
        first.contains("no violation in shard 1/3's") && first.contains("fencer merge"),
        "{first}"
    );
    // A violation found in a shard is one of the program.
    let o = fencer(&["check", &f, "--model", "tso", "--shard", "1/2"]);
    assert!(matches!(o.status.code(), Some(0 | 1)));
}

#[test]
fn robust_repair_and_litmus_refuse_what_they_would_ignore() {
    let fen = input("fen").display().to_string();
    let dve = input("dve").display().to_string();
    let litmus = input("litmus").display().to_string();
    let refused = |args: &[&str], named: &str| {
        let o = fencer(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(named) && err.contains("does not apply"),
            "{args:?}: {err}"
        );
    };
    // robust draws the first SC violation's witness: a chosen final state is not its.
    refused(&["robust", &fen, "--final", "p.r1=0 q.r2=0"], "--final");
    refused(&["robust", &fen, "-DX=1"], "-D");
    // repair: a program's options on a DVE model and the reverse.
    refused(&["repair", &dve, "--model", "tso", "--diff"], "--diff");
    refused(
        &["repair", &dve, "--model", "tso", "--unroll", "3"],
        "--unroll",
    );
    refused(&["repair", &fen, "--reach", "x == 1"], "--reach");
    refused(&["repair", &fen, "--max-states", "10"], "--max-states");
    // litmus: the reference engine has no DPOR algorithm.
    refused(
        &["litmus", &litmus, "-e", "reference", "--algo", "source"],
        "--algo",
    );
    // What applies still runs.
    for args in [
        vec!["robust", fen.as_str(), "--method", "exhaustive", "-v"],
        vec!["repair", fen.as_str(), "--goal", "robustness", "--diff"],
        vec!["litmus", litmus.as_str(), "--algo", "source"],
    ] {
        let o = fencer(&args);
        assert_ne!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn a_view_fencer_cannot_write_is_refused_before_the_run() {
    // A safe program has no counterexample to draw: the bad extension was found only
    // after a whole run that had one, before.
    let safe = root().join("examples/sb_fenced.fen").display().to_string();
    for cmd in ["check", "robust"] {
        let o = fencer(&[cmd, &safe, "--model", "tso", "--view", "/tmp/x.txt"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(o.stdout.is_empty(), "{cmd}: nothing explored");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--view writes"));
    }
}
