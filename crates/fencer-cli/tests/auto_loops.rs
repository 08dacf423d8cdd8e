//! `--engine auto` on C programs whose loops never end: when every thread bound of DPOR's
//! shallow rounds cuts executions, under SC, abpress is tried within a budget and, where
//! it answers, its answer is the check's, saying why auto chose it; where it does not, or
//! where the user asked for DPOR's search (`--engine dpor`, `--unroll`, another model),
//! DPOR explores as before. Needs clang-14.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fencer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencer"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run fencer")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn program(name: &str, src: &str) -> String {
    let dir = std::env::temp_dir().join(format!("fencer-auto-loops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, src).unwrap();
    p.to_string_lossy().into_owned()
}

const PING_PONG: &str = "examples/c/ping_pong.c";

#[test]
fn a_program_that_never_ends_is_proved_by_abpress() {
    let o = fencer(&["check", PING_PONG]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("SAFE for every input and interleaving (no loop bound)"),
        "{out}"
    );
    assert!(
        out.contains("engine: --engine auto chose abpress: its threads ran on past each bound"),
        "{out}"
    );
    // What abpress does not look for is said, not hidden.
    assert!(
        out.contains("assuming: deadlocks and hangs are not looked for"),
        "{out}"
    );
    let j = json(&fencer(&["check", PING_PONG, "--json"]));
    assert_eq!(j["verdict"], "safe", "{j}");
    assert_eq!(j["engine"], "abpress", "{j}");
    assert_eq!(j["engine_choice"]["engine"], "abpress", "{j}");
    assert!(
        j["engine_choice"]["why"]
            .as_str()
            .is_some_and(|w| w.contains("256 and 16384 events per thread")),
        "{j}"
    );
}

#[test]
fn a_bug_in_a_program_that_never_ends_is_still_found() {
    // The second thread checks the first one's mark: wrong in its first turn, which
    // DPOR's first shallow round reaches (a round's violation is the check's answer).
    let src = std::fs::read_to_string(root().join(PING_PONG))
        .unwrap()
        .replace(
            "assert(atomic_load(&working) == 2);",
            "assert(atomic_load(&working) == 1);",
        );
    let f = program("ping_pong_bug.c", &src);
    let o = fencer(&["check", &f, "--json"]);
    let j = json(&o);
    assert_eq!(o.status.code(), Some(1), "{j}");
    assert_eq!(j["verdict"], "violation", "{j}");
    assert_eq!(j["engine"], "dpor", "{j}");
}

#[test]
fn dpor_is_kept_where_asked_for() {
    for extra in [
        &["--engine", "dpor"][..],
        &["--unroll", "3"],
        &["--model", "tso"],
        &["--max-depth", "5000"],
    ] {
        let mut args = vec!["check", PING_PONG, "--json", "--timeout", "3"];
        args.extend_from_slice(extra);
        let o = fencer(&args);
        let j = json(&o);
        assert_eq!(o.status.code(), Some(3), "{extra:?}: {j}");
        assert_eq!(j["engine"], "dpor", "{extra:?}: {j}");
        assert!(j.get("engine_choice").is_none(), "{extra:?}: {j}");
    }
}

#[test]
fn where_abpress_has_no_answer_dpor_explores_on_and_says_so() {
    // A counter that grows for ever: abpress cannot prove it within its budget.
    let f = program(
        "count_up.c",
        "#include <assert.h>\nint count;\n\
         int main(void) { for (;;) { count = count + 1; assert(count > 0); } return 0; }\n",
    );
    let o = fencer(&["check", &f, "--json", "--timeout", "4"]);
    assert_eq!(o.status.code(), Some(3));
    let j = json(&o);
    assert_eq!(j["engine"], "dpor", "{j}");
    let notes = j["notes"].to_string();
    assert!(notes.contains("--engine auto tried abpress first"), "{j}");
}
