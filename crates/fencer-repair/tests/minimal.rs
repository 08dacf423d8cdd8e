//! Repairs of small `.fen` programs, and the minimality claim checked by brute force: no
//! set of fewer positions, anywhere in the program, makes it correct; and under PSO no set
//! of as many fences with fewer full ones (the rest store-store) does.

use fencer_ir::Program;
use fencer_memory::ModelKind;
use fencer_repair::{cost, edit, repair, Fence, FenceKind, Options, Outcome, Position};

fn load(name: &str) -> Program {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("example");
    let mut p = fencer_text::parse_program(&path, &src).expect("parses");
    fencer_ir::spin::spin_assume(&mut p);
    p
}

fn safe(prog: &Program, model: ModelKind) -> bool {
    let r = fencer_dpor::explore(prog, model, &fencer_dpor::Options::default());
    r.verdict == fencer_report::Verdict::Safe
}

/// Every position a fence can go: before each instruction, and at each function's end.
fn all_positions(prog: &Program) -> Vec<Position> {
    let mut out = Vec::new();
    for (f, func) in prog.functions.iter().enumerate() {
        for pc in 0..=func.body.len() as u32 {
            out.push(Position { func: f as u32, pc });
        }
    }
    out
}

fn subsets(n: usize, k: usize, from: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if cur.len() == k {
        out.push(cur.clone());
        return;
    }
    for i in from..n {
        cur.push(i);
        subsets(n, k, i + 1, cur, out);
        cur.pop();
    }
}

fn repaired(name: &str, model: ModelKind) -> (Program, Vec<Fence>) {
    let prog = load(name);
    let out = repair(&prog, model, &Options::default());
    let Outcome::Repaired(r) = out else {
        panic!("{name} under {model:?}: {out:?}")
    };
    assert!(r.exact, "{name}: every kill set re-traced exactly");
    assert!(safe(&r.fenced, model), "{name}: the fenced program is safe");
    (prog, r.fences.clone())
}

/// No set of one fence fewer repairs the program (fences only remove executions, and a
/// full fence removes all a store-store one does, so full fences stand for every kind and
/// no smaller set does either); under PSO, no set of as many fences with one full fence
/// fewer (the others store-store) does.
fn check_minimal(prog: &Program, chosen: &[Fence], model: ModelKind) {
    let (n, full) = cost(chosen);
    if n == 0 {
        return;
    }
    let pos = all_positions(prog);
    let mut sets = Vec::new();
    subsets(pos.len(), n - 1, 0, &mut Vec::new(), &mut sets);
    for s in sets {
        let fences: Vec<Fence> = s.iter().map(|&i| Fence::full(pos[i])).collect();
        let fenced = edit::insert_fences(prog, &fences);
        assert!(
            !safe(&fenced.prog, model),
            "{fences:?} repairs with fewer fences"
        );
    }
    if model != ModelKind::Pso || full == 0 {
        return;
    }
    let mut sets = Vec::new();
    subsets(pos.len(), n, 0, &mut Vec::new(), &mut sets);
    for s in sets {
        let mut which = Vec::new();
        subsets(n, full - 1, 0, &mut Vec::new(), &mut which);
        for w in which {
            let fences: Vec<Fence> = s
                .iter()
                .enumerate()
                .map(|(k, &i)| Fence {
                    pos: pos[i],
                    kind: if w.contains(&k) {
                        FenceKind::Full
                    } else {
                        FenceKind::StoreStore
                    },
                })
                .collect();
            assert!(
                !safe(&edit::insert_fences(prog, &fences).prog, model),
                "{fences:?} repairs with fewer full fences"
            );
        }
    }
}

#[test]
fn sb_needs_one_fence_per_thread() {
    for model in [ModelKind::Tso, ModelKind::Pso] {
        let (prog, fences) = repaired("sb.fen", model);
        assert_eq!(fences.len(), 2, "{fences:?}");
        // A load overtakes each store: only full fences stop that.
        assert!(
            fences.iter().all(|f| f.kind == FenceKind::Full),
            "{fences:?}"
        );
        check_minimal(&prog, &fences, model);
    }
}

#[test]
fn mp_needs_one_fence_under_pso_and_none_under_tso() {
    let prog = load("mp.fen");
    assert!(matches!(
        repair(&prog, ModelKind::Tso, &Options::default()),
        Outcome::NotNeeded { .. }
    ));
    let (prog, fences) = repaired("mp.fen", ModelKind::Pso);
    assert_eq!(fences.len(), 1, "{fences:?}");
    // The flag's store overtakes the data's: a store-store fence between them is enough.
    assert_eq!(fences[0].kind, FenceKind::StoreStore, "{fences:?}");
    check_minimal(&prog, &fences, ModelKind::Pso);
}

#[test]
fn peterson_minimum_is_minimal() {
    let (prog, fences) = repaired("peterson.fen", ModelKind::Tso);
    check_minimal(&prog, &fences, ModelKind::Tso);
}

/// Under PSO the brute force also runs over fence kinds: about 4 minutes in a debug
/// build, so it is opt-in (`cargo test --release -- --ignored`); the random programs of
/// `random.rs` and the MP/SB tests here cover kinds in every run.
#[test]
#[ignore = "brute force over positions and kinds: minutes"]
fn peterson_minimum_is_minimal_under_pso() {
    let (prog, fences) = repaired("peterson.fen", ModelKind::Pso);
    check_minimal(&prog, &fences, ModelKind::Pso);
}

#[test]
fn two_plus_two_w_and_spinlock() {
    for name in ["two_plus_two_w.fen", "spinlock_cas.fen"] {
        let (prog, fences) = repaired(name, ModelKind::Pso);
        check_minimal(&prog, &fences, ModelKind::Pso);
    }
}

#[test]
fn wrong_under_sc_is_not_repairable() {
    let prog = load("counter_racy.fen");
    let out = repair(&prog, ModelKind::Tso, &Options::default());
    let Outcome::UnsafeUnderSc { report } = out else {
        panic!("{out:?}")
    };
    assert!(report.counterexample.is_some());
}

#[test]
fn all_minimal_sets_are_each_a_repair() {
    // A local step between each store and load: two positions per thread kill the
    // reordering, so there are four minimum sets.
    let src = "shared x = 0, y = 0;\nthread p {\n x = 1;\n a = 2;\n r1 = y;\n}\n\
               thread q {\n y = 1;\n b = 3;\n r2 = x;\n}\nexists (p.r1 == 0 && q.r2 == 0)\n";
    let prog = fencer_text::parse_program("sb_local.fen", src).expect("parses");
    let opts = Options {
        all_minimal: true,
        ..Options::default()
    };
    let Outcome::Repaired(r) = repair(&prog, ModelKind::Tso, &opts) else {
        panic!()
    };
    assert_eq!(r.all.len(), 4, "{:?}", r.all);
    for s in &r.all {
        assert_eq!(s.len(), 2);
        assert!(safe(&edit::insert_fences(&prog, s).prog, ModelKind::Tso));
    }
    check_minimal(&prog, &r.fences, ModelKind::Tso);
}

fn litmus_dir() -> Option<std::path::PathBuf> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus/x86");
    if p.join("expected.tsv").exists() {
        Some(p)
    } else {
        eprintln!("skipped: ../shared/litmus/x86 is not here (a clone without ../shared)");
        None
    }
}

/// On the litmus tests whose TSO answer differs from SC's, small enough for brute force:
/// no set of fewer fences (anywhere) makes the TSO answer SC's.
#[test]
fn litmus_repairs_are_minimum_by_brute_force() {
    let Some(dir) = litmus_dir() else { return };
    let table = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut brute = 0;
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols[2] == cols[3] {
            continue;
        }
        let path = dir.join(cols[0]);
        let src = std::fs::read_to_string(&path).unwrap();
        let prog = fencer_litmus::parse_litmus(cols[0], &src).unwrap().program;
        let opts = Options {
            condition_is_question: true,
            ..Options::default()
        };
        let Outcome::Repaired(r) = repair(&prog, ModelKind::Tso, &opts) else {
            panic!("{}", cols[0])
        };
        assert!(r.exact, "{}", cols[0]);
        let n = r.fences.len();
        let pos = all_positions(&prog);
        let count =
            (0..n.saturating_sub(1)).fold(1u64, |c, i| c * (pos.len() - i) as u64 / (i as u64 + 1));
        if count > 400 {
            continue;
        }
        check_minimal(&prog, &r.fences, ModelKind::Tso);
        brute += 1;
    }
    eprintln!("{brute} litmus repairs checked by brute force");
    assert!(brute >= 30, "{brute} tests checked by brute force");
}

/// Under TSO a read-modify-write or a lock drains the buffer: no position right before
/// one, or right after one with no store between, ever kills an execution.
#[test]
fn no_fence_where_an_rmw_or_lock_already_orders() {
    for name in [
        "spinlock_cas.fen",
        "counter_mutex.fen",
        "mp_rmw.fen",
        "peterson.fen",
    ] {
        let prog = load(name);
        let model = ModelKind::Tso;
        let Outcome::Repaired(r) = repair(&prog, model, &Options::default()) else {
            continue;
        };
        for c in &r.counterexamples {
            for p in c.kill.iter().map(|f| f.pos) {
                let body = &prog.functions[p.func as usize].body;
                assert!(
                    !matches!(
                        body.get(p.pc as usize).map(|i| &i.op),
                        Some(fencer_ir::Op::Rmw { .. } | fencer_ir::Op::Lock(_))
                    ),
                    "{name}: {p:?} is right before an RMW or lock"
                );
            }
        }
    }
}

fn verdicts(src: &str) -> Vec<(ModelKind, fencer_report::Verdict, fencer_report::Verdict)> {
    let prog = fencer_text::parse_program("t.fen", src).expect("parses");
    ModelKind::ALL
        .iter()
        .map(|&m| {
            let d = fencer_dpor::explore(&prog, m, &fencer_dpor::Options::default());
            let r = fencer_reference::explore(&prog, m, &fencer_reference::Options::default());
            (m, d.verdict, r.report.verdict)
        })
        .collect()
}

/// The store-store fence's semantics on the two tests that tell it from a full fence and
/// from nothing: it keeps message passing's stores in order under PSO, and does not keep
/// store buffering's load behind its thread's store.
#[test]
fn store_store_fence_is_enough_for_mp_not_for_sb() {
    use fencer_report::Verdict::{Safe, Violation};
    let mp = "shared x = 0, y = 0;\nthread p {\n x = 1;\n fence ss;\n y = 1;\n}\n\
              thread q {\n r1 = y;\n r2 = x;\n}\nexists (q.r1 == 1 && q.r2 == 0)\n";
    for (m, dpor, reference) in verdicts(mp) {
        assert_eq!(
            (dpor, reference),
            (Safe, Safe),
            "mp with fence ss under {m:?}"
        );
    }
    let unfenced = mp.replace(" fence ss;\n", "");
    let v = verdicts(&unfenced);
    assert_eq!(
        (v[2].1, v[2].2),
        (Violation, Violation),
        "mp without it under PSO"
    );
    let sb = "shared x = 0, y = 0;\nthread p {\n x = 1;\n fence ss;\n r1 = y;\n}\n\
              thread q {\n y = 1;\n fence ss;\n r2 = x;\n}\nexists (p.r1 == 0 && q.r2 == 0)\n";
    for (m, dpor, reference) in verdicts(sb) {
        let want = if m == ModelKind::Sc { Safe } else { Violation };
        assert_eq!(
            (dpor, reference),
            (want, want),
            "sb with fence ss under {m:?}"
        );
    }
    let full = sb.replace("fence ss;", "fence;");
    for (m, dpor, reference) in verdicts(&full) {
        assert_eq!(
            (dpor, reference),
            (Safe, Safe),
            "sb with full fences under {m:?}"
        );
    }
}

/// A read-modify-write after a store-store fence writes after the stores before the fence
/// (its write is a store); a load after it does not wait.
#[test]
fn rmw_after_store_store_fence_waits_for_older_stores() {
    use fencer_report::Verdict::{Safe, Violation};
    let mp = "shared x = 0, y = 0;\nthread p {\n x = 1;\n fence ss;\n a = xchg(y, 1);\n}\n\
              thread q {\n r1 = y;\n r2 = x;\n}\nexists (q.r1 == 1 && q.r2 == 0)\n";
    for (m, dpor, reference) in verdicts(mp) {
        assert_eq!((dpor, reference), (Safe, Safe), "{m:?}");
    }
    let unfenced = mp.replace(" fence ss;\n", "");
    let v = verdicts(&unfenced);
    assert_eq!(
        (v[2].1, v[2].2),
        (Violation, Violation),
        "without it under PSO"
    );
}
