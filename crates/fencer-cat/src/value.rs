//! Values of the cat language and herd's typing of them (the `typ` of `interpreter.ml`).

use crate::bits::{EventSet, Relation};
use crate::ir::{FunDef, ProcDef, TagName};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::rc::Rc;

/// The element types herd tracks to reject heterogeneous sets and bad operands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Typ<'p> {
    Empty,
    Event,
    Events,
    Pair,
    Rel,
    ClassRel,
    Tag(&'p str),
    Clo,
    Proc,
    Set(Rc<Typ<'p>>),
    Tuple(Rc<[Typ<'p>]>),
}

/// herd's `eq_type`: the common type of two values, if any (`{}` fits any set type).
pub(crate) fn eq_type<'p>(t1: &Typ<'p>, t2: &Typ<'p>) -> Option<Typ<'p>> {
    use Typ::*;
    Some(match (t1, t2) {
        (Empty, t @ Set(_)) | (t @ Set(_), Empty) => t.clone(),
        (Events, Events) | (Empty, Events) | (Events, Empty) => Events,
        (Rel, Rel) | (Empty, Rel) | (Rel, Empty) => Rel,
        (ClassRel, ClassRel) | (Empty, ClassRel) | (ClassRel, Empty) => ClassRel,
        (Event, Event) => Event,
        (Pair, Pair) => Pair,
        (Tag(a), Tag(b)) if a == b => Tag(a),
        (Set(a), Set(b)) => Set(Rc::new(eq_type(a, b)?)),
        (Tuple(a), Tuple(b)) => {
            if a.len() != b.len() {
                return None;
            }
            let ts: Option<Vec<Typ>> = a.iter().zip(b.iter()).map(|(x, y)| eq_type(x, y)).collect();
            Tuple(ts?.into())
        }
        (Clo, Clo) => Clo,
        (Proc, Proc) => Proc,
        _ => return None,
    })
}

pub(crate) fn pp_typ(t: &Typ) -> String {
    match t {
        Typ::Empty => "{}".into(),
        Typ::Event => "event".into(),
        Typ::Events => "events".into(),
        Typ::Pair => "pair".into(),
        Typ::Rel => "rel".into(),
        Typ::ClassRel => "classrel".into(),
        Typ::Tag(t) => t.to_string(),
        Typ::Clo => "closure".into(),
        Typ::Proc => "procedure".into(),
        Typ::Set(t) => format!("{} set", pp_typ(t)),
        Typ::Tuple(ts) => format!(
            "({})",
            ts.iter().map(pp_typ).collect::<Vec<_>>().join(" * ")
        ),
    }
}

/// A relation over classes of events (herd's `ClassRel`), for `lift` and friends.
pub(crate) type ClassRel = BTreeSet<(EventSet, EventSet)>;

pub(crate) struct Closure<'p> {
    pub def: &'p FunDef,
    pub frame: u32,
    pub id: u32,
}

pub(crate) struct ProcVal<'p> {
    pub def: &'p ProcDef,
    pub frame: u32,
}

/// The primitives herd adds to every model's environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Prim {
    AtLeastOneWritable,
    SameOa,
    DifferentValues,
    Fromto,
    ClassesLoc,
    Classes,
    Lift,
    Delift,
    Deliftinter,
    Linearisations,
    Bisimulation,
    Tag2scope,
    Tag2level,
    Tag2events,
    Tag2fenced,
    Loc2events,
    Domain,
    Range,
    Fail,
    AsTransitive,
}

impl Prim {
    pub fn from_name(s: &str) -> Option<Prim> {
        use Prim::*;
        Some(match s {
            "at-least-one-writable" => AtLeastOneWritable,
            "same-oa" => SameOa,
            "different-values" => DifferentValues,
            "fromto" => Fromto,
            "classes-loc" => ClassesLoc,
            "classes" => Classes,
            "lift" => Lift,
            "delift" => Delift,
            "deliftinter" => Deliftinter,
            "linearisations" => Linearisations,
            "bisimulation" => Bisimulation,
            "tag2scope" => Tag2scope,
            "tag2level" => Tag2level,
            "tag2events" => Tag2events,
            "tag2fenced" => Tag2fenced,
            "loc2events" => Loc2events,
            "domain" => Domain,
            "range" => Range,
            "fail" => Fail,
            "as_transitive" => AsTransitive,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use Prim::*;
        match self {
            AtLeastOneWritable => "at-least-one-writable",
            SameOa => "same-oa",
            DifferentValues => "different-values",
            Fromto => "fromto",
            ClassesLoc => "classes-loc",
            Classes => "classes",
            Lift => "lift",
            Delift => "delift",
            Deliftinter => "deliftinter",
            Linearisations => "linearisations",
            Bisimulation => "bisimulation",
            Tag2scope => "tag2scope",
            Tag2level => "tag2level",
            Tag2events => "tag2events",
            Tag2fenced => "tag2fenced",
            Loc2events => "loc2events",
            Domain => "domain",
            Range => "range",
            Fail => "fail",
            AsTransitive => "as_transitive",
        }
    }
}

/// A set of values, sorted by [`compare`] and without duplicates. The elements are
/// shared, so that taking the first one off (set matching) copies nothing.
pub(crate) struct ValSet<'p> {
    pub ty: Typ<'p>,
    items: Rc<[Value<'p>]>,
    start: usize,
}

impl<'p> ValSet<'p> {
    pub fn items(&self) -> &[Value<'p>] {
        &self.items[self.start..]
    }

    /// The set without its first element.
    pub fn tail(&self) -> ValSet<'p> {
        ValSet {
            ty: self.ty.clone(),
            items: self.items.clone(),
            start: (self.start + 1).min(self.items.len()),
        }
    }
}

#[derive(Clone)]
pub(crate) enum Value<'p> {
    /// `{}`: the empty set of any type.
    Empty,
    /// `_`: the universe of any type.
    Unv,
    Event(u32),
    Pair(u32, u32),
    Set(Rc<EventSet>),
    Rel(Rc<Relation>),
    ClassRel(Rc<ClassRel>),
    /// A tag, with its enumeration.
    Tag(&'p TagName),
    ValSet(Rc<ValSet<'p>>),
    Tuple(Rc<Vec<Value<'p>>>),
    Clo(Rc<Closure<'p>>),
    Prim(Prim),
    Proc(Rc<ProcVal<'p>>),
}

impl<'p> Value<'p> {
    /// herd's `type_val`; the universe has no type.
    pub fn typ(&self) -> Option<Typ<'p>> {
        Some(match self {
            Value::Empty => Typ::Empty,
            Value::Unv => return None,
            Value::Event(_) => Typ::Event,
            Value::Pair(..) => Typ::Pair,
            Value::Set(_) => Typ::Events,
            Value::Rel(_) => Typ::Rel,
            Value::ClassRel(_) => Typ::ClassRel,
            Value::Tag(t) => Typ::Tag(&t.ty),
            Value::ValSet(s) => Typ::Set(Rc::new(s.ty.clone())),
            Value::Tuple(vs) => {
                let ts: Option<Vec<Typ>> = vs.iter().map(|v| v.typ()).collect();
                Typ::Tuple(ts?.into())
            }
            Value::Clo(_) | Value::Prim(_) => Typ::Clo,
            Value::Proc(_) => Typ::Proc,
        })
    }

    pub fn type_name(&self) -> String {
        match self.typ() {
            Some(t) => pp_typ(&t),
            None => "universe".into(),
        }
    }

    pub fn valset(ty: Typ<'p>, items: Vec<Value<'p>>) -> Value<'p> {
        Value::ValSet(Rc::new(ValSet {
            ty,
            items: items.into(),
            start: 0,
        }))
    }

    /// herd's `pp_val`, for messages.
    pub fn pp(&self) -> String {
        match self {
            Value::Unv => "<universe>".into(),
            Value::Empty => "{}".into(),
            Value::Tag(t) => format!("'{}", t.name),
            Value::ValSet(s) => {
                let mut o = String::from("{");
                for (i, v) in s.items().iter().enumerate() {
                    if i > 0 {
                        o.push(',');
                    }
                    o.push_str(&v.pp());
                }
                o.push('}');
                o
            }
            Value::Clo(c) => format!("{}_{}", c.def.name, c.id),
            Value::Tuple(vs) => {
                let mut o = String::from("(");
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        o.push(',');
                    }
                    let _ = write!(o, "{}", v.pp());
                }
                o.push(')');
                o
            }
            v => format!("<{}>", v.type_name()),
        }
    }
}

fn empty_vs(empty: bool) -> Ordering {
    if empty {
        Ordering::Equal
    } else {
        Ordering::Less
    }
}

/// herd's `ValOrder.compare`: a total order on the values that may be set elements, with
/// `{}` equal to every empty set or relation; an error for values that cannot be compared.
pub(crate) fn compare(v1: &Value, v2: &Value) -> Result<Ordering, String> {
    use Value::*;
    Ok(match (v1, v2) {
        (Empty, Empty) => Ordering::Equal,
        (Empty, ValSet(s)) => empty_vs(s.items().is_empty()),
        (ValSet(s), Empty) => empty_vs(s.items().is_empty()).reverse(),
        (Empty, Rel(r)) => empty_vs(r.is_empty()),
        (Rel(r), Empty) => empty_vs(r.is_empty()).reverse(),
        (Empty, Set(s)) => empty_vs(s.is_empty()),
        (Set(s), Empty) => empty_vs(s.is_empty()).reverse(),
        (Empty, ClassRel(r)) => empty_vs(r.is_empty()),
        (ClassRel(r), Empty) => empty_vs(r.is_empty()).reverse(),
        (Tag(a), Tag(b)) => a.name.cmp(&b.name),
        (Event(a), Event(b)) => a.cmp(b),
        (ValSet(a), ValSet(b)) => {
            for (x, y) in a.items().iter().zip(b.items()) {
                let c = compare(x, y)?;
                if c != Ordering::Equal {
                    return Ok(c);
                }
            }
            a.items().len().cmp(&b.items().len())
        }
        (Rel(a), Rel(b)) => a.cmp(b),
        (ClassRel(a), ClassRel(b)) => a.cmp(b),
        (Set(a), Set(b)) => a.cmp(b),
        (Clo(a), Clo(b)) => a.id.cmp(&b.id),
        (Prim(a), Prim(b)) => a.cmp(b),
        (Clo(_), Prim(_)) => Ordering::Greater,
        (Prim(_), Clo(_)) => Ordering::Less,
        (Tuple(a), Tuple(b)) => {
            for (x, y) in a.iter().zip(b.iter()) {
                let c = compare(x, y)?;
                if c != Ordering::Equal {
                    return Ok(c);
                }
            }
            a.len().cmp(&b.len())
        }
        (Unv, _) | (_, Unv) => return Err("Universe in compare".into()),
        _ => {
            let (t1, t2) = (v1.typ(), v2.typ());
            return Err(match (t1, t2) {
                (Some(a), Some(b)) if eq_type(&a, &b).is_some() => {
                    format!("Sets of {} are illegal", pp_typ(&a))
                }
                _ => format!(
                    "Heterogeneous set elements: types {} and {} ",
                    v1.type_name(),
                    v2.type_name()
                ),
            });
        }
    })
}

/// Sorts and deduplicates set elements.
pub(crate) fn sort_values<'p>(mut vs: Vec<Value<'p>>) -> Result<Vec<Value<'p>>, String> {
    let mut err = None;
    vs.sort_by(|a, b| match compare(a, b) {
        Ok(o) => o,
        Err(e) => {
            err.get_or_insert(e);
            Ordering::Equal
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let mut out: Vec<Value<'p>> = Vec::with_capacity(vs.len());
    for v in vs {
        match out.last() {
            Some(last) if compare(last, &v)? == Ordering::Equal => {}
            _ => out.push(v),
        }
    }
    Ok(out)
}

pub(crate) fn vs_contains(items: &[Value], v: &Value) -> Result<bool, String> {
    for x in items {
        if compare(x, v)? == Ordering::Equal {
            return Ok(true);
        }
    }
    Ok(false)
}

pub(crate) fn vs_union<'p>(a: &[Value<'p>], b: &[Value<'p>]) -> Result<Vec<Value<'p>>, String> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match compare(&a[i], &b[j])? {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                out.push(a[i].clone());
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    Ok(out)
}

pub(crate) fn vs_inter<'p>(a: &[Value<'p>], b: &[Value<'p>]) -> Result<Vec<Value<'p>>, String> {
    let mut out = Vec::new();
    for x in a {
        if vs_contains(b, x)? {
            out.push(x.clone());
        }
    }
    Ok(out)
}

pub(crate) fn vs_diff<'p>(a: &[Value<'p>], b: &[Value<'p>]) -> Result<Vec<Value<'p>>, String> {
    let mut out = Vec::new();
    for x in a {
        if !vs_contains(b, x)? {
            out.push(x.clone());
        }
    }
    Ok(out)
}

pub(crate) fn vs_add<'p>(items: &[Value<'p>], v: Value<'p>) -> Result<Vec<Value<'p>>, String> {
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut placed = false;
    for x in items {
        if !placed {
            match compare(&v, x)? {
                Ordering::Less => {
                    out.push(v.clone());
                    placed = true;
                }
                Ordering::Equal => placed = true,
                Ordering::Greater => {}
            }
        }
        out.push(x.clone());
    }
    if !placed {
        out.push(v);
    }
    Ok(out)
}

pub(crate) fn vs_subset(a: &[Value], b: &[Value]) -> Result<bool, String> {
    for x in a {
        if !vs_contains(b, x)? {
            return Ok(false);
        }
    }
    Ok(true)
}
