//! Running a model on one execution: expressions (`interpreter.ml`'s `eval`) and
//! instructions (its `exec`, with checks, flags and `with ... from` branching).
//!
//! Frames live in one arena per run, addressed by index: closures capture frames, and a
//! frame holds the closures bound in it, so reference counting would leak every run.

use crate::ast::{DoTest, Op1, Sp, TestType};
use crate::bits::{EventSet, Relation};
use crate::compile::Program;
use crate::ir::*;
use crate::prims;
use crate::value::*;
use crate::{CatError, Execution, Outcome, OutcomeEnv};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

/// An error while evaluating an expression; `try` catches these. Boxed, as results
/// travel up every level of evaluation and failures are rare.
pub(crate) struct RtErr(Box<(Sp, String)>);

impl RtErr {
    pub fn new(sp: Sp, msg: impl Into<String>) -> RtErr {
        RtErr(Box::new((sp, msg.into())))
    }
}

pub(crate) type R<T> = Result<T, RtErr>;

pub(crate) fn err<T>(sp: Sp, msg: impl Into<String>) -> R<T> {
    Err(RtErr::new(sp, msg))
}

#[derive(Clone)]
enum SlotState<'p> {
    Unset,
    /// A lazy `let`: the expression, evaluated in the frame given.
    Thunk(&'p Expr, u32),
    /// Component `idx` of the tuple in slot `src` (absolute index).
    Proj(u32, u32, Sp),
    Alias(u32),
    Ext(u32),
    Busy,
    Val(Value<'p>),
}

struct FrameInfo {
    base: u32,
    size: u32,
    parent: u32,
}

enum K<'p> {
    Seq(&'p [Instr], u32),
    Forall {
        items: Rc<ValSet<'p>>,
        idx: usize,
        body: &'p [Instr],
        size: u32,
        parent: u32,
    },
}

impl Clone for K<'_> {
    fn clone(&self) -> Self {
        match self {
            K::Seq(i, f) => K::Seq(i, *f),
            K::Forall {
                items,
                idx,
                body,
                size,
                parent,
            } => K::Forall {
                items: items.clone(),
                idx: *idx,
                body,
                size: *size,
                parent: *parent,
            },
        }
    }
}

/// The state of one run of a model on one execution.
pub(crate) struct Rt<'p, 'x> {
    pub prog: &'p Program,
    pub exec: &'x Execution,
    pub n: usize,
    pub all: Rc<EventSet>,
    id: OnceCell<Rc<Relation>>,
    unv: OnceCell<Rc<Relation>>,
    empty_rel: Rc<Relation>,
    empty_set: Rc<EventSet>,
    slots: RefCell<Vec<SlotState<'p>>>,
    frames: RefCell<Vec<FrameInfo>>,
    ext: RefCell<Vec<Option<Option<Value<'p>>>>>,
    next_id: Cell<u32>,
    variants: Vec<String>,
    skip: &'x BTreeSet<String>,
}

const NO_FRAME: u32 = u32::MAX;

pub(crate) fn v_as_vs<'p>(v: Value<'p>) -> Vec<Value<'p>> {
    match v {
        Value::Tuple(vs) => vs.to_vec(),
        Value::Pair(a, b) => vec![Value::Event(a), Value::Event(b)],
        v => vec![v],
    }
}

fn pat_first(p: &Pat) -> Option<Slot> {
    match p {
        Pat::One(s) => *s,
        Pat::Tuple { whole, .. } => Some(*whole),
    }
}

fn tag2set(v: Value) -> Value {
    match v {
        Value::Tag(t) => Value::valset(Typ::Tag(&t.ty), vec![v]),
        v => v,
    }
}

fn is_atomic_kind(v: &Value) -> bool {
    matches!(
        v,
        Value::Event(_)
            | Value::Pair(..)
            | Value::Clo(_)
            | Value::Prim(_)
            | Value::Proc(_)
            | Value::Tuple(_)
    )
}

fn classrel_acyclic(r: &ClassRel) -> bool {
    let nodes: Vec<&EventSet> = r
        .iter()
        .flat_map(|(a, b)| [a, b])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ix = |s: &EventSet| nodes.binary_search(&s).unwrap_or(0);
    let mut rel = Relation::new(nodes.len());
    for (a, b) in r {
        rel.insert(ix(a), ix(b));
    }
    rel.is_acyclic()
}

pub(crate) fn classrel_compose(a: &ClassRel, b: &ClassRel) -> ClassRel {
    let mut out = ClassRel::new();
    for (x, y) in a {
        for (y2, z) in b.range((y.clone(), EventSet::new(0))..) {
            if y2 != y {
                break;
            }
            out.insert((x.clone(), z.clone()));
        }
    }
    out
}

impl<'p, 'x> Rt<'p, 'x> {
    pub fn new(
        prog: &'p Program,
        exec: &'x Execution,
        variants: Vec<String>,
        skip: &'x BTreeSet<String>,
    ) -> Rt<'p, 'x> {
        let n = exec.n;
        Rt {
            prog,
            exec,
            n,
            all: Rc::new(EventSet::full(n)),
            id: OnceCell::new(),
            unv: OnceCell::new(),
            empty_rel: Rc::new(Relation::new(n)),
            empty_set: Rc::new(EventSet::new(n)),
            slots: RefCell::new(Vec::with_capacity(prog.global_slots as usize + 32)),
            frames: RefCell::new(Vec::with_capacity(64)),
            ext: RefCell::new(vec![None; prog.ext.len()]),
            next_id: Cell::new(0),
            variants,
            skip,
        }
    }

    pub fn id(&self) -> Rc<Relation> {
        self.id
            .get_or_init(|| Rc::new(Relation::identity(self.n)))
            .clone()
    }

    pub fn unv(&self) -> Rc<Relation> {
        self.unv
            .get_or_init(|| Rc::new(Relation::full(self.n)))
            .clone()
    }

    pub fn empty_rel(&self) -> Rc<Relation> {
        self.empty_rel.clone()
    }

    pub fn empty_set(&self) -> Rc<EventSet> {
        self.empty_set.clone()
    }

    pub fn new_frame(&self, size: u32, parent: u32) -> u32 {
        let mut slots = self.slots.borrow_mut();
        let base = slots.len() as u32;
        slots.resize(base as usize + size as usize, SlotState::Unset);
        let mut frames = self.frames.borrow_mut();
        frames.push(FrameInfo { base, size, parent });
        frames.len() as u32 - 1
    }

    fn abs(&self, frame: u32, depth: u32, slot: Slot) -> usize {
        let frames = self.frames.borrow();
        let mut f = frame;
        for _ in 0..depth {
            f = frames[f as usize].parent;
        }
        (frames[f as usize].base + slot) as usize
    }

    fn set(&self, frame: u32, slot: Slot, s: SlotState<'p>) {
        let a = self.abs(frame, 0, slot);
        self.slots.borrow_mut()[a] = s;
    }

    fn set_val(&self, frame: u32, slot: Slot, v: Value<'p>) {
        self.set(frame, slot, SlotState::Val(v));
    }

    fn force(&self, mut abs: usize, name: &str, sp: Sp) -> R<Value<'p>> {
        loop {
            let st = self.slots.borrow()[abs].clone();
            match st {
                SlotState::Val(v) => return Ok(v),
                SlotState::Unset => return err(sp, format!("unbound var: {name}")),
                SlotState::Busy => return err(sp, format!("{name} is defined in terms of itself")),
                SlotState::Alias(a) => abs = a as usize,
                SlotState::Ext(id) => return self.ext_value(id, sp),
                SlotState::Thunk(e, fr) => {
                    self.slots.borrow_mut()[abs] = SlotState::Busy;
                    return match self.eval(e, fr) {
                        Ok(v) => {
                            self.slots.borrow_mut()[abs] = SlotState::Val(v.clone());
                            Ok(v)
                        }
                        Err(x) => {
                            self.slots.borrow_mut()[abs] = SlotState::Thunk(e, fr);
                            Err(x)
                        }
                    };
                }
                SlotState::Proj(src, idx, psp) => {
                    let whole = self.force(src as usize, name, sp)?;
                    let parts = v_as_vs(whole);
                    return match parts.into_iter().nth(idx as usize) {
                        Some(v) => {
                            self.slots.borrow_mut()[abs] = SlotState::Val(v.clone());
                            Ok(v)
                        }
                        None => err(psp, "binding mismatch"),
                    };
                }
            }
        }
    }

    fn var(&self, v: VarRef, name: &str, frame: u32, sp: Sp) -> R<Value<'p>> {
        match v {
            VarRef::Local { depth, slot } => self.force(self.abs(frame, depth, slot), name, sp),
            VarRef::Ext(id) => self.ext_value(id, sp),
        }
    }

    pub fn ext_value(&self, id: u32, sp: Sp) -> R<Value<'p>> {
        if let Some(c) = &self.ext.borrow()[id as usize] {
            return match c {
                Some(v) => Ok(v.clone()),
                None => err(sp, format!("unbound var: {}", self.prog.ext[id as usize])),
            };
        }
        let v = prims::resolve_ext(self, &self.prog.ext[id as usize]);
        self.ext.borrow_mut()[id as usize] = Some(v.clone());
        match v {
            Some(v) => Ok(v),
            None => err(sp, format!("unbound var: {}", self.prog.ext[id as usize])),
        }
    }

    fn fresh_id(&self) -> u32 {
        let i = self.next_id.get();
        self.next_id.set(i + 1);
        i
    }

    fn closure(&self, def: &'p FunDef, frame: u32) -> R<Value<'p>> {
        for (id, sp) in &def.ext_free {
            self.ext_value(*id, *sp)?;
        }
        Ok(Value::Clo(Rc::new(Closure {
            def,
            frame,
            id: self.fresh_id(),
        })))
    }

    fn bind_params(&self, p: &Params, v: Value<'p>, frame: u32, sp: Sp) -> R<()> {
        if !p.tuple {
            if let Some(Some(s)) = p.slots.first() {
                self.set_val(frame, *s, v);
            }
            return Ok(());
        }
        let mismatch = || err(sp, "argument_mismatch");
        match v {
            Value::Tuple(vs) => {
                if vs.len() != p.slots.len() {
                    return mismatch();
                }
                for (s, v) in p.slots.iter().zip(vs.iter()) {
                    if let Some(s) = s {
                        self.set_val(frame, *s, v.clone());
                    }
                }
            }
            Value::Pair(a, b) if p.slots.len() == 2 => {
                for (s, e) in p.slots.iter().zip([a, b]) {
                    if let Some(s) = s {
                        self.set_val(frame, *s, Value::Event(e));
                    }
                }
            }
            v if p.slots.len() == 1 => {
                if let Some(s) = p.slots[0] {
                    self.set_val(frame, s, v);
                }
            }
            _ => return mismatch(),
        }
        Ok(())
    }

    #[inline(never)]
    pub fn apply(&self, f: Value<'p>, a: Value<'p>, sp: Sp) -> R<Value<'p>> {
        match f {
            Value::Clo(c) => {
                if c.def.native == Some(Native::Cross) {
                    if let Some(v) = self.native_cross(&a) {
                        return Ok(v);
                    }
                }
                let fr = self.new_frame(c.def.frame_size, c.frame);
                self.bind_params(&c.def.params, a, fr, sp)?;
                self.eval(&c.def.body, fr)
            }
            Value::Prim(p) => prims::call(self, p, a)
                .map_err(|m| RtErr::new(sp, format!("primitive {}: {m}", p.name()))),
            _ => err(sp, "closure or primitive expected"),
        }
    }

    /// Whether the first of these slots has been bound (all are bound together).
    fn is_set(&self, frame: u32, mut slots: impl Iterator<Item = Slot>) -> bool {
        match slots.next() {
            Some(s) => {
                let a = self.abs(frame, 0, s);
                !matches!(self.slots.borrow()[a], SlotState::Unset)
            }
            None => false,
        }
    }

    /// `cross oss` of `cross.cat` when `oss` is a set of sets of relations: the set of
    /// unions of one relation from each; `{}` when there is none. `None` for anything
    /// else, which the interpreted definition handles (and reports) as herd would.
    #[inline(never)]
    fn native_cross(&self, oss: &Value<'p>) -> Option<Value<'p>> {
        let groups: &[Value<'p>] = match oss {
            Value::Empty => &[],
            Value::ValSet(s) => s.items(),
            _ => return None,
        };
        let mut choices: Vec<Vec<Rc<Relation>>> = Vec::with_capacity(groups.len());
        for g in groups {
            let rels = match g {
                Value::Empty => Vec::new(),
                Value::ValSet(s) => {
                    let mut v = Vec::with_capacity(s.items().len());
                    for o in s.items() {
                        match o {
                            Value::Rel(r) => v.push(r.clone()),
                            Value::Empty => v.push(self.empty_rel()),
                            _ => return None,
                        }
                    }
                    v
                }
                _ => return None,
            };
            choices.push(rels);
        }
        if choices.iter().any(|c| c.is_empty()) {
            return Some(Value::Empty);
        }
        let mut out: Vec<Relation> = vec![Relation::new(self.n)];
        for c in &choices {
            let mut next = Vec::with_capacity(out.len() * c.len());
            for acc in &out {
                for o in c {
                    let mut u = acc.clone();
                    u.union_with(o);
                    next.push(u);
                }
            }
            out = next;
        }
        out.sort();
        out.dedup();
        let items = out.into_iter().map(|r| Value::Rel(Rc::new(r))).collect();
        Some(Value::valset(Typ::Rel, items))
    }

    fn bind_lazy(&self, bds: &'p [Bind], frame: u32) {
        for b in bds {
            match &b.pat {
                Pat::One(None) => {}
                Pat::One(Some(s)) => self.set(frame, *s, SlotState::Thunk(&b.expr, frame)),
                Pat::Tuple { whole, parts } => {
                    self.set(frame, *whole, SlotState::Thunk(&b.expr, frame));
                    let wa = self.abs(frame, 0, *whole) as u32;
                    for (i, p) in parts.iter().enumerate() {
                        if let Some(s) = p {
                            self.set(frame, *s, SlotState::Proj(wa, i as u32, b.sp));
                        }
                    }
                }
            }
        }
    }

    fn assign_pat(&self, p: &Pat, v: Value<'p>, frame: u32, sp: Sp) -> R<()> {
        match p {
            Pat::One(None) => {}
            Pat::One(Some(s)) => self.set_val(frame, *s, v),
            Pat::Tuple { whole, parts } => {
                self.set_val(frame, *whole, v.clone());
                let vs = v_as_vs(v);
                for (i, s) in parts.iter().enumerate() {
                    if let Some(s) = s {
                        match vs.get(i) {
                            Some(x) => self.set_val(frame, *s, x.clone()),
                            None => return err(sp, "binding mismatch"),
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `let rec`: functions, then the least fixpoint of the values (herd's `env_rec`).
    /// `Ok(false)` when the `when` check fails on the way.
    #[inline(never)]
    fn do_rec(&self, rec: &'p Rec, frame: u32, test: Option<&'p Test>) -> R<bool> {
        for (slot, def) in &rec.funs {
            let clo = Value::Clo(Rc::new(Closure {
                def,
                frame,
                id: self.fresh_id(),
            }));
            self.set_val(frame, *slot, clo);
        }
        if rec.vals.is_empty() {
            return Ok(true);
        }
        let mut olds = Vec::new();
        for b in &rec.vals {
            let v0 = match &b.pat {
                Pat::Tuple { parts, .. } => Value::Tuple(Rc::new(vec![Value::Empty; parts.len()])),
                Pat::One(_) => Value::Empty,
            };
            self.assign_pat(&b.pat, v0.clone(), frame, b.sp)?;
            olds.push(v0);
        }
        loop {
            let mut news = Vec::with_capacity(olds.len());
            for b in &rec.vals {
                let v = self.eval(&b.expr, frame)?;
                self.assign_pat(&b.pat, v.clone(), frame, b.sp)?;
                news.push(v);
            }
            if let Some(t) = test {
                if !self.eval_test(t, frame)? {
                    return Ok(false);
                }
            }
            let mut over = true;
            for (v, w) in olds.iter().zip(&news) {
                if !self.stabilised(v, w, rec.sp)? {
                    over = false;
                    break;
                }
            }
            if over {
                return Ok(true);
            }
            olds = news;
        }
    }

    fn stabilised(&self, v: &Value<'p>, w: &Value<'p>, sp: Sp) -> R<bool> {
        use Value as V;
        Ok(match (v, w) {
            (_, V::Empty) | (V::Unv, _) => true,
            (V::Empty, V::Rel(w)) => w.is_empty(),
            (V::Rel(v), V::Unv) => self.unv().is_subset(v),
            (V::Rel(v), V::Rel(w)) => w.is_subset(v),
            (V::Empty, V::ClassRel(w)) => w.is_empty(),
            (V::ClassRel(v), V::ClassRel(w)) => w.is_subset(v),
            (V::Empty, V::Set(w)) => w.is_empty(),
            (V::Set(v), V::Unv) => self.all.is_subset(v),
            (V::Set(v), V::Set(w)) => w.is_subset(v),
            (V::Empty, V::ValSet(w)) => w.items().is_empty(),
            (V::ValSet(v), V::Unv) => match &v.ty {
                Typ::Tag(t) => {
                    let u = self.tags_universe(t);
                    vs_subset(&u, v.items()).map_err(|m| RtErr::new(sp, m))?
                }
                _ => return err(sp, "illegal recursion on type 'universe'"),
            },
            (V::ValSet(v), V::ValSet(w)) => {
                vs_subset(w.items(), v.items()).map_err(|m| RtErr::new(sp, m))?
            }
            _ => return err(sp, format!("illegal recursion on type '{}'", w.type_name())),
        })
    }

    fn tags_universe(&self, t: &str) -> Vec<Value<'p>> {
        match self.prog.enums.get(t) {
            Some(tags) => tags.iter().map(Value::Tag).collect(),
            None => Vec::new(),
        }
    }

    pub fn eval_rel(&self, e: &'p Expr, f: u32) -> R<Rc<Relation>> {
        let v = self.eval(e, f)?;
        self.as_rel(v, e.sp)
    }

    pub fn as_rel(&self, v: Value<'p>, sp: Sp) -> R<Rc<Relation>> {
        match v {
            Value::Rel(r) => Ok(r),
            Value::Pair(a, b) => Ok(Rc::new(Relation::from_pairs(
                self.n,
                [(a as usize, b as usize)],
            ))),
            Value::Empty => Ok(self.empty_rel()),
            Value::Unv => Ok(self.unv()),
            v => err(sp, format!("type rel expected, {} found", v.type_name())),
        }
    }

    pub fn eval_events(&self, e: &'p Expr, f: u32) -> R<Rc<EventSet>> {
        match self.eval(e, f)? {
            Value::Set(s) => Ok(s),
            Value::Event(x) => Ok(Rc::new(EventSet::from_events(self.n, [x as usize]))),
            Value::Empty => Ok(self.empty_set()),
            Value::Unv => Ok(self.all.clone()),
            v => err(
                e.sp,
                format!("type events expected, {} found", v.type_name()),
            ),
        }
    }

    pub fn eval(&self, e: &'p Expr, f: u32) -> R<Value<'p>> {
        use ExprKind as X;
        match &e.kind {
            X::EmptyRel => Ok(Value::Rel(self.empty_rel())),
            X::Unv => Ok(Value::Unv),
            X::Tag(t) => Ok(Value::Tag(t)),
            X::UndefTag(t) => err(e.sp, format!("tag '{t} is undefined")),
            X::Var(v, name) => self.var(*v, name, f, e.sp),
            X::Op1(op, a) => self.op1(*op, a, f),
            X::Union(es) => self.union(es, f, e.sp),
            X::Seq(es) => Ok(match self.seq_args(es, f)? {
                None => Value::Empty,
                Some(SeqR::Unv) => Value::Rel(self.unv()),
                Some(SeqR::Id(s)) => Value::Rel(Rc::new(Relation::identity_on(&s))),
                Some(SeqR::Rel(r)) => Value::Rel(r),
                Some(SeqR::Class(c)) => Value::ClassRel(Rc::new(c)),
            }),
            X::Inter(a, b) => self.inter(a, b, f, e.sp),
            X::InterCart(r, a, b) => {
                let mut r = self.eval_rel(r, f)?;
                let a = self.eval_events(a, f)?;
                let b = self.eval_events(b, f)?;
                let m = Rc::make_mut(&mut r);
                m.restrict_domain(&a);
                m.restrict_range(&b);
                Ok(Value::Rel(r))
            }
            X::Diff(a, b) => self.diff(a, b, f, e.sp),
            X::Cartesian(a, b) => {
                let a = self.eval_events(a, f)?;
                let b = self.eval_events(b, f)?;
                Ok(Value::Rel(Rc::new(Relation::cartesian(&a, &b))))
            }
            X::Add(a, b) => self.add(a, b, f, e.sp),
            X::Tuple(es) => {
                let mut vs = Vec::with_capacity(es.len());
                for x in es {
                    vs.push(self.eval(x, f)?);
                }
                Ok(Value::Tuple(Rc::new(vs)))
            }
            X::ExplicitSet(es) => self.explicit_set(es, f, e.sp),
            X::App(fe, ae) => {
                let fv = self.eval(fe, f)?;
                let av = self.eval(ae, f)?;
                self.apply(fv, av, e.sp)
            }
            X::Let(bds, body) => {
                self.bind_lazy(bds, f);
                self.eval(body, f)
            }
            X::LetRec(rec, body) => {
                self.do_rec(rec, f, None)?;
                self.eval(body, f)
            }
            X::Fun(def) => self.closure(def, f),
            X::Match(s, cls, d) => match self.eval(s, f)? {
                Value::Tag(t) => {
                    let t = &t.name;
                    if let Some((_, body)) = cls.iter().find(|(c, _)| c == t) {
                        return self.eval(body, f);
                    }
                    match d {
                        Some(d) => self.eval(d, f),
                        None => err(e.sp, format!("pattern matching failed on value '{t}'")),
                    }
                }
                Value::Empty => err(s.sp, "matching on empty"),
                Value::Unv => err(s.sp, "matching on universe"),
                v => err(
                    s.sp,
                    format!("matching on non-tag value of type '{}'", v.type_name()),
                ),
            },
            X::MatchSet(s, em, cl) => self.match_set(s, em, cl, f, e.sp),
            X::Try(a, b) => match self.eval(a, f) {
                Ok(v) => Ok(v),
                Err(_) => self.eval(b, f),
            },
            X::If(c, a, b) => {
                if self.cond(c, f, e.sp)? {
                    self.eval(a, f)
                } else {
                    self.eval(b, f)
                }
            }
        }
    }

    #[inline(never)]
    fn op1(&self, op: Op1, a: &'p Expr, f: u32) -> R<Value<'p>> {
        let v = self.eval(a, f)?;
        let rel_expected =
            |v: &Value| err(a.sp, format!("type rel expected, {} found", v.type_name()));
        Ok(match op {
            Op1::Plus => match v {
                Value::Empty => Value::Empty,
                Value::Unv => Value::Unv,
                Value::Rel(mut r) => {
                    Rc::make_mut(&mut r).close();
                    Value::Rel(r)
                }
                v => return rel_expected(&v),
            },
            Op1::Star => match v {
                Value::Empty => Value::Rel(self.id()),
                Value::Unv => Value::Unv,
                Value::Rel(mut r) => {
                    let t = Rc::make_mut(&mut r);
                    t.close();
                    t.union_with(&self.id());
                    Value::Rel(r)
                }
                v => return rel_expected(&v),
            },
            Op1::Opt => match v {
                Value::Empty => Value::Rel(self.id()),
                Value::Unv => Value::Unv,
                Value::Rel(mut r) => {
                    Rc::make_mut(&mut r).union_with(&self.id());
                    Value::Rel(r)
                }
                v => return rel_expected(&v),
            },
            Op1::Comp => match v {
                Value::Empty => Value::Unv,
                Value::Unv => Value::Empty,
                Value::Set(mut s) => {
                    Rc::make_mut(&mut s).invert();
                    Value::Set(s)
                }
                Value::Rel(mut r) => {
                    Rc::make_mut(&mut r).invert();
                    Value::Rel(r)
                }
                Value::ValSet(s) if matches!(s.ty, Typ::Tag(_)) => {
                    let Typ::Tag(t) = s.ty else { unreachable!() };
                    let u = self.tags_universe(t);
                    let d = vs_diff(&u, s.items()).map_err(|m| RtErr::new(a.sp, m))?;
                    Value::valset(Typ::Tag(t), d)
                }
                v => {
                    return err(
                        a.sp,
                        format!("set or relation expected, {} found", v.type_name()),
                    )
                }
            },
            Op1::Inv => match v {
                Value::Empty => Value::Empty,
                Value::Unv => Value::Unv,
                Value::Rel(r) => Value::Rel(Rc::new(r.inverse())),
                Value::ClassRel(r) => Value::ClassRel(Rc::new(
                    r.iter().map(|(x, y)| (y.clone(), x.clone())).collect(),
                )),
                Value::Pair(x, y) => Value::Pair(y, x),
                v => return rel_expected(&v),
            },
            Op1::ToId => match v {
                Value::Empty => Value::Empty,
                Value::Unv => Value::Rel(self.id()),
                Value::Set(s) => Value::Rel(Rc::new(Relation::identity_on(&s))),
                v => {
                    return err(
                        a.sp,
                        format!("type events expected, {} found", v.type_name()),
                    )
                }
            },
        })
    }

    #[inline(never)]
    fn union(&self, es: &'p [Expr], f: u32, sp: Sp) -> R<Value<'p>> {
        // Relations and event sets are merged as they come; anything else falls back to
        // herd's typing of the whole list.
        enum Acc<'p> {
            Nothing,
            Rel(Rc<Relation>, Sp),
            Set(Rc<EventSet>, Sp),
            Other(Vec<(Sp, Value<'p>)>),
        }
        let mut acc = Acc::Nothing;
        let mut saw_unv = false;
        for x in es {
            let v = self.eval(x, f)?;
            acc = match (acc, v) {
                (acc, Value::Empty) => acc,
                (acc, Value::Unv) => {
                    saw_unv = true;
                    acc
                }
                (Acc::Nothing, Value::Rel(r)) => Acc::Rel(r, x.sp),
                (Acc::Rel(mut a, asp), Value::Rel(r)) => {
                    Rc::make_mut(&mut a).union_with(&r);
                    Acc::Rel(a, asp)
                }
                (Acc::Nothing, Value::Set(s)) => Acc::Set(s, x.sp),
                (Acc::Set(mut a, asp), Value::Set(s)) => {
                    Rc::make_mut(&mut a).union_with(&s);
                    Acc::Set(a, asp)
                }
                (acc, v) => {
                    let mut kept = match acc {
                        Acc::Nothing => Vec::new(),
                        Acc::Rel(a, asp) => vec![(asp, Value::Rel(a))],
                        Acc::Set(a, asp) => vec![(asp, Value::Set(a))],
                        Acc::Other(k) => k,
                    };
                    kept.push((x.sp, tag2set(v)));
                    Acc::Other(kept)
                }
            };
        }
        if saw_unv {
            return Ok(Value::Unv);
        }
        let kept = match acc {
            Acc::Nothing => return Ok(Value::Empty),
            Acc::Rel(a, _) => return Ok(Value::Rel(a)),
            Acc::Set(a, _) => return Ok(Value::Set(a)),
            Acc::Other(k) => k,
        };
        let t = self.type_list(&kept)?;
        match t {
            Typ::Rel => {
                let mut acc: Option<Relation> = None;
                for (_, v) in &kept {
                    if let Value::Rel(r) = v {
                        match &mut acc {
                            None => acc = Some((**r).clone()),
                            Some(a) => a.union_with(r),
                        }
                    }
                }
                Ok(Value::Rel(Rc::new(
                    acc.unwrap_or_else(|| Relation::new(self.n)),
                )))
            }
            Typ::Events => {
                let mut acc = EventSet::new(self.n);
                for (_, v) in &kept {
                    if let Value::Set(s) = v {
                        acc.union_with(s);
                    }
                }
                Ok(Value::Set(Rc::new(acc)))
            }
            Typ::ClassRel => {
                let mut acc = ClassRel::new();
                for (_, v) in &kept {
                    if let Value::ClassRel(c) = v {
                        acc.extend(c.iter().cloned());
                    }
                }
                Ok(Value::ClassRel(Rc::new(acc)))
            }
            Typ::Set(telt) => {
                let mut acc: Vec<Value<'p>> = Vec::new();
                for (_, v) in &kept {
                    if let Value::ValSet(s) = v {
                        acc = vs_union(&acc, s.items()).map_err(|m| RtErr::new(sp, m))?;
                    }
                }
                Ok(Value::valset((*telt).clone(), acc))
            }
            t => err(sp, format!("cannot perform union on type '{}'", pp_typ(&t))),
        }
    }

    /// herd's `type_list`: the common type of the values, or an error at the first that
    /// does not fit.
    fn type_list(&self, vs: &[(Sp, Value<'p>)]) -> R<Typ<'p>> {
        let mut t0: Option<Typ<'p>> = None;
        for (sp, v) in vs {
            let Some(t) = v.typ() else {
                return err(*sp, "universe where a typed value is expected");
            };
            t0 = Some(match t0 {
                None => t,
                Some(t0) => match eq_type(&t0, &t) {
                    Some(t) => t,
                    None => {
                        return err(
                            *sp,
                            format!("type {} expected, {} found", pp_typ(&t0), pp_typ(&t)),
                        )
                    }
                },
            });
        }
        Ok(t0.unwrap_or(Typ::Empty))
    }

    fn eval_rels(&self, e: &'p Expr, f: u32) -> R<Option<SeqR>> {
        if let ExprKind::Op1(Op1::ToId, inner) = &e.kind {
            return match self.eval(inner, f)? {
                Value::Set(s) => Ok(Some(SeqR::Id(s))),
                Value::Empty => Ok(None),
                Value::Unv => Ok(Some(SeqR::Unv)),
                v => err(
                    inner.sp,
                    format!("type events expected, {} found", v.type_name()),
                ),
            };
        }
        match self.eval(e, f)? {
            Value::Rel(r) => Ok(Some(SeqR::Rel(r))),
            Value::ClassRel(c) => Ok(Some(SeqR::Class((*c).clone()))),
            Value::Pair(a, b) => Ok(Some(SeqR::Rel(Rc::new(Relation::from_pairs(
                self.n,
                [(a as usize, b as usize)],
            ))))),
            Value::Empty => Ok(None),
            Value::Unv => Ok(Some(SeqR::Unv)),
            v => err(e.sp, format!("type rel expected, {} found", v.type_name())),
        }
    }

    /// herd's `seq_args`: left to right, `[S]` as a restriction, `_` skipped, and a stop
    /// (`None`) at the first empty operand, so that later operands are not evaluated.
    fn seq_args(&self, es: &'p [Expr], f: u32) -> R<Option<SeqR>> {
        let Some((e, rest)) = es.split_first() else {
            return Ok(Some(SeqR::Unv));
        };
        match self.eval_rels(e, f)? {
            None => Ok(None),
            Some(SeqR::Unv) => self.seq_args(rest, f),
            Some(SeqR::Id(s)) => self.seq_id(s, rest, f),
            Some(SeqR::Rel(r)) => self.seq_rel(r, rest, f),
            Some(SeqR::Class(mut c)) => {
                for x in rest {
                    match self.eval_rels(x, f)? {
                        None => return Ok(None),
                        Some(SeqR::Class(d)) => c = classrel_compose(&c, &d),
                        Some(_) => return err(x.sp, "mixing relations in sequence"),
                    }
                }
                Ok(Some(SeqR::Class(c)))
            }
        }
    }

    fn seq_id(&self, s: Rc<EventSet>, es: &'p [Expr], f: u32) -> R<Option<SeqR>> {
        if s.is_empty() {
            return Ok(None);
        }
        let Some((e, rest)) = es.split_first() else {
            return Ok(Some(SeqR::Id(s)));
        };
        match self.eval_rels(e, f)? {
            None => Ok(None),
            Some(SeqR::Unv) => self.seq_id(s, rest, f),
            Some(SeqR::Id(t)) => {
                let mut s = s;
                Rc::make_mut(&mut s).intersect_with(&t);
                self.seq_id(s, rest, f)
            }
            Some(SeqR::Rel(mut r)) => {
                Rc::make_mut(&mut r).restrict_domain(&s);
                self.seq_rel(r, rest, f)
            }
            Some(SeqR::Class(_)) => err(e.sp, "mixing relations in sequence"),
        }
    }

    fn seq_rel(&self, r: Rc<Relation>, es: &'p [Expr], f: u32) -> R<Option<SeqR>> {
        if r.is_empty() {
            return Ok(None);
        }
        let Some((e, rest)) = es.split_first() else {
            return Ok(Some(SeqR::Rel(r)));
        };
        match self.eval_rels(e, f)? {
            None => Ok(None),
            Some(SeqR::Unv) => self.seq_rel(r, rest, f),
            Some(SeqR::Id(s)) => match self.seq_id(s, rest, f)? {
                None => Ok(None),
                Some(SeqR::Unv) => Ok(Some(SeqR::Rel(r))),
                Some(SeqR::Id(s)) => {
                    let mut r = r;
                    Rc::make_mut(&mut r).restrict_range(&s);
                    Ok(Some(SeqR::Rel(r)))
                }
                Some(SeqR::Rel(t)) => Ok(Some(SeqR::Rel(Rc::new(r.compose(&t))))),
                Some(SeqR::Class(_)) => err(e.sp, "mixing relations in sequence"),
            },
            Some(SeqR::Rel(t)) => self.seq_rel(Rc::new(r.compose(&t)), rest, f),
            Some(SeqR::Class(_)) => err(e.sp, "mixing relations in sequence"),
        }
    }

    #[inline(never)]
    fn inter(&self, a: &'p Expr, b: &'p Expr, f: u32, sp: Sp) -> R<Value<'p>> {
        use Value as V;
        let v1 = tag2set(self.eval(a, f)?);
        let v2 = tag2set(self.eval(b, f)?);
        Ok(match (v1, v2) {
            (V::Rel(mut x), V::Rel(y)) => {
                Rc::make_mut(&mut x).intersect_with(&y);
                V::Rel(x)
            }
            (V::ClassRel(x), V::ClassRel(y)) => {
                V::ClassRel(Rc::new(x.intersection(&y).cloned().collect()))
            }
            (V::Set(mut x), V::Set(y)) => {
                Rc::make_mut(&mut x).intersect_with(&y);
                V::Set(x)
            }
            (V::ValSet(x), V::ValSet(y)) => V::valset(
                x.ty.clone(),
                vs_inter(x.items(), y.items()).map_err(|m| RtErr::new(sp, m))?,
            ),
            (V::Unv, r) | (r, V::Unv) => r,
            (V::Empty, _) | (_, V::Empty) => V::Empty,
            (x, _) if is_atomic_kind(&x) => {
                return err(a.sp, format!("intersection on {}", x.type_name()))
            }
            (_, y) if is_atomic_kind(&y) => {
                return err(b.sp, format!("intersection on {}", y.type_name()))
            }
            (V::Rel(_) | V::ClassRel(_), V::Set(_) | V::ValSet(_))
            | (V::Set(_) | V::ValSet(_), V::Rel(_) | V::ClassRel(_)) => {
                return err(sp, "mixing sets and relations in intersection")
            }
            (V::ValSet(_), V::Set(_)) | (V::Set(_), V::ValSet(_)) => {
                return err(sp, "mixing event sets and sets in intersection")
            }
            _ => {
                return err(
                    sp,
                    "mixing event relation and class relation in intersection",
                )
            }
        })
    }

    #[inline(never)]
    fn diff(&self, a: &'p Expr, b: &'p Expr, f: u32, sp: Sp) -> R<Value<'p>> {
        use Value as V;
        let v1 = tag2set(self.eval(a, f)?);
        let v2 = tag2set(self.eval(b, f)?);
        Ok(match (v1, v2) {
            (V::Rel(mut x), V::Rel(y)) => {
                Rc::make_mut(&mut x).difference_with(&y);
                V::Rel(x)
            }
            (V::ClassRel(x), V::ClassRel(y)) => {
                V::ClassRel(Rc::new(x.difference(&y).cloned().collect()))
            }
            (V::Set(mut x), V::Set(y)) => {
                Rc::make_mut(&mut x).difference_with(&y);
                V::Set(x)
            }
            (V::ValSet(x), V::ValSet(y)) => V::valset(
                x.ty.clone(),
                vs_diff(x.items(), y.items()).map_err(|m| RtErr::new(sp, m))?,
            ),
            (V::Unv, V::Rel(r)) => V::Rel(Rc::new(r.complement())),
            (V::Unv, V::Set(s)) => V::Set(Rc::new(s.complement())),
            (V::Unv, V::ValSet(s)) => match s.ty {
                Typ::Tag(t) => {
                    let u = self.tags_universe(t);
                    V::valset(
                        Typ::Tag(t),
                        vs_diff(&u, s.items()).map_err(|m| RtErr::new(sp, m))?,
                    )
                }
                ref t => {
                    return err(
                        a.sp,
                        format!("cannot build universe for element type {}", pp_typ(t)),
                    )
                }
            },
            (V::Unv, V::ClassRel(_)) => {
                return err(a.sp, "cannot build universe for element type classrel")
            }
            (V::Unv, V::Empty) => V::Unv,
            (V::Rel(_) | V::ClassRel(_) | V::Set(_) | V::Empty | V::Unv | V::ValSet(_), V::Unv) => {
                V::Empty
            }
            (V::Empty, V::Rel(_) | V::ClassRel(_) | V::Set(_) | V::Empty | V::ValSet(_)) => {
                V::Empty
            }
            (x @ (V::Rel(_) | V::ClassRel(_) | V::Set(_) | V::ValSet(_)), V::Empty) => x,
            (x, _) if is_atomic_kind(&x) => {
                return err(a.sp, format!("difference on {}", x.type_name()))
            }
            (_, y) if is_atomic_kind(&y) => {
                return err(b.sp, format!("difference on {}", y.type_name()))
            }
            (V::Set(_) | V::ValSet(_), V::ClassRel(_) | V::Rel(_))
            | (V::ClassRel(_) | V::Rel(_), V::Set(_) | V::ValSet(_)) => {
                return err(sp, "mixing set and relation in difference")
            }
            (V::Set(_), V::ValSet(_)) | (V::ValSet(_), V::Set(_)) => {
                return err(sp, "mixing event set and set in difference")
            }
            _ => return err(sp, "mixing event relation and class relation in difference"),
        })
    }

    #[inline(never)]
    fn add(&self, a: &'p Expr, b: &'p Expr, f: u32, sp: Sp) -> R<Value<'p>> {
        use Value as V;
        let v1 = self.eval(a, f)?;
        let v2 = self.eval(b, f)?;
        let se = |m: String| RtErr::new(sp, m);
        Ok(match (v1, v2) {
            (V::Unv, _) => return err(sp, "universe in set ++"),
            (_, V::Unv) => V::Unv,
            (V::Event(e), V::Empty) => V::Set(Rc::new(EventSet::from_events(self.n, [e as usize]))),
            (V::Pair(x, y), V::Empty) => V::Rel(Rc::new(Relation::from_pairs(
                self.n,
                [(x as usize, y as usize)],
            ))),
            (v1, V::Empty) => {
                let t = v1.typ().unwrap_or(Typ::Empty);
                V::valset(t, vec![v1])
            }
            (V::Empty, V::ValSet(s2)) if matches!(s2.ty, Typ::Set(_)) => {
                let Typ::Set(e2) = &s2.ty else { unreachable!() };
                let v1 = V::valset((**e2).clone(), Vec::new());
                V::valset(s2.ty.clone(), vs_add(s2.items(), v1).map_err(se)?)
            }
            (v1, V::ValSet(s2)) => {
                let t = v1.typ().unwrap_or(Typ::Empty);
                V::valset(t, vs_add(s2.items(), v1).map_err(se)?)
            }
            (V::Pair(x, y), V::Rel(mut r)) => {
                Rc::make_mut(&mut r).insert(x as usize, y as usize);
                V::Rel(r)
            }
            (V::Tuple(vs), V::Rel(mut r))
                if vs.len() == 2
                    && matches!(vs[0], V::Event(_))
                    && matches!(vs[1], V::Event(_)) =>
            {
                let (V::Event(x), V::Event(y)) = (&vs[0], &vs[1]) else {
                    unreachable!()
                };
                Rc::make_mut(&mut r).insert(*x as usize, *y as usize);
                V::Rel(r)
            }
            (_, v2 @ V::Rel(_)) => {
                return err(
                    a.sp,
                    format!(
                        "this expression of type '{}' should be a pair",
                        v2.type_name()
                    ),
                )
            }
            (V::Event(e), V::Set(mut s)) => {
                Rc::make_mut(&mut s).insert(e as usize);
                V::Set(s)
            }
            (v1, V::Set(_)) => {
                return err(
                    a.sp,
                    format!(
                        "this expression of type '{}' should be an event",
                        v1.type_name()
                    ),
                )
            }
            (_, v2 @ V::ClassRel(_)) => {
                return err(
                    b.sp,
                    format!(
                        "this expression of type '{}' cannot occur here",
                        v2.type_name()
                    ),
                )
            }
            (_, v2) => {
                return err(
                    b.sp,
                    format!(
                        "this expression of type '{}' should be a set",
                        v2.type_name()
                    ),
                )
            }
        })
    }

    #[inline(never)]
    fn explicit_set(&self, es: &'p [Expr], f: u32, sp: Sp) -> R<Value<'p>> {
        let mut vals = Vec::with_capacity(es.len());
        for x in es {
            vals.push((x.sp, self.eval(x, f)?));
        }
        if let Some((xsp, _)) = vals.iter().find(|(_, v)| matches!(v, Value::Unv)) {
            return err(*xsp, "universe in explicit set");
        }
        if vals.is_empty() {
            return Ok(Value::Empty);
        }
        let t = self.type_list(&vals)?;
        Ok(match t {
            Typ::Event => Value::Set(Rc::new(EventSet::from_events(
                self.n,
                vals.iter().filter_map(|(_, v)| match v {
                    Value::Event(e) => Some(*e as usize),
                    _ => None,
                }),
            ))),
            Typ::Pair => Value::Rel(Rc::new(Relation::from_pairs(
                self.n,
                vals.iter().filter_map(|(_, v)| match v {
                    Value::Pair(a, b) => Some((*a as usize, *b as usize)),
                    _ => None,
                }),
            ))),
            t => {
                let items = self.normalise_items(&t, vals.into_iter().map(|(_, v)| v).collect());
                Value::valset(t, sort_values(items).map_err(|m| RtErr::new(sp, m))?)
            }
        })
    }

    /// `{}` inside a set of sets is the empty set of the element type.
    fn normalise_items(&self, t: &Typ<'p>, vs: Vec<Value<'p>>) -> Vec<Value<'p>> {
        vs.into_iter()
            .map(|v| match (&v, t) {
                (Value::Empty, Typ::Events) => Value::Set(self.empty_set()),
                (Value::Empty, Typ::Rel) => Value::Rel(self.empty_rel()),
                (Value::Empty, Typ::Set(e)) => Value::valset((**e).clone(), Vec::new()),
                _ => v,
            })
            .collect()
    }

    #[inline(never)]
    fn match_set(
        &self,
        s: &'p Expr,
        em: &'p Expr,
        cl: &'p SetClause,
        f: u32,
        sp: Sp,
    ) -> R<Value<'p>> {
        // The first element and the rest; herd's `split3` puts nothing before the first.
        let v = self.eval(s, f)?;
        let (first, rest): (Value<'p>, Value<'p>) = match &v {
            Value::Empty => return self.eval(em, f),
            Value::Unv => return err(sp, "Cannot set-match on universe"),
            Value::Set(es) => {
                let Some(x) = es.first() else {
                    return self.eval(em, f);
                };
                let mut r = (**es).clone();
                r.remove(x);
                (Value::Event(x as u32), Value::Set(Rc::new(r)))
            }
            Value::Rel(r) => {
                let Some((a, b)) = r.first() else {
                    return self.eval(em, f);
                };
                let mut t = (**r).clone();
                t.remove(a, b);
                (Value::Pair(a as u32, b as u32), Value::Rel(Rc::new(t)))
            }
            Value::ValSet(vs) => {
                let Some(x) = vs.items().first() else {
                    return self.eval(em, f);
                };
                (x.clone(), Value::ValSet(Rc::new(vs.tail())))
            }
            v => {
                return err(
                    s.sp,
                    format!("set-matching on non-set value of type '{}'", v.type_name()),
                )
            }
        };
        let none = || match &v {
            Value::Set(_) => Value::Set(self.empty_set()),
            Value::Rel(_) => Value::Rel(self.empty_rel()),
            Value::ValSet(vs) => Value::valset(vs.ty.clone(), Vec::new()),
            _ => Value::Empty,
        };
        let put = |slot: &Option<Slot>, v: Value<'p>| {
            if let Some(sl) = slot {
                self.set_val(f, *sl, v);
            }
        };
        match cl {
            SetClause::EltRem(x, xs, body) => {
                put(x, first);
                put(xs, rest);
                self.eval(body, f)
            }
            SetClause::PreEltPost(pre, x, post, body) => {
                put(pre, none());
                put(x, first);
                put(post, rest);
                self.eval(body, f)
            }
        }
    }

    #[inline(never)]
    fn cond(&self, c: &'p Cond, f: u32, sp: Sp) -> R<bool> {
        match c {
            Cond::Eq(a, b) => {
                let v1 = self.eval(a, f)?;
                let v2 = self.eval(b, f)?;
                Ok(compare(&v1, &v2).map_err(|m| RtErr::new(sp, m))? == std::cmp::Ordering::Equal)
            }
            Cond::Subset(a, b) => {
                let v1 = self.eval(a, f)?;
                let v2 = self.eval(b, f)?;
                let t = self.type_list(&[(a.sp, v1.clone()), (b.sp, v2.clone())])?;
                match t {
                    Typ::Rel | Typ::Empty => {
                        Ok(self.as_rel(v1, a.sp)?.is_subset(&*self.as_rel(v2, b.sp)?))
                    }
                    Typ::Events => {
                        let s1 = self.as_set(v1, a.sp)?;
                        let s2 = self.as_set(v2, b.sp)?;
                        Ok(s1.is_subset(&s2))
                    }
                    Typ::Set(_) => {
                        let items = |v: &Value<'p>| match v {
                            Value::ValSet(s) => s.items().to_vec(),
                            _ => Vec::new(),
                        };
                        vs_subset(&items(&v1), &items(&v2)).map_err(|m| RtErr::new(sp, m))
                    }
                    t => err(
                        sp,
                        format!("cannot perform subset on type '{}'", pp_typ(&t)),
                    ),
                }
            }
            Cond::In(a, b) => {
                let v1 = self.eval(a, f)?;
                match &v1 {
                    Value::Event(e) => Ok(self.eval_events(b, f)?.contains(*e as usize)),
                    Value::Pair(x, y) => {
                        Ok(self.eval_rel(b, f)?.contains(*x as usize, *y as usize))
                    }
                    Value::Tuple(vs)
                        if vs.len() == 2
                            && matches!(vs[0], Value::Event(_))
                            && matches!(vs[1], Value::Event(_)) =>
                    {
                        let (Value::Event(x), Value::Event(y)) = (&vs[0], &vs[1]) else {
                            unreachable!()
                        };
                        Ok(self.eval_rel(b, f)?.contains(*x as usize, *y as usize))
                    }
                    _ => match self.eval(b, f)? {
                        Value::ValSet(s) => {
                            let t1 = v1.typ();
                            match t1 {
                                Some(t1) if eq_type(&t1, &s.ty).is_some() => {
                                    vs_contains(s.items(), &v1).map_err(|m| RtErr::new(sp, m))
                                }
                                _ => err(
                                    a.sp,
                                    format!(
                                        "type {} expected, {} found",
                                        pp_typ(&s.ty),
                                        v1.type_name()
                                    ),
                                ),
                            }
                        }
                        v2 => err(b.sp, format!("set expected, found {}", v2.type_name())),
                    },
                }
            }
            Cond::Variant(v) => Ok(self.variant(v)),
        }
    }

    pub fn as_set(&self, v: Value<'p>, sp: Sp) -> R<Rc<EventSet>> {
        match v {
            Value::Set(s) => Ok(s),
            Value::Empty => Ok(self.empty_set()),
            Value::Unv => Ok(self.all.clone()),
            v => err(sp, format!("type events expected, {} found", v.type_name())),
        }
    }

    fn variant(&self, v: &VCond) -> bool {
        match v {
            VCond::Var(Some(name)) => self.variants.iter().any(|x| x == name),
            VCond::Var(None) => false,
            VCond::Not(a) => !self.variant(a),
            VCond::And(a, b) => self.variant(a) && self.variant(b),
            VCond::Or(a, b) => self.variant(a) || self.variant(b),
        }
    }

    #[inline(never)]
    fn eval_test(&self, t: &'p Test, f: u32) -> R<bool> {
        let v = match self.eval(&t.expr, f)? {
            v @ (Value::Rel(_) | Value::Set(_) | Value::ClassRel(_)) => v,
            Value::Event(e) => Value::Set(Rc::new(EventSet::from_events(self.n, [e as usize]))),
            Value::Pair(a, b) => Value::Rel(Rc::new(Relation::from_pairs(
                self.n,
                [(a as usize, b as usize)],
            ))),
            Value::Empty => Value::Rel(self.empty_rel()),
            Value::Unv => Value::Rel(self.unv()),
            _ => return err(t.expr.sp, "relation or set expected"),
        };
        let ok = match (t.test, &v) {
            (DoTest::Acyclic, Value::Rel(r)) => r.is_acyclic(),
            (DoTest::Acyclic, Value::ClassRel(r)) => classrel_acyclic(r),
            (DoTest::Irreflexive, Value::Rel(r)) => r.is_irreflexive(),
            (DoTest::Irreflexive, Value::ClassRel(r)) => r.iter().all(|(a, b)| a != b),
            (DoTest::Empty, Value::Rel(r)) => r.is_empty(),
            (DoTest::Empty, Value::ClassRel(r)) => r.is_empty(),
            (DoTest::Empty, Value::Set(s)) => s.is_empty(),
            _ => return err(t.expr.sp, "relation expected"),
        };
        Ok(ok != t.negated)
    }

    fn cat(&self, e: RtErr) -> CatError {
        let (sp, msg) = *e.0;
        self.prog.error(sp, msg, "here")
    }

    pub fn run(&self, each: &mut dyn FnMut(&Outcome)) -> Result<(), CatError> {
        let root = self.new_frame(self.prog.global_slots, NO_FRAME);
        let mut flags = Vec::new();
        self.run_from(vec![K::Seq(&self.prog.top, root)], &mut flags, each)
    }

    fn emit(
        &self,
        failed: Option<String>,
        flags: &[Option<&'p str>],
        each: &mut dyn FnMut(&Outcome),
    ) {
        let mut names: Vec<String> = Vec::new();
        if flags.iter().any(|f| f.is_none()) {
            names.push("*undef*".to_string());
        }
        let mut rest: Vec<&str> = flags.iter().flatten().copied().collect();
        rest.sort_unstable();
        rest.dedup();
        names.extend(rest.into_iter().map(str::to_string));
        let o = Outcome::new(failed, names, self);
        each(&o);
    }

    fn run_from(
        &self,
        mut stack: Vec<K<'p>>,
        flags: &mut Vec<Option<&'p str>>,
        each: &mut dyn FnMut(&Outcome),
    ) -> Result<(), CatError> {
        loop {
            let (ins, frame) = match stack.last_mut() {
                None => {
                    self.emit(None, flags, each);
                    return Ok(());
                }
                Some(K::Seq(ins, frame)) => match ins.split_first() {
                    None => {
                        stack.pop();
                        continue;
                    }
                    Some((i, rest)) => {
                        *ins = rest;
                        (i, *frame)
                    }
                },
                Some(K::Forall {
                    items,
                    idx,
                    body,
                    size,
                    parent,
                }) => {
                    if *idx >= items.items().len() {
                        stack.pop();
                        continue;
                    }
                    let v = items.items()[*idx].clone();
                    *idx += 1;
                    let body: &'p [Instr] = body;
                    let nf = self.new_frame(*size, *parent);
                    self.set_val(nf, 0, v);
                    stack.push(K::Seq(body, nf));
                    continue;
                }
            };
            match ins {
                Instr::Let { binds, stable } => {
                    if !(*stable
                        && self.is_set(frame, binds.iter().flat_map(|b| pat_first(&b.pat))))
                    {
                        self.bind_lazy(binds, frame)
                    }
                }
                Instr::Rec { rec, test, stable } => {
                    let first = rec
                        .funs
                        .iter()
                        .map(|(s, _)| *s)
                        .chain(rec.vals.iter().flat_map(|b| pat_first(&b.pat)));
                    if *stable && self.is_set(frame, first) {
                        continue;
                    }
                    let test = test
                        .as_deref()
                        .filter(|t| !t.name.as_ref().is_some_and(|n| self.skip.contains(n)));
                    if !self.do_rec(rec, frame, test).map_err(|e| self.cat(e))? {
                        let label = test.map(|t| t.label().to_string());
                        self.emit(label, flags, each);
                        return Ok(());
                    }
                }
                Instr::Test(t) => {
                    if t.name.as_ref().is_some_and(|n| self.skip.contains(n)) {
                        continue;
                    }
                    let ok = self.eval_test(t, frame).map_err(|e| self.cat(e))?;
                    if ok {
                        if t.kind == TestType::Flagged {
                            if let Some(n) = &t.name {
                                flags.push(Some(n));
                            }
                        }
                    } else {
                        match t.kind {
                            TestType::Check => {
                                self.emit(Some(t.label().to_string()), flags, each);
                                return Ok(());
                            }
                            TestType::UndefinedUnless => flags.push(None),
                            TestType::Flagged => {}
                            TestType::Assert => {
                                let name = t.name.as_deref().unwrap_or("(unknown)");
                                return Err(self.prog.error(
                                    t.sp,
                                    format!("{name} assertion failed, check input test."),
                                    "this assertion does not hold",
                                ));
                            }
                        }
                    }
                }
                Instr::IfVariant(c, a, b) => {
                    let br = if self.variant(c) { a } else { b };
                    stack.push(K::Seq(br, frame));
                }
                Instr::Match {
                    scrut,
                    clauses,
                    default,
                    sp,
                } => match self.eval(scrut, frame).map_err(|e| self.cat(e))? {
                    Value::Tag(TagName { name: t, .. }) => {
                        match clauses.iter().find(|(c, _)| c == t) {
                            Some((_, b)) => stack.push(K::Seq(b, frame)),
                            None => match default {
                                Some(d) => stack.push(K::Seq(d, frame)),
                                None => {
                                    return Err(self.prog.error(
                                        *sp,
                                        format!("pattern matching failed on value '{t}'"),
                                        "no clause for this tag",
                                    ))
                                }
                            },
                        }
                    }
                    Value::Empty => {
                        return Err(self.prog.error(scrut.sp, "matching on empty", "here"))
                    }
                    Value::Unv => {
                        return Err(self.prog.error(scrut.sp, "matching on universe", "here"))
                    }
                    v => {
                        return Err(self.prog.error(
                            scrut.sp,
                            format!("matching on non-tag value of type '{}'", v.type_name()),
                            "here",
                        ))
                    }
                },
                Instr::Procedure { slot, def } => {
                    self.set_val(frame, *slot, Value::Proc(Rc::new(ProcVal { def, frame })));
                }
                Instr::Call {
                    proc,
                    arg,
                    name,
                    tname,
                    sp,
                } => {
                    if self.skip.contains(name)
                        || tname.as_ref().is_some_and(|n| self.skip.contains(n))
                    {
                        continue;
                    }
                    let p = match self.var(*proc, name, frame, *sp).map_err(|e| self.cat(e))? {
                        Value::Proc(p) => p,
                        _ => {
                            return Err(self.prog.error(
                                *sp,
                                "procedure expected",
                                "not a procedure",
                            ))
                        }
                    };
                    let a = self.eval(arg, frame).map_err(|e| self.cat(e))?;
                    let nf = self.new_frame(p.def.frame_size, p.frame);
                    self.bind_params(&p.def.params, a, nf, *sp)
                        .map_err(|e| self.cat(e))?;
                    stack.push(K::Seq(&p.def.body, nf));
                }
                Instr::Enum { slot, name, tags } => {
                    let items = tags.iter().map(Value::Tag).collect();
                    self.set_val(frame, *slot, Value::valset(Typ::Tag(name), items));
                }
                Instr::Forall {
                    set,
                    body,
                    frame_size,
                } => match tag2set(self.eval(set, frame).map_err(|e| self.cat(e))?) {
                    Value::Empty => {}
                    Value::ValSet(items) => stack.push(K::Forall {
                        items,
                        idx: 0,
                        body,
                        size: *frame_size,
                        parent: frame,
                    }),
                    _ => {
                        return Err(self.prog.error(
                            set.sp,
                            "forall instruction applied to non-set value",
                            "not a set",
                        ))
                    }
                },
                Instr::WithFrom {
                    slot,
                    set,
                    reset_from,
                    reset,
                    name,
                } => {
                    let items = match self.eval(set, frame).map_err(|e| self.cat(e))? {
                        Value::Empty => Vec::new(),
                        Value::ValSet(s) => s.items().to_vec(),
                        _ => return Err(self.prog.error(set.sp, "set expected", "not a set")),
                    };
                    if items.is_empty() {
                        self.emit(Some(format!("with {name} from: no candidate")), flags, each);
                        return Ok(());
                    }
                    let (base, size) = {
                        let fr = &self.frames.borrow()[frame as usize];
                        (fr.base as usize, fr.size as usize)
                    };
                    for v in items {
                        {
                            let mut slots = self.slots.borrow_mut();
                            match reset {
                                Some(r) => {
                                    for s in r {
                                        slots[base + *s as usize] = SlotState::Unset;
                                    }
                                }
                                None => {
                                    for s in &mut slots[base + *reset_from as usize..base + size] {
                                        *s = SlotState::Unset;
                                    }
                                }
                            }
                        }
                        self.set_val(frame, *slot, v);
                        let mark = flags.len();
                        self.run_from(stack.clone(), flags, each)?;
                        flags.truncate(mark);
                    }
                    return Ok(());
                }
                Instr::Fail(e) => return Err((**e).clone()),
                Instr::Alias { to, from } => {
                    let st = match from {
                        VarRef::Local { depth, slot } => {
                            SlotState::Alias(self.abs(frame, *depth, *slot) as u32)
                        }
                        VarRef::Ext(id) => SlotState::Ext(*id),
                    };
                    self.set(frame, *to, st);
                }
            }
        }
    }

    /// A top-level binding at the end of the run, or a name the execution supplies.
    pub fn final_value(&self, name: &str) -> Option<Value<'p>> {
        if let Some(slot) = self.prog.final_scope.get(name) {
            let abs = self.abs(0, 0, *slot);
            return self.force(abs, name, Sp::default()).ok();
        }
        match self.prog.ext.iter().position(|x| x == name) {
            Some(id) => self.ext_value(id as u32, Sp::default()).ok(),
            None => prims::resolve_ext(self, name),
        }
    }
}

impl OutcomeEnv for Rt<'_, '_> {
    fn rel(&self, name: &str) -> Option<Rc<Relation>> {
        match self.final_value(name)? {
            Value::Rel(r) => Some(r),
            Value::Empty => Some(self.empty_rel()),
            Value::Unv => Some(self.unv()),
            Value::Pair(a, b) => Some(Rc::new(Relation::from_pairs(
                self.n,
                [(a as usize, b as usize)],
            ))),
            _ => None,
        }
    }

    fn set(&self, name: &str) -> Option<Rc<EventSet>> {
        match self.final_value(name)? {
            Value::Set(s) => Some(s),
            Value::Empty => Some(self.empty_set()),
            Value::Unv => Some(self.all.clone()),
            Value::Event(e) => Some(Rc::new(EventSet::from_events(self.n, [e as usize]))),
            _ => None,
        }
    }
}

/// An operand of a sequence: `_`, `[S]`, a relation or a class relation.
pub(crate) enum SeqR {
    Unv,
    Id(Rc<EventSet>),
    Rel(Rc<Relation>),
    Class(ClassRel),
}
