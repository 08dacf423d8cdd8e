//! The syntax tree of a cat file, as herd's `AST.mli` defines it.

/// A byte range in one of the model's source files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sp {
    pub file: u32,
    pub start: u32,
    pub end: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op1 {
    Plus,
    Star,
    Opt,
    Comp,
    Inv,
    ToId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op2 {
    Union,
    Inter,
    Diff,
    Seq,
    Cartesian,
    Add,
    Tuple,
}

/// A pattern variable; `None` is `_`.
pub(crate) type Pat0 = Option<(String, Sp)>;

#[derive(Clone, Debug)]
pub(crate) enum Pat {
    Var(Pat0),
    Tuple(Vec<Pat0>),
}

#[derive(Clone, Debug)]
pub(crate) struct Binding {
    pub sp: Sp,
    pub pat: Pat,
    pub exp: Exp,
}

#[derive(Clone, Debug)]
pub(crate) enum SetClause {
    EltRem(Pat0, Pat0, Box<Exp>),
    PreEltPost(Pat0, Pat0, Pat0, Box<Exp>),
}

#[derive(Clone, Debug)]
pub(crate) enum VariantCond {
    Variant(String, Sp),
    Not(Box<VariantCond>),
    And(Box<VariantCond>, Box<VariantCond>),
    Or(Box<VariantCond>, Box<VariantCond>),
}

#[derive(Clone, Debug)]
pub(crate) enum Cond {
    Eq(Exp, Exp),
    Subset(Exp, Exp),
    In(Exp, Exp),
    Variant(VariantCond),
}

#[derive(Clone, Debug)]
pub(crate) enum Exp {
    /// `0`: the empty relation.
    EmptyRel(Sp),
    /// `_`: the universe.
    Universe(Sp),
    Tag(Sp, String),
    Var(Sp, String),
    Op1(Sp, Op1, Box<Exp>),
    Op(Sp, Op2, Vec<Exp>),
    App(Sp, Box<Exp>, Box<Exp>),
    Bind(Sp, Vec<Binding>, Box<Exp>),
    BindRec(Sp, Vec<Binding>, Box<Exp>),
    Fun(Sp, Pat, Box<Exp>, String),
    ExplicitSet(Sp, Vec<Exp>),
    Match(Sp, Box<Exp>, Vec<(String, Exp)>, Option<Box<Exp>>),
    MatchSet(Sp, Box<Exp>, Box<Exp>, SetClause),
    Try(Sp, Box<Exp>, Box<Exp>),
    If(Sp, Box<Cond>, Box<Exp>, Box<Exp>),
}

impl Exp {
    pub fn sp(&self) -> Sp {
        match self {
            Exp::EmptyRel(sp)
            | Exp::Universe(sp)
            | Exp::Tag(sp, _)
            | Exp::Var(sp, _)
            | Exp::Op1(sp, _, _)
            | Exp::Op(sp, _, _)
            | Exp::App(sp, _, _)
            | Exp::Bind(sp, _, _)
            | Exp::BindRec(sp, _, _)
            | Exp::Fun(sp, _, _, _)
            | Exp::ExplicitSet(sp, _)
            | Exp::Match(sp, _, _, _)
            | Exp::MatchSet(sp, _, _, _)
            | Exp::Try(sp, _, _)
            | Exp::If(sp, _, _, _) => *sp,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DoTest {
    Acyclic,
    Irreflexive,
    Empty,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestType {
    Check,
    UndefinedUnless,
    Flagged,
    Assert,
}

#[derive(Clone, Debug)]
pub(crate) struct AppTest {
    pub sp: Sp,
    /// `~acyclic` and the like.
    pub negated: bool,
    pub test: DoTest,
    pub exp: Exp,
    pub name: Option<String>,
}

#[derive(Clone, Debug)]
pub(crate) enum Ins {
    Let(Vec<Binding>),
    Rec(Sp, Vec<Binding>, Option<AppTest>),
    Match(Sp, Exp, Vec<(String, Vec<Ins>)>, Option<Vec<Ins>>),
    Test(AppTest, TestType),
    /// `show`, `unshow` and `debug` change only what herd draws or prints.
    Show,
    Include(Sp, String),
    Procedure {
        name: String,
        params: Pat,
        body: Vec<Ins>,
        is_rec: bool,
    },
    Call(Sp, String, Exp, Option<String>),
    Enum(String, Vec<String>),
    Forall((String, Sp), Exp, Vec<Ins>),
    WithFrom((String, Sp), Exp),
    /// Bell `instructions` and `default` declarations, ignored when running a model.
    Events,
    IfVariant(VariantCond, Vec<Ins>, Vec<Ins>),
}

/// A parsed file: its title (herd's identity line) and instructions.
#[derive(Clone, Debug)]
pub(crate) struct File {
    pub title: Vec<String>,
    /// The `catdep` option: the model computes dependencies itself.
    pub catdep: bool,
    pub body: Vec<Ins>,
}
