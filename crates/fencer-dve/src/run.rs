//! What a DVE system does: the enabled transitions of a packed state and their successors
//! (DiVinE 2's asynchronous semantics: one process moves, or a sender and a receiver move
//! together on a rendezvous channel; buffered channels take one process each).
//!
//! Run-time errors are what DiVinE makes them: division by zero, an index out of range, or
//! a value out of its variable's range on assignment ends the transition in an error,
//! reported with the transition that made it.

use crate::ast::Span;
use crate::ast::{BinOp, Type, UnOp};
use crate::sem::{apply_binop, load, store, CExpr, Place, SyncOp, System, Var};

/// A run-time error and where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtError {
    pub message: String,
    pub span: Span,
}

/// Where a step leads: a state, or the run-time error it ends in.
pub type Next<'a> = Result<&'a [u8], RtError>;

/// Which transitions a step took: (process, transition index), the sender first for a
/// rendezvous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub first: (u32, u32),
    pub second: Option<(u32, u32)>,
}

impl System {
    #[inline]
    fn state_of(&self, s: &[u8], p: usize) -> u32 {
        load(s, self.processes[p].state_var, 0) as u32
    }

    pub fn eval(&self, e: &CExpr, s: &[u8]) -> Result<i32, RtError> {
        self.ev(e, s).map_err(|at| self.explain(at, s))
    }

    /// `eval` on the hot path: a failure is only the expression that failed (a pointer,
    /// so the result fits in registers), its message is made by `explain`.
    #[inline]
    fn ev<'e>(&self, e: &'e CExpr, s: &[u8]) -> Result<i32, &'e CExpr> {
        Ok(match e {
            CExpr::Const(c) => *c,
            CExpr::Load(v) => load(s, *v, 0),
            CExpr::Index(v, i, _) => {
                let k = self.operand(i, s)?;
                if !(0..v.len.unwrap_or(1) as i32).contains(&k) {
                    return Err(e);
                }
                load(s, *v, k as u32)
            }
            CExpr::InState { proc, state } => (self.state_of(s, *proc) == *state) as i32,
            CExpr::VarConst(op, x, c) => apply_binop(*op, load(s, *x, 0), *c).ok_or(e)?,
            CExpr::VarVar(op, x, y) => apply_binop(*op, load(s, *x, 0), load(s, *y, 0)).ok_or(e)?,
            CExpr::Unary(op, a) => {
                let a = self.operand(a, s)?;
                match op {
                    UnOp::Neg => a.wrapping_neg(),
                    UnOp::Not => (a == 0) as i32,
                    UnOp::BitNot => !a,
                }
            }
            CExpr::Binary(op, a, b, _) => {
                let x = self.operand(a, s)?;
                // `and`, `or`, `imply` do not evaluate what they do not need (a guard
                // `i < N and a[i] == 0` must not fail on the index).
                match op {
                    BinOp::And if x == 0 => return Ok(0),
                    BinOp::Or if x != 0 => return Ok(1),
                    BinOp::Imply if x == 0 => return Ok(1),
                    _ => {}
                }
                let y = self.operand(b, s)?;
                apply_binop(*op, x, y).ok_or(e)?
            }
        })
    }

    /// An operand: constants, variables, process states and array elements at a constant
    /// or variable index (most operands) without a call.
    #[inline(always)]
    fn operand<'e>(&self, e: &'e CExpr, s: &[u8]) -> Result<i32, &'e CExpr> {
        match e {
            CExpr::Const(c) => Ok(*c),
            CExpr::Load(v) => Ok(load(s, *v, 0)),
            CExpr::InState { proc, state } => Ok((self.state_of(s, *proc) == *state) as i32),
            CExpr::VarConst(op, x, c) => apply_binop(*op, load(s, *x, 0), *c).ok_or(e),
            CExpr::Index(v, i, _) if matches!(**i, CExpr::Const(_) | CExpr::Load(_)) => {
                let k = match **i {
                    CExpr::Const(c) => c,
                    CExpr::Load(x) => load(s, x, 0),
                    _ => unreachable!(),
                };
                if !(0..v.len.unwrap_or(1) as i32).contains(&k) {
                    return Err(e);
                }
                Ok(load(s, *v, k as u32))
            }
            _ => self.ev(e, s),
        }
    }

    /// The run-time error of `at`, an expression that failed to evaluate in `s` (its
    /// operands did not).
    #[cold]
    fn explain(&self, at: &CExpr, s: &[u8]) -> RtError {
        match at {
            CExpr::Index(v, i, span) => {
                let k = self.ev(i, s).unwrap_or_default();
                index_error(k, v.len.unwrap_or(1) as i32, *span)
            }
            CExpr::Binary(_, _, _, span) => RtError {
                message: "division by zero".into(),
                span: *span,
            },
            _ => unreachable!("only indexing and division fail"),
        }
    }

    /// Stores `v` at `place`. The fast path returns a bool-sized result; errors are
    /// built out of line.
    #[inline]
    pub(crate) fn assign(
        &self,
        place: &Place,
        v: i32,
        s: &mut [u8],
        span: Span,
    ) -> Result<(), RtError> {
        let (var, k) = match place {
            Place::Scalar(var) => (*var, 0),
            Place::Element(var, i, ispan) => {
                let k = self.operand(i, s).map_err(|at| self.explain(at, s))?;
                let len = var.len.unwrap_or(1) as i32;
                if !(0..len).contains(&k) {
                    return Err(index_error(k, len, *ispan));
                }
                (*var, k as u32)
            }
        };
        if !var.ty.fits(v) {
            return Err(range_error(var, v, span));
        }
        store(s, var, k, v);
        Ok(())
    }

    /// Transition `t` of process `p`'s effect on `s` (compiled: `code.rs`).
    #[inline]
    fn effect(&self, p: usize, t: usize, s: &mut [u8]) -> Result<(), RtError> {
        match self.code.trans[p][t].effect(s) {
            Ok(()) => Ok(()),
            Err(k) => Err(self.effect_error(p, t, k, s)),
        }
    }

    /// The error of assignment `k` of transition `t` of process `p`, which failed in `s`
    /// (the assignments before it done): the reference evaluator's.
    #[cold]
    fn effect_error(&self, p: usize, t: usize, k: usize, s: &[u8]) -> RtError {
        let tr = &self.processes[p].trans[t];
        let (place, e) = &tr.effect[k];
        let mut s = s.to_vec();
        let r = match self.operand(e, &s) {
            Err(at) => Err(self.explain(at, &s)),
            Ok(v) => self.assign(place, v, &mut s, tr.span),
        };
        r.err().unwrap_or_else(|| disagree(tr.span))
    }

    fn enabled(&self, p: usize, t: usize, s: &[u8]) -> Result<bool, RtError> {
        let tr = &self.processes[p].trans[t];
        if self.state_of(s, p) != tr.from {
            return Ok(false);
        }
        self.guard_holds(p, t, s)
    }

    /// Whether transition `t` of process `p` has its guard true in `s` (compiled); its
    /// control state is not checked.
    #[inline]
    fn guard_holds(&self, p: usize, t: usize, s: &[u8]) -> Result<bool, RtError> {
        match &self.code.trans[p][t].guard {
            None => Ok(true),
            Some(g) => match g(s) {
                Some(v) => Ok(v != 0),
                None => Err(self.guard_error(p, t, s)),
            },
        }
    }

    #[cold]
    fn guard_error(&self, p: usize, t: usize, s: &[u8]) -> RtError {
        let tr = &self.processes[p].trans[t];
        match &tr.guard {
            Some(g) => self.eval(g, s).err(),
            None => None,
        }
        .unwrap_or_else(|| disagree(tr.span))
    }

    /// Whether some process (not the property) is in a committed state: then only
    /// committed processes may move.
    #[inline]
    fn committed(&self, s: &[u8]) -> bool {
        self.code.any_commit && self.committed_slow(s)
    }

    fn committed_slow(&self, s: &[u8]) -> bool {
        self.processes
            .iter()
            .enumerate()
            .any(|(p, pr)| !pr.property && pr.commit[self.state_of(s, p) as usize])
    }

    /// Every successor of `s` under the system's processes (the property process, if any,
    /// does not move here): `f(label, successor or error)`. `buf` is scratch space.
    pub fn successors(&self, s: &[u8], buf: &mut Vec<u8>, f: &mut dyn FnMut(Label, Next<'_>)) {
        if load(s, self.error_var, 0) != 0 {
            return;
        }
        let committed = self.committed(s);
        let is_commit = |p: usize| self.processes[p].commit[self.state_of(s, p) as usize];
        for (p, pr) in self.processes.iter().enumerate() {
            if pr.property {
                continue;
            }
            let here = self.state_of(s, p);
            let code = &self.code.trans[p];
            for &t in pr.leaving(here) {
                let t = t as usize;
                let tc = &code[t];
                let label = Label {
                    first: (p as u32, t as u32),
                    second: None,
                };
                if let Some(g) = &tc.guard {
                    match g(s) {
                        Some(0) => continue,
                        Some(_) => {}
                        None => {
                            if !committed || is_commit(p) {
                                f(label, Err(self.guard_error(p, t, s)));
                            }
                            continue;
                        }
                    }
                }
                if tc.plain {
                    // No channel (most transitions): the effect alone.
                    if committed && !is_commit(p) {
                        continue;
                    }
                    buf.clear();
                    buf.extend_from_slice(s);
                    match tc.effect(buf) {
                        Ok(()) => f(label, Ok(buf)),
                        Err(k) => {
                            let e = self.effect_error(p, t, k, buf);
                            f(label, Err(e))
                        }
                    }
                    continue;
                }
                let tr = &pr.trans[t];
                match &tr.sync {
                    None => unreachable!("a transition without a channel is plain"),
                    Some((c, SyncOp::Send(values))) => {
                        let ch = &self.channels[*c];
                        if ch.size > 0 {
                            if committed && !is_commit(p) {
                                continue;
                            }
                            let count = ch.count.expect("buffered");
                            let n = load(s, count, 0) as u32;
                            if n >= ch.size {
                                continue;
                            }
                            buf.clear();
                            buf.extend_from_slice(s);
                            let r = (|| {
                                let mut at = count.offset + 1 + n * ch.msg_width;
                                for (ty, e) in ch.items.iter().zip(values) {
                                    let v = self.eval(e, s)?;
                                    let var = Var {
                                        offset: at,
                                        ty: *ty,
                                        len: None,
                                    };
                                    check(var, v, tr.span)?;
                                    store(buf, var, 0, v);
                                    at += ty.width();
                                }
                                store(buf, count, 0, n as i32 + 1);
                                self.effect(p, t, buf)
                            })();
                            match r {
                                Ok(()) => f(label, Ok(buf)),
                                Err(e) => f(label, Err(e)),
                            }
                            continue;
                        }
                        // Rendezvous: every enabled receiver on the channel.
                        let sent: Result<Vec<i32>, RtError> =
                            values.iter().map(|e| self.eval(e, s)).collect();
                        for (q, qr) in self.processes.iter().enumerate() {
                            if q == p || qr.property {
                                continue;
                            }
                            let there = self.state_of(s, q);
                            for &u in qr.leaving(there) {
                                let (u, ur) = (u as usize, &qr.trans[u as usize]);
                                let Some((c2, SyncOp::Recv(places))) = &ur.sync else {
                                    continue;
                                };
                                if c2 != c {
                                    continue;
                                }
                                if committed && !is_commit(p) && !is_commit(q) {
                                    continue;
                                }
                                let label = Label {
                                    first: (p as u32, t as u32),
                                    second: Some((q as u32, u as u32)),
                                };
                                match self.enabled(q, u, s) {
                                    Ok(false) => continue,
                                    Err(e) => {
                                        f(label, Err(e));
                                        continue;
                                    }
                                    Ok(true) => {}
                                }
                                buf.clear();
                                buf.extend_from_slice(s);
                                let r = (|| {
                                    let sent = sent.clone()?;
                                    for (place, v) in places.iter().zip(&sent) {
                                        self.assign(place, *v, buf, ur.span)?;
                                    }
                                    self.effect(p, t, buf)?;
                                    self.effect(q, u, buf)
                                })();
                                match r {
                                    Ok(()) => f(label, Ok(buf)),
                                    Err(e) => f(label, Err(e)),
                                }
                            }
                        }
                    }
                    Some((c, SyncOp::Recv(places))) => {
                        let ch = &self.channels[*c];
                        if ch.size == 0 {
                            continue; // taken with its sender
                        }
                        if committed && !is_commit(p) {
                            continue;
                        }
                        let count = ch.count.expect("buffered");
                        let n = load(s, count, 0) as u32;
                        if n == 0 {
                            continue;
                        }
                        buf.clear();
                        buf.extend_from_slice(s);
                        let r = (|| {
                            // Take the oldest message, shift the rest down.
                            let base = count.offset + 1;
                            let mut at = base;
                            let mut vals = Vec::with_capacity(ch.items.len());
                            for ty in &ch.items {
                                vals.push(load(
                                    s,
                                    Var {
                                        offset: at,
                                        ty: *ty,
                                        len: None,
                                    },
                                    0,
                                ));
                                at += ty.width();
                            }
                            let w = ch.msg_width as usize;
                            let (b, e) = (base as usize, (base + n * ch.msg_width) as usize);
                            buf.copy_within(b + w..e, b);
                            for x in &mut buf[e - w..e] {
                                *x = 0;
                            }
                            store(buf, count, 0, n as i32 - 1);
                            for (place, v) in places.iter().zip(&vals) {
                                self.assign(place, *v, buf, tr.span)?;
                            }
                            self.effect(p, t, buf)
                        })();
                        match r {
                            Ok(()) => f(label, Ok(buf)),
                            Err(e) => f(label, Err(e)),
                        }
                    }
                }
            }
        }
    }

    /// The successors of `s` in the product with the property process (a Büchi
    /// automaton): each system step paired with each property transition enabled in the
    /// system's *source* state; when the system cannot move, the property moves alone
    /// (DIVINE's semantics). Without a property process, the system's successors. The
    /// property's move is the label's `second` when the system step was a single one, and
    /// is folded into the state only otherwise (labels name the system's steps).
    pub fn product_successors(
        &self,
        s: &[u8],
        buf: &mut Vec<u8>,
        f: &mut dyn FnMut(Label, Next<'_>),
    ) {
        let Some(pp) = self.property else {
            return self.successors(s, buf, f);
        };
        let prop = &self.processes[pp];
        let here = self.state_of(s, pp);
        // The property transitions enabled in the source state (guards that fail to
        // evaluate count as not enabled).
        // On the stack when small (nearly always): this runs once per product state.
        let (mut few, mut many) = ([0u32; 16], Vec::new());
        let mut n = 0;
        for &t in prop.leaving(here) {
            let (t, tr) = (t as usize, &prop.trans[t as usize]);
            if self.enabled(pp, t, s).unwrap_or(false) {
                if n < few.len() {
                    few[n] = tr.to;
                } else {
                    if n == few.len() {
                        many.extend_from_slice(&few);
                    }
                    many.push(tr.to);
                }
                n += 1;
            }
        }
        let moves: &[u32] = if many.is_empty() { &few[..n] } else { &many };
        if moves.is_empty() {
            return;
        }
        let mut any = false;
        let (mut small, mut large) = ([0u8; 128], Vec::new());
        let next: &mut [u8] = if s.len() <= small.len() {
            &mut small[..s.len()]
        } else {
            large.resize(s.len(), 0);
            &mut large
        };
        self.successors(s, buf, &mut |l, r| {
            any = true;
            // A run-time error leads to the error sink: this state, marked.
            let mut sink = Vec::new();
            let r = match r {
                Err(e) => {
                    f(l, Err(e));
                    sink.extend_from_slice(s);
                    store(&mut sink, self.error_var, 0, 1);
                    Ok(&sink[..])
                }
                Ok(t) => Ok(t),
            };
            match r {
                Err(e) => f(l, Err(e)),
                Ok(t) => {
                    for &to in moves {
                        next.copy_from_slice(t);
                        store(next, prop.state_var, 0, to as i32);
                        f(l, Ok(next));
                    }
                }
            }
        });
        if !any {
            for &t in prop.leaving(here) {
                let (t, tr) = (t as usize, &prop.trans[t as usize]);
                if self.enabled(pp, t, s).unwrap_or(false) {
                    buf.clear();
                    buf.extend_from_slice(s);
                    store(buf, prop.state_var, 0, tr.to as i32);
                    f(
                        Label {
                            first: (pp as u32, t as u32),
                            second: None,
                        },
                        Ok(buf),
                    );
                }
            }
        }
    }

    /// Whether the property process is in an accepting state.
    pub fn accepting(&self, s: &[u8]) -> bool {
        self.property
            .is_some_and(|p| self.processes[p].accept[self.state_of(s, p) as usize])
    }

    /// Whether some process has an assertion (else no state needs `failed_assertion`).
    pub fn has_assertions(&self) -> bool {
        self.processes.iter().any(|p| !p.asserts.is_empty())
    }

    /// The first assertion that fails in `s`: (process, the assertion's text).
    pub fn failed_assertion(&self, s: &[u8]) -> Option<(usize, String)> {
        for (p, pr) in self.processes.iter().enumerate() {
            if pr.asserts.is_empty() {
                continue;
            }
            let here = self.state_of(s, p);
            for (st, e, text) in &pr.asserts {
                if *st == here && self.eval(e, s).map_or(true, |v| v == 0) {
                    return Some((p, text.clone()));
                }
            }
        }
        None
    }

    /// How a step reads in a counterexample: `P: a -> b` (and `Q: c -> d` for a
    /// rendezvous).
    pub fn describe(&self, l: Label) -> String {
        let one = |(p, t): (u32, u32)| {
            let pr = &self.processes[p as usize];
            format!("{}: {}", pr.name, pr.trans[t as usize].text)
        };
        match l.second {
            None => one(l.first),
            Some(b) => format!("{} with {}", one(l.first), one(b)),
        }
    }

    /// The variables (and process states) that differ between two states, as
    /// `name=value`, for counterexample lines.
    pub fn changes(&self, a: &[u8], b: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        let mut var = |name: &str, v: Var| {
            for k in 0..v.len.unwrap_or(1) {
                let (x, y) = (load(a, v, k), load(b, v, k));
                if x != y {
                    match v.len {
                        Some(_) => out.push(format!("{name}[{k}]={y}")),
                        None => out.push(format!("{name}={y}")),
                    }
                }
            }
        };
        for (n, v) in &self.globals {
            var(n, *v);
        }
        for pr in &self.processes {
            for (n, v) in &pr.locals {
                var(&format!("{}->{n}", pr.name), *v);
            }
        }
        out
    }
}

/// The compiled code failed where the reference evaluator does not: a bug, reported as an
/// error (a violation to look at) rather than a panic or a silent success.
#[cold]
fn disagree(span: Span) -> RtError {
    RtError {
        message: "internal error: the compiled and the reference evaluator disagree".into(),
        span,
    }
}

fn check(var: Var, v: i32, span: Span) -> Result<(), RtError> {
    if var.ty.fits(v) {
        Ok(())
    } else {
        Err(range_error(var, v, span))
    }
}

#[cold]
fn range_error(var: Var, v: i32, span: Span) -> RtError {
    RtError {
        message: format!(
            "value {v} out of range of {}",
            match var.ty {
                Type::Byte => "byte (0..255)",
                Type::Int => "int (-32768..32767)",
            }
        ),
        span,
    }
}

#[cold]
fn index_error(k: i32, len: i32, span: Span) -> RtError {
    let valid = match len {
        0 => "it has no element".to_string(),
        1 => "the only valid index is 0".to_string(),
        n => format!("valid indices are 0 to {}", n - 1),
    };
    RtError {
        message: format!(
            "index {k} is out of range: the array has {len} element{}, {valid}",
            if len == 1 { "" } else { "s" }
        ),
        span,
    }
}
