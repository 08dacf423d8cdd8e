//! Cubes and their pre-images by one transition instance.

use crate::formula::{self, map_term, normalize, Formula, Lin, Lit, Norm, Rel, Term};
use crate::{Atom, ProcRef, Rhs, Sort, System, Transition};
use rustc_hash::FxHashMap;

/// An existentially quantified conjunction over the process variables `Var(0..procs)`,
/// which are pairwise distinct. Literals are normalised, sorted and distinct.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cube {
    pub procs: u8,
    pub lits: Vec<Lit>,
    /// Under TSO: the event groups that still matter (see [`crate::tso`]).
    pub ev: crate::tso::Events,
}

impl Cube {
    /// The same cube with other events, their processes renumbered by `map` (from
    /// [`make_cube`]).
    pub fn with_events(mut self, ev: &crate::tso::Events, map: &[Option<u8>]) -> Cube {
        self.ev = ev.map_procs(&|p| match p {
            ProcRef::Var(i) => ProcRef::Var(map[i as usize].unwrap_or(i)),
            c => c,
        });
        self
    }
}

/// The solver's view of a conjunction: atoms become solver variables, processes become
/// distinct values (process variables of a cube are pairwise distinct, and constants are
/// never mixed with variables). One solver literal per literal, in order, then the
/// distinctness of process identifiers (and, when ordered, their bounds).
///
/// When an arithmetic literal orders a process-valued atom (`Turn < #1`, `A[#1] <= B`),
/// the conjunction is *ordered*: process identifiers are integers there, so every literal
/// over processes is arithmetic (a process cell is an integer variable, `#i` the
/// variable of `Atom::Pid(#i)`, distinct from the other processes', a constant `#k` the
/// number `k`), and under a finite process sort each lies in `0..n`. Otherwise processes
/// are symbols and `Atom::Pid`s (`i < j` between identifiers only) integers of their
/// own: nothing relates the two, as no process cell is ever compared by order.
pub struct Encoded {
    pub atoms: Vec<Atom>,
    pub lits: Vec<fencer_smt::Lit>,
    /// Process-valued atoms are integer variables (see above).
    pub ordered: bool,
}

impl Encoded {
    /// The value of solver variable `v` in `m`: numbers (and, when ordered, process
    /// identifiers) as integers, symbols by value.
    pub fn value(&self, sys: &System, m: &fencer_smt::Model, v: u32) -> i64 {
        let s = sys.sort_of(&self.atoms[v as usize]);
        if s.arith() || (self.ordered && s == Sort::Proc) {
            m.int(v)
        } else {
            m.syms.get(&v).copied().unwrap_or(0)
        }
    }
}

/// Whether an arithmetic literal of `lits` orders a process-valued atom: see [`Encoded`].
pub fn orders_procs(sys: &System, lits: &[Lit]) -> bool {
    lits.iter().any(|l| match l {
        Lit::Arith(lin, _) => lin
            .terms
            .iter()
            .any(|(a, _)| !matches!(a, Atom::Pid(_)) && sys.sort_of(a) == Sort::Proc),
        _ => false,
    })
}

/// The encoding of `lits`, with `procs` processes if the sort is finite.
pub fn encode(sys: &System, procs: Option<u8>, lits: &[Lit]) -> Encoded {
    encode_within(sys, procs.map(|n| (0, n as i64 - 1)), lits)
}

/// [`encode`]; under a finite process sort, ordered process identifiers lie within
/// `bounds` (inclusive).
fn encode_within(sys: &System, bounds: Option<(i64, i64)>, lits: &[Lit]) -> Encoded {
    let ordered = orders_procs(sys, lits);
    let mut ids: FxHashMap<Atom, u32> = FxHashMap::default();
    let mut atoms = Vec::new();
    fn id(ids: &mut FxHashMap<Atom, u32>, atoms: &mut Vec<Atom>, a: &Atom) -> u32 {
        *ids.entry(a.clone()).or_insert_with(|| {
            atoms.push(a.clone());
            atoms.len() as u32 - 1
        })
    }
    fn sym(ids: &mut FxHashMap<Atom, u32>, atoms: &mut Vec<Atom>, t: &Term) -> fencer_smt::Sym {
        match t {
            Term::Proc(ProcRef::Var(i)) | Term::Proc(ProcRef::Const(i)) => {
                fencer_smt::Sym::Val(*i as i64)
            }
            Term::Val(v) => fencer_smt::Sym::Val(*v as i64),
            Term::Atom(a) => fencer_smt::Sym::Var(id(ids, atoms, a)),
        }
    }
    // A linear expression over solver variables; a constant process's identifier is its
    // number.
    fn lin(
        ids: &mut FxHashMap<Atom, u32>,
        atoms: &mut Vec<Atom>,
        l: &Lin,
        out: &mut fencer_smt::Lin,
        f: i64,
    ) {
        out.k += f * l.k;
        for (a, c) in &l.terms {
            match a {
                Atom::Pid(ProcRef::Const(k)) => out.k += f * c * *k as i64,
                a => {
                    let v = id(ids, atoms, a);
                    *out = out.add_scaled(&fencer_smt::Lin::var(v), f * c);
                }
            }
        }
    }
    let is_proc = |t: &Term| match t {
        Term::Proc(_) => true,
        Term::Atom(a) => sys.sort_of(a) == Sort::Proc,
        Term::Val(_) => false,
    };
    let mut out = Vec::new();
    for l in lits {
        out.push(match l {
            Lit::Eq(a, b) | Lit::Ne(a, b) if ordered && (is_proc(a) || is_proc(b)) => {
                let mut d = fencer_smt::Lin::default();
                lin(&mut ids, &mut atoms, &formula::proc_lin(a), &mut d, 1);
                lin(&mut ids, &mut atoms, &formula::proc_lin(b), &mut d, -1);
                let rel = if matches!(l, Lit::Eq(..)) {
                    Rel::Eq
                } else {
                    Rel::Ne
                };
                fencer_smt::Lit::Arith(d, rel)
            }
            Lit::Eq(a, b) => {
                fencer_smt::Lit::Eq(sym(&mut ids, &mut atoms, a), sym(&mut ids, &mut atoms, b))
            }
            Lit::Ne(a, b) => {
                fencer_smt::Lit::Ne(sym(&mut ids, &mut atoms, a), sym(&mut ids, &mut atoms, b))
            }
            Lit::Arith(l, rel) if ordered => {
                let mut d = fencer_smt::Lin::default();
                lin(&mut ids, &mut atoms, l, &mut d, 1);
                fencer_smt::Lit::Arith(d, *rel)
            }
            Lit::Arith(lin, rel) => {
                let terms = lin
                    .terms
                    .iter()
                    .map(|(a, c)| (id(&mut ids, &mut atoms, a), *c))
                    .collect();
                fencer_smt::Lit::Arith(fencer_smt::Lin { terms, k: lin.k }, *rel)
            }
        });
    }
    // Distinct processes have distinct identifiers.
    let pids: Vec<u32> = (0..atoms.len() as u32)
        .filter(|&v| matches!(atoms[v as usize], Atom::Pid(_)))
        .collect();
    for (i, &a) in pids.iter().enumerate() {
        for &b in &pids[i + 1..] {
            out.push(fencer_smt::Lit::Arith(
                fencer_smt::Lin {
                    terms: vec![(a, 1), (b, -1)],
                    k: 0,
                },
                Rel::Ne,
            ));
        }
    }
    // A finite process sort is its processes `0..n`: a process cell holds one of them
    // (a concrete instance's cells also the identifiers of no process it has).
    if let (true, Some((lo, hi))) = (ordered, bounds) {
        for v in 0..atoms.len() as u32 {
            let a = &atoms[v as usize];
            if matches!(a, Atom::Pid(_)) || sys.sort_of(a) == Sort::Proc {
                // lo - x <= 0 and x - hi <= 0
                out.push(fencer_smt::Lit::Arith(
                    fencer_smt::Lin {
                        terms: vec![(v, -1)],
                        k: lo,
                    },
                    Rel::Le,
                ));
                out.push(fencer_smt::Lit::Arith(
                    fencer_smt::Lin {
                        terms: vec![(v, 1)],
                        k: -hi,
                    },
                    Rel::Le,
                ));
            }
        }
    }
    Encoded {
        atoms,
        lits: out,
        ordered,
    }
}

/// Satisfiability of a conjunction, with processes finitely many under `procs`.
pub fn sat(sys: &System, procs: Option<u8>, lits: &[Lit]) -> bool {
    model(sys, procs, lits).is_some()
}

pub fn model(
    sys: &System,
    procs: Option<u8>,
    lits: &[Lit],
) -> Option<(Encoded, fencer_smt::Model)> {
    model_within(
        sys,
        procs,
        procs.map_or((0, 0), |n| (0, n as i64 - 1)),
        lits,
    )
}

/// [`model`], ordered process identifiers (see [`Encoded`]) within `bounds` (inclusive)
/// when `procs` is given: a concrete instance's process cells (`Instance::proc_range`).
pub fn model_within(
    sys: &System,
    procs: Option<u8>,
    bounds: (i64, i64),
    lits: &[Lit],
) -> Option<(Encoded, fencer_smt::Model)> {
    let e = encode_within(sys, procs.map(|_| bounds), lits);
    let sort = |v: u32| sys.smt_sort(sys.sort_of(&e.atoms[v as usize]), procs);
    let m = fencer_smt::check(&sort, &e.lits)?;
    Some((e, m))
}

/// A value of a cell after a transition: a term, or a linear expression for numbers.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    T(Term),
    L(Lin),
}

/// What one cell holds after the transition, as the pre-state sees it: alternatives with
/// their conditions (a `case` gives one per branch).
pub(crate) fn cell_after(
    sys: &System,
    t: &Transition,
    atom: &Atom,
    sigma: &[ProcRef],
    fresh: &mut u32,
) -> Vec<(Formula, Val)> {
    let arith = sys.sort_of(atom).arith();
    let same = || {
        if arith {
            Val::L(Lin::atom(atom.clone()))
        } else {
            Val::T(Term::Atom(atom.clone()))
        }
    };
    let (g, idx) = match atom {
        Atom::Cell(g, idx) => (*g, idx),
        Atom::Fresh(..) | Atom::Pid(_) | Atom::Read(..) => return vec![(Formula::True, same())],
    };
    let Some(u) = t.updates.iter().find(|u| u.global == g) else {
        return vec![(Formula::True, same())];
    };
    let k = t.params as usize;
    let env = |p: ProcRef| match p {
        ProcRef::Var(i) if (i as usize) < k => sigma[i as usize],
        ProcRef::Var(i) => idx[i as usize - k],
        c => c,
    };
    let rhs = |r: &Rhs, fresh: &mut u32| match r {
        Rhs::Term(tm) => Val::T(map_term(tm, &env)),
        Rhs::Lin(l) => Val::L(crate::formula::map_lin(l, &env)),
        Rhs::Nondet => {
            *fresh += 1;
            let a = Atom::Fresh(g, *fresh);
            if arith {
                Val::L(Lin::atom(a))
            } else {
                Val::T(Term::Atom(a))
            }
        }
    };
    let mut out = Vec::new();
    let mut previous: Vec<Formula> = Vec::new();
    for (cond, r) in &u.cases {
        let c = simplify(sys, &cond.map_procs(&env));
        if c == Formula::False {
            continue;
        }
        let mut guard = previous.clone();
        guard.push(c.clone());
        out.push((Formula::And(guard), rhs(r, fresh)));
        if c == Formula::True {
            return out;
        }
        previous.push(c.negate());
    }
    out.push((Formula::And(previous), rhs(&u.default, fresh)));
    out
}

/// Literals decided by their form (process (in)equalities, constants) replaced by
/// `True`/`False`, and connectives folded.
pub fn simplify(sys: &System, f: &Formula) -> Formula {
    match f {
        Formula::Lit(l) => match normalize(sys, l) {
            Norm::True => Formula::True,
            Norm::False => Formula::False,
            Norm::Lit(l) => Formula::Lit(l),
        },
        Formula::And(v) => {
            let mut out = Vec::new();
            for x in v {
                match simplify(sys, x) {
                    Formula::True => {}
                    Formula::False => return Formula::False,
                    y => out.push(y),
                }
            }
            if out.is_empty() {
                Formula::True
            } else {
                Formula::And(out)
            }
        }
        Formula::Or(v) => {
            let mut out = Vec::new();
            for x in v {
                match simplify(sys, x) {
                    Formula::False => {}
                    Formula::True => return Formula::True,
                    y => out.push(y),
                }
            }
            if out.is_empty() {
                Formula::False
            } else {
                Formula::Or(out)
            }
        }
        x => x.clone(),
    }
}

/// The literal with its atoms replaced by what they hold after the transition.
fn subst_lit(lit: &Lit, after: &FxHashMap<Atom, Vec<(Formula, Val)>>) -> Formula {
    let mut atoms = Vec::new();
    lit.atoms(&mut atoms);
    atoms.sort();
    atoms.dedup();
    if atoms.iter().all(|a| {
        after[a].len() == 1 && matches!(&after[a][0].0, Formula::True) && is_same(a, &after[a][0].1)
    }) {
        return Formula::Lit(lit.clone());
    }
    let mut out = Vec::new();
    let mut choice = vec![0usize; atoms.len()];
    loop {
        let mut conds = Vec::new();
        let val = |a: &Atom, choice: &[usize]| -> &Val {
            let i = atoms.iter().position(|x| x == a).expect("atom");
            &after[a][choice[i]].1
        };
        for (i, a) in atoms.iter().enumerate() {
            conds.push(after[a][choice[i]].0.clone());
        }
        let term = |t: &Term| match t {
            Term::Atom(a) => match val(a, &choice) {
                Val::T(x) => x.clone(),
                Val::L(_) => unreachable!("a non-arithmetic cell holds a term"),
            },
            x => x.clone(),
        };
        let l = match lit {
            Lit::Eq(a, b) => Lit::Eq(term(a), term(b)),
            Lit::Ne(a, b) => Lit::Ne(term(a), term(b)),
            Lit::Arith(lin, rel) => {
                let mut out = Lin::constant(lin.k);
                for (a, c) in &lin.terms {
                    match val(a, &choice) {
                        Val::L(x) => out = out.add_scaled(x, *c),
                        // A process cell ordered (`Turn < #1`): the identifier it holds.
                        Val::T(x) => out = out.add_scaled(&crate::formula::proc_lin(x), *c),
                    }
                }
                Lit::Arith(out, *rel)
            }
        };
        conds.push(Formula::Lit(l));
        out.push(Formula::And(conds));
        // Next combination.
        let mut i = 0;
        loop {
            if i == atoms.len() {
                return Formula::Or(out);
            }
            choice[i] += 1;
            if choice[i] < after[&atoms[i]].len() {
                break;
            }
            choice[i] = 0;
            i += 1;
        }
    }
}

fn is_same(a: &Atom, v: &Val) -> bool {
    match v {
        Val::T(Term::Atom(b)) => a == b,
        Val::L(l) => l.k == 0 && l.terms.len() == 1 && &l.terms[0].0 == a && l.terms[0].1 == 1,
        _ => false,
    }
}

/// The pre-image of the conjunction `lits` by `t` with its parameters bound to `sigma`,
/// the `forall_other` guards instantiated over `others`: a disjunction of conjunctions,
/// still holding fresh atoms. With `skip_unchanged`, none when the instance writes no
/// cell of `lits`: the pre-image is then `lits` and the guards, included in `lits`
/// (whose cube the caller has visited, so it would only be found subsumed by it).
pub fn pre_image(
    sys: &System,
    t: &Transition,
    lits: &[Lit],
    sigma: &[ProcRef],
    others: &[ProcRef],
    fresh: &mut u32,
    skip_unchanged: bool,
) -> Vec<Vec<Lit>> {
    let mut atoms = Vec::new();
    for l in lits {
        l.atoms(&mut atoms);
    }
    atoms.sort();
    atoms.dedup();
    let mut after = FxHashMap::default();
    let mut unchanged = true;
    for a in atoms {
        let v = cell_after(sys, t, &a, sigma, fresh);
        unchanged &=
            v.len() == 1 && is_same(&a, &v[0].1) && simplify(sys, &v[0].0) == Formula::True;
        after.insert(a, v);
    }
    if skip_unchanged && unchanged {
        return Vec::new();
    }
    let k = t.params as usize;
    let env = |p: ProcRef| match p {
        ProcRef::Var(i) if (i as usize) < k => sigma[i as usize],
        c => c,
    };
    let mut parts = vec![simplify(sys, &t.guard.map_procs(&env))];
    if parts[0] == Formula::False {
        return Vec::new();
    }
    for fo in &t.forall_other {
        for &o in others {
            let env = |p: ProcRef| match p {
                ProcRef::Var(i) if (i as usize) < k => sigma[i as usize],
                ProcRef::Var(_) => o,
                c => c,
            };
            let f = simplify(sys, &fo.map_procs(&env));
            if f == Formula::False {
                return Vec::new();
            }
            parts.push(f);
        }
    }
    for l in lits {
        parts.push(subst_lit(l, &after));
    }
    let f = simplify(sys, &Formula::And(parts));
    f.dnf(sys)
}

/// Fresh atoms are existential: each is eliminated, by substitution when the conjunction
/// fixes it, by Fourier-Motzkin for numbers, else by dropping its literals (exact for
/// process identifiers and abstract values only compared for equality, an
/// over-approximation for enumerations; a process identifier also ordered keeps the
/// Fourier-Motzkin combinations of its order literals, an over-approximation too).
/// `None` when the conjunction became false.
pub fn eliminate_fresh(sys: &System, mut lits: Vec<Lit>) -> Option<Vec<Lit>> {
    loop {
        let mut atoms = Vec::new();
        for l in &lits {
            l.atoms(&mut atoms);
        }
        let Some(f) = atoms.into_iter().find(|a| matches!(a, Atom::Fresh(..))) else {
            return Some(lits);
        };
        let mentions = |l: &Lit| {
            let mut v = Vec::new();
            l.atoms(&mut v);
            v.contains(&f)
        };
        let (with, without): (Vec<Lit>, Vec<Lit>) = lits.into_iter().partition(|l| mentions(l));
        let mut out = without;
        if sys.sort_of(&f).arith() {
            let fa = &f;
            let unit_eq = with.iter().find_map(|l| match l {
                Lit::Arith(lin, Rel::Eq) if lin.coef(fa).abs() == 1 => Some(lin.clone()),
                _ => None,
            });
            let mut new = Vec::new();
            if let Some(eq) = unit_eq {
                let c = eq.coef(fa);
                for l in &with {
                    if let Lit::Arith(lin, rel) = l {
                        if lin == &eq && *rel == Rel::Eq {
                            continue;
                        }
                        let d = lin.coef(fa);
                        new.push(Lit::Arith(lin.add_scaled(&eq, -d * c), *rel));
                    }
                }
            } else {
                new = fm_bounds(&with, fa);
            }
            for l in new {
                match normalize(sys, &l) {
                    Norm::True => {}
                    Norm::False => return None,
                    Norm::Lit(l) => out.push(l),
                }
            }
        } else {
            let ft = Term::Atom(f.clone());
            let def = with.iter().find_map(|l| match l {
                Lit::Eq(a, b) if a == &ft && b != &ft => Some(b.clone()),
                Lit::Eq(a, b) if b == &ft && a != &ft => Some(a.clone()),
                _ => None,
            });
            let new = if let Some(v) = def {
                let sub = |t: &Term| if t == &ft { v.clone() } else { t.clone() };
                with.iter()
                    .map(|l| match l {
                        Lit::Eq(a, b) => Lit::Eq(sub(a), sub(b)),
                        Lit::Ne(a, b) => Lit::Ne(sub(a), sub(b)),
                        // A process value ordered (`?X < #1`): the identifier it is.
                        Lit::Arith(lin, rel) => {
                            let c = lin.coef(&f);
                            let rest = Lin::default()
                                .add_scaled(lin, 1)
                                .add_scaled(&Lin::atom(f.clone()), -c);
                            Lit::Arith(rest.add_scaled(&crate::formula::proc_lin(&v), c), *rel)
                        }
                    })
                    .collect()
            } else {
                // No value fixes it: its order literals (a process identifier's) give
                // their bounds' combinations, its (dis)equalities are dropped. Exact for
                // a value only compared for equality; with order literals an
                // over-approximation (`#1 <= ?X <= #1 && ?X <> #1` becomes true), which
                // keeps SAFE sound.
                fm_bounds(&with, &f)
            };
            for l in new {
                match normalize(sys, &l) {
                    Norm::True => {}
                    Norm::False => return None,
                    Norm::Lit(l) => out.push(l),
                }
            }
        }
        lits = out;
    }
}

/// Fourier-Motzkin elimination of `fa` from the arithmetic literals of `with`: bounds
/// only, equalities as two inequalities, disequalities dropped (an over-approximation).
fn fm_bounds(with: &[Lit], fa: &Atom) -> Vec<Lit> {
    let mut rows: Vec<(Lin, bool)> = Vec::new();
    for l in with {
        if let Lit::Arith(lin, rel) = l {
            match rel {
                Rel::Le => rows.push((lin.clone(), false)),
                Rel::Lt => rows.push((lin.clone(), true)),
                Rel::Eq => {
                    rows.push((lin.clone(), false));
                    rows.push((Lin::default().add_scaled(lin, -1), false));
                }
                Rel::Ne => {}
            }
        }
    }
    let mut new = Vec::new();
    for (p, sp) in rows.iter().filter(|r| r.0.coef(fa) > 0) {
        for (n, sn) in rows.iter().filter(|r| r.0.coef(fa) < 0) {
            let (cp, cn) = (p.coef(fa), -n.coef(fa));
            let comb = Lin::default().add_scaled(p, cn).add_scaled(n, cp);
            new.push(Lit::Arith(comb, if *sp || *sn { Rel::Lt } else { Rel::Le }));
        }
    }
    new
}

/// The cube of a conjunction over the variables `Var(0..)`: fresh atoms eliminated,
/// literals implied by an equality with a value dropped, unused variables removed and the
/// rest renumbered in order (`map[old] = new`). `None` if it is unsatisfiable.
pub fn make_cube(
    sys: &System,
    procs: Option<u8>,
    lits: Vec<Lit>,
    n_old: u8,
    keep_all: bool,
) -> Option<(Cube, Vec<Option<u8>>)> {
    let (c, map) = make_cube_unchecked(sys, lits, n_old, keep_all)?;
    sat(sys, procs, &c.lits).then_some((c, map))
}

/// [`make_cube`] without its final satisfiability check, for a caller that checks a
/// stronger conjunction anyway.
pub fn make_cube_unchecked(
    sys: &System,
    lits: Vec<Lit>,
    n_old: u8,
    keep_all: bool,
) -> Option<(Cube, Vec<Option<u8>>)> {
    let lits = eliminate_fresh(sys, lits)?;
    let mut lits = canonical(lits);
    // Every process of the pre-image is kept, mentioned or not: it exists, and later
    // `forall_other` guards must hold of it too (dropping it lets the search find traces
    // that no instance can run).
    let mut used = vec![keep_all; n_old as usize];
    for l in &lits {
        let mut ps = Vec::new();
        l.procs(&mut ps);
        for p in ps {
            if let ProcRef::Var(i) = p {
                used[i as usize] = true;
            }
        }
    }
    let mut map = vec![None; n_old as usize];
    let mut next = 0u8;
    for (i, u) in used.iter().enumerate() {
        if *u {
            map[i] = Some(next);
            next += 1;
        }
    }
    if map
        .iter()
        .enumerate()
        .any(|(i, m)| *m != Some(i as u8) && used[i])
    {
        let f = |p: ProcRef| match p {
            ProcRef::Var(i) => ProcRef::Var(map[i as usize].expect("used")),
            c => c,
        };
        lits = canonical(
            lits.iter()
                .map(|l| match normalize(sys, &l.map_procs(&f)) {
                    Norm::Lit(l) => l,
                    _ => unreachable!("renaming keeps a literal undecided"),
                })
                .collect(),
        );
    }
    Some((
        Cube {
            procs: next,
            lits,
            ev: Default::default(),
        },
        map,
    ))
}

/// Sorted, without duplicates, and without disequalities implied by an equality with a
/// value (`x = A` makes `x <> B` redundant), so that syntactic subsumption sees more.
pub fn canonical(mut lits: Vec<Lit>) -> Vec<Lit> {
    lits.sort();
    lits.dedup();
    let fixed: Vec<(Term, Term)> = lits
        .iter()
        .filter_map(|l| match l {
            Lit::Eq(a, b) if matches!(b, Term::Val(_) | Term::Proc(_)) => {
                Some((a.clone(), b.clone()))
            }
            Lit::Eq(a, b) if matches!(a, Term::Val(_) | Term::Proc(_)) => {
                Some((b.clone(), a.clone()))
            }
            _ => None,
        })
        .collect();
    if fixed.is_empty() {
        return lits;
    }
    let is_val = |t: &Term| matches!(t, Term::Val(_) | Term::Proc(_));
    lits.retain(|l| match l {
        Lit::Ne(a, b) => !fixed
            .iter()
            .any(|(x, v)| (x == a && is_val(b) && v != b) || (x == b && is_val(a) && v != a)),
        _ => true,
    });
    lits
}

/// A sort's values for enumerating cases (enumerations and fixed process sets only).
pub fn finite_values(sys: &System, s: Sort, procs: Option<u8>) -> Option<u32> {
    match s {
        Sort::Enum(t) => Some(sys.types[t as usize].1.len() as u32),
        Sort::Proc => procs.map(|n| n as u32),
        _ => None,
    }
}
