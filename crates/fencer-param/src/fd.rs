//! Subsumption queries over finite domains: "does the cube imply one of these cubes?" when
//! every literal compares one cell with a constant (`Cache[#1] = Shared`, `Curptr <> #2`),
//! which is most of Cubicle's examples. Each cell is a variable over its constructors (or
//! over the processes the query mentions plus one other); each candidate cube, negated, is
//! a clause; a DPLL search with unit propagation looks for an assignment that satisfies
//! the cube and no candidate. The general solver (`fencer_smt::entails_any`) searches
//! without propagation and gives up after a budget, which left cubes unsubsumed that this
//! proves covered (germanish4).
//!
//! Other literals (arithmetic, two cells compared, and every literal over a process cell
//! that an order literal compares) are theory literals, allowed when they share no cell
//! with the finite part: a branch that asserts one checks it with the cube's own theory
//! literals and the others asserted on that branch (`pre::sat`), as in DPLL(T)
//! (distrib_channels).

use crate::formula::{Lit, Term};
use crate::{Atom, ProcRef, Sort, System};
use rustc_hash::FxHashMap;

/// A literal `var = val` (`eq`) or `var <> val`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FLit {
    var: usize,
    val: u32,
    eq: bool,
}

/// A clause literal: a finite one, or theory literal `.0` of the query's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CLit {
    F(FLit),
    T(usize),
}

/// The query's theory part: the cube's own theory literals and the table of clause
/// literals.
struct Theory<'a> {
    sys: &'a System,
    base: Vec<Lit>,
    table: Vec<Lit>,
    /// Solver calls left: the search's steps are cheap, a theory check is not (ordered
    /// process cells make most literals theory literals).
    checks: std::cell::Cell<u32>,
}

impl Theory<'_> {
    /// Solver calls a query may make before it gives up (to the general solver).
    const CHECKS: u32 = 2_000;

    fn consistent(&self, asserted: &[usize]) -> bool {
        self.checks.set(self.checks.get().saturating_sub(1));
        let mut lits = self.base.clone();
        lits.extend(asserted.iter().map(|&i| self.table[i].clone()));
        crate::pre::sat(self.sys, self.sys.procs, &lits)
    }
}

fn split(l: &Lit) -> Option<(&Atom, &Term, bool)> {
    let (a, b, eq) = match l {
        Lit::Eq(a, b) => (a, b, true),
        Lit::Ne(a, b) => (a, b, false),
        Lit::Arith(..) => return None,
    };
    match (a, b) {
        (Term::Atom(x), v @ (Term::Val(_) | Term::Proc(_)))
        | (v @ (Term::Val(_) | Term::Proc(_)), Term::Atom(x)) => Some((x, v, eq)),
        _ => None,
    }
}

/// Whether `base` implies one of `cubes`; `None` when a theory literal shares a cell with
/// the finite part, a sort has more than 64 values, or the search ran out of `budget`
/// steps: then the caller asks the general solver.
pub fn entails_any<L: std::borrow::Borrow<Lit>>(
    sys: &System,
    base: &[Lit],
    cubes: &[Vec<L>],
    budget: u64,
) -> Option<bool> {
    // Process cells that order literals compare (`Turn < #1`): their other literals are
    // theory literals too, decided with those by the solver.
    let mut ordered: Vec<&Atom> = Vec::new();
    for l in base
        .iter()
        .chain(cubes.iter().flatten().map(|l| l.borrow()))
    {
        if let Lit::Arith(lin, _) = l {
            for (a, _) in &lin.terms {
                if sys.sort_of(a) == Sort::Proc && !ordered.contains(&a) {
                    ordered.push(a);
                }
            }
        }
    }
    let finite = |l: &Lit| {
        split(l).is_some_and(|(a, _, _)| match sys.sort_of(a) {
            Sort::Enum(_) => true,
            Sort::Proc => !ordered.contains(&a),
            _ => false,
        })
    };
    let mut atoms: FxHashMap<&Atom, usize> = FxHashMap::default();
    let mut sorts: Vec<Sort> = Vec::new();
    let mut procs: Vec<ProcRef> = Vec::new();
    let mut theory_atoms: Vec<Atom> = Vec::new();
    for l in base
        .iter()
        .chain(cubes.iter().flatten().map(|l| l.borrow()))
    {
        if !finite(l) {
            l.atoms(&mut theory_atoms);
            continue;
        }
        let (a, v, _) = split(l)?;
        if !atoms.contains_key(a) {
            atoms.insert(a, sorts.len());
            sorts.push(sys.sort_of(a));
        }
        if let Term::Proc(p) = v {
            if !procs.contains(p) {
                procs.push(*p);
            }
        }
    }
    if theory_atoms.iter().any(|a| atoms.contains_key(a)) {
        return None;
    }
    // Values of process cells: the processes mentioned, and (without `number_procs`)
    // one more that stands for every other.
    let proc_vals = match sys.procs {
        Some(n) => {
            procs = (0..n).map(ProcRef::Const).collect();
            n as usize
        }
        None => procs.len() + 1,
    };
    let mut dom: Vec<u64> = Vec::with_capacity(sorts.len());
    for s in &sorts {
        let k = match s {
            Sort::Enum(t) => sys.types[*t as usize].1.len(),
            _ => proc_vals,
        };
        if k == 0 || k > 64 {
            return None;
        }
        dom.push(if k == 64 { u64::MAX } else { (1u64 << k) - 1 });
    }
    let flit = |l: &Lit| -> Option<FLit> {
        let (a, v, eq) = split(l)?;
        let val = match v {
            Term::Val(x) => *x,
            Term::Proc(p) => procs.iter().position(|q| q == p)? as u32,
            Term::Atom(_) => return None,
        };
        Some(FLit {
            var: atoms[a],
            val,
            eq,
        })
    };
    let mut th = Theory {
        sys,
        base: Vec::new(),
        table: Vec::new(),
        checks: std::cell::Cell::new(Theory::CHECKS),
    };
    for l in base {
        if !finite(l) {
            th.base.push(l.clone());
            continue;
        }
        let f = flit(l)?;
        if f.eq {
            dom[f.var] &= 1 << f.val;
        } else {
            dom[f.var] &= !(1 << f.val);
        }
        if dom[f.var] == 0 {
            // The cube itself is unsatisfiable.
            return Some(true);
        }
    }
    // Theory literals of the candidates, classified once against the cube's: implied
    // (true), refuted (false) or open (an index into the table of negations).
    let mut base_atoms: Vec<Atom> = Vec::new();
    for l in &th.base {
        l.atoms(&mut base_atoms);
    }
    let mut known: FxHashMap<&Lit, Option<bool>> = FxHashMap::default();
    let mut index: FxHashMap<&Lit, usize> = FxHashMap::default();
    let mut clauses: Vec<Vec<CLit>> = Vec::new();
    'cubes: for c in cubes {
        let mut clause = Vec::new();
        for l in c.iter().map(|l| l.borrow()) {
            if finite(l) {
                let f = flit(l)?;
                match value(&dom, f) {
                    Some(true) => {}
                    Some(false) => continue 'cubes,
                    None => clause.push(CLit::F(FLit { eq: !f.eq, ..f })),
                }
                continue;
            }
            let class = *known.entry(l).or_insert_with(|| {
                // One of the cube's own (most are): implied without asking the solver.
                if th.base.contains(l) {
                    return Some(true);
                }
                // Over cells the cube's theory literals do not mention it is neither
                // implied nor refuted unless it is so alone, which the search's own
                // consistency checks find: open is always exact, only slower.
                if let Lit::Arith(lin, _) = l {
                    if lin.terms.iter().all(|(a, _)| !base_atoms.contains(a)) {
                        return None;
                    }
                }
                let mut q = th.base.clone();
                q.push(l.negate());
                if !crate::pre::sat(sys, sys.procs, &q) {
                    return Some(true);
                }
                q.pop();
                q.push(l.clone());
                if !crate::pre::sat(sys, sys.procs, &q) {
                    return Some(false);
                }
                None
            });
            match class {
                Some(true) => {}
                Some(false) => continue 'cubes,
                None => {
                    let next = th.table.len();
                    let i = *index.entry(l).or_insert(next);
                    if i == next {
                        th.table.push(l.negate());
                    }
                    clause.push(CLit::T(i));
                }
            }
        }
        if clause.is_empty() {
            return Some(true);
        }
        clauses.push(clause);
    }
    let mut steps = budget;
    let mut asserted = Vec::new();
    search(&th, &mut dom, &mut asserted, &clauses, &mut steps).map(|model| !model)
}

fn cvalue(dom: &[u64], asserted: &[usize], l: CLit) -> Option<bool> {
    match l {
        CLit::F(f) => value(dom, f),
        CLit::T(i) => asserted.contains(&i).then_some(true),
    }
}

/// Makes `l` true; false on a conflict.
fn assert(th: &Theory, dom: &mut [u64], asserted: &mut Vec<usize>, l: CLit) -> bool {
    match l {
        CLit::F(f) => {
            if f.eq {
                dom[f.var] &= 1 << f.val;
            } else {
                dom[f.var] &= !(1 << f.val);
            }
            dom[f.var] != 0
        }
        CLit::T(i) => {
            asserted.push(i);
            th.consistent(asserted)
        }
    }
}

fn value(dom: &[u64], f: FLit) -> Option<bool> {
    let d = dom[f.var];
    let bit = 1u64 << f.val;
    let holds = if d & bit == 0 {
        Some(false)
    } else if d == bit {
        Some(true)
    } else {
        None
    };
    holds.map(|h| h == f.eq)
}

/// Whether some assignment within `dom`, with the theory literals `asserted`, satisfies
/// every clause; `None` out of steps.
fn search(
    th: &Theory,
    dom: &mut Vec<u64>,
    asserted: &mut Vec<usize>,
    clauses: &[Vec<CLit>],
    steps: &mut u64,
) -> Option<bool> {
    if *steps == 0 || th.checks.get() == 0 {
        return None;
    }
    *steps -= 1;
    // Unit propagation to a fixpoint.
    loop {
        let mut changed = false;
        for c in clauses {
            let mut open = None;
            let mut n_open = 0;
            let mut sat = false;
            for &l in c {
                match cvalue(dom, asserted, l) {
                    Some(true) => {
                        sat = true;
                        break;
                    }
                    Some(false) => {}
                    None => {
                        n_open += 1;
                        open = Some(l);
                    }
                }
            }
            if sat {
                continue;
            }
            match (n_open, open) {
                (0, _) => return Some(false),
                (1, Some(l)) => {
                    if !assert(th, dom, asserted, l) {
                        return Some(false);
                    }
                    changed = true;
                }
                _ => {}
            }
        }
        if !changed {
            break;
        }
    }
    // Branch on the literals of the first clause not yet satisfied: one of them holds.
    let Some(c) = clauses
        .iter()
        .find(|c| !c.iter().any(|&l| cvalue(dom, asserted, l) == Some(true)))
    else {
        return Some(true);
    };
    for &l in c {
        if cvalue(dom, asserted, l).is_some() {
            continue;
        }
        let saved = (dom.clone(), asserted.len());
        let r = if assert(th, dom, asserted, l) {
            search(th, dom, asserted, clauses, steps)
        } else {
            Some(false)
        };
        *dom = saved.0;
        asserted.truncate(saved.1);
        match r {
            Some(true) => return Some(true),
            Some(false) => {}
            None => return None,
        }
    }
    Some(false)
}
