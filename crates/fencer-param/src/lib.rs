//! The parameterized engine: a system of process-indexed arrays and global variables
//! (Cubicle's array-based systems), checked for every number of processes by backward
//! reachability over cubes, as MCMT and Cubicle do.
//!
//! A front-end lowers its language to [`System`]; the engine knows nothing of any syntax.
//! Process variables are numbered slots ([`ProcRef::Var`]); with a fixed number of processes
//! (`number_procs`) every process is a constant ([`ProcRef::Const`]) and the search is the
//! exact backward reachability of that one instance.

pub mod concrete;
pub mod domains;
pub mod fd;
pub mod formula;
pub mod pre;
pub mod search;
pub mod tso;

pub use formula::{Formula, Lin, Lit, Rel, Term};
pub use search::{check, Options, Outcome, Result, Step};

/// A process: a variable of a cube or transition, or a constant `#k+1` of a fixed instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProcRef {
    Var(u8),
    Const(u8),
}

/// A memory cell: a global (`idx` empty) or an array element; or a value chosen by a
/// nondeterministic assignment (`Fresh`, of the sort of global `.0`), existential in the
/// cube that mentions it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    Cell(u32, Vec<ProcRef>),
    Fresh(u32, u32),
    /// A process's identifier as a number: processes are ordered (`i < j`). A cell of
    /// sort `proc` in an arithmetic literal is the identifier it holds (`Turn < i`).
    Pid(ProcRef),
    /// Under TSO, the value a pending read event sees: the weak cell `.0[.1]` as thread
    /// `.2` reads it, `.3` counting that thread's pending reads of the cell from the
    /// latest one. Naming reads by their cell and thread lets process renamings rename
    /// them too (subsumption needs no separate event renaming).
    Read(u32, Vec<ProcRef>, ProcRef, u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sort {
    /// An enumeration: index into [`System::types`] (`bool` is one, `False | True`).
    Enum(u32),
    Proc,
    /// A type without constructors: unboundedly many values, only compared.
    Abstract,
    Int,
    Real,
}

impl Sort {
    pub fn arith(self) -> bool {
        matches!(self, Sort::Int | Sort::Real)
    }
}

#[derive(Clone, Debug)]
pub struct Global {
    pub name: String,
    pub sort: Sort,
    /// 0 for a variable, k for an array indexed by k processes.
    pub arity: u8,
    /// Shared memory under TSO (Cubicle-W's `weak`): accessed through read and write
    /// events, never as a cell of a cube.
    pub weak: bool,
}

/// One transition: `params` process parameters (slots `0..params`), a guard over them, the
/// `forall_other` guards (slot `params` is the other process), and updates, all applied at
/// once to the pre-state.
#[derive(Clone, Debug)]
pub struct Transition {
    pub name: String,
    pub params: u8,
    pub guard: Formula,
    pub forall_other: Vec<Formula>,
    pub updates: Vec<Update>,
    /// Where it is defined (1-based line), for traces.
    pub line: u32,
    /// Under TSO: the parameter slot of the thread that runs it (`[p]`), whose events its
    /// weak reads and writes are.
    pub thread: Option<u8>,
    /// Under TSO: `fence()` in the guard (the thread's buffer is empty when it runs).
    pub fence: bool,
}

/// `G[j1..jk] := case | c1 : r1 | ... | _ : default`, the index slots being
/// `params..params + arity` of the transition. A global variable has no index slots.
#[derive(Clone, Debug)]
pub struct Update {
    pub global: u32,
    pub cases: Vec<(Formula, Rhs)>,
    pub default: Rhs,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Rhs {
    /// A value of a non-arithmetic sort.
    Term(Term),
    /// A value of an arithmetic sort.
    Lin(Lin),
    /// `.`: any value.
    Nondet,
}

/// A formula over `vars` universally (`init`) or existentially and pairwise distinct
/// (`unsafe`, `invariant`) quantified process slots.
#[derive(Clone, Debug)]
pub struct Quantified {
    pub vars: u8,
    pub formula: Formula,
}

#[derive(Clone, Debug)]
pub struct System {
    /// Enumerations: name and constructors.
    pub types: Vec<(String, Vec<String>)>,
    pub globals: Vec<Global>,
    /// `number_procs`: the one instance to check, processes `Const(0..n)`.
    pub procs: Option<u8>,
    pub init: Quantified,
    pub unsafe_: Vec<Quantified>,
    /// Cubes the user asserts unreachable: they prune the search like visited nodes.
    pub invariants: Vec<Quantified>,
    pub transitions: Vec<Transition>,
    /// Cubicle-W's TSO semantics for the weak globals (else they are ordinary memory).
    pub tso: bool,
}

impl System {
    pub fn sort_of(&self, a: &Atom) -> Sort {
        match a {
            Atom::Cell(g, _) | Atom::Fresh(g, _) | Atom::Read(g, ..) => {
                self.globals[*g as usize].sort
            }
            Atom::Pid(_) => Sort::Int,
        }
    }

    /// The solver's sort for an atom; processes are finitely many in a fixed instance.
    pub fn smt_sort(&self, s: Sort, procs: Option<u8>) -> fencer_smt::Sort {
        match s {
            Sort::Enum(t) => fencer_smt::Sort::Finite(self.types[t as usize].1.len() as u32),
            Sort::Proc => match procs {
                Some(n) => fencer_smt::Sort::Finite(n as u32),
                None => fencer_smt::Sort::Infinite,
            },
            Sort::Abstract => fencer_smt::Sort::Infinite,
            Sort::Int => fencer_smt::Sort::Int,
            Sort::Real => fencer_smt::Sort::Real,
        }
    }
}
