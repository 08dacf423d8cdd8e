//! X86 litmus tests for a `.cat` model (`x86tso.cat`): the lowered program's memory
//! operations as herd7's X86 events. A plain access is one event; a locked instruction
//! (`XCHG` with memory, `LOCK ADD`, ...) is a read and a write of one instance, both in
//! `X`, which the model pairs as `rmw`; `MFENCE` and `SFENCE` are fences in the sets of
//! their names. Each litmus instruction is one instance.

use crate::answer::Tally;
use crate::Litmus;
use fencer_axiomatic::{self as ax, BinOp, Expr, Ins, Observable, Val};
use fencer_ir::{self as ir, Addr, CondVar, FenceKind, Op, RmwOp};

fn expr(e: &ir::Expr) -> Result<Expr, String> {
    Ok(match e {
        ir::Expr::Const(v) => Expr::int(*v),
        ir::Expr::Reg(r) => Expr::Reg(*r),
        ir::Expr::Un(ir::UnOp::Neg, a) => Expr::Neg(Box::new(expr(a)?)),
        ir::Expr::Un(ir::UnOp::Not, a) => Expr::Not(Box::new(expr(a)?)),
        ir::Expr::Bin(op, a, b) => {
            let op = match op {
                ir::BinOp::Add => BinOp::Add,
                ir::BinOp::Sub => BinOp::Sub,
                ir::BinOp::And => BinOp::And,
                ir::BinOp::Or => BinOp::Or,
                ir::BinOp::Xor => BinOp::Xor,
                ir::BinOp::Eq => BinOp::Eq,
                ir::BinOp::Ne => BinOp::Ne,
                other => return Err(format!("operator {other:?} has no X86 litmus meaning")),
            };
            Expr::bin(op, expr(a)?, expr(b)?)
        }
        other => return Err(format!("expression {other:?} has no X86 litmus meaning")),
    })
}

fn addr(a: &Addr) -> Result<Expr, String> {
    match a {
        Addr::Global {
            obj,
            index: ir::Expr::Const(0),
        } => Ok(Expr::Val(Val::Loc(*obj))),
        _ => Err("X86 litmus accesses are to named locations".into()),
    }
}

impl Litmus {
    /// The test as a program for the axiomatic engine.
    pub fn axiomatic(&self) -> Result<ax::Program, String> {
        let p = &self.program;
        let locations = p
            .objects
            .iter()
            .map(|o| ax::Location {
                name: o.name.clone(),
                init: Val::Int(o.init_value(0)),
            })
            .collect();
        let x = || vec!["X".to_string()];
        let mut threads = Vec::new();
        for t in &p.threads {
            let f = &p.functions[t.func as usize];
            let mut code = Vec::new();
            // Where each IR instruction starts in `code`, for jumps.
            let mut at = Vec::with_capacity(f.body.len() + 1);
            let mut jumps = Vec::new();
            let mut last_loc = None;
            let mut tmp = f.reg_names.len() as u32;
            let mut regs = f.reg_names.clone();
            let mut fresh = |regs: &mut Vec<String>| {
                regs.push(format!("%cat{tmp}"));
                tmp += 1;
                tmp - 1
            };
            for ins in &f.body {
                at.push(code.len());
                if last_loc != Some(&ins.loc) {
                    code.push(Ins::Instance);
                    last_loc = Some(&ins.loc);
                }
                match &ins.op {
                    Op::Local { dst, expr: e } => code.push(Ins::Set {
                        dst: *dst,
                        expr: expr(e)?,
                    }),
                    Op::Load { dst, addr: a, .. } => code.push(Ins::Read {
                        dst: Some(*dst),
                        addr: addr(a)?,
                        tags: Vec::new(),
                    }),
                    Op::Store { addr: a, value } => code.push(Ins::Write {
                        addr: addr(a)?,
                        value: expr(value)?,
                        tags: Vec::new(),
                    }),
                    Op::Fence(k) => code.push(Ins::Fence {
                        tags: vec![match k {
                            FenceKind::Full => "MFENCE".to_string(),
                            FenceKind::StoreStore => "SFENCE".to_string(),
                        }],
                    }),
                    Op::Rmw { dst, addr: a, op } => {
                        let a = addr(a)?;
                        let old = fresh(&mut regs);
                        code.push(Ins::Read {
                            dst: Some(old),
                            addr: a.clone(),
                            tags: x(),
                        });
                        let new = match op {
                            RmwOp::Xchg(e) => expr(e)?,
                            RmwOp::FetchAdd(e) => Expr::bin(BinOp::Add, Expr::Reg(old), expr(e)?),
                            RmwOp::Cas { expected, new } => {
                                // A failed compare-exchange reads only.
                                let skip = code.len();
                                code.push(Ins::Branch {
                                    cond: Expr::bin(BinOp::Ne, Expr::Reg(old), expr(expected)?),
                                    target: 0,
                                });
                                code.push(Ins::Write {
                                    addr: a,
                                    value: expr(new)?,
                                    tags: x(),
                                });
                                let end = code.len();
                                code[skip] = Ins::Branch {
                                    cond: Expr::bin(BinOp::Ne, Expr::Reg(old), expr(expected)?),
                                    target: end,
                                };
                                code.push(Ins::Set {
                                    dst: *dst,
                                    expr: Expr::Reg(old),
                                });
                                continue;
                            }
                            RmwOp::Fetch { .. } => {
                                return Err("a fetch-and-op has no X86 litmus meaning".into())
                            }
                        };
                        code.push(Ins::Write {
                            addr: a,
                            value: new,
                            tags: x(),
                        });
                        code.push(Ins::Set {
                            dst: *dst,
                            expr: Expr::Reg(old),
                        });
                    }
                    Op::Jump(to) => {
                        jumps.push((code.len(), *to));
                        code.push(Ins::Jump(0));
                    }
                    Op::Branch {
                        cond,
                        then_to,
                        else_to,
                    } => {
                        jumps.push((code.len(), *then_to));
                        code.push(Ins::Branch {
                            cond: expr(cond)?,
                            target: 0,
                        });
                        jumps.push((code.len(), *else_to));
                        code.push(Ins::Jump(0));
                    }
                    Op::Return(_) => {
                        jumps.push((code.len(), f.body.len() as u32));
                        code.push(Ins::Jump(0));
                    }
                    other => return Err(format!("{other:?} has no X86 litmus meaning")),
                }
            }
            at.push(code.len());
            for (k, to) in jumps {
                let target = at[to as usize];
                match &mut code[k] {
                    Ins::Jump(x) => *x = target,
                    Ins::Branch { target: x, .. } => *x = target,
                    _ => unreachable!("jumps are recorded at jumps"),
                }
            }
            threads.push(ax::Thread {
                name: t.name.clone(),
                regs,
                init: Vec::new(),
                code,
            });
        }
        let observables = self
            .observed()
            .iter()
            .map(|v| match v {
                CondVar::Reg { thread, reg } => Observable::Reg {
                    thread: *thread as usize,
                    reg: *reg,
                },
                CondVar::Cell { obj, .. } => Observable::Loc(*obj),
            })
            .collect();
        Ok(ax::Program {
            name: p.name.clone(),
            locations,
            threads,
            init_tags: Vec::new(),
            arch_sets: ["X", "MFENCE", "SFENCE", "LFENCE"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            observables,
        })
    }

    /// The variables final states are computed over: those shown, then the filter's.
    fn observed(&self) -> Vec<CondVar> {
        let mut v = self.vars.clone();
        if let Some(f) = &self.filter {
            f.vars(&mut v);
        }
        v
    }

    /// herd7's answer from the axiomatic engine's.
    pub fn answer_axiomatic(&self, a: &ax::Answer, model: &str) -> crate::Answer {
        let observed = self.observed();
        let mut t = Tally::default();
        for (st, info) in &a.states {
            let ints: Vec<i64> = st
                .iter()
                .map(|v| match v {
                    Val::Int(k) => *k,
                    Val::Loc(l) => i64::from(*l),
                })
                .collect();
            let lookup =
                |v: &CondVar| ints[observed.iter().position(|w| w == v).expect("observed")];
            if let Some(f) = &self.filter {
                if f.eval(&lookup) == 0 {
                    continue;
                }
            }
            t.states.insert(ints[..self.vars.len()].to_vec());
            if self.prop.eval(&lookup) != 0 {
                t.positive += info.executions;
            } else {
                t.negative += info.executions;
            }
            t.flags.extend(info.flags.keys().cloned());
        }
        crate::Answer::tally(
            &self.test.name,
            model,
            self.test.quant,
            self.vars.iter().map(|v| self.var_name(v)).collect(),
            t,
            self.program
                .cond
                .as_ref()
                .map(|c| c.text.clone())
                .unwrap_or_default(),
            a.consistent,
            a.elapsed.as_millis() as u64,
            a.stopped,
        )
    }
}
