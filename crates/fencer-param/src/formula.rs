//! Terms, literals and formulas of the engine, their normal forms and their text.

use crate::{Atom, ProcRef, Sort, System};
pub use fencer_smt::Rel;

/// A value of a non-arithmetic sort.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    Proc(ProcRef),
    /// A constructor (its index in its enumeration).
    Val(u32),
    Atom(Atom),
}

/// `sum(c * atom) + k`, atoms sorted and distinct, no zero coefficient.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Lin {
    pub terms: Vec<(Atom, i64)>,
    pub k: i64,
}

impl Lin {
    pub fn constant(k: i64) -> Lin {
        Lin {
            terms: Vec::new(),
            k,
        }
    }
    pub fn atom(a: Atom) -> Lin {
        Lin {
            terms: vec![(a, 1)],
            k: 0,
        }
    }
    /// `self + f * o`.
    pub fn add_scaled(&self, o: &Lin, f: i64) -> Lin {
        let mut terms = Vec::with_capacity(self.terms.len() + o.terms.len());
        terms.extend(self.terms.iter().cloned());
        terms.extend(o.terms.iter().map(|(a, c)| (a.clone(), c * f)));
        Lin {
            terms: merge(terms),
            k: self.k + o.k * f,
        }
    }
    pub fn coef(&self, a: &Atom) -> i64 {
        self.terms.iter().find(|t| &t.0 == a).map_or(0, |t| t.1)
    }
}

/// A process-valued term as the number its identifier is (`Atom::Pid` of a process, or
/// the process cell itself), for the arithmetic literals that order processes; any other
/// term (a constructor) as its index.
pub fn proc_lin(t: &Term) -> Lin {
    match t {
        Term::Proc(p) => Lin::atom(Atom::Pid(*p)),
        Term::Atom(a) => Lin::atom(a.clone()),
        Term::Val(v) => Lin::constant(*v as i64),
    }
}

/// `a = b`, `a <> b` over non-arithmetic values; `lin rel 0` over numbers (and over
/// process identifiers, which are ordered integers: `Atom::Pid`, cells of sort `proc`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lit {
    Eq(Term, Term),
    Ne(Term, Term),
    Arith(Lin, Rel),
}

impl Lit {
    pub fn negate(&self) -> Lit {
        match self {
            Lit::Eq(a, b) => Lit::Ne(a.clone(), b.clone()),
            Lit::Ne(a, b) => Lit::Eq(a.clone(), b.clone()),
            Lit::Arith(l, Rel::Eq) => Lit::Arith(l.clone(), Rel::Ne),
            Lit::Arith(l, Rel::Ne) => Lit::Arith(l.clone(), Rel::Eq),
            Lit::Arith(l, Rel::Le) => Lit::Arith(Lin::default().add_scaled(l, -1), Rel::Lt),
            Lit::Arith(l, Rel::Lt) => Lit::Arith(Lin::default().add_scaled(l, -1), Rel::Le),
        }
    }

    pub fn atoms(&self, out: &mut Vec<Atom>) {
        match self {
            Lit::Eq(a, b) | Lit::Ne(a, b) => {
                for t in [a, b] {
                    if let Term::Atom(x) = t {
                        out.push(x.clone());
                    }
                }
            }
            Lit::Arith(l, _) => out.extend(l.terms.iter().map(|t| t.0.clone())),
        }
    }

    /// The literal with every process renamed.
    pub fn map_procs(&self, f: &dyn Fn(ProcRef) -> ProcRef) -> Lit {
        match self {
            Lit::Eq(a, b) => Lit::Eq(map_term(a, f), map_term(b, f)),
            Lit::Ne(a, b) => Lit::Ne(map_term(a, f), map_term(b, f)),
            Lit::Arith(l, r) => Lit::Arith(map_lin(l, f), *r),
        }
    }

    pub fn procs(&self, out: &mut Vec<ProcRef>) {
        let mut term = |t: &Term| match t {
            Term::Proc(p) => out.push(*p),
            Term::Atom(Atom::Cell(_, idx)) => out.extend(idx.iter().copied()),
            Term::Atom(Atom::Pid(p)) => out.push(*p),
            Term::Atom(Atom::Read(_, idx, p, _)) => {
                out.extend(idx.iter().copied());
                out.push(*p);
            }
            _ => {}
        };
        match self {
            Lit::Eq(a, b) | Lit::Ne(a, b) => {
                term(a);
                term(b);
            }
            Lit::Arith(l, _) => {
                for (a, _) in &l.terms {
                    term(&Term::Atom(a.clone()));
                }
            }
        }
    }
}

pub fn map_atom(a: &Atom, f: &dyn Fn(ProcRef) -> ProcRef) -> Atom {
    match a {
        Atom::Cell(g, idx) => Atom::Cell(*g, idx.iter().map(|p| f(*p)).collect()),
        Atom::Fresh(..) => a.clone(),
        Atom::Pid(p) => Atom::Pid(f(*p)),
        Atom::Read(g, idx, p, k) => Atom::Read(*g, idx.iter().map(|q| f(*q)).collect(), f(*p), *k),
    }
}

pub fn map_term(t: &Term, f: &dyn Fn(ProcRef) -> ProcRef) -> Term {
    match t {
        Term::Proc(p) => Term::Proc(f(*p)),
        Term::Val(_) => t.clone(),
        Term::Atom(a) => Term::Atom(map_atom(a, f)),
    }
}

pub fn map_lin(l: &Lin, f: &dyn Fn(ProcRef) -> ProcRef) -> Lin {
    Lin {
        terms: merge(l.terms.iter().map(|(a, c)| (map_atom(a, f), *c)).collect()),
        k: l.k,
    }
}

/// Terms sorted by atom, equal atoms added up, zero coefficients dropped.
fn merge(mut terms: Vec<(Atom, i64)>) -> Vec<(Atom, i64)> {
    terms.sort_by(|x, y| x.0.cmp(&y.0));
    let mut out: Vec<(Atom, i64)> = Vec::with_capacity(terms.len());
    for (a, c) in terms {
        match out.last_mut() {
            Some(last) if last.0 == a => last.1 += c,
            _ => out.push((a, c)),
        }
    }
    out.retain(|t| t.1 != 0);
    out
}

#[derive(Clone, Debug, PartialEq)]
pub enum Formula {
    True,
    False,
    Lit(Lit),
    And(Vec<Formula>),
    Or(Vec<Formula>),
}

impl Formula {
    pub fn negate(&self) -> Formula {
        match self {
            Formula::True => Formula::False,
            Formula::False => Formula::True,
            Formula::Lit(l) => Formula::Lit(l.negate()),
            Formula::And(v) => Formula::Or(v.iter().map(|f| f.negate()).collect()),
            Formula::Or(v) => Formula::And(v.iter().map(|f| f.negate()).collect()),
        }
    }

    pub fn map_procs(&self, f: &dyn Fn(ProcRef) -> ProcRef) -> Formula {
        match self {
            Formula::Lit(l) => Formula::Lit(l.map_procs(f)),
            Formula::And(v) => Formula::And(v.iter().map(|x| x.map_procs(f)).collect()),
            Formula::Or(v) => Formula::Or(v.iter().map(|x| x.map_procs(f)).collect()),
            x => x.clone(),
        }
    }

    /// Disjunctive normal form: each conjunct normalised, contradictory ones dropped.
    pub fn dnf(&self, sys: &System) -> Vec<Vec<Lit>> {
        match self {
            Formula::True => vec![Vec::new()],
            Formula::False => Vec::new(),
            Formula::Lit(l) => match normalize(sys, l) {
                Norm::True => vec![Vec::new()],
                Norm::False => Vec::new(),
                Norm::Lit(l) => vec![vec![l]],
            },
            Formula::Or(v) => v.iter().flat_map(|f| f.dnf(sys)).collect(),
            Formula::And(v) => {
                let mut acc: Vec<Vec<Lit>> = vec![Vec::new()];
                for f in v {
                    let d = f.dnf(sys);
                    let mut next = Vec::new();
                    for a in &acc {
                        for b in &d {
                            let mut c = a.clone();
                            c.extend(b.iter().cloned());
                            if !clash(&c) {
                                next.push(c);
                            }
                        }
                    }
                    acc = next;
                    if acc.is_empty() {
                        break;
                    }
                }
                acc
            }
        }
    }
}

/// A cheap syntactic contradiction: a term equal to two different constructors or
/// processes, or both equal and unequal to the same thing. It keeps DNF products small.
fn clash(c: &[Lit]) -> bool {
    let n = c.len();
    if n < 2 {
        return false;
    }
    let last = &c[n - 1];
    c[..n - 1].iter().any(|l| clash2(l, last))
}

fn is_value(t: &Term) -> bool {
    matches!(t, Term::Val(_) | Term::Proc(_))
}

fn clash2(a: &Lit, b: &Lit) -> bool {
    match (a, b) {
        (Lit::Eq(x, y), Lit::Ne(u, v)) | (Lit::Ne(u, v), Lit::Eq(x, y)) => x == u && y == v,
        (Lit::Eq(x, y), Lit::Eq(u, v)) => {
            (x == u && is_value(y) && is_value(v) && y != v)
                || (y == v && is_value(x) && is_value(u) && x != u)
        }
        _ => false,
    }
}

#[derive(Debug, PartialEq)]
pub enum Norm {
    True,
    False,
    Lit(Lit),
}

/// The normal form of a literal: sides ordered, values compared, arithmetic as
/// `lin rel 0` with coprime coefficients (over integers `<` becomes `<=`, and an (in)equality's
/// first coefficient is positive), constant literals decided.
pub fn normalize(sys: &System, l: &Lit) -> Norm {
    match l {
        Lit::Eq(a, b) | Lit::Ne(a, b) => {
            let eq = matches!(l, Lit::Eq(..));
            let decided = if a == b {
                Some(true)
            } else {
                match (a, b) {
                    (Term::Val(_), Term::Val(_)) => Some(false),
                    (Term::Proc(ProcRef::Var(_)), Term::Proc(ProcRef::Var(_)))
                    | (Term::Proc(ProcRef::Const(_)), Term::Proc(ProcRef::Const(_))) => Some(false),
                    _ => None,
                }
            };
            match decided {
                Some(d) if d == eq => Norm::True,
                Some(_) => Norm::False,
                None => {
                    let (a, b) = if a <= b { (a, b) } else { (b, a) };
                    Norm::Lit(if eq {
                        Lit::Eq(a.clone(), b.clone())
                    } else {
                        Lit::Ne(a.clone(), b.clone())
                    })
                }
            }
        }
        Lit::Arith(lin, rel) => {
            let mut lin = Lin::default().add_scaled(lin, 1);
            if lin
                .terms
                .iter()
                .any(|t| matches!(t.0, Atom::Pid(ProcRef::Const(_))))
            {
                let mut out = Lin::constant(lin.k);
                for (a, c) in &lin.terms {
                    match a {
                        Atom::Pid(ProcRef::Const(k)) => out.k += c * *k as i64,
                        a => out = out.add_scaled(&Lin::atom(a.clone()), *c),
                    }
                }
                lin = out;
            }
            if lin.terms.is_empty() {
                let k = lin.k;
                let holds = match rel {
                    Rel::Eq => k == 0,
                    Rel::Ne => k != 0,
                    Rel::Le => k <= 0,
                    Rel::Lt => k < 0,
                };
                return if holds { Norm::True } else { Norm::False };
            }
            // Process identifiers are integers too (`Turn < #1`: `Turn` holds one).
            let ints = lin
                .terms
                .iter()
                .all(|(a, _)| matches!(sys.sort_of(a), Sort::Int | Sort::Proc));
            let mut rel = *rel;
            if ints && rel == Rel::Lt {
                lin.k += 1;
                rel = Rel::Le;
            }
            let g = lin.terms.iter().fold(0i64, |g, t| gcd(g, t.1));
            match rel {
                Rel::Eq | Rel::Ne => {
                    if lin.k % g != 0 && ints {
                        // g * x = -k has no integer solution.
                        return if rel == Rel::Eq {
                            Norm::False
                        } else {
                            Norm::True
                        };
                    }
                    let s = if lin.terms[0].1 < 0 { -1 } else { 1 };
                    if lin.k % g == 0 {
                        for t in &mut lin.terms {
                            t.1 = t.1 * s / g;
                        }
                        lin.k = lin.k * s / g;
                    } else if s < 0 {
                        lin = Lin::default().add_scaled(&lin, -1);
                    }
                }
                Rel::Le | Rel::Lt => {
                    if ints {
                        // g * x + k <= 0  <=>  x <= floor(-k / g)
                        let bound = (-lin.k).div_euclid(g);
                        for t in &mut lin.terms {
                            t.1 /= g;
                        }
                        lin.k = -bound;
                    } else if lin.k % g == 0 {
                        for t in &mut lin.terms {
                            t.1 /= g;
                        }
                        lin.k /= g;
                    }
                }
            }
            Norm::Lit(Lit::Arith(lin, rel))
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// Text of processes, terms and literals in Cubicle's syntax; process variables are
/// named `#1, #2, ...` in cubes (as Cubicle prints them) and constants `#k` likewise.
pub fn proc_name(p: ProcRef) -> String {
    match p {
        ProcRef::Var(i) => format!("#{}", i + 1),
        ProcRef::Const(i) => format!("#{}", i + 1),
    }
}

pub fn atom_text(sys: &System, a: &Atom) -> String {
    match a {
        Atom::Cell(g, idx) => {
            let name = &sys.globals[*g as usize].name;
            if idx.is_empty() {
                name.clone()
            } else {
                let i: Vec<String> = idx.iter().map(|p| proc_name(*p)).collect();
                format!("{name}[{}]", i.join(","))
            }
        }
        Atom::Fresh(g, k) => format!("?{}{k}", sys.globals[*g as usize].name),
        Atom::Pid(p) => proc_name(*p),
        Atom::Read(g, idx, p, k) => {
            let cell = atom_text(sys, &Atom::Cell(*g, idx.clone()));
            let age = if *k == 0 {
                String::new()
            } else {
                format!("'{k}")
            };
            format!("{} @ {cell}{age}", proc_name(*p))
        }
    }
}

fn term_text(sys: &System, t: &Term, partner: &Term) -> String {
    match t {
        Term::Proc(p) => proc_name(*p),
        Term::Atom(a) => atom_text(sys, a),
        Term::Val(v) => {
            let sort = match partner {
                Term::Atom(a) => Some(sys.sort_of(a)),
                _ => None,
            };
            match sort {
                Some(Sort::Enum(t)) => sys.types[t as usize].1[*v as usize].clone(),
                _ => format!("{v}"),
            }
        }
    }
}

pub fn lin_text(sys: &System, l: &Lin) -> String {
    let mut s = String::new();
    for (i, (a, c)) in l.terms.iter().enumerate() {
        let a = atom_text(sys, a);
        match (*c, i) {
            (1, 0) => s.push_str(&a),
            (-1, 0) => s.push_str(&format!("-{a}")),
            (1, _) => s.push_str(&format!(" + {a}")),
            (-1, _) => s.push_str(&format!(" - {a}")),
            (c, 0) => s.push_str(&format!("{c}*{a}")),
            (c, _) if c < 0 => s.push_str(&format!(" - {}*{a}", -c)),
            (c, _) => s.push_str(&format!(" + {c}*{a}")),
        }
    }
    if l.terms.is_empty() {
        s = format!("{}", l.k);
    } else if l.k > 0 {
        s.push_str(&format!(" + {}", l.k));
    } else if l.k < 0 {
        s.push_str(&format!(" - {}", -l.k));
    }
    s
}

pub fn lit_text(sys: &System, l: &Lit) -> String {
    // Normal forms put values first; people read the variable first.
    let swap = |a: &Term, b: &Term| !matches!(a, Term::Atom(_)) && matches!(b, Term::Atom(_));
    match l {
        Lit::Eq(a, b) if swap(a, b) => lit_text(sys, &Lit::Eq(b.clone(), a.clone())),
        Lit::Ne(a, b) if swap(a, b) => lit_text(sys, &Lit::Ne(b.clone(), a.clone())),
        Lit::Eq(a, b) => format!("{} = {}", term_text(sys, a, b), term_text(sys, b, a)),
        Lit::Ne(a, b) => format!("{} <> {}", term_text(sys, a, b), term_text(sys, b, a)),
        Lit::Arith(lin, rel) => {
            // Print `x rel y` with the negative part moved right.
            let pos = Lin {
                terms: lin.terms.iter().filter(|t| t.1 > 0).cloned().collect(),
                k: lin.k.max(0),
            };
            let neg = Lin {
                terms: lin
                    .terms
                    .iter()
                    .filter(|t| t.1 < 0)
                    .map(|(a, c)| (a.clone(), -c))
                    .collect(),
                k: (-lin.k).max(0),
            };
            let op = match rel {
                Rel::Eq => "=",
                Rel::Ne => "<>",
                Rel::Le => "<=",
                Rel::Lt => "<",
            };
            format!("{} {op} {}", lin_text(sys, &pos), lin_text(sys, &neg))
        }
    }
}

pub fn cube_text(sys: &System, lits: &[Lit]) -> String {
    if lits.is_empty() {
        return "true".into();
    }
    lits.iter()
        .map(|l| lit_text(sys, l))
        .collect::<Vec<_>>()
        .join(" && ")
}
