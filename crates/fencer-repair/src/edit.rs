//! Inserting fences into the IR. An insertion shifts every later instruction of its
//! function, so every field that holds a pc (jump and branch targets, the loop a
//! `SpinBack` returns to) is renumbered, and a map from the new pcs back to the original
//! ones lets counterexamples of the fenced program be read in the original's terms.

use crate::{Fence, Position};
use fencer_ir::{FuncId, Instr, Op, Program};

/// A program with fences inserted, and, per function, the original position of every new
/// pc (one past the end included): an original instruction maps to its own index, an
/// inserted fence to the position it was inserted at.
pub struct Fenced {
    pub prog: Program,
    pub orig: Vec<Vec<u32>>,
}

impl Fenced {
    /// The original position of pc `pc` of function `f` of the fenced program.
    pub fn original(&self, f: FuncId, pc: u32) -> Position {
        let m = &self.orig[f as usize];
        Position {
            func: f,
            pc: m
                .get(pc as usize)
                .copied()
                .unwrap_or(*m.last().unwrap_or(&0)),
        }
    }
}

/// Inserts each fence at its position: before the instruction at `pc` (or at the end of
/// the function for `pc == body.len()`). A jump to that instruction goes to the fence, so
/// the fence runs whenever the instruction would: that is what makes "a fence at this
/// position" mean the same thing in every execution, whatever path reaches it. Positions
/// out of range are ignored; of two fences at one position only the stronger is kept (a
/// full fence orders all a store-store fence does).
pub fn insert_fences(prog: &Program, fences: &[Fence]) -> Fenced {
    let mut out = prog.clone();
    let mut orig = Vec::with_capacity(prog.functions.len());
    for (fi, f) in prog.functions.iter().enumerate() {
        let len = f.body.len() as u32;
        let mut at: Vec<(u32, fencer_ir::FenceKind)> = fences
            .iter()
            .filter(|f| f.pos.func as usize == fi && f.pos.pc <= len)
            .map(|f| (f.pos.pc, f.kind))
            .collect();
        // `Full` sorts first: keep it where both kinds are asked for.
        at.sort_unstable();
        at.dedup_by_key(|a| a.0);
        // New index of a jump target: the fence inserted there if any, else the shifted
        // instruction. Both are `t` plus the insertions strictly before `t`.
        let target = |t: u32| t + at.partition_point(|&(p, _)| p < t) as u32;
        let mut body = Vec::with_capacity(f.body.len() + at.len());
        let mut map = Vec::with_capacity(f.body.len() + at.len() + 1);
        let mut k = 0;
        for (i, ins) in f.body.iter().enumerate() {
            while k < at.len() && at[k].0 == i as u32 {
                body.push(Instr {
                    op: Op::Fence(at[k].1),
                    loc: ins.loc,
                });
                map.push(i as u32);
                k += 1;
            }
            let op = match &ins.op {
                Op::Jump(t) => Op::Jump(target(*t)),
                Op::Branch {
                    cond,
                    then_to,
                    else_to,
                } => Op::Branch {
                    cond: cond.clone(),
                    then_to: target(*then_to),
                    else_to: target(*else_to),
                },
                Op::SpinBack { to, start } => Op::SpinBack {
                    to: target(*to),
                    start: *start,
                },
                op => op.clone(),
            };
            body.push(Instr { op, loc: ins.loc });
            map.push(i as u32);
        }
        while k < at.len() {
            // At the end: falling off the function runs it; a `return` does not pass it.
            let loc = f.body.last().map_or(f.loc, |i| i.loc);
            body.push(Instr {
                op: Op::Fence(at[k].1),
                loc,
            });
            map.push(len);
            k += 1;
        }
        map.push(len);
        out.functions[fi].body = body;
        orig.push(map);
    }
    Fenced { prog: out, orig }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencer_ir::{Expr, FenceKind, Function, SrcLoc};

    fn ins(op: Op) -> Instr {
        Instr {
            op,
            loc: SrcLoc::NONE,
        }
    }

    #[test]
    fn targets_follow_their_instruction_and_reach_the_fence() {
        let f = Function {
            name: "f".into(),
            params: 0,
            reg_names: vec!["r".into()],
            body: vec![
                ins(Op::Fence(FenceKind::Full)),
                ins(Op::Branch {
                    cond: Expr::Reg(0),
                    then_to: 3,
                    else_to: 0,
                }),
                ins(Op::Jump(1)),
                ins(Op::SpinBack { to: 1, start: 0 }),
            ],
            loc: SrcLoc::NONE,
        };
        let prog = Program {
            name: "p".into(),
            files: vec![],
            objects: vec![],
            functions: vec![f],
            threads: vec![],
            cond: None,
            observe: vec![],
            observe_explicit: false,
            source_trace: false,
            hang_is_violation: true,
            assumptions: Vec::new(),
            uninit_arbitrary: false,
            wait_variant: None,
        };
        let fenced = insert_fences(
            &prog,
            &[
                Fence::full(Position { func: 0, pc: 1 }),
                Fence::store_store(Position { func: 0, pc: 3 }),
                Fence::full(Position { func: 0, pc: 4 }),
                Fence::store_store(Position { func: 0, pc: 4 }),
            ],
        );
        let b = &fenced.prog.functions[0].body;
        assert_eq!(b.len(), 7);
        assert_eq!(b[1].op, Op::Fence(FenceKind::Full));
        assert_eq!(
            b[2].op,
            Op::Branch {
                cond: Expr::Reg(0),
                then_to: 4,
                else_to: 0
            }
        );
        assert_eq!(b[3].op, Op::Jump(1));
        assert_eq!(b[4].op, Op::Fence(FenceKind::StoreStore));
        assert_eq!(b[5].op, Op::SpinBack { to: 1, start: 0 });
        assert_eq!(b[6].op, Op::Fence(FenceKind::Full), "the stronger of two");
        assert_eq!(fenced.orig[0], vec![0, 1, 1, 2, 3, 3, 4, 4]);
    }
}
