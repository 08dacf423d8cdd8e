//! The input: a litmus-sized program whose memory events a `.cat` model judges.
//!
//! Threads are straight-line code with forward and backward jumps over registers; every
//! memory access carries the annotation tags the model reads as event sets (`RLX`, `ACQ`,
//! `X`, `MFENCE`, ...). Front-ends (C11 and X86 litmus tests) choose the tags; the engine
//! adds the sets every model assumes (`R`, `W`, `M`, `F`, `IW`, ...).

use std::fmt;

pub type Reg = u32;
pub type LocId = u32;

/// A value: an integer or the address of a location (litmus tests pass locations to
/// threads as pointers, and final states may show them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Val {
    Int(i64),
    Loc(LocId),
}

impl Val {
    pub fn truthy(self) -> bool {
        !matches!(self, Val::Int(0))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LAnd,
    LOr,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Val(Val),
    Reg(Reg),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn int(v: i64) -> Expr {
        Expr::Val(Val::Int(v))
    }
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }
}

/// How an update computes the value it writes from the value it read.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum UpdateOp {
    /// Writes the expression (exchange, and compare-and-swap's success).
    Set(Expr),
    /// Writes `old op expr` (fetch-and-add and friends).
    Apply(BinOp, Expr),
}

/// One instruction. `Instance` starts a new instruction instance: events of one instance
/// are not ordered by `po` (herd7 orders instructions, not the events inside one).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ins {
    Instance,
    Set {
        dst: Reg,
        expr: Expr,
    },
    Read {
        dst: Option<Reg>,
        addr: Expr,
        tags: Vec<String>,
    },
    Write {
        addr: Expr,
        value: Expr,
        tags: Vec<String>,
    },
    /// One event that both reads and writes (C11's read-modify-write). With `expected`,
    /// only executions where it reads that value exist (a successful compare-and-swap).
    Update {
        dst: Option<Reg>,
        addr: Expr,
        expected: Option<Expr>,
        op: UpdateOp,
        tags: Vec<String>,
    },
    Fence {
        tags: Vec<String>,
    },
    /// Jumps to `target` when the condition is not zero.
    Branch {
        cond: Expr,
        target: usize,
    },
    Jump(usize),
    /// Either falls through or jumps: both paths exist (a compare-and-swap that succeeds
    /// or fails).
    Choice(usize),
    /// The path exists only if the condition holds.
    Assume(Expr),
    /// The path stops here: a loop ran past its unrolling bound (herd7's `CutOff`).
    /// Candidates that take such a path are not judged, and the answer says so (`Loop`).
    CutOff,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    pub name: String,
    pub regs: Vec<String>,
    /// Registers' values at the start; missing ones are 0.
    pub init: Vec<(Reg, Val)>,
    pub code: Vec<Ins>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub name: String,
    pub init: Val,
}

/// What a final state lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Observable {
    Reg { thread: usize, reg: Reg },
    Loc(LocId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    pub locations: Vec<Location>,
    pub threads: Vec<Thread>,
    /// Tags of the initial writes (C: they are non-atomic).
    pub init_tags: Vec<String>,
    /// The architecture's tag names: each is a set the model may read, empty when no
    /// event carries it (herd7 defines every one of its architecture's sets).
    pub arch_sets: Vec<String>,
    pub observables: Vec<Observable>,
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::Loc(l) => write!(f, "&{l}"),
        }
    }
}
