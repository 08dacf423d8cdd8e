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
    prog.functions
        .iter_mut()
        .map(|f| rewrite_function(f) + rewrite_branchy(f))
        .sum()
}

fn targets(op: &Op) -> Vec<u32> {
    match op {
        Op::Jump(t) | Op::SpinBack { to: t, .. } => vec![*t],
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

/// Loops the rewrite above cannot take (branches inside, as `while (a == 1 && b == 1) {}`
/// compiles to; read-modify-writes, as in a compare-and-swap retry loop; stores on some
/// paths): a region `head..=back` whose only backward jump is `back: jump head`, entered only
/// at the head, without calls or returns, that carries no register from one iteration to
/// the next. Such an iteration in which every event was pure (loads, fences, failed
/// compare-and-swaps; see the machine) can be dropped from any execution, leaving a valid
/// one with the same outcome. So the back edge becomes [`Op::SpinBack`], which blocks the
/// thread when the iteration was pure, and the head gets an [`Op::LoopHead`] that notes
/// where the iteration started.
fn rewrite_branchy(f: &mut Function) -> usize {
    let mut count = 0;
    let mut j = 0;
    while j < f.body.len() {
        if let Some(h) = stateless_loop(f, j) {
            let start = f.reg_names.len() as crate::Reg;
            f.reg_names.push(format!("%iter{count}"));
            // Insert the head marker at h; jumps to h land on it, later targets shift.
            for i in f.body.iter_mut() {
                let shift = |t: &mut u32| {
                    if *t as usize > h {
                        *t += 1
                    }
                };
                match &mut i.op {
                    Op::Jump(t) | Op::SpinBack { to: t, .. } => shift(t),
                    Op::Branch {
                        then_to, else_to, ..
                    } => {
                        shift(then_to);
                        shift(else_to);
                    }
                    _ => {}
                }
            }
            let loc = f.body[h].loc;
            f.body.insert(
                h,
                crate::Instr {
                    op: Op::LoopHead { dst: start },
                    loc,
                },
            );
            let back = j + 1;
            f.body[back].op = Op::SpinBack {
                to: h as u32,
                start,
            };
            count += 1;
            j = back + 1;
            continue;
        }
        j += 1;
    }
    count
}

/// The head of the loop whose back edge is `j`, if the loop qualifies (see above).
fn stateless_loop(f: &Function, j: usize) -> Option<usize> {
    let Op::Jump(h) = f.body[j].op else {
        return None;
    };
    let h = h as usize;
    if h >= j {
        return None;
    }
    let region = &f.body[h..j];
    let allowed = region.iter().all(|i| {
        !matches!(
            i.op,
            Op::Call { .. }
                | Op::CallIndirect { .. }
                | Op::Return(_)
                | Op::Exit
                | Op::LoopHead { .. }
                | Op::SpinBack { .. }
        )
    });
    if !allowed {
        return None;
    }
    // The only backward jump in the region is the back edge itself.
    if region
        .iter()
        .enumerate()
        .any(|(k, i)| targets(&i.op).iter().any(|&t| (t as usize) <= h + k))
    {
        return None;
    }
    let enters_inside = f.body.iter().enumerate().any(|(k, i)| {
        (k < h || k > j)
            && targets(&i.op)
                .iter()
                .any(|&t| t as usize > h && t as usize <= j)
    });
    if enters_inside {
        return None;
    }
    let written_in_loop: Vec<crate::Reg> = region.iter().filter_map(|i| dst(&i.op)).collect();
    // Registers surely written on every path from the head to each point (forward jumps
    // only, so one pass in order suffices); a read of a register the loop writes that is
    // not surely written yet would see the previous iteration's value.
    let n = j - h + 1;
    let mut must: Vec<Option<Vec<crate::Reg>>> = vec![None; n];
    must[0] = Some(Vec::new());
    for k in 0..n - 1 {
        let Some(defined) = must[k].clone() else {
            continue; // unreachable from the head
        };
        let i = &f.body[h + k];
        let mut reads = Vec::new();
        op_reads(&i.op, &mut reads);
        if reads
            .iter()
            .any(|r| written_in_loop.contains(r) && !defined.contains(r))
        {
            return None;
        }
        let mut out = defined;
        if let Some(d) = dst(&i.op) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        let succs = match &i.op {
            Op::Jump(t) => vec![*t as usize],
            Op::Branch {
                then_to, else_to, ..
            } => vec![*then_to as usize, *else_to as usize],
            _ => vec![h + k + 1],
        };
        for t in succs {
            if t < h || t > j {
                continue; // leaves the loop
            }
            let slot = &mut must[t - h];
            *slot = Some(match slot.take() {
                None => out.clone(),
                Some(prev) => prev.into_iter().filter(|r| out.contains(r)).collect(),
            });
        }
    }
    must[n - 1].as_ref()?;
    Some(h)
}

fn dst(op: &Op) -> Option<crate::Reg> {
    match op {
        Op::Load { dst, .. }
        | Op::Local { dst, .. }
        | Op::Rmw { dst, .. }
        | Op::Alloc { dst, .. }
        | Op::Spawn { dst, .. }
        | Op::SpawnIndirect { dst, .. }
        | Op::ThreadId { dst } => Some(*dst),
        _ => None,
    }
}

fn op_reads(op: &Op, out: &mut Vec<crate::Reg>) {
    match op {
        Op::Load { addr, .. } => addr_regs(addr, out),
        Op::Local { expr, .. } => expr.regs(out),
        Op::Branch { cond, .. } => cond.regs(out),
        Op::Assert { cond, .. } | Op::Assume(cond) => cond.regs(out),
        Op::Store { addr, value } => {
            addr_regs(addr, out);
            value.regs(out);
        }
        Op::Rmw { addr, op, .. } => {
            addr_regs(addr, out);
            match op {
                crate::RmwOp::Cas { expected, new } => {
                    expected.regs(out);
                    new.regs(out);
                }
                crate::RmwOp::FetchAdd(e) | crate::RmwOp::Xchg(e) => e.regs(out),
                crate::RmwOp::Fetch { value, .. } => value.regs(out),
            }
        }
        Op::Lock(a) | Op::Unlock(a) => addr_regs(a, out),
        Op::Spawn { arg, .. } => arg.regs(out),
        Op::SpawnIndirect { target, arg, .. } => {
            target.regs(out);
            arg.regs(out);
        }
        Op::CallIndirect { target, args, .. } => {
            target.regs(out);
            for a in args {
                a.regs(out);
            }
        }
        Op::Join(e) | Op::Free(e) | Op::Alloc { size: e, .. } => e.regs(out),
        _ => {}
    }
}

fn addr_regs(a: &crate::Addr, out: &mut Vec<crate::Reg>) {
    match a {
        crate::Addr::Global { index, .. } => index.regs(out),
        crate::Addr::Ptr(e) => e.regs(out),
    }
}
