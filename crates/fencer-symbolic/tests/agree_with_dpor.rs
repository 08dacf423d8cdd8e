//! The symbolic engine against the DPOR engine on random loop-free programs with inputs:
//! each input is assumed in 0..=3; DPOR checks the program once per valuation of the
//! inputs (each input replaced by its constant), and the symbolic verdict must be
//! "unsafe" exactly when some valuation is. Every symbolic counterexample is also replayed
//! on the concrete machine with its input values.

use fencer_ir::{
    Addr, BinOp, Expr, Function, Instr, ObjKind, Object, Op, Program, SrcLoc, ThreadDecl,
};
use fencer_machine::{State, Status, Step};
use fencer_memory::{ModelKind, Sc};
use fencer_symbolic::{check, Options, Por, Verdict};
use proptest::prelude::*;

const REGS: u32 = 4;
/// Shared variables; three, so that three threads can also be independent.
const VARS: u32 = 3;

#[derive(Clone, Debug)]
enum S {
    Load(u32, u32),
    Store(u32, u32, i64),
    Arith(u32, BinOp, u32, i64),
    Skip(u32, i64, u32),
    Assert(u32, BinOp, i64),
    /// Spins until the variable holds the value (a loop without a bound: not for DPOR).
    Await(u32, i64),
}

fn stmt() -> impl Strategy<Value = S> {
    let reg = 0..REGS;
    let var = 0..VARS;
    let k = -2i64..5;
    prop_oneof![
        (reg.clone(), var.clone()).prop_map(|(r, v)| S::Load(r, v)),
        (var, reg.clone(), k.clone()).prop_map(|(v, r, k)| S::Store(v, r, k)),
        (
            reg.clone(),
            prop::sample::select(vec![
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::Lt,
                BinOp::Eq
            ]),
            reg.clone(),
            k.clone()
        )
            .prop_map(|(d, op, a, k)| S::Arith(d, op, a, k)),
        (reg.clone(), k.clone(), 1..3u32).prop_map(|(r, k, n)| S::Skip(r, k, n)),
        (
            reg,
            prop::sample::select(vec![BinOp::Ne, BinOp::Lt, BinOp::Ge]),
            k
        )
            .prop_map(|(r, op, k)| S::Assert(r, op, k)),
    ]
}

fn ins(op: Op) -> Instr {
    Instr {
        op,
        loc: SrcLoc::new(0, 1, 1),
    }
}

/// A thread: reads an input into r0 (assumed 0..=3), then the statements.
fn thread(name: &str, body: &[S], input: Option<i64>) -> Function {
    let mut code = vec![match input {
        None => ins(Op::Nondet { dst: 0, bits: 32 }),
        Some(v) => ins(Op::Local {
            dst: 0,
            expr: Expr::Const(v),
        }),
    }];
    code.push(ins(Op::Assume(Expr::bin(
        BinOp::Le,
        Expr::Const(0),
        Expr::Reg(0),
    ))));
    code.push(ins(Op::Assume(Expr::bin(
        BinOp::Le,
        Expr::Reg(0),
        Expr::Const(3),
    ))));
    // Statement i starts at instruction `starts[i]`; skips jump forward over statements.
    let base = code.len();
    let mut starts = vec![base];
    for s in body {
        let len = if matches!(s, S::Await(..)) { 2 } else { 1 };
        starts.push(starts.last().unwrap() + len);
    }
    for (i, s) in body.iter().enumerate() {
        let op = match s {
            S::Await(v, k) => {
                code.push(ins(Op::Load {
                    dst: REGS,
                    addr: Addr::scalar(*v),
                    copy: false,
                }));
                Op::Branch {
                    cond: Expr::bin(BinOp::Ne, Expr::Reg(REGS), Expr::Const(*k)),
                    then_to: starts[i] as u32,
                    else_to: starts[i + 1] as u32,
                }
            }
            S::Load(r, v) => Op::Load {
                dst: *r,
                addr: Addr::scalar(*v),
                copy: false,
            },
            S::Store(v, r, k) => Op::Store {
                addr: Addr::scalar(*v),
                value: Expr::bin(BinOp::Add, Expr::Reg(*r), Expr::Const(*k)),
            },
            S::Arith(d, BinOp::Mul, a, k) => Op::Local {
                dst: *d,
                expr: Expr::bin(BinOp::Mul, Expr::Reg(*a), Expr::Const(*k)),
            },
            S::Arith(d, op, a, k) => Op::Local {
                dst: *d,
                expr: Expr::bin(
                    *op,
                    Expr::Reg(*a),
                    Expr::Reg((*a + k.unsigned_abs() as u32) % REGS),
                ),
            },
            S::Skip(r, k, n) => Op::Branch {
                cond: Expr::bin(BinOp::Lt, Expr::Reg(*r), Expr::Const(*k)),
                then_to: starts[(i + 1 + *n as usize).min(body.len())] as u32,
                else_to: starts[i + 1] as u32,
            },
            S::Assert(r, op, k) => Op::Assert {
                cond: Expr::bin(*op, Expr::Reg(*r), Expr::Const(*k)),
                text: "a".into(),
            },
        };
        code.push(ins(op));
    }
    Function {
        name: name.into(),
        params: 0,
        reg_names: (0..=REGS).map(|r| format!("r{r}")).collect(),
        body: code,
        loc: SrcLoc::NONE,
    }
}

fn program(bodies: &[Vec<S>], inputs: Option<&[i64]>) -> Program {
    let obj = |n: &str| Object {
        name: n.into(),
        kind: ObjKind::Shared,
        size: 1,
        init: Vec::new(),
        is_array: false,
        cell_names: Vec::new(),
        loc: SrcLoc::NONE,
    };
    Program {
        name: "random".into(),
        files: vec!["random".into()],
        objects: (0..VARS).map(|v| obj(&format!("v{v}"))).collect(),
        functions: bodies
            .iter()
            .enumerate()
            .map(|(k, b)| thread(&format!("t{k}"), b, inputs.map(|i| i[k])))
            .collect(),
        threads: (0..bodies.len())
            .map(|k| ThreadDecl {
                name: format!("t{k}"),
                func: k as u32,
                arg: 0,
            })
            .collect(),
        cond: None,
        observe: Vec::new(),
        observe_explicit: true,
        source_trace: false,
        hang_is_violation: false,
        assumptions: Vec::new(),
        uninit_arbitrary: false,
        wait_variant: None,
    }
}

fn replays(prog: &Program, t: &fencer_symbolic::Trace) -> bool {
    let (mut s, mut last) = State::initial_with_inputs(prog, t.inputs.clone());
    for &th in &t.schedule {
        if matches!(last, Status::Fault(_)) {
            break;
        }
        if !s.thread_enabled::<Sc>(prog, th) {
            return false;
        }
        last = s.step::<Sc>(prog, Step::Thread(th)).1;
    }
    matches!(last, Status::Fault(f) if f.src == t.fault.src && f.kind.name() == t.fault.kind)
}

/// Whether DPOR finds a violation for some valuation of the inputs in 0..=3.
fn dpor_unsafe(bodies: &[Vec<S>]) -> bool {
    let n = bodies.len() as u32;
    (0..4i64.pow(n)).any(|mut k| {
        let vals: Vec<i64> = (0..n)
            .map(|_| {
                let v = k % 4;
                k /= 4;
                v
            })
            .collect();
        let p = program(bodies, Some(&vals));
        let r = fencer_dpor::explore(&p, ModelKind::Sc, &fencer_dpor::Options::default());
        r.verdict == fencer_report::Verdict::Violation
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]
    /// Under each partial-order reduction (sleep sets only; source sets with summaries;
    /// source sets reading covering subtrees path by path).
    #[test]
    fn symbolic_verdicts_match_dpor_over_every_input(
        bodies in prop::collection::vec(prop::collection::vec(stmt(), 1..6), 2..4),
    ) {
        let sym = program(&bodies, None);
        let dpor_unsafe = dpor_unsafe(&bodies);
        for por in [Por::Sleep, Por::Source, Por::SourceEnumerate] {
            let out = check(&sym, &Options { por, ..Options::default() });
            match &out.verdict {
                Verdict::Safe => prop_assert!(!dpor_unsafe, "{por:?}: symbolic says safe, DPOR finds a violation"),
                Verdict::Unsafe(t) => {
                    prop_assert!(dpor_unsafe, "{por:?}: symbolic says unsafe, DPOR finds none: {t:?}");
                    prop_assert!(replays(&sym, t), "{por:?}: the trace does not replay: {t:?}");
                    // (An input whose `assume` the trace never reaches may take any value.)
                }
                // Multiplying two inputs is outside the engine's fragment: it must say so.
                Verdict::Incomplete(i) => prop_assert!(
                    matches!(i, fencer_symbolic::Incomplete::Unsupported(_)),
                    "{por:?}: incomplete: {i:?}"
                ),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]
    /// With spin loops (cycles that covers close, where a reduction could ignore the
    /// thread a loop waits for), source sets and sleep sets alone give the same verdicts.
    #[test]
    fn source_sets_agree_with_sleep_sets_on_spin_loops(
        bodies in prop::collection::vec(
            prop::collection::vec(
                prop_oneof![
                    4 => stmt(),
                    1 => (0..VARS, -1i64..3).prop_map(|(v, k)| S::Await(v, k)),
                ],
                1..6,
            ),
            2..4,
        ),
    ) {
        let sym = program(&bodies, None);
        let opts = |por| Options { por, max_nodes: 20_000, ..Options::default() };
        let sleep = check(&sym, &opts(Por::Sleep));
        for por in [Por::Source, Por::SourceEnumerate] {
            let out = check(&sym, &opts(por));
            match (&sleep.verdict, &out.verdict) {
                (Verdict::Incomplete(_), _) | (_, Verdict::Incomplete(_)) => {}
                (Verdict::Safe, Verdict::Safe) => {}
                (Verdict::Unsafe(_), Verdict::Unsafe(t)) => {
                    prop_assert!(replays(&sym, t), "{por:?}: the trace does not replay: {t:?}");
                }
                (a, b) => prop_assert!(false, "sleep sets: {a:?}, {por:?}: {b:?}"),
            }
        }
    }
}
