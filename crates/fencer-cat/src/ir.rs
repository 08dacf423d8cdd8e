//! The model after name resolution: every variable is a slot of a frame (the model's top
//! level, a function or procedure activation, a `forall` iteration) or a name the
//! execution supplies. Built once by `compile`, run many times by `eval`.

use crate::ast::{DoTest, Op1, Sp, TestType};

pub(crate) type Slot = u32;

/// A tag and the enumeration that declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TagName {
    pub ty: String,
    pub name: String,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum VarRef {
    /// A slot of the frame `depth` levels up the lexical chain.
    Local { depth: u32, slot: Slot },
    /// A name bound by the execution or a primitive, index into `Program::ext`.
    Ext(u32),
}

/// How a `let` binds its value.
#[derive(Debug)]
pub(crate) enum Pat {
    One(Option<Slot>),
    /// `(x, y) = e`: the value goes to `whole`, the components are taken lazily.
    Tuple {
        whole: Slot,
        parts: Vec<Option<Slot>>,
    },
}

/// Parameters of a function or procedure, in the slots `0..` of its frame.
#[derive(Debug)]
pub(crate) struct Params {
    pub slots: Vec<Option<Slot>>,
    /// `f(x, y)`: the argument is destructured; otherwise bound whole to the one slot.
    pub tuple: bool,
}

#[derive(Debug)]
pub(crate) struct Bind {
    pub pat: Pat,
    pub expr: Expr,
    pub sp: Sp,
}

#[derive(Debug)]
pub(crate) struct Expr {
    pub kind: ExprKind,
    pub sp: Sp,
}

#[derive(Debug)]
pub(crate) enum ExprKind {
    /// `0`.
    EmptyRel,
    /// `_`.
    Unv,
    Tag(TagName),
    UndefTag(String),
    Var(VarRef, String),
    Op1(Op1, Box<Expr>),
    Union(Vec<Expr>),
    Seq(Vec<Expr>),
    Inter(Box<Expr>, Box<Expr>),
    /// `r & (a * b)`, which herd evaluates as a restriction.
    InterCart(Box<Expr>, Box<Expr>, Box<Expr>),
    Diff(Box<Expr>, Box<Expr>),
    Cartesian(Box<Expr>, Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Tuple(Vec<Expr>),
    ExplicitSet(Vec<Expr>),
    App(Box<Expr>, Box<Expr>),
    Let(Vec<Bind>, Box<Expr>),
    LetRec(Box<Rec>, Box<Expr>),
    Fun(Box<FunDef>),
    Match(Box<Expr>, Vec<(String, Expr)>, Option<Box<Expr>>),
    MatchSet(Box<Expr>, Box<Expr>, SetClause),
    Try(Box<Expr>, Box<Expr>),
    If(Box<Cond>, Box<Expr>, Box<Expr>),
}

#[derive(Debug)]
pub(crate) enum SetClause {
    EltRem(Option<Slot>, Option<Slot>, Box<Expr>),
    PreEltPost(Option<Slot>, Option<Slot>, Option<Slot>, Box<Expr>),
}

#[derive(Debug)]
pub(crate) enum Cond {
    Eq(Expr, Expr),
    Subset(Expr, Expr),
    In(Expr, Expr),
    Variant(VCond),
}

#[derive(Debug)]
pub(crate) enum VCond {
    /// A variant name, canonicalised at load time; `None` if herd knows no such variant.
    Var(Option<String>),
    Not(Box<VCond>),
    And(Box<VCond>, Box<VCond>),
    Or(Box<VCond>, Box<VCond>),
}

/// A `let rec`: functions bound once, values computed as a least fixpoint.
#[derive(Debug)]
pub(crate) struct Rec {
    pub funs: Vec<(Slot, FunDef)>,
    pub vals: Vec<Bind>,
    pub sp: Sp,
}

#[derive(Debug)]
pub(crate) struct FunDef {
    pub params: Params,
    pub frame_size: u32,
    pub body: Expr,
    pub name: String,
    /// Free names the execution must supply: herd fails when building the closure of a
    /// non-recursive function whose free variables are unbound.
    pub ext_free: Vec<(u32, Sp)>,
    /// A function herd's library defines that has a native implementation.
    pub native: Option<Native>,
}

/// Library functions run natively when their definition is herd's, token for token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Native {
    /// `cross` of `cross.cat`: every union of one relation from each set.
    Cross,
}

#[derive(Debug)]
pub(crate) struct ProcDef {
    pub params: Params,
    pub frame_size: u32,
    pub body: Vec<Instr>,
}

#[derive(Debug)]
pub(crate) struct Test {
    pub kind: TestType,
    pub negated: bool,
    pub test: DoTest,
    pub expr: Expr,
    pub name: Option<String>,
    /// The source text of the check, which names it when it has no `as`.
    pub text: String,
    pub sp: Sp,
}

impl Test {
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.text)
    }
}

#[derive(Debug)]
pub(crate) enum Instr {
    /// `stable`: a top-level binding whose value is the same in every branch of the
    /// `with`s before it, kept from one branch to the next rather than recomputed.
    Let {
        binds: Vec<Bind>,
        stable: bool,
    },
    Rec {
        rec: Box<Rec>,
        test: Option<Box<Test>>,
        stable: bool,
    },
    Test(Box<Test>),
    IfVariant(VCond, Vec<Instr>, Vec<Instr>),
    Match {
        scrut: Expr,
        clauses: Vec<(String, Vec<Instr>)>,
        default: Option<Vec<Instr>>,
        sp: Sp,
    },
    Procedure {
        slot: Slot,
        def: Box<ProcDef>,
    },
    Call {
        proc: VarRef,
        arg: Expr,
        name: String,
        tname: Option<String>,
        sp: Sp,
    },
    Enum {
        slot: Slot,
        name: String,
        tags: Vec<TagName>,
    },
    Forall {
        set: Expr,
        body: Vec<Instr>,
        frame_size: u32,
    },
    WithFrom {
        slot: Slot,
        set: Expr,
        /// Slots from here on belong to what follows the `with`: cleared for each branch
        /// (in the top-level frame, only those that depend on a branch: `reset`).
        reset_from: Slot,
        reset: Option<Vec<Slot>>,
        name: String,
    },
    /// An include that failed inside a conditional: herd reads an include only when it
    /// runs it, so this is an error only on the branches that reach it.
    Fail(Box<crate::CatError>),
    /// Joins the bindings of the branches of a conditional: `to` takes `from`'s value.
    Alias {
        to: Slot,
        from: VarRef,
    },
}
