//! `concrete::Matcher` (BRAB's oracle: literals resolved to cell offsets once) agrees with
//! evaluating the literals through `Instance::lit` for every placement, on the guards and
//! `unsafe` formulas of corpus files over states of their small instances.

mod common;

use fencer_param::concrete::{placements, reachable, Instance, Matcher};

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
