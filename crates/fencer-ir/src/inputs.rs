//! Representative values of a program's inputs ([`Op::Nondet`]), for the engines that
//! enumerate them: each read of an input takes each value of its site's list, one run per
//! choice.
//!
//! A list is sound when it holds, for every value `v` the input can take and that does not
//! block at the assumes right after the read, a value `r` that every use of the input
//! treats as it treats `v`: running with `r` instead of `v` then changes nothing observable
//! (a value that blocks is no behaviour of the program, and what the thread does before
//! the assume that blocks it is local steps and passing assumes, which touch no memory
//! and which the run with any other value shows too). The analysis has three
//! ingredients:
//! - the full range of the input's width, in canonical form (sign-extended, also for C's
//!   unsigned types: `0xFFFFFFFF` is held as -1);
//! - narrowing by what follows the read ([`narrow`]): the values that every path through
//!   the thread's next local steps blocks at an `Op::Assume` need no representative;
//! - threshold-only uses ([`thresholds`]): an input that is only ever compared with
//!   constants needs one value per combination of the comparisons' outcomes, however wide
//!   it is (`if (r)` on an `int` needs 0 and 1).
//!
//! When the last does not apply, every value of the narrowed range is tried if there are at
//! most `limit` of them, and otherwise the site is [`Domain::Wide`].
//!
//! Both analyses rest on *leaves*: comparisons (`==`, `<`, `<u`, ...) of a constant with a
//! *view* of the input: the input itself, or it through sign or zero extensions and the
//! addition or subtraction of constants (`(unsigned char)c < 5`, `sext(r + 1) < 10`). On
//! the input's range, a view is increasing by one on each of a few segments (it wraps
//! between them), so a leaf changes its outcome only between the values next to a few
//! *points*, which [`points`] lists; both sides of every such change are among them.

use crate::spin::op_reads;
use crate::{BinOp, CondVar, Expr, FuncId, Function, Op, Program, Ptr, Reg, SrcLoc, UnOp, Value};
use std::collections::{HashMap, HashSet};

/// One input read: the `Op::Nondet` at `pc` of `func`, and the values to try for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSite {
    pub func: FuncId,
    pub pc: u32,
    pub loc: SrcLoc,
    pub bits: u8,
    pub domain: Domain,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Every value the engine must try, the default first: 0 when it is there, else the
    /// value closest to 0; then the others by distance to 0, the negative one first.
    Values(Vec<Value>),
    /// Too many values: `lo..=hi` is the range (after narrowing by assumes) and `count` its
    /// size, saturating (a 64-bit input has `u64::MAX`).
    Wide { lo: Value, hi: Value, count: u64 },
}

/// One entry per `Op::Nondet` of the program, in `(func, pc)` order. `limit`: most values
/// a [`Domain::Values`] may have.
pub fn input_sites(prog: &Program, limit: u64) -> Vec<InputSite> {
    let observed = Observed::new(prog);
    let mut out = Vec::new();
    for (fi, f) in prog.functions.iter().enumerate() {
        let func = fi as FuncId;
        for (pc, ins) in f.body.iter().enumerate() {
            if let Op::Nondet { dst, bits } = ins.op {
                let pc = pc as u32;
                out.push(InputSite {
                    func,
                    pc,
                    loc: ins.loc,
                    bits,
                    domain: domain(prog, func, pc, dst, bits, limit, &observed),
                });
            }
        }
    }
    out
}

/// The values a `bits`-wide input can take, in canonical form: `0..=1` for one bit, else
/// the signed range of the width.
pub fn full_range(bits: u8) -> (Value, Value) {
    match bits {
        0 => (0, 0),
        1 => (0, 1),
        64.. => (Value::MIN, Value::MAX),
        b => (-(1 << (b - 1)), (1 << (b - 1)) - 1),
    }
}

fn domain(
    prog: &Program,
    func: FuncId,
    pc: u32,
    dst: Reg,
    bits: u8,
    limit: u64,
    observed: &Observed,
) -> Domain {
    let full = full_range(bits);
    let Some((lo, hi)) = narrow(prog, func, pc, dst, full) else {
        // Every value blocks right after the read. One run still explores what the other
        // threads do meanwhile (this thread shows no event before it blocks).
        return bounded(vec![0], (0, 0), limit);
    };
    let f = &prog.functions[func as usize];
    if let Some(values) = thresholds(f, dst, full, (lo, hi), |r| observed.has(prog, func, r)) {
        return bounded(values, (lo, hi), limit);
    }
    let count = count(lo, hi);
    if count > limit {
        return Domain::Wide { lo, hi, count };
    }
    bounded((lo..=hi).collect(), (lo, hi), limit)
}

fn count(lo: Value, hi: Value) -> u64 {
    u64::try_from(hi as i128 - lo as i128 + 1).unwrap_or(u64::MAX)
}

fn bounded(mut values: Vec<Value>, (lo, hi): (Value, Value), limit: u64) -> Domain {
    if values.len() as u64 > limit {
        return Domain::Wide {
            lo,
            hi,
            count: count(lo, hi),
        };
    }
    values.sort_unstable_by_key(|&v| (v.unsigned_abs(), v));
    Domain::Values(values)
}

/// The registers final states report (see [`Program::reported_vars`]): replacing an
/// input's value there would show, so an input copied into one is not threshold-only.
struct Observed {
    regs: HashSet<(FuncId, Reg)>,
    /// Functions of static threads whose every named register is reported.
    all_named: HashSet<FuncId>,
}

impl Observed {
    fn new(prog: &Program) -> Observed {
        let mut vars = Vec::new();
        if let Some(c) = &prog.cond {
            c.expr.vars(&mut vars);
        }
        vars.extend(prog.observe.iter().cloned());
        let func = |t: u32| prog.threads.get(t as usize).map(|t| t.func);
        let regs = vars
            .iter()
            .filter_map(|v| match v {
                CondVar::Reg { thread, reg } => Some((func(*thread)?, *reg)),
                CondVar::Cell { .. } => None,
            })
            .collect();
        let explicit = prog.cond.is_some() || !prog.observe.is_empty() || prog.observe_explicit;
        let all_named = if explicit {
            HashSet::new()
        } else {
            prog.threads.iter().map(|t| t.func).collect()
        };
        Observed { regs, all_named }
    }

    fn has(&self, prog: &Program, func: FuncId, r: Reg) -> bool {
        if self.regs.contains(&(func, r)) {
            return true;
        }
        let f = &prog.functions[func as usize];
        self.all_named.contains(&func)
            && r >= f.params
            && f.reg_names
                .get(r as usize)
                .is_some_and(|n| !n.starts_with('%'))
    }
}

// ---------------------------------------------------------------------------------------
// Leaves, views and their points.

/// A comparison of a view of the input with a constant.
struct Leaf {
    cmp: Expr,
    points: Vec<Value>,
}

/// On the values `a..=b` of the input, a view is `v + off` (in `i128`, so that nothing
/// overflows on the way).
type Seg = (i128, i128, i128);

/// Most segments a view may have; each wrap of a view splits one, and a view that wraps
/// more often than this (`zext(x, 1)` of an `int`) is no leaf.
const SEGMENTS: usize = 16;

fn is_cmp(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge | ULt | ULe | UGt | UGe)
}

fn has_reg(e: &Expr) -> bool {
    match e {
        Expr::Const(_) => false,
        Expr::Reg(_) => true,
        Expr::AddrOf(_, a) | Expr::Un(_, a) => has_reg(a),
        Expr::Bin(_, a, b) => has_reg(a) || has_reg(b),
    }
}

/// Evaluates as the machine does (the same operators, `&&` and `||` short-circuit), every
/// register reading `x`; `None` on a fault or an unknown register.
fn eval(e: &Expr, x: Option<Value>) -> Option<Value> {
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(_) => x,
        Expr::AddrOf(obj, idx) => Some(
            Ptr {
                obj: *obj,
                offset: eval(idx, x)? as u32,
            }
            .encode(),
        ),
        Expr::Un(op, a) => Some(op.eval(eval(a, x)?)),
        Expr::Bin(op, a, b) => {
            let l = eval(a, x)?;
            match op {
                BinOp::LogAnd if l == 0 => Some(0),
                BinOp::LogOr if l != 0 => Some(1),
                _ => op.eval(l, eval(b, x)?),
            }
        }
    }
}

fn constant(e: &Expr) -> Option<Value> {
    if has_reg(e) {
        return None;
    }
    eval(e, None)
}

/// The segments of `e` as a view of the input (a register `var` holds), which ranges over
/// `range`; `None` when `e` is no view.
fn view(e: &Expr, var: &dyn Fn(Reg) -> bool, range: (Value, Value)) -> Option<Vec<Seg>> {
    match e {
        Expr::Reg(r) if var(*r) => Some(vec![(range.0 as i128, range.1 as i128, 0)]),
        // `Sext(0)` is the identity and `Zext(0)` is 0 (see `UnOp::eval`): no view worth the
        // special case.
        Expr::Un(UnOp::Sext(0) | UnOp::Zext(0), _) => None,
        Expr::Un(UnOp::Sext(n) | UnOp::Zext(n), a) if *n >= 64 => view(a, var, range),
        Expr::Un(UnOp::Sext(n), a) => wrap(view(a, var, range)?, *n as u32, true),
        Expr::Un(UnOp::Zext(n), a) => wrap(view(a, var, range)?, *n as u32, false),
        Expr::Bin(BinOp::Add, a, b) => {
            let (v, k) = match constant(b) {
                Some(k) => (a, k),
                None => (b, constant(a)?),
            };
            wrap(shift(view(v, var, range)?, k as i128), 64, true)
        }
        Expr::Bin(BinOp::Sub, a, b) => {
            let k = constant(b)?;
            wrap(shift(view(a, var, range)?, -(k as i128)), 64, true)
        }
        _ => None,
    }
}

fn shift(mut segs: Vec<Seg>, k: i128) -> Vec<Seg> {
    for s in &mut segs {
        s.2 += k;
    }
    segs
}

/// The view brought back to `n` bits: modulo `2^n` into `-2^(n-1)..2^(n-1)` (signed) or
/// `0..2^n`, splitting every segment where it wraps.
fn wrap(segs: Vec<Seg>, n: u32, signed: bool) -> Option<Vec<Seg>> {
    let m: i128 = 1 << n;
    let base = if signed { -(m / 2) } else { 0 };
    let mut out = Vec::new();
    for (a, b, off) in segs {
        let ka = (a + off - base).div_euclid(m);
        let kb = (b + off - base).div_euclid(m);
        if kb - ka >= SEGMENTS as i128 {
            return None;
        }
        for k in ka..=kb {
            // The values whose image is in `base + k*m ..= base + (k+1)*m - 1`.
            let lo = (base + k * m - off).max(a);
            let hi = (base + (k + 1) * m - 1 - off).min(b);
            out.push((lo, hi, off - k * m));
        }
    }
    (out.len() <= SEGMENTS).then_some(out)
}

/// The input values next to every change of outcome of a comparison of the view with
/// `c`. On a segment the image increases by one from value to value, staying in `i64`;
/// as it does, a signed comparison with `c` changes only between `c-1`, `c` and `c+1`
/// (`==` on both sides of `c`), and an unsigned one also where the image goes from -1 to
/// 0 (the unsigned order is the signed order on each side of it, which is how
/// `BinOp::eval` compares canonical values). The ends of the segments are where the view
/// wraps.
fn points(segs: &[Seg], c: Value) -> Vec<Value> {
    let c = c as i128;
    let mut out = Vec::new();
    for &(a, b, off) in segs {
        out.push(a as Value);
        out.push(b as Value);
        for t in [c - 1, c, c + 1, -1, 0] {
            let p = t - off;
            if a <= p && p <= b {
                out.push(p as Value);
            }
        }
    }
    out
}

/// Adds the leaves of `e` to `out` (the input is in the registers `var` names, ranging
/// over `range`); returns how many of `e`'s reads of those registers the leaves hold.
fn find_leaves(
    e: &Expr,
    var: &dyn Fn(Reg) -> bool,
    range: (Value, Value),
    out: &mut Vec<Leaf>,
) -> usize {
    match e {
        Expr::Bin(op, a, b) => {
            if is_cmp(*op) {
                for (v, k) in [(a, b), (b, a)] {
                    if let Some(c) = constant(k) {
                        if let Some(segs) = view(v, var, range) {
                            out.push(Leaf {
                                cmp: e.clone(),
                                points: points(&segs, c),
                            });
                            // A view reads one register, and the constant none.
                            return 1;
                        }
                    }
                }
            }
            find_leaves(a, var, range, out) + find_leaves(b, var, range, out)
        }
        Expr::Un(_, a) | Expr::AddrOf(_, a) => find_leaves(a, var, range, out),
        Expr::Const(_) | Expr::Reg(_) => 0,
    }
}

fn reads_of(e: &Expr, var: &dyn Fn(Reg) -> bool) -> usize {
    let mut regs = Vec::new();
    e.regs(&mut regs);
    regs.into_iter().filter(|&r| var(r)).count()
}

/// Whether every read of the input in `e` is in a leaf, so that `e` has one value on each
/// stretch of input values between two points of its leaves.
fn decomposable(e: &Expr, var: &dyn Fn(Reg) -> bool, range: (Value, Value)) -> bool {
    find_leaves(e, var, range, &mut Vec::new()) == reads_of(e, var)
}

// ---------------------------------------------------------------------------------------
// Narrowing.

/// Stands for the input in the symbolic values of [`narrow`]: no function has that many
/// registers.
const X: Reg = Reg::MAX;
/// Instructions [`narrow`] follows per site, over all paths: past it, a path is taken to
/// go on with every value.
const STEPS: usize = 4096;
/// Calls deep [`narrow`] follows (`assume_abort_if_not` is one).
const DEPTH: usize = 8;
/// Largest symbolic value kept; a larger one is unknown.
const EXPR_NODES: usize = 256;
/// Most points [`narrow`] cuts the range at; past it, no narrowing.
const POINTS: usize = 1 << 14;

#[derive(Clone)]
struct Frame {
    func: FuncId,
    pc: u32,
    /// The registers known as functions of the input (`X`) and constants; the others are
    /// unknown.
    regs: HashMap<Reg, Expr>,
    /// The caller's register for the result.
    ret: Option<Reg>,
}

#[derive(Clone)]
struct Path {
    frames: Vec<Frame>,
    /// Conditions over `X` with the outcome the path took, each decomposable.
    constraints: Vec<(Expr, bool)>,
}

enum Step {
    Next,
    Fork(Path),
    /// An assume that every value on the path fails.
    Blocked,
    /// Anything else: the path goes on with every value that satisfies its constraints.
    Exit,
}

/// The hull of the input values that some path through the thread's next steps does not
/// block (`None`: none). The steps followed are the invisible ones (locals, jumps, branches,
/// calls and returns) and assumes, so a value that blocks shows no event before it does;
/// anything else ends a path, which keeps every value that satisfies its constraints.
/// The registers are evaluated symbolically over the input; a branch on a function of it
/// that is decomposable into leaves forks with the condition as a constraint each way, a
/// branch on anything else forks without one, and an assume on a decomposable condition
/// constrains. Clang puts `&&` into branches, and `assume_abort_if_not` is a call: both are
/// followed. Then the leaves' points cut the range into pieces on each of which every
/// constraint has one outcome, and a piece is kept if some path's constraints all hold on
/// it; the result is exact up to the hull, and up to the conditions that are not
/// decomposable, which over-approximate.
fn narrow(
    prog: &Program,
    func: FuncId,
    pc: u32,
    dst: Reg,
    full: (Value, Value),
) -> Option<(Value, Value)> {
    let kept = paths(prog, func, pc, dst, full);
    let is_x = |r: Reg| r == X;
    let mut leaves = Vec::new();
    for (e, _) in kept.iter().flatten() {
        find_leaves(e, &is_x, full, &mut leaves);
    }
    let mut points: Vec<Value> = vec![full.0, full.1];
    points.extend(leaves.iter().flat_map(|l| l.points.iter().copied()));
    points.sort_unstable();
    points.dedup();
    if points.len() > POINTS {
        return if kept.is_empty() { None } else { Some(full) };
    }
    let mut pieces = Vec::new();
    for (i, &p) in points.iter().enumerate() {
        pieces.push((p, p));
        if let Some(&q) = points.get(i + 1) {
            if q as i128 - p as i128 >= 2 {
                pieces.push((p + 1, q - 1));
            }
        }
    }
    // A fault is no block: a condition that faults keeps the value.
    let passes = |x: Value| {
        kept.iter().any(|cs| {
            cs.iter()
                .all(|(e, want)| !matches!(eval(e, Some(x)), Some(v) if (v != 0) != *want))
        })
    };
    let lo = pieces.iter().find(|p| passes(p.0))?.0;
    let hi = pieces.iter().rev().find(|p| passes(p.0))?.1;
    Some((lo, hi))
}

/// The constraints of every path from the read that does not block (see [`narrow`]).
fn paths(
    prog: &Program,
    func: FuncId,
    pc: u32,
    dst: Reg,
    full: (Value, Value),
) -> Vec<Vec<(Expr, bool)>> {
    let regs = HashMap::from([(dst, Expr::Reg(X))]);
    let mut work = vec![Path {
        frames: vec![Frame {
            func,
            pc: pc + 1,
            regs,
            ret: None,
        }],
        constraints: Vec::new(),
    }];
    let mut kept = Vec::new();
    let mut budget = STEPS;
    while let Some(mut path) = work.pop() {
        loop {
            if budget == 0 {
                kept.push(path.constraints);
                break;
            }
            budget -= 1;
            match step(prog, &mut path, full) {
                Step::Next => {}
                Step::Fork(other) => work.push(other),
                Step::Blocked => break,
                Step::Exit => {
                    kept.push(path.constraints);
                    break;
                }
            }
        }
    }
    kept
}

fn can_fault(e: &Expr) -> bool {
    match e {
        Expr::Const(_) | Expr::Reg(_) => false,
        Expr::AddrOf(_, a) | Expr::Un(_, a) => can_fault(a),
        // A division by a constant other than 0 cannot fault (`offset % 3 == 0` in an
        // assume); signed division by -1 wraps on the machine, it does not fault either.
        Expr::Bin(op, a, b) => {
            (matches!(op, BinOp::Div | BinOp::Rem | BinOp::UDiv | BinOp::URem)
                && !matches!(**b, Expr::Const(c) if c != 0))
                || can_fault(a)
                || can_fault(b)
        }
    }
}

fn size(e: &Expr) -> usize {
    match e {
        Expr::Const(_) | Expr::Reg(_) => 1,
        Expr::AddrOf(_, a) | Expr::Un(_, a) => 1 + size(a),
        Expr::Bin(_, a, b) => 1 + size(a) + size(b),
    }
}

/// The symbolic value of `e`: `None` when it reads an unknown register.
fn subst(e: &Expr, regs: &HashMap<Reg, Expr>) -> Option<Expr> {
    fn go(e: &Expr, regs: &HashMap<Reg, Expr>) -> Option<Expr> {
        Some(match e {
            Expr::Const(v) => Expr::Const(*v),
            Expr::Reg(r) => regs.get(r)?.clone(),
            Expr::AddrOf(o, i) => Expr::AddrOf(*o, Box::new(go(i, regs)?)),
            Expr::Un(op, a) => Expr::Un(*op, Box::new(go(a, regs)?)),
            Expr::Bin(op, a, b) => Expr::bin(*op, go(a, regs)?, go(b, regs)?),
        })
    }
    let e = go(e, regs)?;
    if size(&e) > EXPR_NODES {
        return None;
    }
    match constant(&e) {
        Some(v) => Some(Expr::Const(v)),
        None => Some(e),
    }
}

fn set(regs: &mut HashMap<Reg, Expr>, r: Reg, v: Option<Expr>) {
    match v {
        Some(e) => regs.insert(r, e),
        None => regs.remove(&r),
    };
}

fn step(prog: &Program, path: &mut Path, full: (Value, Value)) -> Step {
    let depth = path.frames.len();
    let frame = path.frames.last_mut().expect("a path has a frame");
    let Some(ins) = prog
        .functions
        .get(frame.func as usize)
        .and_then(|f| f.body.get(frame.pc as usize))
    else {
        return Step::Exit;
    };
    let mut faults = false;
    ins.op.exprs(&mut |e| faults |= can_fault(e));
    if faults {
        // A fault is observable; where it happens, the path stops being followed.
        return Step::Exit;
    }
    let is_x = |r: Reg| r == X;
    match &ins.op {
        Op::Local { dst, expr } => {
            let v = subst(expr, &frame.regs);
            set(&mut frame.regs, *dst, v);
            frame.pc += 1;
        }
        Op::ThreadId { dst } | Op::LoopHead { dst } => {
            frame.regs.remove(dst);
            frame.pc += 1;
        }
        Op::Jump(t) => frame.pc = *t,
        Op::Branch {
            cond,
            then_to,
            else_to,
        } => {
            let (then_to, else_to) = (*then_to, *else_to);
            let cond = subst(cond, &frame.regs);
            match cond {
                Some(Expr::Const(v)) => frame.pc = if v != 0 { then_to } else { else_to },
                Some(e) if !has_reg(&e) => return Step::Exit,
                c => {
                    frame.pc = then_to;
                    let mut other = path.clone();
                    other.frames[depth - 1].pc = else_to;
                    if let Some(c) = c.filter(|e| decomposable(e, &is_x, full)) {
                        other.constraints.push((c.clone(), false));
                        path.constraints.push((c, true));
                    }
                    return Step::Fork(other);
                }
            }
        }
        Op::Assume(cond) => {
            match subst(cond, &frame.regs) {
                Some(Expr::Const(0)) => return Step::Blocked,
                Some(Expr::Const(_)) | None => {}
                Some(e) if !has_reg(&e) => return Step::Exit,
                Some(e) => {
                    if decomposable(&e, &is_x, full) {
                        path.constraints.push((e, true));
                    }
                }
            }
            path.frames[depth - 1].pc += 1;
        }
        Op::Call { dst, func, args } => {
            let Some(callee) = prog.functions.get(*func as usize) else {
                return Step::Exit;
            };
            if depth >= DEPTH {
                return Step::Exit;
            }
            let mut regs = HashMap::new();
            for (i, a) in args.iter().enumerate().take(callee.params as usize) {
                set(&mut regs, i as Reg, subst(a, &frame.regs));
            }
            frame.pc += 1;
            path.frames.push(Frame {
                func: *func,
                pc: 0,
                regs,
                ret: *dst,
            });
        }
        Op::Return(e) => {
            if depth == 1 {
                return Step::Exit;
            }
            let v = e.as_ref().and_then(|e| subst(e, &frame.regs));
            let done = path.frames.pop().expect("a callee frame");
            if let Some(d) = done.ret {
                set(&mut path.frames[depth - 2].regs, d, v);
            }
        }
        _ => return Step::Exit,
    }
    Step::Next
}

// ---------------------------------------------------------------------------------------
// Threshold-only uses.

/// The representatives of the input `dst` of `f` if it is only ever compared with
/// constants; its narrowed range is `lo..=hi`.
///
/// The input's registers are `dst` and, flow-insensitively, every register a plain copy
/// (`Local { dst, expr: Reg(r) }`) of one of them writes (the C front-end holds a local
/// variable in a register, so `int r = nondet(); if (r)` goes through copies). Every read
/// of one of them must be such a copy or in a leaf: a comparison of a view of it with a
/// constant. A read anywhere else (arithmetic, an address or a stored value, a call's
/// argument, a return value, a final state's register) gives up. A register may also hold
/// values that do not come from the input; a leaf over such a value has the same outcome
/// whatever the input is.
///
/// Then the program treats two input values alike when every leaf has the same outcome
/// on both: nothing else reads the input. The candidates `P` are the points of every leaf,
/// the ends of the range, 0 and -1, brought into `lo..=hi`. Why every value `v` of it is
/// treated as some candidate is: if `v` is not in `P`, let `p` be the largest member of
/// `P` below it (`lo` is in `P`). A leaf has one outcome on each stretch of values between
/// two changes, and both values next to a change are points ([`points`]); within
/// `lo..=hi`, the stretch of `v` starts at `lo` or right after a change, so its start is
/// in `P`, at most `v`, and, not being `v`, at most `p`. So `p` is in the stretch of `v`,
/// and every leaf gives `v` the outcome it gives `p`. (With `==`: were `p` the constant
/// `c`, `c+1` would be in `P`, above `p` and not above `v`: `v` itself.) Unsigned
/// comparisons change where the view goes from -1 to 0 as well, which are points too.
/// Last, the candidates are grouped by the vector of their leaves'
/// outcomes, and each group is kept once, as its value closest to 0 (the positive one of
/// two), so `if (r)` gives exactly 0 and 1.
fn thresholds(
    f: &Function,
    dst: Reg,
    full: (Value, Value),
    (lo, hi): (Value, Value),
    observed: impl Fn(Reg) -> bool,
) -> Option<Vec<Value>> {
    let n = f.num_regs().max(dst as usize + 1);
    let mut tainted = vec![false; n];
    tainted[dst as usize] = true;
    let mut changed = true;
    while changed {
        changed = false;
        for ins in &f.body {
            if let Op::Local {
                dst: d,
                expr: Expr::Reg(r),
            } = ins.op
            {
                let d = d as usize;
                if tainted.get(r as usize) == Some(&true) && d < n && !tainted[d] {
                    tainted[d] = true;
                    changed = true;
                }
            }
        }
    }
    if (0..n).any(|r| tainted[r] && observed(r as Reg)) {
        return None;
    }
    let var = |r: Reg| tainted.get(r as usize).copied().unwrap_or(false);
    let mut leaves = Vec::new();
    let mut reads = Vec::new();
    for ins in &f.body {
        reads.clear();
        op_reads(&ins.op, &mut reads);
        let uses = reads.iter().filter(|&&r| var(r)).count();
        if uses == 0 {
            continue;
        }
        let covered = match &ins.op {
            Op::Local {
                expr: Expr::Reg(r), ..
            } if var(*r) => 1,
            op => {
                let mut k = 0;
                op.exprs(&mut |e| k += find_leaves(e, &var, full, &mut leaves));
                k
            }
        };
        if covered != uses {
            return None;
        }
    }
    let mut candidates: Vec<Value> = [full.0, full.1, 0, -1, lo, hi]
        .into_iter()
        .chain(leaves.iter().flat_map(|l| l.points.iter().copied()))
        .map(|v| v.clamp(lo, hi))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    let mut seen = HashSet::new();
    let cmps: Vec<&Expr> = leaves
        .iter()
        .map(|l| &l.cmp)
        .filter(|e| seen.insert(*e))
        .collect();
    let mut groups: HashMap<Vec<Option<Value>>, Value> = HashMap::new();
    let key = |v: Value| (v.unsigned_abs(), v < 0);
    for &c in &candidates {
        let outcomes = cmps.iter().map(|e| eval(e, Some(c))).collect();
        let r = groups.entry(outcomes).or_insert(c);
        if key(c) < key(*r) {
            *r = c;
        }
    }
    Some(groups.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Addr, Instr, ObjKind, Object, RmwOp, ThreadDecl};
    use proptest::prelude::*;

    fn func(name: &str, params: u32, ops: Vec<Op>) -> Function {
        Function {
            name: name.into(),
            params,
            reg_names: (0..8).map(|i| format!("%r{i}")).collect(),
            body: ops
                .into_iter()
                .enumerate()
                .map(|(i, op)| Instr {
                    op,
                    loc: SrcLoc::new(0, i as u32 + 1, 1),
                })
                .collect(),
            loc: SrcLoc::NONE,
        }
    }

    fn program(functions: Vec<Function>) -> Program {
        let x = Object {
            name: "x".into(),
            kind: ObjKind::Shared,
            size: 1,
            init: Vec::new(),
            is_array: false,
            cell_names: Vec::new(),
            loc: SrcLoc::NONE,
        };
        let main = ThreadDecl {
            name: "main".into(),
            func: 0,
            arg: 0,
        };
        Program::new("t", vec![x], functions, vec![main])
    }

    /// The domains of the inputs of a program whose only function is `ops`.
    fn domains(ops: Vec<Op>, limit: u64) -> Vec<Domain> {
        let p = program(vec![func("main", 0, ops)]);
        input_sites(&p, limit)
            .into_iter()
            .map(|s| s.domain)
            .collect()
    }

    fn domain_of(ops: Vec<Op>) -> Domain {
        let mut d = domains(ops, 256);
        assert_eq!(d.len(), 1);
        d.pop().unwrap()
    }

    fn r(r: Reg) -> Expr {
        Expr::Reg(r)
    }
    fn k(v: Value) -> Expr {
        Expr::Const(v)
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::bin(op, a, b)
    }
    fn un(op: UnOp, a: Expr) -> Expr {
        Expr::Un(op, Box::new(a))
    }
    fn nondet(dst: Reg, bits: u8) -> Op {
        Op::Nondet { dst, bits }
    }
    fn local(dst: Reg, expr: Expr) -> Op {
        Op::Local { dst, expr }
    }
    /// `__VERIFIER_assume(e)` as the C front-end writes it.
    fn assume(e: Expr) -> Op {
        Op::Assume(bin(BinOp::Ne, e, k(0)))
    }
    fn store(value: Expr) -> Op {
        Op::Store {
            addr: Addr::scalar(0),
            value,
        }
    }
    /// A branch whose both ways go on at `to`.
    fn branch(cond: Expr, to: u32) -> Op {
        Op::Branch {
            cond,
            then_to: to,
            else_to: to,
        }
    }
    fn values(v: &[Value]) -> Domain {
        Domain::Values(v.to_vec())
    }

    #[test]
    fn full_ranges_are_canonical() {
        assert_eq!(full_range(1), (0, 1));
        assert_eq!(full_range(8), (-128, 127));
        assert_eq!(full_range(32), (i32::MIN as Value, i32::MAX as Value));
        assert_eq!(full_range(64), (Value::MIN, Value::MAX));
    }

    #[test]
    fn a_bool_takes_both_values() {
        let d = domain_of(vec![
            nondet(0, 1),
            branch(un(UnOp::Zext(1), r(0)), 2),
            Op::Return(None),
        ]);
        assert_eq!(d, values(&[0, 1]));
    }

    #[test]
    fn a_branch_on_nonzero_needs_zero_and_one() {
        // int r = nondet(); if (r) ...: through the copy into the variable's register.
        let d = domain_of(vec![
            nondet(0, 32),
            local(1, r(0)),
            branch(bin(BinOp::Ne, r(1), k(0)), 3),
            Op::Return(None),
        ]);
        assert_eq!(d, values(&[0, 1]));
    }

    #[test]
    fn arithmetic_needs_every_value_or_is_wide() {
        let ops = vec![nondet(0, 8), store(r(0))];
        let mut all: Vec<Value> = (-128..=127).collect();
        all.sort_by_key(|&v| (v.unsigned_abs(), v));
        assert_eq!(all[..4], [0, -1, 1, -2]);
        assert_eq!(domains(ops.clone(), 256), vec![Domain::Values(all)]);
        assert_eq!(
            domains(ops, 100),
            vec![Domain::Wide {
                lo: -128,
                hi: 127,
                count: 256
            }]
        );
    }

    #[test]
    fn a_copy_then_arithmetic_is_not_threshold_only() {
        let d = domain_of(vec![
            nondet(0, 32),
            local(1, r(0)),
            branch(bin(BinOp::Lt, r(1), k(3)), 3),
            store(bin(BinOp::Add, r(1), k(1))),
        ]);
        assert_eq!(
            d,
            Domain::Wide {
                lo: i32::MIN as Value,
                hi: i32::MAX as Value,
                count: 1 << 32
            }
        );
    }

    #[test]
    fn a_64_bit_input_counts_saturate() {
        let d = domain_of(vec![nondet(0, 64), store(r(0))]);
        assert_eq!(
            d,
            Domain::Wide {
                lo: Value::MIN,
                hi: Value::MAX,
                count: u64::MAX
            }
        );
        // Compared only, it needs two values like any other.
        let d = domain_of(vec![nondet(0, 64), branch(r(0), 2)]);
        assert!(matches!(d, Domain::Wide { .. }), "{d:?}");
        let d = domain_of(vec![nondet(0, 64), branch(bin(BinOp::Ne, r(0), k(0)), 2)]);
        assert_eq!(d, values(&[0, 1]));
    }

    #[test]
    fn assumes_narrow_the_range() {
        let d = domain_of(vec![
            nondet(0, 32),
            local(1, r(0)),
            assume(bin(BinOp::Ge, r(1), k(0))),
            assume(bin(BinOp::Lt, r(1), k(4))),
            store(bin(BinOp::Mul, r(1), k(2))),
        ]);
        assert_eq!(d, values(&[0, 1, 2, 3]));
        // Either operand order, negated, and both at once.
        let d = domain_of(vec![
            nondet(0, 32),
            assume(un(
                UnOp::Not,
                bin(
                    BinOp::LogOr,
                    bin(BinOp::Gt, k(-2), r(0)),
                    bin(BinOp::Le, k(2), r(0)),
                ),
            )),
            store(r(0)),
        ]);
        assert_eq!(d, values(&[0, -1, 1, -2]));
    }

    #[test]
    fn unsigned_assumes_narrow_in_canonical_form() {
        // unsigned u = nondet(); assume(u < 3);
        let d = domain_of(vec![
            nondet(0, 32),
            assume(bin(BinOp::ULt, r(0), k(3))),
            store(r(0)),
        ]);
        assert_eq!(d, values(&[0, 1, 2]));
        // unsigned char c = nondet(); assume(c >= 254): 254 and 255 are held as -2 and -1.
        let d = domain_of(vec![
            nondet(0, 8),
            assume(bin(BinOp::UGe, r(0), k(-2))),
            store(r(0)),
        ]);
        assert_eq!(d, values(&[-1, -2]));
        // Through the zero extension the C front-end writes for `(int)c >= 254`.
        let d = domain_of(vec![
            nondet(0, 8),
            assume(bin(BinOp::Ge, un(UnOp::Zext(8), r(0)), k(254))),
            store(r(0)),
        ]);
        assert_eq!(d, values(&[-1, -2]));
    }

    #[test]
    fn assumes_behind_branches_narrow() {
        // assume(0 <= m && m < 3), as clang -O0 writes `&&`: a branch, and the phi's
        // copies on each edge.
        let d = domain_of(vec![
            nondet(0, 32),
            local(1, r(0)),
            Op::Branch {
                cond: bin(BinOp::Le, k(0), r(1)),
                then_to: 3,
                else_to: 5,
            },
            local(2, bin(BinOp::Lt, r(1), k(3))),
            Op::Jump(6),
            local(2, k(0)),
            assume(r(2)),
            store(r(1)),
        ]);
        assert_eq!(d, values(&[0, 1, 2]));
    }

    #[test]
    fn an_assume_in_a_called_function_narrows() {
        // void assume_abort_if_not(int cond) { if (!cond) abort(); }, with SV-COMP's
        // `abort()` an assume that fails and `unreachable` after it.
        let callee = func(
            "assume_abort_if_not",
            1,
            vec![
                local(1, r(0)),
                Op::Branch {
                    cond: bin(BinOp::Xor, bin(BinOp::Ne, r(1), k(0)), k(1)),
                    then_to: 2,
                    else_to: 4,
                },
                Op::Assume(k(0)),
                Op::Assert {
                    cond: k(0),
                    text: "unreachable".into(),
                },
                Op::Return(None),
            ],
        );
        let main = func(
            "main",
            0,
            vec![
                nondet(0, 8),
                Op::Call {
                    dst: None,
                    func: 1,
                    args: vec![bin(BinOp::Gt, r(0), k(5))],
                },
                store(r(0)),
            ],
        );
        let sites = input_sites(&program(vec![main, callee]), 256);
        let mut want: Vec<Value> = (6..=127).collect();
        want.sort_by_key(|&v| (v.unsigned_abs(), v));
        assert_eq!(sites[0].domain, Domain::Values(want));
    }

    #[test]
    fn an_assume_no_value_passes_keeps_zero() {
        let d = domain_of(vec![
            nondet(0, 32),
            assume(bin(BinOp::Gt, r(0), k(5))),
            assume(bin(BinOp::Lt, r(0), k(3))),
            store(r(0)),
        ]);
        assert_eq!(d, values(&[0]));
    }

    #[test]
    fn narrowing_stops_at_unknowns_and_events() {
        let wide8 = Domain::Wide {
            lo: -128,
            hi: 127,
            count: 256,
        };
        // A visible event before the assume: every value shows it.
        let ops = vec![
            nondet(0, 8),
            store(k(1)),
            assume(bin(BinOp::Lt, r(0), k(3))),
            assume(bin(BinOp::Gt, r(0), k(0))),
            store(r(0)),
        ];
        assert_eq!(domains(ops, 100), vec![wide8.clone()]);
        // A comparison with a value that is not known.
        let ops = vec![
            nondet(0, 8),
            assume(bin(BinOp::Lt, r(0), r(1))),
            store(r(0)),
        ];
        assert_eq!(domains(ops, 100), vec![wide8.clone()]);
        // Arithmetic on the input before the comparison.
        let ops = vec![
            nondet(0, 8),
            assume(bin(BinOp::Lt, bin(BinOp::Mul, r(0), k(2)), k(3))),
            store(r(0)),
        ];
        assert_eq!(domains(ops, 100), vec![wide8]);
        // A view of it is exact: `(signed char)(x + 1) < -100` holds for -128..=-102 and
        // for 127, which wraps.
        let ops = vec![
            nondet(0, 8),
            assume(bin(
                BinOp::Lt,
                un(UnOp::Sext(8), bin(BinOp::Add, r(0), k(1))),
                k(-100),
            )),
            store(r(0)),
        ];
        assert_eq!(
            domains(ops, 100),
            vec![Domain::Wide {
                lo: -128,
                hi: 127,
                count: 256
            }]
        );
        let ops = vec![
            nondet(0, 8),
            assume(bin(
                BinOp::Lt,
                un(UnOp::Sext(8), bin(BinOp::Add, r(0), k(1))),
                k(-100),
            )),
            assume(bin(BinOp::Lt, r(0), k(0))),
            store(r(0)),
        ];
        let mut want: Vec<Value> = (-128..=-102).collect();
        want.sort_by_key(|&v| (v.unsigned_abs(), v));
        assert_eq!(domains(ops, 100), vec![Domain::Values(want)]);
    }

    #[test]
    fn thresholds_keep_one_value_per_outcome() {
        // if (n == 7) ... else if (n < 10) ...
        let d = domain_of(vec![
            nondet(0, 32),
            local(1, r(0)),
            Op::Branch {
                cond: bin(BinOp::Eq, r(1), k(7)),
                then_to: 3,
                else_to: 4,
            },
            store(k(3)),
            branch(bin(BinOp::Lt, r(1), k(10)), 5),
            Op::Return(None),
        ]);
        assert_eq!(d, values(&[0, 7, 10]));
    }

    #[test]
    fn thresholds_within_the_narrowed_range() {
        let d = domain_of(vec![
            nondet(0, 32),
            assume(bin(BinOp::Ge, r(0), k(0))),
            branch(bin(BinOp::Lt, r(0), k(10)), 3),
            Op::Return(None),
        ]);
        assert_eq!(d, values(&[0, 10]));
        // The ends of the range stand for what lies beyond the constants.
        let d = domain_of(vec![
            nondet(0, 32),
            assume(bin(BinOp::Ge, r(0), k(20))),
            assume(bin(BinOp::Le, r(0), k(30))),
            branch(bin(BinOp::Lt, r(0), k(10)), 4),
            Op::Return(None),
        ]);
        assert_eq!(d, values(&[20]));
    }

    #[test]
    fn thresholds_see_through_extensions_and_offsets() {
        // (unsigned char)c < 5: 0..=4 or not.
        let d = domain_of(vec![
            nondet(0, 8),
            branch(bin(BinOp::Lt, un(UnOp::Zext(8), r(0)), k(5)), 2),
        ]);
        assert_eq!(d, values(&[0, -1]));
        // r + 1 < 5, wrapping at INT_MAX.
        let d = domain_of(vec![
            nondet(0, 32),
            local(
                1,
                bin(
                    BinOp::Lt,
                    un(UnOp::Sext(32), bin(BinOp::Add, r(0), k(1))),
                    k(5),
                ),
            ),
            store(r(1)),
        ]);
        assert_eq!(d, values(&[0, 4]));
        // A narrower view is no leaf.
        let d = domain_of(vec![
            nondet(0, 32),
            branch(bin(BinOp::Lt, un(UnOp::Zext(1), r(0)), k(1)), 2),
        ]);
        assert!(matches!(d, Domain::Wide { .. }), "{d:?}");
    }

    #[test]
    fn reads_outside_comparisons_are_not_thresholds() {
        let is_cmp = bin(BinOp::Eq, r(1), k(0));
        let others = [
            store(r(1)),
            Op::Store {
                addr: Addr::Global {
                    obj: 0,
                    index: r(1),
                },
                value: k(0),
            },
            Op::Return(Some(r(1))),
            Op::Call {
                dst: None,
                func: 0,
                args: vec![r(1)],
            },
            Op::Spawn {
                dst: 2,
                func: 0,
                arg: r(1),
            },
            Op::Rmw {
                dst: 2,
                addr: Addr::scalar(0),
                op: RmwOp::FetchAdd(r(1)),
            },
            Op::SpinBack { to: 0, start: 1 },
            branch(bin(BinOp::Lt, r(1), r(2)), 0),
            branch(bin(BinOp::Add, r(1), k(1)), 0),
            branch(bin(BinOp::Lt, bin(BinOp::Mul, r(1), k(2)), k(5)), 0),
            local(2, bin(BinOp::Or, r(1), k(0))),
        ];
        for other in others {
            let d = domain_of(vec![
                nondet(0, 32),
                local(1, r(0)),
                branch(is_cmp.clone(), 3),
                other.clone(),
            ]);
            assert!(matches!(d, Domain::Wide { .. }), "{other:?}: {d:?}");
        }
    }

    #[test]
    fn reported_registers_are_not_thresholds() {
        // Without a condition, the final states show every named register of `main`.
        let mut f = func(
            "main",
            0,
            vec![
                nondet(0, 32),
                local(1, r(0)),
                branch(bin(BinOp::Eq, r(1), k(0)), 3),
            ],
        );
        f.reg_names[1] = "r".into();
        let mut p = program(vec![f]);
        assert!(matches!(
            input_sites(&p, 256)[0].domain,
            Domain::Wide { .. }
        ));
        p.observe_explicit = true;
        assert_eq!(input_sites(&p, 256)[0].domain, values(&[0, 1]));
    }

    #[test]
    fn sites_are_listed_in_order_and_limited() {
        let main = func(
            "main",
            0,
            vec![
                nondet(0, 1),
                nondet(1, 8),
                branch(bin(BinOp::Ne, r(1), k(0)), 3),
                Op::Call {
                    dst: None,
                    func: 1,
                    args: vec![],
                },
            ],
        );
        let other = func("f", 0, vec![store(k(1)), nondet(3, 16), store(r(3))]);
        let sites = input_sites(&program(vec![main, other]), 2);
        let summary: Vec<_> = sites
            .iter()
            .map(|s| (s.func, s.pc, s.loc.line, s.bits))
            .collect();
        assert_eq!(summary, vec![(0, 0, 1, 1), (0, 1, 2, 8), (1, 1, 2, 16)]);
        // An input nothing reads needs one value.
        assert_eq!(sites[0].domain, values(&[0]));
        assert_eq!(sites[1].domain, values(&[0, 1]));
        assert_eq!(
            sites[2].domain,
            Domain::Wide {
                lo: -32768,
                hi: 32767,
                count: 65536
            }
        );
        // A list of representatives longer than the limit is wide too.
        let sites = input_sites(
            &program(vec![func(
                "main",
                0,
                vec![
                    nondet(0, 8),
                    branch(bin(BinOp::Lt, r(0), k(3)), 2),
                    branch(bin(BinOp::Lt, r(0), k(30)), 3),
                ],
            )]),
            2,
        );
        assert_eq!(
            sites[0].domain,
            Domain::Wide {
                lo: -128,
                hi: 127,
                count: 256
            }
        );
    }

    // ------------------------------------------------------------------------------
    // Properties, checked by brute force over 8- and 16-bit inputs.

    const CMPS: [BinOp; 10] = [
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::ULt,
        BinOp::ULe,
        BinOp::UGt,
        BinOp::UGe,
    ];

    /// A comparison of a view of register `reg` with a constant.
    #[derive(Clone, Debug)]
    struct Cmp {
        op: usize,
        c: Value,
        swap: bool,
        view: u8,
        offset: Value,
        reg: Reg,
    }

    fn constant_strategy() -> impl Strategy<Value = Value> {
        prop_oneof![
            -300 as Value..300,
            -70_000 as Value..70_000,
            Just(Value::MIN),
            Just(Value::MAX),
            Just(255),
            Just(65_535),
        ]
    }

    fn cmp_strategy() -> impl Strategy<Value = Cmp> {
        (
            0..CMPS.len(),
            constant_strategy(),
            any::<bool>(),
            0u8..4,
            -5 as Value..5,
            0 as Reg..3,
        )
            .prop_map(|(op, c, swap, view, offset, reg)| Cmp {
                op,
                c,
                swap,
                view,
                offset,
                reg,
            })
    }

    impl Cmp {
        fn expr(&self, bits: u8) -> Expr {
            let v = match self.view {
                0 => r(self.reg),
                1 => un(UnOp::Zext(bits), r(self.reg)),
                2 => un(UnOp::Sext(bits), r(self.reg)),
                _ => un(
                    UnOp::Sext(bits),
                    bin(BinOp::Add, r(self.reg), k(self.offset)),
                ),
            };
            let (a, b) = if self.swap {
                (k(self.c), v)
            } else {
                (v, k(self.c))
            };
            bin(CMPS[self.op], a, b)
        }
    }

    /// Registers 0 (the input), 1 and 2 (its copies); the assume right after the read,
    /// then each comparison as a branch, a local or a stored value.
    fn threshold_program(bits: u8, first: &Option<Cmp>, cmps: &[(Cmp, u8)]) -> Program {
        let mut ops = vec![nondet(0, bits)];
        if let Some(c) = first {
            ops.push(assume(c.expr(bits).clone()));
        }
        ops.push(local(1, r(0)));
        ops.push(local(2, r(1)));
        for (c, how) in cmps {
            let e = c.expr(bits);
            let next = ops.len() as u32 + 1;
            match how {
                0 => ops.push(branch(e, next)),
                1 => {
                    ops.push(local(3, e));
                    ops.push(store(r(3)));
                }
                _ => ops.push(store(bin(BinOp::Add, e, k(1)))),
            }
        }
        ops.push(Op::Return(None));
        program(vec![func("main", 0, ops)])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn prop_thresholds_cover_every_value(
            sixteen in any::<bool>(),
            first in proptest::option::of(cmp_strategy()),
            cmps in proptest::collection::vec((cmp_strategy(), 0u8..3), 1..6),
        ) {
            let bits = if sixteen { 16 } else { 8 };
            // The assume comes before the copies: it reads the input's own register.
            let first = first.map(|c| Cmp { reg: 0, ..c });
            let p = threshold_program(bits, &first, &cmps);
            let sites = input_sites(&p, 1 << 20);
            let Domain::Values(reps) = &sites[0].domain else {
                panic!("not threshold-only: {:?}", sites[0].domain);
            };
            let n = cmps.len() + first.is_some() as usize;
            // A comparison cuts the range at most three times (unsigned: at 0 and at its
            // constant; `==`: on both sides of it), and a view's wrap once more.
            prop_assert!(reps.len() <= 4 * n + 1, "{reps:?}");
            let mut sorted = reps.clone();
            sorted.sort_by_key(|&v| (v.unsigned_abs(), v));
            prop_assert_eq!(&sorted, reps);
            let exprs: Vec<Expr> = first
                .iter()
                .chain(cmps.iter().map(|(c, _)| c))
                .map(|c| c.expr(bits))
                .collect();
            let outcomes = |v: Value| -> Vec<Option<Value>> {
                exprs.iter().map(|e| eval(e, Some(v))).collect()
            };
            let covered: HashSet<Vec<Option<Value>>> = reps.iter().map(|&v| outcomes(v)).collect();
            let (lo, hi) = full_range(bits);
            for v in lo..=hi {
                if let Some(c) = &first {
                    if eval(&c.expr(bits), Some(v)) == Some(0) {
                        continue;
                    }
                }
                prop_assert!(covered.contains(&outcomes(v)), "{v} has no representative in {reps:?}");
            }
        }
    }

    fn cond_strategy() -> impl Strategy<Value = Expr> {
        let leaf = cmp_strategy().prop_map(|c| Cmp { reg: 0, ..c }.expr(8));
        leaf.prop_recursive(3, 12, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|a| un(UnOp::Not, a)),
                inner.clone().prop_map(|a| bin(BinOp::Xor, a, k(1))),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| bin(BinOp::LogAnd, a, b)),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| bin(BinOp::LogOr, a, b)),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| bin(BinOp::And, a, b)),
                (inner.clone(), inner).prop_map(|(a, b)| bin(BinOp::Or, a, b)),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn prop_narrowing_is_the_hull_of_the_passing_values(
            conds in proptest::collection::vec(cond_strategy(), 1..4),
        ) {
            let mut ops = vec![nondet(0, 8)];
            ops.extend(conds.iter().map(|c| assume(c.clone())));
            ops.push(store(r(0)));
            let d = domain_of(ops);
            let pass: Vec<Value> = (-128..=127)
                .filter(|&v| conds.iter().all(|c| eval(c, Some(v)) != Some(0)))
                .collect();
            let mut want: Vec<Value> = match (pass.first(), pass.last()) {
                (Some(&lo), Some(&hi)) => (lo..=hi).collect(),
                _ => vec![0],
            };
            want.sort_by_key(|&v| (v.unsigned_abs(), v));
            prop_assert_eq!(d, Domain::Values(want));
        }
    }
}
