//! One instruction: the dispatch to the lowering of each kind, and integer arithmetic,
//! comparisons, casts and `select`, whose results are brought back to their width.

use super::{wrap, zext, FnLower};
use crate::Error;
use fencer_ir::{BinOp, Expr, UnOp};
use llvm_ir::{Instruction, IntPredicate, Name, Operand, Type};

impl<'a, 'm> FnLower<'a, 'm> {
    fn binop(
        &mut self,
        dest: &Name,
        op: BinOp,
        a: &Operand,
        b: &Operand,
        how: Arith,
    ) -> Result<(), Error> {
        let bits = self.bits(a);
        let (x, y) = (self.operand(a)?, self.operand(b)?);
        let e = match how {
            Arith::Wrap => wrap(Expr::bin(op, x, y), bits),
            Arith::Exact => Expr::bin(op, x, y),
            Arith::Unsigned => wrap(Expr::bin(op, zext(x, bits), zext(y, bits)), bits),
        };
        self.local(dest, e);
        Ok(())
    }

    pub(super) fn instr(&mut self, i: &'m Instruction) -> Result<(), Error> {
        use Instruction as I;
        match i {
            I::Add(x) => self.binop(&x.dest, BinOp::Add, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::Sub(x) => self.binop(&x.dest, BinOp::Sub, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::Mul(x) => self.binop(&x.dest, BinOp::Mul, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::SDiv(x) => self.binop(&x.dest, BinOp::Div, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::SRem(x) => self.binop(&x.dest, BinOp::Rem, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::UDiv(x) => self.binop(
                &x.dest,
                BinOp::UDiv,
                &x.operand0,
                &x.operand1,
                Arith::Unsigned,
            )?,
            I::URem(x) => self.binop(
                &x.dest,
                BinOp::URem,
                &x.operand0,
                &x.operand1,
                Arith::Unsigned,
            )?,
            I::Shl(x) => self.binop(&x.dest, BinOp::Shl, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::AShr(x) => {
                self.binop(&x.dest, BinOp::Shr, &x.operand0, &x.operand1, Arith::Exact)?
            }
            I::LShr(x) => {
                let bits = self.bits(&x.operand0);
                let (a, b) = (self.operand(&x.operand0)?, self.operand(&x.operand1)?);
                let e = wrap(Expr::bin(BinOp::LShr, zext(a, bits), b), bits);
                self.local(&x.dest, e);
            }
            I::And(x) => self.binop(&x.dest, BinOp::And, &x.operand0, &x.operand1, Arith::Exact)?,
            I::Or(x) => self.binop(&x.dest, BinOp::Or, &x.operand0, &x.operand1, Arith::Exact)?,
            I::Xor(x) => self.binop(&x.dest, BinOp::Xor, &x.operand0, &x.operand1, Arith::Exact)?,
            I::ICmp(x) => {
                // Sign extension keeps both the signed and the unsigned order of N-bit values.
                let op = match x.predicate {
                    IntPredicate::EQ => BinOp::Eq,
                    IntPredicate::NE => BinOp::Ne,
                    IntPredicate::SLT => BinOp::Lt,
                    IntPredicate::SLE => BinOp::Le,
                    IntPredicate::SGT => BinOp::Gt,
                    IntPredicate::SGE => BinOp::Ge,
                    IntPredicate::ULT => BinOp::ULt,
                    IntPredicate::ULE => BinOp::ULe,
                    IntPredicate::UGT => BinOp::UGt,
                    IntPredicate::UGE => BinOp::UGe,
                };
                self.binop(&x.dest, op, &x.operand0, &x.operand1, Arith::Exact)?
            }
            I::Trunc(x) => {
                let bits = match x.to_type.as_ref() {
                    Type::IntegerType { bits } => *bits,
                    _ => 64,
                };
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, wrap(e, bits));
            }
            I::ZExt(x) => {
                let bits = self.bits(&x.operand);
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, zext(e, bits));
            }
            I::SExt(x) => {
                let bits = self.bits(&x.operand);
                let e = self.operand(&x.operand)?;
                let e = if bits == 1 {
                    Expr::Un(UnOp::Neg, Box::new(e))
                } else {
                    e
                };
                self.local(&x.dest, e);
            }
            I::PtrToInt(x) => {
                let e = self.operand(&x.operand)?;
                let bits = match x.to_type.as_ref() {
                    Type::IntegerType { bits } => *bits,
                    _ => 64,
                };
                // A pointer's low 32 bits are its offset, 0 at an object's start; folding
                // the object in keeps a non-null pointer non-zero when a program converts it
                // to `int` (SV-COMP's `assume_abort_if_not(p)`, written for 32-bit targets).
                let e = if bits < 64 {
                    Expr::bin(
                        BinOp::Xor,
                        e.clone(),
                        Expr::bin(
                            BinOp::Shl,
                            Expr::bin(BinOp::LShr, e, Expr::Const(32)),
                            Expr::Const(20),
                        ),
                    )
                } else {
                    e
                };
                self.local(&x.dest, wrap(e, bits));
            }
            I::IntToPtr(x) => {
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::BitCast(x) => {
                if self.promoted.contains_key(&x.dest) {
                    return Ok(());
                }
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::AddrSpaceCast(x) => {
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::Freeze(x) => {
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::Select(x) => {
                // b + c * (a - b), with c 0 or 1: one local expression for `c ? a : b`.
                let c = self.operand(&x.condition)?;
                let a = self.operand(&x.true_value)?;
                let b = self.operand(&x.false_value)?;
                let e = Expr::bin(
                    BinOp::Add,
                    b.clone(),
                    Expr::bin(BinOp::Mul, c, Expr::bin(BinOp::Sub, a, b)),
                );
                self.local(&x.dest, e);
            }
            I::Phi(_) => {}
            I::Alloca(a) => self.alloca(a)?,
            I::Load(l) => self.load(l)?,
            I::Store(s) => self.store(s)?,
            I::Fence(_) => self.fence()?,
            I::CmpXchg(x) => self.compare_exchange(x)?,
            I::AtomicRMW(x) => self.atomic_rmw(x)?,
            I::ExtractValue(x) => self.extract_value(x)?,
            I::GetElementPtr(g) => self.get_element_ptr(g)?,
            I::Call(c) => self.call(c)?,
            other => {
                let what = match other {
                    I::FAdd(_)
                    | I::FSub(_)
                    | I::FMul(_)
                    | I::FDiv(_)
                    | I::FRem(_)
                    | I::FNeg(_)
                    | I::FCmp(_)
                    | I::FPToSI(_)
                    | I::FPToUI(_)
                    | I::SIToFP(_)
                    | I::UIToFP(_)
                    | I::FPExt(_)
                    | I::FPTrunc(_) => {
                        "floating point is not supported (fencer models integers and pointers)"
                            .to_string()
                    }
                    o => format!("the instruction `{o}` is not supported"),
                };
                return Err(self.err(what));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Arith {
    /// The result is brought back to the operands' width.
    Wrap,
    /// The result already fits (bitwise operations, comparisons, arithmetic shift right).
    Exact,
    /// Unsigned: the operands are zero-extended first.
    Unsigned,
}
