//! Random programs over the IR where thread ids matter: several threads spawn, spawned
//! ids are stored, published, asserted on and joined by other threads, and some joins
//! name an id as a constant (a thread that may not exist yet). Thread ids are handed out
//! in the order spawns run, so these programs hold the engines to that: two spawns of
//! different threads do not commute, and a join races with its child's spawn.

use crate::heap::{generated, object, Code};
use crate::Rng;
use fencer_ir::{Addr, BinOp, Expr, FuncId, Function, ObjKind, Op, Program, Reg};

const SLOTS: u32 = 2;

struct Gen<'r> {
    r: &'r mut Rng,
    code: Code,
    /// Registers holding ids this thread spawned and has not joined.
    spawned: Vec<Reg>,
}

impl Gen<'_> {
    /// One statement; a spawn only while `spawns` (the program's budget) lasts, so that
    /// the reference explorer stays exhaustive.
    fn statement(&mut self, nt: u32, x: u32, ids: u32, spawns: &mut u32) {
        let slot = Addr::Global {
            obj: ids,
            index: Expr::Const(self.r.range(0, SLOTS as u64 - 1) as i64),
        };
        match self.r.range(0, 7) {
            0..=2 if *spawns > 0 => {
                *spawns -= 1;
                let t = self.code.reg("t");
                let arg = self.r.range(1, 2) as i64;
                self.code.emit(Op::Spawn {
                    dst: t,
                    func: 0,
                    arg: Expr::Const(arg),
                });
                match self.r.range(0, 3) {
                    // Publish the id, for another thread to join.
                    0 => {
                        self.code.emit(Op::Store {
                            addr: slot,
                            value: Expr::Reg(t),
                        });
                    }
                    // Make the id part of the final state.
                    1 => {
                        self.code.emit(Op::Store {
                            addr: Addr::scalar(x),
                            value: Expr::Reg(t),
                        });
                    }
                    // Assert which id it got: true in some spawn orders only.
                    2 => {
                        let k = self.r.range(nt as u64, nt as u64 + 2) as i64;
                        self.code.emit(Op::Assert {
                            cond: Expr::bin(BinOp::Ne, Expr::Reg(t), Expr::Const(k)),
                            text: format!("t != {k}"),
                        });
                    }
                    _ => {}
                }
                self.spawned.push(t);
            }
            3 => {
                if let Some(t) = self.spawned.pop() {
                    self.code.emit(Op::Join(Expr::Reg(t)));
                } else {
                    // A forged id: the thread some spawn may have made, or not yet.
                    let c = self.r.range(nt as u64, nt as u64 + 1) as i64;
                    self.code.emit(Op::Join(Expr::Const(c)));
                }
            }
            4 => {
                // Join a published id, if there is one yet.
                let q = self.code.reg("q");
                self.code.emit(Op::Load {
                    dst: q,
                    addr: slot,
                    copy: false,
                });
                let br = self.code.emit(Op::Branch {
                    cond: Expr::bin(BinOp::Eq, Expr::Reg(q), Expr::Const(0)),
                    then_to: 0,
                    else_to: 0,
                });
                self.code.emit(Op::Join(Expr::Reg(q)));
                self.code.patch(br);
            }
            5 => {
                let r = self.code.reg("r");
                self.code.emit(Op::Load {
                    dst: r,
                    addr: Addr::scalar(x),
                    copy: false,
                });
            }
            _ => {
                let v = self.r.range(1, 2) as i64;
                self.code.emit(Op::Store {
                    addr: Addr::scalar(x),
                    value: Expr::Const(v),
                });
            }
        }
    }
}

/// A random program for `seed` whose threads spawn, publish, assert on and join thread
/// ids, some joins naming an id as a constant: 2-3 threads of 1-3 statements, and a helper
/// that spawned threads run (it stores its argument or its own id, reads, or fails for one
/// argument).
pub fn threads_program(seed: u64) -> Program {
    let mut r = Rng::new(seed ^ 0x5448_5244);
    let objects = vec![
        object("x", ObjKind::Shared, 1, false),
        object("ids", ObjKind::Shared, SLOTS as usize, true),
    ];
    let (x, ids) = (0, 1);
    let nt = r.range(2, 3) as u32;
    let mut functions = Vec::new();
    {
        let mut g = new_gen(&mut r, 0);
        g.code.regs.push("a".into());
        match g.r.range(0, 3) {
            // Fails at its start when spawned with 2 (the spawn is done all the same).
            3 => {
                g.code.emit(Op::Assert {
                    cond: Expr::bin(BinOp::Ne, Expr::Reg(0), Expr::Const(2)),
                    text: "a != 2".into(),
                });
            }
            0 => {
                g.code.emit(Op::Store {
                    addr: Addr::scalar(x),
                    value: Expr::Reg(0),
                });
            }
            1 => {
                let s = g.code.reg("s");
                g.code.emit(Op::ThreadId { dst: s });
                g.code.emit(Op::Store {
                    addr: Addr::scalar(x),
                    value: Expr::Reg(s),
                });
            }
            _ => {
                let v = g.code.reg("v");
                g.code.emit(Op::Load {
                    dst: v,
                    addr: Addr::scalar(x),
                    copy: false,
                });
            }
        }
        functions.push(finish(g, "helper", 1));
    }
    let mut spawns = 3;
    for t in 0..nt {
        let func = t + 1;
        let mut g = new_gen(&mut r, func);
        let n = g.r.range(1, if nt == 3 { 2 } else { 3 });
        for _ in 0..n {
            g.statement(nt, x, ids, &mut spawns);
        }
        functions.push(finish(g, &format!("t{t}"), 0));
    }
    generated(format!("threads{seed}"), "gen-threads", objects, functions)
}

fn new_gen(r: &mut Rng, func: FuncId) -> Gen<'_> {
    Gen {
        r,
        code: Code::new(func),
        spawned: Vec::new(),
    }
}

fn finish(g: Gen<'_>, name: &str, params: u32) -> Function {
    g.code.finish(name, params)
}
