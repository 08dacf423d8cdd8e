//! Boolean structure over the conjunction checker: satisfiability of a formula in
//! conjunctive normal form whose atoms are this crate's literals, by a small DPLL(T)
//! search (split on a clause not yet satisfied; on backtracking the literal tried is
//! negated into the trail, so later alternatives do not repeat its models), with the
//! conjunction checker ([`crate::check`]) as the theory solver at every decision.
//!
//! The symbolic engine's node labels are conjunctions of clauses and its cover checks are
//! implications between labels, which is where the disjunctions come from.
//!
//! Every answer errs on one side only: [`Answer::Unsat`] is exact (the conjunction checker
//! never calls a satisfiable conjunction unsatisfiable), while [`Answer::Sat`] may be
//! wrong on integer systems the checker cannot decide exactly, and a search that runs out
//! of its budget says [`Answer::Unknown`]. So "proved" ([`implies`] returning
//! `Some(true)`) can be trusted; anything else only means "not proved".

use crate::{check, Lit, Model, Sort, Var};

/// A disjunction of literals; the empty clause is false.
pub type Clause = Vec<Lit>;

#[derive(Clone, Debug)]
pub enum Answer {
    Sat(Model),
    Unsat,
    /// The search ran out of its budget.
    Unknown,
}

/// Whether `units` together with every clause of `clauses` is satisfiable. `budget` counts
/// theory checks; it is shared, so that one caller can bound a series of queries.
pub fn check_cnf(
    sort: &dyn Fn(Var) -> Sort,
    units: &[Lit],
    clauses: &[Clause],
    budget: &mut u64,
) -> Answer {
    let mut trail = units.to_vec();
    // Unit clauses are forced: they join the trail at once.
    let mut rest: Vec<&Clause> = Vec::new();
    for c in clauses {
        match c.len() {
            0 => return Answer::Unsat,
            1 => trail.push(c[0].clone()),
            _ => rest.push(c),
        }
    }
    rest.sort_by_key(|c| c.len());
    search(sort, &mut trail, &rest, budget)
}

fn search(
    sort: &dyn Fn(Var) -> Sort,
    trail: &mut Vec<Lit>,
    clauses: &[&Clause],
    budget: &mut u64,
) -> Answer {
    if *budget == 0 {
        return Answer::Unknown;
    }
    *budget -= 1;
    let Some(model) = check(sort, trail) else {
        return Answer::Unsat;
    };
    // The first clause the trail does not satisfy syntactically. A clause the theory
    // model happens to satisfy still needs a decision: the model is one of many.
    let open = clauses
        .iter()
        .position(|c| !c.iter().any(|l| trail.contains(l)));
    let Some(i) = open else {
        return Answer::Sat(model);
    };
    let clause = clauses[i];
    let mark = trail.len();
    let mut unknown = false;
    for l in clause {
        if trail.contains(&l.negate()) {
            continue;
        }
        trail.push(l.clone());
        let r = search(sort, trail, &clauses[i + 1..], budget);
        trail.pop();
        match r {
            Answer::Sat(m) => {
                trail.truncate(mark);
                return Answer::Sat(m);
            }
            Answer::Unknown => unknown = true,
            Answer::Unsat => {}
        }
        // Later literals of the clause need only cover models where this one is false.
        trail.push(l.negate());
        if check(sort, trail).is_none() {
            break;
        }
    }
    trail.truncate(mark);
    if unknown {
        Answer::Unknown
    } else {
        Answer::Unsat
    }
}

/// Whether the conjunction `a` (units and clauses) implies every clause of `b`:
/// `Some(true)` proved, `Some(false)` refuted (up to the checker's integer reasoning, see
/// the module comment), `None` out of budget.
pub fn implies(
    sort: &dyn Fn(Var) -> Sort,
    a_units: &[Lit],
    a_clauses: &[Clause],
    b: &[Clause],
    budget: &mut u64,
) -> Option<bool> {
    for c in b {
        if c.iter().any(|l| a_units.contains(l)) || a_clauses.iter().any(|ac| ac == c) {
            continue;
        }
        // a and not c: the clause's negated literals are units.
        let mut units = a_units.to_vec();
        units.extend(c.iter().map(Lit::negate));
        match check_cnf(sort, &units, a_clauses, budget) {
            Answer::Unsat => {}
            Answer::Sat(_) => return Some(false),
            Answer::Unknown => return None,
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Lin, Rel};

    fn int(_: Var) -> Sort {
        Sort::Int
    }
    /// `x + k rel 0`
    fn lit(x: Var, k: i64, rel: Rel) -> Lit {
        Lit::Arith(Lin::var(x).add_scaled(&Lin::constant(k), 1), rel)
    }

    #[test]
    fn disjunctions_need_every_branch_refuted() {
        let mut b = 1000;
        // x <= 0 or x >= 5 (x - 5 >= 0 is 5 - x <= 0), with x = 3: unsat.
        let ge5 = Lit::Arith(Lin::constant(5).add_scaled(&Lin::var(0), -1), Rel::Le);
        let c = vec![lit(0, 0, Rel::Le), ge5.clone()];
        let x3 = lit(0, -3, Rel::Eq);
        assert!(matches!(
            check_cnf(&int, &[x3], std::slice::from_ref(&c), &mut b),
            Answer::Unsat
        ));
        let x7 = lit(0, -7, Rel::Eq);
        match check_cnf(&int, &[x7], &[c], &mut b) {
            Answer::Sat(m) => assert_eq!(m.int(0), 7),
            a => panic!("{a:?}"),
        }
    }

    #[test]
    fn implication_between_clause_sets() {
        let mut b = 1000;
        // x = 1 implies (x <= 0 or x <= 2), and not (x <= 0).
        let x1 = lit(0, -1, Rel::Eq);
        let le0 = lit(0, 0, Rel::Le);
        let le2 = lit(0, -2, Rel::Le);
        assert_eq!(
            implies(
                &int,
                std::slice::from_ref(&x1),
                &[],
                &[vec![le0.clone(), le2]],
                &mut b
            ),
            Some(true)
        );
        assert_eq!(implies(&int, &[x1], &[], &[vec![le0]], &mut b), Some(false));
        // A budget of zero proves nothing.
        let mut zero = 0;
        assert_eq!(
            implies(
                &int,
                &[],
                &[],
                &[vec![lit(0, 0, Rel::Le), lit(0, 0, Rel::Lt)]],
                &mut zero
            ),
            None
        );
    }
}
