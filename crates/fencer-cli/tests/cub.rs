//! `fencer check FILE.cub`: verdicts, exit codes, JSON, invariants, errors.

use std::process::{Command, Output};

fn fencer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fencer"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("run fencer")
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("json on stdout")
}

/// The operations of a counterexample's events, in order.
fn ops(v: &serde_json::Value) -> Vec<&str> {
    v["counterexample"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["op"].as_str().unwrap())
        .collect()
}

#[test]
fn safe_with_invariant() {
    let o = fencer(&["check", "examples/cub/lock.cub", "--invariant"]);
    assert_eq!(o.status.code(), Some(0));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("SAFE for any number of processes"), "{t}");
    assert!(t.contains("not (PC[#1] = Crit && PC[#2] = Crit)"), "{t}");
    let o = fencer(&["check", "examples/cub/lock.cub", "--invariant", "--json"]);
    let v = json(&o);
    assert_eq!(v["verdict"], "safe");
    assert_eq!(v["engine"], "param");
    assert!(v["stats"]["nodes"].as_u64().unwrap() >= 1);
    assert!(!v["invariant"].as_array().unwrap().is_empty());
}

#[test]
fn unsafe_with_trace() {
    let o = fencer(&["check", "examples/cub/lock_bug.cub", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["verdict"], "violation");
    let ops = ops(&v);
    assert_eq!(ops.len(), 6, "{ops:?}");
    assert!(
        ops.iter().filter(|o| o.starts_with("set(")).count() == 2,
        "{ops:?}"
    );
}

#[test]
fn limits_and_errors() {
    let o = fencer(&["check", "examples/cub/lock_bug.cub", "--max-nodes", "1"]);
    assert_eq!(o.status.code(), Some(3));
    let dir = std::env::temp_dir().join(format!("fencer-cub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.cub");
    std::fs::write(&bad, "var X : int\nunsafe () { X = Y }\n").unwrap();
    let o = fencer(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("bad.cub:2:17") && e.contains("unknown variable `Y`"),
        "{e}"
    );
    let o = fencer(&["check", bad.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(json(&o)["error"]["line"], 2);
    // A weak variable: TSO by default, where `unsafe` must say whose view it reads.
    let weak = dir.join("weak.cub");
    std::fs::write(
        &weak,
        "weak var X : int\ninit () { X = 0 }\nunsafe () { X = 2 }\ntransition t ([p]) requires { X = 0 } { X := 1 }\n",
    )
    .unwrap();
    let o = fencer(&["check", weak.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("weak.cub:3:13") && e.contains("p @ X"), "{e}");
    let o = fencer(&["check", weak.to_str().unwrap(), "--model", "sc"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A weak write to every cell (`A[j] := case ...`) by a thread: each cell is written,
    // atomically (the cells it keeps are written back), so two processes cannot both see
    // their own cell set.
    let case = dir.join("case.cub");
    std::fs::write(
        &case,
        "weak array A[proc] : bool\ninit (i) { A[i] = False }\nunsafe (i j) { i @ A[i] = True && j @ A[j] = True }\ntransition t ([p]) { A[j] := case | j = p : True | _ : False }\n",
    )
    .unwrap();
    let o = fencer(&["check", case.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The README's TSO example: the flag protocol fails under TSO with a trace run on the
/// store-buffer machine, holds under SC, and `fence()` fixes it for any number of processes.
#[test]
fn tso_flags_and_fence() {
    let o = fencer(&["check", "examples/cub/flags_tso.cub", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["model"], "tso");
    let ops = ops(&v);
    assert_eq!(
        ops.iter().filter(|o| o.starts_with("enter(")).count(),
        2,
        "{ops:?}"
    );
    let o = fencer(&["check", "examples/cub/flags_tso.cub", "--model", "sc"]);
    assert_eq!(o.status.code(), Some(0));
    let o = fencer(&["check", "examples/cub/flags_tso_fence.cub"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("tso, backward reachability): SAFE for any number of processes"));
}

/// `--brab N`: same verdicts (an UNSAFE answer still comes with a trace run forward),
/// `algo` says so; refused under TSO; Cubicle's `german` (which plain backward search
/// does not finish) is SAFE with it.
#[test]
fn brab() {
    let o = fencer(&["check", "examples/cub/lock.cub", "--brab", "2", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["verdict"], "safe");
    assert_eq!(v["algo"], "brab");
    let o = fencer(&[
        "check",
        "examples/cub/lock_bug.cub",
        "--brab",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["verdict"], "violation");
    assert!(!v["counterexample"]["events"].as_array().unwrap().is_empty());
    let o = fencer(&["check", "examples/cub/flags_tso.cub", "--brab", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fencer(&["check", "examples/cub/lock.cub", "--forward-depth", "3"]);
    assert_eq!(o.status.code(), Some(2));
    let german = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/cubicle/classic/german.cub"
    );
    if std::path::Path::new(german).exists() {
        let o = fencer(&["check", german, "--brab", "2", "--max-nodes", "2000"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let t = String::from_utf8_lossy(&o.stdout);
        assert!(t.contains("SAFE for any number of processes"), "{t}");
        assert!(t.contains("brab:"), "{t}");
    }
}
