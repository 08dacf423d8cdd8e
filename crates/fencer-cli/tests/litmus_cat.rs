//! `fencer litmus --cat`: litmus tests through herd7's own `.cat` models. The oracle is
//! herd7's recorded output (`../shared/litmus/c11/*.out`) and, for X86, fencer's built-in
//! x86-TSO. Needs `../shared` (herd7's model library is not in the repository); each test
//! says so and skips without it, except those that must fail before any model is read.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fencer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencer"))
        .args(args)
        .current_dir(root())
        .env_remove("FENCER_HERD_LIBDIR")
        .output()
        .expect("run fencer")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const LIBDIR: &str = "../shared/herd-libdir";
const C11: &str = "../shared/litmus/c11/catalogue-c11popl15";

fn shared() -> bool {
    let here = root().join(LIBDIR).join("stdlib.cat").exists();
    if !here {
        eprintln!("skipped: ../shared (herd7's model library and the corpus) is not here");
    }
    here
}

fn herd_lines(s: &str) -> Vec<&str> {
    s.lines()
        .filter(|l| !l.is_empty() && !l.starts_with("Hash=") && !l.starts_with("Time "))
        .collect()
}

#[test]
fn a_c11_test_prints_what_herd7_prints_with_either_spelling() {
    if !shared() {
        return;
    }
    let test = format!("{C11}/a1_reorder.litmus");
    let herd = std::fs::read_to_string(root().join(format!("{C11}/a1_reorder.out"))).unwrap();
    for args in [
        vec!["litmus", &test, "--cat", "rc11.cat", "--libdir", LIBDIR],
        vec!["litmus", "-set-libdir", LIBDIR, "-model", "rc11.cat", &test],
    ] {
        let o = fencer(&args);
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        // A data race: herd7 answers `Undef` and names the flag.
        assert_eq!(herd_lines(&out), herd_lines(&herd), "{out}");
        assert!(
            out.contains("Undef\n") && out.contains("Flag *undef*"),
            "{out}"
        );
    }
    let o = fencer(&[
        "litmus", &test, "--cat", "rc11.cat", "--libdir", LIBDIR, "--json",
    ]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["tests"][0]["flags"][0], "*undef*");
    assert_eq!(j["tests"][0]["positive"], 2);
}

#[test]
fn a_test_herd7_rejects_is_rejected_with_what_to_write() {
    if !shared() {
        return;
    }
    let o = fencer(&[
        "litmus",
        &format!("{C11}/fig6.litmus"),
        "--cat",
        "rc11.cat",
        "--libdir",
        LIBDIR,
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("fig6.litmus:12:3"), "{out}");
    assert!(out.contains("atomic_store_explicit"), "{out}");
}

#[test]
fn x86_through_x86tso_cat_answers_as_the_built_in_model() {
    if !shared() {
        return;
    }
    let built_in = fencer(&["litmus", "examples/MP.litmus"]);
    let cat = fencer(&[
        "litmus",
        "examples/MP.litmus",
        "--cat",
        "x86tso.cat",
        "--libdir",
        LIBDIR,
    ]);
    assert_eq!(cat.status.code(), Some(0), "{}", text(&cat));
    assert_eq!(cat.stdout, built_in.stdout, "{}", text(&cat));
}

#[test]
fn options_that_do_not_apply_and_missing_models_are_errors() {
    // No model library is needed to refuse these.
    let o = fencer(&[
        "litmus",
        "examples/MP.litmus",
        "--cat",
        "x86tso.cat",
        "--model",
        "sc",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--model does not apply with --cat"));
    let o = fencer(&["litmus", "examples/MP.litmus", "--cat", "no-such.cat"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--libdir"), "{}", text(&o));
    let o = fencer(&["litmus", "examples/MP.litmus", "--libdir", "x"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    if !shared() {
        return;
    }
    // A model of another architecture's tests, as herd7 says.
    let o = fencer(&[
        "litmus",
        "examples/MP.litmus",
        "--cat",
        "rc11.cat",
        "--libdir",
        LIBDIR,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("architecture mismatch between test and model (X86 vs. C)"),
        "{}",
        text(&o)
    );
    // A C test without a model: the built-in models are for X86.
    let o = fencer(&["litmus", &format!("{C11}/a1.litmus")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--cat"), "{}", text(&o));
}

#[test]
fn a_timeout_stops_the_enumeration_with_a_partial_answer() {
    if !shared() {
        return;
    }
    // Two locked instructions and six writes to `x`: millions of candidates (every
    // coherence order of six writes, for each reads-from choice).
    let dir = std::env::temp_dir().join(format!("fencer-cat-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let test = dir.join("big.litmus");
    std::fs::write(
        &test,
        "X86 big\n{ }\n P0 | P1 | P2 ;\n MOV [x],$1 | MOV [x],$2 | MOV EAX,[x] ;\n \
         LOCK INC [x] | LOCK INC [x] | MOV EBX,[x] ;\n MOV [x],$2 | MOV [x],$1 | MOV ECX,[x] ;\n\
         locations [x; 2:EAX; 2:EBX; 2:ECX]\nexists (true)\n",
    )
    .unwrap();
    let t = test.display().to_string();
    let o = fencer(&[
        "litmus",
        &t,
        "--cat",
        "x86tso.cat",
        "--libdir",
        LIBDIR,
        "--timeout",
        "0.5",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("(incomplete: a limit stopped"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_cat_times_tests_and_holds_them_to_herd7s_answers() {
    if !shared() {
        return;
    }
    let test = format!("{C11}/a1.litmus");
    let o = fencer(&[
        "bench", &test, "--cat", "rc11.cat", "--libdir", LIBDIR, "--rounds", "1", "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(j["runs"][0]["result"], "Ok");
    assert_eq!(j["runs"][0]["states"], 2);
    assert_eq!(j["summary"]["tests"], 1);
    // Stand-ins for herd7: one prints herd7's recorded answer, one a wrong one.
    let dir = std::env::temp_dir().join(format!("fencer-bench-cat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = root().join(format!("{C11}/a1.out"));
    for (name, body, agrees) in [
        ("right", format!("cat {}", out.display()), true),
        (
            "wrong",
            format!("sed 's/^Ok$/No/' {}", out.display()),
            false,
        ),
    ] {
        let script = dir.join(name);
        std::fs::write(&script, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::process::Command::new("chmod")
            .arg("+x")
            .arg(&script)
            .status()
            .unwrap();
        let s = script.display().to_string();
        let o = fencer(&[
            "bench", &test, "--cat", "rc11.cat", "--libdir", LIBDIR, "--rounds", "1", "--herd7", &s,
        ]);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(if agrees { 0 } else { 1 }), "{t}");
        assert!(
            t.contains(if agrees {
                "0 disagreement(s)"
            } else {
                "1 disagreement(s)"
            }),
            "{t}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
