//! Random programs over the IR where a mutex is also a memory word: besides locks,
//! trylocks, unlocks (by the owner or not) and destroys, threads store into the mutex's
//! word, take it by compare-and-swap as a hand-made lock and release it by a store, swap
//! values into it, and read it; a heap mutex is allocated, published, locked by other
//! threads and freed, held or not. The machine's mutex is held while its word is not zero,
//! whatever wrote it; the engines' clocks must agree (a lock can run just before a write
//! only where the mutex was free), and each of these once gave an internal error or a
//! wrong *safe* on hand-written programs.

use crate::heap::{generated, object, Code};
use crate::Rng;
use fencer_ir::{Addr, BinOp, Expr, ObjKind, Op, Program, Reg, RmwOp};

struct Gen<'r> {
    r: &'r mut Rng,
    code: Code,
    holds_lock: bool,
    /// A heap mutex this thread allocated and published, not yet freed.
    mine: Option<Reg>,
    /// This thread may still spawn the helper (which locks the mutex): thread 0, once.
    may_spawn: bool,
    /// How many threads the program declares.
    threads: u32,
}

impl Gen<'_> {
    fn store(&mut self, addr: Addr, value: i64) {
        self.code.emit(Op::Store {
            addr,
            value: Expr::Const(value),
        });
    }

    /// `if (r != v) skip the next instructions`; returns the branch to patch.
    fn skip_unless(&mut self, r: Reg, v: i64) -> usize {
        self.code.emit(Op::Branch {
            cond: Expr::bin(BinOp::Ne, Expr::Reg(r), Expr::Const(v)),
            then_to: 0,
            else_to: 0,
        })
    }

    fn statement(&mut self, x: u32, m: u32, slot: u32) {
        let mx = Addr::scalar(m);
        let v = self.r.range(1, 3) as i64;
        match self.r.range(0, 13) {
            // Join the other threads, write the mutex's word alone (the engine records
            // such writes without clocks), then start a thread that locks it.
            12 if self.may_spawn => {
                self.may_spawn = false;
                for other in 1..self.threads {
                    self.code.emit(Op::Join(Expr::Const(other as i64)));
                }
                if self.r.chance(70) {
                    let w = self.r.range(0, 2) as i64;
                    self.store(mx.clone(), w);
                }
                let t = self.code.reg("t");
                self.code.emit(Op::Spawn {
                    dst: t,
                    func: 0,
                    arg: Expr::Const(v),
                });
                if self.r.chance(60) {
                    let w = self.r.range(0, 1) as i64;
                    self.store(mx, w);
                }
                if self.r.chance(50) {
                    self.code.emit(Op::Join(Expr::Reg(t)));
                }
            }
            0 if self.holds_lock => {
                self.code.emit(Op::Unlock(mx));
                self.holds_lock = false;
            }
            0 => {
                self.code.emit(Op::Lock(mx));
                self.holds_lock = true;
            }
            1 if !self.holds_lock => {
                let b = self.code.reg("b");
                self.code.emit(Op::TryLock {
                    dst: b,
                    addr: mx.clone(),
                });
                let br = self.skip_unless(b, 0);
                self.store(Addr::scalar(x), v);
                self.code.emit(Op::Unlock(mx));
                self.code.patch(br);
            }
            // A plain store into the mutex's word: 0 (an init, or a hand-made release),
            // or a value that makes it held.
            2 => {
                let w = self.r.range(0, 2) as i64;
                self.store(mx, w);
            }
            // A hand-made lock: compare-and-swap 0 -> 1, then a release store of 0.
            3 => {
                let c = self.code.reg("c");
                self.code.emit(Op::Rmw {
                    dst: c,
                    addr: mx.clone(),
                    op: RmwOp::Cas {
                        expected: Expr::Const(0),
                        new: Expr::Const(1),
                    },
                });
                let br = self.skip_unless(c, 0);
                self.store(Addr::scalar(x), v);
                if self.r.chance(80) {
                    self.store(mx, 0);
                }
                self.code.patch(br);
            }
            4 => {
                let c = self.code.reg("c");
                let w = self.r.range(0, 1) as i64;
                self.code.emit(Op::Rmw {
                    dst: c,
                    addr: mx,
                    op: RmwOp::Xchg(Expr::Const(w)),
                });
            }
            5 => {
                self.code.emit(Op::MutexDestroy(mx));
            }
            // An unlock, maybe of a mutex this thread does not hold (a fault).
            6 => {
                self.code.emit(Op::Unlock(mx));
                self.holds_lock = false;
            }
            7 => {
                let r = self.code.reg("r");
                let addr = if self.r.chance(50) {
                    mx
                } else {
                    Addr::scalar(x)
                };
                self.code.emit(Op::Load {
                    dst: r,
                    addr,
                    copy: false,
                });
            }
            // Allocate a heap mutex (zeroed: free), maybe lock it, publish it.
            8 if self.mine.is_none() => {
                let p = self.code.reg("p");
                self.code.emit(Op::Alloc {
                    dst: p,
                    size: Expr::Const(1),
                    zeroed: true,
                    stack: false,
                });
                if self.r.chance(50) {
                    self.code.emit(Op::Lock(Addr::Ptr(Expr::Reg(p))));
                }
                self.code.emit(Op::Store {
                    addr: Addr::scalar(slot),
                    value: Expr::Reg(p),
                });
                self.mine = Some(p);
            }
            8 | 9 => match self.mine.take() {
                Some(p) => {
                    self.code.emit(Op::Free(Expr::Reg(p)));
                }
                None => self.store(Addr::scalar(x), v),
            },
            // Use the published heap mutex.
            10 => {
                let q = self.code.reg("q");
                self.code.emit(Op::Load {
                    dst: q,
                    addr: Addr::scalar(slot),
                    copy: false,
                });
                let br = self.code.emit(Op::Branch {
                    cond: Expr::bin(BinOp::Eq, Expr::Reg(q), Expr::Const(0)),
                    then_to: 0,
                    else_to: 0,
                });
                let at = Addr::Ptr(Expr::Reg(q));
                match self.r.range(0, 4) {
                    0 => {
                        self.code.emit(Op::Lock(at));
                    }
                    1 => {
                        let b = self.code.reg("b");
                        self.code.emit(Op::TryLock { dst: b, addr: at });
                    }
                    2 => {
                        self.code.emit(Op::Unlock(at));
                    }
                    3 => {
                        self.code.emit(Op::Free(Expr::Reg(q)));
                    }
                    _ => self.store(at, v),
                }
                self.code.patch(br);
            }
            _ => self.store(Addr::scalar(x), v),
        }
    }
}

/// A random program for `seed` of 2-3 threads of 1-4 statements over a mutex word, a
/// shared variable and a published heap mutex (small enough for the reference explorer).
pub fn mutex_word_program(seed: u64) -> Program {
    let mut r = Rng::new(seed ^ 0x574f_5244);
    let mut objects = vec![
        object("x", ObjKind::Shared, 1, false),
        object("m", ObjKind::Mutex, 1, false),
        object("slot", ObjKind::Shared, 1, false),
    ];
    // Sometimes the mutex starts out held (a word initialised to a thread's id + 1, or
    // another non-zero value): only a store can free it then.
    if r.chance(20) {
        objects[1].init = vec![(0, r.range(1, 3) as i64)];
    }
    let (x, m, slot) = (0, 1, 2);
    let nt = r.range(2, 3) as u32;
    // Function 0 is the helper thread 0 may spawn: it locks the mutex, stores its
    // argument, unlocks. The program's threads are functions 1..
    let mut functions = {
        let mut c = Code::new(0);
        c.regs.push("a".into());
        c.emit(Op::Lock(Addr::scalar(m)));
        c.emit(Op::Store {
            addr: Addr::scalar(x),
            value: Expr::Reg(0),
        });
        c.emit(Op::Unlock(Addr::scalar(m)));
        vec![c.finish("helper", 1)]
    };
    for t in 0..nt {
        let mut g = Gen {
            r: &mut r,
            code: Code::new(t + 1),
            holds_lock: false,
            mine: None,
            may_spawn: t == 0,
            threads: nt,
        };
        let n = g.r.range(1, if nt == 3 { 3 } else { 4 });
        for _ in 0..n {
            g.statement(x, m, slot);
        }
        functions.push(g.code.finish(&format!("t{t}"), 0));
    }
    generated(format!("words{seed}"), "gen-words", objects, functions)
}
