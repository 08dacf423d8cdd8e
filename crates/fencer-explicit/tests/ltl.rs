//! Accepting cycles in the product of a DVE model with its property process (the Büchi
//! automaton of a negated LTL formula, as DiVinE reads `.propK.dve` files): DIVINE's LTL
//! regression models (product states, transitions, accepting states, deadlocks and
//! verdicts) and BEEM's LTL verdicts (`instances.tsv`, instances up to `FENCER_DVE_MAX`
//! states, default 100000), from the shipped property processes and from the formulas
//! through fencer's own LTL-to-Büchi translation. Needs `../shared`.

mod common;

use fencer_explicit::{accepting_cycle, reach, Options, TransitionSystem};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

fn load(path: &Path) -> Option<common::Dve> {
    let src = std::fs::read_to_string(path).unwrap();
    let sys = fencer_dve::load(&path.display().to_string(), &src, &HashMap::new())
        .unwrap_or_else(|d| panic!("{}", d.render(&src)));
    sys.property.map(|_| common::product(sys))
}

#[test]
fn divine_ltl_models() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve/divine-tests");
    let Ok(tsv) = std::fs::read_to_string(dir.join("expected.tsv")) else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[1] != "LTL" {
            continue;
        }
        let Some(p) = load(&dir.join(c[0])) else {
            // The formula is `property ltl` text: fencer's own translation answers it
            // (DIVINE's automaton differs, so only the verdict is compared).
            let path = dir.join(c[0]);
            let src = std::fs::read_to_string(&path).unwrap();
            let sys = fencer_dve::load(c[0], &src, &HashMap::new()).unwrap();
            let (_, text) = sys.ltl.first().expect("a property ltl item").clone();
            let f = fencer_ltl::parse(&text).unwrap();
            let atoms: Vec<_> = f.atoms.iter().map(|a| sys.definitions[a].clone()).collect();
            let p = common::product(sys.with_property(&fencer_ltl::negation(&f.ltl), &atoms));
            let verdict = if accepting_cycle(&p, &Options::default()).lasso.is_some() {
                "violated"
            } else {
                "holds"
            };
            if !c[3].is_empty() && c[3] != verdict {
                wrong.push(format!("{}: {verdict}, want {}", c[0], c[3]));
            }
            checked += 1;
            continue;
        };
        let acc = AtomicU64::new(0);
        let all = reach(
            &p,
            &Options {
                exhaustive: true,
                ..Default::default()
            },
            Some(&|s: &[u8]| {
                if p.accepting(s) {
                    acc.fetch_add(1, Ordering::Relaxed);
                }
                None
            }),
        );
        let num = |k: usize| c.get(k).and_then(|v| v.parse::<u64>().ok());
        for (what, want, got) in [
            ("states", num(4), all.stats.states),
            ("transitions", num(5), all.stats.transitions),
            // `goal` sees every stored state once, the initial one included.
            ("accepting", num(6), acc.load(Ordering::Relaxed)),
            ("deadlocks", num(7), all.stats.deadlocks),
        ] {
            if want.is_some_and(|w| w != got) {
                wrong.push(format!("{}: {what} {got}, want {}", c[0], want.unwrap()));
            }
        }
        let out = accepting_cycle(&p, &Options::default());
        let verdict = if out.lasso.is_some() {
            "violated"
        } else {
            "holds"
        };
        if !c[3].is_empty() && c[3] != verdict {
            wrong.push(format!("{}: {verdict}, want {}", c[0], c[3]));
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn beem_ltl_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve/beem");
    let Ok(tsv) = std::fs::read_to_string(dir.join("instances.tsv")) else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let max: u64 = std::env::var("FENCER_DVE_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[9] != "LTL" || c[11].is_empty() || c[4].parse::<u64>().map_or(true, |n| n > max) {
            continue;
        }
        let p = load(&dir.join(c[0])).expect("a prop file has a property process");
        let out = accepting_cycle(&p, &Options::default());
        let verdict = if out.lasso.is_some() {
            "violated"
        } else {
            "holds"
        };
        if verdict != c[11] {
            wrong.push(format!("{}: {verdict}, want {} ({})", c[0], c[11], c[10]));
        }
        if let Some(l) = &out.lasso {
            // The lasso is a real path: each step is a successor of the one before, and
            // the cycle returns to where it started.
            let mut at = l.initial.clone();
            for (lab, s) in l.prefix.iter().chain(&l.cycle) {
                let mut ok = false;
                p.successors(&at, &mut |x, r| {
                    ok |= x == *lab && r.as_deref() == Ok(s.as_slice())
                });
                assert!(ok, "{}: a lasso step is not a successor", c[0]);
                at = s.clone();
            }
            let start = l.prefix.last().map_or(&l.initial, |x| &x.1);
            assert_eq!(&at, start, "{}: the cycle does not close", c[0]);
            assert!(
                l.cycle.iter().any(|(_, s)| p.accepting(s)),
                "{}: no accepting state on the cycle",
                c[0]
            );
            // The prefix is a shortest way into the cycle.
            let on: std::collections::HashSet<&[u8]> =
                l.cycle.iter().map(|(_, s)| s.as_slice()).collect();
            assert_eq!(
                distance(&p, &|s| on.contains(s)),
                l.prefix.len(),
                "{}: the lasso's prefix is not a shortest path to its cycle",
                c[0]
            );
        }
        checked += 1;
    }
    eprintln!("{checked} LTL properties checked");
    assert!(checked > 30, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// BEEM's LTL properties again, this time from their formulas (`formula` and
/// `ap_definitions` in `instances.tsv`) translated by fencer's own LTL-to-Büchi
/// construction: the same verdicts as BEEM's (and as the shipped property processes).
#[test]
fn beem_ltl_verdicts_by_translation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve/beem");
    let Ok(tsv) = std::fs::read_to_string(dir.join("instances.tsv")) else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let max: u64 = std::env::var("FENCER_DVE_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[9] != "LTL" || c[11].is_empty() || c[4].parse::<u64>().map_or(true, |n| n > max) {
            continue;
        }
        let path = dir.join(c[0]);
        let src = std::fs::read_to_string(&path).unwrap();
        let sys = fencer_dve::load(&path.display().to_string(), &src, &HashMap::new()).unwrap();
        let f = fencer_ltl::parse(c[10]).unwrap_or_else(|e| panic!("{}: {e}", c[10]));
        let defs: HashMap<&str, &str> = c[13]
            .split(';')
            .filter_map(|d| d.split_once(":="))
            .map(|(n, e)| (n.trim(), e.trim()))
            .collect();
        let atoms: Vec<_> = f
            .atoms
            .iter()
            .map(|a| {
                let e = defs
                    .get(a.as_str())
                    .unwrap_or_else(|| panic!("{}: no definition of {a}", c[0]));
                sys.expression(a, e)
                    .unwrap_or_else(|d| panic!("{}: {}", c[0], d.render(e)))
            })
            .collect();
        let b = fencer_ltl::negation(&f.ltl);
        let p = common::product(sys.with_property(&b, &atoms));
        let out = accepting_cycle(&p, &Options::default());
        let verdict = if out.lasso.is_some() {
            "violated"
        } else {
            "holds"
        };
        if verdict != c[11] {
            wrong.push(format!("{}: {verdict}, want {} ({})", c[0], c[11], c[10]));
        }
        checked += 1;
    }
    eprintln!("{checked} LTL formulas checked");
    assert!(checked > 30, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The weakly fair search (`fair_accepting_cycle`): with no fairness constraint it must
/// agree with the nested DFS; with each DVE process as a constraint, a fair violation is
/// also a plain one, and its lasso is a real cycle, through an accepting state, on which
/// every process enabled in all of the cycle's states moves.
#[test]
fn fair_cycles_on_beem() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve/beem");
    let Ok(tsv) = std::fs::read_to_string(dir.join("instances.tsv")) else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let mut checked = 0;
    let mut fair_violations = 0;
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[9] != "LTL" || c[11].is_empty() || c[4].parse::<u64>().map_or(true, |n| n > 30_000) {
            continue;
        }
        let p = load(&dir.join(c[0])).unwrap();
        let plain = fencer_explicit::fair_accepting_cycle(&p, &Options::default());
        let verdict = if plain.lasso.is_some() {
            "violated"
        } else {
            "holds"
        };
        assert_eq!(verdict, c[11], "{}: the SCC search without fairness", c[0]);
        let fair = common::Dve { fair: true, ..p };
        let out = fencer_explicit::fair_accepting_cycle(&fair, &Options::default());
        if let Some(l) = &out.lasso {
            fair_violations += 1;
            assert_eq!(
                c[11], "violated",
                "{}: fair violation of a property that holds",
                c[0]
            );
            let mut at = l.initial.clone();
            for (lab, s) in l.prefix.iter().chain(&l.cycle) {
                let mut ok = false;
                fair.successors(&at, &mut |x, r| {
                    ok |= x == *lab && r.as_deref() == Ok(s.as_slice())
                });
                assert!(ok, "{}: a lasso step is not a successor", c[0]);
                at = s.clone();
            }
            let start = l.prefix.last().map_or(&l.initial, |x| &x.1);
            assert_eq!(&at, start, "{}: the cycle does not close", c[0]);
            assert!(l.cycle.iter().any(|(_, s)| fair.accepting(s)), "{}", c[0]);
            // Fairness: a process enabled in every state of the cycle moves on it.
            let n = fair.processes() as usize;
            let mut always = vec![true; n];
            let mut moves = vec![false; n];
            for (lab, s) in &l.cycle {
                let mut en = vec![false; n];
                let mut v = Vec::new();
                fair.successors(s, &mut |x, _| {
                    v.clear();
                    fair.moved(x, &mut v);
                    for &q in &v {
                        en[q as usize] = true;
                    }
                });
                for q in 0..n {
                    always[q] &= en[q];
                }
                v.clear();
                fair.moved(*lab, &mut v);
                for &q in &v {
                    moves[q as usize] = true;
                }
            }
            for q in 0..n {
                assert!(
                    !always[q] || moves[q],
                    "{}: process {q} is starved on the cycle",
                    c[0]
                );
            }
        }
        checked += 1;
    }
    eprintln!("{checked} properties, {fair_violations} violated by a fair run");
    assert!(checked > 20, "{checked}");
}

/// The length of a shortest path from the initial state to a state where `goal` holds
/// (one exists), by a breadth-first search of its own.
fn distance(sys: &common::Dve, goal: &dyn Fn(&[u8]) -> bool) -> usize {
    let init = sys.initial();
    let mut seen = std::collections::HashSet::from([init.clone()]);
    let mut level = vec![init];
    for depth in 0.. {
        if level.iter().any(|s| goal(s)) {
            return depth;
        }
        let mut next = Vec::new();
        for s in &level {
            sys.successors(s, &mut |_, r| {
                if let Ok(t) = r {
                    if seen.insert(t.to_vec()) {
                        next.push(t.to_vec());
                    }
                }
            });
        }
        assert!(!next.is_empty(), "the goal is unreachable");
        level = next;
    }
    unreachable!()
}
