//! Spin-loop pruning (section 4 of the chronological-traces paper): an iteration of a
//! waiting loop that only reads shared memory changes nothing another iteration would not
//! redo, so it can be dropped from any execution.
//!
//! The loops taken are regions `head..=back` whose only backward jump is `back: jump head`,
//! entered only at the head, without calls or returns, where no register the loop writes
//! is live at the head: read before being written on some path from the head, around the
//! loop *or after it* (registers that final states report count as read when the thread
//! ends). The back edge becomes [`Op::SpinBack`], which blocks the thread for good when
//! the iteration just run was pure (loads, fences, failed compare-and-swaps; see the
//! machine), and the head gets an [`Op::LoopHead`] that notes where the iteration started.
//!
//! Why this is sound: a pure iteration leaves memory and buffers as they were and writes
//! only registers that are dead at the head, so the execution without it reaches the same
//! states from there on; an execution that spins k times and then leaves is equivalent to
//! one that runs only the last iteration. Executions in which a thread stays blocked so
//! are discarded, unless the engines find that the loop can never leave (a hang, judged on
//! the final memory by the machine's collector). Why it matters: every failed
//! iteration would be a new load racing with the writes the thread waits for, and DPOR
//! would explore them all.

use crate::{Function, Op, Program};

/// Rewrites every spin loop of the program; returns how many were rewritten.
pub fn spin_assume(prog: &mut Program) -> usize {
    // Registers that final states read: they are live when a thread's root function ends.
    let mut exit_live: Vec<Vec<crate::Reg>> = vec![Vec::new(); prog.functions.len()];
    for v in prog.reported_vars() {
        if let crate::CondVar::Reg { thread, reg } = v {
            let f = prog.threads[thread as usize].func as usize;
            if !exit_live[f].contains(&reg) {
                exit_live[f].push(reg);
            }
        }
    }
    prog.functions
        .iter_mut()
        .zip(&exit_live)
        .map(|(f, live)| rewrite_loops(f, live))
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

/// The instructions control may reach after `pc` (`None` stands for leaving the function).
fn successors(f: &Function, pc: usize, out: &mut Vec<Option<usize>>) {
    out.clear();
    let at = |t: u32| (t as usize) < f.body.len();
    match &f.body[pc].op {
        Op::Jump(t) | Op::SpinBack { to: t, .. } => out.push(at(*t).then_some(*t as usize)),
        Op::Branch {
            then_to, else_to, ..
        } => {
            out.push(at(*then_to).then_some(*then_to as usize));
            out.push(at(*else_to).then_some(*else_to as usize));
        }
        Op::Return(_) | Op::Exit => out.push(None),
        _ => out.push((pc + 1 < f.body.len()).then_some(pc + 1)),
    }
}

/// The registers live before each instruction: read on some path before being written.
/// `exit_live` are read after the function ends (a thread's registers in final states).
fn liveness(f: &Function, exit_live: &[crate::Reg]) -> Vec<Vec<u64>> {
    let words = f.num_regs().div_ceil(64).max(1);
    let n = f.body.len();
    let mut exit = vec![0u64; words];
    for &r in exit_live {
        exit[r as usize / 64] |= 1 << (r % 64);
    }
    let mut live = vec![vec![0u64; words]; n];
    let mut succ = Vec::new();
    let mut reads = Vec::new();
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let mut out = vec![0u64; words];
            successors(f, pc, &mut succ);
            for s in &succ {
                let src = match s {
                    Some(s) => &live[*s],
                    None => &exit,
                };
                for (o, w) in out.iter_mut().zip(src) {
                    *o |= w;
                }
            }
            let op = &f.body[pc].op;
            if let Some(d) = dst(op) {
                out[d as usize / 64] &= !(1 << (d % 64));
            }
            reads.clear();
            op_reads(op, &mut reads);
            for &r in &reads {
                out[r as usize / 64] |= 1 << (r % 64);
            }
            if out != live[pc] {
                live[pc] = out;
                changed = true;
            }
        }
    }
    live
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
fn rewrite_loops(f: &mut Function, exit_live: &[crate::Reg]) -> usize {
    let mut count = 0;
    let mut j = 0;
    while j < f.body.len() {
        if let Some(h) = stateless_loop(f, j, exit_live) {
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
fn stateless_loop(f: &Function, j: usize, exit_live: &[crate::Reg]) -> Option<usize> {
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
    // Dropping an iteration must leave nothing behind that is read later, after the loop
    // too: no register the loop writes may be live at its head. (`b = 1; while (x == 0)
    // { b = 0; } assert(b == 1);` carries nothing around the loop, but the assertion reads
    // what the dropped iteration wrote.)
    let live = liveness(f, exit_live);
    if written_in_loop
        .iter()
        .any(|&r| live[h][r as usize / 64] & (1 << (r % 64)) != 0)
    {
        return None;
    }
    Some(h)
}

fn dst(op: &Op) -> Option<crate::Reg> {
    match op {
        Op::Load { dst, .. }
        | Op::Local { dst, .. }
        | Op::Rmw { dst, .. }
        | Op::Alloc { dst, .. }
        | Op::Spawn { dst, .. }
        | Op::ThreadId { dst }
        | Op::Nondet { dst, .. }
        | Op::LoopHead { dst }
        | Op::TryLock { dst, .. }
        | Op::SpawnIndirect { dst, .. }
        | Op::Call { dst: Some(dst), .. }
        | Op::CallIndirect { dst: Some(dst), .. } => Some(*dst),
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
        Op::Lock(a) | Op::Unlock(a) | Op::TryLock { addr: a, .. } | Op::MutexDestroy(a) => {
            addr_regs(a, out)
        }
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
        Op::Join(e) | Op::Free(e) | Op::Alloc { size: e, .. } | Op::Return(Some(e)) => e.regs(out),
        Op::Call { args, .. } => args.iter().for_each(|a| a.regs(out)),
        Op::SpinBack { start, .. } => out.push(*start),
        _ => {}
    }
}

fn addr_regs(a: &crate::Addr, out: &mut Vec<crate::Reg>) {
    match a {
        crate::Addr::Global { index, .. } => index.regs(out),
        crate::Addr::Ptr(e) => e.regs(out),
    }
}
