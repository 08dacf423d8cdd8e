//! DVE under relaxed memory, as a DVE-to-DVE pass: the model is rewritten so that writes to
//! global variables go through store buffers and a memory process makes them visible, and
//! the result is an ordinary DVE model (checked under SC, printed by `fencer transform`).
//!
//! `pso1` is the DiVinE thesis's semantics (relaxed-memory-in-divine-dve, §3.1-3.2): one
//! buffer slot per process and global location (every array element is a location of its
//! own) with a validity flag; a process reads its own slot when the flag is set; a later
//! write replaces a still-buffered one; the memory process `MM` flushes any valid slot and
//! zeroes it. A transition that reads buffered locations is split into one transition per
//! choice of where each location is read from (its own slot or memory), the choice made
//! explicit in the guard (the thesis's 2^|R(t)| split). An atomic write goes to memory and
//! destroys the process's buffered write to that location; a barrier on a transition
//! requires all of the process's flags to be clear.
//!
//! Reads are split only where their location is known in the state before the transition
//! (guards, sent values, and effect assignments before anything they depend on is
//! assigned); a read after such an assignment is written as the arithmetic selection
//! `i*sb + (1-i)*x`, evaluated where it stands in the sequential effect. Both describe the
//! same successor in every state, so the state space is the thesis's.

use crate::ast::*;
use crate::print;
use std::collections::{BTreeSet, HashMap, HashSet};

/// A global variable that is shared memory: its name, type and array length.
#[derive(Clone, Debug)]
pub struct Shared {
    pub name: String,
    pub ty: Type,
    pub len: Option<u32>,
}

/// Which writes bypass the buffers and which transitions carry a full barrier, by
/// (process name, index of the transition in the process, as written).
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// (process, transition, variable): writes of the variable in that transition are
    /// atomic. The variable `*` makes every write of the transition atomic.
    pub atomic: BTreeSet<(String, usize, String)>,
    pub barrier: BTreeSet<(String, usize)>,
    /// Keep the value of a slot that has been written out (the thesis zeroes dead
    /// buffers, so that states differing only there are one; this turns that off, to
    /// measure it).
    pub keep_stale: bool,
}

impl Placement {
    fn is_atomic(&self, p: &str, t: usize, g: &str) -> bool {
        self.atomic.contains(&(p.to_string(), t, g.to_string()))
            || self.atomic.contains(&(p.to_string(), t, "*".to_string()))
    }
}

/// Where a transition of the transformed model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The transition `trans` (index as written) of the same process of the original.
    Program { trans: usize },
    /// The memory process writing `var` (an element: `A[2]`) from `process`'s buffer to
    /// memory; `group` numbers the buffer, for fairness.
    Flush {
        process: String,
        var: String,
        group: u32,
    },
}

/// What the pass adds, to read the transformed model's runs in the original's terms.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// For each process of the transformed model (by name), each transition's origin.
    pub origin: HashMap<String, Vec<Origin>>,
    /// The memory process's name.
    pub memory: String,
    /// The number of buffers (fairness groups: each must not hold a write forever).
    pub groups: u32,
    /// Buffer variables: name -> (variable, process) for a slot, and flag names.
    pub slots: HashMap<String, (String, String)>,
    pub flags: HashSet<String>,
    /// Each buffer: (variable, process, slot name, flag name).
    pub buffers: Vec<(String, String, String, String)>,
    /// TSO/PSO: each process's queue (process, addresses, values, count), the name of
    /// each address, and the variables the pass adds that are not memory.
    pub queues: Vec<(String, String, String, String)>,
    pub addresses: Vec<String>,
    pub hidden: HashSet<String>,
    /// TSO/PSO: the most writes a buffer holds.
    pub bound: Option<u32>,
    /// Per process: the write positions (transition index, variable) that go through the
    /// buffer, i.e. the candidates for making atomic.
    pub writes: Vec<(String, usize, String)>,
}

#[derive(Clone, Debug)]
pub struct Error {
    pub span: Span,
    pub message: String,
}

type R<T> = Result<T, Error>;

fn sp() -> Span {
    Span { start: 0, end: 0 }
}

fn id(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: sp(),
    }
}

fn num(n: i64) -> Expr {
    Expr::Num(n, sp())
}

fn var(name: &str, idx: Option<Expr>) -> Expr {
    Expr::Var(id(name), idx.map(Box::new))
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn and_all(es: impl IntoIterator<Item = Expr>) -> Option<Expr> {
    es.into_iter().reduce(|a, b| bin(BinOp::And, a, b))
}

/// Names (base names of variables) an expression reads, not looking into remote reads.
fn names_in(e: &Expr, out: &mut HashSet<String>) {
    match e {
        Expr::Var(n, idx) => {
            out.insert(n.name.clone());
            if let Some(i) = idx {
                names_in(i, out);
            }
        }
        Expr::Remote(_, _, Some(i)) => names_in(i, out),
        Expr::Call(_, args, _) => args.iter().for_each(|a| names_in(a, out)),
        Expr::Unary(_, a, _) => names_in(a, out),
        Expr::Binary(_, a, b) => {
            names_in(a, out);
            names_in(b, out);
        }
        _ => {}
    }
}

/// The base name a place (assignment target) writes.
fn target_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Var(n, _) => Some(&n.name),
        _ => None,
    }
}

struct Proc<'a> {
    name: &'a str,
    locals: HashSet<String>,
    /// Shared variables this process buffers (it writes them non-atomically somewhere).
    buffered: &'a HashMap<String, (String, String)>,
    keep_stale: bool,
}

impl Proc<'_> {
    fn is_buffered(&self, n: &str) -> bool {
        !self.locals.contains(n) && self.buffered.contains_key(n)
    }
    fn sb(&self, g: &str) -> &str {
        &self.buffered[g].0
    }
    fn flag(&self, g: &str) -> &str {
        &self.buffered[g].1
    }
}

/// A read of a buffered location whose source (own slot or memory) is chosen by the split.
#[derive(Clone, Debug)]
struct Site {
    name: String,
    idx: Option<Expr>,
    key: String,
}

fn site_key(name: &str, idx: &Option<Box<Expr>>) -> String {
    match idx {
        Some(i) => format!("{name}[{}]", print::expr(i)),
        None => name.to_string(),
    }
}

/// Rewrites the buffered reads of `e`: a read whose key is in `split` reads its slot
/// (`true`) or memory (`false`); any other buffered read, and any read that depends on a
/// name in `assigned` (assigned earlier in the same effect), is the selection
/// `i*sb+(1-i)*x`.
fn rewrite(e: &Expr, p: &Proc, split: &HashMap<String, bool>, assigned: &HashSet<String>) -> Expr {
    let rw = |x: &Expr| rewrite(x, p, split, assigned);
    match e {
        Expr::Var(n, idx) if p.is_buffered(&n.name) => {
            let idx2 = idx.as_ref().map(|i| rw(i));
            let key = site_key(&n.name, idx);
            let mut deps = HashSet::new();
            names_in(e, &mut deps);
            let choice = if deps.iter().any(|d| assigned.contains(d)) {
                None
            } else {
                split.get(&key)
            };
            match choice {
                Some(true) => var(p.sb(&n.name), idx2),
                Some(false) => var(&n.name, idx2),
                None => {
                    let f = var(p.flag(&n.name), idx2.clone());
                    let s = var(p.sb(&n.name), idx2.clone());
                    let m = var(&n.name, idx2);
                    bin(
                        BinOp::Add,
                        bin(BinOp::Mul, f.clone(), s),
                        bin(BinOp::Mul, bin(BinOp::Sub, num(1), f), m),
                    )
                }
            }
        }
        Expr::Var(n, idx) => Expr::Var(n.clone(), idx.as_ref().map(|i| Box::new(rw(i)))),
        Expr::Remote(q, x, idx) => {
            Expr::Remote(q.clone(), x.clone(), idx.as_ref().map(|i| Box::new(rw(i))))
        }
        Expr::Call(f, args, s) => Expr::Call(f.clone(), args.iter().map(rw).collect(), *s),
        Expr::Unary(op, a, s) => Expr::Unary(*op, Box::new(rw(a)), *s),
        Expr::Binary(op, a, b) => bin(*op, rw(a), rw(b)),
        other => other.clone(),
    }
}

/// The buffered reads in `e` that are always evaluated when `e` is (not behind a
/// short-circuit `&&`, `||` or `imply`, when `uncond`), an index's reads before the read
/// it indexes: in the order their sources can be checked without evaluating an index
/// that the model would not.
fn sites(e: &Expr, p: &Proc, out: &mut Vec<Site>, uncond: bool) {
    match e {
        Expr::Var(n, idx) => {
            if let Some(i) = idx {
                sites(i, p, out, uncond);
            }
            if p.is_buffered(&n.name) && uncond {
                out.push(Site {
                    name: n.name.clone(),
                    idx: idx.as_deref().cloned(),
                    key: site_key(&n.name, idx),
                });
            }
        }
        Expr::Remote(_, _, Some(i)) => sites(i, p, out, uncond),
        Expr::Call(_, args, _) => args.iter().for_each(|a| sites(a, p, out, uncond)),
        Expr::Unary(_, a, _) => sites(a, p, out, uncond),
        Expr::Binary(op, a, b) => {
            sites(a, p, out, uncond);
            let lazy = matches!(op, BinOp::And | BinOp::Or | BinOp::Imply);
            sites(b, p, out, uncond && !lazy);
        }
        _ => {}
    }
}

/// The first named-expression call in `e`: its body would read memory behind the
/// transformation's back.
fn call_in(e: &Expr) -> Option<Span> {
    match e {
        Expr::Call(_, _, s) => Some(*s),
        Expr::Var(_, Some(i)) | Expr::Remote(_, _, Some(i)) | Expr::Unary(_, i, _) => call_in(i),
        Expr::Binary(_, a, b) => call_in(a).or_else(|| call_in(b)),
        _ => None,
    }
}

/// More splits than this and reads are written as selections instead (same state space,
/// fewer transitions to print).
const MAX_SPLIT: usize = 6;

/// Every name the model declares; an error for what the pass does not take (templates
/// and their instances).
fn declared(m: &Model) -> R<HashSet<String>> {
    let mut taken: HashSet<String> = HashSet::new();
    for it in &m.items {
        match it {
            Item::Var(v) => {
                taken.insert(v.name.name.clone());
            }
            Item::Chan(c) => {
                taken.insert(c.name.name.clone());
            }
            Item::Process(p) => {
                taken.insert(p.name.name.clone());
                if p.params.is_some() {
                    return Err(Error {
                        span: p.name.span,
                        message: format!(
                            "process template `{}`: the relaxed-memory transformation needs DiVinE 2 style processes (instantiate the template by hand)",
                            p.name.name
                        ),
                    });
                }
                for v in &p.vars {
                    taken.insert(v.name.name.clone());
                }
            }
            Item::For(f) => {
                return Err(Error {
                    span: f.var.span,
                    message: "`for` loops of instances: the relaxed-memory transformation needs DiVinE 2 style processes".into(),
                })
            }
            Item::Instance(i) => {
                return Err(Error {
                    span: i.span,
                    message: "process instances: the relaxed-memory transformation needs DiVinE 2 style processes".into(),
                })
            }
            _ => {}
        }
    }
    Ok(taken)
}

/// The transformed model: the original's other items, the new declarations, the program's
/// processes in their order, the memory process `mm`, then a property process.
#[allow(clippy::too_many_arguments)] // the parts both transformations build
fn assemble(
    m: &Model,
    mut items: Vec<Item>,
    new_decls: Vec<Item>,
    procs: Vec<Process>,
    mm: &str,
    flushes: Vec<Transition>,
    flush_origin: Vec<Origin>,
    mut meta: Meta,
) -> (Model, Meta) {
    meta.memory = mm.to_string();
    meta.origin.insert(mm.to_string(), flush_origin);
    items.extend(new_decls);
    let (props, progs): (Vec<Process>, Vec<Process>) = procs.into_iter().partition(|p| p.property);
    items.extend(progs.into_iter().map(Item::Process));
    items.push(Item::Process(Process {
        name: id(mm),
        params: None,
        property: false,
        vars: Vec::new(),
        channels: Vec::new(),
        states: vec![id("q0")],
        init: Some(id("q0")),
        accept: Vec::new(),
        commit: Vec::new(),
        asserts: Vec::new(),
        trans: flushes,
        span: sp(),
    }));
    items.extend(props.into_iter().map(Item::Process));
    (
        Model {
            items,
            synchronous: m.synchronous,
            property: m.property.clone(),
        },
        meta,
    )
}

/// An error for a named-expression call in `t`: its body would read memory behind the
/// transformation's back.
fn no_calls(t: &Transition) -> R<()> {
    let exprs = t
        .guard
        .iter()
        .chain(t.sync.iter().flat_map(|s| s.values.iter()))
        .chain(t.effect.iter().flat_map(|a| [&a.target, &a.value]));
    for e in exprs {
        if let Some(span) = call_in(e) {
            return Err(Error {
                span,
                message: "a named expression in a transition: the relaxed-memory transformation cannot see the variables it reads (write the expression out)".into(),
            });
        }
    }
    Ok(())
}

/// The thesis's `pso1` transformation of `m`; `shared` lists the global variables (not
/// constants). Templates and `for` loops are not supported (instantiate them first).
pub fn pso1(m: &Model, shared: &[Shared], place: &Placement) -> R<(Model, Meta)> {
    let shared_names: HashMap<&str, &Shared> =
        shared.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut taken = declared(m)?;
    let mut fresh = |base: String| {
        let mut n = base;
        while taken.contains(&n) {
            n.push('_');
        }
        taken.insert(n.clone());
        n
    };
    let mut meta = Meta::default();
    let mut out_items: Vec<Item> = Vec::new();
    let mut new_decls: Vec<Item> = Vec::new();
    let mut flushes: Vec<Transition> = Vec::new();
    let mut flush_origin: Vec<Origin> = Vec::new();
    let mut procs: Vec<Process> = Vec::new();
    for it in &m.items {
        let Item::Process(p) = it else {
            out_items.push(it.clone());
            continue;
        };
        if p.property {
            procs.push(p.clone());
            continue;
        }
        let locals: HashSet<String> = p.vars.iter().map(|v| v.name.name.clone()).collect();
        let pname = p.name.name.as_str();
        // The shared variables this process writes through its buffer.
        let mut written: BTreeSet<String> = BTreeSet::new();
        for (ti, t) in p.trans.iter().enumerate() {
            for n in written_names(t) {
                if !locals.contains(n)
                    && shared_names.contains_key(n)
                    && !place.is_atomic(pname, ti, n)
                {
                    written.insert(n.to_string());
                    meta.writes.push((pname.to_string(), ti, n.to_string()));
                }
            }
        }
        meta.writes.dedup();
        let mut buffered: HashMap<String, (String, String)> = HashMap::new();
        for g in &written {
            let s = shared_names[g.as_str()];
            let sb = fresh(format!("sb_{g}_{pname}"));
            let fl = fresh(format!("i_{g}_{pname}"));
            for (n, ty) in [(&sb, s.ty), (&fl, Type::Byte)] {
                new_decls.push(Item::Var(VarDecl {
                    ty,
                    konst: false,
                    input: false,
                    name: id(n),
                    size: s.len.map(|l| num(l as i64)),
                    init: None,
                }));
            }
            meta.slots
                .insert(sb.clone(), (g.clone(), pname.to_string()));
            meta.flags.insert(fl.clone());
            meta.buffers
                .push((g.clone(), pname.to_string(), sb.clone(), fl.clone()));
            for k in 0..s.len.unwrap_or(1) {
                let idx = s.len.map(|_| num(k as i64));
                let elem = match s.len {
                    Some(_) => format!("{g}[{k}]"),
                    None => g.clone(),
                };
                flushes.push(Transition {
                    from: id("q0"),
                    to: id("q0"),
                    guard: Some(bin(BinOp::Eq, var(&fl, idx.clone()), num(1))),
                    sync: None,
                    effect: [
                        Assign {
                            target: var(g, idx.clone()),
                            value: var(&sb, idx.clone()),
                        },
                        Assign {
                            target: var(&fl, idx.clone()),
                            value: num(0),
                        },
                        Assign {
                            target: var(&sb, idx.clone()),
                            value: num(0),
                        },
                    ]
                    .into_iter()
                    .take(if place.keep_stale { 2 } else { 3 })
                    .collect(),
                    span: sp(),
                });
                flush_origin.push(Origin::Flush {
                    process: pname.to_string(),
                    var: elem,
                    group: meta.groups,
                });
                meta.groups += 1;
            }
            buffered.insert(g.clone(), (sb, fl));
        }
        let pr = Proc {
            name: pname,
            locals,
            buffered: &buffered,
            keep_stale: place.keep_stale,
        };
        let mut q = p.clone();
        q.trans.clear();
        let mut origin = Vec::new();
        for (ti, t) in p.trans.iter().enumerate() {
            for nt in transition(t, ti, &pr, place, shared)? {
                q.trans.push(nt);
                origin.push(Origin::Program { trans: ti });
            }
        }
        q.asserts = p
            .asserts
            .iter()
            .map(|(s, e)| (s.clone(), rewrite(e, &pr, &HashMap::new(), &HashSet::new())))
            .collect();
        meta.origin.insert(pname.to_string(), origin);
        procs.push(q);
    }
    let mm = fresh("MM".to_string());
    Ok(assemble(
        m,
        out_items,
        new_decls,
        procs,
        &mm,
        flushes,
        flush_origin,
        meta,
    ))
}

/// The transitions that replace `t` (index `ti`) of process `p`.
fn transition(
    t: &Transition,
    ti: usize,
    p: &Proc,
    place: &Placement,
    shared: &[Shared],
) -> R<Vec<Transition>> {
    let is_shared = |n: &str| !p.locals.contains(n) && shared.iter().any(|s| s.name == n);
    no_calls(t)?;
    // The guard's reads that it always evaluates: their sources are checked before the
    // guard (so that the guard never divides by a value from the wrong source); its other
    // reads are selections.
    let mut in_guard: Vec<Site> = Vec::new();
    if let Some(g) = &t.guard {
        sites(g, p, &mut in_guard, true);
    }
    // Reads of the effect (and sync) whose location is fixed in the state before the
    // transition: checked after the guard, which the model evaluates first.
    let mut stable: Vec<Site> = Vec::new();
    let mut assigned: HashSet<String> = HashSet::new();
    if let Some(s) = &t.sync {
        for v in &s.values {
            if s.send {
                sites(v, p, &mut stable, true);
            } else {
                if let Expr::Var(_, Some(i)) = v {
                    sites(i, p, &mut stable, true);
                }
                if let Some(n) = target_name(v) {
                    assigned.insert(n.to_string());
                }
            }
        }
    }
    for a in &t.effect {
        let mut here = Vec::new();
        if let Expr::Var(_, Some(i)) = &a.target {
            sites(i, p, &mut here, true);
        }
        sites(&a.value, p, &mut here, true);
        for s in here {
            let mut deps = HashSet::new();
            if let Some(i) = &s.idx {
                names_in(i, &mut deps);
            }
            deps.insert(s.name.clone());
            if deps.iter().all(|d| !assigned.contains(d)) {
                stable.push(s);
            }
        }
        if let Some(n) = target_name(&a.target) {
            assigned.insert(n.to_string());
        }
    }
    let mut keys: Vec<Site> = Vec::new();
    for s in in_guard {
        if !keys.iter().any(|k| k.key == s.key) {
            keys.push(s);
        }
    }
    let guard_keys = keys.len();
    for s in stable {
        if !keys.iter().any(|k| k.key == s.key) {
            keys.push(s);
        }
    }
    let (keys, guard_keys) = if keys.len() > MAX_SPLIT {
        (Vec::new(), 0)
    } else {
        (keys, guard_keys)
    };
    let barrier = place.barrier.contains(&(p.name.to_string(), ti));
    let mut out = Vec::new();
    for mask in 0..(1u32 << keys.len()) {
        let split: HashMap<String, bool> = keys
            .iter()
            .enumerate()
            .map(|(k, s)| (s.key.clone(), mask & (1 << k) != 0))
            .collect();
        let guard_split: HashMap<String, bool> = keys[..guard_keys]
            .iter()
            .map(|s| (s.key.clone(), split[&s.key]))
            .collect();
        let none = HashSet::new();
        let check = |s: &Site| {
            let idx = s.idx.as_ref().map(|i| rewrite(i, p, &split, &none));
            let v = if split[&s.key] { 1 } else { 0 };
            bin(BinOp::Eq, var(p.flag(&s.name), idx), num(v))
        };
        let mut conj: Vec<Expr> = keys[..guard_keys].iter().map(check).collect();
        if barrier {
            for (g, (_, fl)) in p
                .buffered
                .iter()
                .collect::<std::collections::BTreeMap<_, _>>()
            {
                let len = shared.iter().find(|s| &s.name == g).and_then(|s| s.len);
                match len {
                    None => conj.push(bin(BinOp::Eq, var(fl, None), num(0))),
                    Some(n) => {
                        for k in 0..n {
                            conj.push(bin(BinOp::Eq, var(fl, Some(num(k as i64))), num(0)))
                        }
                    }
                }
            }
        }
        if let Some(g) = &t.guard {
            conj.push(rewrite(g, p, &guard_split, &none));
        }
        conj.extend(keys[guard_keys..].iter().map(check));
        let mut nt = t.clone();
        nt.guard = and_all(conj);
        let mut prefix: Vec<Assign> = Vec::new();
        let mut done: HashSet<String> = HashSet::new();
        if let Some(s) = &mut nt.sync {
            for v in &mut s.values {
                if s.send {
                    *v = rewrite(v, p, &split, &none);
                    continue;
                }
                let Expr::Var(n, idx) = v.clone() else {
                    continue;
                };
                done.insert(n.name.clone());
                let idx = idx.map(|i| rewrite(&i, p, &split, &none));
                if is_shared(&n.name) {
                    let (t2, pre) = write(p, &n.name, idx, place.is_atomic(p.name, ti, &n.name));
                    *v = t2;
                    prefix.extend(pre);
                } else {
                    *v = Expr::Var(n, idx.map(Box::new));
                }
            }
        }
        let mut effect = prefix;
        for a in &t.effect {
            let value = rewrite(&a.value, p, &split, &done);
            let Expr::Var(n, idx) = &a.target else {
                return Err(Error {
                    span: a.target.span(),
                    message: "an assignment's target must be a variable".into(),
                });
            };
            let idx = idx.as_ref().map(|i| rewrite(i, p, &split, &done));
            done.insert(n.name.clone());
            if is_shared(&n.name) {
                if let Some(i) = &idx {
                    let mut deps = HashSet::new();
                    names_in(i, &mut deps);
                    if deps.contains(&n.name) {
                        return Err(Error {
                            span: a.target.span(),
                            message: format!(
                                "`{}`: an index that reads the array it writes is not supported by the relaxed-memory transformation",
                                print::expr(&a.target)
                            ),
                        });
                    }
                }
                let atomic = place.is_atomic(p.name, ti, &n.name);
                let (target, rest) = write(p, &n.name, idx, atomic);
                effect.push(Assign { target, value });
                effect.extend(rest);
            } else {
                effect.push(Assign {
                    target: Expr::Var(n.clone(), idx.map(Box::new)),
                    value,
                });
            }
        }
        nt.effect = effect;
        out.push(nt);
    }
    Ok(out)
}

/// A write of shared `g[idx]`: the place written and the assignments that follow it.
fn write(p: &Proc, g: &str, idx: Option<Expr>, atomic: bool) -> (Expr, Vec<Assign>) {
    if atomic || !p.buffered.contains_key(g) {
        let rest = if p.buffered.contains_key(g) {
            // An atomic write destroys the process's buffered write to the location.
            let mut r = vec![Assign {
                target: var(p.flag(g), idx.clone()),
                value: num(0),
            }];
            if !p.keep_stale {
                r.push(Assign {
                    target: var(p.sb(g), idx.clone()),
                    value: num(0),
                });
            }
            r
        } else {
            Vec::new()
        };
        (var(g, idx), rest)
    } else {
        (
            var(p.sb(g), idx.clone()),
            vec![Assign {
                target: var(p.flag(g), idx),
                value: num(1),
            }],
        )
    }
}

/// The variables transition `t` of process `p` (as written) reads or writes, by name,
/// the process's locals left out.
pub fn touched(p: &Process, t: &Transition) -> HashSet<String> {
    let mut names = HashSet::new();
    if let Some(g) = &t.guard {
        names_in(g, &mut names);
    }
    if let Some(s) = &t.sync {
        s.values.iter().for_each(|v| names_in(v, &mut names));
    }
    for a in &t.effect {
        names_in(&a.target, &mut names);
        names_in(&a.value, &mut names);
    }
    for v in &p.vars {
        names.remove(&v.name.name);
    }
    names
}

/// Whether every write of `g` in `t` has a literal index (or `g` is a scalar).
pub fn constant_index(t: &Transition, g: &str) -> bool {
    t.effect
        .iter()
        .filter(|a| target_name(&a.target) == Some(g))
        .all(|a| match &a.target {
            Expr::Var(_, Some(i)) => matches!(**i, Expr::Num(..)),
            _ => true,
        })
}

/// x86-TSO or PSO store buffers of at most `bound` writes per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fifo {
    /// One FIFO per process; the oldest write reaches memory first.
    Tso,
    /// Writes to one location reach memory in order, writes to different locations in any
    /// order (a per-location FIFO; the bound is on all of a process's writes together).
    Pso,
}

/// The buffer of one process under `fifo`: addresses, values and the count.
struct Queue {
    addr: String,
    val: String,
    n: String,
}

/// TSO or PSO with bounded buffers: each process that writes shared memory gets a queue
/// of `bound` (address, value) entries; every global location has an address (an array
/// element: its array's base plus the index). A write appends (the transition waits while
/// the queue has no room for its writes: a legal schedule, so the result holds up to the
/// bound), a read takes the newest entry for its address or else memory, and the memory
/// process writes out the oldest entry (TSO) or the oldest entry of any address (PSO).
/// Atomic writes and barriers wait for an empty queue; a transition with an atomic write
/// writes all its shared locations to memory.
pub fn fifo(
    m: &Model,
    shared: &[Shared],
    place: &Placement,
    kind: Fifo,
    bound: u32,
) -> R<(Model, Meta)> {
    let bound = bound.max(1);
    let mut taken = declared(m)?;
    let mut fresh = |base: String| {
        let mut n = base;
        while taken.contains(&n) {
            n.push('_');
        }
        taken.insert(n.clone());
        n
    };
    // Addresses: each shared variable's base.
    let mut base: HashMap<String, (u32, &Shared)> = HashMap::new();
    let mut next = 0u32;
    for sh in shared {
        base.insert(sh.name.clone(), (next, sh));
        next += sh.len.unwrap_or(1);
    }
    let locations: Vec<(String, Option<u32>, u32)> = shared
        .iter()
        .flat_map(|sh| {
            let b = base[&sh.name].0;
            (0..sh.len.unwrap_or(1)).map(move |k| (sh.name.clone(), sh.len.map(|_| k), b + k))
        })
        .collect();
    let chk = fresh("fifo_byte".to_string());
    let fullv = fresh("fifo_full".to_string());
    let mut meta = Meta {
        bound: Some(bound),
        addresses: locations
            .iter()
            .map(|(g, k, _)| match k {
                Some(k) => format!("{g}[{k}]"),
                None => g.clone(),
            })
            .collect(),
        ..Meta::default()
    };
    meta.hidden.insert(chk.clone());
    meta.hidden.insert(fullv.clone());

    let mut items: Vec<Item> = Vec::new();
    let mut new_decls: Vec<Item> = vec![Item::Var(VarDecl {
        ty: Type::Byte,
        konst: false,
        input: false,
        name: id(&chk),
        size: None,
        init: None,
    })];
    new_decls.push(Item::Var(VarDecl {
        ty: Type::Byte,
        konst: false,
        input: false,
        name: id(&fullv),
        size: None,
        init: None,
    }));
    let mut procs: Vec<Process> = Vec::new();
    let mut flushes: Vec<Transition> = Vec::new();
    let mut flush_origin: Vec<Origin> = Vec::new();
    for it in &m.items {
        let Item::Process(p) = it else {
            items.push(it.clone());
            continue;
        };
        if p.property {
            procs.push(p.clone());
            continue;
        }
        let pname = p.name.name.clone();
        let locals: HashSet<String> = p.vars.iter().map(|v| v.name.name.clone()).collect();
        let is_shared = |n: &str| !locals.contains(n) && base.contains_key(n);
        let atomic_t = |t: usize, tr: &Transition| {
            written_names(tr)
                .into_iter()
                .any(|g| is_shared(g) && place.is_atomic(&pname, t, g))
        };
        let writes_of = |tr: &Transition| -> Vec<String> {
            written_names(tr)
                .into_iter()
                .filter(|g| is_shared(g))
                .map(str::to_string)
                .collect()
        };
        // The variables whose writes go through this process's queue.
        let queued: HashSet<String> = p
            .trans
            .iter()
            .enumerate()
            .filter(|(t, tr)| !atomic_t(*t, tr))
            .flat_map(|(_, tr)| writes_of(tr))
            .collect();
        let buffered = !queued.is_empty();
        let q = if buffered {
            let q = Queue {
                addr: fresh(format!("fifo_addr_{pname}")),
                val: fresh(format!("fifo_val_{pname}")),
                n: fresh(format!("fifo_n_{pname}")),
            };
            for (n, ty, len) in [
                (&q.addr, Type::Int, Some(bound)),
                (&q.val, Type::Int, Some(bound)),
                (&q.n, Type::Byte, None),
            ] {
                new_decls.push(Item::Var(VarDecl {
                    ty,
                    konst: false,
                    input: false,
                    name: id(n),
                    size: len.map(|l| num(l as i64)),
                    init: None,
                }));
            }
            meta.hidden
                .extend([q.addr.clone(), q.val.clone(), q.n.clone()]);
            meta.queues
                .push((pname.clone(), q.addr.clone(), q.val.clone(), q.n.clone()));
            Some(q)
        } else {
            None
        };
        // The address of `g[idx]`.
        let address = |g: &str, idx: Option<Expr>| -> Expr {
            let b = num(base[g].0 as i64);
            match idx {
                // `g[i] * 0` keeps the model's check that the index is in range: an
                // address past the array would name another variable.
                Some(i) => bin(
                    BinOp::Add,
                    bin(BinOp::Add, b, i.clone()),
                    bin(BinOp::Mul, var(g, Some(i)), num(0)),
                ),
                None => b,
            }
        };
        // A read of `g[idx]` through the queue: the newest entry with its address, else
        // memory.
        fn read(q: &Queue, bound: u32, addr: Expr, mem: Expr) -> Expr {
            let hit = |s: u32| {
                bin(
                    BinOp::And,
                    bin(BinOp::Lt, num(s as i64), var(&q.n, None)),
                    bin(BinOp::Eq, var(&q.addr, Some(num(s as i64))), addr.clone()),
                )
            };
            let mut sum: Option<Expr> = None;
            let mut any: Option<Expr> = None;
            for s in 0..bound {
                let mut newest = hit(s);
                for later in s + 1..bound {
                    newest = bin(
                        BinOp::And,
                        newest,
                        Expr::Unary(UnOp::Not, Box::new(hit(later)), sp()),
                    );
                }
                let term = bin(BinOp::Mul, newest, var(&q.val, Some(num(s as i64))));
                sum = Some(match sum {
                    None => term,
                    Some(x) => bin(BinOp::Add, x, term),
                });
                any = Some(match any {
                    None => hit(s),
                    Some(x) => bin(BinOp::Or, x, hit(s)),
                });
            }
            let miss = bin(BinOp::Sub, num(1), any.expect("bound >= 1"));
            bin(
                BinOp::Add,
                sum.expect("bound >= 1"),
                bin(BinOp::Mul, miss, mem),
            )
        }
        fn through(
            e: &Expr,
            q: &Queue,
            bound: u32,
            is_shared: &dyn Fn(&str) -> bool,
            address: &dyn Fn(&str, Option<Expr>) -> Expr,
        ) -> Expr {
            let rw = |x: &Expr| through(x, q, bound, is_shared, address);
            match e {
                Expr::Var(n, idx) if is_shared(&n.name) => {
                    let idx2 = idx.as_ref().map(|i| rw(i));
                    let mem = var(&n.name, idx2.clone());
                    read(q, bound, address(&n.name, idx2), mem)
                }
                Expr::Var(n, idx) => Expr::Var(n.clone(), idx.as_ref().map(|i| Box::new(rw(i)))),
                Expr::Remote(p, x, idx) => {
                    Expr::Remote(p.clone(), x.clone(), idx.as_ref().map(|i| Box::new(rw(i))))
                }
                Expr::Call(f, args, s) => Expr::Call(f.clone(), args.iter().map(rw).collect(), *s),
                Expr::Unary(op, a, s) => Expr::Unary(*op, Box::new(rw(a)), *s),
                Expr::Binary(op, a, b) => bin(*op, rw(a), rw(b)),
                other => other.clone(),
            }
        }
        let mut out = p.clone();
        out.trans.clear();
        let mut origin = Vec::new();
        for (ti, t) in p.trans.iter().enumerate() {
            no_calls(t)?;
            let atomic = atomic_t(ti, t);
            let rw = |e: &Expr| match &q {
                Some(q) => through(e, q, bound, &is_shared, &address),
                None => e.clone(),
            };
            let mut nt = t.clone();
            let mut conj: Vec<Expr> = Vec::new();
            if let Some(g) = &t.guard {
                conj.push(rw(g));
            }
            let writes = writes_of(t);
            nt.guard = and_all(conj);
            // The oldest entry reaches memory first when `cond` holds (a legal schedule:
            // the memory process could have written it just before), so that no write
            // ever waits for room, and no barrier for the memory process, which may not
            // move while the process is in a committed state.
            let oldest_out = |q: &Queue, cond: Expr| -> Vec<Assign> {
                let full = var(&fullv, None);
                let at = |x: &str, i: u32| var(x, Some(num(i as i64)));
                let mut a = vec![Assign {
                    target: full.clone(),
                    value: cond,
                }];
                for (g, k, addr) in locations.iter().filter(|l| queued.contains(&l.0)) {
                    let cell = var(g, k.map(|k| num(k as i64)));
                    let hit = bin(
                        BinOp::And,
                        full.clone(),
                        bin(BinOp::Eq, at(&q.addr, 0), num(*addr as i64)),
                    );
                    a.push(Assign {
                        target: cell.clone(),
                        value: bin(
                            BinOp::Add,
                            cell.clone(),
                            bin(BinOp::Mul, hit, bin(BinOp::Sub, at(&q.val, 0), cell)),
                        ),
                    });
                }
                let moved = |x: Expr, y: Expr| {
                    bin(
                        BinOp::Add,
                        x.clone(),
                        bin(BinOp::Mul, full.clone(), bin(BinOp::Sub, y, x)),
                    )
                };
                for j in 0..bound - 1 {
                    for arr in [&q.addr, &q.val] {
                        a.push(Assign {
                            target: at(arr, j),
                            value: moved(at(arr, j), at(arr, j + 1)),
                        });
                    }
                }
                if !place.keep_stale {
                    for arr in [&q.addr, &q.val] {
                        a.push(Assign {
                            target: at(arr, bound - 1),
                            value: moved(at(arr, bound - 1), num(0)),
                        });
                    }
                }
                a.push(Assign {
                    target: var(&q.n, None),
                    value: bin(BinOp::Sub, var(&q.n, None), full.clone()),
                });
                a.push(Assign {
                    target: full,
                    value: num(0),
                });
                a
            };
            // A buffered write: range-check a byte through the scratch variable, then
            // append.
            let append = |g: &str, idx: Option<Expr>, value: Expr, q: &Queue| -> Vec<Assign> {
                let ty = base[g].1.ty;
                let n = var(&q.n, None);
                let (first, v) = if ty == Type::Byte {
                    (
                        vec![Assign {
                            target: var(&chk, None),
                            value,
                        }],
                        var(&chk, None),
                    )
                } else {
                    (Vec::new(), value)
                };
                let mut a = first;
                a.extend(oldest_out(q, bin(BinOp::Eq, n.clone(), num(bound as i64))));
                a.push(Assign {
                    target: var(&q.addr, Some(n.clone())),
                    value: address(g, idx),
                });
                a.push(Assign {
                    target: var(&q.val, Some(n.clone())),
                    value: v,
                });
                if ty == Type::Byte {
                    a.push(Assign {
                        target: var(&chk, None),
                        value: num(0),
                    });
                }
                a.push(Assign {
                    target: n.clone(),
                    value: bin(BinOp::Add, n, num(1)),
                });
                a
            };
            let mut effect: Vec<Assign> = Vec::new();
            // An atomic write or a barrier writes the whole queue out first.
            if let Some(q) = &q {
                if atomic || place.barrier.contains(&(pname.clone(), ti)) {
                    for _ in 0..bound {
                        effect.extend(oldest_out(q, bin(BinOp::Gt, var(&q.n, None), num(0))));
                    }
                }
            }
            if let Some(s) = &mut nt.sync {
                for v in &mut s.values {
                    if s.send {
                        *v = rw(v);
                        continue;
                    }
                    let Expr::Var(n, idx) = v.clone() else {
                        continue;
                    };
                    let idx = idx.map(|i| rw(&i));
                    match &q {
                        Some(qq) if is_shared(&n.name) && !atomic => {
                            // Received into the scratch place, then buffered.
                            let tmp = fresh(format!("fifo_recv_{pname}_{ti}"));
                            new_decls.push(Item::Var(VarDecl {
                                ty: Type::Int,
                                konst: false,
                                input: false,
                                name: id(&tmp),
                                size: None,
                                init: None,
                            }));
                            meta.hidden.insert(tmp.clone());
                            *v = var(&tmp, None);
                            effect.extend(append(&n.name, idx, var(&tmp, None), qq));
                            effect.push(Assign {
                                target: var(&tmp, None),
                                value: num(0),
                            });
                        }
                        _ => *v = Expr::Var(n, idx.map(Box::new)),
                    }
                }
            }
            for a in &t.effect {
                let value = rw(&a.value);
                let Expr::Var(n, idx) = &a.target else {
                    return Err(Error {
                        span: a.target.span(),
                        message: "an assignment's target must be a variable".into(),
                    });
                };
                let idx = idx.as_ref().map(|i| rw(i));
                match &q {
                    Some(qq) if is_shared(&n.name) && !atomic => {
                        effect.extend(append(&n.name, idx, value, qq));
                    }
                    _ => effect.push(Assign {
                        target: Expr::Var(n.clone(), idx.map(Box::new)),
                        value,
                    }),
                }
            }
            nt.effect = effect;
            out.trans.push(nt);
            origin.push(Origin::Program { trans: ti });
            if !atomic {
                for g in writes.iter().collect::<BTreeSet<_>>() {
                    meta.writes.push((pname.clone(), ti, g.clone()));
                }
            }
        }
        out.asserts = p
            .asserts
            .iter()
            .map(|(st, e)| {
                (
                    st.clone(),
                    match &q {
                        Some(q) => through(e, q, bound, &is_shared, &address),
                        None => e.clone(),
                    },
                )
            })
            .collect();
        // The memory process: entry `s` of this queue reaches memory (TSO: only the
        // oldest; PSO: the oldest for its address), the later entries move down.
        if let Some(q) = &q {
            let slots = match kind {
                Fifo::Tso => 1,
                Fifo::Pso => bound,
            };
            for (g, k, addr) in &locations {
                let group = match kind {
                    Fifo::Tso => meta.groups,
                    Fifo::Pso => meta.groups + addr,
                };
                for s in 0..slots {
                    let at = |x: &str, i: u32| var(x, Some(num(i as i64)));
                    let mut conj = vec![
                        bin(BinOp::Lt, num(s as i64), var(&q.n, None)),
                        bin(BinOp::Eq, at(&q.addr, s), num(*addr as i64)),
                    ];
                    for older in 0..s {
                        conj.push(bin(BinOp::Ne, at(&q.addr, older), num(*addr as i64)));
                    }
                    let mut eff = vec![Assign {
                        target: var(g, k.map(|k| num(k as i64))),
                        value: at(&q.val, s),
                    }];
                    for j in s..bound - 1 {
                        eff.push(Assign {
                            target: at(&q.addr, j),
                            value: at(&q.addr, j + 1),
                        });
                        eff.push(Assign {
                            target: at(&q.val, j),
                            value: at(&q.val, j + 1),
                        });
                    }
                    if !place.keep_stale {
                        eff.push(Assign {
                            target: at(&q.addr, bound - 1),
                            value: num(0),
                        });
                        eff.push(Assign {
                            target: at(&q.val, bound - 1),
                            value: num(0),
                        });
                    }
                    eff.push(Assign {
                        target: var(&q.n, None),
                        value: bin(BinOp::Sub, var(&q.n, None), num(1)),
                    });
                    flushes.push(Transition {
                        from: id("q0"),
                        to: id("q0"),
                        guard: and_all(conj),
                        sync: None,
                        effect: eff,
                        span: sp(),
                    });
                    flush_origin.push(Origin::Flush {
                        process: pname.clone(),
                        var: match k {
                            Some(k) => format!("{g}[{k}]"),
                            None => g.clone(),
                        },
                        group,
                    });
                }
            }
            meta.groups += match kind {
                Fifo::Tso => 1,
                Fifo::Pso => next,
            };
        }
        meta.origin.insert(pname.clone(), origin);
        procs.push(out);
    }
    meta.writes.dedup();
    let mm = fresh("MM".to_string());
    Ok(assemble(
        m,
        items,
        new_decls,
        procs,
        &mm,
        flushes,
        flush_origin,
        meta,
    ))
}

/// The globals that at most one process touches (reads, writes or asserts about) and that
/// no name in `watched` (what the properties read) is: buffering their writes changes
/// nothing anyone can observe, so they can go straight to memory.
pub fn private(m: &Model, shared: &[Shared], watched: &HashSet<String>) -> HashSet<String> {
    let mut users: HashMap<String, HashSet<String>> = HashMap::new();
    let mut seen_by_property: HashSet<String> = HashSet::new();
    for it in &m.items {
        match it {
            Item::Process(p) => {
                let mut names = HashSet::new();
                for t in &p.trans {
                    names.extend(touched(p, t));
                }
                for (_, e) in &p.asserts {
                    names_in(e, &mut names);
                }
                for v in &p.vars {
                    names.remove(&v.name.name);
                }
                for n in names {
                    if p.property {
                        seen_by_property.insert(n);
                    } else {
                        users.entry(n).or_default().insert(p.name.name.clone());
                    }
                }
            }
            Item::Definition(d) => names_in(&d.body, &mut seen_by_property),
            _ => {}
        }
    }
    shared
        .iter()
        .map(|s| &s.name)
        .filter(|g| {
            users.get(*g).is_none_or(|u| u.len() <= 1)
                && !watched.contains(*g)
                && !seen_by_property.contains(*g)
        })
        .cloned()
        .collect()
}

/// The base names transition `t` assigns: its effect's targets and the places a receive
/// stores to, in order.
pub fn written_names(t: &Transition) -> Vec<&str> {
    let received = t
        .sync
        .iter()
        .filter(|s| !s.send)
        .flat_map(|s| s.values.iter().filter_map(target_name));
    received
        .chain(t.effect.iter().filter_map(|a| target_name(&a.target)))
        .collect()
}
