//! Forward substitution of the temporaries a front-end leaves behind.
//!
//! The C front-end reads `clang -O0` output, in which every source expression goes
//! through a chain of single-use temporaries (`%0 = i; %1 = %0 < 13; br %1`), and a
//! stateless explorer interprets those locals again in every execution: on a program
//! whose threads compute between their memory accesses, most of the time goes there.
//! A temporary written once and read once, later in the same straight-line block, with
//! nothing in between changing what its expression reads, is replaced by its expression
//! at the use and deleted. Only temporaries (names starting with `%`) are touched, so
//! every variable a report or counterexample shows keeps its writes; expressions that can
//! fault (division) are never moved, so a fault happens where it did.

use crate::spin::{dst, op_reads};
use crate::{BinOp, Expr, Function, Op, Program, Reg};

/// Substitutes the temporaries of every function; returns how many instructions it
/// removed.
pub fn forward_substitute(prog: &mut Program) -> usize {
    prog.functions.iter_mut().map(substitute_function).sum()
}

pub(crate) fn can_fault(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Reg(_) => false,
        Expr::AddrOf(_, e) | Expr::Un(_, e) => can_fault(e),
        Expr::Bin(op, a, b) => {
            matches!(op, BinOp::Div | BinOp::Rem | BinOp::UDiv | BinOp::URem)
                || can_fault(a)
                || can_fault(b)
        }
    }
}

/// Replaces every read of `r` in `e` by `with`; returns how many it replaced.
fn replace(e: &mut Expr, r: Reg, with: &Expr) -> usize {
    match e {
        Expr::Const(_) => 0,
        Expr::Reg(x) if *x == r => {
            *e = with.clone();
            1
        }
        Expr::Reg(_) => 0,
        Expr::AddrOf(_, a) | Expr::Un(_, a) => replace(a, r, with),
        Expr::Bin(_, a, b) => replace(a, r, with) + replace(b, r, with),
    }
}

/// Calls `f` on every expression the instruction reads.
fn exprs_mut(op: &mut Op, f: &mut impl FnMut(&mut Expr)) {
    let addr = |a: &mut crate::Addr, f: &mut dyn FnMut(&mut Expr)| match a {
        crate::Addr::Global { index, .. } => f(index),
        crate::Addr::Ptr(e) => f(e),
    };
    match op {
        Op::Local { expr, .. } => f(expr),
        Op::Branch { cond, .. } | Op::Assert { cond, .. } | Op::Assume(cond) => f(cond),
        Op::Load { addr: a, .. } => addr(a, f),
        Op::Store { addr: a, value } => {
            addr(a, f);
            f(value);
        }
        Op::Rmw { addr: a, op, .. } => {
            addr(a, f);
            match op {
                crate::RmwOp::Cas { expected, new } => {
                    f(expected);
                    f(new);
                }
                crate::RmwOp::FetchAdd(e) | crate::RmwOp::Xchg(e) => f(e),
                crate::RmwOp::Fetch { value, .. } => f(value),
            }
        }
        Op::Lock(a)
        | Op::Unlock(a)
        | Op::TryLock { addr: a, .. }
        | Op::MutexDestroy(a)
        | Op::BarrierArrive { addr: a, .. }
        | Op::BarrierPass(a) => addr(a, f),
        Op::Spawn { arg, .. } => f(arg),
        Op::SpawnIndirect { target, arg, .. } => {
            f(target);
            f(arg);
        }
        Op::CallIndirect { target, args, .. } => {
            f(target);
            args.iter_mut().for_each(f);
        }
        Op::Join(e) | Op::Free(e) | Op::Alloc { size: e, .. } | Op::Return(Some(e)) => f(e),
        Op::Call { args, .. } => args.iter_mut().for_each(f),
        _ => {}
    }
}

pub(crate) fn targets_mut(op: &mut Op, f: &mut impl FnMut(&mut u32)) {
    match op {
        Op::Jump(t) | Op::SpinBack { to: t, .. } => f(t),
        Op::Branch {
            then_to, else_to, ..
        } => {
            f(then_to);
            f(else_to);
        }
        _ => {}
    }
}

fn substitute_function(f: &mut Function) -> usize {
    let n = f.body.len();
    let nregs = f.reg_names.len();
    let mut defs = vec![0u32; nregs];
    let mut uses = vec![0u32; nregs];
    let mut target = vec![false; n + 1];
    let mut buf = Vec::new();
    for ins in &mut f.body {
        if let Some(d) = dst(&ins.op) {
            defs[d as usize] += 1;
        }
        buf.clear();
        op_reads(&ins.op, &mut buf);
        for &r in &buf {
            uses[r as usize] += 1;
        }
        targets_mut(&mut ins.op, &mut |t| {
            if let Some(x) = target.get_mut(*t as usize) {
                *x = true;
            }
        });
    }
    // A call's callee may be a thread entry with parameters in registers 0..params: those
    // are written by the caller, not by an instruction.
    for d in defs.iter_mut().take(f.params as usize) {
        *d += 1;
    }
    let temp = |r: Reg| f.reg_names[r as usize].starts_with('%');
    let mut deleted = vec![false; n];
    let mut regs = Vec::new();
    // Indices, not iterators: the body rewrites instruction `j` and deletes `i`.
    #[allow(clippy::needless_range_loop)]
    for i in 0..n {
        let Op::Local { dst: d, expr } = &f.body[i].op else {
            continue;
        };
        let d = *d;
        if !temp(d) || defs[d as usize] != 1 || uses[d as usize] != 1 || can_fault(expr) {
            continue;
        }
        regs.clear();
        expr.regs(&mut regs);
        if regs.contains(&d) {
            continue;
        }
        // The use, in the same straight-line block, with the expression's registers
        // unchanged on the way.
        let mut at = None;
        for (j, ins) in f.body.iter().enumerate().skip(i + 1) {
            if target[j] {
                break;
            }
            buf.clear();
            op_reads(&ins.op, &mut buf);
            if buf.contains(&d) {
                at = Some(j);
                break;
            }
            if dst(&ins.op).is_some_and(|w| regs.contains(&w))
                || matches!(
                    ins.op,
                    Op::Jump(_)
                        | Op::Branch { .. }
                        | Op::Return(_)
                        | Op::Exit
                        | Op::ExitProcess
                        | Op::Call { .. }
                        | Op::CallIndirect { .. }
                        | Op::SpinBack { .. }
                )
            {
                break;
            }
        }
        let Some(j) = at else { continue };
        // A write of an operand by the using instruction itself happens after it reads.
        let Op::Local { expr, .. } = std::mem::replace(&mut f.body[i].op, Op::Jump(0)) else {
            unreachable!()
        };
        let mut replaced = 0;
        exprs_mut(&mut f.body[j].op, &mut |e| replaced += replace(e, d, &expr));
        debug_assert_eq!(replaced, 1);
        deleted[i] = true;
    }
    // A jump to the next instruction kept does nothing (the front-end ends every block
    // with one).
    for i in 0..n {
        if let Op::Jump(t) = f.body[i].op {
            let t = t as usize;
            if t > i && t <= n && deleted[i + 1..t].iter().all(|&x| x) {
                deleted[i] = true;
            }
        }
    }
    let removed = deleted.iter().filter(|&&x| x).count();
    if removed == 0 {
        return 0;
    }
    // Renumber: a jump to a deleted instruction lands on the next one kept.
    let mut new_index = vec![0u32; n + 1];
    let mut k = 0u32;
    for i in 0..n {
        new_index[i] = k;
        if !deleted[i] {
            k += 1;
        }
    }
    new_index[n] = k;
    let body = std::mem::take(&mut f.body);
    f.body = body
        .into_iter()
        .zip(&deleted)
        .filter(|(_, &del)| !del)
        .map(|(mut ins, _)| {
            targets_mut(&mut ins.op, &mut |t| {
                *t = new_index
                    .get(*t as usize)
                    .copied()
                    .unwrap_or_else(|| *t - n as u32 + k);
            });
            ins
        })
        .collect();
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Instr, SrcLoc};

    fn func(names: &[&str], ops: Vec<Op>) -> Function {
        Function {
            name: "f".into(),
            params: 0,
            reg_names: names.iter().map(|s| s.to_string()).collect(),
            body: ops
                .into_iter()
                .map(|op| Instr {
                    op,
                    loc: SrcLoc::default(),
                })
                .collect(),
            loc: SrcLoc::default(),
        }
    }

    #[test]
    fn chains_collapse_and_jumps_are_renumbered() {
        // 0: %a = i; 1: %b = %a < 3; 2: br %b 3 5; 3: i = i + 1; 4: jump 0; 5: return
        let mut f = func(
            &["i", "%a", "%b"],
            vec![
                Op::Local {
                    dst: 1,
                    expr: Expr::Reg(0),
                },
                Op::Local {
                    dst: 2,
                    expr: Expr::bin(BinOp::Lt, Expr::Reg(1), Expr::Const(3)),
                },
                Op::Branch {
                    cond: Expr::Reg(2),
                    then_to: 3,
                    else_to: 5,
                },
                Op::Local {
                    dst: 0,
                    expr: Expr::bin(BinOp::Add, Expr::Reg(0), Expr::Const(1)),
                },
                Op::Jump(0),
                Op::Return(None),
            ],
        );
        assert_eq!(substitute_function(&mut f), 2);
        let ops: Vec<_> = f.body.iter().map(|i| i.op.clone()).collect();
        assert_eq!(
            ops,
            vec![
                Op::Branch {
                    cond: Expr::bin(BinOp::Lt, Expr::Reg(0), Expr::Const(3)),
                    then_to: 1,
                    else_to: 3,
                },
                Op::Local {
                    dst: 0,
                    expr: Expr::bin(BinOp::Add, Expr::Reg(0), Expr::Const(1)),
                },
                Op::Jump(0),
                Op::Return(None),
            ]
        );
    }

    #[test]
    fn operands_changed_on_the_way_block_it() {
        // %a = i; i = 5; x = %a: %a must keep the old i.
        let mut f = func(
            &["i", "%a", "x"],
            vec![
                Op::Local {
                    dst: 1,
                    expr: Expr::Reg(0),
                },
                Op::Local {
                    dst: 0,
                    expr: Expr::Const(5),
                },
                Op::Local {
                    dst: 2,
                    expr: Expr::Reg(1),
                },
            ],
        );
        assert_eq!(substitute_function(&mut f), 0);
    }

    #[test]
    fn named_variables_and_divisions_stay() {
        let mut f = func(
            &["i", "y", "%q", "x"],
            vec![
                Op::Local {
                    dst: 1,
                    expr: Expr::Reg(0),
                },
                Op::Local {
                    dst: 2,
                    expr: Expr::bin(BinOp::Div, Expr::Const(1), Expr::Reg(0)),
                },
                Op::Local {
                    dst: 3,
                    expr: Expr::bin(BinOp::Add, Expr::Reg(1), Expr::Reg(2)),
                },
            ],
        );
        assert_eq!(substitute_function(&mut f), 0);
    }
}
