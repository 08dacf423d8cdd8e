//! The syntax tree of a `.cub` file.

pub use fencer_text::ast::Span;

#[derive(Clone, Debug)]
pub struct File {
    pub number_procs: Option<(u32, Span)>,
    pub types: Vec<TypeDecl>,
    pub globals: Vec<GlobalDecl>,
    pub inits: Vec<Quant>,
    pub invariants: Vec<Quant>,
    pub unsafes: Vec<Quant>,
    pub predicates: Vec<Predicate>,
    pub transitions: Vec<TransitionDecl>,
}

impl File {
    /// Whether the file declares weak (shared-memory) variables: a Cubicle-W model.
    pub fn has_weak(&self) -> bool {
        self.globals.iter().any(|g| g.weak)
    }
}

#[derive(Clone, Debug)]
pub struct TypeDecl {
    pub name: String,
    pub constructors: Vec<(String, Span)>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalKind {
    Var,
    Array,
    Const,
}

#[derive(Clone, Debug)]
pub struct GlobalDecl {
    pub name: String,
    pub kind: GlobalKind,
    pub weak: bool,
    /// Index sorts (`proc` each).
    pub arity: u8,
    pub sort: (String, Span),
    pub span: Span,
}

/// `init (x y) { f }`, `unsafe (x y) { f }`, `invariant (x) { f }`.
#[derive(Clone, Debug)]
pub struct Quant {
    pub vars: Vec<(String, Span)>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Predicate {
    pub name: String,
    pub params: Vec<(String, Span)>,
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct TransitionDecl {
    pub name: String,
    /// Parameters; `true` marks Cubicle-W's thread parameter `[p]`.
    pub params: Vec<(String, bool, Span)>,
    pub requires: Option<Expr>,
    pub actions: Vec<Action>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ProcArg {
    Var(String, Span),
    Const(u32, Span),
}

impl ProcArg {
    pub fn span(&self) -> Span {
        match self {
            ProcArg::Var(_, s) | ProcArg::Const(_, s) => *s,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Action {
    pub target: String,
    pub index: Vec<ProcArg>,
    pub rhs: Rhs,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Rhs {
    Expr(Expr),
    Nondet(Span),
    /// Branches (condition, value); `None` is `_`. Without `_`, a cell that no branch
    /// matches keeps its value.
    Case(Vec<(Option<Expr>, Rhs)>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug)]
pub enum Expr {
    /// A capitalised name: a global, a constructor, `True`, `False`.
    Upper(String, Span),
    /// A lower-case name: a process variable.
    Lower(String, Span),
    Index(String, Vec<ProcArg>, Span),
    ProcConst(u32, Span),
    Int(i64, Span),
    Real(i64, Span),
    Add(Box<Expr>, Box<Expr>, Span),
    Sub(Box<Expr>, Box<Expr>, Span),
    Neg(Box<Expr>, Span),
    Mul(i64, Box<Expr>, Span),
    /// `p @ X`: `X` as thread `p` reads it.
    At(ProcArg, Box<Expr>, Span),
    Cmp(Box<Expr>, CmpOp, Box<Expr>, Span),
    And(Vec<Expr>, Span),
    Or(Vec<Expr>, Span),
    Not(Box<Expr>, Span),
    ForallOther(String, Box<Expr>, Span),
    Fence(Span),
    Call(String, Vec<ProcArg>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Upper(_, s)
            | Expr::Lower(_, s)
            | Expr::Index(_, _, s)
            | Expr::ProcConst(_, s)
            | Expr::Int(_, s)
            | Expr::Real(_, s)
            | Expr::Add(_, _, s)
            | Expr::Sub(_, _, s)
            | Expr::Neg(_, s)
            | Expr::Mul(_, _, s)
            | Expr::At(_, _, s)
            | Expr::Cmp(_, _, _, s)
            | Expr::And(_, s)
            | Expr::Or(_, s)
            | Expr::Not(_, s)
            | Expr::ForallOther(_, _, s)
            | Expr::Fence(s)
            | Expr::Call(_, _, s) => *s,
        }
    }
}
