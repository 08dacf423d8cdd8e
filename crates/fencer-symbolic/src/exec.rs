//! Symbolic execution of one step: a thread's visible instruction and the local
//! instructions after it, exactly as the concrete machine groups them (so a trace found here
//! replays step for step there).
//!
//! Every value is computed twice, in lockstep: forward, over the path's inputs (to decide
//! feasibility and to build counterexamples), and backward, over the state variables of the
//! step's start (registers and cells; see [`SVar`]), as micro-operations from which
//! refinement computes weakest preconditions. A value is *concrete* only when it is computed
//! from concrete values alone; it then belongs to the node's location (covers compare it
//! exactly) and is substituted into the micro-operations, so labels only ever mention
//! symbolic state variables.
//!
//! Decisions that depend on symbolic values (a branch, an assertion, a range check, an
//! `assume`) stop the execution: the caller checks which alternatives are feasible and runs
//! the step again with a longer list of choices.

use fencer_ir::{Addr, BinOp, Expr, FuncId, Op, Program, Ptr, Reg, RmwOp, SrcLoc, UnOp, Value};
use fencer_smt::{Lin, Lit, Rel};
use std::rc::Rc;

/// A state variable: what labels talk about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SVar {
    /// Register `reg` of the frame at call depth `depth` of thread `thread`.
    Reg {
        thread: u32,
        depth: u32,
        reg: Reg,
    },
    Cell {
        obj: u32,
        index: u32,
    },
}

/// A forward value, over the path's inputs (variable `k` is the `k`-th input read).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum V {
    C(Value),
    S(Lin),
    /// A truth value (0 or 1) given by a literal.
    B(Lit),
}

/// A backward term, over state variables (interned as [`fencer_smt::Var`]s).
#[derive(Clone, Debug)]
pub enum Bk {
    C(Value),
    L(Lin),
    B(Lit),
}

/// One step of a path, as refinement sees it (over state variables).
#[derive(Clone, Debug)]
pub enum Micro {
    Set(u32, Bk),
    /// An input: the variable takes any value of a `bits`-wide integer.
    Havoc(u32, u8),
    Assume(Lit),
    /// Conditions the execution relied on without their being decided by a branch (range
    /// checks are decisions too; this is for facts the forward side knew by construction).
    Require(Vec<Lit>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    Uninit,
    Destroyed,
    V(V),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Obj {
    pub cells: Rc<Vec<Cell>>,
    pub alive: bool,
    pub heap: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub func: FuncId,
    pub pc: u32,
    /// Shared between the nodes whose step did not write them (copy on write).
    pub regs: Rc<Vec<V>>,
    pub ret: Option<Reg>,
    pub stack: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Thread {
    pub frames: Vec<Frame>,
    pub finished: bool,
}

/// A node's state: the concrete control and memory shape, symbolic data, and the path
/// condition over the inputs read so far.
#[derive(Clone, Debug)]
pub struct St {
    pub threads: Vec<Thread>,
    pub mem: Vec<Obj>,
    pub pc: Vec<Lit>,
    /// The thread and width of every input read, by input variable.
    pub inputs: Vec<(u32, u8)>,
    /// Threads whose local instructions still run before anything else can (the static
    /// threads at the start; a spawned thread and its parent after a spawn; a thread
    /// stopped at a loop's back edge), first first. A local loop becomes a path of tree
    /// nodes, one per iteration, so that covers can close it; being invisible to other
    /// threads, these steps are never interleaved with theirs.
    pub pending: Vec<u32>,
}

/// The part of a state covers compare exactly: control, memory shape, concrete values,
/// and which values are symbolic (not what they are).
pub fn key_eq(a: &St, b: &St) -> bool {
    fn same(x: &V, y: &V) -> bool {
        match (x, y) {
            (V::C(a), V::C(b)) => a == b,
            (V::C(_), _) | (_, V::C(_)) => false,
            _ => true,
        }
    }
    a.threads.len() == b.threads.len()
        && a.pending == b.pending
        && a.mem.len() == b.mem.len()
        && a.threads.iter().zip(&b.threads).all(|(x, y)| {
            x.finished == y.finished
                && x.frames.len() == y.frames.len()
                && x.frames.iter().zip(&y.frames).all(|(f, g)| {
                    f.func == g.func
                        && f.pc == g.pc
                        && f.ret == g.ret
                        && f.stack == g.stack
                        && f.regs.iter().zip(g.regs.iter()).all(|(p, q)| same(p, q))
                })
        })
        && a.mem.iter().zip(&b.mem).all(|(x, y)| {
            x.alive == y.alive
                && x.heap == y.heap
                && (Rc::ptr_eq(&x.cells, &y.cells)
                    || (x.cells.len() == y.cells.len()
                        && x.cells
                            .iter()
                            .zip(y.cells.iter())
                            .all(|(p, q)| match (p, q) {
                                (Cell::V(p), Cell::V(q)) => same(p, q),
                                (Cell::Uninit, Cell::Uninit)
                                | (Cell::Destroyed, Cell::Destroyed) => true,
                                _ => false,
                            })))
        })
}

pub fn key_hash(s: &St) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    s.pending.hash(&mut h);
    let v = |x: &V, h: &mut rustc_hash::FxHasher| match x {
        V::C(c) => c.hash(h),
        _ => u64::MAX.hash(h),
    };
    for t in &s.threads {
        t.finished.hash(&mut h);
        for f in &t.frames {
            (f.func, f.pc, f.ret, &f.stack).hash(&mut h);
            for r in f.regs.iter() {
                v(r, &mut h);
            }
        }
        0xfeu8.hash(&mut h);
    }
    for o in &s.mem {
        (o.alive, o.heap, o.cells.len()).hash(&mut h);
        for c in o.cells.iter() {
            match c {
                Cell::Uninit => 1u8.hash(&mut h),
                Cell::Destroyed => 2u8.hash(&mut h),
                Cell::V(x) => v(x, &mut h),
            }
        }
    }
    h.finish()
}

/// The kind of a symbolic decision: what its false alternative means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Both alternatives continue (a branch, a case split).
    Split,
    /// The false alternative is an assertion failure.
    Assert,
    /// The false alternative is an arithmetic result outside its type (not modelled).
    Range,
    /// The false alternative blocks the thread (`assume`): it has no successor.
    Assume,
}

/// Why a step faulted, as the machine would say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The machine's fault kind name (`assertion`, `memory-error`, ...).
    pub kind: &'static str,
    pub thread: u32,
    pub src: SrcLoc,
    pub message: String,
}

pub enum Stop {
    /// A symbolic decision beyond the choices given: `f` forward, `b` backward.
    Decide {
        f: Lit,
        b: Lit,
        kind: Kind,
    },
    Fault(Fault),
    /// Something the engine does not model, with where.
    Unsupported(String),
}

/// How a step ended.
pub enum End {
    /// The state after the step.
    Done(St),
    /// A fault; the state holds the path condition (with the decisions that lead to it).
    Fault(St, Fault),
    /// The choices lead to a blocked thread (`assume` false).
    Blocked,
}

/// The cost of the machine's bounds, mirrored: a step with more local instructions than
/// this stops the machine's thread (a cut), so the engine refuses to judge it.
const LOCAL_FUEL: u32 = 100_000;
/// Unwrapped (64-bit) symbolic results must be proved within +-2^40: a stronger demand
/// than no wrap-around (a program whose 64-bit values grow beyond it is refused), with
/// numbers the conjunction checker handles exactly (it gives up above 2^60).
const WIDE: (i64, i64) = (-(1 << 40), 1 << 40);
const MAX_FRAMES: usize = 256;
const MAX_ALLOC: i64 = fencer_ir::MAX_CELLS;

pub struct Exec<'a> {
    pub prog: &'a Program,
    pub st: St,
    pub ops: Vec<Micro>,
    choices: &'a [bool],
    cursor: usize,
    /// The function and source position of the instruction being executed.
    cur: (FuncId, SrcLoc),
    /// Interns state variables (shared with the engine).
    pub intern: &'a mut dyn FnMut(SVar) -> u32,
}

type D = (V, Bk);
type R<T> = Result<T, Stop>;

fn lin_add(a: &Lin, b: &Lin, f: i64) -> Option<Lin> {
    let mut terms = a.terms.clone();
    for &(v, c) in &b.terms {
        let c = c.checked_mul(f)?;
        match terms.iter_mut().find(|t| t.0 == v) {
            Some(t) => t.1 = t.1.checked_add(c)?,
            None => terms.push((v, c)),
        }
    }
    terms.retain(|t| t.1 != 0);
    terms.sort();
    Some(Lin {
        terms,
        k: a.k.checked_add(b.k.checked_mul(f)?)?,
    })
}

pub fn lin_scale(a: &Lin, f: i64) -> Option<Lin> {
    lin_add(&Lin::default(), a, f)
}

/// `a rel b` as a literal `a - b rel 0` (`Gt`/`Ge` swap their sides).
fn cmp_lit(op: BinOp, a: &Lin, b: &Lin) -> Option<Lit> {
    let (x, y, rel) = match op {
        BinOp::Eq => (a, b, Rel::Eq),
        BinOp::Ne => (a, b, Rel::Ne),
        BinOp::Lt | BinOp::ULt => (a, b, Rel::Lt),
        BinOp::Le | BinOp::ULe => (a, b, Rel::Le),
        BinOp::Gt | BinOp::UGt => (b, a, Rel::Lt),
        BinOp::Ge | BinOp::UGe => (b, a, Rel::Le),
        _ => return None,
    };
    Some(Lit::Arith(lin_add(x, y, -1)?, rel))
}

fn lin_of_bk(b: &Bk) -> Option<Lin> {
    match b {
        Bk::C(c) => Some(Lin::constant(*c)),
        Bk::L(l) => Some(l.clone()),
        Bk::B(_) => None,
    }
}

/// `lit` as a truth value: itself, or `l != 0`.
fn truth(v: &V) -> Option<Lit> {
    match v {
        V::C(_) => None,
        V::S(l) => Some(Lit::Arith(l.clone(), Rel::Ne)),
        V::B(l) => Some(l.clone()),
    }
}
fn truth_bk(b: &Bk) -> Lit {
    match b {
        Bk::C(c) => Lit::Arith(Lin::constant(*c), Rel::Ne),
        Bk::L(l) => Lit::Arith(l.clone(), Rel::Ne),
        Bk::B(l) => l.clone(),
    }
}

/// The values a `bits`-wide input takes in the C front-end's canonical form (`i1` as 0 or 1).
pub fn width_range(bits: u8) -> Option<(i64, i64)> {
    match bits {
        0 => Some((0, 0)),
        1 => Some((0, 1)),
        b if b >= 64 => None,
        b => Some((-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1)),
    }
}

fn unsupported<T>(what: impl Into<String>) -> R<T> {
    Err(Stop::Unsupported(what.into()))
}

impl<'a> Exec<'a> {
    pub fn new(
        prog: &'a Program,
        st: St,
        choices: &'a [bool],
        intern: &'a mut dyn FnMut(SVar) -> u32,
    ) -> Self {
        Exec {
            prog,
            st,
            ops: Vec::new(),
            choices,
            cursor: 0,
            cur: (0, SrcLoc::NONE),
            intern,
        }
    }

    fn svar(&mut self, v: SVar) -> u32 {
        (self.intern)(v)
    }

    /// Takes the next choice for a symbolic decision, or stops to ask for one.
    fn decide(&mut self, f: Lit, b: Lit, kind: Kind) -> R<bool> {
        // Both literals must have negations (refinement and the caller negate them).
        if crate::wlp::neg_checked(&f).is_none() || crate::wlp::neg_checked(&b).is_none() {
            return Err(ovf());
        }
        let Some(&c) = self.choices.get(self.cursor) else {
            return Err(Stop::Decide { f, b, kind });
        };
        self.cursor += 1;
        if c {
            self.st.pc.push(f);
            self.ops.push(Micro::Assume(b));
        } else {
            self.st.pc.push(f.negate());
            self.ops.push(Micro::Assume(b.negate()));
        }
        Ok(c)
    }

    /// Whether the forward bound of a linear term over the inputs fits `lo..=hi` without
    /// looking at the path (input widths only).
    fn fits_syntactically(&self, l: &Lin, lo: i64, hi: i64) -> bool {
        let mut min = l.k as i128;
        let mut max = l.k as i128;
        for &(v, c) in &l.terms {
            let Some(&(_, bits)) = self.st.inputs.get(v as usize) else {
                return false;
            };
            let Some((a, b)) = width_range(bits) else {
                return false;
            };
            let (x, y) = (c as i128 * a as i128, c as i128 * b as i128);
            min += x.min(y);
            max += x.max(y);
        }
        min >= lo as i128 && max <= hi as i128
    }

    /// Requires `lo <= d <= hi`: the engine does not model results outside their type.
    /// A decision even when the input widths alone bound the value: over the states a
    /// covering label stands for, nothing bounds it, so refinement must record the fact.
    fn require_range(&mut self, d: &D, lo: i64, hi: i64) -> R<()> {
        let (V::S(l), Some(b)) = (&d.0, lin_of_bk(&d.1)) else {
            return Ok(());
        };
        let ge = |x: &Lin| lin_add(&Lin::constant(lo), x, -1).map(|v| Lit::Arith(v, Rel::Le));
        let le = |x: &Lin| lin_add(x, &Lin::constant(hi), -1).map(|v| Lit::Arith(v, Rel::Le));
        let (Some(lo_f), Some(lo_b), Some(hi_f), Some(hi_b)) = (ge(l), ge(&b), le(l), le(&b))
        else {
            return Err(ovf());
        };
        if !self.decide(lo_f, lo_b, Kind::Range)? || !self.decide(hi_f, hi_b, Kind::Range)? {
            return unsupported("arithmetic result outside its type");
        }
        Ok(())
    }

    /// A truth value used as a number: split on it.
    fn as_number(&mut self, d: D) -> R<D> {
        match &d.0 {
            V::B(l) => {
                let lb = truth_bk(&d.1);
                let c = self.decide(l.clone(), lb, Kind::Split)? as Value;
                let b = match d.1 {
                    Bk::B(_) => Bk::C(c),
                    other => other,
                };
                Ok((V::S(Lin::constant(c)), b))
            }
            _ => Ok(d),
        }
    }

    fn reg(&mut self, t: u32, r: Reg) -> D {
        let th = &self.st.threads[t as usize];
        let depth = th.frames.len() as u32 - 1;
        let v = th.frames.last().expect("frame").regs[r as usize].clone();
        match v {
            V::C(c) => (V::C(c), Bk::C(c)),
            other => {
                let x = self.svar(SVar::Reg {
                    thread: t,
                    depth,
                    reg: r,
                });
                (other, Bk::L(Lin::var(x)))
            }
        }
    }

    /// The concrete value of an expression, if it reads concrete registers only.
    pub fn concrete(&self, t: u32, e: &Expr) -> Option<Option<Value>> {
        let fr = self.st.threads[t as usize].frames.last()?;
        let mut regs = Vec::new();
        e.regs(&mut regs);
        if regs
            .iter()
            .any(|r| !matches!(fr.regs.get(*r as usize), Some(V::C(_))))
        {
            return None;
        }
        let vals: Vec<Value> = fr
            .regs
            .iter()
            .map(|v| if let V::C(c) = v { *c } else { 0 })
            .collect();
        Some(eval_concrete(e, &vals))
    }

    fn arith_fault(&self, t: u32, src: SrcLoc) -> Stop {
        Stop::Fault(Fault {
            kind: "arithmetic",
            thread: t,
            src,
            message: "division by zero".into(),
        })
    }

    pub fn eval(&mut self, t: u32, e: &Expr, src: SrcLoc) -> R<D> {
        self.eval_w(t, e, src, false)
    }

    /// `wrapped`: the value only matters modulo 2^n for some n < 64 (it is under a
    /// sign or zero extension through ring operations only), so its own 64-bit range need
    /// not be checked: the extension checks the final result, and reduction modulo 2^n
    /// commutes with the ring operations.
    fn eval_w(&mut self, t: u32, e: &Expr, src: SrcLoc, wrapped: bool) -> R<D> {
        match e {
            Expr::Const(c) => Ok((V::C(*c), Bk::C(*c))),
            Expr::Reg(r) => Ok(self.reg(t, *r)),
            Expr::AddrOf(obj, idx) => match self.eval(t, idx, src)? {
                (V::C(i), _) => {
                    let v = Ptr {
                        obj: *obj,
                        offset: i as u32,
                    }
                    .encode();
                    Ok((V::C(v), Bk::C(v)))
                }
                _ => unsupported("an address computed from an input"),
            },
            Expr::Un(op, a) => {
                let inner = match op {
                    UnOp::Sext(n) | UnOp::Zext(n) => *n < 64,
                    UnOp::Neg | UnOp::BitNot => wrapped,
                    UnOp::Not => false,
                };
                let a = self.eval_w(t, a, src, inner)?;
                self.unop(*op, a, wrapped)
            }
            Expr::Bin(op, a, b) => {
                let ring = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl);
                let a = self.eval_w(t, a, src, wrapped && ring)?;
                let b = self.eval_w(t, b, src, wrapped && ring)?;
                self.binop_w(t, *op, a, b, src, wrapped && ring)
            }
        }
    }

    fn unop(&mut self, op: UnOp, a: D, wrapped: bool) -> R<D> {
        if let V::C(c) = a.0 {
            let v = op.eval(c);
            return Ok((V::C(v), Bk::C(v)));
        }
        match op {
            UnOp::Not => {
                let f = safe_neg(&truth(&a.0).expect("symbolic"))?;
                Ok((V::B(f), Bk::B(safe_neg(&truth_bk(&a.1))?)))
            }
            UnOp::Zext(0) | UnOp::Sext(0) => unsupported("an extension from zero bits"),
            UnOp::Zext(n) | UnOp::Sext(n)
                if matches!(a.0, V::B(_)) && (n >= 2 || matches!(op, UnOp::Zext(_))) =>
            {
                Ok(a)
            }
            UnOp::Zext(n) if n >= 64 => Ok(a),
            UnOp::Sext(n) if n >= 64 => Ok(a),
            // Sign extension from one bit makes 1 into -1: not an identity on any range.
            UnOp::Sext(n) if n < 2 => {
                unsupported("sign extension of a 1-bit input-dependent value")
            }
            UnOp::Zext(n) if n >= 63 => unsupported("zero extension from 63 bits"),
            UnOp::Sext(n) => {
                let a = self.as_number(a)?;
                let (lo, hi) = width_range(n).expect("narrow");
                self.require_range(&a, lo, hi)?;
                Ok(a)
            }
            UnOp::Zext(n) => {
                let a = self.as_number(a)?;
                let (V::S(l), Some(b)) = (&a.0, lin_of_bk(&a.1)) else {
                    return unsupported("zero extension");
                };
                // The sign decides: a negative value gains 2^n.
                let neg_f = Lit::Arith(l.clone(), Rel::Lt);
                let neg_b = Lit::Arith(b.clone(), Rel::Lt);
                let top = 1i64 << n;
                let lo = if n == 1 { 0 } else { -(1i64 << (n - 1)) };
                if self.fits_syntactically(l, 0, top - 1) {
                    self.require_range(&a, 0, top - 1)?;
                    return Ok(a);
                }
                if self.decide(neg_f, neg_b, Kind::Split)? {
                    self.require_range(&a, lo, -1)?;
                    let f = lin_add(l, &Lin::constant(top), 1).ok_or_else(ovf)?;
                    let b = lin_add(&b, &Lin::constant(top), 1).ok_or_else(ovf)?;
                    Ok((V::S(f), Bk::L(b)))
                } else {
                    self.require_range(&a, 0, top - 1)?;
                    Ok(a)
                }
            }
            UnOp::Neg | UnOp::BitNot => {
                let a = self.as_number(a)?;
                let k = if op == UnOp::Neg { 0 } else { -1 };
                let (V::S(l), Some(b)) = (&a.0, lin_of_bk(&a.1)) else {
                    return unsupported("negation");
                };
                let f = lin_add(&Lin::constant(k), l, -1).ok_or_else(ovf)?;
                let b = lin_add(&Lin::constant(k), &b, -1).ok_or_else(ovf)?;
                let r = (V::S(f), Bk::L(b));
                if !wrapped {
                    self.require_range(&r, WIDE.0, WIDE.1)?;
                }
                Ok(r)
            }
        }
    }

    fn binop(&mut self, t: u32, op: BinOp, a: D, b: D, src: SrcLoc) -> R<D> {
        self.binop_w(t, op, a, b, src, false)
    }

    fn binop_w(&mut self, t: u32, op: BinOp, a: D, b: D, src: SrcLoc, wrapped: bool) -> R<D> {
        if let (V::C(x), V::C(y)) = (&a.0, &b.0) {
            return match op.eval(*x, *y) {
                Some(v) => Ok((V::C(v), Bk::C(v))),
                None => Err(self.arith_fault(t, src)),
            };
        }
        // Truth values compared with 0 or 1 stay literals (C's `b != 0` on a `_Bool`).
        if let (V::B(_), V::C(k)) | (V::C(k), V::B(_)) = (&a.0, &b.0) {
            let (bv, bb) = if matches!(a.0, V::B(_)) {
                (&a.0, &a.1)
            } else {
                (&b.0, &b.1)
            };
            let positive = match (op, *k) {
                (BinOp::Ne, 0) | (BinOp::Eq, 1) => Some(true),
                (BinOp::Eq, 0) | (BinOp::Ne, 1) => Some(false),
                (BinOp::Xor, 1) => Some(false),
                (BinOp::Xor, 0) | (BinOp::And, 1) | (BinOp::Or, 0) => Some(true),
                _ => None,
            };
            if let Some(p) = positive {
                let f = truth(bv).expect("symbolic");
                let g = truth_bk(bb);
                return Ok(if p {
                    (V::B(f), Bk::B(g))
                } else {
                    (V::B(safe_neg(&f)?), Bk::B(safe_neg(&g)?))
                });
            }
        }
        let a = self.as_number(a)?;
        let b = self.as_number(b)?;
        let lf = |v: &V| match v {
            V::C(c) => Lin::constant(*c),
            V::S(l) => l.clone(),
            V::B(_) => unreachable!("as_number"),
        };
        let (fa, fb) = (lf(&a.0), lf(&b.0));
        let (Some(ba), Some(bb)) = (lin_of_bk(&a.1), lin_of_bk(&b.1)) else {
            return unsupported("a truth value used as a number inside one expression");
        };
        let lin = |f: Option<Lin>, b: Option<Lin>| -> R<D> {
            match (f, b) {
                (Some(f), Some(b)) => Ok((V::S(f), Bk::L(b))),
                _ => Err(ovf()),
            }
        };
        let r = match op {
            BinOp::Add => lin(lin_add(&fa, &fb, 1), lin_add(&ba, &bb, 1))?,
            BinOp::Sub => lin(lin_add(&fa, &fb, -1), lin_add(&ba, &bb, -1))?,
            BinOp::Mul => match (&a.0, &b.0) {
                (V::C(k), _) => lin(lin_scale(&fb, *k), lin_scale(&bb, *k))?,
                (_, V::C(k)) => lin(lin_scale(&fa, *k), lin_scale(&ba, *k))?,
                _ => return unsupported("multiplication of two input-dependent values"),
            },
            BinOp::Shl => match &b.0 {
                V::C(k) if (0..62).contains(k) => {
                    lin(lin_scale(&fa, 1 << k), lin_scale(&ba, 1 << k))?
                }
                _ => return unsupported("shift by an input-dependent amount"),
            },
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let (Some(f), Some(g)) = (cmp_lit(op, &fa, &fb), cmp_lit(op, &ba, &bb)) else {
                    return Err(ovf());
                };
                return Ok((V::B(f), Bk::B(g)));
            }
            BinOp::ULt | BinOp::ULe | BinOp::UGt | BinOp::UGe => {
                // Unsigned order is the signed one between values of the same sign, and
                // every negative value (a large unsigned one) is above every other: split
                // on the signs not known.
                let mut neg = [false; 2];
                for (i, (v, bk)) in [(&a.0, &ba), (&b.0, &bb)].into_iter().enumerate() {
                    neg[i] = match v {
                        V::C(c) => *c < 0,
                        V::S(l) => {
                            let f = Lit::Arith(l.clone(), Rel::Lt);
                            let g = Lit::Arith(bk.clone(), Rel::Lt);
                            self.decide(f, g, Kind::Split)?
                        }
                        V::B(_) => false,
                    };
                }
                if neg[0] != neg[1] {
                    // The negative one is the larger.
                    let a_larger = neg[0];
                    let v = match op {
                        BinOp::ULt | BinOp::ULe => !a_larger,
                        _ => a_larger,
                    } as Value;
                    return Ok((V::S(Lin::constant(v)), Bk::C(v)));
                }
                let (Some(f), Some(g)) = (cmp_lit(op, &fa, &fb), cmp_lit(op, &ba, &bb)) else {
                    return Err(ovf());
                };
                return Ok((V::B(f), Bk::B(g)));
            }
            _ => {
                return unsupported(format!(
                    "operation `{}` on an input-dependent value",
                    op.symbol()
                ))
            }
        };
        if !wrapped {
            self.require_range(&r, WIDE.0, WIDE.1)?;
        }
        Ok(r)
    }

    fn set_reg(&mut self, t: u32, r: Reg, d: D) {
        let th = &mut self.st.threads[t as usize];
        let depth = th.frames.len() as u32 - 1;
        Rc::make_mut(&mut th.frames.last_mut().expect("frame").regs)[r as usize] = d.0;
        let x = self.svar(SVar::Reg {
            thread: t,
            depth,
            reg: r,
        });
        self.ops.push(Micro::Set(x, d.1));
    }

    fn fault(&self, t: u32, src: SrcLoc, kind: &'static str, message: impl Into<String>) -> Stop {
        Stop::Fault(Fault {
            kind,
            thread: t,
            src,
            message: message.into(),
        })
    }

    /// The cell an address denotes (the machine's `resolve`).
    fn resolve(&mut self, t: u32, addr: &Addr, src: SrcLoc) -> R<(u32, u32)> {
        let mem_err = |s: &Self, m: String| s.fault(t, src, "memory-error", m);
        match addr {
            Addr::Global { obj, index } => {
                let i = match self.eval(t, index, src)? {
                    (V::C(i), _) => i,
                    _ => return unsupported("an array index computed from an input"),
                };
                let size = self.st.mem[*obj as usize].cells.len() as i64;
                if i < 0 || i >= size {
                    return Err(mem_err(
                        self,
                        format!(
                            "index {i} out of bounds of `{}` (size {size})",
                            self.prog.objects[*obj as usize].name
                        ),
                    ));
                }
                Ok((*obj, i as u32))
            }
            Addr::Ptr(e) => {
                let v = match self.eval(t, e, src)? {
                    (V::C(v), _) => v,
                    _ => return unsupported("an address computed from an input"),
                };
                if v == 0 {
                    return Err(mem_err(self, "null pointer dereference".into()));
                }
                let Some(p) = Ptr::decode(v) else {
                    return Err(mem_err(self, format!("{v} is not a valid address")));
                };
                let Some(o) = self.st.mem.get(p.obj as usize) else {
                    return Err(mem_err(self, format!("{v} is not a valid address")));
                };
                if !o.alive {
                    return Err(mem_err(self, "use after free".into()));
                }
                if p.offset as usize >= o.cells.len() {
                    return Err(mem_err(
                        self,
                        format!(
                            "offset {} out of bounds of an object of size {}",
                            p.offset,
                            o.cells.len()
                        ),
                    ));
                }
                Ok((p.obj, p.offset))
            }
        }
    }

    fn cell(&self, (o, i): (u32, u32)) -> &Cell {
        &self.st.mem[o as usize].cells[i as usize]
    }

    fn read_cell(&mut self, loc: (u32, u32)) -> D {
        match self.cell(loc).clone() {
            Cell::V(V::C(c)) => (V::C(c), Bk::C(c)),
            Cell::V(v) => {
                let x = self.svar(SVar::Cell {
                    obj: loc.0,
                    index: loc.1,
                });
                (v, Bk::L(Lin::var(x)))
            }
            Cell::Uninit | Cell::Destroyed => (V::C(0), Bk::C(0)),
        }
    }

    /// A cell never written, read where its value is arbitrary
    /// ([`Program::uninit_arbitrary`]), takes the next input as its value, as a
    /// `malloc`'d block's contents are in SV-COMP's tasks: one value, which later reads see
    /// again. The concrete machine's replay takes the same input at the same read.
    fn havoc_cell(&mut self, t: u32, loc: (u32, u32), bits: u8) -> R<()> {
        let k = self.st.inputs.len() as u32;
        self.st.inputs.push((t, bits));
        if let Some((lo, hi)) = width_range(bits) {
            let x = Lin::var(k);
            self.st.pc.push(Lit::Arith(
                lin_add(&Lin::constant(lo), &x, -1).ok_or_else(ovf)?,
                Rel::Le,
            ));
            self.st.pc.push(Lit::Arith(
                lin_add(&x, &Lin::constant(hi), -1).ok_or_else(ovf)?,
                Rel::Le,
            ));
        }
        let x = self.svar(SVar::Cell {
            obj: loc.0,
            index: loc.1,
        });
        Rc::make_mut(&mut self.st.mem[loc.0 as usize].cells)[loc.1 as usize] =
            Cell::V(V::S(Lin::var(k)));
        self.ops.push(Micro::Havoc(x, bits));
        Ok(())
    }

    fn write_cell(&mut self, loc: (u32, u32), d: D) {
        let x = self.svar(SVar::Cell {
            obj: loc.0,
            index: loc.1,
        });
        Rc::make_mut(&mut self.st.mem[loc.0 as usize].cells)[loc.1 as usize] = Cell::V(d.0);
        self.ops.push(Micro::Set(x, d.1));
    }

    fn set_cell_state(&mut self, loc: (u32, u32), c: Cell) {
        let x = self.svar(SVar::Cell {
            obj: loc.0,
            index: loc.1,
        });
        Rc::make_mut(&mut self.st.mem[loc.0 as usize].cells)[loc.1 as usize] = c;
        self.ops.push(Micro::Set(x, Bk::C(0)));
    }

    /// A concrete value the machine needs (a mutex word, a thread id, a size).
    fn conc(&mut self, t: u32, e: &Expr, src: SrcLoc, what: &str) -> R<Value> {
        match self.eval(t, e, src)? {
            (V::C(c), _) => Ok(c),
            _ => unsupported(format!("{what} computed from an input")),
        }
    }

    fn mutex_word(&self, loc: (u32, u32)) -> R<Value> {
        match self.cell(loc) {
            Cell::V(V::C(c)) => Ok(*c),
            Cell::Uninit | Cell::Destroyed => Ok(0),
            _ => unsupported("a mutex holding an input-dependent value"),
        }
    }

    /// Whether thread `t` may take a step (the machine's `thread_enabled` under SC): `None`
    /// when that depends on symbolic data in a way the engine cannot decide here (an
    /// `assume` on symbolic data is enabled: executing it is the decision).
    pub fn enabled(&self, t: u32) -> bool {
        let th = &self.st.threads[t as usize];
        if th.finished {
            return false;
        }
        let fr = th.frames.last().expect("frame");
        let ins = &self.prog.functions[fr.func as usize].body[fr.pc as usize];
        match &ins.op {
            Op::Lock(Addr::Global { obj, index }) => match self.concrete(t, index) {
                Some(Some(i)) => match self.st.mem[*obj as usize].cells.get(i as usize) {
                    Some(Cell::V(V::C(c))) => *c == 0,
                    _ => true,
                },
                _ => true,
            },
            Op::Lock(Addr::Ptr(e)) => match self.concrete(t, e) {
                Some(Some(v)) => match Ptr::decode(v) {
                    Some(p) => match self
                        .st
                        .mem
                        .get(p.obj as usize)
                        .and_then(|o| o.alive.then(|| o.cells.get(p.offset as usize)).flatten())
                    {
                        Some(Cell::V(V::C(c))) => *c == 0,
                        _ => true,
                    },
                    None => true,
                },
                _ => true,
            },
            Op::Join(e) => match self.concrete(t, e) {
                Some(Some(c))
                    if c >= 0 && (c as usize) < self.st.threads.len() && c as u32 != t =>
                {
                    self.st.threads[c as usize].finished
                }
                _ => true,
            },
            Op::Assume(c) => !matches!(self.concrete(t, c), Some(Some(0))),
            Op::ExitProcess => false,
            _ => true,
        }
    }

    /// What thread `t`'s next step touches, for sleep sets.
    pub fn access(&mut self, t: u32) -> Access {
        let th = &self.st.threads[t as usize];
        let fr = th.frames.last().expect("frame");
        let ins = &self.prog.functions[fr.func as usize].body[fr.pc as usize];
        let src = ins.loc;
        let op = ins.op.clone();
        // Resolution may fault or need data: then the step is dependent with everything.
        let at = |s: &mut Self, a: &Addr| -> Option<(u32, u32)> {
            let saved = (s.ops.len(), s.cursor, s.st.pc.len());
            let r = s.resolve(t, a, src).ok();
            s.ops.truncate(saved.0);
            s.cursor = saved.1;
            s.st.pc.truncate(saved.2);
            r
        };
        match &op {
            Op::Load { addr, .. } => at(self, addr).map_or(Access::All, Access::Read),
            Op::Store { addr, .. }
            | Op::Rmw { addr, .. }
            | Op::Lock(addr)
            | Op::Unlock(addr)
            | Op::TryLock { addr, .. }
            | Op::MutexDestroy(addr) => at(self, addr).map_or(Access::All, Access::Write),
            // A thread that ended the process never moves again: nothing can race with it.
            Op::Assume(_) | Op::Fence(_) | Op::ExitProcess => Access::None,
            _ => Access::All,
        }
    }

    /// Runs thread `t`'s visible instruction and the local ones after it, or, when some
    /// threads have local instructions pending, those (then `t` is not used). Also returns
    /// the micro-operations and the path condition up to where it ended or stopped.
    pub fn run(mut self, t: Option<u32>) -> (Result<End, Stop>, Vec<Micro>, Vec<Lit>) {
        let end = match self.run_inner(t) {
            Err(Stop::Fault(f)) => Ok(End::Fault(self.st.clone(), f)),
            Err(Stop::Unsupported(m)) => {
                let (f, src) = self.cur;
                Err(Stop::Unsupported(format!(
                    "{}:{} (in `{}`): {m}",
                    self.prog.file_name(src),
                    src.line,
                    self.prog.functions.get(f as usize).map_or("?", |f| &f.name)
                )))
            }
            other => other,
        };
        (end, self.ops, self.st.pc)
    }

    fn run_inner(&mut self, t: Option<u32>) -> R<End> {
        if self.st.pending.is_empty() {
            let Some(t) = t else {
                return unsupported("internal: no thread to run");
            };
            if !self.visible(t)? {
                return Ok(End::Blocked);
            }
            self.st.pending.push(t);
        }
        while let Some(&p) = self.st.pending.first() {
            if !self.run_locals(p)? {
                return Ok(End::Done(self.st.clone()));
            }
            self.st.pending.remove(0);
        }
        Ok(End::Done(self.st.clone()))
    }

    /// The visible instruction; `false` when the thread turns out blocked.
    fn visible(&mut self, t: u32) -> R<bool> {
        let (func, pc) = {
            let fr = self.st.threads[t as usize].frames.last().expect("frame");
            (fr.func, fr.pc)
        };
        let ins = &self.prog.functions[func as usize].body[pc as usize];
        let src = ins.loc;
        self.cur = (func, src);
        let mut advance = true;
        match &ins.op {
            Op::Load { dst, addr, copy } => {
                let loc = self.resolve(t, addr, src)?;
                if !copy && *self.cell(loc) == Cell::Uninit {
                    if self.prog.uninit_arbitrary {
                        // The front-end narrows a load of a narrower type right after it:
                        // the value read is one of that type's.
                        let bits =
                            match self.prog.functions[func as usize].body.get(pc as usize + 1) {
                                Some(fencer_ir::Instr {
                                    op:
                                        Op::Local {
                                            dst: d,
                                            expr: Expr::Un(UnOp::Sext(b) | UnOp::Zext(b), e),
                                        },
                                    ..
                                }) if d == dst && **e == Expr::Reg(*dst) => *b,
                                _ => 64,
                            };
                        self.havoc_cell(t, loc, bits)?;
                    } else {
                        return Err(self.fault(
                            t,
                            src,
                            "memory-error",
                            "read of an uninitialised value",
                        ));
                    }
                }
                let d = self.read_cell(loc);
                self.set_reg(t, *dst, d);
            }
            Op::Store { addr, value } => {
                let loc = self.resolve(t, addr, src)?;
                let d = self.eval(t, value, src)?;
                self.write_cell(loc, d);
            }
            Op::Rmw { dst, addr, op } => {
                let loc = self.resolve(t, addr, src)?;
                match self.cell(loc) {
                    Cell::Uninit if self.prog.uninit_arbitrary => self.havoc_cell(t, loc, 64)?,
                    Cell::Uninit => {
                        return Err(self.fault(
                            t,
                            src,
                            "memory-error",
                            "read of an uninitialised value",
                        ))
                    }
                    Cell::Destroyed => {
                        return Err(self.fault(t, src, "bad-mutex", "use of a destroyed mutex"))
                    }
                    Cell::V(_) => {}
                }
                let old = self.read_cell(loc);
                let written = match op {
                    RmwOp::Cas { expected, new } => {
                        let exp = self.eval(t, expected, src)?;
                        let new = self.eval(t, new, src)?;
                        let eq = self.binop(t, BinOp::Eq, old.clone(), exp, src)?;
                        let hit = match &eq.0 {
                            V::C(c) => *c != 0,
                            f => {
                                let f = truth(f).expect("symbolic");
                                let b = truth_bk(&eq.1);
                                self.decide(f, b, Kind::Split)?
                            }
                        };
                        hit.then_some(new)
                    }
                    RmwOp::FetchAdd(e) => {
                        let v = self.eval(t, e, src)?;
                        Some(self.binop(t, BinOp::Add, old.clone(), v, src)?)
                    }
                    RmwOp::Xchg(e) => Some(self.eval(t, e, src)?),
                    RmwOp::Fetch { op, value, bits } => {
                        let v = self.eval(t, value, src)?;
                        let w = self.binop(t, *op, old.clone(), v, src)?;
                        Some(self.unop(UnOp::Sext(*bits), w, false)?)
                    }
                };
                if let Some(w) = written {
                    self.write_cell(loc, w);
                }
                self.set_reg(t, *dst, old);
            }
            Op::Fence(_) => {}
            Op::Assume(c) => {
                let d = self.eval(t, c, src)?;
                match &d.0 {
                    V::C(0) => return Ok(false),
                    V::C(_) => {}
                    f => {
                        let f = truth(f).expect("symbolic");
                        let b = truth_bk(&d.1);
                        if !self.decide(f, b, Kind::Assume)? {
                            return Ok(false);
                        }
                    }
                }
            }
            Op::Lock(addr) => {
                let loc = self.resolve(t, addr, src)?;
                if *self.cell(loc) == Cell::Destroyed {
                    return Err(self.fault(t, src, "bad-mutex", "use of a destroyed mutex"));
                }
                if self.mutex_word(loc)? != 0 {
                    return Ok(false);
                }
                let v = t as Value + 1;
                self.write_cell(loc, (V::C(v), Bk::C(v)));
            }
            Op::TryLock { dst, addr } => {
                let loc = self.resolve(t, addr, src)?;
                if *self.cell(loc) == Cell::Destroyed {
                    return Err(self.fault(t, src, "bad-mutex", "use of a destroyed mutex"));
                }
                if self.mutex_word(loc)? == 0 {
                    let v = t as Value + 1;
                    self.write_cell(loc, (V::C(v), Bk::C(v)));
                    self.set_reg(t, *dst, (V::C(0), Bk::C(0)));
                } else {
                    self.set_reg(t, *dst, (V::C(1), Bk::C(1)));
                }
            }
            Op::MutexDestroy(addr) => {
                let loc = self.resolve(t, addr, src)?;
                if *self.cell(loc) == Cell::Destroyed {
                    return Err(self.fault(t, src, "bad-mutex", "use of a destroyed mutex"));
                }
                if self.mutex_word(loc)? != 0 {
                    return Err(self.fault(t, src, "bad-mutex", "destroy of a locked mutex"));
                }
                self.set_cell_state(loc, Cell::Destroyed);
            }
            Op::Unlock(addr) => {
                let loc = self.resolve(t, addr, src)?;
                if *self.cell(loc) == Cell::Destroyed {
                    return Err(self.fault(t, src, "bad-mutex", "use of a destroyed mutex"));
                }
                if self.mutex_word(loc)? != t as Value + 1 {
                    return Err(self.fault(
                        t,
                        src,
                        "bad-unlock",
                        "unlock of a mutex this thread does not hold",
                    ));
                }
                self.write_cell(loc, (V::C(0), Bk::C(0)));
            }
            Op::Spawn { dst, func, arg } => {
                let a = self.eval(t, arg, src)?;
                self.spawn(t, *dst, *func, a)?;
            }
            Op::SpawnIndirect { dst, target, arg } => {
                let v = self.conc(t, target, src, "a thread start address")?;
                let Some(func) = fencer_ir::func_of_ptr(v, self.prog.functions.len()) else {
                    return Err(self.fault(
                        t,
                        src,
                        "memory-error",
                        format!("thread start at {v}, which is not a function's address"),
                    ));
                };
                let a = self.eval(t, arg, src)?;
                self.spawn(t, *dst, func, a)?;
            }
            Op::Join(e) => {
                let c = self.conc(t, e, src, "a thread id")?;
                if c < 0 || c as usize >= self.st.threads.len() || c as u32 == t {
                    return Err(self.fault(
                        t,
                        src,
                        "bad-join",
                        format!("join of {c}, which is not another thread's id"),
                    ));
                }
                if !self.st.threads[c as usize].finished {
                    return Ok(false);
                }
            }
            Op::Alloc {
                dst,
                size,
                zeroed,
                stack,
            } => {
                let n = self.conc(t, size, src, "an allocation size")?;
                if !(1..=MAX_ALLOC).contains(&n) {
                    return Err(self.fault(
                        t,
                        src,
                        "memory-error",
                        format!(
                            "allocation of {n} cells (fencer allows 1 to {MAX_ALLOC}: \
                             offsets within an object are 32 bits)"
                        ),
                    ));
                }
                if n > 1 << 20 {
                    return unsupported("an allocation of more than 2^20 cells");
                }
                let obj = self.st.mem.len() as u32;
                let blank = if *zeroed {
                    Cell::V(V::C(0))
                } else {
                    Cell::Uninit
                };
                self.st.mem.push(Obj {
                    cells: Rc::new(vec![blank; n as usize]),
                    alive: true,
                    heap: true,
                });
                let p = Ptr { obj, offset: 0 }.encode();
                self.set_reg(t, *dst, (V::C(p), Bk::C(p)));
                if *stack {
                    let fr = self.st.threads[t as usize]
                        .frames
                        .last_mut()
                        .expect("frame");
                    fr.stack.push(obj);
                }
            }
            Op::Free(e) => {
                let v = self.conc(t, e, src, "a freed pointer")?;
                if v != 0 {
                    let err = match Ptr::decode(v) {
                        None => Some("free of a value that is not a pointer"),
                        Some(p) => match self.st.mem.get(p.obj as usize) {
                            None => Some("free of an invalid pointer"),
                            Some(o) if !o.heap || p.offset != 0 => {
                                Some("free of a pointer that malloc did not return")
                            }
                            Some(o) if !o.alive => Some("double free"),
                            _ => None,
                        },
                    };
                    if let Some(m) = err {
                        return Err(self.fault(t, src, "memory-error", m));
                    }
                    let obj = Ptr::decode(v).expect("checked").obj;
                    self.st.mem[obj as usize].alive = false;
                }
            }
            Op::Exit => {
                let obj = pending_stack_object(&self.st.mem, &self.st.threads[t as usize].frames)
                    .expect("an exit stops only to free a stack object");
                self.st.mem[obj as usize].alive = false;
                advance = false;
            }
            _ => return unsupported("internal: a local instruction scheduled as a step"),
        }
        if advance {
            self.st.threads[t as usize]
                .frames
                .last_mut()
                .expect("frame")
                .pc += 1;
        }
        Ok(true)
    }

    fn spawn(&mut self, t: u32, dst: Reg, func: FuncId, arg: D) -> R<()> {
        let child = self.st.threads.len() as u32;
        self.set_reg(t, dst, (V::C(child as Value), Bk::C(child as Value)));
        let f = &self.prog.functions[func as usize];
        let mut regs = vec![V::C(0); f.num_regs()];
        let mut init = Vec::new();
        if f.params > 0 && !regs.is_empty() {
            regs[0] = arg.0.clone();
            init.push((0, arg.1));
        }
        self.st.threads.push(Thread {
            frames: vec![Frame {
                func,
                pc: 0,
                regs: Rc::new(regs),
                ret: None,
                stack: Vec::new(),
            }],
            finished: false,
        });
        for r in 0..f.num_regs() as u32 {
            let x = self.svar(SVar::Reg {
                thread: child,
                depth: 0,
                reg: r,
            });
            let b = if r == 0 && !init.is_empty() {
                init[0].1.clone()
            } else {
                Bk::C(0)
            };
            self.ops.push(Micro::Set(x, b));
        }
        // The machine runs the child's local prefix within the spawn, before the parent's.
        self.st.pending.push(child);
        Ok(())
    }

    /// Local instructions until a visible one or the end of the thread (`true`), or a
    /// backward jump (`false`: the thread's locals stay pending).
    fn run_locals(&mut self, t: u32) -> R<bool> {
        for _ in 0..LOCAL_FUEL {
            let th = &self.st.threads[t as usize];
            if th.finished {
                return Ok(true);
            }
            let depth = th.frames.len();
            let fr = th.frames.last().expect("frame");
            let f = &self.prog.functions[fr.func as usize];
            let Some(ins) = f.body.get(fr.pc as usize) else {
                let th = &mut self.st.threads[t as usize];
                if th.frames.len() == 1 {
                    th.finished = true;
                    return Ok(true);
                }
                th.frames.pop();
                th.frames.last_mut().expect("caller").pc += 1;
                continue;
            };
            let src = ins.loc;
            self.cur = (fr.func, src);
            let body_len = f.body.len() as u32;
            macro_rules! fr {
                () => {
                    self.st.threads[t as usize]
                        .frames
                        .last_mut()
                        .expect("frame")
                };
            }
            match &ins.op {
                Op::Local { dst, expr } => {
                    let d = self.eval(t, expr, src)?;
                    self.set_reg(t, *dst, d);
                    fr!().pc += 1;
                }
                Op::Jump(to) => {
                    let here = fr!().pc;
                    fr!().pc = *to;
                    if *to <= here {
                        return Ok(false);
                    }
                }
                Op::Branch {
                    cond,
                    then_to,
                    else_to,
                } => {
                    let d = self.eval(t, cond, src)?;
                    let go = match &d.0 {
                        V::C(c) => *c != 0,
                        f => {
                            let f = truth(f).expect("symbolic");
                            let b = truth_bk(&d.1);
                            self.decide(f, b, Kind::Split)?
                        }
                    };
                    let here = fr!().pc;
                    let to = if go { *then_to } else { *else_to };
                    fr!().pc = to;
                    if to <= here {
                        return Ok(false);
                    }
                }
                Op::Assert { cond, text } => {
                    let d = self.eval(t, cond, src)?;
                    let ok = match &d.0 {
                        V::C(c) => *c != 0,
                        f => {
                            let f = truth(f).expect("symbolic");
                            let b = truth_bk(&d.1);
                            self.decide(f, b, Kind::Assert)?
                        }
                    };
                    if !ok {
                        return Err(self.fault(
                            t,
                            src,
                            "assertion",
                            format!("assertion `{text}` failed"),
                        ));
                    }
                    fr!().pc += 1;
                }
                Op::Call { dst, func, args } => {
                    let args: Vec<Expr> = args.clone();
                    self.call(t, depth, *dst, *func, &args, usize::MAX, src)?;
                }
                Op::CallIndirect { dst, target, args } => {
                    let v = self.conc(t, target, src, "a called address")?;
                    let Some(func) = fencer_ir::func_of_ptr(v, self.prog.functions.len()) else {
                        return Err(self.fault(
                            t,
                            src,
                            "memory-error",
                            format!("call of {v}, which is not a function's address"),
                        ));
                    };
                    let params = self.prog.functions[func as usize].params as usize;
                    let args: Vec<Expr> = args.clone();
                    self.call(t, depth, *dst, func, &args, params, src)?;
                }
                Op::Return(e) => {
                    let v = match e {
                        Some(e) => Some(self.eval(t, e, src)?),
                        None => None,
                    };
                    if depth == 1 {
                        fr!().pc = body_len;
                        self.st.threads[t as usize].finished = true;
                        return Ok(true);
                    }
                    let th = &mut self.st.threads[t as usize];
                    let done = th.frames.pop().expect("frame");
                    if let (Some(r), Some(v)) = (done.ret, v) {
                        self.set_reg(t, r, v);
                    }
                    fr!().pc += 1;
                }
                Op::Exit => {
                    let th = &self.st.threads[t as usize];
                    if pending_stack_object(&self.st.mem, &th.frames).is_some() {
                        return Ok(true);
                    }
                    let th = &mut self.st.threads[t as usize];
                    th.frames.truncate(1);
                    let root = &mut th.frames[0];
                    root.pc = self.prog.functions[root.func as usize].body.len() as u32;
                    th.finished = true;
                    return Ok(true);
                }
                // The thread stands here for good (`enabled` says no): the process ended.
                Op::ExitProcess => return Ok(true),
                Op::ThreadId { dst } => {
                    self.set_reg(t, *dst, (V::C(t as Value), Bk::C(t as Value)));
                    fr!().pc += 1;
                }
                Op::Nondet { dst, bits } => {
                    let k = self.st.inputs.len() as u32;
                    self.st.inputs.push((t, *bits));
                    if let Some((lo, hi)) = width_range(*bits) {
                        let x = Lin::var(k);
                        self.st.pc.push(Lit::Arith(
                            lin_add(&Lin::constant(lo), &x, -1).ok_or_else(ovf)?,
                            Rel::Le,
                        ));
                        self.st.pc.push(Lit::Arith(
                            lin_add(&x, &Lin::constant(hi), -1).ok_or_else(ovf)?,
                            Rel::Le,
                        ));
                    }
                    let th = &mut self.st.threads[t as usize];
                    let depth = th.frames.len() as u32 - 1;
                    Rc::make_mut(&mut th.frames.last_mut().expect("frame").regs)[*dst as usize] =
                        V::S(Lin::var(k));
                    let x = self.svar(SVar::Reg {
                        thread: t,
                        depth,
                        reg: *dst,
                    });
                    self.ops.push(Micro::Havoc(x, *bits));
                    fr!().pc += 1;
                }
                Op::Unsupported { message } => return unsupported(message.clone()),
                Op::LoopHead { .. } | Op::SpinBack { .. } => {
                    return unsupported("spin-loop instrumentation (not used by this engine)")
                }
                _ => return Ok(true),
            }
        }
        unsupported("a thread ran too many local instructions without a visible one")
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        t: u32,
        depth: usize,
        dst: Option<Reg>,
        func: FuncId,
        args: &[Expr],
        take: usize,
        src: SrcLoc,
    ) -> R<()> {
        if depth >= MAX_FRAMES {
            return unsupported("recursion deeper than the machine's frame limit");
        }
        let callee = &self.prog.functions[func as usize];
        let n = callee.num_regs();
        let mut vals = Vec::new();
        for a in args.iter().take(take) {
            vals.push(self.eval(t, a, src)?);
        }
        if vals.len() > n {
            return unsupported("a call with more arguments than the callee has registers");
        }
        let mut regs = vec![V::C(0); n];
        for (i, v) in vals.iter().enumerate() {
            regs[i] = v.0.clone();
        }
        self.st.threads[t as usize].frames.push(Frame {
            func,
            pc: 0,
            regs: Rc::new(regs),
            ret: dst,
            stack: Vec::new(),
        });
        for r in 0..n {
            let x = self.svar(SVar::Reg {
                thread: t,
                depth: depth as u32,
                reg: r as u32,
            });
            let b = vals.get(r).map(|v| v.1.clone()).unwrap_or(Bk::C(0));
            self.ops.push(Micro::Set(x, b));
        }
        Ok(())
    }
}

fn safe_neg(l: &Lit) -> R<Lit> {
    crate::wlp::neg_checked(l).ok_or_else(ovf)
}

fn ovf() -> Stop {
    Stop::Unsupported("a coefficient or constant beyond 64 bits".into())
}

fn pending_stack_object(mem: &[Obj], frames: &[Frame]) -> Option<u32> {
    frames
        .iter()
        .rev()
        .flat_map(|f| f.stack.iter().rev())
        .copied()
        .find(|&o| mem[o as usize].alive)
}

/// The machine's expression evaluation (`None` on division by zero).
pub fn eval_concrete(e: &Expr, regs: &[Value]) -> Option<Value> {
    Some(match e {
        Expr::Const(c) => *c,
        Expr::Reg(r) => regs.get(*r as usize).copied().unwrap_or(0),
        Expr::AddrOf(obj, i) => Ptr {
            obj: *obj,
            offset: eval_concrete(i, regs)? as u32,
        }
        .encode(),
        Expr::Un(op, a) => op.eval(eval_concrete(a, regs)?),
        Expr::Bin(op, a, b) => op.eval(eval_concrete(a, regs)?, eval_concrete(b, regs)?)?,
    })
}

/// What a step touches, for deciding whether two steps commute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Only the thread's own registers.
    None,
    Read((u32, u32)),
    Write((u32, u32)),
    /// Creates or ends threads, allocates, frees, joins, or could not be resolved.
    All,
}

pub fn independent(a: Access, b: Access) -> bool {
    match (a, b) {
        (Access::None, _) | (_, Access::None) => true,
        (Access::All, _) | (_, Access::All) => false,
        (Access::Read(x), Access::Read(y)) => {
            let _ = (x, y);
            true
        }
        (Access::Read(x) | Access::Write(x), Access::Read(y) | Access::Write(y)) => x != y,
    }
}
