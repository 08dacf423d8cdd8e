//! The decision procedure against brute force: random conjunctions over three symbols of a
//! three-valued sort, one of an infinite sort, and two integers in difference constraints
//! (whose solutions, if any, lie within [-8, 8]). Satisfiable answers come with a model
//! that satisfies every literal.

use fencer_smt::*;
use proptest::prelude::*;

fn sort(v: Var) -> Sort {
    match v {
        0..=2 => Sort::Finite(3),
        3 => Sort::Infinite,
        _ => Sort::Int,
    }
}

fn lit() -> impl Strategy<Value = Lit> {
    let sym = prop_oneof![(0u32..3).prop_map(Sym::Var), (0i64..3).prop_map(Sym::Val)];
    let inf = prop_oneof![Just(Sym::Var(3)), (0i64..2).prop_map(Sym::Val)];
    let rel = prop_oneof![Just(Rel::Eq), Just(Rel::Ne), Just(Rel::Le), Just(Rel::Lt)];
    prop_oneof![
        (sym.clone(), sym.clone(), any::<bool>()).prop_map(|(a, b, e)| if e {
            Lit::Eq(a, b)
        } else {
            Lit::Ne(a, b)
        }),
        (inf.clone(), inf, any::<bool>()).prop_map(|(a, b, e)| if e {
            Lit::Eq(a, b)
        } else {
            Lit::Ne(a, b)
        }),
        (0u32..3, -2i64..3, rel.clone()).prop_map(|(w, k, r)| {
            let terms = match w {
                0 => vec![(4, 1), (5, -1)],
                1 => vec![(4, 1)],
                _ => vec![(5, -1)],
            };
            Lit::Arith(Lin { terms, k }, r)
        }),
        (-2i64..3, rel).prop_map(|(k, r)| Lit::Arith(
            Lin {
                terms: vec![(4, 2), (5, -2)],
                k
            },
            r
        )),
    ]
}

fn holds(l: &Lit, syms: &[i64; 4], nums: &[i64; 2]) -> bool {
    let s = |x: &Sym| match x {
        Sym::Var(v) => syms[*v as usize],
        Sym::Val(k) => *k,
    };
    match l {
        Lit::Eq(a, b) => s(a) == s(b),
        Lit::Ne(a, b) => s(a) != s(b),
        Lit::Arith(lin, r) => {
            let v: i64 = lin
                .terms
                .iter()
                .map(|(x, c)| c * nums[*x as usize - 4])
                .sum::<i64>()
                + lin.k;
            match r {
                Rel::Eq => v == 0,
                Rel::Ne => v != 0,
                Rel::Le => v <= 0,
                Rel::Lt => v < 0,
            }
        }
    }
}

fn brute(lits: &[Lit]) -> bool {
    for a in 0..3 {
        for b in 0..3 {
            for c in 0..3 {
                for d in 0..4 {
                    for x in -8..=8 {
                        for y in -8..=8 {
                            if lits.iter().all(|l| holds(l, &[a, b, c, d], &[x, y])) {
                                return true;
                            }
                        }
                    }
                }
            }
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]
    #[test]
    fn agrees_with_brute_force(lits in proptest::collection::vec(lit(), 0..7)) {
        let got = check(&sort, &lits);
        prop_assert_eq!(got.is_some(), brute(&lits), "{:?}", lits);
        if let Some(m) = got {
            if !m.syms.is_empty() || !m.nums.is_empty() || lits.is_empty() {
                let syms = [0, 1, 2, 3].map(|v| m.syms.get(&v).copied().unwrap_or(0));
                let nums = [m.int(4), m.int(5)];
                // Variables absent from the model are unconstrained by the literals that
                // mention only the others; check the literals that the model covers.
                for l in &lits {
                    let covered = match l {
                        Lit::Eq(a, b) | Lit::Ne(a, b) => [a, b].iter().all(|x| match x { Sym::Var(v) => m.syms.contains_key(v), _ => true }),
                        Lit::Arith(lin, _) => lin.terms.iter().all(|(v, _)| m.nums.contains_key(v)),
                    };
                    if covered {
                        prop_assert!(holds(l, &syms, &nums), "model {:?} breaks {:?} in {:?}", m, l, lits);
                    }
                }
            }
        }
    }

    /// `entails_any` proves a disjunction only when brute force agrees.
    #[test]
    fn disjunctions(base in proptest::collection::vec(lit(), 0..4), cubes in proptest::collection::vec(proptest::collection::vec(lit(), 1..3), 1..4)) {
        let mut budget = 10_000;
        if entails_any(&sort, &base, &cubes, &mut budget) {
            // No assignment satisfies base and falsifies every cube.
            for a in 0..3 { for b in 0..3 { for c in 0..3 { for d in 0..4 { for x in -8..=8 { for y in -8..=8 {
                let (s, n) = ([a, b, c, d], [x, y]);
                if base.iter().all(|l| holds(l, &s, &n)) {
                    prop_assert!(cubes.iter().any(|cube| cube.iter().all(|l| holds(l, &s, &n))), "{:?} does not imply {:?}", base, cubes);
                }
            }}}}}}
        }
    }
}

/// Order constraints over three integers (process identifiers: `x < y`, `x <> y`,
/// `x = y`, bounds), where disequalities abound: the model's choice of values avoids them
/// when it can, and splits stay exact. Solutions, if any, lie within [-9, 9].
fn order_lit() -> impl Strategy<Value = Lit> {
    let rel = prop_oneof![
        Just(Rel::Eq),
        Just(Rel::Ne),
        Just(Rel::Ne),
        Just(Rel::Le),
        Just(Rel::Lt)
    ];
    prop_oneof![
        (0u32..3, 0u32..3, -2i64..3, rel.clone()).prop_filter_map(
            "two variables",
            |(a, b, k, r)| {
                (a != b).then(|| {
                    Lit::Arith(
                        Lin {
                            terms: vec![(a, 1), (b, -1)],
                            k,
                        },
                        r,
                    )
                })
            }
        ),
        (0u32..3, any::<bool>(), -2i64..3, rel).prop_map(|(a, pos, k, r)| Lit::Arith(
            Lin {
                terms: vec![(a, if pos { 1 } else { -1 })],
                k
            },
            r
        )),
    ]
}

fn order_holds(l: &Lit, x: &[i64; 3]) -> bool {
    let Lit::Arith(lin, r) = l else {
        unreachable!()
    };
    let v: i64 = lin
        .terms
        .iter()
        .map(|(a, c)| c * x[*a as usize])
        .sum::<i64>()
        + lin.k;
    match r {
        Rel::Eq => v == 0,
        Rel::Ne => v != 0,
        Rel::Le => v <= 0,
        Rel::Lt => v < 0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]
    #[test]
    fn orders_agree_with_brute_force(lits in proptest::collection::vec(order_lit(), 0..9)) {
        let int = |_: Var| Sort::Int;
        let got = check(&int, &lits);
        let mut want = false;
        for a in -9..=9 { for b in -9..=9 { for c in -9..=9 {
            want |= lits.iter().all(|l| order_holds(l, &[a, b, c]));
        }}}
        prop_assert_eq!(got.is_some(), want, "{:?}", lits);
        if let Some(m) = got {
            let x = [m.int(0), m.int(1), m.int(2)];
            for l in &lits {
                prop_assert!(order_holds(l, &x), "model {:?} breaks {:?} in {:?}", m, l, lits);
            }
        }
    }
}
