//! Names resolved, sorts checked, and the file made into the engine's system: guards in
//! disjunctive form split into one transition per disjunct (as Cubicle does), `forall_other`
//! guards separated, point updates `A[p] := v` made into `case`s over all cells.

use crate::ast::*;
use fencer_param::{
    Atom, Formula, Global, Lin, Lit, ProcRef, Quantified, Rel, Rhs as PRhs, Sort, System, Term,
    Transition, Update,
};
use fencer_text::Diagnostic;
use std::collections::HashMap;

/// The memory model of a Cubicle-W file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `weak` variables are ordinary ones and `fence()` is true (Cubicle-W's `-model SC`;
    /// classic Cubicle files are always read this way).
    Sc,
    /// x86-TSO over the weak variables (Cubicle-W's default).
    Tso,
}

struct Cx<'a> {
    path: &'a str,
    src: &'a str,
    file: &'a File,
    types: Vec<(String, Vec<String>)>,
    /// Type names to sorts.
    sorts: HashMap<String, Sort>,
    ctors: HashMap<String, (u32, u32)>,
    globals: Vec<Global>,
    gids: HashMap<String, u32>,
    procs: Option<u8>,
    depth: u32,
    mode: Mode,
    /// Under TSO, what an access to a weak global means where it is being lowered.
    weak: WeakCx,
}

/// Where weak memory is being accessed (TSO only): `init` sets memory itself, `unsafe`
/// reads it through a named thread (`p @ X`), a transition through its thread `[p]`.
#[derive(Clone, Copy, PartialEq)]
enum WeakCx {
    Memory,
    Unsafe,
    At(ProcRef),
    Thread(Option<ProcRef>),
    Invariant,
}

/// A lowered term: a value of a non-arithmetic sort, or a number.
enum T {
    V(Term, Sort),
    N(Lin, Sort),
}

type R<X> = Result<X, Diagnostic>;

pub fn lower(path: &str, src: &str, file: &File, mode: Mode) -> R<System> {
    let mut cx = Cx {
        path,
        src,
        file,
        types: vec![("bool".into(), vec!["False".into(), "True".into()])],
        sorts: HashMap::new(),
        ctors: HashMap::new(),
        globals: Vec::new(),
        gids: HashMap::new(),
        procs: file.number_procs.map(|(n, _)| n as u8),
        depth: 0,
        mode,
        weak: WeakCx::Memory,
    };
    cx.sorts.insert("bool".into(), Sort::Enum(0));
    cx.ctors.insert("False".into(), (0, 0));
    cx.ctors.insert("True".into(), (0, 1));
    cx.sorts.insert("int".into(), Sort::Int);
    cx.sorts.insert("real".into(), Sort::Real);
    cx.sorts.insert("proc".into(), Sort::Proc);
    for t in &file.types {
        if cx.sorts.contains_key(&t.name) {
            return Err(cx.err(
                t.span,
                format!("the type `{}` is declared twice", t.name),
                "again",
            ));
        }
        if t.constructors.is_empty() {
            cx.sorts.insert(t.name.clone(), Sort::Abstract);
            continue;
        }
        let id = cx.types.len() as u32;
        for (i, (c, s)) in t.constructors.iter().enumerate() {
            if cx.ctors.insert(c.clone(), (id, i as u32)).is_some() {
                return Err(cx.err(
                    *s,
                    format!("the constructor `{c}` is declared twice"),
                    "again",
                ));
            }
        }
        cx.types.push((
            t.name.clone(),
            t.constructors.iter().map(|c| c.0.clone()).collect(),
        ));
        cx.sorts.insert(t.name.clone(), Sort::Enum(id));
    }
    for g in &file.globals {
        let sort = match cx.sorts.get(&g.sort.0) {
            Some(s) => *s,
            None => {
                return Err(cx.err(
                    g.sort.1,
                    format!("unknown type `{}`", g.sort.0),
                    "not declared",
                ))
            }
        };
        if cx.gids.contains_key(&g.name) || cx.ctors.contains_key(&g.name) {
            return Err(cx.err(g.span, format!("`{}` is declared twice", g.name), "again"));
        }
        cx.gids.insert(g.name.clone(), cx.globals.len() as u32);
        cx.globals.push(Global {
            name: g.name.clone(),
            sort,
            arity: g.arity,
            weak: g.weak && mode == Mode::Tso,
        });
    }
    let mut sys = System {
        types: Vec::new(),
        globals: Vec::new(),
        procs: cx.procs,
        init: Quantified {
            vars: 0,
            formula: Formula::True,
        },
        unsafe_: Vec::new(),
        invariants: Vec::new(),
        transitions: Vec::new(),
        tso: mode == Mode::Tso && file.has_weak(),
    };
    // Several `init`s are one conjunction; their variables are all universal.
    let mut parts = Vec::new();
    let mut vars = 0u8;
    for q in &file.inits {
        let scope: Vec<(String, ProcRef)> = q
            .vars
            .iter()
            .enumerate()
            .map(|(i, v)| (v.0.clone(), ProcRef::Var(vars + i as u8)))
            .collect();
        cx.check_vars(&q.vars)?;
        parts.push(cx.formula(&q.body, &scope)?);
        vars += q.vars.len() as u8;
    }
    sys.init = Quantified {
        vars,
        formula: Formula::And(parts),
    };
    if file.unsafes.is_empty() {
        return Err(cx.err(
            Span {
                start: src.len(),
                end: src.len(),
            },
            "expected an `unsafe (...) { ... }` declaration: there is nothing to check",
            "no unsafe formula",
        ));
    }
    cx.weak = WeakCx::Unsafe;
    for q in &file.unsafes {
        sys.unsafe_.push(cx.quant(q)?);
    }
    cx.weak = WeakCx::Invariant;
    for q in &file.invariants {
        sys.invariants.push(cx.quant(q)?);
    }
    for t in &file.transitions {
        cx.transition(t, &mut sys.transitions)?;
    }
    sys.types = cx.types;
    sys.globals = cx.globals;
    Ok(sys)
}

impl Cx<'_> {
    fn err(&self, span: Span, msg: impl Into<String>, label: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.path, self.src, span, msg, label)
    }

    fn check_vars(&self, vars: &[(String, Span)]) -> R<()> {
        for (i, (v, s)) in vars.iter().enumerate() {
            if vars[..i].iter().any(|w| &w.0 == v) {
                return Err(self.err(
                    *s,
                    format!("the process variable `{v}` is bound twice"),
                    "again",
                ));
            }
        }
        if vars.len() > 8 {
            return Err(self.err(vars[8].1, "at most 8 process variables", "one too many"));
        }
        Ok(())
    }

    fn quant(&mut self, q: &Quant) -> R<Quantified> {
        self.check_vars(&q.vars)?;
        let scope: Vec<(String, ProcRef)> = q
            .vars
            .iter()
            .enumerate()
            .map(|(i, v)| (v.0.clone(), ProcRef::Var(i as u8)))
            .collect();
        Ok(Quantified {
            vars: q.vars.len() as u8,
            formula: self.formula(&q.body, &scope)?,
        })
    }

    fn proc(&self, a: &ProcArg, scope: &[(String, ProcRef)]) -> R<ProcRef> {
        match a {
            ProcArg::Var(v, s) => scope
                .iter()
                .rev()
                .find(|x| &x.0 == v)
                .map(|x| x.1)
                .ok_or_else(|| {
                    self.err(
                        *s,
                        format!("unknown process variable `{v}`"),
                        "not bound here",
                    )
                }),
            ProcArg::Const(k, s) => match self.procs {
                Some(n) if *k <= n as u32 => Ok(ProcRef::Const(*k as u8 - 1)),
                Some(n) => Err(self.err(
                    *s,
                    format!("`#{k}` is beyond `number_procs {n}`"),
                    "no such process",
                )),
                None => Err(self
                    .err(
                        *s,
                        format!("the process constant `#{k}` needs a `number_procs` line"),
                        "no fixed processes",
                    )
                    .with_help("put `number_procs N` at the top of the file")),
            },
        }
    }

    fn term(&mut self, e: &Expr, scope: &[(String, ProcRef)]) -> R<T> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(self.err(e.span(), "this term is nested too deeply", "too deep"));
        }
        let r = self.term_inner(e, scope);
        self.depth -= 1;
        r
    }

    fn term_inner(&mut self, e: &Expr, scope: &[(String, ProcRef)]) -> R<T> {
        let cell = |cx: &Self, name: &str, idx: &[ProcArg], span: Span| -> R<T> {
            let Some(&g) = cx.gids.get(name) else {
                return Err(cx.err(span, format!("unknown variable `{name}`"), "not declared"));
            };
            let glob = &cx.globals[g as usize];
            if glob.arity as usize != idx.len() {
                return Err(cx.err(
                    span,
                    format!(
                        "`{name}` takes {} process indices, not {}",
                        glob.arity,
                        idx.len()
                    ),
                    "wrong number of indices",
                ));
            }
            let idx = idx
                .iter()
                .map(|a| cx.proc(a, scope))
                .collect::<R<Vec<_>>>()?;
            let a = if glob.weak {
                match cx.weak {
                    WeakCx::Memory => Atom::Cell(g, idx),
                    WeakCx::At(p) => Atom::Read(g, idx, p, 0),
                    WeakCx::Thread(Some(p)) => Atom::Read(g, idx, p, fencer_param::tso::NEW),
                    WeakCx::Thread(None) => {
                        return Err(cx
                            .err(span, format!("under TSO, the weak `{name}` is read by a transition without a thread"), "which thread reads it?")
                            .with_help("mark the thread that runs the transition: `transition t ([p] ...)`"))
                    }
                    WeakCx::Unsafe => {
                        return Err(cx
                            .err(span, format!("under TSO, `unsafe` reads the weak `{name}` through a thread"), "whose view?")
                            .with_help(format!("write `p @ {name}` for the value thread `p` sees")))
                    }
                    WeakCx::Invariant => {
                        return Err(cx.err(
                            span,
                            "invariants over weak variables are not supported under TSO",
                            "a weak variable",
                        ))
                    }
                }
            } else {
                Atom::Cell(g, idx)
            };
            Ok(if glob.sort.arith() {
                T::N(Lin::atom(a), glob.sort)
            } else {
                T::V(Term::Atom(a), glob.sort)
            })
        };
        match e {
            Expr::Upper(n, s) => {
                if let Some(&(t, i)) = self.ctors.get(n) {
                    return Ok(T::V(Term::Val(i), Sort::Enum(t)));
                }
                cell(self, n, &[], *s)
            }
            Expr::Index(n, idx, s) => cell(self, n, idx, *s),
            Expr::Lower(v, s) => Ok(T::V(
                Term::Proc(self.proc(&ProcArg::Var(v.clone(), *s), scope)?),
                Sort::Proc,
            )),
            Expr::ProcConst(k, s) => Ok(T::V(
                Term::Proc(self.proc(&ProcArg::Const(*k, *s), scope)?),
                Sort::Proc,
            )),
            Expr::Int(n, _) => Ok(T::N(Lin::constant(*n), Sort::Int)),
            Expr::Real(n, _) => Ok(T::N(Lin::constant(*n), Sort::Real)),
            Expr::Add(a, b, s) | Expr::Sub(a, b, s) => {
                let f = if matches!(e, Expr::Add(..)) { 1 } else { -1 };
                let (x, sx) = self.num(a, scope)?;
                let (y, sy) = self.num(b, scope)?;
                let sort = self.join(sx, sy, *s)?;
                let r = x.add_scaled(&y, f);
                self.small(&r, *s)?;
                Ok(T::N(r, sort))
            }
            Expr::Neg(a, s) => {
                let (x, sx) = self.num(a, scope)?;
                let r = Lin::default().add_scaled(&x, -1);
                self.small(&r, *s)?;
                Ok(T::N(r, sx))
            }
            Expr::Mul(k, a, s) => {
                let (x, sx) = self.num(a, scope)?;
                if x.terms
                    .iter()
                    .any(|t| t.1.checked_mul(*k).is_none_or(|v| v.abs() > 1 << 40))
                    || x.k.checked_mul(*k).is_none_or(|v| v.abs() > 1 << 40)
                {
                    return Err(self.err(*s, "this constant is too large", "overflow"));
                }
                Ok(T::N(Lin::default().add_scaled(&x, *k), sx))
            }
            Expr::At(p, x, s) => {
                let p = self.proc(p, scope)?;
                if self.mode == Mode::Sc || self.weak == WeakCx::At(p) {
                    // Under SC a read by `p` is the variable's value.
                    return self.term(x, scope);
                }
                if self.weak != WeakCx::Unsafe {
                    return Err(self.err(
                        *s,
                        "`p @ X` reads are only supported in `unsafe` formulas",
                        "not allowed here",
                    ));
                }
                if !matches!(&**x, Expr::Upper(..) | Expr::Index(..)) {
                    return Err(self.err(
                        x.span(),
                        "`p @ X` reads a weak variable or array cell",
                        "not a variable",
                    ));
                }
                self.weak = WeakCx::At(p);
                let r = self.term(x, scope);
                self.weak = WeakCx::Unsafe;
                let r = r?;
                let is_read = matches!(&r, T::V(Term::Atom(Atom::Read(..)), _))
                    || matches!(&r, T::N(l, _) if matches!(l.terms.first(), Some((Atom::Read(..), _))));
                if !is_read {
                    return Err(self.err(
                        x.span(),
                        "`p @ X` reads a weak variable or array cell",
                        "not weak",
                    ));
                }
                Ok(r)
            }
            _ => Err(self.err(
                e.span(),
                "expected a term, found a formula",
                "a formula here",
            )),
        }
    }

    fn small(&self, l: &Lin, s: Span) -> R<()> {
        if l.k.abs() > 1 << 40 || l.terms.iter().any(|t| t.1.abs() > 1 << 40) {
            return Err(self.err(s, "this constant is too large", "overflow"));
        }
        Ok(())
    }

    fn join(&self, a: Sort, b: Sort, s: Span) -> R<Sort> {
        match (a, b) {
            (Sort::Int, Sort::Int) => Ok(Sort::Int),
            (Sort::Real, _) | (_, Sort::Real) => Ok(Sort::Real),
            _ => Err(self.err(s, "arithmetic needs numbers", "not numbers")),
        }
    }

    fn num(&mut self, e: &Expr, scope: &[(String, ProcRef)]) -> R<(Lin, Sort)> {
        match self.term(e, scope)? {
            T::N(l, s) => Ok((l, s)),
            T::V(..) => Err(self.err(
                e.span(),
                "expected a number (an `int` or `real` term)",
                "not a number",
            )),
        }
    }

    fn sort_name(&self, s: Sort) -> String {
        match s {
            Sort::Enum(t) => self.types[t as usize].0.clone(),
            Sort::Proc => "proc".into(),
            Sort::Abstract => "an abstract type".into(),
            Sort::Int => "int".into(),
            Sort::Real => "real".into(),
        }
    }

    fn formula(&mut self, e: &Expr, scope: &[(String, ProcRef)]) -> R<Formula> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(self.err(e.span(), "this formula is nested too deeply", "too deep"));
        }
        let r = self.formula_inner(e, scope);
        self.depth -= 1;
        r
    }

    fn formula_inner(&mut self, e: &Expr, scope: &[(String, ProcRef)]) -> R<Formula> {
        match e {
            Expr::Upper(n, _) if n == "True" => Ok(Formula::True),
            Expr::Upper(n, _) if n == "False" => Ok(Formula::False),
            Expr::And(v, _) => Ok(Formula::And(
                v.iter().map(|x| self.formula(x, scope)).collect::<R<_>>()?,
            )),
            Expr::Or(v, _) => Ok(Formula::Or(
                v.iter().map(|x| self.formula(x, scope)).collect::<R<_>>()?,
            )),
            Expr::Not(x, _) => Ok(self.formula(x, scope)?.negate()),
            Expr::Fence(s) => {
                if self.mode == Mode::Tso {
                    return Err(self.err(
                        *s,
                        "under TSO, `fence()` may only be a conjunct of a transition's `requires`",
                        "not allowed here",
                    ));
                }
                Ok(Formula::True)
            }
            Expr::ForallOther(_, _, s) => Err(self.err(
                *s,
                "`forall_other` may only be a conjunct of a transition's `requires`",
                "not allowed here",
            )),
            Expr::Call(name, args, s) => {
                let Some(p) = self.file.predicates.iter().find(|p| &p.name == name) else {
                    return Err(self.err(
                        *s,
                        format!("unknown predicate `{name}`"),
                        "not declared",
                    ));
                };
                if p.params.len() != args.len() {
                    return Err(self.err(
                        *s,
                        format!(
                            "`{name}` takes {} processes, not {}",
                            p.params.len(),
                            args.len()
                        ),
                        "wrong number of arguments",
                    ));
                }
                let mut inner = Vec::new();
                for ((v, _), a) in p.params.iter().zip(args) {
                    inner.push((v.clone(), self.proc(a, scope)?));
                }
                let body = p.body.clone();
                self.formula(&body, &inner)
            }
            Expr::Cmp(a, op, b, s) => {
                let x = self.term(a, scope)?;
                let y = self.term(b, scope)?;
                self.compare(x, *op, y, *s)
            }
            _ => Err(self.err(
                e.span(),
                "expected a formula (a comparison), found a term",
                "a term here",
            )),
        }
    }

    fn compare(&self, x: T, op: CmpOp, y: T, s: Span) -> R<Formula> {
        let ordered = !matches!(op, CmpOp::Eq | CmpOp::Ne);
        let proc_cell = |t: &T| matches!(t, T::V(Term::Atom(_), Sort::Proc));
        if ordered && (proc_cell(&x) || proc_cell(&y)) {
            return self.compare_procs(x, op, y, s);
        }
        // Processes are ordered: `i < j` compares their identifiers.
        let pid = |t: T| -> R<T> {
            match t {
                T::V(Term::Proc(p), Sort::Proc) => Ok(T::N(Lin::atom(Atom::Pid(p)), Sort::Int)),
                t => Ok(t),
            }
        };
        let (x, y) = if ordered { (pid(x)?, pid(y)?) } else { (x, y) };
        match (x, y) {
            (T::N(a, sa), T::N(b, sb)) => {
                self.join(sa, sb, s)?;
                let d = a.add_scaled(&b, -1);
                let (l, rel) = match op {
                    CmpOp::Eq => (d, Rel::Eq),
                    CmpOp::Ne => (d, Rel::Ne),
                    CmpOp::Lt => (d, Rel::Lt),
                    CmpOp::Le => (d, Rel::Le),
                    CmpOp::Gt => (Lin::default().add_scaled(&d, -1), Rel::Lt),
                    CmpOp::Ge => (Lin::default().add_scaled(&d, -1), Rel::Le),
                };
                Ok(Formula::Lit(Lit::Arith(l, rel)))
            }
            (T::V(a, sa), T::V(b, sb)) => {
                if sa != sb {
                    return Err(self.err(
                        s,
                        format!(
                            "cannot compare {} with {}",
                            self.sort_name(sa),
                            self.sort_name(sb)
                        ),
                        "different types",
                    ));
                }
                match op {
                    CmpOp::Eq => Ok(Formula::Lit(Lit::Eq(a, b))),
                    CmpOp::Ne => Ok(Formula::Lit(Lit::Ne(a, b))),
                    _ => Err(self.err(
                        s,
                        format!("values of {} are not ordered", self.sort_name(sa)),
                        "use `=` or `<>`",
                    )),
                }
            }
            (T::N(_, sa), T::V(_, sb)) | (T::V(_, sb), T::N(_, sa)) => Err(self.err(
                s,
                format!(
                    "cannot compare {} with {}",
                    self.sort_name(sa),
                    self.sort_name(sb)
                ),
                "different types",
            )),
        }
    }

    /// `X < p`, `A[i] <= B[j]`, `#1 < X`...: an order comparison with a process-valued
    /// variable. Process identifiers are ordered integers (Cubicle's `proc` is its
    /// solver's `int`): the literal compares the identifier the cell holds with the other
    /// side's as numbers, an arithmetic literal over the cell (an atom of sort `proc`)
    /// and `Atom::Pid` of a process.
    fn compare_procs(&self, x: T, op: CmpOp, y: T, s: Span) -> R<Formula> {
        let lin = |t: T| -> R<Lin> {
            match t {
                T::V(Term::Proc(p), Sort::Proc) => Ok(Lin::atom(Atom::Pid(p))),
                T::V(Term::Atom(Atom::Read(..)), Sort::Proc) => Err(self.err(
                    s,
                    "under TSO, ordering a weak process-valued variable is not supported",
                    "a weak variable",
                )),
                T::V(Term::Atom(a), Sort::Proc) => Ok(Lin::atom(a)),
                T::V(_, o) | T::N(_, o) => Err(self.err(
                    s,
                    format!("cannot compare proc with {}", self.sort_name(o)),
                    "different types",
                )),
            }
        };
        let d = lin(x)?.add_scaled(&lin(y)?, -1);
        let (l, rel) = match op {
            CmpOp::Lt => (d, Rel::Lt),
            CmpOp::Le => (d, Rel::Le),
            CmpOp::Gt => (Lin::default().add_scaled(&d, -1), Rel::Lt),
            CmpOp::Ge => (Lin::default().add_scaled(&d, -1), Rel::Le),
            CmpOp::Eq | CmpOp::Ne => unreachable!("an order comparison"),
        };
        Ok(Formula::Lit(Lit::Arith(l, rel)))
    }

    fn transition(&mut self, t: &TransitionDecl, out: &mut Vec<Transition>) -> R<()> {
        let names: Vec<(String, Span)> = t.params.iter().map(|p| (p.0.clone(), p.2)).collect();
        self.check_vars(&names)?;
        let k = t.params.len() as u8;
        let scope: Vec<(String, ProcRef)> = names
            .iter()
            .enumerate()
            .map(|(i, v)| (v.0.clone(), ProcRef::Var(i as u8)))
            .collect();
        let line = fencer_text::diag::LineIndex::new(self.src)
            .line_col(self.src, t.span.start)
            .0;
        let thread = if self.mode == Mode::Tso {
            let marked: Vec<usize> = (0..t.params.len()).filter(|&i| t.params[i].1).collect();
            if marked.len() > 1 {
                return Err(self.err(
                    t.params[marked[1]].2,
                    "a transition has one thread `[p]`",
                    "a second one",
                ));
            }
            marked.first().map(|&i| i as u8)
        } else {
            None
        };
        self.weak = WeakCx::Thread(thread.map(ProcRef::Var));
        let r = self.transition_body(t, out, k, &scope, line, thread);
        self.weak = WeakCx::Memory;
        r
    }

    fn transition_body(
        &mut self,
        t: &TransitionDecl,
        out: &mut Vec<Transition>,
        k: u8,
        scope: &[(String, ProcRef)],
        line: u32,
        thread: Option<u8>,
    ) -> R<()> {
        let scope = scope.to_vec();
        // Updates, shared by every disjunct of the guard.
        let mut updates: Vec<Update> = Vec::new();
        for a in &t.actions {
            let Some(&g) = self.gids.get(&a.target) else {
                return Err(self.err(
                    a.span,
                    format!("unknown variable `{}`", a.target),
                    "not declared",
                ));
            };
            let decl = &self.file.globals[g as usize];
            if decl.kind == GlobalKind::Const {
                return Err(self.err(
                    a.span,
                    format!("`{}` is a constant", a.target),
                    "cannot be assigned",
                ));
            }
            if updates.iter().any(|u| u.global == g) {
                return Err(self.err(a.span, format!("`{}` is assigned twice", a.target), "again"));
            }
            let arity = self.globals[g as usize].arity;
            if a.index.len() != arity as usize {
                return Err(self.err(
                    a.span,
                    format!(
                        "`{}` takes {arity} process indices, not {}",
                        a.target,
                        a.index.len()
                    ),
                    "wrong number of indices",
                ));
            }
            // Index slots k..k+arity; an index that is a parameter or a constant makes a
            // point update, a condition on the slot.
            let mut inner = scope.clone();
            let mut point = Vec::new();
            for (i, ix) in a.index.iter().enumerate() {
                let slot = ProcRef::Var(k + i as u8);
                match ix {
                    ProcArg::Var(v, _) if !scope.iter().any(|x| &x.0 == v) => {
                        if inner[scope.len()..].iter().any(|x| &x.0 == v) {
                            return Err(self.err(
                                ix.span(),
                                format!("the index `{v}` is repeated"),
                                "again",
                            ));
                        }
                        inner.push((v.clone(), slot));
                    }
                    _ => point.push(Formula::Lit(Lit::Eq(
                        Term::Proc(slot),
                        Term::Proc(self.proc(ix, &scope)?),
                    ))),
                }
            }
            let sort = self.globals[g as usize].sort;
            let same = {
                let a = Atom::Cell(g, (0..arity).map(|i| ProcRef::Var(k + i)).collect());
                if sort.arith() {
                    PRhs::Lin(Lin::atom(a))
                } else {
                    PRhs::Term(Term::Atom(a))
                }
            };
            let mut cases = Vec::new();
            let default;
            match &a.rhs {
                Rhs::Case(branches) => {
                    let mut d = None;
                    for (c, v) in branches {
                        let val = self.rhs_value(v, sort, &inner)?;
                        match c {
                            Some(c) => {
                                let f = self.formula(c, &inner)?;
                                let mut conj = point.clone();
                                conj.push(f);
                                cases.push((Formula::And(conj), val));
                            }
                            None => d = Some(val),
                        }
                    }
                    // Without `| _ : ...` a cell no branch matches keeps its value.
                    let d = d.unwrap_or_else(|| same.clone());
                    if point.is_empty() {
                        default = d;
                    } else {
                        cases.push((Formula::And(point.clone()), d));
                        default = same;
                    }
                }
                v => {
                    let val = self.rhs_value(v, sort, &inner)?;
                    if point.is_empty() {
                        default = val;
                    } else {
                        cases.push((Formula::And(point.clone()), val));
                        default = same;
                    }
                }
            }
            let u = Update {
                global: g,
                cases,
                default,
            };
            if self.globals[g as usize].weak && thread.is_none() {
                return Err(self
                    .err(
                        a.span,
                        format!(
                            "under TSO, the weak `{}` is written by a transition without a thread",
                            a.target
                        ),
                        "which thread writes it?",
                    )
                    .with_help(
                        "mark the thread that runs the transition: `transition t ([p] ...)`",
                    ));
            }
            updates.push(u);
        }
        let guard = match &t.requires {
            Some(g) => g.clone(),
            None => Expr::Upper("True".into(), t.span),
        };
        let disjuncts = match guard {
            Expr::Or(v, _) => v,
            g => vec![g],
        };
        for d in disjuncts {
            let conjuncts = match d {
                Expr::And(v, _) => v,
                g => vec![g],
            };
            let mut parts = Vec::new();
            let mut foralls = Vec::new();
            let mut fence = false;
            for c in &conjuncts {
                if let (Expr::Fence(s), Mode::Tso) = (c, self.mode) {
                    if thread.is_none() {
                        return Err(self.err(
                            *s,
                            "under TSO, `fence()` needs the transition's thread `[p]`",
                            "whose fence?",
                        ));
                    }
                    fence = true;
                    continue;
                }
                if let Expr::ForallOther(v, body, s) = c {
                    if scope.iter().any(|x| &x.0 == v) {
                        return Err(self.err(
                            *s,
                            format!("`{v}` is already a parameter"),
                            "choose another name",
                        ));
                    }
                    let mut inner = scope.clone();
                    inner.push((v.clone(), ProcRef::Var(k)));
                    // `forall_other q. ... && fence()`: the fence does not depend on `q`.
                    let body = match (&**body, self.mode) {
                        (Expr::And(v, s), Mode::Tso)
                            if v.iter().any(|x| matches!(x, Expr::Fence(_))) =>
                        {
                            if thread.is_none() {
                                return Err(self.err(
                                    *s,
                                    "under TSO, `fence()` needs the transition's thread `[p]`",
                                    "whose fence?",
                                ));
                            }
                            fence = true;
                            let rest: Vec<Expr> = v
                                .iter()
                                .filter(|x| !matches!(x, Expr::Fence(_)))
                                .cloned()
                                .collect();
                            Expr::And(rest, *s)
                        }
                        (b, _) => b.clone(),
                    };
                    foralls.push(self.formula(&body, &inner)?);
                } else {
                    parts.push(self.formula(c, &scope)?);
                }
            }
            out.push(Transition {
                name: t.name.clone(),
                params: k,
                guard: Formula::And(parts),
                forall_other: foralls,
                updates: updates.clone(),
                line,
                thread,
                fence,
            });
        }
        Ok(())
    }

    fn rhs_value(&mut self, v: &Rhs, sort: Sort, scope: &[(String, ProcRef)]) -> R<PRhs> {
        match v {
            Rhs::Nondet(_) => Ok(PRhs::Nondet),
            Rhs::Case(_) => unreachable!("cases do not nest"),
            Rhs::Expr(e) => match self.term(e, scope)? {
                T::N(l, s) if sort.arith() => {
                    if s == Sort::Real && sort == Sort::Int {
                        return Err(self.err(
                            e.span(),
                            "a real value for an int variable",
                            "wrong type",
                        ));
                    }
                    Ok(PRhs::Lin(l))
                }
                T::V(t, s) if s == sort => Ok(PRhs::Term(t)),
                T::V(_, s) | T::N(_, s) => Err(self.err(
                    e.span(),
                    format!(
                        "expected a value of {}, found one of {}",
                        self.sort_name(sort),
                        self.sort_name(s)
                    ),
                    "wrong type",
                )),
            },
        }
    }
}
