//! Random programs over the IR directly, for what the text format cannot say: heap objects
//! whose pointers are published through globals, uses and frees of them by other threads,
//! mutexes taken and never released, trylocks, assumes, and spawned threads joined or not.
//! Every construct here once hid a DPOR bug (a free that did not race, a blocked lock that
//! did not race), so the oracle test runs these against the reference explorer.

use crate::Rng;
use fencer_ir::{
    Addr, BinOp, Expr, FuncId, Function, Instr, ObjKind, Object, Op, Program, Ptr, Reg, SrcLoc,
    ThreadDecl,
};
use std::fmt::Write as _;

const SLOTS: u32 = 2;

/// A function being generated: its code and register names.
pub(crate) struct Code {
    func: FuncId,
    pub(crate) body: Vec<Instr>,
    pub(crate) regs: Vec<String>,
}

impl Code {
    pub(crate) fn new(func: FuncId) -> Code {
        Code {
            func,
            body: Vec::new(),
            regs: Vec::new(),
        }
    }
    pub(crate) fn reg(&mut self, prefix: &str) -> Reg {
        self.regs.push(format!("{prefix}{}", self.regs.len()));
        self.regs.len() as Reg - 1
    }
    pub(crate) fn emit(&mut self, op: Op) -> usize {
        let line = self.body.len() as u32 + 1;
        self.body.push(Instr {
            op,
            loc: SrcLoc::new(0, line, self.func + 1),
        });
        self.body.len() - 1
    }
    /// Points the branch at `br` past the code emitted since (taken) or to the next
    /// instruction (not taken).
    pub(crate) fn patch(&mut self, br: usize) {
        let end = self.body.len() as u32;
        if let Op::Branch {
            then_to, else_to, ..
        } = &mut self.body[br].op
        {
            *then_to = end;
            *else_to = br as u32 + 1;
        }
    }
    pub(crate) fn finish(self, name: &str, params: u32) -> Function {
        function(name, params, self.regs, self.body)
    }
}

struct Gen<'r> {
    r: &'r mut Rng,
    code: Code,
    /// Registers holding this thread's own allocations.
    mine: Vec<Reg>,
    /// Registers loaded from somewhere (for assumes).
    loaded: Vec<Reg>,
    holds_lock: bool,
}

impl Gen<'_> {
    fn load(&mut self, dst: Reg, addr: Addr) {
        self.code.emit(Op::Load {
            dst,
            addr,
            copy: false,
        });
    }
    /// `if (r == 0) skip the next instructions`; returns the branch to patch.
    fn skip_if_zero(&mut self, r: Reg) -> usize {
        self.code.emit(Op::Branch {
            cond: Expr::bin(BinOp::Eq, Expr::Reg(r), Expr::Const(0)),
            then_to: 0,
            else_to: 0,
        })
    }

    fn statement(&mut self, slot_obj: u32, x: u32, m: u32, helper: Option<FuncId>) {
        let slot = Addr::Global {
            obj: slot_obj,
            index: Expr::Const(self.r.range(0, SLOTS as u64 - 1) as i64),
        };
        match self.r.range(0, 11) {
            0 | 1 => {
                // Allocate, initialise, publish.
                let p = self.code.reg("p");
                let size = self.r.range(1, 2) as i64;
                // Sometimes uninitialised (malloc): reading it before the store is an error.
                let zeroed = self.r.chance(50);
                self.code.emit(Op::Alloc {
                    dst: p,
                    size: Expr::Const(size),
                    zeroed,
                    stack: false,
                });
                if self.r.chance(50) {
                    let v = self.r.range(1, 3) as i64;
                    self.code.emit(Op::Store {
                        addr: Addr::Ptr(Expr::Reg(p)),
                        value: Expr::Const(v),
                    });
                }
                self.code.emit(Op::Store {
                    addr: slot,
                    value: Expr::Reg(p),
                });
                self.mine.push(p);
            }
            2 | 3 => {
                // Use what another thread published.
                let q = self.code.reg("q");
                self.load(q, slot);
                let br = self.skip_if_zero(q);
                if self.r.chance(50) {
                    let v = self.r.range(4, 6) as i64;
                    self.code.emit(Op::Store {
                        addr: Addr::Ptr(Expr::Reg(q)),
                        value: Expr::Const(v),
                    });
                } else {
                    let d = self.code.reg("d");
                    self.load(d, Addr::Ptr(Expr::Reg(q)));
                    self.loaded.push(d);
                }
                self.code.patch(br);
            }
            4 => {
                // Free what is published (maybe twice, maybe after another thread did).
                let q = self.code.reg("q");
                self.load(q, slot);
                let br = self.skip_if_zero(q);
                self.code.emit(Op::Free(Expr::Reg(q)));
                self.code.patch(br);
            }
            5 => {
                if let Some(p) = self.mine.pop() {
                    self.code.emit(Op::Free(Expr::Reg(p)));
                } else {
                    let v = self.r.range(1, 2) as i64;
                    self.code.emit(Op::Store {
                        addr: Addr::scalar(x),
                        value: Expr::Const(v),
                    });
                }
            }
            6 => {
                if self.holds_lock {
                    self.code.emit(Op::Unlock(Addr::scalar(m)));
                    self.holds_lock = false;
                } else {
                    // Sometimes never released.
                    self.code.emit(Op::Lock(Addr::scalar(m)));
                    self.holds_lock = true;
                }
            }
            7 if !self.holds_lock => {
                let b = self.code.reg("b");
                self.code.emit(Op::TryLock {
                    dst: b,
                    addr: Addr::scalar(m),
                });
                let br = self.code.emit(Op::Branch {
                    cond: Expr::bin(BinOp::Ne, Expr::Reg(b), Expr::Const(0)),
                    then_to: 0,
                    else_to: 0,
                });
                let v = self.r.range(1, 3) as i64;
                self.code.emit(Op::Store {
                    addr: Addr::scalar(x),
                    value: Expr::Const(v),
                });
                if self.r.chance(70) {
                    self.code.emit(Op::Unlock(Addr::scalar(m)));
                } else {
                    self.holds_lock = true;
                }
                self.code.patch(br);
                // After the `if`, this thread holds the mutex only on one path: keep the
                // static view simple by releasing nothing more.
                self.holds_lock = false;
            }
            8 => {
                let r = self.code.reg("r");
                self.load(r, Addr::scalar(x));
                self.loaded.push(r);
            }
            9 if !self.loaded.is_empty() => {
                let r = self.loaded[self.r.range(0, self.loaded.len() as u64 - 1) as usize];
                let v = self.r.range(0, 2) as i64;
                self.code.emit(Op::Assume(Expr::bin(
                    BinOp::Ne,
                    Expr::Reg(r),
                    Expr::Const(v),
                )));
            }
            10 if helper.is_some() => {
                let t = self.code.reg("t");
                let arg = self.r.range(1, 3) as i64;
                self.code.emit(Op::Spawn {
                    dst: t,
                    func: helper.expect("checked"),
                    arg: Expr::Const(arg),
                });
                if self.r.chance(60) {
                    self.code.emit(Op::Join(Expr::Reg(t)));
                }
            }
            _ => {
                let v = self.r.range(1, 3) as i64;
                self.code.emit(Op::Store {
                    addr: Addr::scalar(x),
                    value: Expr::Const(v),
                });
            }
        }
    }
}

/// A random heap-and-locks program for `seed`: 2-3 threads of 1-4 statements (small enough
/// for the exhaustive reference explorer).
pub fn heap_program(seed: u64) -> Program {
    let mut r = Rng::new(seed ^ 0x4845_4150);
    let objects = vec![
        object("slot", ObjKind::Shared, SLOTS as usize, true),
        object("x", ObjKind::Shared, 1, false),
        object("m", ObjKind::Mutex, 1, false),
    ];
    let (slot, x, m) = (0, 1, 2);
    let nt = r.range(2, 3) as u32;
    let mut functions = Vec::new();
    // Function 0: the helper spawned threads run: a store, or a mutex never released.
    {
        let mut g = new_gen(&mut r, 0);
        g.code.regs.push("a".into());
        if g.r.chance(50) {
            g.code.emit(Op::Store {
                addr: Addr::scalar(x),
                value: Expr::Reg(0),
            });
        } else {
            g.code.emit(Op::Lock(Addr::scalar(m)));
            g.code.emit(Op::Store {
                addr: Addr::scalar(x),
                value: Expr::Reg(0),
            });
        }
        functions.push(finish(g, "helper", 1));
    }
    for t in 0..nt {
        let func = t + 1;
        let mut g = new_gen(&mut r, func);
        let n = g.r.range(1, if nt == 3 { 3 } else { 4 });
        let helper = (t == 0).then_some(0);
        for _ in 0..n {
            g.statement(slot, x, m, helper);
        }
        functions.push(finish(g, &format!("t{t}"), 0));
    }
    generated(format!("heap{seed}"), "gen-heap", objects, functions)
}

/// A generated program whose function 0 is what spawned threads run and whose other
/// functions are threads `t0`, `t1`, ... in order.
pub(crate) fn generated(
    name: String,
    file: &str,
    objects: Vec<Object>,
    functions: Vec<Function>,
) -> Program {
    let threads = (1..functions.len() as u32)
        .map(|func| ThreadDecl {
            name: format!("t{}", func - 1),
            func,
            arg: 0,
        })
        .collect();
    Program {
        files: vec![file.into()],
        ..Program::new(name, objects, functions, threads)
    }
}

fn new_gen(r: &mut Rng, func: FuncId) -> Gen<'_> {
    Gen {
        r,
        code: Code::new(func),
        mine: Vec::new(),
        loaded: Vec::new(),
        holds_lock: false,
    }
}

fn finish(g: Gen<'_>, name: &str, params: u32) -> Function {
    g.code.finish(name, params)
}

pub(crate) fn function(
    name: &str,
    params: u32,
    reg_names: Vec<String>,
    body: Vec<Instr>,
) -> Function {
    Function {
        name: name.to_string(),
        params,
        reg_names,
        body,
        loc: SrcLoc::NONE,
    }
}

/// A pointer to an object its thread has not allocated yet (one past the last global: the
/// first allocation of thread 0), used by thread 1 before and after that allocation: the
/// store faults in one order (thread 1 stops with `r0 = 1`) and stores in the other, so
/// the allocation and the access race. The order where it faults is the program's only
/// violation.
pub fn future_object_program() -> Program {
    let thread = |name: &str, ops: Vec<Op>| Function {
        name: name.into(),
        params: 0,
        reg_names: vec!["r0".into(), "r1".into()],
        body: ops
            .into_iter()
            .map(|op| Instr {
                op,
                loc: SrcLoc::NONE,
            })
            .collect(),
        loc: SrcLoc::NONE,
    };
    let store = |addr: Addr, v: i64| Op::Store {
        addr,
        value: Expr::Const(v),
    };
    let x = Addr::Global {
        obj: 0,
        index: Expr::Const(0),
    };
    let future = Ptr { obj: 1, offset: 0 }.encode();
    Program::new(
        "future",
        vec![object("x", ObjKind::Shared, 1, false)],
        vec![
            thread(
                "t0",
                vec![
                    Op::Alloc {
                        dst: 0,
                        size: Expr::Const(1),
                        zeroed: true,
                        stack: false,
                    },
                    Op::Load {
                        dst: 1,
                        addr: Addr::Ptr(Expr::Reg(0)),
                        copy: false,
                    },
                    Op::Store {
                        addr: x.clone(),
                        value: Expr::Reg(1),
                    },
                ],
            ),
            thread(
                "t1",
                vec![
                    Op::Local {
                        dst: 0,
                        expr: Expr::Const(1),
                    },
                    store(Addr::Ptr(Expr::Const(future)), 2),
                    // Not reached when the store faults: the final states tell the
                    // orders apart.
                    Op::Local {
                        dst: 0,
                        expr: Expr::Const(2),
                    },
                ],
            ),
        ],
        (0..2)
            .map(|t| ThreadDecl {
                name: format!("t{t}"),
                func: t,
                arg: 0,
            })
            .collect(),
    )
}

/// A mutex destroyed and initialised again (`pthread_mutex_destroy`, `pthread_mutex_init`)
/// by thread `t0`, which reads `x` in between, while each of `lockers` other threads locks
/// it, stores to `x` and unlocks it: a lock between the destroy and the store that
/// re-initialises faults, the program's violation.
pub fn mutex_reinit_program(lockers: u32) -> Program {
    let (x, m) = (Addr::scalar(0), Addr::scalar(1));
    let code = |ops: Vec<Op>| {
        ops.into_iter()
            .enumerate()
            .map(|(i, op)| Instr {
                op,
                loc: SrcLoc::new(0, i as u32 + 1, 1),
            })
            .collect()
    };
    let mut functions = vec![function("unused", 0, Vec::new(), Vec::new())];
    functions.push(function(
        "t0",
        0,
        vec!["r".into()],
        code(vec![
            Op::MutexDestroy(m.clone()),
            Op::Load {
                dst: 0,
                addr: x.clone(),
                copy: false,
            },
            Op::Store {
                addr: m.clone(),
                value: Expr::Const(0),
            },
        ]),
    ));
    for t in 1..=lockers {
        functions.push(function(
            &format!("t{t}"),
            0,
            Vec::new(),
            code(vec![
                Op::Lock(m.clone()),
                Op::Store {
                    addr: x.clone(),
                    value: Expr::Const(t as i64),
                },
                Op::Unlock(m.clone()),
            ]),
        ));
    }
    let objects = vec![
        object("x", ObjKind::Shared, 1, false),
        object("m", ObjKind::Mutex, 1, false),
    ];
    generated("reinit".into(), "gen-reinit", objects, functions)
}

pub(crate) fn object(name: &str, kind: ObjKind, size: usize, is_array: bool) -> Object {
    Object {
        name: name.into(),
        kind,
        size: size as u32,
        init: Vec::new(),
        is_array,
        cell_names: Vec::new(),
        loc: SrcLoc::NONE,
    }
}

/// The program as a listing, one instruction a line, for failure messages.
pub fn listing(p: &Program) -> String {
    let mut s = String::new();
    for f in &p.functions {
        let _ = writeln!(s, "fn {} (regs {:?}):", f.name, f.reg_names);
        for (i, ins) in f.body.iter().enumerate() {
            let _ = writeln!(s, "  {i:3}: {:?}", ins.op);
        }
    }
    s
}
