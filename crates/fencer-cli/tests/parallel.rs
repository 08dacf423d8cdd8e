//! `check --jobs N`, `check --shard I/N` and `fencer merge` end to end: results equal to
//! one worker's, shards that merge into the whole run, and every error's exit code.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fencer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencer"))
        .args(args)
        .output()
        .expect("run fencer")
}

fn file(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fencer-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs every shard of `prog` (`--json`), saves each result, returns the paths.
fn shards(prog: &str, n: u32, extra: &[&str]) -> Vec<String> {
    let name = Path::new(prog)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    (1..=n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            let mut args = vec!["check", prog, "--shard", &shard, "--json"];
            args.extend_from_slice(extra);
            let o = fencer(&args);
            assert!(
                matches!(code(&o), 0 | 1 | 3),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            let p = tmp(&format!("{name}-{i}-of-{n}-{}.json", extra.join("")));
            std::fs::write(&p, &o.stdout).unwrap();
            p.display().to_string()
        })
        .collect()
}

fn merge(parts: &[String], extra: &[&str]) -> Output {
    let mut args = vec!["merge"];
    args.extend(parts.iter().map(String::as_str));
    args.extend_from_slice(extra);
    fencer(&args)
}

#[test]
fn jobs_give_one_workers_answer() {
    let prog = file("bench/fen/fib4_true.fen");
    for model in ["sc", "tso"] {
        let one = json(&fencer(&[
            "check", &prog, "-m", model, "--jobs", "1", "--json",
        ]));
        assert!(
            one.get("split").is_none(),
            "--jobs 1 runs the engine without a frontier"
        );
        for jobs in ["2", "3"] {
            let o = fencer(&["check", &prog, "-m", model, "--jobs", jobs, "--json"]);
            assert_eq!(code(&o), 0);
            let v = json(&o);
            for k in [
                "verdict",
                "executions",
                "final_states",
                "final_state_executions",
            ] {
                assert_eq!(v[k], one[k], "{model} --jobs {jobs}: {k}");
            }
            assert_eq!(v["split"]["jobs"], jobs.parse::<u64>().unwrap());
            assert!(v["split"]["units"].as_u64().unwrap() > 1);
            // The units the leader took hold all but its own events above the depth;
            // what was thrown away is not counted in `events`.
            let taken = v["split"]["unit_events"].as_u64().expect("an exact split");
            let events = v["stats"]["events"].as_u64().unwrap();
            assert!(taken > 0 && taken < events, "{taken} of {events}");
            assert!(v["split"]["dropped_events"].is_u64());
            // How many finished units a depth move left the new depth's units took.
            assert!(v["split"]["kept_units"].is_u64());
        }
    }
}

/// `indexer.c` under TSO splits badly (units come one after another): the leader may
/// go on alone, whenever its measure says so, and the run is still `--jobs 1`'s.
#[test]
fn a_split_that_does_not_pay_is_still_one_workers_run() {
    let prog = file("../shared/svcomp/pthread/indexer.c");
    if !Path::new(&prog).exists() {
        eprintln!("skipped: needs ../shared (not in a fresh clone)");
        return;
    }
    let run = |jobs: &str| {
        let o = fencer(&[
            "check",
            &prog,
            "-m",
            "tso",
            "--all",
            "--max-executions",
            "1500",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
        json(&o)
    };
    let one = run("1");
    let two = run("2");
    for k in ["verdict", "executions", "events", "final_states", "blocked"] {
        assert_eq!(two[k], one[k], "{k}");
    }
    let split = &two["split"];
    assert_eq!(split["method"], "exact");
    match split["alone_after"].as_u64() {
        Some(n) => assert!(n >= 1 && n <= split["units"].as_u64().unwrap()),
        None => assert!(split["alone_after"].is_null()),
    }
}

#[test]
fn the_counterexample_does_not_depend_on_the_workers() {
    let prog = file("bench/fen/fib4_false.fen");
    let run = |algo: &str, jobs: &str| {
        let o = fencer(&[
            "check", &prog, "-m", "tso", "--algo", algo, "--jobs", jobs, "--json",
        ]);
        assert_eq!(code(&o), 1);
        json(&o)
    };
    // Optimal-DPOR splits exactly: one worker's exploration, so --jobs 1's counterexample
    // after as many executions, with no unit to name.
    let one = run("optimal", "1");
    for jobs in ["2", "3", "2", "3", "4"] {
        let v = run("optimal", jobs);
        assert_eq!(v["split"]["method"], "exact");
        assert!(v["split"]["violation_unit"].is_null());
        assert_eq!(v["counterexample"], one["counterexample"], "--jobs {jobs}");
        assert_eq!(v["executions"], one["executions"], "--jobs {jobs}");
        for k in ["events", "blocked", "sleep_blocked"] {
            assert_eq!(v["stats"][k], one["stats"][k], "--jobs {jobs}: {k}");
        }
        assert_eq!(v["stats"]["sleep_blocked"], 0);
    }
    // Source-DPOR splits at the races: the counterexample of the first unit in
    // depth-first order that has one, whatever the workers.
    let first = run("source", "2");
    assert_eq!(first["split"]["method"], "races");
    assert!(first["split"]["violation_unit"].is_u64());
    for jobs in ["2", "3", "2", "3", "4"] {
        let v = run("source", jobs);
        assert_eq!(
            v["counterexample"], first["counterexample"],
            "--jobs {jobs}"
        );
        assert_eq!(
            v["split"]["violation_unit"],
            first["split"]["violation_unit"]
        );
        assert_eq!(v["executions"], first["executions"], "--jobs {jobs}");
    }
}

#[test]
fn shards_merge_into_the_whole_run() {
    let prog = file("bench/fen/fib4_true.fen");
    // The whole tree split at the shards' frontier (`--jobs` alone splits at the races).
    let whole = json(&fencer(&[
        "check", &prog, "-m", "pso", "--jobs", "2", "--shard", "1/1", "--json",
    ]));
    let parts = shards(&prog, 3, &["-m", "pso"]);
    let mut sum = 0;
    for p in &parts {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        sum += v["executions"].as_u64().unwrap();
        assert_eq!(v["split"]["units"], whole["split"]["units"]);
    }
    assert_eq!(sum, whole["executions"].as_u64().unwrap());
    let o = merge(&parts, &["--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    let m = json(&o);
    for k in [
        "verdict",
        "executions",
        "final_states",
        "final_state_executions",
    ] {
        assert_eq!(m[k], whole[k], "{k}");
    }
    assert_eq!(m["stats"]["sleep_blocked"], whole["stats"]["sleep_blocked"]);
    assert_eq!(m["split"]["shards"], 3);
    // The parts in any order, and as text.
    let mut rev = parts.clone();
    rev.reverse();
    let o = merge(&rev, &[]);
    assert_eq!(code(&o), 0);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("merged: 3 shards"), "{text}");
    assert!(
        text.contains(&format!("executions: {} ", whole["executions"])),
        "{text}"
    );
}

#[test]
fn merged_shards_block_what_one_worker_blocks() {
    // Programs whose executions a false `assume` (spin loops), a bound or nothing blocks.
    // Shards' units stop some explorations by sleep sets, which one worker never does
    // (`sleep_blocked`); the executions the program blocks are one per trace, and
    // `blocked` counts only those: merged, it is the one-worker run's (it was the sum of
    // both kinds, 37 against 8 for peterson.fen under SC).
    let cases: &[(&str, &str, &[&str])] = &[
        ("examples/peterson.fen", "sc", &[]),
        ("examples/peterson.fen", "tso", &["--all"]),
        ("examples/spinlock_cas.fen", "tso", &[]),
        ("examples/peterson_pso.fen", "pso", &["--algo", "source"]),
        (
            "examples/peterson.fen",
            "tso",
            &["--all", "--max-depth", "5"],
        ),
        ("crates/fencer-c/tests/c/cas_loops/reload.c", "sc", &[]),
        ("crates/fencer-c/tests/c/rwlock.c", "tso", &[]),
    ];
    let mut sleep_stopped = 0;
    for &(rel, model, extra) in cases {
        let prog = file(rel);
        let mut args = vec!["check", &prog, "-m", model, "--jobs", "1", "--json"];
        args.extend_from_slice(extra);
        let one = json(&fencer(&args));
        let mut shard_args = vec!["-m", model];
        shard_args.extend_from_slice(extra);
        let merged = json(&merge(&shards(&prog, 3, &shard_args), &["--json"]));
        let what = format!("{rel} {model} {extra:?}");
        for k in [
            "verdict",
            "executions",
            "blocked",
            "final_states",
            "final_state_executions",
        ] {
            assert_eq!(merged[k], one[k], "{what}: {k}");
        }
        for k in [
            "executions",
            "blocked",
            "assume_blocked",
            "depth_cut",
            "unroll_cut",
            "recursion_cut",
            "local_loop_cut",
        ] {
            assert_eq!(merged["stats"][k], one["stats"][k], "{what}: stats.{k}");
        }
        sleep_stopped += merged["stats"]["sleep_blocked"].as_u64().unwrap();
    }
    // Not vacuous: the programs block executions, and the shards' units stop some.
    assert!(sleep_stopped > 0);
    let one = json(&fencer(&[
        "check",
        &file("examples/peterson.fen"),
        "--jobs",
        "1",
        "--json",
    ]));
    assert!(one["blocked"].as_u64().unwrap() > 0);
}

#[test]
fn merged_violation_is_the_stable_counterexample() {
    let prog = file("bench/fen/fib4_false.fen");
    let whole = json(&fencer(&[
        "check", &prog, "--jobs", "2", "--shard", "1/1", "--json",
    ]));
    let parts = shards(&prog, 2, &[]);
    let o = merge(&parts, &["--json"]);
    assert_eq!(code(&o), 1);
    let m = json(&o);
    assert_eq!(m["verdict"], "violation");
    assert_eq!(m["counterexample"], whole["counterexample"]);
    assert_eq!(
        m["split"]["violation_unit"],
        whole["split"]["violation_unit"]
    );
}

#[test]
fn a_shard_stopped_by_a_limit_makes_the_merge_incomplete() {
    let prog = file("bench/fen/fib4_true.fen");
    let parts = shards(&prog, 2, &["--max-executions", "1"]);
    let o = merge(&parts, &["--json"]);
    assert_eq!(code(&o), 3);
    assert_eq!(json(&o)["verdict"], "incomplete");
    // Workers share the budget, exactly.
    for jobs in ["2", "3"] {
        let o = fencer(&[
            "check",
            &prog,
            "--jobs",
            jobs,
            "--max-executions",
            "7",
            "--json",
        ]);
        assert_eq!(code(&o), 3);
        let v = json(&o);
        assert_eq!(v["stopped_by"], "max-executions");
        assert_eq!(v["executions"], 7, "--jobs {jobs}");
    }
}

#[test]
fn shard_and_jobs_errors() {
    let prog = file("bench/fen/fib4_true.fen");
    for bad in ["0/3", "4/3", "1/0", "x/2", "2", "1/y", ""] {
        let o = fencer(&["check", &prog, "--shard", bad]);
        assert_eq!(code(&o), 2, "--shard {bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--shard"), "{err}");
        let o = fencer(&["check", &prog, "--shard", bad, "--json"]);
        assert_eq!(code(&o), 2);
        assert!(json(&o)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--shard"));
    }
    let o = fencer(&["check", &prog, "--shard", "1/2", "--engine", "reference"]);
    assert_eq!(code(&o), 2);
    let dve = file("examples/dve/peterson.dve");
    let o = fencer(&["check", &dve, "--shard", "1/2"]);
    assert_eq!(code(&o), 2);
    let o = fencer(&["check", &prog, "--jobs", "0"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn merge_errors() {
    let prog = file("bench/fen/fib4_true.fen");
    let parts = shards(&prog, 3, &[]);
    let expect_usage = |o: Output, what: &str| {
        assert_eq!(
            code(&o),
            2,
            "{what}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(err.contains(what), "{err}");
    };
    // A shard missing, a shard twice.
    expect_usage(merge(&parts[..2], &[]), "shard 3 of 3 missing");
    expect_usage(
        merge(&[parts[0].clone(), parts[0].clone(), parts[1].clone()], &[]),
        "appears twice",
    );
    // Parts of different runs: another model; another number of shards.
    let tso = shards(&prog, 3, &["-m", "tso"]);
    expect_usage(
        merge(&[parts[0].clone(), tso[1].clone(), parts[2].clone()], &[]),
        "differ in model",
    );
    let two = shards(&prog, 2, &[]);
    expect_usage(
        merge(&[parts[0].clone(), two[1].clone()], &[]),
        "differ in number of shards",
    );
    // Unreadable, not JSON, not a shard's result.
    expect_usage(merge(&["/nonexistent/x.json".into()], &[]), "cannot read");
    let junk = tmp("junk.json");
    std::fs::write(&junk, "{ not json").unwrap();
    expect_usage(merge(&[junk.display().to_string()], &[]), "not JSON");
    let plain = tmp("plain.json");
    std::fs::write(
        &plain,
        fencer(&["check", &prog, "--jobs", "1", "--json"]).stdout,
    )
    .unwrap();
    expect_usage(merge(&[plain.display().to_string()], &[]), "--shard");
    // JSON errors for scripts.
    let o = merge(&parts[..1], &["--json"]);
    assert_eq!(code(&o), 2);
    assert!(json(&o)["error"]["message"]
        .as_str()
        .unwrap()
        .contains("missing"));
    // Shard numbers out of range (an edited file): refused, not merged as safe.
    let edited = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&parts[0]).unwrap()).unwrap();
        edit(&mut v);
        let f = tmp(name);
        std::fs::write(&f, v.to_string()).unwrap();
        f.display().to_string()
    };
    let zero = edited("zero.json", &|v| v["split"]["shard"]["count"] = 0.into());
    expect_usage(merge(&[zero], &[]), "expected 1 <= I <= N");
    let past = edited("past.json", &|v| v["split"]["shard"]["index"] = 5.into());
    expect_usage(
        merge(&[past, parts[1].clone(), parts[2].clone()], &[]),
        "shard 5 of 3",
    );
    // A huge number of shards: the first missing ones are named, not all of them.
    let o = fencer(&["check", &prog, "--shard", "1/4294967295", "--json"]);
    let big = tmp("big.json");
    std::fs::write(&big, o.stdout).unwrap();
    let o = merge(&[big.display().to_string()], &[]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("and 4294967284 more of 4294967295 missing"),
        "{err}"
    );
    assert!(err.len() < 300, "{err}");
}

/// A part whose verdict is a violation counts even when its counterexample was left out.
#[test]
fn merge_keeps_a_violation_without_its_counterexample() {
    let prog = file("bench/fen/fib4_false.fen");
    let parts = shards(&prog, 2, &[]);
    let stripped: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            v["counterexample"] = serde_json::Value::Null;
            let f = tmp(&format!("nocex{i}.json"));
            std::fs::write(&f, v.to_string()).unwrap();
            f.display().to_string()
        })
        .collect();
    assert_eq!(code(&merge(&stripped, &[])), 1);
}

#[test]
fn jobs_has_a_ceiling() {
    let prog = file("examples/sb.fen");
    let o = fencer(&["check", &prog, "--jobs", "100000"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("at most 1024"));
}
