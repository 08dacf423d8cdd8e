//! Spin-loop pruning (section 4 of the chronological-traces paper): an iteration of a
//! waiting loop that only reads shared memory changes nothing another iteration would not
//! redo, so it can be dropped from any execution.
//!
//! The loops taken are regions `head..=back` whose only backward jump is `back: jump head`,
//! entered only at the head (calls and returns inside are allowed: a callee's steps are the
//! thread's events, judged like the loop's own, and its frame is gone when control comes
//! back; a return leaves the loop like a jump out). The back edge becomes
//! [`Op::SpinBack`], which blocks the thread for good when the iteration just run was
//! pure (loads, fences, failed compare-and-swaps; see the machine), and the head gets an
//! [`Op::LoopHead`] that notes where the iteration started. A register the loop writes
//! that is live at the head (read before being written on some path from the head,
//! around the loop *or after it*; registers that final states report count as read when
//! the thread ends) must be proved the same after a dropped iteration as before: by the
//! analysis below (a constant, or a compare-and-swap retry loop's expected value), or at
//! run time: it is copied at the head and compared at the back edge, and the marked back
//! edge is taken only if all such registers are as they were (the `guard`). A register
//! that surely differs at every back edge of a pure iteration (a counter, a failed
//! CAS's expected value) leaves the loop alone.
//!
//! Why this is sound: a pure iteration leaves memory and buffers as they were, and the
//! registers live at the head as they were, so the execution without it reaches the same
//! states from there on; an execution that spins k times and then leaves is equivalent to
//! one that runs only the last iteration. Executions in which a thread stays blocked so
//! are discarded, unless the engines find that the loop can never leave (a hang, judged on
//! the final memory by the machine's collector). Why it matters: every failed
//! iteration would be a new load racing with the writes the thread waits for, and DPOR
//! would explore them all.

use crate::{Expr, Function, Op, Program};

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
        Op::Return(_) | Op::Exit | Op::ExitProcess => out.push(None),
        _ => out.push((pc + 1 < f.body.len()).then_some(pc + 1)),
    }
}

/// The registers live before each instruction of `f` (one bit per register, 64 to a
/// word), with nothing read after the function ends: for engines that look at no final
/// state, a dead register's value cannot matter. A call does not kill the register it
/// returns into: a callee that returns no value leaves it as it was.
pub fn live_registers(f: &Function) -> Vec<Vec<u64>> {
    liveness_with(f, &[], false, false)
}

/// [`live_registers`] where a register read only to compute a dead one is dead too (the
/// faint-variable analysis): a local assignment that cannot fault and whose destination
/// is dead reads nothing.
pub fn needed_registers(f: &Function) -> Vec<Vec<u64>> {
    liveness_with(f, &[], false, true)
}

/// The registers live before each instruction: read on some path before being written.
/// `exit_live` are read after the function ends (a thread's registers in final states).
fn liveness(f: &Function, exit_live: &[crate::Reg]) -> Vec<Vec<u64>> {
    liveness_with(f, exit_live, true, false)
}

fn liveness_with(
    f: &Function,
    exit_live: &[crate::Reg],
    call_kills: bool,
    faint: bool,
) -> Vec<Vec<u64>> {
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
            if faint {
                if let Op::Local { dst: d, expr } = op {
                    if out[*d as usize / 64] & (1 << (d % 64)) == 0
                        && !crate::simplify::can_fault(expr)
                    {
                        if out != live[pc] {
                            live[pc] = out;
                            changed = true;
                        }
                        continue;
                    }
                }
            }
            let call = matches!(op, Op::Call { .. } | Op::CallIndirect { .. });
            if let Some(d) = dst(op).filter(|_| call_kills || !call) {
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

/// Rewrites the loops `stateless_loop` takes: a region `head..=back` whose only backward
/// jump is `back: jump head`, entered only at the head. An iteration in which every event
/// was pure (loads, fences, failed compare-and-swaps; see the machine) and which left the
/// registers live at the head as they were can be dropped from any execution, leaving a
/// valid one with the same outcome. So the back edge becomes [`Op::SpinBack`], which
/// blocks the thread when the iteration was pure, and the head gets an [`Op::LoopHead`]
/// that notes where the iteration started; with a guard, the head copies the guarded
/// registers and the back edge reaches `SpinBack` only where they compare equal (else it
/// jumps back as before).
fn rewrite_loops(f: &mut Function, exit_live: &[crate::Reg]) -> usize {
    let mut count = 0;
    let mut j = 0;
    while j < f.body.len() {
        if let Some((h, guard)) = stateless_loop(f, j, exit_live) {
            let start = f.reg_names.len() as crate::Reg;
            f.reg_names.push(format!("%iter{count}"));
            let loc = f.body[h].loc;
            // Each guarded register is copied at the head, and compared at the back edge.
            let mut copies = vec![crate::Instr {
                op: Op::LoopHead { dst: start },
                loc,
            }];
            let mut same: Option<Expr> = None;
            for &g in &guard {
                let copy = f.reg_names.len() as crate::Reg;
                f.reg_names
                    .push(format!("%was{count}.{}", f.reg_names[g as usize]));
                copies.push(crate::Instr {
                    op: Op::Local {
                        dst: copy,
                        expr: Expr::Reg(g),
                    },
                    loc,
                });
                let eq = Expr::Bin(
                    crate::BinOp::Eq,
                    Box::new(Expr::Reg(g)),
                    Box::new(Expr::Reg(copy)),
                );
                same = Some(match same {
                    None => eq,
                    Some(e) => Expr::Bin(crate::BinOp::And, Box::new(e), Box::new(eq)),
                });
            }
            // Jumps to the head land on the marker; to the back edge, on the comparison.
            insert(f, h, copies, true);
            let back = j + guard.len() + 1;
            let back_loc = f.body[back].loc;
            let spin = Op::SpinBack {
                to: h as u32,
                start,
            };
            // The last instruction of the rewritten loop.
            let last = match same {
                None => {
                    f.body[back].op = spin;
                    back
                }
                Some(same) => {
                    let flag = f.reg_names.len() as crate::Reg;
                    f.reg_names.push(format!("%same{count}"));
                    let at = |op| crate::Instr { op, loc: back_loc };
                    let b = back as u32;
                    // `then_to`: the marked back edge; `else_to`: the original back edge,
                    // a plain jump, when the iteration changed a guarded register.
                    insert(
                        f,
                        back,
                        vec![
                            at(Op::Local {
                                dst: flag,
                                expr: same,
                            }),
                            at(Op::Branch {
                                cond: Expr::Reg(flag),
                                then_to: b + 2,
                                else_to: b + 3,
                            }),
                            at(spin),
                        ],
                        true,
                    );
                    back + 3
                }
            };
            count += 1;
            j = last + 1;
            continue;
        }
        j += 1;
    }
    count
}

/// Inserts `new` before instruction `at`. Jumps to `at` land on the first inserted
/// instruction if `onto`, else on `at`'s own, now after them; jumps inside `new` are
/// absolute and left alone.
fn insert(f: &mut Function, at: usize, new: Vec<crate::Instr>, onto: bool) {
    let k = new.len() as u32;
    let at = at as u32;
    for i in f.body.iter_mut() {
        crate::simplify::targets_mut(&mut i.op, &mut |t| {
            if *t > at || (*t == at && !onto) {
                *t += k
            }
        });
    }
    let at = at as usize;
    f.body.splice(at..at, new);
}

/// The head of the loop whose back edge is `j`, if the loop qualifies (see above).
/// With it, the registers to compare at the back edge (`guard`): live at the head, they
/// do not qualify statically, so an iteration is dropped only if it left them as they were.
fn stateless_loop(
    f: &Function,
    j: usize,
    exit_live: &[crate::Reg],
) -> Option<(usize, Vec<crate::Reg>)> {
    let Op::Jump(h) = f.body[j].op else {
        return None;
    };
    let h = h as usize;
    if h >= j {
        return None;
    }
    let region = &f.body[h..j];
    // A return inside the loop leaves it, like a jump out (`while (1) { if (!tas(&l))
    // return; }`). A call inside the loop is fine: the callee's frame is gone when control comes back
    // to the loop, and whatever else it does is an event of the thread, which the machine
    // judges pure or not like the loop's own.
    let allowed = region
        .iter()
        .all(|i| !matches!(i.op, Op::LoopHead { .. } | Op::SpinBack { .. }));
    if !allowed {
        return None;
    }
    let calls = region
        .iter()
        .any(|i| matches!(i.op, Op::Call { .. } | Op::CallIndirect { .. }));
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
    // Registers read before the iteration writes them: carried from one iteration to the
    // next, taken only as `carried_ok` allows.
    let mut carried: Vec<crate::Reg> = Vec::new();
    must[0] = Some(Vec::new());
    for k in 0..n - 1 {
        let Some(defined) = must[k].clone() else {
            continue; // unreachable from the head
        };
        let i = &f.body[h + k];
        let mut reads = Vec::new();
        op_reads(&i.op, &mut reads);
        for r in &reads {
            if written_in_loop.contains(r) && !defined.contains(r) && !carried.contains(r) {
                carried.push(*r);
            }
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
            Op::Return(_) | Op::Exit | Op::ExitProcess => Vec::new(),
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
    let is_live = |r: crate::Reg| live[h][r as usize / 64] & (1 << (r % 64)) != 0;
    // Registers that neither kind below covers are compared at run time: an iteration
    // that leaves them as they were (`while (!ok) ok = x;` that read 0 again) leaves the
    // whole state as it was, and is dropped like any other; one that changed them is not.
    let mut guard = Vec::new();
    let mut reloaded = false;
    for &r in &carried {
        match carried_ok(f, h, j, r, &carried) {
            Some(Carried::Same) => {}
            Some(Carried::Never) => return None,
            // The registers the moved load fed must not remember the earlier value.
            // Its argument moves a load to just before the successful compare-and-swap
            // past the rest of the iteration, which a callee could make visible.
            Some(Carried::Reloaded { .. }) if calls => return None,
            Some(Carried::Reloaded { between }) => {
                if between.iter().any(|&x| x != r && is_live(x)) {
                    return None;
                }
                reloaded = true;
            }
            None => guard.push(r),
        }
    }
    for &r in &written_in_loop {
        if !carried.contains(&r) && is_live(r) && !guard.contains(&r) {
            guard.push(r);
        }
    }
    // The moved load's argument drops the failed iterations that changed the carried
    // register too, so it cannot be combined with a comparison at the back edge.
    if reloaded && !guard.is_empty() {
        return None;
    }
    Some((h, guard))
}

/// What a register carried around a loop holds, abstractly, at a point of one iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Abs {
    /// The value the carried register had when the iteration started.
    Entry(crate::Reg),
    Const(crate::Value),
    /// The value the compare-and-swap at this instruction read.
    Old(usize),
    /// 1 if the compare-and-swap at this instruction (whose expected value is the carried
    /// register's entry value) succeeded, else 0.
    Succeeded(usize),
    /// What one of the compare-and-swaps whose expected value was the carried register's
    /// entry value read, at sites of different cells.
    ReadByCas,
    /// The carried register's entry value plus this constant (never 0, and small enough
    /// not to wrap around to the entry value).
    Offset(crate::Value),
    Unknown,
}

/// Why a carried register does not stop a pure iteration from being dropped.
enum Carried {
    /// It holds the same constant when the loop is entered and at every back edge: the
    /// state at the head after a dropped iteration is the state before it.
    Same,
    /// A compare-and-swap retry loop: the register is the CAS's expected value, the loop
    /// gives it the value the failed CAS read, and before the loop it was loaded from the
    /// CAS's own address with only local steps between that load and the loop (`r = x;
    /// while (!CAS(&x, &r, v));`). An execution whose CAS fails k times, then succeeds
    /// with the value the k-th failure read, is equivalent to one in which that load runs
    /// just before the successful CAS and reads that value, and the first CAS succeeds
    /// (the failures and the load are reads, and nothing the thread did between was
    /// visible). So the executions in which the first CAS fails need not be explored,
    /// provided no register but `r` keeps what the load read (`between`: the registers
    /// written from the load to the loop). This is how GenMC's spin-assume treats such
    /// loops.
    Reloaded { between: Vec<crate::Reg> },
    /// It differs at every back edge from what it was at the head (a loop counter): no
    /// iteration could ever be dropped, so the loop is left alone.
    Never,
}

/// Whether carried register `r` of the loop `h..=j` is one of the kinds above.
fn carried_ok(
    f: &Function,
    h: usize,
    j: usize,
    r: crate::Reg,
    carried: &[crate::Reg],
) -> Option<Carried> {
    // Abstract values of every register along the iteration (forward jumps only).
    let n = j - h + 1;
    let mut at: Vec<Option<Vec<(crate::Reg, Abs)>>> = vec![None; n];
    at[0] = Some(carried.iter().map(|&c| (c, Abs::Entry(c))).collect());
    let get = |m: &[(crate::Reg, Abs)], x: crate::Reg| {
        m.iter().find(|p| p.0 == x).map_or(Abs::Unknown, |p| p.1)
    };
    // `r`'s entry value plus a constant other than 0 (`i + 1`).
    let offset = |e: &Expr, m: &[(crate::Reg, Abs)]| -> Option<crate::Value> {
        let Expr::Bin(op, a, b) = e else {
            return None;
        };
        let c = match (op, &**a, &**b) {
            (crate::BinOp::Add, Expr::Reg(x), Expr::Const(c))
            | (crate::BinOp::Add, Expr::Const(c), Expr::Reg(x))
                if get(m, *x) == Abs::Entry(r) =>
            {
                *c
            }
            (crate::BinOp::Sub, Expr::Reg(x), Expr::Const(c)) if get(m, *x) == Abs::Entry(r) => {
                c.checked_neg()?
            }
            _ => return None,
        };
        (c != 0).then_some(c)
    };
    // For each CAS in the loop, whether its expected value is `r`'s entry value.
    let mut cas_of_r: Vec<usize> = Vec::new();
    for k in 0..n - 1 {
        let Some(mut m) = at[k].clone() else {
            continue;
        };
        let pc = h + k;
        let op = &f.body[pc].op;
        let value = match op {
            Op::Local { expr, .. } => match expr {
                Expr::Const(c) => Abs::Const(*c),
                Expr::Reg(x) => get(&m, *x),
                Expr::Bin(crate::BinOp::Eq, a, b) => match (&**a, &**b) {
                    (Expr::Reg(a), Expr::Reg(b)) => match (get(&m, *a), get(&m, *b)) {
                        (Abs::Old(pc), Abs::Entry(e)) | (Abs::Entry(e), Abs::Old(pc))
                            if e == r && cas_of_r.contains(&pc) =>
                        {
                            Abs::Succeeded(pc)
                        }
                        _ => Abs::Unknown,
                    },
                    _ => Abs::Unknown,
                },
                Expr::Un(crate::UnOp::Sext(b) | crate::UnOp::Zext(b), e) => {
                    // Brought back to b bits, an offset smaller than 2^(b-1) stays one.
                    match offset(e, &m) {
                        Some(c) if *b >= 2 && c.unsigned_abs() < 1u64 << (*b - 1).min(62) => {
                            Abs::Offset(c)
                        }
                        _ => Abs::Unknown,
                    }
                }
                Expr::Bin(crate::BinOp::Add | crate::BinOp::Sub, ..) => {
                    offset(expr, &m).map_or(Abs::Unknown, Abs::Offset)
                }
                _ => Abs::Unknown,
            },
            Op::Rmw {
                op: crate::RmwOp::Cas { expected, .. },
                ..
            } => {
                if let Expr::Reg(e) = expected {
                    if get(&m, *e) == Abs::Entry(r) {
                        cas_of_r.push(pc);
                    }
                }
                Abs::Old(pc)
            }
            _ => Abs::Unknown,
        };
        if let Some(d) = dst(op) {
            m.retain(|p| p.0 != d);
            m.push((d, value));
        }
        let succs = match op {
            Op::Jump(t) => vec![(*t as usize, false)],
            Op::Branch {
                then_to, else_to, ..
            } => vec![(*then_to as usize, true), (*else_to as usize, false)],
            Op::Return(_) | Op::Exit | Op::ExitProcess => Vec::new(),
            _ => vec![(pc + 1, false)],
        };
        for (t, then) in succs {
            if t < h || t > j {
                continue;
            }
            let mut m = m.clone();
            // Where the CAS succeeded, what it read is the carried register's entry value.
            if let (
                true,
                Op::Branch {
                    cond: Expr::Reg(c), ..
                },
            ) = (then, op)
            {
                if let Abs::Succeeded(pc) = get(&m, *c) {
                    for p in m.iter_mut().filter(|p| p.1 == Abs::Entry(r)) {
                        p.1 = Abs::Old(pc);
                    }
                }
            }
            let slot = &mut at[t - h];
            *slot = Some(match slot.take() {
                None => m.clone(),
                Some(prev) => prev
                    .into_iter()
                    .map(|(x, a)| (x, join(f, &cas_of_r, a, get(&m, x))))
                    .collect(),
            });
        }
    }
    let back = get(at[n - 1].as_ref()?, r);
    // A counter, or the value a compare-and-swap whose expected value was the register
    // read: where the CAS failed (a pure iteration), what it read is not what was
    // expected. Either way the register differs at every back edge of a pure iteration.
    let never = match back {
        Abs::Offset(_) | Abs::ReadByCas => true,
        Abs::Old(pc) => cas_of_r.contains(&pc),
        _ => false,
    };
    let Some((entry, between)) = entry_value(f, h, r) else {
        return never.then_some(Carried::Never);
    };
    match (back, entry) {
        (Abs::Const(c), Entry::Const(e)) if c == e => Some(Carried::Same),
        (Abs::Old(pc), Entry::Load(addr)) if cas_of_r.contains(&pc) => {
            let Op::Rmw { addr: cas_addr, .. } = &f.body[pc].op else {
                return Some(Carried::Never);
            };
            // The same cell: the same address, computed from nothing the loop or the
            // steps after the load change.
            let mut regs = Vec::new();
            addr_regs(cas_addr, &mut regs);
            let region_writes: Vec<crate::Reg> =
                f.body[h..=j].iter().filter_map(|i| dst(&i.op)).collect();
            if *cas_addr != addr
                || regs
                    .iter()
                    .any(|x| region_writes.contains(x) || between.contains(x))
            {
                return Some(Carried::Never);
            }
            Some(Carried::Reloaded { between })
        }
        _ => never.then_some(Carried::Never),
    }
}

/// Two paths' abstract values of a register where they meet. Where each holds what a
/// compare-and-swap of the carried register read, at two sites with the same address
/// (`if (r == 42) CAS(&x, &r, 42); else CAS(&x, &r, 17);`), it holds what was read from
/// that one cell, which is all `Reloaded` needs: the moved load runs where the CAS that
/// set it did. The lower site stands for both (same address, so the same checks).
fn join(f: &Function, cas_of_r: &[usize], a: Abs, b: Abs) -> Abs {
    let addr = |pc: usize| match &f.body[pc].op {
        Op::Rmw { addr, .. } => Some(addr),
        _ => None,
    };
    match (a, b) {
        _ if a == b => a,
        (Abs::Old(p), Abs::Old(q))
            if cas_of_r.contains(&p) && cas_of_r.contains(&q) && addr(p) == addr(q) =>
        {
            Abs::Old(p.min(q))
        }
        (Abs::Old(p), Abs::Old(q)) if cas_of_r.contains(&p) && cas_of_r.contains(&q) => {
            Abs::ReadByCas
        }
        (Abs::Old(p), Abs::ReadByCas) | (Abs::ReadByCas, Abs::Old(p)) if cas_of_r.contains(&p) => {
            Abs::ReadByCas
        }
        _ => Abs::Unknown,
    }
}

/// How a register gets its value before a loop.
enum Entry {
    Const(crate::Value),
    /// Loaded from this address (through copies and sign extensions: a cell of an n-bit
    /// type holds n-bit values, which the front-end's loads extend to themselves).
    Load(crate::Addr),
}

/// The value register `r` holds when the loop at `h` is entered, if straight-line code
/// just before the loop (the only way in) gives it one, with the registers written from
/// there to the loop. Only local steps may come between a load and the loop.
fn entry_value(f: &Function, h: usize, r: crate::Reg) -> Option<(Entry, Vec<crate::Reg>)> {
    // Whether control reaches `t` other than from the instruction just before it.
    let entered_elsewhere = |t: usize| {
        f.body
            .iter()
            .enumerate()
            .any(|(q, i)| q + 1 != t && targets(&i.op).contains(&(t as u32)))
    };
    // Besides its back edge, the loop is entered only from `h - 1`.
    let back_edges = f
        .body
        .iter()
        .enumerate()
        .filter(|(q, i)| *q >= h && targets(&i.op).contains(&(h as u32)))
        .count();
    let from_outside = f
        .body
        .iter()
        .enumerate()
        .any(|(q, i)| q + 1 != h && q < h && targets(&i.op).contains(&(h as u32)));
    if h == 0 || back_edges != 1 || from_outside {
        return None;
    }
    let mut want = r;
    let mut between = Vec::new();
    let mut k = h;
    while k > 0 {
        k -= 1;
        match &f.body[k].op {
            Op::Jump(t) if *t as usize == k + 1 => {}
            Op::Local { dst, expr } => {
                between.push(*dst);
                if *dst == want {
                    want = match expr {
                        Expr::Const(c) => return Some((Entry::Const(*c), between)),
                        Expr::Reg(x) => *x,
                        Expr::Un(crate::UnOp::Sext(_), e) => match **e {
                            Expr::Reg(x) => x,
                            _ => return None,
                        },
                        _ => return None,
                    };
                }
            }
            Op::Load {
                dst,
                addr,
                copy: false,
            } if *dst == want => {
                between.push(*dst);
                return Some((Entry::Load(addr.clone()), between));
            }
            _ => return None,
        }
        // Straight-line only: no other path may join the code scanned.
        if entered_elsewhere(k) {
            return None;
        }
    }
    None
}

pub(crate) fn dst(op: &Op) -> Option<crate::Reg> {
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
        | Op::CallIndirect { dst: Some(dst), .. }
        | Op::BarrierArrive {
            serial: Some(dst), ..
        } => Some(*dst),
        _ => None,
    }
}

pub(crate) fn op_reads(op: &Op, out: &mut Vec<crate::Reg>) {
    op.exprs(&mut |e| e.regs(out));
    if let Op::SpinBack { start, .. } = op {
        out.push(*start);
    }
}

fn addr_regs(a: &crate::Addr, out: &mut Vec<crate::Reg>) {
    match a {
        crate::Addr::Global { index, .. } => index.regs(out),
        crate::Addr::Ptr(e) => e.regs(out),
    }
}
