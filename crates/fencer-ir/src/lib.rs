//! The program IR: the one representation every front-end produces and every engine consumes.
//!
//! Design points (see docs/design/ir.md for the why):
//! - Memory is a set of *objects* (globals now, heap objects at run time), each a row of
//!   word-sized cells. An address is an object and a cell offset; a pointer value encodes
//!   both in one `i64` (see [`Ptr`]), so registers and memory hold plain integers.
//! - Expressions are local: they read registers and constants only. Every access to shared
//!   memory is an instruction of its own, so engines see each memory event explicitly.
//! - Code is a flat list of instructions per function with explicit jumps; threads run
//!   functions with one argument, and can spawn and join other threads at run time.
//! - Every instruction carries a source location.

use std::fmt;

pub mod barrier;
pub mod inputs;
pub mod simplify;
pub mod spin;

/// Every value the machine handles: integers, booleans (0/1) and encoded pointers.
pub type Value = i64;

/// Index of a register in a function frame.
pub type Reg = u32;
/// Index of a function in [`Program::functions`].
pub type FuncId = u32;
/// Index of a memory object in [`Program::objects`] (globals); heap objects follow them.
pub type ObjId = u32;

/// A source position: file (index into [`Program::files`]), 1-based line and column.
#[derive(
    serde::Serialize,
    serde::Deserialize,
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
)]
pub struct SrcLoc {
    pub file: u16,
    pub line: u32,
    pub col: u32,
}

impl SrcLoc {
    pub const NONE: SrcLoc = SrcLoc {
        file: 0,
        line: 0,
        col: 0,
    };
    pub fn new(file: u16, line: u32, col: u32) -> Self {
        SrcLoc { file, line, col }
    }
}

/// Most cells an object may have: the pointer encoding below has 32 bits of offset, and
/// the offset one past the end must still encode.
pub const MAX_CELLS: i64 = u32::MAX as i64;

/// Pointer encoding: object `o` at cell offset `k` is `((o + 1) << 32) | k`, so that the
/// integer 0 is the null pointer and small integers are never valid pointers.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ptr {
    pub obj: ObjId,
    pub offset: u32,
}

impl Ptr {
    pub fn encode(self) -> Value {
        (((self.obj as i64) + 1) << 32) | self.offset as i64
    }
    /// Decodes a value as a pointer; `None` for null and for integers that are not pointers.
    pub fn decode(v: Value) -> Option<Ptr> {
        let hi = v >> 32;
        if hi <= 0 || hi > u32::MAX as i64 {
            return None;
        }
        Some(Ptr {
            obj: (hi - 1) as u32,
            offset: (v & 0xffff_ffff) as u32,
        })
    }
}

/// Functions have addresses too (C function pointers): function `f` is the pointer to
/// offset 0 of object `FUNC_BASE + f`, far above any object a program can have, so that
/// reading or writing through it is an invalid-address error and comparing it is exact.
pub const FUNC_BASE: ObjId = 1 << 30;

/// The address of function `f` as a value.
pub fn func_ptr(f: FuncId) -> Value {
    Ptr {
        obj: FUNC_BASE + f,
        offset: 0,
    }
    .encode()
}

/// The function whose address `v` is, if it is one (`f` must be below `nfuncs`).
pub fn func_of_ptr(v: Value, nfuncs: usize) -> Option<FuncId> {
    let p = Ptr::decode(v)?;
    let f = p.obj.checked_sub(FUNC_BASE)?;
    (p.offset == 0 && (f as usize) < nfuncs).then_some(f)
}

/// What kind of memory an object is; mutexes are cells too (0 = free, `t + 1` = held by `t`).
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjKind {
    Shared,
    Mutex,
}

/// A global memory object: a scalar (size 1) or an array. Every cell starts initialised
/// (zero unless `init` says otherwise).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Object {
    pub name: String,
    pub kind: ObjKind,
    /// Number of cells.
    pub size: u32,
    /// Initial values of the cells that do not start at 0, sorted by index, each once.
    /// Sparse so that a large zero-initialised array costs nothing to declare.
    pub init: Vec<(u32, Value)>,
    /// Declared as an array (printed `a[i]`) rather than a scalar.
    pub is_array: bool,
    /// Names of cells for reports (`pool[1].next`), by cell index; empty, or an empty
    /// string, for the default naming. The C front-end fills it: its cells are bytes.
    pub cell_names: Vec<String>,
    pub loc: SrcLoc,
}

impl Object {
    /// The initial value of cell `index`.
    pub fn init_value(&self, index: u32) -> Value {
        match self.init.binary_search_by_key(&index, |&(k, _)| k) {
            Ok(i) => self.init[i].1,
            Err(_) => 0,
        }
    }

    /// Sets the initial value of cell `index`, keeping `init` sorted and free of zeros.
    pub fn set_init(&mut self, index: u32, value: Value) {
        match (self.init.binary_search_by_key(&index, |&(k, _)| k), value) {
            (Ok(i), 0) => {
                self.init.remove(i);
            }
            (Ok(i), v) => self.init[i].1 = v,
            (Err(_), 0) => {}
            (Err(i), v) => self.init.insert(i, (index, v)),
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    LogAnd,
    LogOr,
    /// Unsigned (64-bit) forms, for front-ends with unsigned integers (C).
    UDiv,
    URem,
    /// Logical shift right.
    LShr,
    ULt,
    ULe,
    UGt,
    UGe,
    /// Used by read-modify-writes (C `atomicrmw`).
    Min,
    Max,
    UMin,
    UMax,
    Nand,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            And => "&",
            Or => "|",
            Xor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            LogAnd => "&&",
            LogOr => "||",
            UDiv => "/u",
            URem => "%u",
            LShr => ">>>",
            ULt => "<u",
            ULe => "<=u",
            UGt => ">u",
            UGe => ">=u",
            Min => "min",
            Max => "max",
            UMin => "umin",
            UMax => "umax",
            Nand => "nand",
        }
    }

    /// Evaluates with wrapping arithmetic; `None` on division by zero.
    #[inline(always)]
    pub fn eval(self, a: Value, b: Value) -> Option<Value> {
        use BinOp::*;
        Some(match self {
            Add => a.wrapping_add(b),
            Sub => a.wrapping_sub(b),
            Mul => a.wrapping_mul(b),
            Div => {
                if b == 0 {
                    return None;
                }
                a.wrapping_div(b)
            }
            Rem => {
                if b == 0 {
                    return None;
                }
                a.wrapping_rem(b)
            }
            And => a & b,
            Or => a | b,
            Xor => a ^ b,
            Shl => a.wrapping_shl(b as u32),
            Shr => a.wrapping_shr(b as u32),
            Eq => (a == b) as Value,
            Ne => (a != b) as Value,
            Lt => (a < b) as Value,
            Le => (a <= b) as Value,
            Gt => (a > b) as Value,
            Ge => (a >= b) as Value,
            LogAnd => (a != 0 && b != 0) as Value,
            LogOr => (a != 0 || b != 0) as Value,
            UDiv => {
                if b == 0 {
                    return None;
                }
                ((a as u64) / (b as u64)) as Value
            }
            URem => {
                if b == 0 {
                    return None;
                }
                ((a as u64) % (b as u64)) as Value
            }
            LShr => (a as u64).wrapping_shr(b as u32) as Value,
            ULt => ((a as u64) < (b as u64)) as Value,
            ULe => ((a as u64) <= (b as u64)) as Value,
            UGt => ((a as u64) > (b as u64)) as Value,
            UGe => ((a as u64) >= (b as u64)) as Value,
            Min => a.min(b),
            Max => a.max(b),
            UMin => (a as u64).min(b as u64) as Value,
            UMax => (a as u64).max(b as u64) as Value,
            Nand => !(a & b),
        })
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
    /// Keeps the low `n` bits, sign-extended (C front-end: integers narrower than 64 bits
    /// are held sign-extended, so arithmetic wraps at their width).
    Sext(u8),
    /// Keeps the low `n` bits, zero-extended (the unsigned view of a narrow integer).
    Zext(u8),
}

impl UnOp {
    #[inline]
    pub fn eval(self, a: Value) -> Value {
        match self {
            UnOp::Neg => a.wrapping_neg(),
            UnOp::Not => (a == 0) as Value,
            UnOp::BitNot => !a,
            UnOp::Sext(n) if n >= 64 => a,
            UnOp::Sext(n) => {
                let k = 64 - n as u32;
                a.wrapping_shl(k).wrapping_shr(k)
            }
            UnOp::Zext(n) if n >= 64 => a,
            UnOp::Zext(n) => a & ((1i64 << n) - 1),
        }
    }
}

/// A local expression: registers and constants only.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Expr {
    Const(Value),
    Reg(Reg),
    /// The address of cell `index` of a global object, as a pointer value.
    AddrOf(ObjId, Box<Expr>),
    Un(UnOp, Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }
    /// Registers the expression reads.
    pub fn regs(&self, out: &mut Vec<Reg>) {
        match self {
            Expr::Const(_) => {}
            Expr::Reg(r) => out.push(*r),
            Expr::AddrOf(_, e) | Expr::Un(_, e) => e.regs(out),
            Expr::Bin(_, a, b) => {
                a.regs(out);
                b.regs(out);
            }
        }
    }
}

/// Where a memory instruction acts.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Addr {
    /// Cell `index` of global object `obj` (index 0 for scalars).
    Global { obj: ObjId, index: Expr },
    /// Through a pointer value (C front-end: heap, stack and computed addresses).
    Ptr(Expr),
}

impl Addr {
    pub fn scalar(obj: ObjId) -> Addr {
        Addr::Global {
            obj,
            index: Expr::Const(0),
        }
    }
}

/// The read-modify-write operations; each acts on memory indivisibly.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// Writes `new` if the cell holds `expected`; the result is the old value.
    Cas { expected: Expr, new: Expr },
    /// Adds; the result is the old value.
    FetchAdd(Expr),
    /// Swaps; the result is the old value.
    Xchg(Expr),
    /// Writes `op(old, value)` kept to `bits` bits sign-extended; the result is the old
    /// value (C `atomicrmw` and the `__sync_fetch_and_*` builtins).
    Fetch { op: BinOp, value: Expr, bits: u8 },
}

/// What a fence orders.
#[derive(
    serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord,
)]
pub enum FenceKind {
    /// Waits until every store the thread issued before it has reached memory: nothing
    /// after it (load or store) can overtake an earlier store (x86 `MFENCE`, C11 seq_cst).
    Full,
    /// Store-store: never waits, but every store the thread issues after it reaches memory
    /// after every store it issued before it (SPARC `membar #StoreStore`; what C11 release
    /// and acq_rel fences compile to on TSO and PSO). Later loads may still overtake
    /// earlier stores. TSO and SC keep store order anyway, so there it orders nothing.
    StoreStore,
}

impl FenceKind {
    /// The name counterexamples and reports use.
    pub fn name(self) -> &'static str {
        match self {
            FenceKind::Full => "fence",
            FenceKind::StoreStore => "fence ss",
        }
    }
}

/// One instruction. `Local`, `Jump` and `Branch` are invisible to other threads; every
/// other instruction is an event the engines schedule.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Local {
        dst: Reg,
        expr: Expr,
    },
    Jump(u32),
    Branch {
        cond: Expr,
        then_to: u32,
        else_to: u32,
    },
    Load {
        dst: Reg,
        addr: Addr,
        /// Part of a memory copy (`memcpy`): a cell never written reads as 0 instead of
        /// faulting, because copies carry padding and fields nobody set, which is not an
        /// error until someone reads them as a value.
        copy: bool,
    },
    Store {
        addr: Addr,
        value: Expr,
    },
    Rmw {
        dst: Reg,
        addr: Addr,
        op: RmwOp,
    },
    Fence(FenceKind),
    /// Blocks the execution (it is discarded, not a violation) unless the condition holds.
    Assume(Expr),
    /// A violation unless the condition holds; `text` is the source text of the condition.
    Assert {
        cond: Expr,
        text: String,
    },
    Lock(Addr),
    Unlock(Addr),
    /// Takes the mutex if it is free (`dst` = 0), else leaves it (`dst` = 1); never waits
    /// for it, but, like `lock`, waits for the thread's store buffers.
    TryLock {
        dst: Reg,
        addr: Addr,
    },
    /// Destroys a mutex (`pthread_mutex_destroy`): a fault if it is held; afterwards a
    /// lock, unlock or read-modify-write of it faults until a store re-initialises it.
    MutexDestroy(Addr),
    /// Arrives at the barrier whose state is the cell at `addr` (the first half of
    /// `pthread_barrier_wait`; see [`barrier`]): the cell's low 32 bits hold the count a
    /// store gave it (`pthread_barrier_init`), and the arrival counts itself in the bits
    /// above. The last arrival of a generation releases every thread waiting at the
    /// barrier and writes 1 to `serial` (the others 0). A fault if the count is not
    /// positive (never initialised, or destroyed). Waits for the thread's store buffers.
    /// `serial` is `None` where nothing reads it: then which arrival was last does not
    /// matter, and arrivals of one generation commute.
    BarrierArrive {
        addr: Addr,
        serial: Option<Reg>,
    },
    /// Waits until the generation the thread arrived in is complete (the second half of
    /// `pthread_barrier_wait`, right after [`Op::BarrierArrive`] at the same address).
    BarrierPass(Addr),
    /// Starts a new thread running `func(arg)`; `dst` receives its thread id.
    Spawn {
        dst: Reg,
        func: FuncId,
        arg: Expr,
    },
    /// Waits until the thread whose id the expression holds has finished.
    Join(Expr),
    Call {
        dst: Option<Reg>,
        func: FuncId,
        args: Vec<Expr>,
    },
    Return(Option<Expr>),
    /// Allocates a fresh heap object of `size` cells and writes a pointer to it. Cells of
    /// an object not `zeroed` are uninitialised until written: reading one is a fault
    /// (`malloc`, stack slots); a `zeroed` one reads 0 (`calloc`).
    Alloc {
        dst: Reg,
        size: Expr,
        /// A stack object of the running call: freed when the thread leaves the call
        /// through `Exit` (a `return` frees it with an explicit `Free`).
        stack: bool,
        zeroed: bool,
    },
    Free(Expr),
    /// Ends the thread at once, from any call depth (`pthread_exit`).
    Exit,
    /// Ends the process (`exit()`, `main` returning, as C defines it): no thread takes a
    /// step after it. The thread stops here for good, its stack objects alive; an execution
    /// in which some thread did this ends normally once no other thread can move, whatever
    /// the others wait for (a wait the exit cut short is no deadlock or hang). That the
    /// others may go on after the call is no over-approximation: the same steps could all
    /// have come before it, had this thread been slower to call it.
    ExitProcess,
    /// Writes the running thread's id (`pthread_self`).
    ThreadId {
        dst: Reg,
    },
    /// Marks the head of a loop that carries no register from one iteration to the next
    /// (see [`spin`]): writes the thread's event count, the start of the iteration.
    LoopHead {
        dst: Reg,
    },
    /// The back edge of such a loop: jumps to `to`, unless every event since the iteration
    /// started (`start` holds its event count) was pure; then the thread blocks for good.
    SpinBack {
        to: u32,
        start: Reg,
    },
    /// Calls the function whose address ([`func_ptr`]) the expression holds; a value that
    /// is no function's address is a memory error. Missing arguments are 0, extra ones are
    /// dropped (C calls through a pointer of the wrong type).
    CallIndirect {
        dst: Option<Reg>,
        target: Expr,
        args: Vec<Expr>,
    },
    /// [`Op::Spawn`] of the function whose address the expression holds.
    SpawnIndirect {
        dst: Reg,
        target: Expr,
        arg: Expr,
    },
    /// Something the front-end cannot model (an unknown library function, an instruction
    /// it does not support). Reaching it stops the exploration with this message: the
    /// program is refused, but only if some execution gets there.
    Unsupported {
        message: String,
    },
    /// An input: writes an arbitrary `bits`-wide integer in the C front-end's canonical
    /// form (sign-extended; `bits == 1` gives 0 or 1). Only the symbolic engine
    /// (`fencer-symbolic`) gives it meaning; engines that enumerate values refuse it.
    Nondet {
        dst: Reg,
        bits: u8,
    },
}

impl Op {
    /// Calls `f` on every expression the instruction reads (`SpinBack`'s `start` is a
    /// register, not an expression).
    pub fn exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        fn addr<'a>(a: &'a Addr, f: &mut dyn FnMut(&'a Expr)) {
            match a {
                Addr::Global { index, .. } => f(index),
                Addr::Ptr(e) => f(e),
            }
        }
        match self {
            Op::Load { addr: a, .. } => addr(a, f),
            Op::Local { expr, .. } => f(expr),
            Op::Branch { cond, .. } | Op::Assert { cond, .. } | Op::Assume(cond) => f(cond),
            Op::Store { addr: a, value } => {
                addr(a, f);
                f(value);
            }
            Op::Rmw { addr: a, op, .. } => {
                addr(a, f);
                match op {
                    RmwOp::Cas { expected, new } => {
                        f(expected);
                        f(new);
                    }
                    RmwOp::FetchAdd(e) | RmwOp::Xchg(e) => f(e),
                    RmwOp::Fetch { value, .. } => f(value),
                }
            }
            Op::Lock(a)
            | Op::Unlock(a)
            | Op::TryLock { addr: a, .. }
            | Op::MutexDestroy(a)
            | Op::BarrierArrive { addr: a, .. }
            | Op::BarrierPass(a) => addr(a, f),
            Op::Spawn { arg, .. } => f(arg),
            Op::SpawnIndirect { target, arg, .. } => {
                f(target);
                f(arg);
            }
            Op::CallIndirect { target, args, .. } => {
                f(target);
                args.iter().for_each(f);
            }
            Op::Join(e) | Op::Free(e) | Op::Alloc { size: e, .. } | Op::Return(Some(e)) => f(e),
            Op::Call { args, .. } => args.iter().for_each(f),
            _ => {}
        }
    }

    /// Whether the instruction is invisible to other threads.
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            Op::Local { .. }
                | Op::Jump(_)
                | Op::Branch { .. }
                | Op::Call { .. }
                | Op::Return(_)
                | Op::Assert { .. }
                | Op::Exit
                | Op::ExitProcess
                | Op::ThreadId { .. }
                | Op::LoopHead { .. }
                | Op::SpinBack { .. }
                | Op::CallIndirect { .. }
                | Op::Unsupported { .. }
                | Op::Nondet { .. }
        )
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Instr {
    pub op: Op,
    pub loc: SrcLoc,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// Registers 0..params receive the arguments.
    pub params: u32,
    /// Name of every register; temporaries introduced by a front-end start with `%`.
    pub reg_names: Vec<String>,
    pub body: Vec<Instr>,
    pub loc: SrcLoc,
}

impl Function {
    /// Per register, whether the function can give it a value (a parameter, or the
    /// destination of an instruction): temporaries that `simplify` substituted away are
    /// not, and views leave them out.
    pub fn written_regs(&self) -> Vec<bool> {
        let mut w = vec![false; self.reg_names.len()];
        for x in w.iter_mut().take(self.params as usize) {
            *x = true;
        }
        for ins in &self.body {
            if let Some(d) = spin::dst(&ins.op) {
                if let Some(x) = w.get_mut(d as usize) {
                    *x = true;
                }
            }
        }
        w
    }

    pub fn num_regs(&self) -> usize {
        self.reg_names.len()
    }
    pub fn reg_by_name(&self, name: &str) -> Option<Reg> {
        self.reg_names
            .iter()
            .position(|n| n == name)
            .map(|i| i as Reg)
    }
}

/// A thread that runs from the start: `func(arg)`, named for reports and conditions.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ThreadDecl {
    pub name: String,
    pub func: FuncId,
    pub arg: Value,
}

/// A term of a final-state condition.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CondVar {
    /// A register of a static thread's root frame, at the end.
    Reg { thread: u32, reg: Reg },
    /// A memory cell, at the end.
    Cell { obj: ObjId, index: u32 },
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CondExpr {
    Const(Value),
    Var(CondVar),
    Un(UnOp, Box<CondExpr>),
    Bin(BinOp, Box<CondExpr>, Box<CondExpr>),
}

impl CondExpr {
    pub fn eval(&self, lookup: &impl Fn(&CondVar) -> Value) -> Value {
        match self {
            CondExpr::Const(v) => *v,
            CondExpr::Var(v) => lookup(v),
            CondExpr::Un(op, e) => op.eval(e.eval(lookup)),
            CondExpr::Bin(op, a, b) => {
                // Division by zero in a condition is false rather than an error: conditions
                // classify final states, they do not execute.
                op.eval(a.eval(lookup), b.eval(lookup)).unwrap_or(0)
            }
        }
    }
    /// Variables in order of first appearance, without repeats.
    pub fn vars(&self, out: &mut Vec<CondVar>) {
        match self {
            CondExpr::Const(_) => {}
            CondExpr::Var(v) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            CondExpr::Un(_, e) => e.vars(out),
            CondExpr::Bin(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// Violation when some final state satisfies the condition (the behaviour is reachable).
    Exists,
    /// Violation when the condition is false in some final state.
    Forall,
    /// Violation when some final state satisfies it; litmus `~exists`, same check as `Exists`
    /// but read as "this must not happen".
    NotExists,
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct FinalCond {
    pub quant: Quantifier,
    pub expr: CondExpr,
    /// Source text of the condition, for reports.
    pub text: String,
    pub loc: SrcLoc,
}

/// Why the stateless explorer refuses a read of uninitialised memory where the program's
/// conventions make its value arbitrary ([`Program::uninit_arbitrary`]).
pub const UNINIT_ARBITRARY: &str = "read of uninitialised memory: under SV-COMP's conventions \
    its value is arbitrary, and this engine does not choose such values (give the variable \
    an initial value, or use `--engine abpress`, which takes the value as an input)";

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub name: String,
    /// Source files; [`SrcLoc::file`] indexes this.
    pub files: Vec<String>,
    pub objects: Vec<Object>,
    pub functions: Vec<Function>,
    pub threads: Vec<ThreadDecl>,
    pub cond: Option<FinalCond>,
    /// Extra variables the final states should show (litmus `locations [...]`).
    pub observe: Vec<CondVar>,
    /// Final states are reported over the condition and `observe` only, even when both are
    /// empty (the C front-end: memory is bytes, and verdicts come from assertions).
    pub observe_explicit: bool,
    /// Counterexamples name each event's file and function (C front-end).
    pub source_trace: bool,
    /// Whether an execution that ends with a thread waiting forever is a violation: stuck
    /// in a waiting loop (a hang), or at a lock or join (a deadlock). Under SV-COMP's
    /// conventions the property is that `reach_error` is unreachable, and such an
    /// execution is no counterexample to it; `--hangs ignore` asks for Nidhugg's and
    /// GenMC's convention, which is the same.
    pub hang_is_violation: bool,
    /// What a verdict on this program takes for granted beyond the language's semantics,
    /// in words for the report: an option that narrowed the semantics (`pthread_cond_wait`
    /// without spurious wake-ups), an approximation the front-end made. Reports repeat
    /// these, so that no verdict hides them.
    pub assumptions: Vec<String>,
    /// A read of memory never written gives an arbitrary value (SV-COMP's conventions,
    /// where reachability of the error call is the only property) instead of being a
    /// memory error. The symbolic engine takes it as an input (one value per cell, which
    /// later reads see again); the stateless explorer, which does not choose values,
    /// refuses the program when an execution reads one rather than report a violation.
    pub uninit_arbitrary: bool,
    /// The same program with every `pthread_cond_wait` returning only when signalled (C,
    /// with spurious wake-ups). A wait that may wake spuriously never blocks, so a wait no
    /// signal ever ends (a lost wake-up) cannot be seen in this program: checkers explore
    /// the variant too, for the hangs and deadlocks it has (every other violation of the
    /// variant is one of this program, whose waits can return whenever the variant's do).
    pub wait_variant: Option<Box<Program>>,
}

impl Program {
    /// A program of these objects, functions and threads, its source one file named
    /// after it, with every other setting at its plain default: no final condition, hangs
    /// are violations, no assumption, uninitialised reads are errors, no wait variant.
    /// Tests and generators build on it, so a new setting has one default to give.
    pub fn new(
        name: impl Into<String>,
        objects: Vec<Object>,
        functions: Vec<Function>,
        threads: Vec<ThreadDecl>,
    ) -> Program {
        let name = name.into();
        Program {
            files: vec![name.clone()],
            name,
            objects,
            functions,
            threads,
            cond: None,
            observe: Vec::new(),
            observe_explicit: false,
            source_trace: false,
            hang_is_violation: true,
            assumptions: Vec::new(),
            uninit_arbitrary: false,
            wait_variant: None,
        }
    }

    pub fn file_name(&self, loc: SrcLoc) -> &str {
        self.files
            .get(loc.file as usize)
            .map(|s| s.as_str())
            .unwrap_or("?")
    }

    pub fn object_by_name(&self, name: &str) -> Option<ObjId> {
        self.objects
            .iter()
            .position(|o| o.name == name)
            .map(|i| i as ObjId)
    }

    /// How a condition variable is written in reports: `p.r1`, `x`, `a[2]`.
    pub fn var_name(&self, v: &CondVar) -> String {
        match v {
            CondVar::Reg { thread, reg } => {
                let t = &self.threads[*thread as usize];
                let f = &self.functions[t.func as usize];
                format!("{}.{}", t.name, f.reg_names[*reg as usize])
            }
            CondVar::Cell { obj, index } => self.cell_name(*obj, *index),
        }
    }

    /// How a cell of a global object is written in reports: `x`, `a[2]`, `x+4`, or the
    /// front-end's own name for it (`pool[1].1`).
    pub fn cell_name(&self, obj: ObjId, index: u32) -> String {
        let o = &self.objects[obj as usize];
        match o.cell_names.get(index as usize) {
            Some(n) if !n.is_empty() => n.clone(),
            _ if o.is_array => format!("{}[{}]", o.name, index),
            _ if index == 0 => o.name.clone(),
            _ => format!("{}+{}", o.name, index),
        }
    }

    /// Whether any function has a `trylock`: the one way a thread can see that another
    /// holds a mutex and go on (a `lock` waits).
    pub fn uses_trylock(&self) -> bool {
        self.functions
            .iter()
            .any(|f| f.body.iter().any(|i| matches!(i.op, Op::TryLock { .. })))
    }

    /// The variables final states are reported over: those of the condition and `observe`,
    /// or, without a condition, every shared cell and every named register of every static
    /// thread.
    /// Whether some function reads an input ([`Op::Nondet`]).
    pub fn has_inputs(&self) -> bool {
        self.functions
            .iter()
            .any(|f| f.body.iter().any(|i| matches!(i.op, Op::Nondet { .. })))
    }

    pub fn reported_vars(&self) -> Vec<CondVar> {
        let mut out = Vec::new();
        if let Some(c) = &self.cond {
            c.expr.vars(&mut out);
        }
        for v in &self.observe {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        if self.cond.is_some() || !self.observe.is_empty() || self.observe_explicit {
            return out;
        }
        for (ti, t) in self.threads.iter().enumerate() {
            let f = &self.functions[t.func as usize];
            for (ri, name) in f.reg_names.iter().enumerate() {
                if !name.starts_with('%') && ri as u32 >= f.params {
                    out.push(CondVar::Reg {
                        thread: ti as u32,
                        reg: ri as Reg,
                    });
                }
            }
        }
        for (oi, o) in self.objects.iter().enumerate() {
            if o.kind == ObjKind::Shared {
                for k in 0..o.size {
                    out.push(CondVar::Cell {
                        obj: oi as ObjId,
                        index: k,
                    });
                }
            }
        }
        out
    }
}

impl fmt::Display for SrcLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_round_trip() {
        // Object ids stay below 2^31 - 1 so that encoded pointers are positive.
        for (obj, offset) in [(0, 0), (3, 7), ((1 << 31) - 2, u32::MAX)] {
            let p = Ptr { obj, offset };
            assert_eq!(Ptr::decode(p.encode()), Some(p));
        }
        assert_eq!(Ptr::decode(0), None);
        assert_eq!(Ptr::decode(42), None);
        assert_eq!(Ptr::decode(-1), None);
    }

    #[test]
    fn function_addresses_are_no_data_objects() {
        let v = func_ptr(3);
        assert_eq!(func_of_ptr(v, 4), Some(3));
        assert_eq!(func_of_ptr(v, 3), None, "no such function");
        assert_eq!(func_of_ptr(v + 1, 4), None, "inside a function");
        assert_eq!(func_of_ptr(Ptr { obj: 3, offset: 0 }.encode(), 10), None);
        assert_eq!(func_of_ptr(0, 10), None);
    }

    #[test]
    fn division_by_zero_is_none() {
        assert_eq!(BinOp::Div.eval(1, 0), None);
        assert_eq!(BinOp::Rem.eval(1, 0), None);
        assert_eq!(BinOp::Div.eval(i64::MIN, -1), Some(i64::MIN));
    }
}
