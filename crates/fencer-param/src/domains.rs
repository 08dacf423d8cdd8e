//! Cubicle's subtyping: the constructors each enumeration variable or array can ever hold
//! (its initial values and the values transitions write into it), a static
//! over-approximation of the reachable states. The search adds `x <> C` for every other
//! constructor `C` to its solver queries: a cube is then covered by the cubes of the
//! values `x` can hold (`Curcmd <> Empty` by `Curcmd = Reqs` and `Curcmd = Reqe` when no
//! transition writes another command), and a cube no state in the domains satisfies is
//! dropped.
//!
//! Why that is sound: the set D of states whose cells hold values of their domains
//! contains `init` and is closed under every transition. A backward search that shows
//! every pre-image, intersected with D, covered by the visited cubes proves that no state
//! of D reaching an unsafe one meets `init`; every reachable state is in D.

use crate::formula::{Lit, Term};
use crate::pre::sat;
use crate::search::instantiate_all;
use crate::{Atom, ProcRef, Rhs, Sort, System};

/// For each global: the constructors it may hold, or `None` for every value (not an
/// enumeration, weak memory, or nothing is known).
#[derive(Clone, Debug, Default)]
pub struct Domains {
    allowed: Vec<Option<Vec<bool>>>,
}

impl Domains {
    pub fn new(sys: &System) -> Domains {
        let n = sys.globals.len();
        let mut allowed: Vec<Option<Vec<bool>>> = vec![None; n];
        if sys.tso {
            // Weak memory holds values of writes not yet visible: left out.
            return Domains { allowed };
        }
        // The instances `init` is instantiated over: the fixed one, or those of one and of
        // two processes. A larger instance allows each cell no more values than the one of
        // two processes (its `init` has more conjuncts), but one process may allow more
        // (`init (z z1) { z = z1 || A[z] = C }`).
        let instances: Vec<Vec<ProcRef>> = match sys.procs {
            Some(k) => vec![(0..k).map(ProcRef::Const).collect()],
            None => vec![
                vec![ProcRef::Var(0)],
                vec![ProcRef::Var(0), ProcRef::Var(1)],
            ],
        };
        let inits: Vec<(Vec<ProcRef>, Vec<Vec<Lit>>)> = instances
            .into_iter()
            .map(|procs| {
                let f = instantiate_all(&sys.init, &procs).dnf(sys);
                (procs, f)
            })
            .collect();
        let mut all = vec![false; n];
        for (g, glob) in sys.globals.iter().enumerate() {
            let Sort::Enum(t) = glob.sort else {
                continue;
            };
            let vals = sys.types[t as usize].1.len();
            if glob.arity > 2 {
                all[g] = true;
                continue;
            }
            let mut dom = vec![false; vals];
            for (procs, init) in &inits {
                // Every cell of the array in that instance.
                let mut cells: Vec<Vec<ProcRef>> = Vec::new();
                match glob.arity {
                    0 => cells.push(Vec::new()),
                    1 => cells.extend(procs.iter().map(|&p| vec![p])),
                    _ => {
                        for &p in procs {
                            for &q in procs {
                                cells.push(vec![p, q]);
                            }
                        }
                    }
                }
                for (v, d) in dom.iter_mut().enumerate() {
                    *d = *d
                        || cells.iter().any(|idx| {
                            let lit = Lit::Eq(
                                Term::Atom(Atom::Cell(g as u32, idx.clone())),
                                Term::Val(v as u32),
                            );
                            init.iter().any(|conj| {
                                let mut c = conj.clone();
                                c.push(lit.clone());
                                sat(sys, sys.procs, &c)
                            })
                        });
                }
            }
            allowed[g] = Some(dom);
        }
        // Values written, and copies from other cells, to a fixpoint.
        let mut copies: Vec<(usize, usize)> = Vec::new();
        for t in &sys.transitions {
            for u in &t.updates {
                let g = u.global as usize;
                if allowed[g].is_none() {
                    continue;
                }
                for r in u
                    .cases
                    .iter()
                    .map(|c| &c.1)
                    .chain(std::iter::once(&u.default))
                {
                    match r {
                        Rhs::Term(Term::Val(v)) => {
                            if let Some(d) = allowed[g].as_mut() {
                                d[*v as usize] = true;
                            }
                        }
                        Rhs::Term(Term::Atom(Atom::Cell(h, _)))
                            if allowed[*h as usize].is_some() =>
                        {
                            copies.push((*h as usize, g))
                        }
                        _ => all[g] = true,
                    }
                }
            }
        }
        loop {
            let mut changed = false;
            for &(h, g) in &copies {
                if all[h] && !all[g] {
                    all[g] = true;
                    changed = true;
                }
                let src = allowed[h].clone().unwrap_or_default();
                if let Some(d) = allowed[g].as_mut() {
                    for (v, &b) in src.iter().enumerate() {
                        if b && v < d.len() && !d[v] {
                            d[v] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for g in 0..n {
            if all[g] || allowed[g].as_ref().is_some_and(|d| d.iter().all(|&b| b)) {
                allowed[g] = None;
            }
        }
        Domains { allowed }
    }

    pub fn is_trivial(&self) -> bool {
        self.allowed.iter().all(|d| d.is_none())
    }

    /// `x <> C` for each cell `x` the literals mention and each constructor `C` it never
    /// holds.
    pub fn constraints<'l>(&self, lits: impl IntoIterator<Item = &'l Lit>) -> Vec<Lit> {
        if self.is_trivial() {
            return Vec::new();
        }
        // By reference and through a set: subsumption passes the literals of hundreds of
        // renamed cubes, mostly the same cells.
        let mut seen: rustc_hash::FxHashSet<&Atom> = Default::default();
        let mut cell = |a: &'l Atom| {
            if let Atom::Cell(g, _) = a {
                if self.allowed[*g as usize].is_some() {
                    seen.insert(a);
                }
            }
        };
        for l in lits {
            match l {
                Lit::Eq(a, b) | Lit::Ne(a, b) => {
                    for t in [a, b] {
                        if let Term::Atom(x) = t {
                            cell(x);
                        }
                    }
                }
                Lit::Arith(lin, _) => lin.terms.iter().for_each(|t| cell(&t.0)),
            }
        }
        let mut atoms: Vec<&Atom> = seen.into_iter().collect();
        atoms.sort();
        let mut out = Vec::new();
        for a in atoms {
            if let Atom::Cell(g, _) = a {
                if let Some(d) = &self.allowed[*g as usize] {
                    for (v, &ok) in d.iter().enumerate() {
                        if !ok {
                            out.push(Lit::Ne(Term::Atom(a.clone()), Term::Val(v as u32)));
                        }
                    }
                }
            }
        }
        out
    }

    /// The constructors of global `g` it may hold (`None`: any).
    pub fn allowed(&self, g: u32) -> Option<&[bool]> {
        self.allowed[g as usize].as_deref()
    }
}
