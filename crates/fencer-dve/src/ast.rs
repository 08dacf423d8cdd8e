//! The syntax tree of a DVE model, as written (names unresolved, constants unevaluated).

pub use fencer_text::ast::Span;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// 0..=255.
    Byte,
    /// -32768..=32767.
    Int,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Init {
    Scalar(Expr),
    /// `{a, b, c}` for an array.
    List(Vec<Expr>, Span),
}

/// `[const|input] byte|int name[size] = init`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarDecl {
    pub ty: Type,
    pub konst: bool,
    /// DiVinE 3's `input`: a constant the user may override (`-D name=value`).
    pub input: bool,
    pub name: Ident,
    pub size: Option<Expr>,
    pub init: Option<Init>,
}

/// `channel name`, `channel {byte,int} name[size]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChanDecl {
    pub name: Ident,
    /// The message's item types; empty for an untyped channel (no value, or one value).
    pub types: Vec<Type>,
    /// The buffer size: none or 0 is a rendezvous channel.
    pub size: Option<Expr>,
}

/// A process named in an expression: `P`, or a template's instance `a(1)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcRef {
    pub name: Ident,
    pub args: Option<Vec<Expr>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sync {
    /// `P->c`: a channel local to process `P`.
    pub owner: Option<ProcRef>,
    pub chan: Ident,
    /// `true` for `!` (send), `false` for `?` (receive).
    pub send: bool,
    /// Sent expressions, or the places a receive stores to.
    pub values: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assign {
    pub target: Expr,
    pub value: Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub from: Ident,
    pub to: Ident,
    pub guard: Option<Expr>,
    pub sync: Option<Sync>,
    pub effect: Vec<Assign>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Process {
    pub name: Ident,
    /// A template's parameters (DiVinE 3: `process p(key i, limit) { ... }`, instantiated
    /// by `process p(1, 2);`): (optional qualifier word, name).
    pub params: Option<Vec<(Option<Ident>, Ident)>>,
    /// DiVinE 3's `property process P { ... }`: the property automaton.
    pub property: bool,
    pub vars: Vec<VarDecl>,
    /// Channels local to the process (DiVinE 3).
    pub channels: Vec<ChanDecl>,
    pub states: Vec<Ident>,
    pub init: Option<Ident>,
    pub accept: Vec<Ident>,
    pub commit: Vec<Ident>,
    pub asserts: Vec<(Ident, Expr)>,
    pub trans: Vec<Transition>,
    pub span: Span,
}

/// `process p(1);`: an instance of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub template: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

/// DiVinE 3's `expression name(params) { expr }`: a named atomic proposition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: Ident,
    pub params: Vec<Ident>,
    pub body: Expr,
}

/// DiVinE 3's `property ltl NAME "formula"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LtlProperty {
    pub name: Ident,
    pub formula: String,
    pub span: Span,
}

/// DiVinE 3's `for (x : lo .. hi) { process p(x); ... }`: instances for each `x` in
/// `lo..=hi`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForLoop {
    pub var: Ident,
    pub from: Expr,
    pub to: Expr,
    pub body: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    For(ForLoop),
    Var(VarDecl),
    Chan(ChanDecl),
    Process(Process),
    Instance(Instance),
    Definition(Definition),
    Ltl(LtlProperty),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub items: Vec<Item>,
    /// `system async` (`false`) or `system sync` (`true`).
    pub synchronous: bool,
    /// `system async property P`: the property process (a Büchi automaton).
    pub property: Option<Ident>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Imply,
    Or,
    And,
    BitOr,
    BitXor,
    BitAnd,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Num(i64, Span),
    Bool(bool, Span),
    /// A variable or constant, with an index for arrays.
    Var(Ident, Option<Box<Expr>>),
    /// `P.s`: process `P` is in state `s`.
    InState(ProcRef, Ident),
    /// `P->x` (or `P->x[i]`): process `P`'s local variable.
    Remote(ProcRef, Ident, Option<Box<Expr>>),
    /// `name(args)`: a named expression (DiVinE 3's `expression`).
    Call(Ident, Vec<Expr>, Span),
    Unary(UnOp, Box<Expr>, Span),
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Num(_, s) | Expr::Bool(_, s) | Expr::Unary(_, _, s) | Expr::Call(_, _, s) => *s,
            Expr::Var(i, idx) => match idx {
                Some(e) => Span {
                    start: i.span.start,
                    end: e.span().end + 1,
                },
                None => i.span,
            },
            Expr::Remote(p, i, idx) => Span {
                start: p.name.span.start,
                end: idx.as_ref().map_or(i.span.end, |e| e.span().end + 1),
            },
            Expr::InState(p, s) => Span {
                start: p.name.span.start,
                end: s.span.end,
            },
            Expr::Binary(_, a, b) => Span {
                start: a.span().start,
                end: b.span().end,
            },
        }
    }
}
