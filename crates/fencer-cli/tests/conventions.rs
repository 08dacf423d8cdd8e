//! What a verdict takes for granted is said with it, and options that change what counts
//! as a violation are honoured or refused, never ignored: `--hangs`, `--no-spurious-wakeups`,
//! SV-COMP's conventions, and the engines that do not look for deadlocks. Needs clang-14.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fencer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencer"))
        .args(args)
        .output()
        .expect("run fencer")
}

fn c_test(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fencer-c/tests/c")
        .join(name)
}

fn json(args: &[&str]) -> (serde_json::Value, Option<i32>) {
    let mut a = args.to_vec();
    a.push("--json");
    let out = fencer(&a);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (v, out.status.code())
}

#[test]
fn hangs_are_violations_unless_asked_otherwise() {
    let hang = c_test("hang.c");
    let f = hang.to_str().unwrap();
    let (v, code) = json(&["check", f]);
    assert_eq!(code, Some(1));
    assert_eq!(v["counterexample"]["kind"], "hang");
    assert_eq!(v["hangs"], "violation");
    let (v, code) = json(&["check", f, "--hangs", "ignore"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["hangs"], "blocked");
    assert!(v["stats"]["waits_forever"].as_u64().unwrap() >= 1, "{v}");
    // The text says so too.
    let out = fencer(&["check", f, "--hangs", "ignore"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hangs: an execution that ends with a thread waiting forever"));
    assert!(text.contains("waiting forever 1"), "{text}");
    // A deadlock at a mutex is one too.
    let (v, code) = json(&[
        "check",
        c_test("deadlock.c").to_str().unwrap(),
        "--hangs",
        "ignore",
    ]);
    assert_eq!(code, Some(0), "{v}");
}

#[test]
fn sv_comp_programs_default_to_ignoring_hangs_and_can_ask_for_them() {
    let dir = std::env::temp_dir().join(format!("fencer-conventions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("svcomp_hang.c");
    std::fs::write(
        &f,
        "#include <pthread.h>\nvoid reach_error() {}\nvolatile int flag;\n\
         void *w(void *a) { while (!flag) {} return 0; }\n\
         int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_join(t, 0); \
         return 0; }\n",
    )
    .unwrap();
    let p = f.to_str().unwrap();
    let (v, code) = json(&["check", p]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["hangs"], "blocked");
    let (v, code) = json(&["check", p, "--hangs", "violation"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["counterexample"]["kind"], "hang");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn spurious_wake_ups_are_explored_unless_turned_off_and_the_verdict_says_so() {
    let f = c_test("cond_wait_spurious.c");
    let p = f.to_str().unwrap();
    let (v, code) = json(&["check", p]);
    assert_eq!(code, Some(1), "{v}");
    assert!(v["assumptions"].as_array().unwrap().is_empty());
    let (v, code) = json(&["check", p, "--no-spurious-wakeups"]);
    assert_eq!(code, Some(0), "{v}");
    let a = v["assumptions"].as_array().unwrap();
    assert!(
        a.iter()
            .any(|s| s.as_str().unwrap().contains("spurious wake-ups")),
        "{v}"
    );
    let out = fencer(&["check", p, "--no-spurious-wakeups"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("assuming: pthread_cond_wait"));
}

#[test]
fn options_for_another_kind_of_input_are_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sb = root.join("examples/sb.fen");
    let out = fencer(&["check", sb.to_str().unwrap(), "--no-spurious-wakeups"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("applies to C programs"));
    let dve = std::fs::read_dir(root.join("examples/dve"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dve"))
        .expect("a DVE example");
    let out = fencer(&["check", dve.to_str().unwrap(), "--hangs", "ignore"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--hangs does not apply") && err.contains("--deadlock"),
        "{err}"
    );
}

#[test]
fn the_symbolic_engine_says_it_does_not_look_for_deadlocks() {
    let f = c_test("deadlock.c");
    let (v, _) = json(&["check", f.to_str().unwrap(), "--engine", "abpress"]);
    let a = v["assumptions"].as_array().unwrap();
    assert!(
        a.iter()
            .any(|s| s.as_str().unwrap().contains("deadlocks and hangs")),
        "{v}"
    );
    assert!(v["hangs"].is_null(), "{v}");
    // The text says it too, under the verdict.
    let out = fencer(&["check", f.to_str().unwrap(), "--engine", "abpress"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("assuming: deadlocks and hangs are not looked for"),
        "{text}"
    );
}
