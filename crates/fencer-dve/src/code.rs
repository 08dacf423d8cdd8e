//! Guards and effects compiled to closures over the state vector, for the successor
//! generator's hot path. The tree walk of `run.rs` (`System::eval`) stays the reference:
//! it matched every operator and operand kind at every node of every evaluation; here
//! that choice is made once, when the model is loaded, and each node is a closure
//! specialised for its operator and for the shape of its operands (a variable of either
//! width, a constant, an array element at a variable index with its range check, or any
//! other expression), so `x < 4` or `pos[k] < j` is one call without a branch on kinds.
//!
//! A compiled expression only says *that* it failed (`None`): division by zero, an index
//! out of range. The message and its place come from evaluating the same guard or
//! assignment again with the reference evaluator (`run.rs`), which fails the same way by
//! construction; that happens once per error, off the hot path. Assignments check that
//! the value fits its variable's type exactly where `run.rs` does (after the value and
//! the index are computed, before anything is written), so a failed effect leaves the
//! vector as the reference would have at that point.

use crate::ast::{BinOp, Type, UnOp};
use crate::sem::{binop_inline, CExpr, Place, System, Var};

/// An expression: its value in a state, `None` when it fails (see the module comment).
pub(crate) type Ev = Box<dyn Fn(&[u8]) -> Option<i32> + Send + Sync>;

/// One assignment of an effect: `Err(())` when its value, its index or its range check
/// fails (nothing is written then).
type Asg = Box<dyn Fn(&mut [u8]) -> Result<(), ()> + Send + Sync>;

/// A transition, compiled.
pub(crate) struct TCode {
    pub(crate) guard: Option<Ev>,
    /// Whether it uses no channel: its successor is its effect alone.
    pub(crate) plain: bool,
    /// The assignments in order; `Err(k)`: assignment `k` failed (the ones before it are
    /// done).
    assigns: Vec<Asg>,
    /// The control state it leads to, and where that is stored.
    to: i32,
    state_var: Var,
}

impl TCode {
    /// Runs the effect and moves the control state; `Err(k)` if assignment `k` fails.
    #[inline]
    pub(crate) fn effect(&self, s: &mut [u8]) -> Result<(), usize> {
        for (k, a) in self.assigns.iter().enumerate() {
            if a(s).is_err() {
                return Err(k);
            }
        }
        put(s, self.state_var, self.to);
        Ok(())
    }
}

/// The compiled model: per process, per transition.
pub(crate) struct Code {
    pub(crate) trans: Vec<Vec<TCode>>,
    /// Whether some process other than the property has a committed state: if none does,
    /// no state needs the committed check.
    pub(crate) any_commit: bool,
}

impl std::fmt::Debug for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Code({} processes)", self.trans.len())
    }
}

impl Code {
    /// Nothing compiled yet (while a `System` is being built).
    pub(crate) fn empty() -> Code {
        Code {
            trans: Vec::new(),
            any_commit: false,
        }
    }

    pub(crate) fn new(sys: &System) -> Code {
        let trans = sys
            .processes
            .iter()
            .map(|p| {
                p.trans
                    .iter()
                    .map(|t| TCode {
                        guard: t.guard.as_ref().map(|g| compile(sys, g)),
                        plain: t.sync.is_none(),
                        assigns: t
                            .effect
                            .iter()
                            .map(|(place, e)| assign(sys, place, e))
                            .collect(),
                        to: t.to as i32,
                        state_var: p.state_var,
                    })
                    .collect()
            })
            .collect();
        let any_commit = sys
            .processes
            .iter()
            .any(|p| !p.property && p.commit.iter().any(|&c| c));
        Code { trans, any_commit }
    }
}

#[inline(always)]
fn get(s: &[u8], v: Var) -> i32 {
    let at = v.offset as usize;
    match v.ty {
        Type::Byte => s[at] as i32,
        Type::Int => i16::from_le_bytes([s[at], s[at + 1]]) as i32,
    }
}

#[inline(always)]
fn put(s: &mut [u8], v: Var, x: i32) {
    let at = v.offset as usize;
    match v.ty {
        Type::Byte => s[at] = x as u8,
        Type::Int => s[at..at + 2].copy_from_slice(&(x as i16).to_le_bytes()),
    }
}

/// An operand, evaluated inline by the closure that uses it.
trait Get: Send + Sync + 'static {
    fn get(&self, s: &[u8]) -> Option<i32>;
}

/// A constant.
struct K(i32);
/// A `byte` variable at this offset.
struct B(usize);
/// An `int` variable at this offset.
struct W(usize);
/// Whether the control state (a byte at this offset) is this one: `P.s`.
struct S(usize, i32);
/// Any other expression.
struct D(Ev);

impl Get for K {
    #[inline(always)]
    fn get(&self, _: &[u8]) -> Option<i32> {
        Some(self.0)
    }
}
impl Get for B {
    #[inline(always)]
    fn get(&self, s: &[u8]) -> Option<i32> {
        Some(s[self.0] as i32)
    }
}
impl Get for W {
    #[inline(always)]
    fn get(&self, s: &[u8]) -> Option<i32> {
        Some(i16::from_le_bytes([s[self.0], s[self.0 + 1]]) as i32)
    }
}
impl Get for S {
    #[inline(always)]
    fn get(&self, s: &[u8]) -> Option<i32> {
        Some((s[self.0] as i32 == self.1) as i32)
    }
}
impl Get for D {
    #[inline(always)]
    fn get(&self, s: &[u8]) -> Option<i32> {
        (self.0)(s)
    }
}

/// An expression as the operand it is best evaluated as.
enum Opnd {
    K(i32),
    B(usize),
    W(usize),
    S(usize, i32),
    D(Ev),
}

fn opnd(sys: &System, e: &CExpr) -> Opnd {
    match e {
        CExpr::Const(c) => Opnd::K(*c),
        CExpr::Load(v) => match v.ty {
            Type::Byte => Opnd::B(v.offset as usize),
            Type::Int => Opnd::W(v.offset as usize),
        },
        CExpr::InState { proc, state } => {
            let v = sys.processes[*proc].state_var;
            match v.ty {
                Type::Byte => Opnd::S(v.offset as usize, *state as i32),
                Type::Int => Opnd::D(compile(sys, e)),
            }
        }
        e => Opnd::D(compile(sys, e)),
    }
}

/// A scalar variable's operand.
fn var_opnd(v: Var) -> Opnd {
    match v.ty {
        Type::Byte => Opnd::B(v.offset as usize),
        Type::Int => Opnd::W(v.offset as usize),
    }
}

impl Opnd {
    fn into_ev(self) -> Ev {
        match self {
            Opnd::K(c) => Box::new(move |_| Some(c)),
            Opnd::B(o) => Box::new(move |s| Some(s[o] as i32)),
            Opnd::W(o) => Box::new(move |s| W(o).get(s)),
            Opnd::S(o, q) => Box::new(move |s| S(o, q).get(s)),
            Opnd::D(f) => f,
        }
    }
}

// Operator codes for the const-generic closures (`BinOp` cannot be a const parameter).
const IMPLY: u8 = 0;
const OR: u8 = 1;
const AND: u8 = 2;
const BITOR: u8 = 3;
const BITXOR: u8 = 4;
const BITAND: u8 = 5;
const EQ: u8 = 6;
const NE: u8 = 7;
const LT: u8 = 8;
const LE: u8 = 9;
const GT: u8 = 10;
const GE: u8 = 11;
const SHL: u8 = 12;
const SHR: u8 = 13;
const ADD: u8 = 14;
const SUB: u8 = 15;
const MUL: u8 = 16;
const DIV: u8 = 17;
const REM: u8 = 18;

#[inline(always)]
const fn op_of(code: u8) -> BinOp {
    match code {
        IMPLY => BinOp::Imply,
        OR => BinOp::Or,
        AND => BinOp::And,
        BITOR => BinOp::BitOr,
        BITXOR => BinOp::BitXor,
        BITAND => BinOp::BitAnd,
        EQ => BinOp::Eq,
        NE => BinOp::Ne,
        LT => BinOp::Lt,
        LE => BinOp::Le,
        GT => BinOp::Gt,
        GE => BinOp::Ge,
        SHL => BinOp::Shl,
        SHR => BinOp::Shr,
        ADD => BinOp::Add,
        SUB => BinOp::Sub,
        MUL => BinOp::Mul,
        DIV => BinOp::Div,
        _ => BinOp::Rem,
    }
}

/// `a OP b`: the operator is a constant of the closure, so `binop_inline` folds to it.
fn bin<const OP: u8, A: Get, C: Get>(a: A, b: C) -> Ev {
    Box::new(move |s| binop_inline(op_of(OP), a.get(s)?, b.get(s)?))
}

/// `bin` for the operand shapes at hand: every pair of leaf kinds and `D`.
fn bin_shaped<const OP: u8>(a: Opnd, b: Opnd) -> Ev {
    macro_rules! right {
        ($x:expr) => {
            match b {
                Opnd::K(c) => bin::<OP, _, _>($x, K(c)),
                Opnd::B(y) => bin::<OP, _, _>($x, B(y)),
                Opnd::W(y) => bin::<OP, _, _>($x, W(y)),
                Opnd::S(y, q) => bin::<OP, _, _>($x, S(y, q)),
                Opnd::D(g) => bin::<OP, _, _>($x, D(g)),
            }
        };
    }
    match a {
        Opnd::K(c) => right!(K(c)),
        Opnd::B(x) => right!(B(x)),
        Opnd::W(x) => right!(W(x)),
        Opnd::S(x, q) => right!(S(x, q)),
        Opnd::D(f) => right!(D(f)),
    }
}

fn binary(op: BinOp, a: Opnd, b: Opnd) -> Ev {
    // `and`, `or` and `imply` skip their right side when the left decides (a guard
    // `i < N and a[i] == 0` must not fail on the index), as `run.rs` does.
    match op {
        BinOp::And => logic::<AND>(Side::D(a.into_ev()), Side::D(b.into_ev())),
        BinOp::Or => logic::<OR>(Side::D(a.into_ev()), Side::D(b.into_ev())),
        BinOp::Imply => logic::<IMPLY>(Side::D(a.into_ev()), Side::D(b.into_ev())),
        BinOp::BitOr => bin_shaped::<BITOR>(a, b),
        BinOp::BitXor => bin_shaped::<BITXOR>(a, b),
        BinOp::BitAnd => bin_shaped::<BITAND>(a, b),
        BinOp::Eq => bin_shaped::<EQ>(a, b),
        BinOp::Ne => bin_shaped::<NE>(a, b),
        BinOp::Lt => bin_shaped::<LT>(a, b),
        BinOp::Le => bin_shaped::<LE>(a, b),
        BinOp::Gt => bin_shaped::<GT>(a, b),
        BinOp::Ge => bin_shaped::<GE>(a, b),
        BinOp::Shl => bin_shaped::<SHL>(a, b),
        BinOp::Shr => bin_shaped::<SHR>(a, b),
        BinOp::Add => bin_shaped::<ADD>(a, b),
        BinOp::Sub => bin_shaped::<SUB>(a, b),
        BinOp::Mul => bin_shaped::<MUL>(a, b),
        BinOp::Div => bin_shaped::<DIV>(a, b),
        BinOp::Rem => bin_shaped::<REM>(a, b),
    }
}

/// `x OP c` for a `byte` variable at offset `x`, as an operand: a comparison of a variable
/// with a constant inside `and`/`or` (`k < N and ...`) is evaluated inline, not called.
struct Cmp<const OP: u8>(usize, i32);

impl<const OP: u8> Get for Cmp<OP> {
    #[inline(always)]
    fn get(&self, s: &[u8]) -> Option<i32> {
        binop_inline(op_of(OP), s[self.0] as i32, self.1)
    }
}

/// A side of `and`, `or`, `imply`: a byte variable against a constant under a comparison
/// (the operator, the offset, the constant), or anything else.
enum Side {
    C(BinOp, usize, i32),
    D(Ev),
}

/// `e` as a side of a logical operator.
fn side(sys: &System, e: &CExpr) -> Side {
    match e {
        CExpr::VarConst(
            op @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
            x,
            c,
        ) if x.ty == Type::Byte => Side::C(*op, x.offset as usize, *c),
        e => Side::D(compile(sys, e)),
    }
}

/// `a L b` for a logical operator `L`, the right side evaluated only when needed.
fn logic_of<const L: u8, A: Get, C: Get>(a: A, b: C) -> Ev {
    Box::new(move |s| {
        let x = a.get(s)?;
        Some(match L {
            AND => x != 0 && b.get(s)? != 0,
            OR => x != 0 || b.get(s)? != 0,
            _ => x == 0 || b.get(s)? != 0,
        } as i32)
    })
}

/// Runs `$body` with `$x` bound to the `Cmp` of a comparison operator `$op`.
macro_rules! with_cmp {
    ($op:expr, $o:expr, $c:expr, |$x:ident| $body:expr) => {
        match $op {
            BinOp::Eq => {
                let $x = Cmp::<EQ>($o, $c);
                $body
            }
            BinOp::Ne => {
                let $x = Cmp::<NE>($o, $c);
                $body
            }
            BinOp::Lt => {
                let $x = Cmp::<LT>($o, $c);
                $body
            }
            BinOp::Le => {
                let $x = Cmp::<LE>($o, $c);
                $body
            }
            BinOp::Gt => {
                let $x = Cmp::<GT>($o, $c);
                $body
            }
            _ => {
                let $x = Cmp::<GE>($o, $c);
                $body
            }
        }
    };
}

fn logic<const L: u8>(a: Side, b: Side) -> Ev {
    match (a, b) {
        (Side::C(p, o, c), Side::C(q, o2, c2)) => {
            with_cmp!(p, o, c, |x| with_cmp!(q, o2, c2, |y| logic_of::<L, _, _>(
                x, y
            )))
        }
        (Side::C(p, o, c), Side::D(g)) => with_cmp!(p, o, c, |x| logic_of::<L, _, _>(x, D(g))),
        (Side::D(f), Side::C(q, o, c)) => with_cmp!(q, o, c, |y| logic_of::<L, _, _>(D(f), y)),
        (Side::D(f), Side::D(g)) => logic_of::<L, _, _>(D(f), D(g)),
    }
}

/// Element `k` of array `v`, `None` when `k` is out of range.
#[inline(always)]
fn element(s: &[u8], v: Var, len: i32, k: i32) -> Option<i32> {
    if !(0..len).contains(&k) {
        return None;
    }
    let at = v.offset as usize + k as usize * v.ty.width() as usize;
    Some(match v.ty {
        Type::Byte => s[at] as i32,
        Type::Int => i16::from_le_bytes([s[at], s[at + 1]]) as i32,
    })
}

fn index_ev<I: Get>(v: Var, i: I) -> Ev {
    let len = v.len.unwrap_or(1) as i32;
    match v.ty {
        Type::Byte => {
            let base = v.offset as usize;
            Box::new(move |s| {
                let k = i.get(s)?;
                if !(0..len).contains(&k) {
                    return None;
                }
                Some(s[base + k as usize] as i32)
            })
        }
        Type::Int => Box::new(move |s| element(s, v, len, i.get(s)?)),
    }
}

/// Compiles `e` (see the module comment).
pub(crate) fn compile(sys: &System, e: &CExpr) -> Ev {
    match e {
        CExpr::Const(c) => {
            let c = *c;
            Box::new(move |_| Some(c))
        }
        CExpr::Load(v) => var_opnd(*v).into_ev(),
        CExpr::Index(v, i, _) => match opnd(sys, i) {
            Opnd::K(k) => index_ev(*v, K(k)),
            Opnd::B(o) => index_ev(*v, B(o)),
            Opnd::W(o) => index_ev(*v, W(o)),
            Opnd::S(o, q) => index_ev(*v, S(o, q)),
            Opnd::D(f) => index_ev(*v, D(f)),
        },
        CExpr::InState { proc, state } => {
            let (v, q) = (sys.processes[*proc].state_var, *state as i32);
            match v.ty {
                Type::Byte => {
                    let o = v.offset as usize;
                    Box::new(move |s| Some((s[o] as i32 == q) as i32))
                }
                Type::Int => Box::new(move |s| Some((get(s, v) == q) as i32)),
            }
        }
        // `not (a < b)` is `a >= b`: one closure fewer (both evaluate both sides).
        CExpr::Unary(op, a) => {
            if *op == UnOp::Not {
                if let Some((op, x, y)) = negated(sys, a) {
                    return binary(op, x, y);
                }
            }
            let a = compile(sys, a);
            match op {
                UnOp::Neg => Box::new(move |s| Some(a(s)?.wrapping_neg())),
                UnOp::Not => Box::new(move |s| Some((a(s)? == 0) as i32)),
                UnOp::BitNot => Box::new(move |s| Some(!a(s)?)),
            }
        }
        CExpr::Binary(BinOp::And, a, b, _) => logic::<AND>(side(sys, a), side(sys, b)),
        CExpr::Binary(BinOp::Or, a, b, _) => logic::<OR>(side(sys, a), side(sys, b)),
        CExpr::Binary(BinOp::Imply, a, b, _) => logic::<IMPLY>(side(sys, a), side(sys, b)),
        CExpr::Binary(op, a, b, _) => binary(*op, opnd(sys, a), opnd(sys, b)),
        CExpr::VarConst(op, x, c) => binary(*op, var_opnd(*x), Opnd::K(*c)),
        CExpr::VarVar(op, x, y) => binary(*op, var_opnd(*x), var_opnd(*y)),
    }
}

/// `not e` for a comparison `e`: the inverse comparison and its operands.
fn negated(sys: &System, e: &CExpr) -> Option<(BinOp, Opnd, Opnd)> {
    let flip = |op: BinOp| match op {
        BinOp::Eq => Some(BinOp::Ne),
        BinOp::Ne => Some(BinOp::Eq),
        BinOp::Lt => Some(BinOp::Ge),
        BinOp::Ge => Some(BinOp::Lt),
        BinOp::Le => Some(BinOp::Gt),
        BinOp::Gt => Some(BinOp::Le),
        _ => None,
    };
    match e {
        CExpr::Binary(op, a, b, _) => Some((flip(*op)?, opnd(sys, a), opnd(sys, b))),
        CExpr::VarConst(op, x, c) => Some((flip(*op)?, var_opnd(*x), Opnd::K(*c))),
        CExpr::VarVar(op, x, y) => Some((flip(*op)?, var_opnd(*x), var_opnd(*y))),
        _ => None,
    }
}

/// Whether every value of `o` fits type `ty` without a check.
fn always_fits(o: &Opnd, ty: Type) -> bool {
    match (o, ty) {
        (Opnd::K(c), ty) => ty.fits(*c),
        (Opnd::B(_) | Opnd::S(..), _) => true,
        (Opnd::W(_), Type::Int) => true,
        _ => false,
    }
}

#[inline(always)]
fn fits(ty: Type, v: i32) -> bool {
    match ty {
        Type::Byte => (v as u32) < 256,
        Type::Int => v as i16 as i32 == v,
    }
}

fn store_scalar<V: Get, const CHECK: bool>(var: Var, v: V) -> Asg {
    match var.ty {
        Type::Byte => {
            let o = var.offset as usize;
            Box::new(move |s| {
                let x = v.get(s).ok_or(())?;
                if CHECK && !fits(Type::Byte, x) {
                    return Err(());
                }
                s[o] = x as u8;
                Ok(())
            })
        }
        Type::Int => Box::new(move |s| {
            let x = v.get(s).ok_or(())?;
            if CHECK && !fits(Type::Int, x) {
                return Err(());
            }
            put(s, var, x);
            Ok(())
        }),
    }
}

fn scalar_shaped<const CHECK: bool>(var: Var, v: Opnd) -> Asg {
    match v {
        Opnd::K(c) => store_scalar::<_, CHECK>(var, K(c)),
        Opnd::B(o) => store_scalar::<_, CHECK>(var, B(o)),
        Opnd::W(o) => store_scalar::<_, CHECK>(var, W(o)),
        Opnd::S(o, q) => store_scalar::<_, CHECK>(var, S(o, q)),
        Opnd::D(f) => store_scalar::<_, CHECK>(var, D(f)),
    }
}

fn store_element<V: Get, I: Get>(var: Var, i: I, v: V) -> Asg {
    let len = var.len.unwrap_or(1) as i32;
    let w = var.ty.width() as usize;
    Box::new(move |s| {
        // The value first, then the index, as `run.rs` computes them.
        let x = v.get(s).ok_or(())?;
        let k = i.get(s).ok_or(())?;
        if !(0..len).contains(&k) || !fits(var.ty, x) {
            return Err(());
        }
        let at = Var {
            offset: var.offset + (k as usize * w) as u32,
            ty: var.ty,
            len: None,
        };
        put(s, at, x);
        Ok(())
    })
}

/// Compiles `place = e`.
fn assign(sys: &System, place: &Place, e: &CExpr) -> Asg {
    let v = opnd(sys, e);
    match place {
        Place::Scalar(var) => {
            if always_fits(&v, var.ty) {
                scalar_shaped::<false>(*var, v)
            } else {
                scalar_shaped::<true>(*var, v)
            }
        }
        Place::Element(var, i, _) => {
            let i = opnd(sys, i);
            match (i, v) {
                (Opnd::B(k), Opnd::K(c)) => store_element(*var, B(k), K(c)),
                (Opnd::B(k), Opnd::B(o)) => store_element(*var, B(k), B(o)),
                (Opnd::B(k), v) => store_element(*var, B(k), D(v.into_ev())),
                (i, Opnd::K(c)) => store_element(*var, D(i.into_ev()), K(c)),
                (i, v) => store_element(*var, D(i.into_ev()), D(v.into_ev())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so that a failure names its seed.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const MODEL: &str = "byte x = 3; int y = -2; byte a[3] = {1, 0, 2}; int b[2] = {300, -7};
process P { byte z; state s, t; init s; trans s -> t {}; }
system async;";

    /// A random expression over the model's variables: every operator, constants that
    /// make divisions by zero, indices out of range and overflows likely.
    fn expr(r: &mut Rng, depth: u32) -> String {
        const LEAVES: &[&str] = &[
            "x", "y", "P->z", "0", "1", "2", "3", "-1", "255", "256", "32767", "P.t",
        ];
        const OPS: &[&str] = &[
            "+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "imply", "and",
            "or", "&", "|", "^", "<<", ">>",
        ];
        if depth == 0 || r.below(4) == 0 {
            return match r.below(5) {
                0 => format!("a[{}]", expr(r, depth.saturating_sub(1))),
                1 => format!("b[{}]", expr(r, depth.saturating_sub(1))),
                _ => LEAVES[r.below(LEAVES.len())].to_string(),
            };
        }
        match r.below(8) {
            0 => format!("-({})", expr(r, depth - 1)),
            1 => format!("not ({})", expr(r, depth - 1)),
            2 => format!("~({})", expr(r, depth - 1)),
            _ => format!(
                "({}) {} ({})",
                expr(r, depth - 1),
                OPS[r.below(OPS.len())],
                expr(r, depth - 1)
            ),
        }
    }

    fn state(r: &mut Rng, sys: &System) -> Vec<u8> {
        let mut s = sys.initial.clone();
        // Small values mostly (valid indices, zero divisors), sometimes anything; the
        // error flag stays clear.
        for b in s.iter_mut().take(sys.error_var.offset as usize) {
            *b = if r.below(3) == 0 {
                r.next() as u8
            } else {
                r.below(4) as u8
            };
        }
        s
    }

    #[test]
    fn compiled_expressions_agree_with_the_tree_evaluator() {
        let sys = crate::load("t.dve", MODEL, &Default::default()).expect("loads");
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut failed, mut total) = (0, 0);
        for seed in 0..3000 {
            let src = expr(&mut r, 4);
            let e = sys.expression("e", &src).expect("compiles");
            let f = compile(&sys, &e);
            for _ in 0..20 {
                let s = state(&mut r, &sys);
                let want = sys.eval(&e, &s).ok();
                assert_eq!(f(&s), want, "seed {seed}: `{src}` in {s:?}");
                failed += want.is_none() as u32;
                total += 1;
            }
        }
        // Both outcomes are exercised.
        assert!(
            failed > total / 20 && failed < total * 9 / 10,
            "{failed} of {total}"
        );
    }

    #[test]
    fn compiled_effects_agree_with_the_tree_evaluator() {
        let mut r = Rng(0x2545_f491_4f6c_dd1d);
        let targets = ["x", "y", "a[x]", "b[z]", "a[1]", "b[0]", "z"];
        let mut failed = 0;
        for seed in 0..600 {
            let n = 1 + r.below(3);
            let effect: Vec<String> = (0..n)
                .map(|_| {
                    let t = targets[r.below(targets.len())];
                    format!("{t} = {}", expr(&mut r, 2))
                })
                .collect();
            let src = MODEL.replace(
                "s -> t {}",
                &format!("s -> t {{ effect {}; }}", effect.join(", ")),
            );
            let sys = crate::load("t.dve", &src, &Default::default()).expect("loads");
            let tr = &sys.processes[0].trans[0];
            for _ in 0..20 {
                let s = state(&mut r, &sys);
                // The reference: each assignment with the tree evaluator, in order.
                let mut want = s.clone();
                let mut want_err = None;
                for (k, (place, e)) in tr.effect.iter().enumerate() {
                    let done = sys
                        .eval(e, &want)
                        .and_then(|v| sys.assign(place, v, &mut want, tr.span));
                    if done.is_err() {
                        want_err = Some(k);
                        break;
                    }
                }
                if want_err.is_none() {
                    crate::sem::store(&mut want, sys.processes[0].state_var, 0, tr.to as i32);
                }
                let mut got = s.clone();
                let got_err = sys.code.trans[0][0].effect(&mut got).err();
                assert_eq!(got_err, want_err, "seed {seed}: {effect:?} in {s:?}");
                assert_eq!(got, want, "seed {seed}: {effect:?} in {s:?}");
                failed += want_err.is_some() as u32;
            }
        }
        assert!(failed > 100, "{failed}");
    }
}
