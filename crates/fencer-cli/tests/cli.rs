//! The `fencer` binary end to end: every example gives its documented verdict under every
//! model, JSON keeps its schema, and every kind of failure has its exit code.

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

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fen"))
        .collect();
    v.sort();
    v
}

/// The `// expect: sc=... tso=... pso=...` line of an example.
fn expectations(path: &Path) -> Vec<(String, String)> {
    let src = std::fs::read_to_string(path).unwrap();
    let line = src
        .lines()
        .find_map(|l| l.strip_prefix("// expect:"))
        .unwrap_or_else(|| panic!("{} has no `// expect:` line", path.display()));
    line.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("model=verdict");
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[test]
fn every_example_gives_its_documented_verdict() {
    let ex = examples();
    assert!(ex.len() >= 10);
    for path in ex {
        let exp = expectations(&path);
        assert_eq!(exp.len(), 3, "{}", path.display());
        for ((model, verdict), engine) in exp
            .iter()
            .flat_map(|mv| ["dpor", "reference"].map(|e| (mv.clone(), e)))
        {
            let out = fencer(&[
                "check",
                path.to_str().unwrap(),
                "--model",
                &model,
                "--engine",
                engine,
                "--json",
            ]);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!(
                    "{} {model}: bad JSON ({e}): {}",
                    path.display(),
                    String::from_utf8_lossy(&out.stdout)
                )
            });
            assert_eq!(
                v["verdict"],
                verdict.as_str(),
                "{} under {model}",
                path.display()
            );
            let code = match verdict.as_str() {
                "safe" => 0,
                "violation" => 1,
                _ => 3,
            };
            assert_eq!(
                out.status.code(),
                Some(code),
                "{} under {model}",
                path.display()
            );
        }
    }
}

#[test]
fn json_schema() {
    let sb = root().join("examples/sb.fen");
    let out = fencer(&[
        "check",
        sb.to_str().unwrap(),
        "--model",
        "tso",
        "--all",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "violation");
    assert_eq!(v["model"], "tso");
    assert_eq!(v["engine"], "dpor");
    assert_eq!(v["executions"], 4);
    assert!(v["blocked"].is_u64());
    assert!(v["elapsed_ms"].is_u64());
    assert_eq!(v["final_states"].as_array().unwrap().len(), 4);
    let cex = &v["counterexample"];
    assert_eq!(cex["kind"], "condition");
    let events = cex["events"].as_array().unwrap();
    // Two stores, two loads, two buffer updates, each an event of its own.
    assert_eq!(events.len(), 6);
    assert_eq!(
        events.iter().filter(|e| e["buffer_update"] == true).count(),
        2
    );
    for e in events {
        for k in ["step", "thread", "file", "line", "column", "op", "value"] {
            assert!(e.get(k).is_some(), "event lacks {k}: {e}");
        }
    }
    let out = fencer(&["check", sb.to_str().unwrap(), "--model", "sc", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "safe");
    assert!(v["counterexample"].is_null());
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn text_output_shows_counterexample_lines() {
    let sb = root().join("examples/sb.fen");
    let out = fencer(&["check", sb.to_str().unwrap(), "--model", "tso"]);
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("VIOLATION"), "{s}");
    assert!(s.contains("store x = 1 (to store buffer)"), "{s}");
    assert!(s.contains("upd(p)"), "{s}");
    assert!(s.contains("update x = 1 (store buffer -> memory)"), "{s}");
    assert!(s.contains("final: p.r1=0 q.r2=0"), "{s}");
}

#[test]
fn parse_error_exit_code_and_location() {
    let dir = std::env::temp_dir().join(format!("fencer-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.fen");
    std::fs::write(&f, "shared x;\nthread p {\n    x = ;\n}\n").unwrap();
    let out = fencer(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.fen:3:9: error: expected an expression, found `;`"),
        "{err}"
    );
    assert!(err.contains("    x = ;"), "{err}");
    assert!(err.contains('^'), "{err}");
    let out = fencer(&["check", f.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["line"], 3);
    assert_eq!(v["error"]["column"], 9);
    // Not UTF-8.
    std::fs::write(&f, [0xff, 0xfe, 0x00]).unwrap();
    assert_eq!(
        fencer(&["check", f.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        fencer(&["check", "/nonexistent/file.fen"]).status.code(),
        Some(2)
    );
    let sb = root().join("examples/sb.fen");
    assert_eq!(
        fencer(&["check", sb.to_str().unwrap(), "--model", "arm"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        fencer(&["check", sb.to_str().unwrap(), "--timeout", "-1"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(fencer(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(fencer(&[]).status.code(), Some(2));
    assert_eq!(fencer(&["--help"]).status.code(), Some(0));
}

#[test]
fn a_panic_on_any_thread_exits_4_with_one_line_and_json() {
    // No input is known to panic, so the binary's test-only FENCER_TEST_PANIC makes one:
    // on the main thread, on a thread `main` joins, and on one of several scoped workers
    // (as `--jobs` runs them). Rust's own exit code for a panic is 101.
    let sb = root().join("examples/sb.fen");
    for place in ["main", "thread", "workers"] {
        let run = |json: bool| {
            let mut c = Command::new(env!("CARGO_BIN_EXE_fencer"));
            c.args(["check", sb.to_str().unwrap(), "--jobs", "2"])
                .env("FENCER_TEST_PANIC", place)
                .env_remove("RUST_BACKTRACE");
            if json {
                c.arg("--json");
            }
            c.output().expect("run fencer")
        };
        let out = run(false);
        assert_eq!(out.status.code(), Some(4), "{place}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{place}: {err}");
        assert!(
            err.starts_with("fencer: internal error at crates/fencer-cli/src/main.rs:"),
            "{place}: {err}"
        );
        assert!(err.contains("FENCER_TEST_PANIC"), "{place}: {err}");
        let out = run(true);
        assert_eq!(out.status.code(), Some(4), "{place}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{place}: no JSON on stdout ({e}): {out:?}"));
        assert_eq!(v["verdict"], "error", "{v}");
        assert_eq!(v["error"]["internal"], true, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("internal error at"),
            "{v}"
        );
    }
}

#[test]
fn limits_exit_3_with_statistics() {
    let sb = root().join("examples/counter_mutex.fen");
    let out = fencer(&[
        "check",
        sb.to_str().unwrap(),
        "--max-executions",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "incomplete");
    assert_eq!(v["stopped_by"], "max-executions");
    assert_eq!(v["executions"], 1);
    let out = fencer(&["check", sb.to_str().unwrap(), "--max-depth", "2"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("INCOMPLETE"));
}

#[test]
fn timeout_exits_3_with_partial_statistics() {
    // Five threads of four stores each: far too many interleavings to finish in 0.3 s.
    let mut src = String::from("shared x = 0, y = 0;\n");
    for t in 0..5 {
        src.push_str(&format!(
            "thread t{t} {{ x = {t}; y = {t}; r = x; s = y; }}\n"
        ));
    }
    let dir = std::env::temp_dir().join(format!("fencer-cli-to-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("big.fen");
    std::fs::write(&f, src).unwrap();
    let t0 = std::time::Instant::now();
    let out = fencer(&[
        "check",
        f.to_str().unwrap(),
        "--model",
        "pso",
        "--timeout",
        "0.3",
        "--json",
    ]);
    assert!(t0.elapsed().as_secs() < 20);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "incomplete");
    assert_eq!(v["stopped_by"], "timeout");
    assert!(v["stats"]["events"].as_u64().unwrap() > 0);
}

#[test]
fn bench_runs_every_benchmark_program_with_its_documented_verdicts() {
    let dir = root().join("bench/fen");
    let out = fencer(&["bench", dir.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert!(runs.len() >= 60, "{} runs", runs.len());
    for r in runs {
        assert_eq!(r["verdict"], r["expected"], "{r}");
        assert!(r["executions"].as_u64().is_some(), "{r}");
        assert!(r["peak_rss_kib"].as_u64().is_some(), "{r}");
    }
    assert_eq!(v["mismatches"], 0);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn bench_scaling_times_one_worker_against_several_on_the_same_executions() {
    let file = root().join("bench/fen/fib4_true.fen");
    let out = fencer(&[
        "bench",
        file.to_str().unwrap(),
        "--scaling",
        "2",
        "--models",
        "sc,tso",
        "--jobs",
        "3",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["scaling"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["jobs"], 3, "{r}");
        assert!(r["executions"].as_u64().unwrap() > 100, "{r}");
        for k in ["jobs1_ms", "jobsn_ms", "side_by_side_ms", "thrown_away"] {
            assert_eq!(r[k].as_array().unwrap().len(), 2, "{k}: {r}");
        }
        // Optimal-DPOR splits exactly, and says what it threw away.
        assert!(r["thrown_away_median"].as_f64().unwrap() >= 0.0, "{r}");
        // Of two rounds' own speedups, the lower is the median.
        let one = r["jobs1_ms"].as_array().unwrap();
        let many = r["jobsn_ms"].as_array().unwrap();
        let per_round: Vec<f64> = (0..2)
            .map(|i| one[i].as_f64().unwrap() / many[i].as_f64().unwrap())
            .collect();
        let got = r["speedup_per_round_median"].as_f64().unwrap();
        assert!((got - per_round[0].min(per_round[1])).abs() < 1e-9, "{r}");
        assert!(r["ceiling_per_round_median"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(v["failures"], 0);
    // Rounds are counted from one.
    let out = fencer(&["bench", file.to_str().unwrap(), "--scaling", "0"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bench_no_spin_assume_explores_the_loops_as_written() {
    // Peterson's waiting loops: 6 executions under SC with the rewrite, 16 without.
    let file = root().join("bench/fen/peterson_fenced.fen");
    let execs = |extra: &[&str]| {
        let mut args = vec!["bench", file.to_str().unwrap(), "--models", "sc", "--json"];
        args.extend_from_slice(extra);
        let out = fencer(&args);
        assert_eq!(out.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let row = &v["runs"][0];
        (
            row["executions"].as_u64().unwrap(),
            row["no_spin_assume"].clone(),
        )
    };
    assert_eq!(execs(&[]), (6, serde_json::json!(false)));
    assert_eq!(execs(&["--no-spin-assume"]), (16, serde_json::json!(true)));
}

#[test]
fn bench_rejects_a_missing_path() {
    let out = fencer(&["bench", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/dir"));
}

#[test]
fn verbose_reports_races_and_algo_can_be_chosen() {
    let sb = root().join("examples/sb.fen");
    for algo in ["optimal", "source"] {
        let out = fencer(&[
            "check",
            sb.to_str().unwrap(),
            "-m",
            "tso",
            "--algo",
            algo,
            "--all",
            "-v",
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("dpor, {algo}")), "{text}");
        assert!(text.contains("races:"), "{text}");
        assert!(text.contains("executions: 4 "), "{text}");
    }
}

#[test]
fn litmus_answers_in_herd7_layout_and_as_json() {
    let dir = root().join("crates/fencer-litmus/tests/pso");
    let mp = dir.join("MP.litmus");
    let out = fencer(&["litmus", mp.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Test MP Allowed\nStates 3\n"), "{text}");
    assert!(text.contains("Observation MP Never 0 3"), "{text}");
    let out = fencer(&["litmus", mp.to_str().unwrap(), "-m", "pso", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tests"][0]["observation"], "Sometimes");
    assert_eq!(v["tests"][0]["states"].as_array().unwrap().len(), 4);
    // Several files end with a summary table.
    let lb = dir.join("LB.litmus");
    let out = fencer(&["litmus", mp.to_str().unwrap(), lb.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 tests, 2 answered"));
}

#[test]
fn litmus_bad_input_exits_2_with_a_position() {
    let dir = std::env::temp_dir().join(format!("fencer-litmus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.litmus");
    std::fs::write(&bad, "X86 bad\n{ }\n P0 ;\n FROB [x] ;\nexists ([x]=1)\n").unwrap();
    let out = fencer(&["litmus", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.litmus:4:2: error: unsupported instruction `FROB`"),
        "{err}"
    );
}

#[test]
fn a_huge_timeout_is_no_limit() {
    let sb = root().join("examples/sb.fen");
    let out = fencer(&["check", sb.to_str().unwrap(), "--timeout", "1e300"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn an_unknown_extension_lists_what_fencer_reads() {
    let out = fencer(&["check", "notes.txt"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("notes.txt"), "{err}");
    for ext in [".fen", ".litmus", ".c", ".ll", ".bc"] {
        assert!(err.contains(ext), "{err}");
    }
}

#[test]
fn usage_errors_with_json_are_json() {
    for args in [
        &["check", "--json", "--frobnicate", "x.fen"][..],
        &["check", "--json", "x.txt"][..],
        &["check", "--json"][..],
    ] {
        let out = fencer(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out:?}"));
        assert!(v["error"]["message"].is_string(), "{v}");
    }
}

#[test]
fn check_reads_litmus_tests() {
    let dir = std::env::temp_dir().join(format!("fencer-cli-lit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("SB.litmus");
    std::fs::write(
        &f,
        "X86 SB\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n",
    )
    .unwrap();
    let sc = fencer(&["check", f.to_str().unwrap(), "--model", "sc"]);
    let tso = fencer(&["check", f.to_str().unwrap(), "--model", "tso"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(sc.status.code(), Some(0), "{sc:?}");
    assert_eq!(tso.status.code(), Some(1), "{tso:?}");
}

#[test]
fn the_timeout_bounds_a_split_whose_first_execution_never_ends() {
    // Laying out a split tree runs a first execution (and a shard's frontier, a tree
    // prefix): those probes once ignored --timeout, and ran out of memory on this.
    let src = "shared x = 0, y = 0;\n\
               thread a { n = 0; while (n < 1000000000) { x = n; r = y; n = n + 1; } }\n\
               thread b { m = 0; while (m < 1000000000) { y = m; s = x; m = m + 1; } }\n";
    let dir = std::env::temp_dir().join(format!("fencer-cli-split-to-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("long.fen");
    std::fs::write(&f, src).unwrap();
    for split in [["--jobs", "2"], ["--shard", "1/2"]] {
        let t0 = std::time::Instant::now();
        let out = fencer(&[
            "check",
            f.to_str().unwrap(),
            split[0],
            split[1],
            "--max-depth",
            "100000000",
            "--timeout",
            "0.3",
            "--json",
        ]);
        assert!(t0.elapsed().as_secs() < 20, "{split:?}");
        assert_eq!(out.status.code(), Some(3), "{split:?}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["stopped_by"], "timeout", "{split:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_timeout_bounds_loading_too() {
    // clang alone takes longer than a millisecond.
    let c = root().join("examples/c/sb.c");
    let out = fencer(&["check", c.to_str().unwrap(), "--timeout", "0.001", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "incomplete");
    assert_eq!(v["stopped_by"], "timeout");
}

#[test]
fn llvm_ir_that_kills_llvm_is_bad_input() {
    // Found by fencer-fuzz: LLVM aborts on the first two and crashes on the third; fencer
    // reads them in a child process first. (The fourth, which makes LLVM's verifier loop,
    // costs the child's one-minute limit: not run here.)
    let dir = root().join("crates/fencer-cli/tests/llvm");
    for f in [
        "c-bad-datalayout.ll",
        "c-verifier-abort.ll",
        "c-debuginfo-segv.ll",
    ] {
        let path = dir.join(f);
        let out = fencer(&["check", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{f}: {out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("LLVM cannot read this IR"), "{f}: {err}");
        assert!(err.contains(f), "{f}: {err}");
    }
}

/// The `// robust: tso=... pso=...` line of an example.
fn robustness(path: &Path) -> Vec<(String, bool)> {
    let src = std::fs::read_to_string(path).unwrap();
    let line = src
        .lines()
        .find_map(|l| l.strip_prefix("// robust:"))
        .unwrap_or_else(|| panic!("{} has no `// robust:` line", path.display()));
    line.split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("model=yes|no");
            (k.to_string(), v == "yes")
        })
        .collect()
}

#[test]
fn robust_every_example_by_both_methods() {
    for ex in examples() {
        let file = ex.to_str().unwrap();
        let safe_sc = expectations(&ex)
            .iter()
            .any(|(m, v)| m == "sc" && v == "safe");
        for (model, want) in robustness(&ex) {
            for method in ["monitor", "exhaustive"] {
                let out = fencer(&[
                    "robust", file, "--model", &model, "--method", method, "--json",
                ]);
                let v: serde_json::Value =
                    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{file}: {e}"));
                assert_eq!(v["robust"], want, "{file} {model} {method}");
                // Not robust, or a safety violation under SC: exit code 1.
                let code = if want && safe_sc { 0 } else { 1 };
                assert_eq!(out.status.code(), Some(code), "{file} {model} {method}");
                for viol in v["violations"].as_array().unwrap() {
                    for k in ["store", "access", "count", "cycle", "witness"] {
                        assert!(!viol[k].is_null(), "{file}: violation without {k}");
                    }
                    assert!(viol["count"].as_u64().unwrap() >= 1);
                    assert!(viol["store"]["line"].as_u64().unwrap() > 0);
                    assert_eq!(viol["witness"]["kind"], "sc-violation");
                }
            }
        }
    }
}

#[test]
fn robust_text_shows_pairs_cycles_and_witnesses() {
    let sb = root().join("examples/sb.fen");
    let out = fencer(&["robust", sb.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("NOT ROBUST: 2 distinct violations"), "{text}");
    assert!(
        text.contains("p's store at sb.fen:10:5 is overtaken by q at sb.fen:16:5"),
        "{text}"
    );
    assert!(
        text.contains("cycle:") && text.contains("back to #1"),
        "{text}"
    );
    assert!(
        text.contains("upd(p)"),
        "the witness shows buffer updates: {text}"
    );
    let fenced = root().join("examples/sb_fenced.fen");
    let out = fencer(&["robust", fenced.to_str().unwrap(), "--model", "pso"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("ROBUST: every execution"));
}

#[test]
fn robust_litmus_and_errors() {
    let sb = root().join("crates/fencer-litmus/tests/pso/SB+mfences.litmus");
    let out = fencer(&["robust", sb.to_str().unwrap(), "--model", "tso"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let mp = root().join("crates/fencer-litmus/tests/pso/MP.litmus");
    let out = fencer(&["robust", mp.to_str().unwrap(), "--model", "pso"]);
    assert_eq!(out.status.code(), Some(1));
    // SC is not a weak model: a usage error.
    let out = fencer(&["robust", mp.to_str().unwrap(), "--model", "sc"]);
    assert_eq!(out.status.code(), Some(2));
    // Unknown extension, and a parse error with its position.
    let out = fencer(&["robust", "prog.txt", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("does not know"));
    let dir = std::env::temp_dir().join(format!("fencer-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.fen");
    std::fs::write(&bad, "shared x = 0;\nthread t { x = ; }\n").unwrap();
    let out = fencer(&["robust", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.fen:2:"));
    // A limit before anything is found: unknown, exit 3, with the statistics so far.
    let tw = root().join("examples/peterson_pso.fen");
    let out = fencer(&[
        "robust",
        tw.to_str().unwrap(),
        "--max-executions",
        "1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["robust"].is_null());
    assert_eq!(v["stopped_by"], "max-executions");
    assert_eq!(v["executions"], 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn divine_ltl_formulas_are_read_as_divine_reads_them() {
    let model = root()
        .join("examples/dve/peterson.dve")
        .display()
        .to_string();
    let dir = std::env::temp_dir().join(format!("fencer-cli-divine-ltl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The same properties with and without spaces (DiVinE's own files have none), and
    // one whose binary operators group from the left, as DiVinE's grammar has them.
    let ltl = dir.join("p.ltl");
    std::fs::write(
        &ltl,
        "#define w (P0.want)\n#define c (P0.cs)\n#property G(w->Fc)\n#property G(w -> F c)\n\
         #property GFc\n#property G F c\n#property c&&wUc\n#property (c && w) U c\n",
    )
    .unwrap();
    let out = fencer(&["check", &model, "--ltl", ltl.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<&str> = v["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["report"]["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts.len(), 6, "{v}");
    for pair in verdicts.chunks(2) {
        assert_eq!(pair[0], pair[1], "{verdicts:?}");
    }
    assert_eq!(verdicts[0], "safe");
    assert_eq!(verdicts[2], "violation");
    // On the command line, fencer's grammar first; a formula in DiVinE's style whose
    // words are no propositions in it is read as DiVinE would.
    let out = fencer(&["check", &model, "--ltl", "G(turn->Fturn)"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = fencer(&["check", &model, "--ltl", "G(turn->Fnoturn)"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`Fnoturn` is not defined"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_dve_index_out_of_range_names_the_valid_ones() {
    let dir = std::env::temp_dir().join(format!("fencer-cli-dve-oob-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("oob.dve");
    std::fs::write(
        &f,
        "byte a[3];\nbyte k = 3;\nprocess P { state s, t; init s; trans s -> t { effect a[k] = 1; }; }\nsystem async;\n",
    )
    .unwrap();
    let out = fencer(&["check", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "index 3 is out of range: the array has 3 elements, valid indices are 0 to 2"
        ),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn dve_models_through_check() {
    let ex = |f: &str| root().join("examples/dve").join(f).display().to_string();
    // Safe, with a goal that is never reached.
    let out = fencer(&[
        "check",
        &ex("peterson.dve"),
        "--reach",
        "P0.cs + P1.cs > 1",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "safe");
    assert_eq!(v["engine"], "explicit");
    assert_eq!(v["stats"]["states"], 20);
    assert_eq!(v["stats"]["transitions"], 34);
    // A goal that is reached: the shortest path to it.
    let out = fencer(&["check", &ex("peterson.dve"), "--reach", "P0.cs"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("counterexample (reached)"), "{text}");
    assert!(text.contains("P0: wait -> cs"), "{text}");
    // A deadlock, only when asked for.
    assert_eq!(
        fencer(&["check", &ex("philosophers.dve")]).status.code(),
        Some(0)
    );
    let out = fencer(&["check", &ex("philosophers.dve"), "--deadlock"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("counterexample (deadlock)"));
    // A run-time error (a byte overflows), and an `input` constant that avoids it.
    let out = fencer(&["check", &ex("counter.dve")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .contains("value 256 out of range of byte"));
    assert_eq!(
        fencer(&["check", &ex("counter.dve"), "-D", "limit=100"])
            .status
            .code(),
        Some(0)
    );
    // Bad input: a bad -D, a bad --reach, a broken model, each exit 2 with a position.
    let out = fencer(&["check", &ex("counter.dve"), "-D", "limit"]);
    assert_eq!(out.status.code(), Some(2));
    let out = fencer(&["check", &ex("peterson.dve"), "--reach", "P0.nowhere"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`nowhere` is not a state of `P0`"));
    let dir = std::env::temp_dir().join(format!("fencer-dve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.dve");
    std::fs::write(
        &bad,
        "byte x;\nprocess P { state a; init b; }\nsystem async;\n",
    )
    .unwrap();
    let out = fencer(&["check", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.dve:2:27") && err.contains("`b` is not a state of `P`"),
        "{err}"
    );
    // A limit: exit 3.
    let out = fencer(&[
        "check",
        &ex("counter.dve"),
        "-D",
        "limit=100",
        "--max-states",
        "10",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(3));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn version_help_and_model_names_serve_a_newcomer() {
    let out = fencer(&["--version"]);
    let v = String::from_utf8_lossy(&out.stdout);
    assert!(
        v.contains("commit") && v.contains("C front-end") && v.contains("4 internal error"),
        "{v}"
    );
    // Every file an example in `--help` names exists.
    for cmd in [
        "check", "litmus", "robust", "repair", "merge", "replay", "bench",
    ] {
        let help = String::from_utf8_lossy(&fencer(&[cmd, "--help"]).stdout).to_string();
        for word in help.split_whitespace() {
            if word.starts_with("examples/") {
                assert!(root().join(word).exists(), "`{cmd} --help` names {word}");
            }
        }
    }
    // Model names in any case, as other tools write them.
    let sb = root().join("examples/sb.fen").display().to_string();
    let out = fencer(&["check", &sb, "--model", "TSO", "--jobs", "1"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_robust_verdict_on_a_program_that_frees_names_what_it_takes_for_granted() {
    // The trace does not order an access before another thread's free (ARCHITECTURE.md,
    // "Robustness"): a robust answer that could rest on that says so, in text and JSON.
    let f = root().join("crates/fencer-c/tests/c/tls_destructor.c");
    if !f.exists() || Command::new("clang-14").arg("--version").output().is_err() {
        return;
    }
    let f = f.display().to_string();
    let out = fencer(&["robust", &f, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["robust"], true, "{v}");
    assert!(v["assumptions"].to_string().contains("free"), "{v}");
    let text = String::from_utf8_lossy(&fencer(&["robust", &f]).stdout).to_string();
    assert!(text.contains("assuming: a cycle through"), "{text}");
    // A program without frees has nothing to assume.
    let sb = root().join("examples/sb_fenced.fen").display().to_string();
    let out = fencer(&["robust", &sb, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["assumptions"], serde_json::json!([]), "{v}");
}

/// `fencer man` documents every visible command with its options, and `fencer
/// completions` writes a script for each shell clap knows.
#[test]
fn man_page_and_completions() {
    let man = fencer(&["man"]);
    assert_eq!(man.status.code(), Some(0));
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH fencer 1"),
        "{page}"
    );
    for cmd in [
        "CHECK", "LITMUS", "ROBUST", "REPAIR", "REPLAY", "MERGE", "BENCH",
    ] {
        assert!(
            page.contains(&format!(".SH \"FENCER {cmd}\"")),
            "no {cmd} section"
        );
    }
    assert!(
        page.contains("max\\-depth"),
        "check's options are in the page"
    );
    assert!(!page.contains("internal\\-read\\-llvm"));
    for shell in ["bash", "zsh", "fish"] {
        let c = fencer(&["completions", shell]);
        assert_eq!(c.status.code(), Some(0), "{shell}");
        let script = String::from_utf8_lossy(&c.stdout);
        assert!(
            script.contains("fencer") && script.contains("max-depth"),
            "{shell}"
        );
    }
    assert_eq!(fencer(&["completions", "tcsh"]).status.code(), Some(2));
}

/// `--quiet` prints the verdict's line and what qualifies it, with the same exit code.
#[test]
fn quiet_prints_the_verdict_and_its_qualifications() {
    let sb = root().join("examples/sb.fen");
    let sb = sb.to_str().unwrap();
    let q = fencer(&["check", sb, "--model", "tso", "--quiet"]);
    assert_eq!(q.status.code(), Some(1));
    let text = String::from_utf8_lossy(&q.stdout);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("VIOLATION"), "{text}");
    let safe = fencer(&["check", sb, "-q", "--unroll", "1"]);
    assert_eq!(safe.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&safe.stdout).starts_with("sb under SC"));
    assert_eq!(
        fencer(&["check", sb, "-q", "--json"]).status.code(),
        Some(2)
    );
}

/// Every JSON result says which schema it is written in.
#[test]
fn json_results_name_their_schema() {
    let ex = root().join("examples");
    for args in [
        vec!["check", "sb.fen", "--json"],
        vec!["check", "dve/peterson.dve", "--json"],
        vec!["check", "cub/lock.cub", "--json"],
        vec!["robust", "sb.fen", "--json"],
    ] {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a[1] = ex.join(&a[1]).display().to_string();
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = fencer(&a);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v["schema"], "fencer-report/1", "{args:?}");
    }
    let lit = ex.join("MP.litmus");
    let out = fencer(&["litmus", lit.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["schema"], "fencer-litmus/1");
}

/// LLVM IR without debug information gets a note that says why every line is 0; IR
/// with it gets none.
#[test]
fn ir_without_debug_info_says_so() {
    if Command::new("clang-14").arg("--version").output().is_err() {
        eprintln!("skipped: clang-14 is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("fencer-nodebug-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = root().join("examples/c/sb.c");
    for (name, g) in [("nog.ll", false), ("g.ll", true)] {
        let ll = dir.join(name);
        let mut cc = Command::new("clang-14");
        cc.args(["-O0", "-S", "-emit-llvm"]);
        if g {
            cc.arg("-g");
        }
        assert!(cc.arg(&src).arg("-o").arg(&ll).status().unwrap().success());
        let out = fencer(&["check", ll.to_str().unwrap(), "--model", "tso"]);
        assert_eq!(out.status.code(), Some(1));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.contains("has no debug information"),
            !g,
            "{name}: {text}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Nidhugg's `--sc`, `--tso`, `--pso` mean `--model`; given with it, they are refused.
#[test]
fn nidhuggs_model_flags() {
    let sb = root().join("examples/sb.fen");
    let sb = sb.to_str().unwrap();
    let tso = fencer(&["check", sb, "--tso", "--json"]);
    assert_eq!(tso.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&tso.stdout).unwrap();
    assert_eq!(v["model"], "tso");
    assert_eq!(fencer(&["check", sb, "--sc"]).status.code(), Some(0));
    assert_eq!(fencer(&["check", sb, "--pso", "-q"]).status.code(), Some(1));
    assert_eq!(
        fencer(&["check", sb, "--tso", "--model", "sc"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        fencer(&["check", sb, "--tso", "--pso"]).status.code(),
        Some(2)
    );
}
