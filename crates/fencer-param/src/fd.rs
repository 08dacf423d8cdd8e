//! Subsumption queries over finite domains: "does the cube imply one of these cubes?" when
//! every literal compares one cell with a constant (`Cache[#1] = Shared`, `Curptr <> #2`),
//! which is most of Cubicle's examples. Each cell is a variable over its constructors (or
//! over the processes the query mentions plus one other); each candidate cube, negated, is
//! a clause; a DPLL search with unit propagation looks for an assignment that satisfies
//! the cube and no candidate. The general solver (`fencer_smt::entails_any`) searches
//! without propagation and gives up after a budget, which left cubes unsubsumed that this
//! proves covered (germanish4).

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

/// Whether `base` implies one of `cubes`; `None` when a literal is outside the fragment
/// (arithmetic, two cells compared, a sort without constants, more than 64 values) or the
/// search ran out of `budget` steps: then the caller asks the general solver.
pub fn entails_any(sys: &System, base: &[Lit], cubes: &[Vec<Lit>], budget: u64) -> Option<bool> {
    let mut atoms: FxHashMap<&Atom, usize> = FxHashMap::default();
    let mut sorts: Vec<Sort> = Vec::new();
    let mut procs: Vec<ProcRef> = Vec::new();
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
    for l in base.iter().chain(cubes.iter().flatten()) {
        let (a, v, _) = split(l)?;
        if !atoms.contains_key(a) {
            let s = sys.sort_of(a);
            if !matches!(s, Sort::Enum(_) | Sort::Proc) {
                return None;
            }
            atoms.insert(a, sorts.len());
            sorts.push(s);
        }
        if let Term::Proc(p) = v {
            if !procs.contains(p) {
                procs.push(*p);
            }
        }
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
    for l in base {
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
    let mut clauses: Vec<Vec<FLit>> = Vec::new();
    'cubes: for c in cubes {
        let mut clause = Vec::new();
        for l in c {
            let f = flit(l)?;
            match value(&dom, f) {
                Some(true) => {}
                Some(false) => continue 'cubes,
                None => clause.push(FLit { eq: !f.eq, ..f }),
            }
        }
        if clause.is_empty() {
            return Some(true);
        }
        clauses.push(clause);
    }
    let mut steps = budget;
    match search(&mut dom, &clauses, &mut steps) {
        Some(model) => Some(!model),
        None => None,
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

/// Whether some assignment within `dom` satisfies every clause; `None` out of steps.
fn search(dom: &mut Vec<u64>, clauses: &[Vec<FLit>], steps: &mut u64) -> Option<bool> {
    if *steps == 0 {
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
            for &f in c {
                match value(dom, f) {
                    Some(true) => {
                        sat = true;
                        break;
                    }
                    Some(false) => {}
                    None => {
                        n_open += 1;
                        open = Some(f);
                    }
                }
            }
            if sat {
                continue;
            }
            match (n_open, open) {
                (0, _) => return Some(false),
                (1, Some(f)) => {
                    if f.eq {
                        dom[f.var] &= 1 << f.val;
                    } else {
                        dom[f.var] &= !(1 << f.val);
                    }
                    if dom[f.var] == 0 {
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
    // Branch on a variable of the first clause not yet satisfied.
    let pick = clauses.iter().find_map(|c| {
        if c.iter().any(|&f| value(dom, f) == Some(true)) {
            return None;
        }
        c.iter().find(|&&f| value(dom, f).is_none()).map(|f| f.var)
    });
    let Some(var) = pick else {
        return Some(true);
    };
    let d = dom[var];
    let mut bits = d;
    while bits != 0 {
        let b = bits & bits.wrapping_neg();
        bits &= !b;
        let saved = dom.clone();
        dom[var] = b;
        let r = search(dom, clauses, steps);
        *dom = saved;
        match r {
            Some(true) => return Some(true),
            Some(false) => {}
            None => return None,
        }
    }
    Some(false)
}
