//! Barriers (`pthread_barrier_wait`) as two operations, [`Op::BarrierArrive`] and
//! [`Op::BarrierPass`], so that engines can see what a waiting loop hides: the arrivals of
//! one generation commute unless some thread reads which one was last (the serial
//! thread), and passing the barrier happens after every arrival of its generation.
//!
//! The barrier's state is one cell: the count `pthread_barrier_init` stored in the low 32
//! bits, the arrivals of the current generation in the 16 bits above, and the generation
//! (modulo 2^15) above those. Engines that do not model the operations themselves turn
//! them back into the waiting loop they stand for ([`as_loops`]).

use crate::{spin, BinOp, Expr, Function, Instr, Op, Program, Reg};

const ARRIVED_SHIFT: i64 = 32;
const GEN_SHIFT: i64 = 48;
const LOW32: i64 = 0xffff_ffff;

/// The count the barrier was initialised with (not positive: never initialised, or
/// destroyed).
pub fn count(cell: i64) -> i64 {
    (cell & LOW32) as u32 as i32 as i64
}

/// How many threads have arrived in the current generation.
pub fn arrived(cell: i64) -> i64 {
    (cell >> ARRIVED_SHIFT) & 0xffff
}

/// How many generations have completed since the barrier was initialised (modulo 2^15).
pub fn generation(cell: i64) -> i64 {
    (cell >> GEN_SHIFT) & 0x7fff
}

/// The cell after one more arrival, and whether it was the last of its generation (then
/// the arrivals start again from 0, in the next generation).
pub fn arrive(cell: i64) -> (i64, bool) {
    let last = arrived(cell) + 1 >= count(cell);
    if last {
        let gen = (generation(cell) + 1) & 0x7fff;
        ((cell & LOW32) | (gen << GEN_SHIFT), true)
    } else {
        (cell + (1 << ARRIVED_SHIFT), false)
    }
}

/// Whether some function has a native barrier operation.
pub fn has_barriers(prog: &Program) -> bool {
    prog.functions.iter().any(|f| {
        f.body
            .iter()
            .any(|i| matches!(i.op, Op::BarrierArrive { .. } | Op::BarrierPass(_)))
    })
}

/// Drops the serial result of every arrival whose result nothing needs (a register read
/// only to compute dead ones is not needed): then which arrival was last is no part of
/// the outcome, and engines may let the arrivals of a generation commute.
pub fn drop_unused_serials(prog: &mut Program) {
    for f in &mut prog.functions {
        if !f.body.iter().any(|i| {
            matches!(
                i.op,
                Op::BarrierArrive {
                    serial: Some(_),
                    ..
                }
            )
        }) {
            continue;
        }
        let needed = spin::needed_registers(f);
        let n = f.body.len();
        for pc in 0..n {
            if let Op::BarrierArrive {
                serial: Some(r), ..
            } = f.body[pc].op
            {
                let live_after = needed
                    .get(pc + 1)
                    .is_some_and(|l| l[r as usize / 64] & (1 << (r % 64)) != 0);
                if !live_after || !serial_matters(f, pc, r, &needed) {
                    if let Op::BarrierArrive { serial, .. } = &mut f.body[pc].op {
                        *serial = None;
                    }
                }
            }
        }
    }
}

/// Whether the serial result `r` of the arrival at `pc` can change what the thread does:
/// unless, run from the arrival with either value (0 and 1), the thread's local code
/// (assignments, branches on what those values decide) comes to the same instruction with
/// every register it wrote (or the result) dead there, jumping forward only. `if (rc != 0 && rc !=
/// PTHREAD_BARRIER_SERIAL_THREAD) error();`, the usual check of the result, is such code.
fn serial_matters(f: &Function, pc: usize, r: Reg, needed: &[Vec<u64>]) -> bool {
    let live = |at: usize, x: Reg| {
        needed
            .get(at)
            .is_some_and(|l| l[x as usize / 64] & (1 << (x % 64)) != 0)
    };
    let run = |value: i64| -> Option<usize> {
        // The registers the walk wrote, with their values where known.
        let mut wrote: Vec<(Reg, Option<i64>)> = vec![(r, Some(value))];
        let mut at = pc + 1;
        for _ in 0..256 {
            if wrote.iter().all(|&(x, _)| !live(at, x)) {
                return Some(at);
            }
            match &f.body.get(at)?.op {
                Op::BarrierPass(_) if at == pc + 1 => at += 1,
                Op::Local { dst, expr } => {
                    let v = eval(expr, &wrote);
                    wrote.retain(|&(x, _)| x != *dst);
                    wrote.push((*dst, v));
                    at += 1;
                }
                // Forward only: a loop's back edges are counted (`--unroll`).
                Op::Jump(t) if *t as usize > at => at = *t as usize,
                Op::Branch {
                    cond,
                    then_to,
                    else_to,
                } => {
                    let to = if eval(cond, &wrote)? != 0 {
                        *then_to
                    } else {
                        *else_to
                    } as usize;
                    if to <= at {
                        return None;
                    }
                    at = to;
                }
                _ => return None,
            }
        }
        None
    };
    let zero = run(0);
    zero.is_none() || zero != run(1)
}

/// The value of `e` where only the registers of `known` with a value are known.
fn eval(e: &Expr, known: &[(Reg, Option<i64>)]) -> Option<i64> {
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(x) => known.iter().find(|(k, _)| k == x).and_then(|(_, v)| *v),
        Expr::Un(op, a) => Some(op.eval(eval(a, known)?)),
        Expr::Bin(op, a, b) => op.eval(eval(a, known)?, eval(b, known)?),
        Expr::AddrOf(..) => None,
    }
}

/// Rewrites every barrier operation into the loops they stand for, for engines that do
/// not model them: an arrival is a fetch-and-add on the cell (a fault where the count is
/// not positive), and, by the last, one that starts the next generation; a pass a loop that reads the cell until the generation the
/// thread arrived in has changed. (The waiting loop it was as C code, before arrivals were
/// operations.)
pub fn as_loops(prog: &mut Program) {
    for f in &mut prog.functions {
        if f.body
            .iter()
            .any(|i| matches!(i.op, Op::BarrierArrive { .. } | Op::BarrierPass(_)))
        {
            rewrite(f);
        }
    }
}

fn rewrite(f: &mut Function) {
    let old = std::mem::take(&mut f.body);
    // Where each old instruction starts in the new body.
    let mut at = Vec::with_capacity(old.len() + 1);
    let mut body: Vec<Instr> = Vec::with_capacity(old.len() + 16);
    // Per arrival, the register holding the generation it arrived in, for its pass.
    let mut gen_reg: Option<Reg> = None;
    // Per new instruction, where the code it belongs to starts if the rewrite made it (its
    // jumps are offsets from there), `None` for the function's own (old positions).
    let mut base: Vec<Option<u32>> = Vec::with_capacity(old.len() + 16);
    let new_reg = |f: &mut Function, name: &str| {
        f.reg_names.push(format!("%barrier.{name}"));
        (f.reg_names.len() - 1) as Reg
    };
    for ins in old {
        at.push(body.len() as u32);
        let loc = ins.loc;
        let reg = |r| Expr::Reg(r);
        let c = |v| Expr::Const(v);
        let bin = Expr::bin;
        match ins.op {
            Op::BarrierArrive { addr, serial } => {
                let old = new_reg(f, "old");
                let last = new_reg(f, "last");
                let g = new_reg(f, "gen");
                let junk = new_reg(f, "reset");
                gen_reg = Some(g);
                let start = body.len();
                let count = Expr::Un(
                    crate::UnOp::Sext(32),
                    Box::new(bin(BinOp::And, reg(old), c(LOW32))),
                );
                let arrived = bin(
                    BinOp::And,
                    bin(BinOp::Shr, reg(old), c(ARRIVED_SHIFT)),
                    c(0xffff),
                );
                // A thread that comes while the last one has yet to start the next
                // generation belongs to the next one (the count the last subtracts leaves
                // it counted there).
                let gen = bin(
                    BinOp::Add,
                    bin(BinOp::Shr, reg(old), c(GEN_SHIFT)),
                    bin(BinOp::Div, arrived.clone(), count.clone()),
                );
                let mut ops = vec![
                    // A `__sync_*` read-modify-write, as the C library's was: a full
                    // fence first (under TSO the read-modify-write drains the buffers).
                    Op::Fence(crate::FenceKind::Full),
                    Op::Rmw {
                        dst: old,
                        addr: addr.clone(),
                        op: crate::RmwOp::FetchAdd(c(1 << ARRIVED_SHIFT)),
                    },
                    Op::Assert {
                        cond: bin(BinOp::Gt, count.clone(), c(0)),
                        text: "pthread_barrier_wait at a barrier not initialised, or destroyed"
                            .into(),
                    },
                    Op::Local {
                        dst: last,
                        expr: bin(
                            BinOp::Eq,
                            bin(
                                BinOp::Rem,
                                bin(BinOp::Add, arrived.clone(), c(1)),
                                count.clone(),
                            ),
                            c(0),
                        ),
                    },
                    Op::Local { dst: g, expr: gen },
                    // 5: the last starts the next generation
                    Op::Branch {
                        cond: reg(last),
                        then_to: 6,
                        else_to: 7,
                    },
                    Op::Rmw {
                        dst: junk,
                        addr,
                        op: crate::RmwOp::FetchAdd(bin(
                            BinOp::Sub,
                            c(1 << GEN_SHIFT),
                            bin(BinOp::Shl, count, c(ARRIVED_SHIFT)),
                        )),
                    },
                ];
                if let Some(s) = serial {
                    ops.push(Op::Local {
                        dst: s,
                        expr: reg(last),
                    });
                }
                for op in ops {
                    body.push(Instr { op, loc });
                    base.push(Some(start as u32));
                }
            }
            Op::BarrierPass(addr) => {
                // A pass with no arrival before it does not wait: it goes.
                let Some(g) = gen_reg.take() else {
                    continue;
                };
                let w = new_reg(f, "seen");
                let start = body.len();
                let ops = vec![
                    Op::Load {
                        dst: w,
                        addr,
                        copy: false,
                    },
                    Op::Branch {
                        cond: bin(BinOp::Gt, bin(BinOp::Shr, reg(w), c(GEN_SHIFT)), reg(g)),
                        then_to: 3,
                        else_to: 2,
                    },
                    Op::Jump(0),
                ];
                for op in ops {
                    body.push(Instr { op, loc });
                    base.push(Some(start as u32));
                }
            }
            op => {
                body.push(Instr { op, loc });
                base.push(None);
            }
        }
    }
    at.push(body.len() as u32);
    for (ins, b) in body.iter_mut().zip(&base) {
        crate::simplify::targets_mut(&mut ins.op, &mut |t| {
            *t = match b {
                Some(b) => *t + b,
                None => at.get(*t as usize).copied().unwrap_or(*t),
            }
        });
    }
    f.body = body;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_arrival_opens_the_next_generation() {
        let mut cell = 3;
        let (c, last) = arrive(cell);
        assert!(!last);
        assert_eq!((count(c), arrived(c), generation(c)), (3, 1, 0));
        cell = arrive(c).0;
        let (c, last) = arrive(cell);
        assert!(last);
        assert_eq!((count(c), arrived(c), generation(c)), (3, 0, 1));
        assert_eq!(count(0), 0);
        assert_eq!(count(LOW32), -1);
    }
}
