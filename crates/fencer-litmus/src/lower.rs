//! From a parsed test to the program IR.

use crate::parse::{Cell, Cond, Operand, Quant, Test, Var};
use crate::Litmus;
use fencer_ir::{
    Addr, BinOp, CondExpr, CondVar, Expr, FenceKind, FinalCond, Function, Instr as IrInstr,
    ObjKind, Object, Op, Program, Quantifier, Reg, RmwOp, SrcLoc, ThreadDecl, UnOp,
};
use fencer_text::ast::Span;
use fencer_text::diag::LineIndex;
use fencer_text::Diagnostic;

struct Lower<'a> {
    file: &'a str,
    src: &'a str,
    lines: LineIndex,
    objects: Vec<Object>,
    funcs: Vec<Function>,
}

impl<'a> Lower<'a> {
    fn at(&self, sp: Span) -> SrcLoc {
        let (l, c) = self.lines.line_col(self.src, sp.start);
        SrcLoc::new(0, l, c)
    }

    fn err(&self, sp: Span, msg: String, label: &str) -> Diagnostic {
        Diagnostic::new(self.file, self.src, sp, msg, label)
    }

    fn obj(&mut self, name: &str, sp: Span) -> u32 {
        if let Some(i) = self.objects.iter().position(|o| o.name == name) {
            return i as u32;
        }
        let loc = self.at(sp);
        self.objects.push(Object {
            name: name.to_string(),
            kind: ObjKind::Shared,
            size: 1,
            init: Vec::new(),
            is_array: false,
            cell_names: Vec::new(),
            loc,
        });
        self.objects.len() as u32 - 1
    }

    fn reg(&mut self, t: usize, name: &str) -> Reg {
        let f = &mut self.funcs[t];
        if let Some(r) = f.reg_by_name(name) {
            return r;
        }
        f.reg_names.push(name.to_string());
        f.reg_names.len() as Reg - 1
    }

    fn var(&mut self, v: &Var, sp: Span) -> Result<CondVar, Diagnostic> {
        Ok(match v {
            Var::Reg { thread, name } => {
                if *thread as usize >= self.funcs.len() {
                    return Err(self.err(
                        sp,
                        format!(
                            "no thread P{thread}: the test has {} threads",
                            self.funcs.len()
                        ),
                        "unknown thread",
                    ));
                }
                CondVar::Reg {
                    thread: *thread,
                    reg: self.reg(*thread as usize, name),
                }
            }
            Var::Loc(x) => CondVar::Cell {
                obj: self.obj(x, sp),
                index: 0,
            },
        })
    }

    fn cond(&mut self, c: &Cond) -> Result<CondExpr, Diagnostic> {
        Ok(match c {
            Cond::True => CondExpr::Const(1),
            Cond::False => CondExpr::Const(0),
            Cond::Eq(v, k, sp) => CondExpr::Bin(
                BinOp::Eq,
                Box::new(CondExpr::Var(self.var(v, *sp)?)),
                Box::new(CondExpr::Const(*k)),
            ),
            Cond::Not(a) => CondExpr::Un(UnOp::Not, Box::new(self.cond(a)?)),
            Cond::And(v) => self.balance(BinOp::LogAnd, v)?,
            Cond::Or(v) => self.balance(BinOp::LogOr, v)?,
        })
    }

    /// A balanced tree, so that thirty thousand conjuncts are 15 levels deep rather than
    /// thirty thousand (`CondExpr::eval` recurses). `/\` and `\/` are associative.
    fn balance(&mut self, op: BinOp, v: &[Cond]) -> Result<CondExpr, Diagnostic> {
        if let [c] = v {
            return self.cond(c);
        }
        let (a, b) = v.split_at(v.len() / 2);
        Ok(CondExpr::Bin(
            op,
            Box::new(self.balance(op, a)?),
            Box::new(self.balance(op, b)?),
        ))
    }
}

/// herd7's rendering of a condition: `0:EAX=1 /\ [x]=2`.
pub fn show(c: &Cond) -> String {
    fn var(v: &Var) -> String {
        match v {
            Var::Reg { thread, name } => format!("{thread}:{name}"),
            Var::Loc(x) => format!("[{x}]"),
        }
    }
    fn join(v: &[Cond], sep: &str, p: u8) -> String {
        v.iter().map(|c| go(c, p)).collect::<Vec<_>>().join(sep)
    }
    fn go(c: &Cond, parent: u8) -> String {
        // 3: atom, 2: and, 1: or
        let (s, p) = match c {
            Cond::True => ("true".to_string(), 3),
            Cond::False => ("false".to_string(), 3),
            Cond::Eq(v, k, _) => (format!("{}={k}", var(v)), 3),
            Cond::Not(a) => (format!("~{}", go(a, 3)), 3),
            Cond::And(v) => (join(v, " /\\ ", 2), 2),
            Cond::Or(v) => (join(v, " \\/ ", 1), 1),
        };
        if p < parent {
            format!("({s})")
        } else {
            s
        }
    }
    go(c, 0)
}

pub fn lower(file: &str, src: &str, test: Test) -> Result<Litmus, Diagnostic> {
    let n = test.threads.len();
    let mut lw = Lower {
        file,
        src,
        lines: LineIndex::new(src),
        objects: Vec::new(),
        funcs: (0..n)
            .map(|t| Function {
                name: format!("P{t}"),
                params: 0,
                reg_names: Vec::new(),
                body: Vec::new(),
                loc: SrcLoc::new(0, 1, 1),
            })
            .collect(),
    };
    // Locations in order of appearance: init block, then threads.
    let mut reg_init = Vec::new();
    for (v, k, sp) in &test.init {
        match v {
            Var::Loc(x) => {
                let o = lw.obj(x, *sp);
                lw.objects[o as usize].set_init(0, *k);
            }
            Var::Reg { .. } => {
                let cv = lw.var(v, *sp)?;
                reg_init.push((cv, *k, *sp));
            }
        }
    }
    for (cv, k, sp) in reg_init {
        if let CondVar::Reg { thread, reg } = cv {
            let loc = lw.at(sp);
            lw.funcs[thread as usize].body.push(IrInstr {
                op: Op::Local {
                    dst: reg,
                    expr: Expr::Const(k),
                },
                loc,
            });
        }
    }
    for (t, cells) in test.threads.iter().enumerate() {
        lower_thread(&mut lw, t, cells)?;
    }
    let prop = lw.cond(&test.cond)?;
    let mut vars = Vec::new();
    prop.vars(&mut vars);
    for (v, sp) in &test.locations {
        let cv = lw.var(v, *sp)?;
        if !vars.contains(&cv) {
            vars.push(cv);
        }
    }
    // herd7's order: registers by thread then name, then locations by name.
    let key = |lw: &Lower, v: &CondVar| match v {
        CondVar::Reg { thread, reg } => (
            0,
            *thread,
            lw.funcs[*thread as usize].reg_names[*reg as usize].clone(),
        ),
        CondVar::Cell { obj, .. } => (1, 0, lw.objects[*obj as usize].name.clone()),
    };
    vars.sort_by_key(|v| key(&lw, v));
    let filter = match &test.filter {
        Some(f) => Some(lw.cond(f)?),
        None => None,
    };
    let mut observe = vars.clone();
    if let Some(f) = &filter {
        let mut fv = Vec::new();
        f.vars(&mut fv);
        for v in fv {
            if !observe.contains(&v) {
                observe.push(v);
            }
        }
    }
    let loc = lw.at(test.cond_span);
    let quant = match test.quant {
        Quant::Exists => Quantifier::Exists,
        Quant::NotExists => Quantifier::NotExists,
        Quant::Forall => Quantifier::Forall,
    };
    let q = match test.quant {
        Quant::Exists => "exists",
        Quant::NotExists => "~exists",
        Quant::Forall => "forall",
    };
    let text = format!("{q} ({})", show(&test.cond));
    let program = Program {
        name: test.name.clone(),
        files: vec![file.to_string()],
        objects: lw.objects,
        threads: (0..n)
            .map(|t| ThreadDecl {
                name: format!("P{t}"),
                func: t as u32,
                arg: 0,
            })
            .collect(),
        functions: lw.funcs,
        cond: Some(FinalCond {
            quant,
            expr: prop.clone(),
            text,
            loc,
        }),
        observe,
        observe_explicit: false,
        source_trace: false,
        hang_is_violation: true,
        assumptions: Vec::new(),
        uninit_arbitrary: false,
        wait_variant: None,
    };
    Ok(Litmus {
        test,
        program,
        vars,
        filter,
        prop,
    })
}

/// A locked add: `old` gets the cell's old value and the cell `old + addend`, in one
/// indivisible step; ZF is set from the new value. `addend` must not be `old`.
fn locked_add(ops: &mut Vec<Op>, old: Reg, obj: u32, addend: Reg, zf: Reg) {
    ops.push(Op::Rmw {
        dst: old,
        addr: Addr::scalar(obj),
        op: RmwOp::FetchAdd(Expr::Reg(addend)),
    });
    // With `addend == zf` the sum is read before ZF is overwritten.
    ops.push(Op::Local {
        dst: zf,
        expr: Expr::bin(
            BinOp::Eq,
            Expr::bin(BinOp::Add, Expr::Reg(old), Expr::Reg(addend)),
            Expr::Const(0),
        ),
    });
}

fn lower_thread(lw: &mut Lower, t: usize, cells: &[Cell]) -> Result<(), Diagnostic> {
    let zf = lw.reg(t, "%zf");
    let tmp = lw.reg(t, "%t");
    let mut labels: Vec<(String, u32)> = Vec::new();
    // Jumps to patch once every label is known: (instruction index, label, span).
    let mut fixups: Vec<(usize, String, Span)> = Vec::new();
    for cell in cells {
        let ins = match cell {
            Cell::Label(l, sp) => {
                if labels.iter().any(|(m, _)| m == l) {
                    return Err(lw.err(
                        *sp,
                        format!("label `{l}` is defined twice in P{t}"),
                        "duplicate label",
                    ));
                }
                let at = lw.funcs[t].body.len() as u32;
                labels.push((l.clone(), at));
                continue;
            }
            Cell::Instr(i) => i,
        };
        let loc = lw.at(ins.span);
        let m = ins.mnemonic.as_str();
        let args: Vec<&Operand> = ins.args.iter().map(|a| &a.0).collect();
        let bad = |lw: &Lower, what: &str| {
            lw.err(
                ins.span,
                format!(
                    "`{}` {what}",
                    if ins.locked {
                        format!("LOCK {m}")
                    } else {
                        m.to_string()
                    }
                ),
                "unsupported form",
            )
        };
        let mut ops: Vec<Op> = Vec::new();
        let val = |lw: &mut Lower, o: &Operand| -> Option<Expr> {
            match o {
                Operand::Imm(k) => Some(Expr::Const(*k)),
                Operand::Reg(r) => Some(Expr::Reg(lw.reg(t, r))),
                _ => None,
            }
        };
        let alu = |m: &str| match m {
            "ADD" => Some(BinOp::Add),
            "SUB" => Some(BinOp::Sub),
            "AND" => Some(BinOp::And),
            "OR" => Some(BinOp::Or),
            "XOR" => Some(BinOp::Xor),
            _ => None,
        };
        let set_zf = |e: Expr| Op::Local {
            dst: zf,
            expr: Expr::bin(BinOp::Eq, e, Expr::Const(0)),
        };
        match (m, ins.locked, args.as_slice()) {
            ("MOV", false, [Operand::Reg(r), Operand::Mem(x)]) => {
                let dst = lw.reg(t, r);
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Load {
                    dst,
                    addr: Addr::scalar(obj),
                    copy: false,
                });
            }
            ("MOV", false, [Operand::Mem(x), src @ (Operand::Imm(_) | Operand::Reg(_))]) => {
                let value = val(lw, src).expect("immediate or register");
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Store {
                    addr: Addr::scalar(obj),
                    value,
                });
            }
            ("MOV", false, [Operand::Reg(r), src @ (Operand::Imm(_) | Operand::Reg(_))]) => {
                let expr = val(lw, src).expect("immediate or register");
                ops.push(Op::Local {
                    dst: lw.reg(t, r),
                    expr,
                });
            }
            ("MFENCE", false, []) => ops.push(Op::Fence(FenceKind::Full)),
            // SFENCE orders stores with stores only (x86 keeps that order for ordinary
            // stores anyway; under PSO it is a store-store fence). LFENCE orders loads,
            // which no model here reorders.
            ("SFENCE", false, []) => ops.push(Op::Fence(FenceKind::StoreStore)),
            ("LFENCE", false, []) => {}
            (
                "XCHG",
                _,
                [Operand::Mem(x), Operand::Reg(r)] | [Operand::Reg(r), Operand::Mem(x)],
            ) => {
                // XCHG with memory is always locked.
                let dst = lw.reg(t, r);
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Local {
                    dst: tmp,
                    expr: Expr::Reg(dst),
                });
                ops.push(Op::Rmw {
                    dst,
                    addr: Addr::scalar(obj),
                    op: RmwOp::Xchg(Expr::Reg(tmp)),
                });
            }
            ("XCHG", false, [Operand::Reg(a), Operand::Reg(b)]) => {
                let (a, b) = (lw.reg(t, a), lw.reg(t, b));
                ops.push(Op::Local {
                    dst: tmp,
                    expr: Expr::Reg(a),
                });
                ops.push(Op::Local {
                    dst: a,
                    expr: Expr::Reg(b),
                });
                ops.push(Op::Local {
                    dst: b,
                    expr: Expr::Reg(tmp),
                });
            }
            ("ADD" | "SUB" | "INC" | "DEC", true, [Operand::Mem(x), rest @ ..]) => {
                let k = match (m, rest) {
                    ("INC", []) => Expr::Const(1),
                    ("DEC", []) => Expr::Const(-1),
                    ("ADD", [src @ (Operand::Imm(_) | Operand::Reg(_))]) => {
                        val(lw, src).expect("operand")
                    }
                    ("SUB", [src @ (Operand::Imm(_) | Operand::Reg(_))]) => {
                        Expr::Un(UnOp::Neg, Box::new(val(lw, src).expect("operand")))
                    }
                    _ => return Err(bad(
                        lw,
                        "takes a memory operand and (for ADD and SUB) an immediate or a register",
                    )),
                };
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Local { dst: zf, expr: k });
                locked_add(&mut ops, tmp, obj, zf, zf);
            }
            ("XADD", true, [Operand::Mem(x), Operand::Reg(r)]) => {
                let r = lw.reg(t, r);
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Local {
                    dst: tmp,
                    expr: Expr::Reg(r),
                });
                locked_add(&mut ops, r, obj, tmp, zf);
            }
            ("CMPXCHG", true, [Operand::Mem(x), Operand::Reg(r)]) => {
                let (r, eax) = (lw.reg(t, r), lw.reg(t, "EAX"));
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Rmw {
                    dst: tmp,
                    addr: Addr::scalar(obj),
                    op: RmwOp::Cas {
                        expected: Expr::Reg(eax),
                        new: Expr::Reg(r),
                    },
                });
                ops.push(Op::Local {
                    dst: zf,
                    expr: Expr::bin(BinOp::Eq, Expr::Reg(tmp), Expr::Reg(eax)),
                });
                ops.push(Op::Local {
                    dst: eax,
                    expr: Expr::Reg(tmp),
                });
            }
            (
                "ADD" | "SUB" | "AND" | "OR" | "XOR" | "INC" | "DEC",
                false,
                [Operand::Mem(x), rest @ ..],
            ) => {
                // Without LOCK, a read and a later (buffered) write: not atomic.
                let (op, k) = match (m, rest) {
                    ("INC", []) => (BinOp::Add, Expr::Const(1)),
                    ("DEC", []) => (BinOp::Sub, Expr::Const(1)),
                    (_, [src @ (Operand::Imm(_) | Operand::Reg(_))]) if alu(m).is_some() => {
                        (alu(m).expect("alu"), val(lw, src).expect("operand"))
                    }
                    _ => {
                        return Err(bad(
                            lw,
                            "expects a memory operand and an immediate or a register",
                        ))
                    }
                };
                let obj = lw.obj(x, ins.span);
                ops.push(Op::Load {
                    dst: tmp,
                    addr: Addr::scalar(obj),
                    copy: false,
                });
                ops.push(Op::Local {
                    dst: tmp,
                    expr: Expr::bin(op, Expr::Reg(tmp), k),
                });
                ops.push(Op::Store {
                    addr: Addr::scalar(obj),
                    value: Expr::Reg(tmp),
                });
                ops.push(set_zf(Expr::Reg(tmp)));
            }
            (
                "ADD" | "SUB" | "AND" | "OR" | "XOR" | "INC" | "DEC",
                false,
                [Operand::Reg(r), rest @ ..],
            ) => {
                let dst = lw.reg(t, r);
                let (op, k) =
                    match (m, rest) {
                        ("INC", []) => (BinOp::Add, Expr::Const(1)),
                        ("DEC", []) => (BinOp::Sub, Expr::Const(1)),
                        (_, [src @ (Operand::Imm(_) | Operand::Reg(_))]) if alu(m).is_some() => {
                            (alu(m).expect("alu"), val(lw, src).expect("operand"))
                        }
                        (_, [Operand::Mem(x)]) if alu(m).is_some() => {
                            let obj = lw.obj(x, ins.span);
                            ops.push(Op::Load {
                                dst: tmp,
                                addr: Addr::scalar(obj),
                                copy: false,
                            });
                            (alu(m).expect("alu"), Expr::Reg(tmp))
                        }
                        _ => return Err(bad(
                            lw,
                            "expects a register and an immediate, a register or a memory operand",
                        )),
                    };
                ops.push(Op::Local {
                    dst,
                    expr: Expr::bin(op, Expr::Reg(dst), k),
                });
                ops.push(set_zf(Expr::Reg(dst)));
            }
            ("CMP", false, [a, b]) => {
                let side =
                    |lw: &mut Lower, o: &Operand, into: Reg, ops: &mut Vec<Op>| -> Option<Expr> {
                        match o {
                            Operand::Mem(x) => {
                                let obj = lw.obj(x, ins.span);
                                ops.push(Op::Load {
                                    dst: into,
                                    addr: Addr::scalar(obj),
                                    copy: false,
                                });
                                Some(Expr::Reg(into))
                            }
                            _ => val(lw, o),
                        }
                    };
                let (Some(x), Some(y)) = (side(lw, a, tmp, &mut ops), side(lw, b, zf, &mut ops))
                else {
                    return Err(bad(lw, "compares registers, immediates and memory"));
                };
                ops.push(Op::Local {
                    dst: zf,
                    expr: Expr::bin(BinOp::Eq, x, y),
                });
            }
            ("JMP" | "JE" | "JZ" | "JNE" | "JNZ", false, [Operand::Label(l)]) => {
                let at = lw.funcs[t].body.len();
                fixups.push((at, l.clone(), ins.args[0].1));
                ops.push(match m {
                    "JMP" => Op::Jump(u32::MAX),
                    "JE" | "JZ" => Op::Branch {
                        cond: Expr::Reg(zf),
                        then_to: u32::MAX,
                        else_to: at as u32 + 1,
                    },
                    _ => Op::Branch {
                        cond: Expr::Un(UnOp::Not, Box::new(Expr::Reg(zf))),
                        then_to: u32::MAX,
                        else_to: at as u32 + 1,
                    },
                });
            }
            (
                "MOV" | "MFENCE" | "XCHG" | "ADD" | "SUB" | "AND" | "OR" | "XOR" | "INC" | "DEC"
                | "XADD" | "CMPXCHG" | "CMP" | "JMP" | "JE" | "JZ" | "JNE" | "JNZ",
                _,
                _,
            ) => {
                return Err(bad(
                    lw,
                    "is not supported with these operands (or this prefix)",
                ));
            }
            _ => {
                return Err(lw.err(
                    ins.span,
                    format!("unsupported instruction `{}{m}`", if ins.locked { "LOCK " } else { "" }),
                    "not supported",
                ).with_help("supported: MOV, MFENCE, XCHG, LOCK ADD/SUB/INC/DEC/XADD/CMPXCHG, ADD, SUB, AND, OR, XOR, INC, DEC, CMP, JMP, JE/JZ, JNE/JNZ"));
            }
        }
        for op in ops {
            lw.funcs[t].body.push(IrInstr { op, loc });
        }
    }
    for (at, l, sp) in fixups {
        let Some(&(_, to)) = labels.iter().find(|(m, _)| *m == l) else {
            return Err(lw.err(sp, format!("no label `{l}` in P{t}"), "unknown label"));
        };
        match &mut lw.funcs[t].body[at].op {
            Op::Jump(x) => *x = to,
            Op::Branch { then_to, .. } => *then_to = to,
            _ => unreachable!("fixups point at jumps"),
        }
    }
    Ok(())
}
