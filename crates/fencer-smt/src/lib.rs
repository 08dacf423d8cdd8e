//! A decision procedure for the conjunctions the parameterized engine asks about: literals
//! over symbols of finite sorts (enumerations, booleans, process identifiers under
//! `number_procs`), of infinite uninterpreted sorts (process identifiers, abstract types),
//! and linear arithmetic over integers and reals.
//!
//! Why our own and not Z3: see docs/design/smt.md. In short, the queries
//! are tiny conjunctions (a cube and one negated literal, a cube and an initial formula),
//! the fragment is decidable by union-find with a finite-domain search plus
//! Fourier-Motzkin with integer tightening, and this keeps CI free of a C++ library.
//!
//! Completeness: equalities over finite and infinite sorts are decided exactly. Arithmetic
//! is exact on rationals and, with tightening, on difference constraints over integers
//! (all of Cubicle's examples); on general integer systems it may answer "satisfiable"
//! for an integer-infeasible system, which only makes the engine keep a cube it could
//! have dropped.

pub mod cnf;

use std::collections::HashMap;

pub type Var = u32;

/// A symbol: a variable of a non-arithmetic sort, or one of its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sym {
    Var(Var),
    Val(i64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rel {
    Eq,
    Ne,
    Le,
    Lt,
}

/// `sum(c * x) + k`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Lin {
    pub terms: Vec<(Var, i64)>,
    pub k: i64,
}

impl Lin {
    pub fn constant(k: i64) -> Lin {
        Lin {
            terms: Vec::new(),
            k,
        }
    }
    pub fn var(v: Var) -> Lin {
        Lin {
            terms: vec![(v, 1)],
            k: 0,
        }
    }
    /// `self + f * other`, merged and without zero coefficients.
    pub fn add_scaled(&self, other: &Lin, f: i64) -> Lin {
        let mut terms = self.terms.clone();
        for &(v, c) in &other.terms {
            match terms.iter_mut().find(|t| t.0 == v) {
                Some(t) => t.1 += c * f,
                None => terms.push((v, c * f)),
            }
        }
        terms.retain(|t| t.1 != 0);
        terms.sort();
        Lin {
            terms,
            k: self.k + other.k * f,
        }
    }
}

/// A literal: `a = b`, `a <> b` over symbols, or `lin rel 0` over numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lit {
    Eq(Sym, Sym),
    Ne(Sym, Sym),
    Arith(Lin, Rel),
}

impl Lit {
    pub fn negate(&self) -> Lit {
        match self {
            Lit::Eq(a, b) => Lit::Ne(*a, *b),
            Lit::Ne(a, b) => Lit::Eq(*a, *b),
            Lit::Arith(l, Rel::Eq) => Lit::Arith(l.clone(), Rel::Ne),
            Lit::Arith(l, Rel::Ne) => Lit::Arith(l.clone(), Rel::Eq),
            // not (l <= 0)  <=>  -l < 0
            Lit::Arith(l, Rel::Le) => Lit::Arith(Lin::default().add_scaled(l, -1), Rel::Lt),
            Lit::Arith(l, Rel::Lt) => Lit::Arith(Lin::default().add_scaled(l, -1), Rel::Le),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sort {
    /// Values `0..n`.
    Finite(u32),
    /// Unboundedly many values; any `Val` names one of them.
    Infinite,
    Int,
    Real,
}

/// A rational `n / d`, `d > 0`, reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Q(pub i128, pub i128);

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Q {
    fn new(n: i128, d: i128) -> Q {
        let g = gcd(n, d).max(1);
        let s = if d < 0 { -1 } else { 1 };
        Q(s * n / g, s * d / g)
    }
    fn int(n: i128) -> Q {
        Q(n, 1)
    }
    fn add(self, o: Q) -> Q {
        Q::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: Q) -> Q {
        Q::new(self.0 * o.0, self.1 * o.1)
    }
    fn lt(self, o: Q) -> bool {
        self.0 * o.1 < o.0 * self.1
    }
    fn floor(self) -> i128 {
        self.0.div_euclid(self.1)
    }
    fn ceil(self) -> i128 {
        -(-self.0).div_euclid(self.1)
    }
}

/// Values satisfying a conjunction: symbols by value, numbers as rationals (integers for
/// `Int` variables).
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub syms: HashMap<Var, i64>,
    pub nums: HashMap<Var, Q>,
}

impl Model {
    pub fn num(&self, v: Var) -> Q {
        self.nums.get(&v).copied().unwrap_or(Q(0, 1))
    }
    /// The integer value of `v` (the floor of a real).
    pub fn int(&self, v: Var) -> i64 {
        self.num(v).floor() as i64
    }
}

/// Whether the conjunction of `lits` is satisfiable, and a model if it is.
pub fn check(sort: &dyn Fn(Var) -> Sort, lits: &[Lit]) -> Option<Model> {
    let mut model = Model::default();
    let mut syms = Vec::new();
    let mut arith = Vec::new();
    for l in lits {
        match l {
            Lit::Eq(a, b) => syms.push((*a, *b, true)),
            Lit::Ne(a, b) => syms.push((*a, *b, false)),
            Lit::Arith(lin, rel) => arith.push((lin.clone(), *rel)),
        }
    }
    model.syms = check_syms(sort, &syms)?;
    model.nums = check_arith(sort, &arith)?;
    Some(model)
}

pub fn sat(sort: &dyn Fn(Var) -> Sort, lits: &[Lit]) -> bool {
    check(sort, lits).is_some()
}

/// Whether `lits` implies `goal`.
pub fn entails(sort: &dyn Fn(Var) -> Sort, lits: &[Lit], goal: &Lit) -> bool {
    let mut all = lits.to_vec();
    all.push(goal.negate());
    !sat(sort, &all)
}

/// Whether `lits` implies the disjunction of the conjunctions in `cubes`: `lits` and, for
/// each cube, the negation of one of its literals, is unsatisfiable for every choice.
/// `budget` bounds the choices tried; running out answers `false` (not proved).
pub fn entails_any(
    sort: &dyn Fn(Var) -> Sort,
    lits: &[Lit],
    cubes: &[Vec<Lit>],
    budget: &mut u64,
) -> bool {
    // Literals already implied by `lits` can never be the negated one; cubes with a literal
    // contradicting `lits` need no choice at all. Candidates share literals: each is
    // classified once.
    let given: std::collections::HashSet<&Lit> = lits.iter().collect();
    let mut known: HashMap<Lit, Class> = HashMap::new();
    let mut clauses: Vec<Vec<Lit>> = Vec::new();
    for c in cubes {
        let mut clause = Vec::new();
        let mut trivially_true = false;
        for l in c {
            let class = match known.get(l) {
                Some(k) => *k,
                None => {
                    let k = if given.contains(l) || entails(sort, lits, l) {
                        Class::Implied
                    } else if given.contains(&l.negate()) || entails(sort, lits, &l.negate()) {
                        Class::Refuted
                    } else {
                        Class::Open
                    };
                    known.insert(l.clone(), k);
                    k
                }
            };
            match class {
                Class::Implied => {}
                Class::Refuted => {
                    trivially_true = true;
                    break;
                }
                Class::Open => clause.push(l.negate()),
            }
        }
        if trivially_true {
            continue;
        }
        if clause.is_empty() {
            return true;
        }
        clauses.push(clause);
    }
    // Unit clauses are forced: their literals join the conjunction at once.
    let mut cur = lits.to_vec();
    let (units, mut rest): (Vec<Vec<Lit>>, Vec<Vec<Lit>>) =
        clauses.into_iter().partition(|c| c.len() == 1);
    if !units.is_empty() {
        cur.extend(units.into_iter().map(|mut c| c.pop().expect("unit")));
        if !sat(sort, &cur) {
            return true;
        }
    }
    rest.sort_by_key(|c| c.len());
    !search(sort, &mut cur, &rest, budget)
}

#[derive(Clone, Copy)]
enum Class {
    Implied,
    Refuted,
    Open,
}

/// Depth-first search for a model of `cur` and one literal of each clause.
fn search(
    sort: &dyn Fn(Var) -> Sort,
    cur: &mut Vec<Lit>,
    clauses: &[Vec<Lit>],
    budget: &mut u64,
) -> bool {
    if *budget == 0 {
        return true;
    }
    *budget -= 1;
    let Some((first, rest)) = clauses.split_first() else {
        return true;
    };
    for l in first {
        cur.push(l.clone());
        let ok = sat(sort, cur) && search(sort, cur, rest, budget);
        cur.pop();
        if ok {
            return true;
        }
    }
    false
}

fn sym_sort(sort: &dyn Fn(Var) -> Sort, a: Sym, b: Sym) -> Sort {
    match (a, b) {
        (Sym::Var(v), _) | (_, Sym::Var(v)) => sort(v),
        _ => Sort::Infinite,
    }
}

struct Uf {
    parent: Vec<usize>,
}

impl Uf {
    fn find(&mut self, x: usize) -> usize {
        let mut r = x;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut x = x;
        while self.parent[x] != r {
            let n = self.parent[x];
            self.parent[x] = r;
            x = n;
        }
        r
    }
}

/// Equalities and disequalities over symbols: union-find, then a search for values of the
/// classes of finite sorts that hold no value.
fn check_syms(sort: &dyn Fn(Var) -> Sort, lits: &[(Sym, Sym, bool)]) -> Option<HashMap<Var, i64>> {
    // Values of different sorts may share numbers; the partner variable's sort keeps them
    // apart only within a literal, which is all that is compared.
    let mut ids: Vec<Sym> = Vec::new();
    let mut sorts: Vec<Sort> = Vec::new();
    let mut node = |s: Sym, srt: Sort, sorts: &mut Vec<Sort>| -> usize {
        match ids.iter().position(|x| *x == s) {
            Some(i) => i,
            None => {
                ids.push(s);
                sorts.push(srt);
                ids.len() - 1
            }
        }
    };
    let mut pairs = Vec::new();
    for &(a, b, eq) in lits {
        if let (Sym::Val(x), Sym::Val(y)) = (a, b) {
            if (x == y) != eq {
                return None;
            }
            continue;
        }
        let s = sym_sort(sort, a, b);
        let (x, y) = (node(a, s, &mut sorts), node(b, s, &mut sorts));
        pairs.push((x, y, eq));
    }
    let syms: Vec<Sym> = ids;
    let mut uf = Uf {
        parent: (0..syms.len()).collect(),
    };
    for &(x, y, eq) in &pairs {
        if eq {
            let (rx, ry) = (uf.find(x), uf.find(y));
            uf.parent[rx] = ry;
        }
    }
    // The value of each class, if it holds one.
    let mut value: HashMap<usize, i64> = HashMap::with_capacity(syms.len());
    for (i, s) in syms.iter().enumerate() {
        if let Sym::Val(v) = s {
            let r = uf.find(i);
            if let Some(&w) = value.get(&r) {
                if w != *v {
                    return None;
                }
            }
            value.insert(r, *v);
        }
    }
    let mut diseq: Vec<(usize, usize)> = Vec::new();
    for &(x, y, eq) in &pairs {
        if !eq {
            let (rx, ry) = (uf.find(x), uf.find(y));
            if rx == ry {
                return None;
            }
            diseq.push((rx, ry));
        }
    }
    // Classes without a value: finite ones are searched, infinite ones get fresh values.
    let mut classes: Vec<usize> = (0..syms.len())
        .map(|i| uf.find(i))
        .filter(|r| !value.contains_key(r))
        .collect();
    classes.sort();
    classes.dedup();
    let finite: Vec<usize> = classes
        .iter()
        .copied()
        .filter(|&r| matches!(sorts[r], Sort::Finite(_)))
        .collect();
    let mut assign = value.clone();
    if !assign_finite(&finite, 0, &sorts, &diseq, &mut assign) {
        return None;
    }
    let mut fresh = syms
        .iter()
        .filter_map(|s| match s {
            Sym::Val(v) => Some(*v),
            _ => None,
        })
        .max()
        .unwrap_or(0)
        .max(1 << 20)
        + 1;
    for r in classes {
        if let std::collections::hash_map::Entry::Vacant(e) = assign.entry(r) {
            e.insert(fresh);
            fresh += 1;
        }
    }
    let mut out = HashMap::new();
    for (i, s) in syms.iter().enumerate() {
        if let Sym::Var(v) = s {
            out.insert(*v, assign[&uf.find(i)]);
        }
    }
    Some(out)
}

fn assign_finite(
    classes: &[usize],
    at: usize,
    sorts: &[Sort],
    diseq: &[(usize, usize)],
    assign: &mut HashMap<usize, i64>,
) -> bool {
    if at == classes.len() {
        return true;
    }
    let r = classes[at];
    let Sort::Finite(n) = sorts[r] else {
        return true;
    };
    for v in 0..n as i64 {
        let clash = diseq.iter().any(|&(a, b)| {
            (a == r && assign.get(&b) == Some(&v)) || (b == r && assign.get(&a) == Some(&v))
        });
        if clash {
            continue;
        }
        assign.insert(r, v);
        if assign_finite(classes, at + 1, sorts, diseq, assign) {
            return true;
        }
        assign.remove(&r);
    }
    false
}

/// `sum(c * x) + k <= 0`, or `< 0` when `strict`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Row {
    terms: Vec<(Var, i128)>,
    k: i128,
    strict: bool,
}

fn row(lin: &Lin, sign: i128, strict: bool, is_int: &dyn Fn(Var) -> bool) -> Row {
    let mut r = Row {
        terms: lin
            .terms
            .iter()
            .map(|&(v, c)| (v, sign * c as i128))
            .collect(),
        k: sign * lin.k as i128,
        strict,
    };
    tighten(&mut r, is_int);
    r
}

/// Over integers, `sum < -k` is `sum <= -k - 1`, and `g * sum' <= -k` is
/// `sum' <= floor(-k / g)`: this keeps Fourier-Motzkin exact on difference constraints.
fn tighten(r: &mut Row, is_int: &dyn Fn(Var) -> bool) {
    r.terms.retain(|t| t.1 != 0);
    r.terms.sort();
    if r.terms.is_empty() {
        return;
    }
    let g = r.terms.iter().fold(0, |g, t| gcd(g, t.1));
    if r.terms.iter().all(|t| is_int(t.0)) {
        if r.strict {
            r.k += 1;
            r.strict = false;
        }
        // sum' * g + k <= 0  <=>  sum' <= floor(-k / g)
        let bound = Q::new(-r.k, g).floor();
        for t in &mut r.terms {
            t.1 /= g;
        }
        r.k = -bound;
    } else if g > 1 {
        // Dividing by a positive factor keeps a real row equivalent, with rationals in k;
        // only an exact division is done.
        if r.k % g == 0 {
            for t in &mut r.terms {
                t.1 /= g;
            }
            r.k /= g;
        }
    }
}

/// Linear arithmetic: equalities that define a variable (`x - y + k = 0`, coefficient
/// ±1, the rest integral when `x` is an integer) are substituted away, then each group of
/// variables that no literal relates to another's is decided on its own (Fourier-Motzkin,
/// disequalities split): ordered process identifiers make many small, independent
/// problems, and splits in one do not multiply with another's.
fn check_arith(sort: &dyn Fn(Var) -> Sort, lits: &[(Lin, Rel)]) -> Option<HashMap<Var, Q>> {
    let is_int = |v: Var| sort(v) != Sort::Real;
    let mut lits: Vec<(Lin, Rel)> = lits.to_vec();
    let mut defs: Vec<(Var, Lin)> = Vec::new();
    loop {
        let def = lits.iter().enumerate().find_map(|(i, (l, rel))| {
            if *rel != Rel::Eq {
                return None;
            }
            let &(x, c) = l.terms.iter().find(|&&(x, c)| {
                c.abs() == 1 && (!is_int(x) || l.terms.iter().all(|t| t.0 == x || is_int(t.0)))
            })?;
            // x = -(l - c*x) / c
            let rest = l.add_scaled(&Lin::var(x), -c);
            Some((i, x, Lin::default().add_scaled(&rest, -c)))
        });
        let Some((i, x, val)) = def else { break };
        lits.swap_remove(i);
        for (l, _) in &mut lits {
            let c = l.terms.iter().find(|t| t.0 == x).map_or(0, |t| t.1);
            if c != 0 {
                *l = l.add_scaled(&Lin::var(x), -c).add_scaled(&val, c);
            }
        }
        defs.push((x, val));
    }
    // Groups of variables related by some literal.
    let mut vars: Vec<Var> = lits
        .iter()
        .flat_map(|(l, _)| l.terms.iter().map(|t| t.0))
        .collect();
    vars.sort_unstable();
    vars.dedup();
    let at = |v: Var| vars.binary_search(&v).expect("a variable");
    let mut uf = Uf {
        parent: (0..vars.len()).collect(),
    };
    for (l, _) in &lits {
        if let Some(&(first, _)) = l.terms.first() {
            for &(v, _) in &l.terms[1..] {
                let (a, b) = (uf.find(at(first)), uf.find(at(v)));
                uf.parent[a] = b;
            }
        }
    }
    let mut groups: HashMap<usize, (Vec<Row>, Vec<Lin>)> = HashMap::new();
    for (lin, rel) in &lits {
        let Some(&(first, _)) = lin.terms.first() else {
            let holds = match rel {
                Rel::Eq => lin.k == 0,
                Rel::Ne => lin.k != 0,
                Rel::Le => lin.k <= 0,
                Rel::Lt => lin.k < 0,
            };
            if !holds {
                return None;
            }
            continue;
        };
        let (rows, ne) = groups.entry(uf.find(at(first))).or_default();
        match rel {
            Rel::Le => rows.push(row(lin, 1, false, &is_int)),
            Rel::Lt => rows.push(row(lin, 1, true, &is_int)),
            Rel::Eq => {
                rows.push(row(lin, 1, false, &is_int));
                rows.push(row(lin, -1, false, &is_int));
            }
            Rel::Ne => ne.push(lin.clone()),
        }
    }
    let mut m = HashMap::new();
    let mut keys: Vec<usize> = groups.keys().copied().collect();
    keys.sort_unstable();
    for k in keys {
        let (rows, ne) = &groups[&k];
        m.extend(split_ne(rows, ne, &is_int)?);
    }
    // The substituted variables, last defined first.
    for (x, val) in defs.into_iter().rev() {
        let v = val
            .terms
            .iter()
            .fold(Q::int(val.k as i128), |acc, &(y, c)| {
                acc.add(m.get(&y).copied().unwrap_or(Q(0, 1)).mul(Q::int(c as i128)))
            });
        m.insert(x, v);
    }
    Some(m)
}

/// Each `lin <> 0` is `lin < 0` or `lin > 0`: try the model of the rest first, and split
/// only on a disequality it violates.
fn split_ne(rows: &[Row], ne: &[Lin], is_int: &dyn Fn(Var) -> bool) -> Option<HashMap<Var, Q>> {
    let m = fourier_motzkin(rows, ne, is_int)?;
    let eval = |l: &Lin| {
        l.terms.iter().fold(Q::int(l.k as i128), |acc, &(v, c)| {
            acc.add(m.get(&v).copied().unwrap_or(Q(0, 1)).mul(Q::int(c as i128)))
        })
    };
    let Some(i) = ne.iter().position(|l| eval(l) == Q(0, 1)) else {
        return Some(m);
    };
    let rest: Vec<Lin> = ne
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, l)| l.clone())
        .collect();
    for sign in [1, -1] {
        let mut r = rows.to_vec();
        r.push(row(&ne[i], sign, true, is_int));
        if let Some(m) = split_ne(&r, &rest, is_int) {
            return Some(m);
        }
    }
    None
}

/// Fourier-Motzkin elimination, then back-substitution for a model. Each variable takes,
/// within its bounds, a value no disequality of `ne` forbids once its other variables
/// have theirs, when there is one: then most satisfiable conjunctions need no split
/// (distinct process identifiers, `Pid(#1) <> Pid(#2)`, are the common case).
fn fourier_motzkin(
    rows: &[Row],
    ne: &[Lin],
    is_int: &dyn Fn(Var) -> bool,
) -> Option<HashMap<Var, Q>> {
    let mut stages: Vec<(Var, Vec<Row>)> = Vec::new();
    let mut cur: Vec<Row> = rows.to_vec();
    loop {
        cur.sort_by(|a, b| (&a.terms, a.k, a.strict).cmp(&(&b.terms, b.k, b.strict)));
        cur.dedup();
        let mut next = Vec::new();
        for r in &cur {
            if r.terms.is_empty() {
                if r.k > 0 || (r.k == 0 && r.strict) {
                    return None;
                }
            } else {
                next.push(r.clone());
            }
        }
        cur = next;
        // Eliminate the variable with the fewest combinations.
        let mut vars: Vec<Var> = cur
            .iter()
            .flat_map(|r| r.terms.iter().map(|t| t.0))
            .collect();
        vars.sort();
        vars.dedup();
        let Some(&x) = vars.iter().min_by_key(|&&v| {
            let p = cur.iter().filter(|r| coef(r, v) > 0).count();
            let n = cur.iter().filter(|r| coef(r, v) < 0).count();
            p * n
        }) else {
            break;
        };
        let (with, without): (Vec<Row>, Vec<Row>) = cur.into_iter().partition(|r| coef(r, x) != 0);
        let mut out = without;
        for p in with.iter().filter(|r| coef(r, x) > 0) {
            for n in with.iter().filter(|r| coef(r, x) < 0) {
                let (cp, cn) = (coef(p, x), -coef(n, x));
                let mut terms: Vec<(Var, i128)> = Vec::new();
                for &(v, c) in &p.terms {
                    terms.push((v, c * cn));
                }
                for &(v, c) in &n.terms {
                    match terms.iter_mut().find(|t| t.0 == v) {
                        Some(t) => t.1 += c * cp,
                        None => terms.push((v, c * cp)),
                    }
                }
                let mut r = Row {
                    terms,
                    k: p.k * cn + n.k * cp,
                    strict: p.strict || n.strict,
                };
                tighten(&mut r, is_int);
                if r.terms.iter().any(|t| t.1.abs() > 1 << 60) || r.k.abs() > 1 << 60 {
                    // Coefficients this large never come from Cubicle's models; answer
                    // "satisfiable", the safe side for the engine.
                    return Some(HashMap::new());
                }
                out.push(r);
            }
        }
        stages.push((x, with));
        cur = out;
    }
    // A variable whose rows all vanished with another's elimination is free: 0.
    let mut m: HashMap<Var, Q> = HashMap::new();
    for r in rows {
        for &(v, _) in &r.terms {
            if !stages.iter().any(|s| s.0 == v) {
                m.insert(v, Q(0, 1));
            }
        }
    }
    for (x, rows) in stages.into_iter().rev() {
        let (mut lo, mut hi): (Option<Bound>, Option<Bound>) = (None, None);
        for r in &rows {
            let c = coef(r, x);
            let mut rest = Q::int(r.k);
            for &(v, cv) in &r.terms {
                if v != x {
                    rest = rest.add(m.get(&v).copied().unwrap_or(Q(0, 1)).mul(Q::int(cv)));
                }
            }
            // c * x + rest <= 0  =>  x <= -rest / c  (c > 0)  or  x >= -rest / c  (c < 0)
            let b = rest.mul(Q::new(-1, c));
            if c > 0 {
                if hi.is_none_or(|(h, s)| b.lt(h) || (b == h && r.strict && !s)) {
                    hi = Some((b, r.strict));
                }
            } else if lo.is_none_or(|(l, s)| l.lt(b) || (b == l && r.strict && !s)) {
                lo = Some((b, r.strict));
            }
        }
        let Some(v) = pick(x, lo, hi, ne, &m, is_int(x)) else {
            return Some(HashMap::new());
        };
        m.insert(x, v);
    }
    // Variables only disequalities mention: any value they do not forbid.
    for l in ne {
        for &(x, _) in &l.terms {
            if !m.contains_key(&x) {
                let v = pick(x, None, None, ne, &m, is_int(x)).expect("unbounded");
                m.insert(x, v);
            }
        }
    }
    Some(m)
}

/// A value for `x` within its bounds (`None`: integer bounds that cross, which the caller
/// answers as "satisfiable", the safe side), avoiding if it can the values disequalities
/// of `ne` forbid, those whose other variables all have values in `m`.
fn pick(
    x: Var,
    lo: Option<Bound>,
    hi: Option<Bound>,
    ne: &[Lin],
    m: &HashMap<Var, Q>,
    int: bool,
) -> Option<Q> {
    let forbidden: Vec<Q> = ne
        .iter()
        .filter_map(|l| {
            let c = l.terms.iter().find(|t| t.0 == x)?.1;
            let mut rest = Q::int(l.k as i128);
            for &(v, cv) in &l.terms {
                if v != x {
                    rest = rest.add(m.get(&v)?.mul(Q::int(cv as i128)));
                }
            }
            Some(rest.mul(Q::new(-1, c as i128)))
        })
        .collect();
    let free = |v: &Q| !forbidden.contains(v);
    if int {
        let l = lo.map(|(l, s)| if s { l.floor() + 1 } else { l.ceil() });
        let h = hi.map(|(h, s)| if s { h.ceil() - 1 } else { h.floor() });
        let v0 = match (l, h) {
            (Some(l), Some(h)) if l > h => return None,
            (Some(l), _) => l,
            (None, Some(h)) => h.min(0),
            (None, None) => 0,
        };
        // v0, v0 + 1, v0 - 1, v0 + 2, ... within the bounds: one of the first
        // 2 * |forbidden| + 1 is free if the bounds leave room.
        let within = |v: i128| l.is_none_or(|l| l <= v) && h.is_none_or(|h| v <= h);
        let n = forbidden.len() as i128;
        let found = (0..=2 * n)
            .map(|j| {
                if j % 2 == 1 {
                    v0 + j / 2 + 1
                } else {
                    v0 - j / 2
                }
            })
            .find(|&v| within(v) && free(&Q::int(v)));
        return Some(Q::int(found.unwrap_or(v0)));
    }
    let v0 = match (lo, hi) {
        (Some((l, _)), Some((h, _))) => l.add(h).mul(Q(1, 2)),
        (Some((l, _)), None) => l.add(Q::int(1)),
        (None, Some((h, _))) => h.add(Q::int(-1)),
        (None, None) => Q::int(0),
    };
    if free(&v0) {
        return Some(v0);
    }
    let n = forbidden.len() as i128;
    let candidates: Vec<Q> = match (lo, hi) {
        // Points strictly inside: at most |forbidden| of them are taken.
        (Some((l, _)), Some((h, _))) if l.lt(h) => (1..=n + 1)
            .map(|j| l.add(h.add(l.mul(Q::int(-1))).mul(Q::new(j, n + 2))))
            .collect(),
        (Some(_), Some(_)) => Vec::new(),
        (_, None) => (1..=n + 1).map(|j| v0.add(Q::int(j))).collect(),
        (None, Some(_)) => (1..=n + 1).map(|j| v0.add(Q::int(-j))).collect(),
    };
    Some(candidates.into_iter().find(|v| free(v)).unwrap_or(v0))
}

/// A bound on a variable, and whether it is strict.
type Bound = (Q, bool);

fn coef(r: &Row, v: Var) -> i128 {
    r.terms.iter().find(|t| t.0 == v).map_or(0, |t| t.1)
}
