//! Repairs of small `.fen` programs, and the minimality claim checked by brute force: no
//! set of fewer positions, anywhere in the program, makes it correct.

use fencer_ir::Program;
use fencer_memory::ModelKind;
use fencer_repair::{edit, repair, Options, Outcome, Position};

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

fn repaired(name: &str, model: ModelKind) -> (Program, Vec<Position>) {
    let prog = load(name);
    let out = repair(&prog, model, &Options::default());
    let Outcome::Repaired(r) = out else {
        panic!("{name} under {model:?}: {out:?}")
    };
    assert!(r.exact, "{name}: every kill set re-traced exactly");
    assert!(safe(&r.fenced, model), "{name}: the fenced program is safe");
    (prog, r.fences.clone())
}

/// No set of one fence fewer repairs the program (fences only remove executions, so no
/// smaller set does either).
fn check_minimal(prog: &Program, n: usize, model: ModelKind) {
    if n == 0 {
        return;
    }
    let pos = all_positions(prog);
    let mut sets = Vec::new();
    subsets(pos.len(), n - 1, 0, &mut Vec::new(), &mut sets);
    for s in sets {
        let fences: Vec<Position> = s.iter().map(|&i| pos[i]).collect();
        let fenced = edit::insert_fences(prog, &fences);
        assert!(
            !safe(&fenced.prog, model),
            "{fences:?} repairs with fewer fences"
        );
    }
}

#[test]
fn sb_needs_one_fence_per_thread() {
    for model in [ModelKind::Tso, ModelKind::Pso] {
        let (prog, fences) = repaired("sb.fen", model);
        assert_eq!(fences.len(), 2, "{fences:?}");
        check_minimal(&prog, fences.len(), model);
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
    check_minimal(&prog, 1, ModelKind::Pso);
}

#[test]
fn peterson_minimum_is_minimal() {
    for model in [ModelKind::Tso, ModelKind::Pso] {
        let (prog, fences) = repaired("peterson.fen", model);
        check_minimal(&prog, fences.len(), model);
    }
}

#[test]
fn two_plus_two_w_and_spinlock() {
    for name in ["two_plus_two_w.fen", "spinlock_cas.fen"] {
        let (prog, fences) = repaired(name, ModelKind::Pso);
        check_minimal(&prog, fences.len(), ModelKind::Pso);
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
    check_minimal(&prog, 2, ModelKind::Tso);
}
