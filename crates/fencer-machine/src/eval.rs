//! Evaluation of local expressions over a register file.

use fencer_ir::{BinOp, Expr, Ptr, Value};

/// Evaluates a local expression; `None` on division by zero.
#[inline]
pub fn eval(e: &Expr, regs: &[Value]) -> Option<Value> {
    // Most operands are a register or a constant: those are read here, without a call.
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        _ => eval_tree(e, regs),
    }
}

/// [`eval`] for the assignments and branches of straight-line code, which at `-O0` are
/// mostly one operation on operands that are themselves leaves or one operation on
/// leaves (`sext(r + 1)`, `r < 16`): those are evaluated here, without a call.
#[inline(always)]
pub(crate) fn eval_shallow(e: &Expr, regs: &[Value]) -> Option<Value> {
    match e {
        Expr::Un(op, a) => Some(op.eval(binary(a, regs)?)),
        e => binary(e, regs),
    }
}

/// An operation on two [`operand`]s without a call (`r + (s == t)`, `4 * r + k`), else
/// anything through `eval_tree`.
#[inline(always)]
pub(crate) fn binary(e: &Expr, regs: &[Value]) -> Option<Value> {
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        Expr::Bin(op, a, b) => {
            // Short-circuit, as `eval_tree` does.
            let x = operand(a, regs)?;
            match op {
                BinOp::LogAnd if x == 0 => Some(0),
                BinOp::LogOr if x != 0 => Some(1),
                _ => op.eval(x, operand(b, regs)?),
            }
        }
        _ => eval_tree(e, regs),
    }
}

fn eval_tree(e: &Expr, regs: &[Value]) -> Option<Value> {
    Some(match e {
        Expr::Const(v) => *v,
        Expr::Reg(r) => regs[*r as usize],
        Expr::AddrOf(obj, idx) => Ptr {
            obj: *obj,
            offset: eval(idx, regs)? as u32,
        }
        .encode(),
        Expr::Un(op, a) => op.eval(operand(a, regs)?),
        Expr::Bin(op, a, b) => {
            // Short-circuit so that `p != 0 && 10 / p > 1` does not divide by zero.
            let x = operand(a, regs)?;
            match op {
                BinOp::LogAnd if x == 0 => 0,
                BinOp::LogOr if x != 0 => 1,
                _ => op.eval(x, operand(b, regs)?)?,
            }
        }
    })
}

/// An operand of an operator: also an operation on two registers or constants without
/// a call (`r + 1`, `r == s` inside `sext(found + (r == s))`). The C front-end's
/// expressions are mostly that deep, and a call per level cost more than its arithmetic.
#[inline(always)]
fn operand(e: &Expr, regs: &[Value]) -> Option<Value> {
    let leaf = |e: &Expr| match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        _ => None,
    };
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        // Both sides are read whatever the operator: neither can fault, so the
        // short-circuit of `&&` and `||` changes nothing here.
        Expr::Bin(op, a, b) => match (leaf(a), leaf(b)) {
            (Some(x), Some(y)) => op.eval(x, y),
            _ => eval_tree(e, regs),
        },
        _ => eval_tree(e, regs),
    }
}
