//! The syntax tree of the text format, as written (before lowering to the IR).

use fencer_ir::{BinOp, UnOp};

/// A byte range in the source. Spans always compare equal, so that two trees compare by
/// structure alone: the printer round-trip test parses printed text, whose spans differ.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}
impl Eq for Span {}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start, other.end.max(self.end))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ast {
    pub items: Vec<Item>,
    pub cond: Option<Cond>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Shared(Vec<SharedDecl>),
    Mutex(Vec<Ident>),
    Thread {
        name: Ident,
        body: Vec<Stmt>,
    },
    Func {
        name: Ident,
        params: Vec<Ident>,
        body: Vec<Stmt>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedDecl {
    pub name: Ident,
    /// `Some(n)` for an array `a[n]`.
    pub size: Option<u32>,
    pub init: Init,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Init {
    /// No initialiser: every cell is 0.
    Zero,
    /// `= v`: every cell is `v`.
    Scalar(i64),
    /// `= {v, ...}`: one value per cell.
    List(Vec<i64>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    Assign {
        lhs: Place,
        rhs: Rhs,
    },
    /// `fence;` (full) or `fence ss;` (store-store).
    Fence(fencer_ir::FenceKind),
    Assume(Expr),
    Assert(Expr),
    Lock(Ident),
    Unlock(Ident),
    /// `if (c1) {..} else if (c2) {..} ... else {..}`: the `else if` arms are kept in one
    /// list rather than nested, so that a chain of ten thousand arms is not ten thousand
    /// levels of recursion in every pass over the tree.
    If {
        arms: Vec<(Expr, Vec<Stmt>)>,
        els: Option<Vec<Stmt>>,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
    },
    Join(Expr),
    Return(Option<Expr>),
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
}

/// A name, optionally indexed: a register, a shared scalar, or an array cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub name: Ident,
    pub index: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rhs {
    Expr(Expr),
    Cas {
        place: Place,
        expected: Expr,
        new: Expr,
    },
    FetchAdd {
        place: Place,
        value: Expr,
    },
    Xchg {
        place: Place,
        value: Expr,
    },
    Spawn {
        func: Ident,
        arg: Option<Expr>,
    },
    Call {
        func: Ident,
        args: Vec<Expr>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// Non-negative: `-5` is `Un(Neg, Int(5))`.
    Int(i64),
    Bool(bool),
    Place(Place),
    /// `p.r1`: thread `p`'s register `r1`; only in final conditions.
    ThreadReg(Ident, Ident),
    Un(UnOp, Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

/// Dropping is iterative: the parser builds operator chains (`a + b + ... + z`) as trees
/// as deep as the chain is long, and the compiler's recursive drop of a tree twenty
/// thousand nodes deep overflows a 2 MiB thread stack.
impl Drop for Expr {
    fn drop(&mut self) {
        // The boxes move onto the stack as they are: unboxing would copy every node.
        #[allow(clippy::vec_box)]
        fn take(k: &mut ExprKind, out: &mut Vec<Box<Expr>>) {
            match std::mem::replace(k, ExprKind::Int(0)) {
                ExprKind::Un(_, a) => out.push(a),
                ExprKind::Bin(_, a, b) => {
                    out.push(a);
                    out.push(b);
                }
                ExprKind::Place(Place { index: Some(i), .. }) => out.push(i),
                _ => {}
            }
        }
        let leaf = |k: &ExprKind| match k {
            ExprKind::Un(..) | ExprKind::Bin(..) => false,
            ExprKind::Place(p) => p.index.is_none(),
            _ => true,
        };
        if leaf(&self.kind) {
            return;
        }
        let mut stack = Vec::new();
        take(&mut self.kind, &mut stack);
        while let Some(mut e) = stack.pop() {
            if !leaf(&e.kind) {
                take(&mut e.kind, &mut stack);
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondQuant {
    Exists,
    Forall,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cond {
    pub quant: CondQuant,
    pub expr: Expr,
    pub span: Span,
}
