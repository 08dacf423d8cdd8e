//! The translation against the reference explorer, on random thread functions (loads,
//! stores, compare-and-swap, a mutex, branches, arithmetic that wraps at 32 bits,
//! local computations, assertions and assumptions, an input or an address-taken local):
//!
//! - with a fixed number of threads (the system's `number_procs` instance, exact
//!   backward reachability), the verdict is the reference explorer's on the program that
//!   starts that many threads, for 1, 2 and 3;
//! - for any number of threads (`main` spawning for ever): SAFE means no violation with
//!   1, 2 or 3 threads, and a violation found with k threads is one the reference finds
//!   with k threads.

use fencer_ir::{
    Addr, BinOp, Expr, Function, ObjKind, Object, Op, Program, SrcLoc, ThreadDecl, UnOp,
};
use fencer_memory::ModelKind;
use fencer_param::Outcome;
use fencer_report::Verdict;
use fencer_testgen::Rng;

const X: u32 = 0;
const Y: u32 = 1;
const M: u32 = 2;

fn object(name: &str, kind: ObjKind, init: i64) -> Object {
    Object {
        name: name.into(),
        kind,
        size: 1,
        init: if init == 0 { vec![] } else { vec![(0, init)] },
        is_array: false,
        cell_names: vec![],
        loc: SrcLoc::NONE,
    }
}

fn ins(op: Op, line: u32) -> fencer_ir::Instr {
    fencer_ir::Instr {
        op,
        loc: SrcLoc::new(0, line, 1),
    }
}

/// A thread function of 4 to 9 statements over `x`, `y` and the mutex `m`; registers 1..=3.
fn worker(r: &mut Rng) -> Function {
    let mut body: Vec<Op> = Vec::new();
    let mut holding = false;
    let reg = |r: &mut Rng| 1 + r.below(3) as u32;
    // Half the workers have a local variable whose address is taken (register 4 holds
    // it), written first; the others an input in register 1.
    let local = r.chance(50);
    if local {
        body.push(Op::Alloc {
            dst: 4,
            size: Expr::Const(1),
            stack: true,
            zeroed: false,
        });
        body.push(Op::Store {
            addr: Addr::Ptr(Expr::Reg(4)),
            value: Expr::Const(r.range(0, 2) as i64),
        });
    } else {
        body.push(Op::Nondet {
            dst: 1,
            bits: *r.pick(&[1u8, 2]),
        });
    }
    let cell = |r: &mut Rng| match r.below(if local { 5 } else { 4 }) {
        0 | 1 => Addr::scalar(X),
        2 | 3 => Addr::scalar(Y),
        _ => Addr::Ptr(Expr::Reg(4)),
    };
    let small = |r: &mut Rng| r.range(0, 3) as i64 - 1;
    let n = r.range(4, 9);
    for _ in 0..n {
        match r.below(10) {
            0 | 1 => body.push(Op::Load {
                dst: reg(r),
                addr: cell(r),
                copy: false,
            }),
            2 | 3 => {
                let value = if r.chance(50) {
                    Expr::Const(small(r))
                } else {
                    // Near the top of the 32-bit range now and then, so that it wraps.
                    let k = if r.chance(20) {
                        i32::MAX as i64
                    } else {
                        small(r)
                    };
                    Expr::Un(
                        UnOp::Sext(32),
                        Box::new(Expr::bin(BinOp::Add, Expr::Reg(reg(r)), Expr::Const(k))),
                    )
                };
                body.push(Op::Store {
                    addr: cell(r),
                    value,
                });
            }
            4 => body.push(Op::Rmw {
                dst: reg(r),
                addr: cell(r),
                op: fencer_ir::RmwOp::Cas {
                    expected: Expr::Const(small(r)),
                    new: Expr::Const(small(r)),
                },
            }),
            5 => {
                // A mutex, mostly used right; an unlock it does not hold now and then.
                if holding || r.chance(10) {
                    body.push(Op::Unlock(Addr::scalar(M)));
                    holding = false;
                } else {
                    body.push(Op::Lock(Addr::scalar(M)));
                    holding = true;
                }
            }
            6 => {
                let op = *r.pick(&[BinOp::Eq, BinOp::Lt, BinOp::ULt, BinOp::Ne]);
                let at = body.len() as u32;
                // Skips the next statement when the condition holds.
                body.push(Op::Branch {
                    cond: Expr::bin(op, Expr::Reg(reg(r)), Expr::Const(small(r))),
                    then_to: at + 2,
                    else_to: at + 1,
                });
            }
            7 | 8 => {
                let op = *r.pick(&[BinOp::Ne, BinOp::Le, BinOp::UGe, BinOp::Eq]);
                body.push(Op::Assert {
                    cond: Expr::bin(op, Expr::Reg(reg(r)), Expr::Const(small(r))),
                    text: "random".into(),
                });
            }
            9 if r.chance(50) => {
                // A local computation: wrapping arithmetic, or a comparison as a value.
                let src = Expr::Reg(reg(r));
                let expr = if r.chance(50) {
                    let k = if r.chance(20) {
                        i32::MAX as i64
                    } else {
                        small(r)
                    };
                    Expr::Un(
                        UnOp::Sext(32),
                        Box::new(Expr::bin(BinOp::Add, src, Expr::Const(k))),
                    )
                } else {
                    Expr::bin(
                        *r.pick(&[BinOp::Lt, BinOp::UGt]),
                        src,
                        Expr::Const(small(r)),
                    )
                };
                body.push(Op::Local { dst: reg(r), expr });
            }
            _ => body.push(Op::Assume(Expr::bin(
                BinOp::Ne,
                Expr::Reg(reg(r)),
                Expr::Const(small(r)),
            ))),
        }
    }
    if holding {
        body.push(Op::Unlock(Addr::scalar(M)));
    }
    if local {
        body.push(Op::Free(Expr::Reg(4)));
    }
    body.push(Op::Return(None));
    // A branch that would skip past the end skips to the return.
    let last = body.len() as u32 - 1;
    for op in &mut body {
        if let Op::Branch { then_to, .. } = op {
            *then_to = (*then_to).min(last);
        }
    }
    Function {
        name: "worker".into(),
        params: 1,
        reg_names: vec!["arg".into(), "a".into(), "b".into(), "c".into(), "p".into()],
        body: body
            .into_iter()
            .enumerate()
            .map(|(i, op)| ins(op, i as u32 + 1))
            .collect(),
        loc: SrcLoc::NONE,
    }
}

fn listing(f: &Function) -> String {
    f.body
        .iter()
        .enumerate()
        .map(|(i, x)| format!("{i:3} {:?}\n", x.op))
        .collect()
}

fn programs(seed: u64) -> (Function, Vec<Object>) {
    let mut r = Rng::new(seed);
    let objects = vec![
        object("x", ObjKind::Shared, r.range(0, 1) as i64),
        object("y", ObjKind::Shared, 0),
        object("m", ObjKind::Mutex, 0),
    ];
    (worker(&mut r), objects)
}

fn spawning_for_ever(f: &Function, objects: &[Object]) -> Program {
    let main = Function {
        name: "main".into(),
        params: 0,
        reg_names: vec!["t".into()],
        body: vec![
            ins(
                Op::Spawn {
                    dst: 0,
                    func: 0,
                    arg: Expr::Const(0),
                },
                100,
            ),
            ins(Op::Jump(0), 100),
        ],
        loc: SrcLoc::NONE,
    };
    let mut p = Program::new(
        "forever",
        objects.to_vec(),
        vec![f.clone(), main],
        vec![ThreadDecl {
            name: "main".into(),
            func: 1,
            arg: 0,
        }],
    );
    p.hang_is_violation = false;
    p
}

fn with_threads(f: &Function, objects: &[Object], n: u8) -> Program {
    let threads = (0..n)
        .map(|i| ThreadDecl {
            name: format!("w{i}"),
            func: 0,
            arg: 0,
        })
        .collect();
    let mut p = Program::new("fixed", objects.to_vec(), vec![f.clone()], threads);
    p.hang_is_violation = false;
    p
}

/// The reference explorer's verdict; `None` where it runs out of states (three threads
/// with an input can take millions of state-trace pairs), which the test counts.
fn reference(p: &Program) -> Option<bool> {
    let opts = fencer_reference::Options {
        max_states: Some(200_000),
        ..Default::default()
    };
    let out = fencer_reference::explore(p, ModelKind::Sc, &opts);
    match out.report.verdict {
        Verdict::Incomplete => None,
        v => Some(v == Verdict::Violation),
    }
}

fn param(sys: &fencer_param::System) -> Outcome {
    let opts = fencer_param::Options {
        max_nodes: Some(20_000),
        timeout: Some(std::time::Duration::from_secs(2)),
        ..Default::default()
    };
    fencer_param::check(sys, &opts).outcome
}

#[test]
fn random_threads_agree_with_the_reference() {
    let (mut safe, mut unsafe_, mut unknown, mut skipped) = (0, 0, 0, 0);
    let seeds: Vec<u64> = match std::env::var("SEEDS") {
        Ok(v) => v.split(',').map(|x| x.parse().unwrap()).collect(),
        Err(_) => (0..120).collect(),
    };
    for seed in seeds {
        let (f, objects) = programs(seed);
        let started = std::time::Instant::now();
        let t = fencer_unbounded::translate(&spawning_for_ever(&f, &objects))
            .unwrap_or_else(|e| panic!("seed {seed}: refused: {e}"));
        let mut expected = Vec::new();
        for n in 1..=3u8 {
            let Some(bad) = reference(&with_threads(&f, &objects, n)) else {
                skipped += 1;
                continue;
            };
            expected.push(bad);
            let mut sys = t.system.clone();
            sys.procs = Some(n);
            match param(&sys) {
                Outcome::Safe { .. } => assert!(
                    !bad,
                    "seed {seed}, {n} threads: SAFE, the reference finds a violation"
                ),
                Outcome::Unsafe { trace, states, .. } => assert!(
                    bad,
                    "seed {seed}, {n} threads: a violation the reference does not find\n{}\ntrace: {:?}\nstates: {states:?}",
                    listing(&f),
                    trace
                        .iter()
                        .map(|s| t.system.transitions[s.transition].name.clone())
                        .collect::<Vec<_>>()
                ),
                o => panic!("seed {seed}, {n} threads: {o:?}"),
            }
        }
        match param(&t.system) {
            Outcome::Safe { .. } => {
                safe += 1;
                assert!(
                    !expected.contains(&true),
                    "seed {seed}: SAFE for any number, but not for {expected:?}"
                );
            }
            Outcome::Unsafe { procs, .. } => {
                unsafe_ += 1;
                assert_ne!(
                    reference(&with_threads(&f, &objects, procs)),
                    Some(false),
                    "seed {seed}: a violation with {procs} threads the reference does not find"
                );
            }
            Outcome::Limit(_) => unknown += 1,
            o => panic!("seed {seed}: {o:?}"),
        }
        if std::env::var_os("VERBOSE").is_some() {
            eprintln!("seed {seed}: {:?}", started.elapsed());
        }
    }
    eprintln!(
        "any number of threads: {safe} safe, {unsafe_} unsafe, {unknown} over the budget; \
         {skipped} fixed instances the reference could not finish"
    );
    assert!(safe > 10 && unsafe_ > 10, "{safe} safe, {unsafe_} unsafe");
    assert!(skipped < 20, "{skipped} instances unchecked");
}
