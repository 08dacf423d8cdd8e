//! Views and replay end to end: every counterexample `check` prints can be saved with
//! `--save-trace` and replayed by `fencer replay` to the same violation; a program that
//! changed is reported; `--view`, `--html`, `--sarif` write their files without changing
//! the text or the JSON.

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

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fencer-views-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Saves the counterexample of `check FILE --model M EXTRA...`, replays it, and holds the
/// replay to the same violation (kind, message, position, every event).
fn round_trip(file: &Path, model: &str, extra: &[&str]) {
    let f = file.to_str().unwrap();
    let name = format!(
        "{}-{model}-{}.trace",
        file.file_name().unwrap().to_string_lossy(),
        extra.join("")
    );
    let trace = tmp(&name);
    let t = trace.to_str().unwrap();
    let mut args = vec!["check", f, "--model", model, "--json", "--save-trace", t];
    args.extend_from_slice(extra);
    let out = fencer(&args);
    assert_eq!(out.status.code(), Some(1), "{f} {model} {extra:?}");
    let found = json(&out)["counterexample"].clone();
    let out = fencer(&["replay", f, t, "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{f} {model} {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replayed = json(&out);
    assert_eq!(replayed["verdict"], "violation");
    assert_eq!(replayed["program_changed"], false);
    assert_eq!(replayed["counterexample"], found, "{f} {model} {extra:?}");
    // The text form says the same.
    let out = fencer(&["replay", f, t]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("VIOLATION"), "{text}");
    assert!(
        text.contains(found["message"].as_str().unwrap()),
        "{f}: {text}"
    );
}

/// The `// expect: sc=... tso=... pso=...` models under which a file has a violation.
fn violating_models(path: &Path) -> Vec<String> {
    let src = std::fs::read_to_string(path).unwrap();
    let Some(line) = src.lines().find_map(|l| l.strip_prefix("// expect:")) else {
        return Vec::new();
    };
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter(|(_, v)| *v == "violation")
        .map(|(k, _)| k.to_string())
        .collect()
}

#[test]
fn every_example_counterexample_replays() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fen"))
        .collect();
    files.sort();
    files.push(root().join("examples/c/sb.c"));
    let mut n = 0;
    for f in &files {
        for m in violating_models(f) {
            round_trip(f, &m, &[]);
            if f.extension().is_some_and(|x| x == "fen") {
                round_trip(f, &m, &["--engine", "reference"]);
                round_trip(f, &m, &["--all"]);
            }
            n += 1;
        }
    }
    assert!(n >= 15, "only {n} violating (example, model) pairs");
}

/// Memory errors, hangs, deadlocks, faults in a thread's first local steps, spawned
/// threads, the C library: every kind of counterexample the C tests have replays.
#[test]
fn every_c_test_counterexample_replays() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("crates/fencer-c/tests/c"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    let mut n = 0;
    for f in &files {
        for m in violating_models(f) {
            round_trip(f, &m, &[]);
            n += 1;
        }
    }
    assert!(n >= 30, "only {n} violating (program, model) pairs");
}

#[test]
fn every_shared_c_benchmark_counterexample_replays() {
    let dir = root().join("../shared/bench/c");
    let Ok(tsv) = std::fs::read_to_string(dir.join("expected.tsv")) else {
        eprintln!("skipped: {} is not there", dir.display());
        return;
    };
    let mut n = 0;
    for row in tsv.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        for (m, v) in ["sc", "tso", "pso"].iter().zip(&cols[1..]) {
            if *v == "unsafe" {
                round_trip(&dir.join(cols[0]), m, &[]);
                n += 1;
            }
        }
    }
    assert!(n >= 10, "only {n} unsafe (program, model) pairs");
}

#[test]
fn a_changed_program_is_reported_and_a_step_that_no_longer_fits_names_itself() {
    let prog = tmp("sb.fen");
    std::fs::copy(root().join("examples/sb.fen"), &prog).unwrap();
    let trace = tmp("sb-changed.trace");
    let (p, t) = (prog.to_str().unwrap(), trace.to_str().unwrap());
    let out = fencer(&["check", p, "-m", "tso", "--save-trace", t]);
    assert_eq!(out.status.code(), Some(1));
    let saved = std::fs::read_to_string(&trace).unwrap();
    assert!(saved.starts_with("fencer-trace 1\n"), "{saved}");
    assert!(
        saved.contains("\nmodel tso\n") && saved.contains("\nupd(t0)"),
        "{saved}"
    );
    // q no longer stores: its second step is now past its end.
    let src = std::fs::read_to_string(&prog).unwrap();
    std::fs::write(&prog, src.replace("    y = 1;\n", "")).unwrap();
    let out = fencer(&["replay", p, t]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not the program the trace was saved from"),
        "{err}"
    );
    assert!(
        err.contains("step 4 (t1) cannot be taken: q has finished"),
        "{err}"
    );
    assert!(err.contains("help: the program changed"), "{err}");
    // A damaged trace file is bad input too.
    std::fs::write(&trace, saved.replace("upd(t0)", "upd(t0")).unwrap();
    let out = fencer(&["replay", p, t]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a step"));
}

#[test]
fn replay_under_another_model_runs_the_same_schedule() {
    let sb = root().join("examples/sb.fen");
    let trace = tmp("sb-pso.trace");
    let (p, t) = (sb.to_str().unwrap(), trace.to_str().unwrap());
    fencer(&["check", p, "-m", "tso", "--save-trace", t]);
    // Under SC there are no buffers: the first update cannot be taken.
    let out = fencer(&["replay", p, t, "--model", "sc"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("saved under TSO"), "{err}");
    assert!(err.contains("step 5 (upd(t0))"), "{err}");
}

#[test]
fn views_are_written_and_the_output_is_unchanged() {
    let sb = root().join("examples/sb.fen");
    let p = sb.to_str().unwrap();
    let (svg, dot, html, sarif) = (
        tmp("sb.svg"),
        tmp("sb.dot"),
        tmp("sb.html"),
        tmp("sb.sarif"),
    );
    let plain = fencer(&["check", p, "-m", "tso", "--json"]);
    let out = fencer(&[
        "check",
        p,
        "-m",
        "tso",
        "--json",
        "--view",
        svg.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        "--sarif",
        sarif.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let (mut a, mut b) = (json(&plain), json(&out));
    for v in [&mut a, &mut b] {
        for k in ["elapsed_ms", "stats"] {
            v.as_object_mut().unwrap().remove(k);
        }
    }
    assert_eq!(a, b, "the views change nothing in the JSON");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("schedule"));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(s["version"], "2.1.0");
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "condition");
    let out = fencer(&["check", p, "-m", "tso", "--view", dot.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(std::fs::read_to_string(&dot)
        .unwrap()
        .starts_with("digraph"));
    // An unknown drawing format is a usage error.
    let out = fencer(&["check", p, "-m", "tso", "--view", "x.png"]);
    assert_eq!(out.status.code(), Some(2));
    // No counterexample: SARIF with no result, and a note for the rest.
    let out = fencer(&[
        "check",
        p,
        "-m",
        "sc",
        "--sarif",
        sarif.to_str().unwrap(),
        "--view",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no counterexample"));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(s["runs"][0]["results"].as_array().unwrap().len(), 0);
}

#[test]
fn robust_draws_the_first_witness_with_its_cycle() {
    let mp = root().join("examples/mp.fen");
    let (svg, sarif, trace) = (
        tmp("mp-robust.svg"),
        tmp("mp-robust.sarif"),
        tmp("mp-robust.trace"),
    );
    let out = fencer(&[
        "robust",
        mp.to_str().unwrap(),
        "-m",
        "pso",
        "--view",
        svg.to_str().unwrap(),
        "--sarif",
        sarif.to_str().unwrap(),
        "--save-trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.contains(" cycle\""), "the cycle is highlighted");
    assert!(s.contains("sc-violation"));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(s["runs"][0]["results"][0]["ruleId"], "sc-violation");
    // The witness replays (it ends without a safety violation: exit code 0).
    let out = fencer(&["replay", mp.to_str().unwrap(), trace.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn litmus_draws_the_execution_that_satisfies_the_condition() {
    let mp = root().join("crates/fencer-litmus/tests/pso/MP.litmus");
    let (m, svg, trace) = (mp.to_str().unwrap(), tmp("MP.svg"), tmp("MP.trace"));
    let out = fencer(&[
        "litmus",
        m,
        "--model",
        "pso",
        "--view",
        svg.to_str().unwrap(),
        "--save-trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(std::fs::read_to_string(&svg)
        .unwrap()
        .contains("final state satisfies"));
    let out = fencer(&["replay", m, trace.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Views of several tests would overwrite each other.
    let out = fencer(&["litmus", m, m, "--view", svg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// `check --all --final 'NAME=VALUE ...'`: the execution that ends in a chosen final state,
/// drawn and saved; it replays to that state. A state never reached is an error that lists
/// the ones that were.
#[test]
fn a_chosen_final_state_is_drawn_and_replays() {
    let sb = root().join("examples/sb.fen");
    let f = sb.to_str().unwrap();
    let (svg, trace) = (tmp("final.svg"), tmp("final.trace"));
    let out = fencer(&[
        "check",
        f,
        "--model",
        "tso",
        "--all",
        "--final",
        "p.r1=1 q.r2=1",
        "--view",
        svg.to_str().unwrap(),
        "--save-trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.contains("ends without a violation"), "{picture}");
    let r = fencer(&["replay", f, trace.to_str().unwrap(), "--json"]);
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let out = fencer(&[
        "check",
        f,
        "--model",
        "sc",
        "--all",
        "--final",
        "p.r1=0 q.r2=0",
        "--view",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no execution explored ends there") && err.contains("p.r1=1 q.r2=1"),
        "{err}"
    );
    let out = fencer(&[
        "check",
        f,
        "--all",
        "--final",
        "nope=1",
        "--view",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `repair --view`: the first counterexample the repair had to kill, drawn.
#[test]
fn repair_draws_its_first_counterexample() {
    let sb = root().join("examples/sb.fen");
    let svg = tmp("repair.svg");
    let out = fencer(&[
        "repair",
        sb.to_str().unwrap(),
        "--model",
        "tso",
        "--view",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains("buf(p)") && picture.contains("arrow fr"),
        "{picture}"
    );
}
