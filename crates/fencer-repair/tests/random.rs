//! Repairs of random programs (fencer-testgen), with the goal that every final state under
//! the weak model is one SC reaches: each repair is checked by the reference explorer (an
//! engine the repair does not use), every kill set must be re-traced exactly, and the
//! minimality claim is checked by brute force where the subsets are few.
//! `FENCER_CASES=N` runs more programs.

use fencer_ir::{BinOp, CondExpr, CondVar, FinalCond, Program, Quantifier, SrcLoc};
use fencer_memory::ModelKind;
use fencer_repair::{cost, edit, repair, Fence, FenceKind, Options, Outcome, Position};
use fencer_report::Verdict;

/// The program with the condition "the final state is one SC reaches".
fn with_sc_outcomes(mut prog: Program) -> Program {
    let r = fencer_dpor::explore(
        &prog,
        ModelKind::Sc,
        &fencer_dpor::Options {
            stop_on_violation: false,
            ..Default::default()
        },
    );
    let vars: Vec<CondVar> = prog.reported_vars();
    let states = r.final_states.unwrap_or_default();
    let var = |v: &CondVar| Box::new(CondExpr::Var(v.clone()));
    let mut any = CondExpr::Const(0);
    for s in states {
        let mut all = CondExpr::Const(1);
        for (v, x) in vars.iter().zip(s) {
            let eq = CondExpr::Bin(BinOp::Eq, var(v), Box::new(CondExpr::Const(x)));
            all = CondExpr::Bin(BinOp::LogAnd, Box::new(all), Box::new(eq));
        }
        any = CondExpr::Bin(BinOp::LogOr, Box::new(any), Box::new(all));
    }
    prog.cond = Some(FinalCond {
        quant: Quantifier::Forall,
        expr: any,
        text: "an SC final state".into(),
        loc: SrcLoc::new(0, 1, 1),
    });
    prog
}

fn safe_by_reference(prog: &Program, model: ModelKind) -> bool {
    let o = fencer_reference::explore(prog, model, &fencer_reference::Options::default());
    o.report.verdict == Verdict::Safe
}

fn safe(prog: &Program, model: ModelKind) -> bool {
    fencer_dpor::explore(prog, model, &fencer_dpor::Options::default()).verdict == Verdict::Safe
}

fn positions(prog: &Program) -> Vec<Position> {
    let mut out = Vec::new();
    for (f, func) in prog.functions.iter().enumerate() {
        for pc in 0..=func.body.len() as u32 {
            out.push(Position { func: f as u32, pc });
        }
    }
    out
}

/// No set of `k` fences, `full` of them full and the rest store-store, repairs `prog`
/// (full fences first in each set: a set of positions is tried with every choice of which
/// `full` of them are full).
fn no_set_repairs(prog: &Program, k: usize, full: usize, model: ModelKind) -> bool {
    let pos = positions(prog);
    fn go(
        prog: &Program,
        pos: &[Position],
        k: usize,
        full: usize,
        from: usize,
        cur: &mut Vec<Fence>,
        model: ModelKind,
    ) -> bool {
        if cur.len() == k {
            return !safe(&edit::insert_fences(prog, cur).prog, model);
        }
        let fulls = cur.iter().filter(|f| f.kind == FenceKind::Full).count();
        (from..pos.len()).all(|i| {
            let mut ok = true;
            for kind in [FenceKind::Full, FenceKind::StoreStore] {
                let left = k - cur.len() - 1;
                let f = fulls + usize::from(kind == FenceKind::Full);
                if f > full || f + left < full {
                    continue;
                }
                cur.push(Fence { pos: pos[i], kind });
                ok &= go(prog, pos, k, full, i + 1, cur, model);
                cur.pop();
            }
            ok
        })
    }
    go(prog, &pos, k, full, 0, &mut Vec::new(), model)
}

#[test]
fn random_programs_are_repaired_minimally() {
    let cases: u64 = std::env::var("FENCER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let shape = fencer_testgen::Shape::default();
    let (mut repaired, mut brute, mut brute_kinds, mut ss) = (0, 0, 0, 0);
    for seed in 0..cases {
        let src = fencer_testgen::program(seed, &shape);
        let prog = fencer_text::parse_program("gen.fen", &src).expect("generated programs parse");
        let prog = with_sc_outcomes(prog);
        for model in [ModelKind::Tso, ModelKind::Pso] {
            match repair(&prog, model, &Options::default()) {
                Outcome::NotNeeded { .. } => {}
                Outcome::Repaired(r) => {
                    assert!(
                        r.exact,
                        "seed {seed} {model:?}: a local path was not re-traced\n{src}"
                    );
                    assert!(
                        safe_by_reference(&r.fenced, model),
                        "seed {seed} {model:?}: {:?} is no repair\n{src}",
                        r.fences
                    );
                    repaired += 1;
                    let (n, full) = cost(&r.fences);
                    ss += n - full;
                    let p = positions(&prog).len() as u64;
                    let choose = |k: u64| (0..k).fold(1, |c, i| c * (p - i) / (i + 1));
                    if choose(n as u64 - 1) <= 200 {
                        assert!(
                            no_set_repairs(&prog, n - 1, n - 1, model),
                            "seed {seed} {model:?}: fewer than {n} fences repair it\n{src}"
                        );
                        brute += 1;
                    }
                    // As many fences, one full fence fewer: the cost's second half.
                    if model == ModelKind::Pso && full > 0 && choose(n as u64) <= 200 {
                        assert!(
                            no_set_repairs(&prog, n, full - 1, model),
                            "seed {seed}: {n} fences with fewer than {full} full repair it\n{src}"
                        );
                        brute_kinds += 1;
                    }
                }
                other => panic!("seed {seed} {model:?}: {other:?}\n{src}"),
            }
        }
    }
    eprintln!(
        "{repaired} repairs ({ss} store-store fences), {brute} checked by brute force, \
         {brute_kinds} also for fewer full fences"
    );
    assert!(repaired >= cases / 10, "{repaired} repairs");
    assert!(ss > 0, "no repair used a store-store fence");
}
