//! The distributed search, with ranks as threads (`dist::Threads`; MPI's processes make
//! the same calls): on BEEM's instances the same counts as one process, on 2 and 3 ranks
//! (3 splits the 64 shards unevenly); on BEEM's reachability properties the same
//! counterexample, step for step; the same LTL verdicts with valid lassos; and every rank
//! ends with the same outcome. Needs `../shared` (skipped with a message without it).
//! Instances above `FENCER_DIST_MAX` states (default 60000; LTL properties above half of it,
//! fair searches above a quarter) are left out.

mod common;

use fencer_explicit::dist::{Ranks, Threads};
use fencer_explicit::{reach, Options, Outcome, TransitionSystem};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve/beem");
    d.join("instances.tsv").exists().then_some(d)
}

fn max_states() -> u64 {
    std::env::var("FENCER_DIST_MAX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60_000)
}

/// `f` on `n` ranks (threads), each with its own `Ranks`; every rank's result.
fn on_ranks<R: Send>(n: usize, f: impl Fn(Ranks) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let hs: Vec<_> = Threads::ranks(n)
            .into_iter()
            .map(|t| {
                let f = &f;
                s.spawn(move || f(Ranks::new(t)))
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("a rank")).collect()
    })
}

type Path_ = Option<(Vec<u8>, Vec<(fencer_dve::run::Label, Vec<u8>)>)>;

fn path_of(o: &Outcome<fencer_dve::run::Label>) -> Path_ {
    o.found
        .as_ref()
        .map(|f| (f.initial.clone(), f.steps.clone()))
}

fn counts(s: &fencer_explicit::Stats) -> (u64, u64, u64, u64, u64) {
    (s.states, s.transitions, s.deadlocks, s.errors, s.levels)
}

#[test]
fn beem_counts_on_ranks() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let tsv = std::fs::read_to_string(dir.join("instances.tsv")).unwrap();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if !c[8].is_empty() {
            continue;
        }
        let Some(_) = c[4].parse::<u64>().ok().filter(|&n| n <= max_states()) else {
            continue;
        };
        let path = dir.join(c[0]);
        let src = std::fs::read_to_string(&path).unwrap();
        let sys = fencer_dve::load(&path.display().to_string(), &src, &HashMap::new()).unwrap();
        let sys = common::plain(sys);
        let opts = |ranks| Options {
            exhaustive: true,
            ranks,
            ..Default::default()
        };
        let one = reach(&sys, &opts(None), None);
        for n in [2, 3] {
            let outs = on_ranks(n, |r| reach(&sys, &opts(Some(r)), None));
            for (k, o) in outs.iter().enumerate() {
                if counts(&o.stats) != counts(&one.stats) {
                    wrong.push(format!(
                        "{} on {n} ranks (rank {k}): {:?}, one process {:?}",
                        c[0],
                        counts(&o.stats),
                        counts(&one.stats)
                    ));
                }
            }
            let per: u64 = outs[0].stats.ranks.iter().map(|r| r.states).sum();
            assert_eq!(per, one.stats.states, "{}: the ranks' shares", c[0]);
            assert_eq!(outs[0].stats.ranks.len(), n);
        }
        checked += 1;
    }
    eprintln!("{checked} instances checked on 2 and 3 ranks");
    assert!(checked >= 20, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn beem_reachability_counterexamples_on_ranks() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let tsv = std::fs::read_to_string(dir.join("instances.tsv")).unwrap();
    let mut checked = 0;
    let mut found = 0;
    let mut wrong = Vec::new();
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[9] != "reachability" || c[11].is_empty() {
            continue;
        }
        let Some(_) = c[4].parse::<u64>().ok().filter(|&n| n <= max_states()) else {
            continue;
        };
        let path = dir.join(c[0]);
        let src = std::fs::read_to_string(&path).unwrap();
        let sys = fencer_dve::load(&path.display().to_string(), &src, &HashMap::new()).unwrap();
        let prop = common::Property::new(&sys, c[10], c[13]);
        let sys = common::plain(sys);
        let goal = |s: &[u8]| prop.holds(&sys.sys, s).then(|| c[10].to_string());
        let opts = |ranks| Options {
            ranks,
            ..Default::default()
        };
        let one = reach(&sys, &opts(None), Some(&goal));
        found += usize::from(one.found.is_some());
        for n in [2, 3] {
            let outs = on_ranks(n, |r| reach(&sys, &opts(Some(r)), Some(&goal)));
            for (k, o) in outs.iter().enumerate() {
                if path_of(o) != path_of(&one) {
                    wrong.push(format!(
                        "{} {}: rank {k} of {n} gives another counterexample",
                        c[0], c[10]
                    ));
                }
                if one.found.is_none() && counts(&o.stats) != counts(&one.stats) {
                    wrong.push(format!("{}: counts on {n} ranks", c[0]));
                }
            }
        }
        checked += 1;
    }
    eprintln!("{checked} reachability properties checked, {found} violated");
    assert!(checked >= 15 && found >= 5, "{checked} {found}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Errors and deadlocks, which the owner of the state that steps finds (not the owner of
/// a new state): the same as one process, on every rank.
#[test]
fn errors_and_deadlocks_on_ranks() {
    // A counter pair: `a` and `b` each step up; `a + b == 9` is a run-time error, and
    // a state with both at 6 has no successor.
    struct Grid;
    impl TransitionSystem for Grid {
        type Label = u8;
        fn width(&self) -> usize {
            2
        }
        fn initial(&self) -> Vec<u8> {
            vec![0, 0]
        }
        fn successors(&self, s: &[u8], f: &mut dyn FnMut(u8, fencer_explicit::Next<'_>)) {
            for p in 0..2u8 {
                if s[p as usize] < 6 {
                    let mut t = s.to_vec();
                    t[p as usize] += 1;
                    if t[0] + t[1] == 9 && t[0] == 5 {
                        f(p, Err(format!("{} + {} is 9", t[0], t[1])));
                    } else {
                        f(p, Ok(&t));
                    }
                }
            }
        }
    }
    for deadlock in [false, true] {
        for exhaustive in [false, true] {
            let opts = |ranks| Options {
                deadlock,
                exhaustive,
                ranks,
                ..Default::default()
            };
            let one = reach(&Grid, &opts(None), None);
            for n in [2, 3, 5] {
                for o in on_ranks(n, |r| reach(&Grid, &opts(Some(r)), None)) {
                    let f = |o: &Outcome<u8>| {
                        o.found
                            .as_ref()
                            .map(|f| (f.kind.clone(), f.initial.clone(), f.steps.clone(), f.failed))
                    };
                    assert_eq!(f(&o), f(&one), "{n} ranks, deadlock {deadlock}");
                    if one.found.is_none() {
                        assert_eq!(counts(&o.stats), counts(&one.stats));
                    }
                }
            }
        }
    }
}

/// BEEM's LTL properties: the verdict of one process (nested DFS; with every process a
/// weak-fairness constraint, the SCC search) and BEEM's, on 2 and 3 ranks; the same
/// product counts when the property holds; a lasso that is a real path, closes, goes
/// through an accepting state and (fair) starves no process, the same on every rank.
#[test]
fn beem_ltl_on_ranks() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let tsv = std::fs::read_to_string(dir.join("instances.tsv")).unwrap();
    let mut checked = 0;
    let mut violated = [0, 0];
    let mut wrong = Vec::new();
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[9] != "LTL" || c[11].is_empty() {
            continue;
        }
        let Some(states) = c[4].parse::<u64>().ok().filter(|&n| n <= max_states() / 2) else {
            continue;
        };
        let path = dir.join(c[0]);
        let src = std::fs::read_to_string(&path).unwrap();
        let sys = fencer_dve::load(&path.display().to_string(), &src, &HashMap::new()).unwrap();
        let plain = common::product(sys);
        for fair in [false, true] {
            if fair && states > max_states() / 4 {
                continue;
            }
            let p = common::Dve {
                sys: plain.sys.clone(),
                product: true,
                fair,
            };
            let search = |ranks| {
                let opts = Options {
                    ranks,
                    ..Default::default()
                };
                if fair {
                    fencer_explicit::fair_accepting_cycle(&p, &opts)
                } else {
                    fencer_explicit::accepting_cycle(&p, &opts)
                }
            };
            let one = search(None);
            violated[usize::from(fair)] += usize::from(one.lasso.is_some());
            if !fair {
                let verdict = if one.lasso.is_some() {
                    "violated"
                } else {
                    "holds"
                };
                assert_eq!(verdict, c[11], "{}: one process", c[0]);
            }
            // Fair searches on 2 ranks only: the same code, and CI's time is counted.
            let ranks: &[usize] = if fair { &[2] } else { &[2, 3] };
            for &n in ranks {
                let outs = on_ranks(n, |r| search(Some(r)));
                for (k, o) in outs.iter().enumerate() {
                    if o.lasso.is_some() != one.lasso.is_some() {
                        wrong.push(format!(
                            "{} (fair {fair}) rank {k} of {n}: violated {}, one process {}",
                            c[0],
                            o.lasso.is_some(),
                            one.lasso.is_some()
                        ));
                        continue;
                    }
                    let l = |o: &fencer_explicit::LtlOutcome<_>| {
                        o.lasso
                            .as_ref()
                            .map(|l| (l.initial.clone(), l.prefix.clone(), l.cycle.clone()))
                    };
                    assert_eq!(l(o), l(&outs[0]), "{}: ranks disagree", c[0]);
                    if one.lasso.is_none() {
                        let key = |s: &fencer_explicit::Stats| (s.states, s.transitions);
                        if key(&o.stats) != key(&one.stats) || o.accepting != one.accepting {
                            wrong.push(format!(
                                "{} (fair {fair}) on {n} ranks: {:?} {}, one process {:?} {}",
                                c[0],
                                key(&o.stats),
                                o.accepting,
                                key(&one.stats),
                                one.accepting
                            ));
                        }
                    }
                }
                if let Some(l) = &outs[0].lasso {
                    if let Err(e) = valid_lasso(&p, l) {
                        wrong.push(format!("{} (fair {fair}) on {n} ranks: {e}", c[0]));
                    }
                }
            }
            checked += 1;
        }
    }
    eprintln!(
        "{checked} LTL searches checked on 2 and 3 ranks; violated: {} plain, {} fair",
        violated[0], violated[1]
    );
    assert!(
        checked >= 20 && violated[0] >= 5 && violated[1] >= 3,
        "{checked} {violated:?}"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Whether `l` is a real path of `sys` that closes, with an accepting state on its cycle
/// and (when `sys` has fairness constraints) no process enabled throughout and never moved.
fn valid_lasso(
    sys: &common::Dve,
    l: &fencer_explicit::Lasso<fencer_dve::run::Label>,
) -> Result<(), String> {
    let mut at = l.initial.clone();
    for (lab, s) in l.prefix.iter().chain(&l.cycle) {
        let mut ok = false;
        sys.successors(&at, &mut |x, r| {
            ok |= x == *lab && r.as_deref() == Ok(s.as_slice())
        });
        if !ok {
            return Err("a lasso step is not a successor".into());
        }
        at = s.clone();
    }
    let start = l.prefix.last().map_or(&l.initial, |x| &x.1);
    if l.cycle.is_empty() || &at != start {
        return Err("the cycle does not close".into());
    }
    if !l.cycle.iter().any(|(_, s)| sys.accepting(s)) {
        return Err("no accepting state on the cycle".into());
    }
    let n = sys.processes() as usize;
    let mut always = vec![true; n];
    let mut moves = vec![false; n];
    let mut v = Vec::new();
    for (lab, s) in &l.cycle {
        let mut en = vec![false; n];
        sys.successors(s, &mut |x, r| {
            if r.is_ok() {
                v.clear();
                sys.moved(x, &mut v);
                for &q in v.iter().filter(|&&q| (q as usize) < n) {
                    en[q as usize] = true;
                }
            }
        });
        for q in 0..n {
            always[q] &= en[q];
        }
        v.clear();
        sys.moved(*lab, &mut v);
        for &q in v.iter().filter(|&&q| (q as usize) < n) {
            moves[q as usize] = true;
        }
    }
    match (0..n).find(|&q| always[q] && !moves[q]) {
        Some(q) => Err(format!("process {q} is starved on the cycle")),
        None => Ok(()),
    }
}

/// A limit stops every rank together, with the same statistics, and says which limit.
#[test]
fn limits_stop_every_rank() {
    // A ring of 2,000 states, every one accepting: a cycle, found only once all of it
    // is explored.
    struct Ring;
    impl TransitionSystem for Ring {
        type Label = ();
        fn width(&self) -> usize {
            4
        }
        fn initial(&self) -> Vec<u8> {
            vec![0; 4]
        }
        fn successors(&self, s: &[u8], f: &mut dyn FnMut((), fencer_explicit::Next<'_>)) {
            let n = u32::from_le_bytes(s.try_into().unwrap());
            f((), Ok(&((n + 1) % 2_000).to_le_bytes()));
        }
        fn accepting(&self, _: &[u8]) -> bool {
            true
        }
    }
    for (timeout, max_states, why) in [
        (Some(std::time::Duration::ZERO), None, "timeout"),
        (None, Some(1000), "max-states"),
    ] {
        let opts = |ranks| Options {
            timeout,
            max_states,
            ranks,
            ..Default::default()
        };
        for o in on_ranks(3, |r| reach(&Ring, &opts(Some(r)), None)) {
            assert_eq!(o.stopped, Some(why));
            assert!(o.found.is_none());
        }
        for o in on_ranks(2, |r| {
            fencer_explicit::accepting_cycle(&Ring, &opts(Some(r)))
        }) {
            assert_eq!(o.stopped, Some(why));
            assert!(o.lasso.is_none());
        }
    }
    let found = on_ranks(2, |r| {
        let o = fencer_explicit::accepting_cycle(&Ring, &opts_plain(r));
        (o.lasso.map(|l| l.cycle.len()), o.stats.states)
    });
    assert_eq!(found, vec![(Some(2_000), 2_000); 2]);
}

/// Weak fairness with 63 processes, the most across ranks (a condition bit each, beside
/// acceptance's): the last one alone moves, forever; the others never can, so the cycle
/// is fair, on one process and on ranks.
#[test]
fn fairness_with_sixty_three_processes() {
    struct Flip;
    impl TransitionSystem for Flip {
        type Label = u32;
        fn width(&self) -> usize {
            1
        }
        fn initial(&self) -> Vec<u8> {
            vec![0]
        }
        fn successors(&self, s: &[u8], f: &mut dyn FnMut(u32, fencer_explicit::Next<'_>)) {
            f(62, Ok(&[1 - s[0]]));
        }
        fn accepting(&self, s: &[u8]) -> bool {
            s[0] == 1
        }
        fn processes(&self) -> u32 {
            63
        }
        fn moved(&self, l: u32, out: &mut Vec<u32>) {
            out.push(l);
        }
    }
    let one = fencer_explicit::fair_accepting_cycle(&Flip, &Options::default());
    assert!(one.lasso.is_some());
    for o in on_ranks(2, |r| {
        fencer_explicit::fair_accepting_cycle(&Flip, &opts_plain(r))
    }) {
        let l = o.lasso.expect("a fair cycle across ranks too");
        assert_eq!(l.cycle.len(), 2);
    }
}

/// An accepting cycle near the initial state is found across ranks long before the whole
/// product is stored (OWCTY on the expanded part at each doubling): a self-loop one step
/// from the start, beside a tree of 2^18 states.
#[test]
fn an_early_cycle_is_found_early() {
    struct Tree;
    impl TransitionSystem for Tree {
        type Label = ();
        fn width(&self) -> usize {
            4
        }
        fn initial(&self) -> Vec<u8> {
            vec![0; 4]
        }
        fn successors(&self, s: &[u8], f: &mut dyn FnMut((), fencer_explicit::Next<'_>)) {
            let n = u32::from_le_bytes(s.try_into().unwrap());
            match n {
                0 => {
                    f((), Ok(&1u32.to_le_bytes()));
                    f((), Ok(&2u32.to_le_bytes()));
                }
                1 => f((), Ok(&1u32.to_le_bytes())),
                _ if n < 1 << 18 => {
                    f((), Ok(&(2 * n).to_le_bytes()));
                    f((), Ok(&(2 * n + 1).to_le_bytes()));
                }
                _ => {}
            }
        }
        fn accepting(&self, s: &[u8]) -> bool {
            s[0] == 1 && s[1..] == [0, 0, 0]
        }
    }
    for o in on_ranks(2, |r| {
        fencer_explicit::accepting_cycle(&Tree, &opts_plain(r))
    }) {
        let l = o.lasso.expect("the self-loop");
        assert_eq!((l.prefix.len(), l.cycle.len()), (1, 1));
        assert!(o.stats.states < 20_000, "{} states stored", o.stats.states);
    }
}

fn opts_plain(r: Ranks) -> Options {
    Options {
        ranks: Some(r),
        ..Default::default()
    }
}
