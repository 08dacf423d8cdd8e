//! Weakest liberal preconditions of micro-operations over formulas in conjunctive normal
//! form: the refinement of the abstract reachability tree.
//!
//! Why weakest preconditions and not interpolants: the conjunction checker gives no
//! proofs to extract interpolants from, and along one path the weakest precondition of
//! `false` is itself an interpolant sequence (each is implied by the path's prefix because
//! the path is infeasible, and each is a valid Hoare precondition of the next). It is the
//! weakest one, which keeps labels general; in CNF, assignments are substitutions and an
//! `assume` adds one literal to every clause, so labels stay clause sets. The two places
//! where the exact precondition leaves the fragment are approximated by something
//! *stronger* (an under-approximation is still a valid precondition): an input (a
//! universal quantifier, eliminated per clause by Fourier-Motzkin projection of its
//! negation, which over-approximates the existential and so under-approximates the
//! universal), and coefficients beyond 64 bits (the clause becomes false). Refinement then
//! checks that the precondition holds in the initial state before using any of it.

use crate::exec::{lin_scale, width_range, Bk, Micro};
use fencer_smt::cnf::Clause;
use fencer_smt::{Lin, Lit, Rel};

fn lin_sub_var(l: &Lin, x: u32, by: &Lin) -> Option<Lin> {
    let Some(&(_, c)) = l.terms.iter().find(|t| t.0 == x) else {
        return Some(l.clone());
    };
    let mut rest = l.clone();
    rest.terms.retain(|t| t.0 != x);
    let mut terms = rest.terms.clone();
    for &(v, d) in &by.terms {
        let d = d.checked_mul(c)?;
        match terms.iter_mut().find(|t| t.0 == v) {
            Some(t) => t.1 = t.1.checked_add(d)?,
            None => terms.push((v, d)),
        }
    }
    terms.retain(|t| t.1 != 0);
    terms.sort();
    Some(Lin {
        terms,
        k: rest.k.checked_add(by.k.checked_mul(c)?)?,
    })
}

fn mentions(l: &Lit, x: u32) -> bool {
    match l {
        Lit::Arith(lin, _) => lin.terms.iter().any(|t| t.0 == x),
        _ => false,
    }
}

/// A literal's truth value when it has no variables.
fn ground(l: &Lit) -> Option<bool> {
    match l {
        Lit::Arith(lin, rel) if lin.terms.is_empty() => Some(match rel {
            Rel::Eq => lin.k == 0,
            Rel::Ne => lin.k != 0,
            Rel::Le => lin.k <= 0,
            Rel::Lt => lin.k < 0,
        }),
        _ => None,
    }
}

/// Canonical form: literals over integers with `<` as `<=` (`l < 0` is `l + 1 <= 0`), and
/// divided by the gcd of their coefficients, so that equal constraints are equal literals.
pub fn norm_lit(l: Lit) -> Lit {
    match l {
        Lit::Arith(mut lin, Rel::Lt) => match lin.k.checked_add(1) {
            Some(k) => {
                lin.k = k;
                norm_lit(Lit::Arith(lin, Rel::Le))
            }
            None => Lit::Arith(lin, Rel::Lt),
        },
        Lit::Arith(lin, rel) if !lin.terms.is_empty() => {
            let g = lin
                .terms
                .iter()
                .fold(0i64, |g, t| gcd(g, t.1.unsigned_abs() as i64));
            if g <= 1 {
                return Lit::Arith(lin, rel);
            }
            let terms: Vec<(u32, i64)> = lin.terms.iter().map(|&(v, c)| (v, c / g)).collect();
            match rel {
                // g*s + k <= 0  <=>  s <= floor(-k/g)  <=>  s + ceil(k/g) <= 0
                Rel::Le => Lit::Arith(
                    Lin {
                        terms,
                        k: -((-lin.k).div_euclid(g)),
                    },
                    Rel::Le,
                ),
                Rel::Eq | Rel::Ne if lin.k % g == 0 => Lit::Arith(
                    Lin {
                        terms,
                        k: lin.k / g,
                    },
                    rel,
                ),
                // g*s + k = 0 has no integer solution when g does not divide k.
                Rel::Eq => Lit::Arith(Lin::constant(1), Rel::Eq),
                Rel::Ne => Lit::Arith(Lin::constant(0), Rel::Eq),
                Rel::Lt => unreachable!("rewritten above"),
            }
        }
        other => other,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Simplifies a clause: `None` when it is true.
pub fn norm_clause(c: Clause) -> Option<Clause> {
    let mut out: Clause = Vec::new();
    for l in c {
        let l = norm_lit(l);
        match ground(&l) {
            Some(true) => return None,
            Some(false) => continue,
            None => {}
        }
        if out.contains(&l) {
            continue;
        }
        if neg_checked(&l).is_some_and(|n| out.contains(&n)) {
            return None;
        }
        out.push(l);
    }
    out.sort();
    Some(out)
}

/// Adds clauses to a set, dropping true ones and duplicates.
pub fn push_clause(set: &mut Vec<Clause>, c: Clause) {
    if let Some(c) = norm_clause(c) {
        if !set.contains(&c) {
            set.push(c);
        }
    }
}

fn subst_clause(c: &Clause, x: u32, by: &Lin) -> Clause {
    let mut out = Vec::new();
    for l in c {
        match l {
            // A coefficient too large: the literal is taken as false, which makes the
            // clause stronger (still a valid precondition).
            Lit::Arith(lin, rel) => {
                if let Some(n) = lin_sub_var(lin, x, by) {
                    out.push(Lit::Arith(n, *rel))
                }
            }
            other => out.push(other.clone()),
        }
    }
    out
}

/// `wlp(m, q)`.
pub fn wlp(m: &Micro, q: &[Clause]) -> Vec<Clause> {
    let mut out = Vec::new();
    match m {
        Micro::Set(x, Bk::C(c)) => {
            for cl in q {
                push_clause(&mut out, subst_clause(cl, *x, &Lin::constant(*c)));
            }
        }
        Micro::Set(x, Bk::L(l)) => {
            for cl in q {
                push_clause(&mut out, subst_clause(cl, *x, l));
            }
        }
        Micro::Set(x, Bk::B(b)) => {
            for cl in q {
                if !cl.iter().any(|l| mentions(l, *x)) {
                    push_clause(&mut out, cl.clone());
                    continue;
                }
                let mut one = subst_clause(cl, *x, &Lin::constant(1));
                one.extend(neg_checked(b));
                push_clause(&mut out, one);
                let mut zero = subst_clause(cl, *x, &Lin::constant(0));
                zero.push(b.clone());
                push_clause(&mut out, zero);
            }
        }
        Micro::Assume(l) => {
            let n = neg_checked(l);
            for cl in q {
                let mut c = cl.clone();
                // Without its negation the clause is only stronger.
                c.extend(n.clone());
                push_clause(&mut out, c);
            }
        }
        Micro::Require(ls) => {
            for cl in q {
                push_clause(&mut out, cl.clone());
            }
            for l in ls {
                push_clause(&mut out, vec![l.clone()]);
            }
        }
        Micro::Havoc(x, bits) => {
            for cl in q {
                if !cl.iter().any(|l| mentions(l, *x)) {
                    push_clause(&mut out, cl.clone());
                    continue;
                }
                // forall x in range. (A or B(x))  <=  A or not (exists x in range. not B(x))
                let (with, rest): (Vec<Lit>, Vec<Lit>) =
                    cl.iter().cloned().partition(|l| mentions(l, *x));
                // A literal whose negation does not fit in 64 bits is left out of the
                // existential (an over-approximation of it).
                let mut conj: Vec<Lit> = with.iter().filter_map(neg_checked).collect();
                if let Some((lo, hi)) = width_range(*bits) {
                    conj.push(Lit::Arith(
                        Lin {
                            terms: vec![(*x, -1)],
                            k: lo,
                        },
                        Rel::Le,
                    ));
                    conj.push(Lit::Arith(
                        Lin {
                            terms: vec![(*x, 1)],
                            k: -hi,
                        },
                        Rel::Le,
                    ));
                }
                // A disequality on x is split (x < t or x > t), so that the existential is
                // a disjunction of projections and the clause becomes one clause per case.
                for case in split_ne(conj, *x) {
                    match project(&case, *x) {
                        // The existential is false: the universal holds in this case.
                        None => {}
                        Some(r) => {
                            let mut c = rest.clone();
                            c.extend(r.iter().filter_map(neg_checked));
                            push_clause(&mut out, c);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The negation of a literal, if its numbers fit.
pub fn neg_checked(l: &Lit) -> Option<Lit> {
    match l {
        Lit::Arith(lin, _) if lin.k == i64::MIN || lin.terms.iter().any(|t| t.1 == i64::MIN) => {
            None
        }
        other => Some(norm_lit(other.negate())),
    }
}

/// Cases of a conjunction with each disequality on `x` split in two (at most 16 cases;
/// beyond that, disequalities are dropped, which over-approximates).
fn split_ne(conj: Vec<Lit>, x: u32) -> Vec<Vec<Lit>> {
    let mut cases = vec![Vec::new()];
    for l in conj {
        match &l {
            Lit::Arith(lin, Rel::Ne) if mentions(&l, x) && cases.len() < 16 => {
                let Some(m) = lin_scale(lin, -1) else {
                    continue;
                };
                let mut next = Vec::new();
                for c in &cases {
                    let mut a = c.clone();
                    a.push(Lit::Arith(lin.clone(), Rel::Lt));
                    let mut b = c.clone();
                    b.push(Lit::Arith(m.clone(), Rel::Lt));
                    next.push(a);
                    next.push(b);
                }
                cases = next;
            }
            _ => {
                for c in &mut cases {
                    c.push(l.clone());
                }
            }
        }
    }
    cases
}

/// Over-approximates `exists x. conj` by a conjunction without `x`; `None` when it is
/// certainly false.
fn project(conj: &[Lit], x: u32) -> Option<Vec<Lit>> {
    let coef = |l: &Lin| l.terms.iter().find(|t| t.0 == x).map(|t| t.1);
    // An equality with a unit coefficient defines x: substitute (exact over integers).
    if let Some((i, def)) = conj.iter().enumerate().find_map(|(i, l)| match l {
        Lit::Arith(lin, Rel::Eq) if matches!(coef(lin), Some(1 | -1)) => {
            let c = coef(lin).expect("checked");
            // c*x + r = 0  =>  x = -r/c = -c*r (c = +-1)
            let mut r = lin.clone();
            r.terms.retain(|t| t.0 != x);
            lin_scale(&r, -c).map(|d| (i, d))
        }
        _ => None,
    }) {
        let mut out = Vec::new();
        for (j, l) in conj.iter().enumerate() {
            if j == i {
                continue;
            }
            // A literal whose substitution overflows is left out: the existential is then
            // over-approximated, the safe side.
            if let Lit::Arith(lin, rel) = l {
                if let Some(n) = lin_sub_var(lin, x, &def) {
                    let n = norm_lit(Lit::Arith(n, *rel));
                    match ground(&n) {
                        Some(false) => return None,
                        Some(true) => {}
                        None => out.push(n),
                    }
                }
            }
        }
        return Some(out);
    }
    let mut out = Vec::new();
    let mut lower: Vec<(i64, Lin)> = Vec::new(); // c*x + t <= 0, c < 0
    let mut upper: Vec<(i64, Lin)> = Vec::new(); // c*x + t <= 0, c > 0
    for l in conj {
        let Lit::Arith(lin, rel) = l else { continue };
        let Some(c) = coef(lin) else {
            let n = norm_lit(l.clone());
            match ground(&n) {
                Some(false) => return None,
                Some(true) => {}
                None => out.push(n),
            }
            continue;
        };
        let mut rows = Vec::new();
        match rel {
            Rel::Le => rows.push(lin.clone()),
            Rel::Lt => {
                if let Some(k) = lin.k.checked_add(1) {
                    rows.push(Lin {
                        terms: lin.terms.clone(),
                        k,
                    })
                }
            }
            Rel::Eq => {
                rows.push(lin.clone());
                if let Some(n) = lin_scale(lin, -1) {
                    rows.push(n);
                }
            }
            // Dropping a disequality over-approximates the existential.
            Rel::Ne => {}
        }
        let _ = c;
        for r in rows {
            let c = coef(&r).expect("mentions x");
            let mut t = r.clone();
            t.terms.retain(|p| p.0 != x);
            if c > 0 {
                upper.push((c, t));
            } else {
                lower.push((c, t));
            }
        }
    }
    for (cu, tu) in &upper {
        for (cl, tl) in &lower {
            // cu*x + tu <= 0, cl*x + tl <= 0 (cl < 0): (-cl)*tu + cu*tl <= 0
            let combined = lin_scale(tu, -cl).and_then(|a| {
                let b = lin_scale(tl, *cu)?;
                let mut s = a;
                for &(v, d) in &b.terms {
                    match s.terms.iter_mut().find(|p| p.0 == v) {
                        Some(p) => p.1 = p.1.checked_add(d)?,
                        None => s.terms.push((v, d)),
                    }
                }
                s.terms.retain(|p| p.1 != 0);
                s.terms.sort();
                s.k = s.k.checked_add(b.k)?;
                Some(s)
            });
            if let Some(s) = combined {
                let n = norm_lit(Lit::Arith(s, Rel::Le));
                match ground(&n) {
                    Some(false) => return None,
                    Some(true) => {}
                    None => out.push(n),
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(terms: Vec<(u32, i64)>, k: i64) -> Lit {
        Lit::Arith(Lin { terms, k }, Rel::Le)
    }

    #[test]
    fn havoc_with_a_range_keeps_what_holds_for_every_value() {
        // forall x in [0,1] (8-bit: [-128,127] here). x - y <= 0  <=>  127 <= y
        let q = vec![vec![le(vec![(0, 1), (1, -1)], 0)]];
        let p = wlp(&Micro::Havoc(0, 8), &q);
        assert_eq!(p, vec![vec![le(vec![(1, -1)], 127)]]);
        // A clause true for every value disappears: forall x. x <= 200 (8 bits).
        let q = vec![vec![le(vec![(0, 1)], -200)]];
        assert!(wlp(&Micro::Havoc(0, 8), &q).is_empty());
    }

    #[test]
    fn assignment_of_a_truth_value_splits_clauses() {
        // wlp(y := (x <= 0), y != 0) = (x <= 0 -> 1 != 0) and (not x <= 0 -> 0 != 0)
        let q = vec![vec![Lit::Arith(Lin::var(1), Rel::Ne)]];
        let p = wlp(&Micro::Set(1, Bk::B(le(vec![(0, 1)], 0))), &q);
        assert_eq!(p, vec![vec![le(vec![(0, 1)], 0)]]);
    }
}
