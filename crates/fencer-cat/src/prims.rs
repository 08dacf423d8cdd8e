//! What the execution supplies (herd's initial environment) and herd's primitives.

use crate::bits::{EventSet, Relation};
use crate::eval::Rt;
use crate::ir::TagName;
use crate::value::*;
use std::collections::BTreeMap;
use std::rc::Rc;

/// herd's names for the sets of events carrying an annotation: `'acq` gives `Acq`.
pub(crate) fn tag2instrs_var(tag: &str) -> String {
    let mut c = tag.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// Whether `name` is `tag2instrs_var(tag)`, without building it.
fn is_tag_var(tag: &str, name: &str) -> bool {
    let (mut a, mut b) = (tag.chars(), name.chars());
    match (a.next(), b.next()) {
        (Some(x), Some(y)) => x.to_ascii_uppercase() == y && a.as_str() == b.as_str(),
        _ => false,
    }
}

/// Relations herd always defines and that are empty when the engine does not say
/// otherwise (no dependencies, no intra-instruction structure).
pub const DEFAULT_EMPTY_RELS: &[&str] = &[
    "same-low-order-bits",
    "depend",
    "success",
    "control",
    "aligned",
    "iico_data",
    "iico_ctrl",
    "iico_order",
    "rf-reg",
    "same-static",
    "equiv-spec",
    "tst",
    "addr",
    "data",
    "ctrl",
];

/// Sets herd always defines and that are empty unless the engine gives them.
pub const DEFAULT_EMPTY_SETS: &[&str] = &[
    "SPEC", "SPURIOUS", "FW", "B", "BCC", "PRED", "F", "Rreg", "Wreg", "ADDR", "DATA", "NExp",
];

/// Whether herd defines `name` for every execution (so that tests need not give it).
#[cfg(test)]
pub(crate) fn initial_known(name: &str) -> bool {
    DEFAULT_EMPTY_RELS.contains(&name)
        || DEFAULT_EMPTY_SETS.contains(&name)
        || [
            "id",
            "loc",
            "M",
            "Exp",
            "EXEC",
            "sm",
            "si",
            "same-instance",
            "same-instr",
            "partial_po",
            "pco",
        ]
        .contains(&name)
}

/// A name of the initial environment without the primitives: the execution's relations,
/// sets, annotation sets, then what herd always defines, derived from those.
fn initial<'p>(rt: &Rt<'p, '_>, name: &str) -> Option<Value<'p>> {
    let x = rt.exec;
    if let Some(r) = x.rels.get(name) {
        return Some(Value::Rel(Rc::new(r.clone())));
    }
    if let Some(s) = x.sets.get(name) {
        return Some(Value::Set(Rc::new(s.clone())));
    }
    for (t, s) in &x.tags {
        if is_tag_var(t, name) {
            return Some(Value::Set(Rc::new(s.clone())));
        }
    }
    derived(rt, name)
}

fn set_of(rt: &Rt, name: &str) -> Option<EventSet> {
    match initial(rt, name)? {
        Value::Set(s) => Some((*s).clone()),
        Value::Empty => Some(EventSet::new(rt.n)),
        _ => None,
    }
}

fn derived<'p>(rt: &Rt<'p, '_>, name: &str) -> Option<Value<'p>> {
    let x = rt.exec;
    let n = rt.n;
    let set = |s: EventSet| Some(Value::Set(Rc::new(s)));
    let rel = |r: Relation| Some(Value::Rel(Rc::new(r)));
    match name {
        "id" => Some(Value::Rel(rt.id())),
        "loc" => {
            let mut r = Relation::new(n);
            let mut by_loc: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for (e, l) in x.locations.iter().enumerate().take(n) {
                if let Some(l) = l {
                    by_loc.entry(*l).or_default().push(e);
                }
            }
            for es in by_loc.values() {
                for &a in es {
                    for &b in es {
                        r.insert(a, b);
                    }
                }
            }
            rel(r)
        }
        "M" => {
            let mut m = x.sets.get("R")?.clone();
            m.union_with(x.sets.get("W")?);
            set(m)
        }
        "Exp" => set(set_of(rt, "M")?),
        "NExp" if x.sets.contains_key("Exp") => {
            let mut m = set_of(rt, "M")?;
            m.difference_with(&x.sets["Exp"]);
            set(m)
        }
        "EXEC" => {
            let mut s = EventSet::full(n);
            if let Some(spec) = x.sets.get("SPEC") {
                s.difference_with(spec);
            }
            set(s)
        }
        "sm" | "si" => rel(Relation::identity_on(&set_of(rt, "M")?)),
        "same-instance" | "same-instr" => Some(Value::Rel(rt.id())),
        // herd's `pco`: the initial write first and a final write last, per location.
        "pco" => {
            let Some(Value::Rel(loc)) = initial(rt, "loc") else {
                return None;
            };
            let w = set_of(rt, "W")?;
            let iw = set_of(rt, "IW")?;
            let fw = set_of(rt, "FW").unwrap_or_else(|| EventSet::new(n));
            let mut w_iw = w.clone();
            w_iw.difference_with(&iw);
            let mut w_fw = w;
            w_fw.difference_with(&fw);
            let mut r = Relation::cartesian(&iw, &w_iw);
            r.union_with(&Relation::cartesian(&w_fw, &fw));
            r.intersect_with(&loc);
            rel(r)
        }
        "partial_po" => x.rels.get("po").and_then(|p| rel(p.clone())),
        _ if DEFAULT_EMPTY_RELS.contains(&name) => Some(Value::Rel(rt.empty_rel())),
        _ if DEFAULT_EMPTY_SETS.contains(&name) => Some(Value::Set(rt.empty_set())),
        _ => None,
    }
}

/// Resolves a name the model does not bind: a primitive (they shadow the execution's
/// names, as in herd), else the initial environment.
pub(crate) fn resolve_ext<'p>(rt: &Rt<'p, '_>, name: &str) -> Option<Value<'p>> {
    if let Some(p) = Prim::from_name(name) {
        return Some(Value::Prim(p));
    }
    initial(rt, name)
}

const MISMATCH: &str = "argument mismatch";

fn as_rel(rt: &Rt, v: &Value) -> Result<Relation, String> {
    match v {
        Value::Rel(r) => Ok((**r).clone()),
        Value::Empty => Ok(Relation::new(rt.n)),
        Value::Unv => Ok(Relation::full(rt.n)),
        _ => Err(MISMATCH.into()),
    }
}

fn as_set(rt: &Rt, v: &Value) -> Result<EventSet, String> {
    match v {
        Value::Set(s) => Ok((**s).clone()),
        Value::Empty => Ok(EventSet::new(rt.n)),
        Value::Unv => Ok(EventSet::full(rt.n)),
        _ => Err(MISMATCH.into()),
    }
}

fn as_classrel(v: &Value) -> Result<ClassRel, String> {
    match v {
        Value::ClassRel(r) => Ok((**r).clone()),
        Value::Empty => Ok(ClassRel::new()),
        Value::Unv => Err("No universal class relation".into()),
        _ => Err(MISMATCH.into()),
    }
}

fn pair<'a, 'p>(v: &'a Value<'p>) -> Result<(&'a Value<'p>, &'a Value<'p>), String> {
    match v {
        Value::Tuple(vs) if vs.len() == 2 => Ok((&vs[0], &vs[1])),
        _ => Err(MISMATCH.into()),
    }
}

fn sets_value<'p>(sets: Vec<EventSet>) -> Result<Value<'p>, String> {
    let items = sets.into_iter().map(|s| Value::Set(Rc::new(s))).collect();
    Ok(Value::valset(Typ::Events, sort_values(items)?))
}

/// Classes as nodes `0..k` of a relation, to reuse the event algorithms.
fn class_index(classes: &[EventSet], r: &ClassRel) -> Relation {
    let ix = |s: &EventSet| classes.iter().position(|c| c == s);
    let mut out = Relation::new(classes.len());
    for (a, b) in r {
        if let (Some(i), Some(j)) = (ix(a), ix(b)) {
            out.insert(i, j);
        }
    }
    out
}

fn class_nodes(r: &ClassRel) -> Vec<EventSet> {
    let mut v: Vec<EventSet> = r.iter().flat_map(|(a, b)| [a.clone(), b.clone()]).collect();
    v.sort();
    v.dedup();
    v
}

/// herd's `bisimulation t e0`: refine `e0` until it is stable under the steps of `t`.
fn bisimulation(t: &Relation, e0: &Relation) -> Relation {
    let n = t.n();
    let matches = |xs: &EventSet, ys: &EventSet, e: &Relation| {
        xs.iter().all(|x| ys.iter().any(|y| e.contains(y, x)))
    };
    let succs = |a: usize| EventSet::from_events(n, t.successors(a));
    let mut e = e0.clone();
    loop {
        let mut next = Relation::new(n);
        for (x, y) in e.iter() {
            if x == y {
                next.insert(x, y);
                continue;
            }
            let (nx, ny) = (succs(x), succs(y));
            if matches(&nx, &ny, &e) && matches(&ny, &nx, &e) {
                next.insert(x, y);
            }
        }
        if e.is_subset(&next) {
            return e;
        }
        e = next;
    }
}

pub(crate) fn call<'p>(rt: &Rt<'p, '_>, p: Prim, arg: Value<'p>) -> Result<Value<'p>, String> {
    let n = rt.n;
    let x = rt.exec;
    match p {
        Prim::Domain | Prim::Range => match arg {
            Value::Empty => Ok(Value::Empty),
            Value::Unv => Ok(Value::Unv),
            Value::Rel(r) => Ok(Value::Set(Rc::new(if p == Prim::Domain {
                r.domain()
            } else {
                r.range()
            }))),
            _ => Err(MISMATCH.into()),
        },
        Prim::Fail => Err(format!("fail on {}", arg.pp())),
        Prim::AsTransitive => match arg {
            Value::Rel(_) | Value::Empty | Value::Unv => Ok(arg),
            _ => Err(MISMATCH.into()),
        },
        Prim::ClassesLoc => {
            let s = as_set(rt, &arg)?;
            let mut by_loc: BTreeMap<u32, EventSet> = BTreeMap::new();
            for e in s.iter() {
                if let Some(Some(l)) = x.locations.get(e) {
                    by_loc
                        .entry(*l)
                        .or_insert_with(|| EventSet::new(n))
                        .insert(e);
                }
            }
            sets_value(by_loc.into_values().collect())
        }
        Prim::Classes => {
            let r = as_rel(rt, &arg)?;
            let mut sym = r.clone();
            sym.union_with(&r.inverse());
            let nodes = sym.domain();
            let mut seen = EventSet::new(n);
            let mut classes = Vec::new();
            for v in nodes.iter() {
                if seen.contains(v) {
                    continue;
                }
                let mut class = EventSet::new(n);
                let mut stack = vec![v];
                class.insert(v);
                while let Some(u) = stack.pop() {
                    for w in sym.successors(u) {
                        if class.insert(w) {
                            stack.push(w);
                        }
                    }
                }
                seen.union_with(&class);
                classes.push(class);
            }
            sets_value(classes)
        }
        Prim::Lift => {
            let (cls, vr) = pair(&arg)?;
            let Value::ValSet(cls) = cls else {
                return Err(MISMATCH.into());
            };
            if cls.ty != Typ::Events {
                return Err(MISMATCH.into());
            }
            let r = as_rel(rt, vr)?;
            let mut class_of: Vec<Option<&EventSet>> = vec![None; n];
            for c in cls.items() {
                if let Value::Set(s) = c {
                    for e in s.iter() {
                        class_of[e] = Some(s);
                    }
                }
            }
            let mut out = ClassRel::new();
            for (a, b) in r.iter() {
                if let (Some(ca), Some(cb)) = (class_of[a], class_of[b]) {
                    out.insert((ca.clone(), cb.clone()));
                }
            }
            Ok(Value::ClassRel(Rc::new(out)))
        }
        Prim::Delift => {
            let c = as_classrel(&arg)?;
            let mut r = Relation::new(n);
            for (a, b) in &c {
                r.union_with(&Relation::cartesian(a, b));
            }
            Ok(Value::Rel(Rc::new(r)))
        }
        Prim::Deliftinter => {
            let (vm, vc) = pair(&arg)?;
            let c = as_classrel(vc)?;
            let m = as_rel(rt, vm)?;
            let mut r = Relation::new(n);
            for (a, b) in &c {
                let mut t = m.clone();
                t.restrict_domain(a);
                t.restrict_range(b);
                r.union_with(&t);
            }
            Ok(Value::Rel(Rc::new(r)))
        }
        Prim::Linearisations => {
            let (ves, vr) = pair(&arg)?;
            let class_nodes_of = |vs: &ValSet| -> Vec<EventSet> {
                vs.items()
                    .iter()
                    .filter_map(|v| match v {
                        Value::Set(s) => Some((**s).clone()),
                        Value::Empty => Some(EventSet::new(n)),
                        _ => None,
                    })
                    .collect()
            };
            let classes = match (ves, vr) {
                (Value::ValSet(es), _) if es.ty == Typ::Events => Some(class_nodes_of(es)),
                (Value::Empty, Value::ClassRel(_)) => Some(Vec::new()),
                _ => None,
            };
            if let Some(classes) = classes {
                let r = as_classrel(vr)?;
                let ir = class_index(&classes, &r);
                let orders = ir.linearisations(&EventSet::full(classes.len()));
                let items = orders
                    .into_iter()
                    .map(|o| {
                        let c: ClassRel = o
                            .iter()
                            .map(|(i, j)| (classes[i].clone(), classes[j].clone()))
                            .collect();
                        Value::ClassRel(Rc::new(c))
                    })
                    .collect();
                return Ok(Value::valset(Typ::ClassRel, sort_values(items)?));
            }
            let es = as_set(rt, ves)?;
            let r = as_rel(rt, vr)?;
            let items = r
                .linearisations(&es)
                .into_iter()
                .map(|o| Value::Rel(Rc::new(o)))
                .collect();
            Ok(Value::valset(Typ::Rel, sort_values(items)?))
        }
        Prim::Bisimulation => {
            let (vt, ve) = pair(&arg)?;
            if matches!(vt, Value::ClassRel(_)) || matches!(ve, Value::ClassRel(_)) {
                let t = as_classrel(vt)?;
                let e = as_classrel(ve)?;
                let mut all = t.clone();
                all.extend(e.iter().cloned());
                let classes = class_nodes(&all);
                let b = bisimulation(&class_index(&classes, &t), &class_index(&classes, &e));
                let out: ClassRel = b
                    .iter()
                    .map(|(i, j)| (classes[i].clone(), classes[j].clone()))
                    .collect();
                return Ok(Value::ClassRel(Rc::new(out)));
            }
            let t = as_rel(rt, vt)?;
            let e = as_rel(rt, ve)?;
            Ok(Value::Rel(Rc::new(bisimulation(&t, &e))))
        }
        Prim::Tag2scope | Prim::Tag2level => {
            let Value::Tag(TagName { name: tag, .. }) = arg else {
                return Err(MISMATCH.into());
            };
            match initial(rt, tag) {
                Some(v @ (Value::Empty | Value::Unv | Value::Rel(_))) => Ok(v),
                Some(v) => Err(format!(
                    "value {tag} is not a relation, found {}",
                    v.type_name()
                )),
                None => Err(format!("cannot find scope instance {tag} (the litmus test might be missing a scope tree declaration)")),
            }
        }
        Prim::Tag2events => {
            let Value::Tag(TagName { name: tag, .. }) = arg else {
                return Err(MISMATCH.into());
            };
            let var = tag2instrs_var(tag);
            match initial(rt, &var) {
                Some(v @ (Value::Empty | Value::Unv | Value::Set(_))) => Ok(v),
                Some(v) => Err(format!(
                    "value {var} is not a set of events, found {}",
                    v.type_name()
                )),
                None => Err(format!("cannot find event set {var}")),
            }
        }
        Prim::Tag2fenced => {
            let Value::Tag(TagName { name: tag, .. }) = arg else {
                return Err(MISMATCH.into());
            };
            let po = x.rels.get("po").ok_or("cannot find relation po")?;
            let fromto = x.rels.get("fromto").ok_or("cannot find relation fromto")?;
            let var = tag2instrs_var(tag);
            match initial(rt, &var) {
                Some(Value::Empty) => Ok(Value::Rel(rt.empty_rel())),
                Some(Value::Set(b)) => {
                    let r = fromto
                        .filter(|a, c| b.iter().any(|m| po.contains(a, m) && po.contains(m, c)));
                    Ok(Value::Rel(Rc::new(r)))
                }
                Some(v) => Err(format!(
                    "value {var} is not a set of events, found {}",
                    v.type_name()
                )),
                None => Err(format!("cannot find event set {var}")),
            }
        }
        Prim::Loc2events => {
            let Value::Tag(TagName { name, .. }) = arg else {
                return Err(MISMATCH.into());
            };
            let id = x.location_names.iter().position(|l| l == name);
            let s = EventSet::from_events(
                n,
                (0..n).filter(|&e| {
                    id.is_some() && x.locations.get(e).copied().flatten() == id.map(|i| i as u32)
                }),
            );
            Ok(Value::Set(Rc::new(s)))
        }
        Prim::Fromto => {
            let es = as_set(rt, &arg)?;
            let mut fs = es;
            fs.intersect_with(&set_of(rt, "F").unwrap_or_else(|| EventSet::new(n)));
            let mut out = Relation::new(n);
            if fs.is_empty() {
                return Ok(Value::Rel(Rc::new(out)));
            }
            let po = x.rels.get("po").ok_or("cannot find relation po")?;
            let pinv = po.inverse();
            for f in fs.iter() {
                let before = EventSet::from_events(n, pinv.successors(f));
                let after = EventSet::from_events(n, po.successors(f));
                out.union_with(&Relation::cartesian(&before, &after));
            }
            Ok(Value::Rel(Rc::new(out)))
        }
        Prim::DifferentValues => {
            let r = as_rel(rt, &arg)?;
            let val = |e: usize| x.values.get(e).copied().flatten();
            let same =
                |a: usize, b: usize| matches!((val(a), val(b)), (Some(u), Some(v)) if u == v);
            Ok(Value::Rel(Rc::new(r.filter(|a, b| !same(a, b)))))
        }
        Prim::SameOa => {
            let mut r = as_rel(rt, &arg)?;
            match &x.same_oa {
                Some(s) => r.intersect_with(s),
                None => r = Relation::new(n),
            }
            Ok(Value::Rel(Rc::new(r)))
        }
        Prim::AtLeastOneWritable => {
            let r = as_rel(rt, &arg)?;
            let w = x.writable.clone().unwrap_or_else(|| EventSet::new(n));
            Ok(Value::Rel(Rc::new(
                r.filter(|a, b| w.contains(a) || w.contains(b)),
            )))
        }
    }
}
