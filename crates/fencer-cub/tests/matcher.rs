//! `concrete::Matcher` (BRAB's oracle: literals resolved to cell offsets once) agrees with
//! evaluating the literals through `Instance::lit` for every placement, on the guards and
//! `unsafe` formulas of corpus files over states of their small instances; and its search
//! through the bit-set index finds the first state that satisfies them.

mod common;

use fencer_param::concrete::{placements, reachable, Instance, Matcher, StateIndex};

#[test]
fn matcher_agrees_with_lit() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut compared = 0;
    for row in common::rows(&dir) {
        if !row.brab {
            continue;
        }
        let Ok(sys) = common::load(&dir, &row) else {
            continue;
        };
        let inst = Instance::new(&sys, 2);
        let states = reachable(&sys, 2, Some(3), 300);
        let index = StateIndex::new(inst.width, &states);
        let mut formulas: Vec<(u8, &fencer_param::Formula)> = sys
            .transitions
            .iter()
            .map(|t| (t.params, &t.guard))
            .collect();
        formulas.extend(sys.unsafe_.iter().map(|u| (u.vars, &u.formula)));
        for (k, f) in formulas {
            for lits in f.dnf(&sys) {
                for k in k..=k + 1 {
                    let m = Matcher::new(&inst, k, &lits);
                    let first = states.iter().position(|s| m.matches(s));
                    assert_eq!(m.first(&index, &states), first, "{}: {lits:?}", row.file);
                    // Every other literal negated: most states fail some of them.
                    let neg: Vec<_> = lits
                        .iter()
                        .enumerate()
                        .map(|(i, l)| if i % 2 == 1 { l.negate() } else { l.clone() })
                        .collect();
                    let mn = Matcher::new(&inst, k, &neg);
                    let first = states.iter().position(|s| mn.matches(s));
                    assert_eq!(mn.first(&index, &states), first, "{}: {neg:?}", row.file);
                    for s in &states {
                        let direct = placements(k, 2)
                            .iter()
                            .any(|env| lits.iter().all(|l| inst.lit(s, env, l)));
                        assert_eq!(m.matches(s), direct, "{}: {lits:?} on {s:?}", row.file);
                        compared += 1;
                    }
                }
            }
        }
    }
    eprintln!("{compared} comparisons");
    assert!(compared > 1000, "too few comparisons: {compared}");
}
