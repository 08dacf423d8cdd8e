//! `fencer repair` end to end: the shared C benchmarks and litmus tests are repaired, the
//! repaired files are loaded again from disk and checked, fence counts are held to the
//! hand-fenced variants, and the failures have their exit codes. Tests that need
//! `../shared` skip when it is absent, and C tests skip without clang-14.

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

fn shared(sub: &str) -> Option<PathBuf> {
    let p = root().join("../shared").join(sub);
    if p.join("expected.tsv").exists() {
        Some(p)
    } else {
        eprintln!("skipped: ../shared/{sub} is not here (a clone without ../shared)");
        None
    }
}

fn have_clang() -> bool {
    let ok = |c: &str| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = std::env::var("FENCER_CLANG").is_ok_and(|c| ok(&c))
        || ok("clang-14")
        || ok("/usr/lib/llvm-14/bin/clang");
    if !found {
        eprintln!("skipped: clang-14 is not installed");
    }
    found
}

/// A fresh directory for written files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fencer-repair-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Fences the hand-fenced variant of each program in `../shared/bench/c` has beyond the
/// program's own, per model: the most a repair may add; then how many of the repair's are
/// store-store and full (the cost's second half: TSO keeps store order, so there every
/// fence is full). Under PSO a store needs a full fence only where a later *load* of its
/// thread overtakes it (Dekker's and Peterson's flag/turn store before the other thread's
/// flag is read, SB's store before its load); a store overtaken by a later store needs a
/// store-store fence only (the data before the flag in MP, the object before the pointer
/// in DCL, the critical section's store before the release store of the spinlock, of
/// Peterson's `flag0 = 0` and of Dekker's `turn = 1`; Peterson's `flag0 = 1` before
/// `turn = 1`). The hand-fenced variants use full fences throughout.
const HAND_FENCED: &[(&str, &str, u64, u64, u64)] = &[
    ("sb.c", "tso", 2, 0, 2),
    ("sb.c", "pso", 2, 0, 2),
    ("peterson.c", "tso", 2, 0, 2),
    ("peterson.c", "pso", 6, 4, 2),
    ("mp.c", "pso", 1, 1, 0),
    ("spinlock_tas.c", "pso", 1, 1, 0),
    ("dcl_singleton.c", "pso", 1, 1, 0),
    // Two fewer than by hand, under both models: the fence after the first raise of each
    // flag kills every counterexample (the re-raise inside the loop is followed by a read
    // of `turn` in a spin loop, which the repair's counterexamples show it need not order).
    ("dekker.c", "tso", 4, 0, 2),
    // Under PSO also a store-store fence after each critical section's store.
    ("dekker.c", "pso", 6, 2, 2),
    // Already fenced for TSO: dekker_pso.c has 6, dekker_tso.c 4; peterson_pso.c 6,
    // peterson_tso.c 2. What PSO adds orders stores only.
    ("dekker_tso.c", "pso", 2, 2, 0),
    ("peterson_tso.c", "pso", 4, 4, 0),
];

#[test]
fn shared_c_programs_unsafe_only_on_weak_memory_are_repaired_from_their_source() {
    let Some(dir) = shared("bench/c") else { return };
    if !have_clang() {
        return;
    }
    let out = scratch("c");
    let table = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut repaired = 0;
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let file = cols[0];
        if cols[1] != "safe" || file.starts_with("fib5") || file.starts_with("indexer13") {
            continue;
        }
        for (model, verdict) in [("tso", cols[2]), ("pso", cols[3])] {
            if verdict != "unsafe" {
                continue;
            }
            let src = dir.join(file);
            let written = out.join(format!("{model}_{file}"));
            let o = fencer(&[
                "repair",
                src.to_str().unwrap(),
                "--model",
                model,
                "--write",
                written.to_str().unwrap(),
                "--json",
            ]);
            let j = json(&o);
            assert_eq!(o.status.code(), Some(0), "{file} {model}: {j}");
            assert_eq!(j["verdict"], "repaired", "{file} {model}: {j}");
            assert_eq!(j["verified"], true, "{file} {model}: {j}");
            let why = j["minimality"].as_str().unwrap();
            assert!(!why.starts_with("not proven"), "{file} {model}: {why}");
            let n = j["minimum"].as_u64().unwrap();
            let &(_, _, hand, want_ss, want_full) = HAND_FENCED
                .iter()
                .find(|(f, m, ..)| *f == file && *m == model)
                .unwrap_or_else(|| panic!("no hand-fenced count for {file} {model}"));
            assert!(
                n <= hand,
                "{file} {model}: {n} fences, the hand-fenced one has {hand}"
            );
            let fences = j["fences"].as_array().unwrap();
            assert_eq!(fences.len() as u64, n);
            let kinds = |k: &str| fences.iter().filter(|f| f["kind"] == k).count() as u64;
            assert_eq!(
                (kinds("store-store"), kinds("full")),
                (want_ss, want_full),
                "{file} {model}: {j}"
            );
            assert_eq!(j["store_store_fences"], want_ss, "{file} {model}");
            assert_eq!(j["full_fences"], want_full, "{file} {model}");
            assert!(j["cost_model"].as_str().unwrap().contains("full"), "{j}");
            eprintln!(
                "{file} {model}: {n} fences ({want_ss} store-store, {want_full} full), {} rounds, {} ms",
                j["rounds"], j["elapsed_ms"]
            );
            // Compiled again from the written source by a separate run: safe.
            let c = fencer(&["check", written.to_str().unwrap(), "--model", model]);
            assert_eq!(
                c.status.code(),
                Some(0),
                "{file} {model} repaired: {}",
                String::from_utf8_lossy(&c.stdout)
            );
            let text = std::fs::read_to_string(&written).unwrap();
            let orig = std::fs::read_to_string(&src).unwrap();
            let added = |s: &str| (text.matches(s).count() - orig.matches(s).count()) as u64;
            assert_eq!(
                (
                    added("__atomic_thread_fence(__ATOMIC_RELEASE);"),
                    added("__sync_synchronize();")
                ),
                (want_ss, want_full),
                "{file} {model}: one statement per fence, of its kind:\n{text}"
            );
            repaired += 1;
        }
    }
    assert_eq!(repaired, HAND_FENCED.len());
    let _ = std::fs::remove_dir_all(&out);
}

/// Whether herd7's answer (Ok/No) under a model, as `fencer litmus` prints it.
fn litmus_ok(path: &Path, model: &str) -> bool {
    let o = fencer(&["litmus", path.to_str().unwrap(), "--model", model]);
    assert_eq!(o.status.code(), Some(0), "{}", path.display());
    let s = String::from_utf8_lossy(&o.stdout).to_string();
    s.lines().any(|l| l.trim() == "Ok")
}

#[test]
fn litmus_tests_whose_tso_answer_differs_get_the_sc_answer_back() {
    let Some(dir) = shared("litmus/x86") else {
        return;
    };
    let out = scratch("litmus");
    let table = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut done = 0;
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (file, tso, sc) = (cols[0], cols[2], cols[3]);
        if tso == sc {
            continue;
        }
        let src = dir.join(file);
        let written = out.join(file.replace('/', "__"));
        let o = fencer(&[
            "repair",
            src.to_str().unwrap(),
            "--write",
            written.to_str().unwrap(),
            "--json",
        ]);
        let j = json(&o);
        assert_eq!(o.status.code(), Some(0), "{file}: {j}");
        assert_eq!(j["verdict"], "repaired", "{file}: {j}");
        let n = j["minimum"].as_u64().unwrap() as usize;
        assert!(n >= 1, "{file}");
        let before = std::fs::read_to_string(&src)
            .unwrap()
            .matches("MFENCE")
            .count();
        let after = std::fs::read_to_string(&written)
            .unwrap()
            .matches("MFENCE")
            .count();
        assert_eq!(after - before, n, "{file}: one MFENCE per fence");
        assert_eq!(
            litmus_ok(&written, "tso"),
            litmus_ok(&src, "sc"),
            "{file}: the repaired test answers as SC does"
        );
        if file.ends_with("/SB.litmus") {
            assert_eq!(n, 2, "{file}: one MFENCE per thread");
        }
        done += 1;
    }
    assert!(done >= 60, "{done} tests repaired");
    // Tests whose answers already agree need nothing.
    for file in [
        "catalogue/MP.litmus",
        "catalogue/2+2W.litmus",
        "catalogue/SB+mfences.litmus",
    ] {
        let o = fencer(&["repair", dir.join(file).to_str().unwrap(), "--json"]);
        let j = json(&o);
        assert_eq!(o.status.code(), Some(0), "{file}: {j}");
        assert_eq!(j["verdict"], "not-needed", "{file}: {j}");
        assert_eq!(j["minimum"], 0);
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_program_wrong_under_sc_gets_exit_1_and_the_sc_counterexample() {
    let f = root().join("examples/counter_racy.fen");
    let o = fencer(&["repair", f.to_str().unwrap(), "--model", "tso"]);
    assert_eq!(o.status.code(), Some(1));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("wrong under SC"), "{s}");
    assert!(s.contains("counterexample"), "{s}");
    let o = fencer(&["repair", f.to_str().unwrap(), "--model", "pso", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j = json(&o);
    assert_eq!(j["verdict"], "unsafe-under-sc");
    assert!(j["counterexample"]["events"]
        .as_array()
        .is_some_and(|e| !e.is_empty()));
}

#[test]
fn fen_repair_prints_fences_and_a_diff_and_verifies() {
    let f = root().join("examples/peterson.fen");
    let o = fencer(&["repair", f.to_str().unwrap(), "--model", "tso", "--diff"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(s.contains("minimum: 2 fences"), "{s}");
    assert!(s.contains("insert `fence;`"), "{s}");
    assert!(s.contains("+    fence;"), "{s}");
    assert!(s.contains("verified:"), "{s}");
    // Under PSO, message passing needs a store-store fence, and the output says so.
    let f = root().join("examples/mp.fen");
    let o = fencer(&["repair", f.to_str().unwrap(), "--model", "pso", "--diff"]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(
        s.contains("minimum: 1 fence (1 store-store, 0 full)"),
        "{s}"
    );
    assert!(
        s.contains("cost: fewest fences first, then fewest full fences"),
        "{s}"
    );
    assert!(s.contains("insert `fence ss;` (store-store fence)"), "{s}");
    assert!(s.contains("+    fence ss;"), "{s}");
    assert!(s.contains("verified:"), "{s}");
    // Store buffering does not: a load overtakes each store.
    let f = root().join("examples/sb.fen");
    let o = fencer(&["repair", f.to_str().unwrap(), "--model", "pso", "--json"]);
    let j = json(&o);
    assert_eq!(j["full_fences"], 2, "{j}");
    assert_eq!(j["store_store_fences"], 0, "{j}");
    assert!(j["minimality"]
        .as_str()
        .unwrap()
        .contains("fewer than 2 full fences"));
    // Nothing to do under TSO for message passing.
    let f = root().join("examples/mp.fen");
    let o = fencer(&["repair", f.to_str().unwrap(), "--model", "tso"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no fence needed"));
}

#[test]
fn usage_errors() {
    let f = root().join("examples/sb.fen");
    let f = f.to_str().unwrap();
    let o = fencer(&["repair", f, "--model", "sc"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fencer(&["repair", f, "--diff", "--write", "/tmp/x.fen"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fencer(&["repair", "nope.txt"]);
    assert_eq!(o.status.code(), Some(2));
    let o = fencer(&["repair", "missing.fen", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(json(&o)["error"]["message"].is_string());
    let bad = scratch("bad").join("bad.fen");
    std::fs::write(&bad, "thread p { x = ; }").unwrap();
    let o = fencer(&["repair", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_limit_gives_exit_3() {
    let f = root().join("bench/fen/fib5_true.fen");
    let o = fencer(&["repair", f.to_str().unwrap(), "--timeout", "0.02", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(json(&o)["verdict"], "incomplete");
    // Loop bounds: the repair holds up to them, and says so with exit code 3.
    let dir = scratch("bounds");
    let f = dir.join("loop.fen");
    std::fs::write(
        &f,
        "shared x = 0, y = 0;\nthread p {\n  i = 0;\n  while (i < 3) {\n    x = 1;\n    r1 = y;\n    \
         i = i + 1;\n  }\n}\nthread q {\n  y = 1;\n  r2 = x;\n}\nexists (p.r1 == 0 && q.r2 == 0)\n",
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let o = fencer(&["repair", f, "--unroll", "2", "--json"]);
    let j = json(&o);
    assert_eq!(o.status.code(), Some(3), "{j}");
    assert_eq!(j["bounded"], true, "{j}");
    let o = fencer(&["repair", f, "--json"]);
    let j = json(&o);
    assert_eq!(o.status.code(), Some(0), "{j}");
    assert_eq!(j["minimum"], 2, "{j}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn all_minimal_lists_every_minimum_set() {
    let f = root().join("bench/fen/dekker.fen");
    let o = fencer(&[
        "repair",
        f.to_str().unwrap(),
        "--model",
        "pso",
        "--all-minimal",
        "--json",
    ]);
    let j = json(&o);
    assert_eq!(o.status.code(), Some(0), "{j}");
    let all = j["all_minimal"].as_array().unwrap();
    assert!(all.len() > 1, "{j}");
    assert!(all
        .iter()
        .all(|s| s.as_array().unwrap().len() as u64 == j["minimum"].as_u64().unwrap()));
    let o = fencer(&["repair", f.to_str().unwrap(), "-m", "pso", "--all-minimal"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("every minimum set ({})", all.len()))
    );
}

#[test]
fn c11_files_get_c11_fences() {
    if !have_clang() {
        return;
    }
    let dir = scratch("c11");
    let src = dir.join("sb11.c");
    std::fs::write(
        &src,
        "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\n\
         atomic_int x, y;\nint r0, r1;\n\n\
         void *t0(void *a) {\n  atomic_store_explicit(&x, 1, memory_order_relaxed);\n  \
         r0 = atomic_load_explicit(&y, memory_order_relaxed);\n  return 0;\n}\n\n\
         void *t1(void *a) {\n  atomic_store_explicit(&y, 1, memory_order_relaxed);\n  \
         r1 = atomic_load_explicit(&x, memory_order_relaxed);\n  return 0;\n}\n\n\
         int main(void) {\n  pthread_t a, b;\n  pthread_create(&a, 0, t0, 0);\n  \
         pthread_create(&b, 0, t1, 0);\n  pthread_join(a, 0);\n  pthread_join(b, 0);\n  \
         assert(!(r0 == 0 && r1 == 0));\n  return 0;\n}\n",
    )
    .unwrap();
    let out = dir.join("sb11_fixed.c");
    let o = fencer(&[
        "repair",
        src.to_str().unwrap(),
        "--write",
        out.to_str().unwrap(),
    ]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(s.contains("minimum: 2 fences"), "{s}");
    let fixed = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        fixed
            .matches("atomic_thread_fence(memory_order_seq_cst);")
            .count(),
        2,
        "{fixed}"
    );
    // Message passing under PSO: a C11 release fence, which the C front-end reads back
    // as the store-store fence it is.
    let src = dir.join("mp11.c");
    std::fs::write(
        &src,
        "#include <assert.h>\n#include <pthread.h>\n#include <stdatomic.h>\n\n\
         atomic_int data, flag;\nint r0, r1;\n\n\
         void *t0(void *a) {\n  atomic_store_explicit(&data, 1, memory_order_relaxed);\n  \
         atomic_store_explicit(&flag, 1, memory_order_relaxed);\n  return 0;\n}\n\n\
         void *t1(void *a) {\n  r0 = atomic_load_explicit(&flag, memory_order_relaxed);\n  \
         r1 = atomic_load_explicit(&data, memory_order_relaxed);\n  return 0;\n}\n\n\
         int main(void) {\n  pthread_t a, b;\n  pthread_create(&a, 0, t0, 0);\n  \
         pthread_create(&b, 0, t1, 0);\n  pthread_join(a, 0);\n  pthread_join(b, 0);\n  \
         assert(!(r0 == 1 && r1 == 0));\n  return 0;\n}\n",
    )
    .unwrap();
    let out = dir.join("mp11_fixed.c");
    let o = fencer(&[
        "repair",
        src.to_str().unwrap(),
        "-m",
        "pso",
        "--write",
        out.to_str().unwrap(),
    ]);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert!(s.contains("(1 store-store, 0 full)"), "{s}");
    assert!(s.contains("verified:"), "{s}");
    let fixed = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        fixed
            .matches("atomic_thread_fence(memory_order_release);")
            .count(),
        1,
        "{fixed}"
    );
    // Read back as a store-store fence: SB with release fences stays unsafe under PSO
    // (a full fence there would hide the bug).
    let sb = dir.join("sb_release.c");
    std::fs::write(
        &sb,
        std::fs::read_to_string(dir.join("sb11.c"))
            .unwrap()
            .replace(
                "memory_order_relaxed);\n  r",
                "memory_order_relaxed);\n  atomic_thread_fence(memory_order_release);\n  r",
            ),
    )
    .unwrap();
    assert!(std::fs::read_to_string(&sb)
        .unwrap()
        .contains("memory_order_release"));
    for model in ["tso", "pso"] {
        let c = fencer(&["check", sb.to_str().unwrap(), "-m", model]);
        assert_eq!(
            c.status.code(),
            Some(1),
            "release fences do not order SB ({model})"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The classics in `bench/fen` are repaired with no more fences than their hand-fenced
/// `_fenced` variants (which are correct under PSO, hence TSO too), and the written files
/// check safe.
#[test]
fn bench_fen_classics_need_no_more_fences_than_by_hand() {
    let dir = root().join("bench/fen");
    let out = scratch("fen");
    let mut done = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(base) = name.strip_suffix("_fenced.fen") else {
            continue;
        };
        let hand = std::fs::read_to_string(&p)
            .unwrap()
            .matches("fence;")
            .count() as u64;
        let orig = dir.join(format!("{base}.fen"));
        for model in ["tso", "pso"] {
            let written = out.join(format!("{model}_{base}.fen"));
            let o = fencer(&[
                "repair",
                orig.to_str().unwrap(),
                "-m",
                model,
                "--write",
                written.to_str().unwrap(),
                "--json",
            ]);
            let j = json(&o);
            assert_eq!(o.status.code(), Some(0), "{base} {model}: {j}");
            let n = j["minimum"].as_u64().unwrap();
            assert!(n <= hand, "{base} {model}: {n} fences, by hand {hand}");
            if n > 0 {
                assert_eq!(j["verified"], true, "{base} {model}: {j}");
                let c = fencer(&["check", written.to_str().unwrap(), "-m", model]);
                assert_eq!(c.status.code(), Some(0), "{base} {model}");
            }
            done += 1;
        }
    }
    assert!(done >= 12, "{done}");
    let _ = std::fs::remove_dir_all(&out);
}

/// `--goal robustness`: for every example that is not robust (its `// robust:` line), the
/// repair's written file is robust by `fencer robust` (run on the file, not the IR), and a
/// robust example needs no fence.
#[test]
fn robustness_goal_makes_every_example_robust() {
    let dir = std::env::temp_dir().join(format!("fencer-repair-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut repaired = 0;
    for e in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "fen") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let line = src
            .lines()
            .find_map(|l| l.strip_prefix("// robust:"))
            .unwrap();
        for model in ["tso", "pso"] {
            let robust = line.contains(&format!("{model}=yes"));
            let out = dir.join(format!(
                "{model}-{}",
                path.file_name().unwrap().to_str().unwrap()
            ));
            let f = path.to_str().unwrap();
            let o = fencer(&[
                "repair",
                f,
                "--model",
                model,
                "--goal",
                "robustness",
                "--write",
                out.to_str().unwrap(),
            ]);
            let text = String::from_utf8_lossy(&o.stdout).into_owned();
            assert_eq!(o.status.code(), Some(0), "{f} {model}: {text}");
            if robust {
                assert!(text.contains("no fence needed"), "{f} {model}: {text}");
                continue;
            }
            assert!(
                text.contains("not robust against") && text.contains("verified"),
                "{f} {model}: {text}"
            );
            let r = fencer(&["robust", out.to_str().unwrap(), "--model", model, "--json"]);
            let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
            assert_eq!(
                v["robust"], true,
                "{f} {model}: the written file is not robust"
            );
            repaired += 1;
        }
    }
    assert!(repaired >= 8, "{repaired}");
    std::fs::remove_dir_all(&dir).ok();
}
