//! DVE under the DiVinE thesis's store buffers (`--model pso1`): the thesis's three models
//! against its Table 4.1/4.2, the transformation read back from its own output, the
//! atomic-writes file, and minimum repairs (brute force shows that Peterson has no repair
//! with 3 atomic writes). Tests that need `../shared` skip when it is absent.

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

fn thesis(file: &str) -> Option<String> {
    let p = root().join("../shared/dve/thesis").join(file);
    if p.exists() {
        Some(p.display().to_string())
    } else {
        eprintln!("skipped: ../shared/dve/thesis is not here (a clone without ../shared)");
        None
    }
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn counts(args: &[&str]) -> (u64, u64, i32) {
    let mut a = args.to_vec();
    a.push("--json");
    let o = fencer(&a);
    let j = json(&o);
    (
        j["stats"]["states"].as_u64().expect("states"),
        j["stats"]["transitions"].as_u64().expect("transitions"),
        o.status.code().unwrap_or(-1),
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fencer-dve-relaxed-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}

/// Table 4.2: Peterson has 196 states under SC and 7,267 with store buffers, exactly.
#[test]
fn peterson_state_counts_are_the_thesis_table() {
    let Some(p) = thesis("peterson_N2.dve") else {
        return;
    };
    assert_eq!(counts(&["check", &p]), (196, 371, 0));
    let (states, _, code) = counts(&["check", &p, "--model", "pso1"]);
    assert_eq!((states, code), (7267, 0));
}

/// Lamport's SC count is the thesis's; under pso1 the count (74,948,667 states, as in
/// Table 4.2) takes minutes and gigabytes: `cargo test -- --ignored` runs it.
#[test]
fn lamport_sc_count() {
    let Some(p) = thesis("lamport_N3.dve") else {
        return;
    };
    assert_eq!(counts(&["check", &p]).0, 29242);
}

#[test]
#[ignore = "74.9 M states: several minutes and about 5 GB"]
fn lamport_pso1_count_is_the_thesis_table() {
    let Some(p) = thesis("lamport_N3.dve") else {
        return;
    };
    assert_eq!(counts(&["check", &p, "--model", "pso1"]).0, 74_948_667);
}

/// Anderson under SC has 83 states (the thesis says 80; ../shared's README: two
/// independent translations agree on 83). Under pso1 the lost update of `next` (its
/// increment is one transition, but the new value waits in the buffer) lets `next - 2`
/// go below 0: with DVE's error semantics that is a run-time error, which the thesis's
/// DiVinE did not stop at, so its 380,224 is not comparable (see the closing note).
#[test]
fn anderson_under_pso1_underflows_next() {
    let Some(p) = thesis("anderson_N2.dve") else {
        return;
    };
    assert_eq!(counts(&["check", &p]).0, 83);
    let o = fencer(&["check", &p, "--model", "pso1", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j = json(&o);
    let c = &j["counterexample"];
    assert_eq!(c["kind"], "error");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("out of range of byte"),
        "{c}"
    );
    // The run shows buffer flushes as events of their own.
    let events = c["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["buffer_update"] == true));
}

/// Table 4.1's properties hold under SC and fail under pso1 with nothing atomic.
#[test]
fn thesis_properties_hold_under_sc_and_fail_under_pso1() {
    for m in ["peterson_N2", "anderson_N2", "lamport_N3"] {
        let (Some(model), Some(ltl)) = (thesis(&format!("{m}.dve")), thesis(&format!("{m}.ltl")))
        else {
            return;
        };
        let sc = fencer(&["check", &model, "--ltl", &ltl]);
        assert_eq!(sc.status.code(), Some(0), "{m} under SC");
        let weak = fencer(&["check", &model, "--ltl", &ltl, "--model", "pso1"]);
        assert_eq!(weak.status.code(), Some(1), "{m} under pso1");
        let text = String::from_utf8_lossy(&weak.stdout);
        assert!(text.contains("under pso1"), "{text}");
    }
}

/// What `fencer transform` writes is an ordinary model with the state space that
/// `check --model pso1` explores, with and without atomic writes and barriers.
#[test]
fn transformed_model_read_back_has_the_same_state_space() {
    let ex = root()
        .join("examples/dve/peterson.dve")
        .display()
        .to_string();
    let mut models = vec![ex];
    models.extend(thesis("peterson_N2.dve"));
    models.push(
        root()
            .join("examples/dve/philosophers.dve")
            .display()
            .to_string(),
    );
    for m in &models {
        for model in ["pso1", "tso", "pso"] {
            let out = tmp("t.dve").display().to_string();
            let o = fencer(&["transform", m, "--model", model, "-o", &out]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            // `transform` buffers every global; `check` leaves out those only one
            // process touches unless told not to.
            let direct = counts(&[
                "check",
                m,
                "--model",
                model,
                "--keep-going",
                "--buffer-private",
            ]);
            let back = counts(&["check", &out, "--keep-going"]);
            assert_eq!(direct, back, "{m} under {model}");
        }
    }
    let Some(p) = thesis("peterson_N2.dve") else {
        return;
    };
    let atomic = tmp("p.atomic");
    std::fs::write(
        &atomic,
        "# pos in both processes\natomic P_0 13 pos\natomic P_1 26 *\nbarrier P_0 14\n",
    )
    .unwrap();
    let a = atomic.display().to_string();
    let out = tmp("ta.dve").display().to_string();
    let o = fencer(&["transform", &p, "--atomic", &a, "-o", &out]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let direct = counts(&["check", &p, "--model", "pso1", "--atomic", &a]);
    assert_eq!(direct, counts(&["check", &out]));
    // Fewer buffered writes, fewer states.
    assert!(direct.0 < 7267, "{direct:?}");
}

#[test]
fn bad_atomic_files_and_models_are_reported() {
    let Some(p) = thesis("peterson_N2.dve") else {
        return;
    };
    let cases = [
        ("atomic P_9 13 pos\n", "no process `P_9`"),
        (
            "atomic P_0 2 pos\n",
            "no transition of `P_0` starts on line 2",
        ),
        ("atomic P_0 x pos\n", "expected a line number"),
        ("fence P_0 13\n", "expected `atomic PROCESS LINE VAR|*`"),
        ("barrier P_0 13 pos\n", "`barrier` takes 2 words"),
    ];
    for (text, want) in cases {
        let f = tmp("bad.atomic");
        std::fs::write(&f, text).unwrap();
        let o = fencer(&[
            "check",
            &p,
            "--model",
            "pso1",
            "--atomic",
            &f.display().to_string(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(want) && err.contains("bad.atomic:1"),
            "{text}: {err}"
        );
    }
    // pso1 is DVE's alone; --atomic needs a relaxed model.
    let fen = root().join("examples/sb.fen").display().to_string();
    assert_eq!(
        fencer(&["check", &fen, "--model", "pso1"]).status.code(),
        Some(2)
    );
    let o = fencer(&["check", &p, "--atomic", "x.atomic"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Peterson needs exactly 4 atomic writes (the thesis: its 4 are optimal, 3 cannot
/// suffice): the repair finds 4, and every set of 3 of the 6 write positions fails.
#[test]
fn peterson_repair_is_minimum_and_no_three_writes_suffice() {
    let (Some(p), Some(ltl)) = (thesis("peterson_N2.dve"), thesis("peterson_N2.ltl")) else {
        return;
    };
    let out = tmp("peterson.atomic");
    let o = fencer(&[
        "repair",
        &p,
        "--model",
        "pso1",
        "--ltl",
        &ltl,
        "--json",
        "--write",
        &out.display().to_string(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j = json(&o);
    assert_eq!(j["atomic_writes"], 4, "{j}");
    assert_eq!(j["writes"], 6);
    assert_eq!(
        j["writes_split"], 8,
        "the thesis's count of Peterson's writes"
    );
    // The written file makes the property hold.
    let f = out.display().to_string();
    let ok = fencer(&[
        "check", &p, "--model", "pso1", "--ltl", &ltl, "--atomic", &f,
    ]);
    assert_eq!(ok.status.code(), Some(0));
    // The six write positions: pos[i] = j, step[j-1] = i, pos[i] = 0 in each process.
    let writes = [
        "atomic P_0 13 pos",
        "atomic P_0 14 step",
        "atomic P_0 18 pos",
        "atomic P_1 26 pos",
        "atomic P_1 27 step",
        "atomic P_1 31 pos",
    ];
    for a in 0..6 {
        for b in a + 1..6 {
            for c in b + 1..6 {
                let f = tmp("three.atomic");
                std::fs::write(&f, format!("{}\n{}\n{}\n", writes[a], writes[b], writes[c]))
                    .unwrap();
                let o = fencer(&[
                    "check",
                    &p,
                    "--model",
                    "pso1",
                    "--ltl",
                    &ltl,
                    "--atomic",
                    &f.display().to_string(),
                ]);
                assert_eq!(o.status.code(), Some(1), "{a} {b} {c} repairs Peterson");
            }
        }
    }
}

/// Anderson and Lamport: sets no larger than the thesis's (24 and 13), each re-checked.
#[test]
fn anderson_and_lamport_repairs_are_no_larger_than_the_thesis() {
    for (m, bound) in [("anderson_N2", 24), ("lamport_N3", 13)] {
        let (Some(p), Some(ltl)) = (thesis(&format!("{m}.dve")), thesis(&format!("{m}.ltl")))
        else {
            return;
        };
        let out = tmp(&format!("{m}.atomic"));
        let f = out.display().to_string();
        let o = fencer(&[
            "repair", &p, "--model", "pso1", "--ltl", &ltl, "--json", "--write", &f,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{m}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        let j = json(&o);
        let n = j["atomic_writes"].as_u64().unwrap();
        let split = j["atomic_writes_split"].as_u64().unwrap();
        assert!(
            n >= 1 && split <= bound,
            "{m}: {n} ({split} split) > {bound}"
        );
        let ok = fencer(&[
            "check", &p, "--model", "pso1", "--ltl", &ltl, "--atomic", &f,
        ]);
        assert_eq!(ok.status.code(), Some(0), "{m} with {f}");
    }
}

/// A model that is wrong under SC is not repaired: exit 1 and the SC counterexample.
#[test]
fn a_model_wrong_under_sc_is_not_repaired() {
    let m = tmp("wrong.dve");
    std::fs::write(
        &m,
        "byte x;\nprocess P { state a, b; init a; trans a -> b { effect x = 1; }; }\nprocess Q { state a, b; init a; assert b: x == 0; trans a -> b { guard x == 1; }; }\nsystem async;\n",
    )
    .unwrap();
    let o = fencer(&["repair", &m.display().to_string(), "--model", "pso1"]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("wrong under SC") && text.contains("counterexample"),
        "{text}"
    );
}

/// A straight-line program: per thread, writes `x = v` and reads `r = x`.
#[derive(Clone, Debug)]
enum Op {
    W(&'static str, u8),
    R(usize, &'static str),
}

fn fen_text(threads: &[Vec<Op>], regs: usize) -> String {
    let mut s = String::from("shared x = 0, y = 0;\n");
    for (t, ops) in threads.iter().enumerate() {
        s.push_str(&format!("thread t{t} {{\n"));
        for op in ops {
            match op {
                Op::W(v, k) => s.push_str(&format!("    {v} = {k};\n")),
                Op::R(r, v) => s.push_str(&format!("    r{r} = {v};\n")),
            }
        }
        s.push_str("}\n");
    }
    // A condition that always holds, so that every final state is listed.
    let owner = |r: usize| {
        threads
            .iter()
            .position(|ops| ops.iter().any(|o| matches!(o, Op::R(q, _) if *q == r)))
            .unwrap()
    };
    let conds: Vec<String> = (0..regs)
        .map(|r| format!("t{}.r{r} >= 0", owner(r)))
        .collect();
    s.push_str(&format!("exists ({})\n", conds.join(" && ")));
    s
}

fn dve_text(threads: &[Vec<Op>]) -> String {
    let mut s = String::from("byte x = 0;\nbyte y = 0;\n");
    for (t, ops) in threads.iter().enumerate() {
        s.push_str(&format!("process T{t} {{\n"));
        for op in ops {
            if let Op::R(r, _) = op {
                s.push_str(&format!("byte r{r};\n"));
            }
        }
        let states: Vec<String> = (0..=ops.len()).map(|k| format!("s{k}")).collect();
        s.push_str(&format!("state {};\ninit s0;\ntrans\n", states.join(", ")));
        let trans: Vec<String> = ops
            .iter()
            .enumerate()
            .map(|(k, op)| {
                let eff = match op {
                    Op::W(v, val) => format!("{v} = {val}"),
                    Op::R(r, v) => format!("r{r} = {v}"),
                };
                format!("  s{k} -> s{} {{ effect {eff}; }}", k + 1)
            })
            .collect();
        s.push_str(&trans.join(",\n"));
        s.push_str(";\n}\n");
    }
    s.push_str("system async;\n");
    s
}

/// The same straight-line programs as `.fen` (the DPOR engine over fencer's own TSO/PSO
/// machine) and as DVE (store buffers built in by the transformation) reach the same
/// final register values under each model.
#[test]
fn dve_store_buffers_agree_with_the_program_semantics() {
    let mut programs: Vec<Vec<Vec<Op>>> = vec![
        // SB, MP, SB with forwarding.
        vec![
            vec![Op::W("x", 1), Op::R(0, "y")],
            vec![Op::W("y", 1), Op::R(1, "x")],
        ],
        vec![
            vec![Op::W("x", 1), Op::W("y", 1)],
            vec![Op::R(0, "y"), Op::R(1, "x")],
        ],
        vec![
            vec![Op::W("x", 1), Op::R(0, "x"), Op::R(1, "y")],
            vec![Op::W("y", 1), Op::R(2, "x")],
        ],
    ];
    // Random ones, from a fixed seed.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for _ in 0..6 {
        let mut reg = 0;
        let mut val = 0;
        let threads: Vec<Vec<Op>> = (0..2)
            .map(|_| {
                (0..2 + rnd(2))
                    .map(|_| {
                        let v = if rnd(2) == 0 { "x" } else { "y" };
                        if rnd(2) == 0 && reg < 3 {
                            reg += 1;
                            Op::R(reg - 1, v)
                        } else {
                            val += 1;
                            Op::W(v, val)
                        }
                    })
                    .collect()
            })
            .collect();
        if reg > 0 {
            programs.push(threads);
        }
    }
    for (n, threads) in programs.iter().enumerate() {
        let regs = threads
            .iter()
            .flatten()
            .filter(|o| matches!(o, Op::R(..)))
            .count();
        let values: u8 = threads
            .iter()
            .flatten()
            .filter(|o| matches!(o, Op::W(..)))
            .count() as u8;
        let fen = tmp(&format!("prog{n}.fen"));
        let dve = tmp(&format!("prog{n}.dve"));
        std::fs::write(&fen, fen_text(threads, regs)).unwrap();
        std::fs::write(&dve, dve_text(threads)).unwrap();
        let (fen, dve) = (fen.display().to_string(), dve.display().to_string());
        let owner = |r: usize| {
            threads
                .iter()
                .position(|ops| ops.iter().any(|o| matches!(o, Op::R(q, _) if *q == r)))
                .unwrap()
        };
        for model in ["sc", "tso", "pso"] {
            let j = json(&fencer(&[
                "check", &fen, "--model", model, "--all", "--json",
            ]));
            let mut want: Vec<Vec<i64>> = j["final_states"]
                .as_array()
                .expect("final states")
                .iter()
                .map(|s| {
                    s.as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_i64().unwrap())
                        .collect()
                })
                .collect();
            want.sort();
            // Every assignment of register values: is it a final state of the DVE model?
            let mut got: Vec<Vec<i64>> = Vec::new();
            let combos = (values as u32 + 1).pow(regs as u32);
            for c in 0..combos {
                let vals: Vec<i64> = (0..regs)
                    .map(|r| ((c / (values as u32 + 1).pow(r as u32)) % (values as u32 + 1)) as i64)
                    .collect();
                let mut cond: Vec<String> = threads
                    .iter()
                    .enumerate()
                    .map(|(t, ops)| format!("T{t}.s{}", ops.len()))
                    .collect();
                for (r, v) in vals.iter().enumerate() {
                    cond.push(format!("T{}->r{r} == {v}", owner(r)));
                }
                let o = fencer(&[
                    "check",
                    &dve,
                    "--model",
                    model,
                    "--reach",
                    &cond.join(" && "),
                ]);
                match o.status.code() {
                    Some(1) => got.push(vals),
                    Some(0) => {}
                    c => panic!(
                        "{dve} {model}: exit {c:?}: {}",
                        String::from_utf8_lossy(&o.stderr)
                    ),
                }
            }
            got.sort();
            assert_eq!(got, want, "program {n} under {model}: {threads:?}");
        }
    }
}

/// The reductions, measured: zeroing written-out slots (Peterson: 7,267 states, 7,411
/// with stale values kept), and leaving out of the buffers a global that one process
/// alone touches, unless a property reads it.
#[test]
fn buffer_reductions_shrink_the_state_space_and_keep_what_properties_see() {
    if let Some(p) = thesis("peterson_N2.dve") {
        assert_eq!(counts(&["check", &p, "--model", "pso1"]).0, 7267);
        assert_eq!(
            counts(&["check", &p, "--model", "pso1", "--keep-stale"]).0,
            7411
        );
    }
    let m = tmp("private.dve");
    std::fs::write(
        &m,
        "byte x, cnt;\nprocess P { state a, b, c; init a; trans a -> b { effect cnt = 1, x = 1; }, b -> c { effect cnt = 2; }; }\nprocess Q { byte r; state a, b; init a; trans a -> b { effect r = x; }; }\nsystem async;\n",
    )
    .unwrap();
    let m = m.display().to_string();
    for model in ["pso1", "tso", "pso"] {
        let reduced = counts(&["check", &m, "--model", model]).0;
        let full = counts(&["check", &m, "--model", model, "--buffer-private"]).0;
        assert!(reduced < full, "{model}: {reduced} vs {full}");
        // A property that reads `cnt` sees its buffered values: no reduction then.
        let watched = counts(&["check", &m, "--model", model, "--reach", "cnt == 7"]).0;
        assert_eq!(watched, full, "{model}");
    }
}

/// Under TSO and PSO an atomic write also waits for the process's earlier writes (a
/// locked write): Peterson then needs one per process (the write of `turn`), and no
/// single write of its six suffices.
#[test]
fn repair_under_tso_and_pso_is_minimum() {
    let ex = root()
        .join("examples/dve/peterson.dve")
        .display()
        .to_string();
    let reach = "P0.cs + P1.cs > 1";
    for model in ["tso", "pso"] {
        let out = tmp(&format!("peterson-{model}.atomic"));
        let f = out.display().to_string();
        let o = fencer(&[
            "repair", &ex, "--model", model, "--reach", reach, "--json", "--write", &f,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert_eq!(json(&o)["atomic_writes"], 2, "{model}");
        let ok = fencer(&[
            "check", &ex, "--model", model, "--reach", reach, "--atomic", &f,
        ]);
        assert_eq!(ok.status.code(), Some(0), "{model}");
        for line in [11, 12, 14, 21, 22, 24] {
            let p = if line < 20 { "P0" } else { "P1" };
            let one = tmp("one.atomic");
            std::fs::write(&one, format!("atomic {p} {line} *\n")).unwrap();
            let o = fencer(&[
                "check",
                &ex,
                "--model",
                model,
                "--reach",
                reach,
                "--atomic",
                &one.display().to_string(),
            ]);
            assert_eq!(
                o.status.code(),
                Some(1),
                "{model}: line {line} alone repairs it"
            );
        }
    }
}

/// Found by review: an out-of-range index in a buffered write is the model's error under
/// every model (not a write to the next variable); a transition that writes more than
/// the buffer holds, or writes inside committed states, is not cut off (the oldest write
/// goes out first); `--all-minimal` lists only sets that verify; an atomic-file line that
/// names a write the transition does not make is refused.
#[test]
fn review_findings_stay_fixed() {
    let write = |name: &str, text: &str| {
        let p = tmp(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let oob = write(
        "oob.dve",
        "byte a[2];\nbyte b;\nprocess P { byte k = 2; state s, t; init s; trans s -> t { effect a[k] = 7; }; }\nprocess Q { state s, t; init s; trans s -> t { guard b == 7; }; }\nsystem async;\n",
    );
    let three = write(
        "three.dve",
        "byte x, y, z;\nprocess P { state a, b; init a; trans a -> b { effect x = 1, y = 1, z = 1; }; }\nprocess Q { state a, b; init a; trans a -> b { guard x + y + z == 3; }; }\nsystem async;\n",
    );
    let commit = write(
        "commit.dve",
        "byte x, y, z;\nprocess P { state a, b, c, d; init a; commit b, c; trans a -> b { effect x = 1; }, b -> c { effect y = 1; }, c -> d { effect z = 1; }; }\nsystem async;\n",
    );
    for model in ["sc", "pso1", "tso", "pso"] {
        let o = fencer(&["check", &oob, "--model", model, "--json"]);
        assert_eq!(o.status.code(), Some(1), "{model}");
        let msg = json(&o)["counterexample"]["message"].to_string();
        assert!(msg.contains("out of range"), "{model}: {msg}");
        // A bound is for FIFO buffers (tso, pso): sc has none, pso1 one slot per location.
        let bounds: &[&str] = if matches!(model, "tso" | "pso") {
            &["1", "2"]
        } else {
            &["default"]
        };
        for &bound in bounds {
            let mut args = vec!["check", three.as_str(), "--model", model, "--reach", "Q.b"];
            if bound != "default" {
                args.extend(["--buffer-bound", bound]);
            }
            let o = fencer(&args);
            assert_eq!(
                o.status.code(),
                Some(1),
                "three.dve under {model}, bound {bound}"
            );
            let mut args = vec![
                "check",
                commit.as_str(),
                "--model",
                model,
                "--reach",
                "z == 1",
            ];
            if bound != "default" {
                args.extend(["--buffer-bound", bound]);
            }
            let o = fencer(&args);
            assert_eq!(
                o.status.code(),
                Some(1),
                "commit.dve under {model}, bound {bound}"
            );
        }
    }
    let sb = write(
        "sb.dve",
        "byte x, y;\nprocess P0 { byte r0 = 9; state a, b, c; init a; trans a -> b { effect x = 1; }, b -> c { effect r0 = y; }; }\nprocess P1 { byte r1 = 9; state a, b, c; init a; trans a -> b { effect y = 1; }, b -> c { effect r1 = x; }; }\nsystem async;\n",
    );
    let reach = "P0.c && P1.c && P0->r0 == 0 && P1->r1 == 0";
    let o = fencer(&[
        "repair",
        &sb,
        "--model",
        "pso1",
        "--reach",
        reach,
        "--all-minimal",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    for set in json(&o)["minimal_sets"].as_array().unwrap() {
        let lines: Vec<String> = set
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                format!(
                    "atomic {} {} {}",
                    w["process"].as_str().unwrap(),
                    w["line"],
                    w["variable"].as_str().unwrap()
                )
            })
            .collect();
        let f = write("set.atomic", &lines.join("\n"));
        let c = fencer(&[
            "check", &sb, "--model", "pso1", "--reach", reach, "--atomic", &f,
        ]);
        assert_eq!(
            c.status.code(),
            Some(0),
            "listed set {lines:?} does not repair"
        );
    }
    let bad = write("noop.atomic", "atomic P0 2 y\n");
    let o = fencer(&["check", &sb, "--model", "pso1", "--atomic", &bad]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("would change nothing"));
}

/// Store-buffer models are stored bit-packed (their flags and slots hold a few values),
/// with the same states and transitions as full vectors; `--no-pack` stores full vectors.
#[test]
fn buffer_models_are_stored_packed_with_the_same_counts() {
    let model = root().join("examples/dve/peterson.dve");
    let model = model.to_str().expect("path");
    for m in ["pso1", "tso", "pso"] {
        let run = |extra: &[&str]| {
            let mut a = vec!["check", model, "--model", m, "--json"];
            a.extend_from_slice(extra);
            let j = json(&fencer(&a));
            (
                j["stats"]["states"].as_u64().expect("states"),
                j["stats"]["transitions"].as_u64().expect("transitions"),
                j["stats"]["state_bytes"].as_u64().expect("state_bytes"),
            )
        };
        let (s, t, packed) = run(&[]);
        let (s2, t2, full) = run(&["--no-pack"]);
        assert_eq!((s, t), (s2, t2), "{m}: packing changed the state space");
        assert!(packed * 2 <= full, "{m}: {packed} of {full} bytes a state");
    }
}
