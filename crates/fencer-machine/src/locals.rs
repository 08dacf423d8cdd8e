//! Local computation between visible instructions: assignments, jumps, calls and returns,
//! the back-edge counts of `--unroll`, and the bounds that cut a thread.

use crate::address::pending_stack_object;
use crate::eval::eval_shallow;
use crate::spin::Stored;
use crate::state::{new_regs, spare_regs};
use crate::{eval, CutKind, Fault, FaultKind, Frame, SpinTrack, State, ThreadState};
use fencer_ir::{FuncId, Op, Program, Value};

/// Local instructions a thread may run between two visible ones before the step is cut as
/// a non-terminating local loop.
pub const LOCAL_FUEL: u32 = 100_000;
/// Deepest call stack a thread may have.
pub const MAX_FRAMES: usize = 256;

pub(crate) enum Local {
    /// The thread stands at a visible instruction, or has finished.
    Ready,
    Fault(Fault),
    Cut(CutKind),
}

/// Runs thread `t`'s assignments and jumps inside its current frame, the bulk of local
/// computation, with the frame's code, registers and pc held in locals: each instruction
/// then costs its own work, not the walk from the thread to its frame, function and body
/// (a chain of dependent loads that took a quarter of a long `main`'s steps). It stops at
/// any other instruction and when `fuel` runs out, and leaves those to `run_locals`;
/// `Some` is what `run_locals` returns: a division by zero, a spin loop's block, a cut by
/// `--unroll`, or `Ready` at a load, store or read-modify-write (visible: the common case,
/// where looking the instruction up again cost short local runs more than the fast loop
/// saved them).
#[inline]
fn straight_locals(
    prog: &Program,
    th: &mut ThreadState,
    t: u32,
    unroll: u32,
    spin_check: bool,
    fuel: &mut u32,
) -> Option<Local> {
    let depth = th.frames.len();
    let ThreadState {
        frames,
        spin,
        back_edges,
        ..
    } = th;
    let fr = frames.last_mut()?;
    let func = fr.func;
    let body = &prog.functions[func as usize].body[..];
    let regs = &mut fr.regs[..];
    let mut pc = fr.pc;
    let mut out = None;
    while *fuel > 0 {
        let Some(ins) = body.get(pc as usize) else {
            break;
        };
        let arith = || {
            Some(Local::Fault(Fault {
                kind: FaultKind::Arithmetic,
                thread: t,
                src: ins.loc,
                message: "division by zero".into(),
            }))
        };
        let to = match &ins.op {
            Op::Local { dst, expr } => {
                let Some(v) = eval_shallow(expr, regs) else {
                    out = arith();
                    break;
                };
                write_reg(&mut regs[*dst as usize], v, spin, depth);
                *fuel -= 1;
                pc += 1;
                continue;
            }
            Op::Jump(to) => *to,
            Op::Branch {
                cond,
                then_to,
                else_to,
            } => match eval_shallow(cond, regs) {
                Some(0) => *else_to,
                Some(_) => *then_to,
                None => {
                    out = arith();
                    break;
                }
            },
            Op::Load { .. } | Op::Store { .. } | Op::Rmw { .. } => {
                out = Some(Local::Ready);
                break;
            }
            _ => break,
        };
        if to <= pc {
            let key = (func, pc, depth as u32);
            if spin_check && spin.pure && spin.at == Some(key) && !spin.changed {
                spin.blocked = true;
                spin.input_blocked = spin.input;
                out = Some(Local::Ready);
                break;
            }
            spin.at = Some(key);
            spin.changed = false;
            spin.input = false;
            spin.pure = true;
            // A spin loop with a guard ends in two back edges to its head, the marked one
            // and, right after it, the original jump (`fencer_ir::spin`): one loop, so one
            // count. Counted apart, each would reset the other as an inner loop's, and the
            // loop would run about twice as often as `--unroll` allows.
            let from = match pc.checked_sub(1).map(|p| &body[p as usize].op) {
                Some(Op::SpinBack { to: head, .. }) if *head == to => pc - 1,
                _ => pc,
            };
            if !take_back_edge(back_edges, func, from, to, depth, unroll) {
                out = Some(Local::Cut(CutKind::Unroll));
                break;
            }
        }
        *fuel -= 1;
        pc = to;
    }
    fr.pc = pc;
    out
}

/// Writes a register of the frame at call depth `depth`, noting whether its value changed
/// (see `SpinTrack::changed`). A frame deeper than the backward jump being watched is gone
/// when control is back at that jump, so what it held does not count: a spin loop that
/// calls `try_lock(l)` comes back with the same state whatever the callee's registers did.
#[inline]
pub(crate) fn write_reg(slot: &mut Value, v: Value, sp: &mut SpinTrack, depth: usize) {
    if *slot != v {
        *slot = v;
        if sp.at.is_some_and(|a| depth as u32 <= a.2) {
            sp.changed = true;
        }
    }
}

/// Counts a backward jump from `pc` of `func` for `--unroll`; false when taking it would
/// exceed the bound.
fn take_back_edge(
    edges: &mut Vec<BackEdge>,
    func: FuncId,
    from: u32,
    to: u32,
    depth: usize,
    unroll: u32,
) -> bool {
    if unroll == u32::MAX {
        return true;
    }
    let depth = depth as u32;
    // The loops laid out inside this one are entered anew by its next iteration: their
    // counts start again, so that N bounds the iterations of each entry of a loop (as
    // CBMC's and GenMC's unrolling do), not their sum over the whole execution.
    edges.retain(|e| !(e.depth == depth && e.func == func && e.from > to && e.from < from));
    let n = match edges
        .iter_mut()
        .find(|e| (e.func, e.from, e.depth) == (func, from, depth))
    {
        Some(e) => {
            e.count += 1;
            e.count
        }
        None => {
            edges.push(BackEdge {
                func,
                from,
                depth,
                count: 1,
            });
            1
        }
    };
    n <= unroll
}

/// A backward jump taken by a thread, for `--unroll`: where (function, from-pc, and the
/// call depth of its frame) and how often since its loop was last entered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BackEdge {
    func: FuncId,
    from: u32,
    depth: u32,
    count: u32,
}

/// Forgets the backward jumps of frames deeper than `depth` (they returned): a loop in a
/// function called again starts its count again.
#[inline]
fn forget_back_edges(edges: &mut Vec<BackEdge>, depth: usize) {
    if !edges.is_empty() {
        edges.retain(|e| e.depth as usize <= depth);
    }
}

impl State {
    /// Runs thread `t`'s local instructions until a visible one or the end.
    pub(crate) fn run_locals(&mut self, prog: &Program, t: u32) -> Local {
        let unroll = self.unroll;
        let spin_check = self.spin_check;
        let lock_pairs = self.lock_pairs;
        let th = &mut self.threads[t as usize];
        let mut fuel = LOCAL_FUEL;
        while fuel > 0 {
            if let Some(end) = straight_locals(prog, th, t, unroll, spin_check, &mut fuel) {
                return end;
            }
            if fuel == 0 {
                break;
            }
            fuel -= 1;
            let depth = th.frames.len();
            let fr = th.frames.last_mut().expect("frame");
            let f = &prog.functions[fr.func as usize];
            let Some(ins) = f.body.get(fr.pc as usize) else {
                // Falling off the end of a function is `return;`.
                if th.frames.len() == 1 {
                    th.finished = true;
                    return Local::Ready;
                }
                if let Some(done) = th.frames.pop() {
                    spare_regs(done.regs);
                }
                forget_back_edges(&mut th.back_edges, th.frames.len());
                th.frames.last_mut().expect("caller").pc += 1;
                continue;
            };
            let src = ins.loc;
            let arith = || {
                Local::Fault(Fault {
                    kind: FaultKind::Arithmetic,
                    thread: t,
                    src,
                    message: "division by zero".into(),
                })
            };
            match &ins.op {
                Op::Local { .. } | Op::Jump(_) | Op::Branch { .. } => {
                    unreachable!("straight_locals runs assignments and jumps")
                }
                Op::Assert { cond, text } => {
                    let Some(c) = eval(cond, &fr.regs) else {
                        return arith();
                    };
                    if c == 0 {
                        return Local::Fault(Fault {
                            kind: FaultKind::Assertion,
                            thread: t,
                            src,
                            message: format!("assertion `{text}` failed"),
                        });
                    }
                    fr.pc += 1;
                }
                Op::Call { dst, func, args } => {
                    if depth >= MAX_FRAMES {
                        return Local::Cut(CutKind::Recursion);
                    }
                    let callee = &prog.functions[*func as usize];
                    let mut regs = new_regs(callee.num_regs());
                    for (i, a) in args.iter().enumerate() {
                        let Some(v) = eval(a, &fr.regs) else {
                            return arith();
                        };
                        regs[i] = v;
                    }
                    let ret = *dst;
                    th.frames.push(Frame {
                        func: *func,
                        pc: 0,
                        regs,
                        ret,
                        stack: Vec::new(),
                    });
                }
                Op::CallIndirect { dst, target, args } => {
                    if depth >= MAX_FRAMES {
                        return Local::Cut(CutKind::Recursion);
                    }
                    let Some(v) = eval(target, &fr.regs) else {
                        return arith();
                    };
                    let Some(func) = fencer_ir::func_of_ptr(v, prog.functions.len()) else {
                        return Local::Fault(Fault {
                            kind: FaultKind::MemoryError,
                            thread: t,
                            src,
                            message: format!("call of {v}, which is not a function's address"),
                        });
                    };
                    let callee = &prog.functions[func as usize];
                    let mut regs = new_regs(callee.num_regs());
                    for (i, a) in args.iter().enumerate().take(callee.params as usize) {
                        let Some(v) = eval(a, &fr.regs) else {
                            return arith();
                        };
                        regs[i] = v;
                    }
                    th.frames.push(Frame {
                        func,
                        pc: 0,
                        regs,
                        ret: *dst,
                        stack: Vec::new(),
                    });
                }
                Op::Unsupported { message } => {
                    return Local::Fault(Fault {
                        kind: FaultKind::Unsupported,
                        thread: t,
                        src,
                        message: message.clone(),
                    });
                }
                Op::Return(e) => {
                    let v = match e {
                        Some(e) => match eval(e, &fr.regs) {
                            Some(v) => Some(v),
                            None => return arith(),
                        },
                        None => None,
                    };
                    if depth == 1 {
                        fr.pc = f.body.len() as u32;
                        th.finished = true;
                        return Local::Ready;
                    }
                    let done = th.frames.pop().expect("frame");
                    forget_back_edges(&mut th.back_edges, depth - 1);
                    let caller = th.frames.last_mut().expect("caller");
                    if let (Some(r), Some(v)) = (done.ret, v) {
                        write_reg(&mut caller.regs[r as usize], v, &mut th.spin, depth - 1);
                    }
                    spare_regs(done.regs);
                    caller.pc += 1;
                }
                Op::Exit => {
                    // Leaving every call at once ends the life of their stack objects:
                    // those are freed first, one visible event each, since a free races
                    // with other threads' accesses (see `thread_step`).
                    if pending_stack_object(&self.mem, &th.frames).is_some() {
                        return Local::Ready;
                    }
                    th.frames.truncate(1);
                    let root = &mut th.frames[0];
                    root.pc = prog.functions[root.func as usize].body.len() as u32;
                    th.finished = true;
                    return Local::Ready;
                }
                Op::ExitProcess => {
                    th.exited = true;
                    return Local::Ready;
                }
                Op::ThreadId { dst } => {
                    write_reg(&mut fr.regs[*dst as usize], t as Value, &mut th.spin, depth);
                    fr.pc += 1;
                }
                Op::Nondet { dst, bits } => {
                    let queued = self.inputs.get_mut(t as usize).and_then(|q| q.pop());
                    let v = match self.choice.read(t, fr.func, fr.pc, th.events, queued) {
                        Ok(v) => v,
                        Err(message) => {
                            return Local::Fault(Fault {
                                kind: FaultKind::Unsupported,
                                thread: t,
                                src,
                                message,
                            })
                        }
                    };
                    let v = match *bits {
                        1 => v & 1,
                        b if b >= 64 => v,
                        b => fencer_ir::UnOp::Sext(b).eval(v),
                    };
                    // Through `write_reg`: an iteration that reads the value the last one
                    // read changed nothing, and blocks as a pure one (an input loop that
                    // leaves on another value leaves in the run that gives the first
                    // iteration that value, from the same memory).
                    write_reg(&mut fr.regs[*dst as usize], v, &mut th.spin, depth);
                    th.spin.input = true;
                    th.spin.input_event = th.events + 1;
                    fr.pc += 1;
                }
                Op::LoopHead { dst } => {
                    let n = th.events as Value;
                    write_reg(&mut fr.regs[*dst as usize], n, &mut th.spin, depth);
                    th.spin.stored = Stored::EMPTY;
                    th.spin.stored_from = th.events;
                    fr.pc += 1;
                }
                Op::SpinBack { to, start } => {
                    let start = fr.regs[*start as usize];
                    if th.spin.pure_since(start, lock_pairs) {
                        th.spin.blocked = true;
                        th.spin.input_blocked = th.spin.input_event as Value > start;
                        return Local::Ready;
                    }
                    // Counted by the step that ran this (`State::thread_step`).
                    th.spin.end_iteration(start);
                    let to = *to;
                    if !take_back_edge(&mut th.back_edges, fr.func, fr.pc, to, depth, unroll) {
                        return Local::Cut(CutKind::Unroll);
                    }
                    let fr = th.frames.last_mut().expect("frame");
                    fr.pc = to;
                }
                _ => return Local::Ready,
            }
        }
        Local::Cut(CutKind::LocalLoop)
    }
}
