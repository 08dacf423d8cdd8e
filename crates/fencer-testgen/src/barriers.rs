//! Random programs over the IR with barriers ([`Op::BarrierArrive`], [`Op::BarrierPass`]):
//! 2-3 threads that store, load, assert on what they loaded, and wait at a barrier whose
//! count may be below the number of threads (generations of different members), above it
//! (a wait nobody ends), or 1; some read their serial result (assert on it, store it), and
//! a thread may destroy or re-initialise the barrier (a store to its cell). They hold the
//! engines to the barrier's dependence: arrivals of one generation commute, the last does
//! not where the serial result is read, and arrivals of different generations never do.

use crate::heap::{generated, object, Code};
use crate::Rng;
use fencer_ir::{Addr, BinOp, Expr, ObjKind, Op, Program};

/// A random program for `seed` with a barrier (see the module).
pub fn barrier_program(seed: u64) -> Program {
    let mut r = Rng::new(seed ^ 0x4241_5252);
    let nt = r.range(2, 3) as u32;
    let count = r.range(1, nt as u64 + 1) as i64;
    let mut bar = object("bar", ObjKind::Shared, 1, false);
    bar.init = vec![(0, count)];
    let objects = vec![
        object("x", ObjKind::Shared, 1, false),
        object("y", ObjKind::Shared, 1, false),
        bar,
    ];
    let (x, y, b) = (0u32, 1u32, 2u32);
    let mut functions = Vec::new();
    // No function 0 is a thread: `generated` starts threads at function 1.
    let mut unused = Code::new(0);
    unused.emit(Op::Return(None));
    functions.push(unused.finish("unused", 0));
    let mut waits = 4;
    for t in 0..nt {
        let mut c = Code::new(t + 1);
        let n = r.range(2, 4);
        for _ in 0..n {
            let cell = if r.range(0, 1) == 0 { x } else { y };
            match r.range(0, 9) {
                0..=3 if waits > 0 => {
                    waits -= 1;
                    let serial = (r.range(0, 2) == 0).then(|| c.reg("s"));
                    c.emit(Op::BarrierArrive {
                        addr: Addr::scalar(b),
                        serial,
                    });
                    c.emit(Op::BarrierPass(Addr::scalar(b)));
                    if let Some(s) = serial {
                        match r.range(0, 2) {
                            // The serial result decides a violation.
                            0 => {
                                c.emit(Op::Assert {
                                    cond: Expr::bin(BinOp::Eq, Expr::Reg(s), Expr::Const(0)),
                                    text: "not the last".into(),
                                });
                            }
                            1 => {
                                c.emit(Op::Store {
                                    addr: Addr::scalar(cell),
                                    value: Expr::bin(BinOp::Add, Expr::Reg(s), Expr::Const(5)),
                                });
                            }
                            // Read, and nothing done with it.
                            _ => {}
                        }
                    }
                }
                4 => {
                    let v = c.reg("r");
                    c.emit(Op::Load {
                        dst: v,
                        addr: Addr::scalar(cell),
                        copy: false,
                    });
                    let k = r.range(0, 2) as i64;
                    c.emit(Op::Assert {
                        cond: Expr::bin(BinOp::Ne, Expr::Reg(v), Expr::Const(k)),
                        text: format!("r != {k}"),
                    });
                }
                5 => {
                    let v = c.reg("r");
                    c.emit(Op::Load {
                        dst: v,
                        addr: Addr::scalar(cell),
                        copy: false,
                    });
                }
                // Destroy (count 0: later arrivals fail) or initialise again.
                6 if r.range(0, 3) == 0 => {
                    let v = if r.range(0, 1) == 0 { 0 } else { count };
                    c.emit(Op::Store {
                        addr: Addr::scalar(b),
                        value: Expr::Const(v),
                    });
                }
                _ => {
                    let v = r.range(1, 2) as i64;
                    c.emit(Op::Store {
                        addr: Addr::scalar(cell),
                        value: Expr::Const(v),
                    });
                }
            }
        }
        functions.push(c.finish(&format!("t{t}"), 0));
    }
    generated(
        format!("barriers{seed}"),
        "gen-barriers",
        objects,
        functions,
    )
}
