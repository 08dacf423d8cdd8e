//! Which store each method blames, on small hand-written programs: the exhaustive method
//! must name a store only where a later event of its own thread really overtook it (ran
//! while the store could still be buffered), as the monitor and the fence repair do. A
//! store followed by a full fence before its thread's load is never overtaken by that
//! load; a store-store fence keeps later stores behind it under PSO, not later loads.

use fencer_memory::ModelKind;
use fencer_robust::{check, Method};
use std::collections::BTreeSet;

/// (line of the store, line of the other thread's access) of every distinct violation.
type Pairs = BTreeSet<(u32, u32)>;

fn pairs(src: &str, model: ModelKind, method: Method) -> Pairs {
    let prog = fencer_text::parse_program("t.fen", src).unwrap_or_else(|d| panic!("{d}"));
    check(&prog, model, method, &fencer_dpor::Options::default())
        .violations
        .keys()
        .map(|((_, s), (_, e))| (s.line, e.line))
        .collect()
}

/// Both methods' pairs, which must be equal on these programs.
fn both(src: &str, model: ModelKind) -> Pairs {
    let exh = pairs(src, model, Method::Exhaustive);
    let mon = pairs(src, model, Method::Monitor);
    assert_eq!(
        exh, mon,
        "{model:?}: exhaustive and monitor pairs differ\n{src}"
    );
    exh
}

/// Store buffering; `p_mid` and `q_mid` go between each thread's store and its load.
fn sb(p_mid: &str, q_mid: &str) -> String {
    // Lines: p's store 3, p's load 5; q's store 8, q's load 10.
    format!(
        "shared x = 0, y = 0;\nthread p {{\n  x = 1;\n  {p_mid}\n  r1 = y;\n}}\n\
         thread q {{\n  y = 1;\n  {q_mid}\n  r2 = x;\n}}\n"
    )
}

const P_STORE_BY_Q: (u32, u32) = (3, 10);
const Q_STORE_BY_P: (u32, u32) = (8, 5);

#[test]
fn a_fenced_store_is_not_blamed_for_the_other_threads_overtaking() {
    for model in [ModelKind::Tso, ModelKind::Pso] {
        // The fenced side's store reaches memory before its load: only the other store is
        // overtaken, whichever side the fence is on.
        assert_eq!(
            both(&sb("fence;", ""), model),
            [Q_STORE_BY_P].into(),
            "{model:?}"
        );
        assert_eq!(
            both(&sb("", "fence;"), model),
            [P_STORE_BY_Q].into(),
            "{model:?}"
        );
        assert_eq!(
            both(&sb("", ""), model),
            [P_STORE_BY_Q, Q_STORE_BY_P].into(),
            "{model:?}"
        );
        assert_eq!(
            both(&sb("fence;", "fence;"), model),
            Pairs::new(),
            "{model:?}"
        );
        // A store-store fence does not hold a load back.
        assert_eq!(
            both(&sb("fence ss;", ""), model),
            [P_STORE_BY_Q, Q_STORE_BY_P].into(),
            "{model:?}"
        );
    }
}

#[test]
fn a_fence_after_each_blamed_store_makes_the_program_robust() {
    // What the fence repair does with an overtaken store: a full fence right after it.
    // Blaming a store that was not overtaken would put a fence where it changes nothing.
    for model in [ModelKind::Tso, ModelKind::Pso] {
        for src in [
            sb("", ""),
            sb("fence;", ""),
            sb("", "fence;"),
            sb("fence ss;", ""),
        ] {
            let blamed = both(&src, model);
            assert!(!blamed.is_empty());
            let stores: BTreeSet<u32> = blamed.iter().map(|&(s, _)| s).collect();
            let fenced: String = src
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    if stores.contains(&(i as u32 + 1)) {
                        format!("{l} fence;\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            assert_eq!(both(&fenced, model), Pairs::new(), "{model:?}\n{fenced}");
            // One fence fewer is not enough: each blamed store needs its own.
            for &s in &stores {
                let one_less: String = src
                    .lines()
                    .enumerate()
                    .map(|(i, l)| {
                        let n = i as u32 + 1;
                        if n != s && stores.contains(&n) {
                            format!("{l} fence;\n")
                        } else {
                            format!("{l}\n")
                        }
                    })
                    .collect();
                assert!(!both(&one_less, model).is_empty(), "{model:?}\n{one_less}");
            }
        }
    }
}

#[test]
fn under_pso_a_later_store_overtakes_unless_a_store_store_fence_is_between() {
    // Message passing: the flag store overtakes the data store under PSO only.
    let mp = |mid: &str| {
        format!(
            "shared data = 0, flag = 0;\nthread p {{\n  data = 1;\n  {mid}\n  flag = 1;\n}}\n\
             thread q {{\n  r1 = flag;\n  r2 = data;\n}}\n"
        )
    };
    assert_eq!(both(&mp(""), ModelKind::Tso), Pairs::new());
    assert_eq!(both(&mp(""), ModelKind::Pso), [(3, 9)].into());
    assert_eq!(both(&mp("fence ss;"), ModelKind::Pso), Pairs::new());
    assert_eq!(both(&mp("fence;"), ModelKind::Pso), Pairs::new());
}

#[test]
fn the_exhaustive_cycle_runs_through_the_overtaking_event() {
    // The cycle shown for a pair starts at the blamed store and goes, in its own thread,
    // to the load that overtook it (not across the fence of the other thread).
    let prog = fencer_text::parse_program("t.fen", &sb("fence;", "")).unwrap();
    for model in [ModelKind::Tso, ModelKind::Pso] {
        let out = check(
            &prog,
            model,
            Method::Exhaustive,
            &fencer_dpor::Options::default(),
        );
        assert_eq!(out.violations.len(), 1);
        let f = out.violations.values().next().unwrap();
        let w = f.witness.as_ref().expect("a witness");
        let (s, edge) = w.cycle[0];
        let (l, _) = w.cycle[1];
        assert_eq!(w.events[s].src.line, Q_STORE_BY_P.0);
        assert_eq!(edge.name(), "fr");
        assert_eq!(
            w.events[l].src.line, 10,
            "{model:?}: q's load overtakes its store"
        );
    }
}
