//! Spin-loop replacement (section 4 of the chronological-traces paper): a loop whose
//! iterations only read shared memory and compute locally is replaced by one iteration
//! followed by an `assume` of its exit condition.
//!
//! Why this is sound: such an iteration changes nothing but registers it rewrites from
//! scratch, so an execution that spins k times and then leaves is equivalent to one that
//! runs only the last iteration; executions that spin forever are livelocks, which
//! safety checking ignores. Why it matters: every failed iteration would be a new load
//! racing with the writes the thread waits for, and DPOR would explore them all.
//!
//! The loops recognised are the shape front-ends emit for `while (c) {}`:
//! `head: straight-line loads and local computations; branch c -> back | exit; back: jump head`,
//! entered only at `head`, where the straight-line part reads no register before writing it
//! unless the loop never writes that register.

use crate::{Expr, Function, Op, Program, UnOp};

/// Rewrites every spin loop of the program; returns how many were rewritten.
pub fn spin_assume(prog: &mut Program) -> usize {
    prog.functions.iter_mut().map(rewrite_function).sum()
}

fn targets(op: &Op) -> Vec<u32> {
    match op {
        Op::Jump(t) => vec![*t],
        Op::Branch {
            then_to, else_to, ..
        } => vec![*then_to, *else_to],
        _ => Vec::new(),
    }
}

fn rewrite_function(f: &mut Function) -> usize {
    let mut count = 0;
    for j in 0..f.body.len() {
        let Op::Jump(h) = f.body[j].op else { continue };
        let (h, j) = (h as usize, j);
        if h >= j || j < 1 {
            continue;
        }
        let b = j - 1;
        let exit = j as u32 + 1;
        // The branch right before the back edge: one way stays, the other leaves.
        let (cond, stay_on_true) = match &f.body[b].op {
            Op::Branch {
                cond,
                then_to,
                else_to,
            } if *then_to == j as u32 && *else_to == exit => (cond.clone(), true),
            Op::Branch {
                cond,
                then_to,
                else_to,
            } if *else_to == j as u32 && *then_to == exit => (cond.clone(), false),
            _ => continue,
        };
        // Straight-line loads and local computations from the head to the branch.
        let straight = f.body[h..b]
            .iter()
            .all(|i| matches!(i.op, Op::Load { .. } | Op::Local { .. }));
        if !straight {
            continue;
        }
        // Entered only at the head.
        let enters_inside = f.body.iter().enumerate().any(|(k, i)| {
            (k < h || k > j)
                && targets(&i.op)
                    .iter()
                    .any(|&t| t as usize > h && t as usize <= j)
        });
        if enters_inside {
            continue;
        }
        // No value carried from one iteration to the next.
        let mut written = Vec::new();
        for i in &f.body[h..b] {
            if let Op::Load { dst, .. } | Op::Local { dst, .. } = &i.op {
                written.push(*dst);
            }
        }
        let mut defined = Vec::new();
        let mut carried = false;
        for i in &f.body[h..=b] {
            let mut reads = Vec::new();
            match &i.op {
                Op::Load { addr, .. } => addr_regs(addr, &mut reads),
                Op::Local { expr, .. } => expr.regs(&mut reads),
                Op::Branch { cond, .. } => cond.regs(&mut reads),
                _ => {}
            }
            if reads
                .iter()
                .any(|r| written.contains(r) && !defined.contains(r))
            {
                carried = true;
                break;
            }
            if let Op::Load { dst, .. } | Op::Local { dst, .. } = &i.op {
                defined.push(*dst);
            }
        }
        if carried {
            continue;
        }
        let leave = if stay_on_true {
            Expr::Un(UnOp::Not, Box::new(cond))
        } else {
            cond
        };
        f.body[b].op = Op::Assume(leave);
        f.body[j].op = Op::Jump(exit);
        count += 1;
    }
    count
}

fn addr_regs(a: &crate::Addr, out: &mut Vec<crate::Reg>) {
    match a {
        crate::Addr::Global { index, .. } => index.regs(out),
        crate::Addr::Ptr(e) => e.regs(out),
    }
}
