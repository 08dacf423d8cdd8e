//! Soundness cross-check: the parameterized verdict against an explicit exploration of
//! small instances (2 and 3 processes, or the file's `number_procs`), on the corpus and on
//! mutants of it (one transition's guard dropped, which makes many systems unsafe).
//! A SAFE answer must agree with every instance; an instance that reaches an unsafe state
//! must get an UNSAFE answer, whose trace the engine has already run forward.

mod common;

use fencer_param::concrete::{explore, Explicit};
use fencer_param::{check, Formula, Options, Outcome, System};
use std::time::Duration;

/// The verdicts agree, or the explicit side could not decide. Returns whether the
/// explicit side decided some instance.
fn compare(name: &str, sys: &System, errors: &mut Vec<String>) -> bool {
    compare_with(name, sys, None, errors)
}

fn compare_with(name: &str, sys: &System, brab: Option<u8>, errors: &mut Vec<String>) -> bool {
    let opts = Options {
        max_nodes: Some(1000),
        timeout: Some(Duration::from_secs(1)),
        brab,
        ..Default::default()
    };
    let r = check(sys, &opts);
    let sizes: Vec<u8> = match sys.procs {
        Some(n) => vec![n],
        None => vec![2, 3],
    };
    let mut decided = false;
    for n in sizes {
        let e = explore(sys, n, 10_000);
        match (&r.outcome, &e) {
            (Outcome::Spurious { why, .. }, _) => errors.push(format!("{name}: spurious trace: {why}")),
            (Outcome::Safe { .. }, Explicit::Unsafe { trace }) => errors.push(format!(
                "{name}: SAFE, but {n} processes reach an unsafe state in {} steps",
                trace.len()
            )),
            // More processes can block universal guards: only the instance of the
            // trace's size must be unsafe.
            (Outcome::Unsafe { trace, procs, .. }, Explicit::Safe { .. }) if *procs == n => errors.push(format!(
                "{name}: UNSAFE with {procs} processes ({} steps), but the {n}-process instance is safe",
                trace.len()
            )),
            (Outcome::Limit(_), _) | (_, Explicit::Unknown(_)) => {}
            _ => decided = true,
        }
    }
    decided
}

#[test]
fn small_instances_agree() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut errors = Vec::new();
    let (mut decided, mut mutants) = (0, 0);
    let mut seen = std::collections::HashSet::new();
    for row in common::rows(&dir) {
        if row.mode == "tso"
            || row.brab
            || common::SLOW.contains(&row.file.as_str())
            || !seen.insert(row.file.clone())
        {
            continue;
        }
        let Ok(sys) = common::load(&dir, &row) else {
            continue;
        };
        if !compare(&row.file, &sys, &mut errors) {
            continue;
        }
        decided += 1;
        if sys.transitions.len() > 12 {
            continue;
        }
        for ti in 0..sys.transitions.len() {
            let mut m = sys.clone();
            m.transitions[ti].guard = Formula::True;
            m.transitions[ti].forall_other.clear();
            let name = format!(
                "{} without the guard of {}",
                row.file, m.transitions[ti].name
            );
            compare(&name, &m, &mut errors);
            mutants += 1;
        }
    }
    eprintln!("{decided} corpus files and {mutants} mutants compared with explicit instances");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(decided >= 10, "too few files could be compared: {decided}");
}

/// The same with BRAB (`brab: Some(2)`): its candidate invariants must never make a SAFE
/// answer wrong. On the BRAB rows (whatever they answer within 1 s) and on the mutants of
/// each (one guard dropped: most become unsafe, and the candidates the oracle proposes
/// for the original system are then wrong and must be banned).
#[test]
fn brab_small_instances_agree() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut errors = Vec::new();
    let mut compared = 0;
    let mut seen = std::collections::HashSet::new();
    for row in common::rows(&dir) {
        if !common::BRAB_PASS.contains(&row.file.as_str()) || !seen.insert(row.file.clone()) {
            continue;
        }
        let Ok(sys) = common::load(&dir, &row) else {
            continue;
        };
        compare_with(&row.file, &sys, Some(2), &mut errors);
        // flash's instances have more states than the explicit bound (729 initial ones
        // with 2 processes): its 138 mutants, a second or more each, would decide nothing.
        if row.file.contains("flash_") {
            continue;
        }
        for ti in 0..sys.transitions.len() {
            let mut m = sys.clone();
            m.transitions[ti].guard = Formula::True;
            m.transitions[ti].forall_other.clear();
            let name = format!(
                "{} without the guard of {} (brab)",
                row.file, m.transitions[ti].name
            );
            if compare_with(&name, &m, Some(2), &mut errors) {
                compared += 1;
            }
        }
    }
    eprintln!("{compared} BRAB mutants compared with explicit instances");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// A candidate the shallow exploration cannot refute (`--forward-depth 1` sees `S` at `A`
/// and `B` only) is reached backward from `init`: `S[#1] = C` is banned (with any other
/// candidate the trace's run satisfies) and the search restarts. The answers stay exact:
/// SAFE when `T` never becomes `X`, UNSAFE (a trace run forward) when it does.
#[test]
fn brab_restarts_stay_exact() {
    let src = |tx_guard: &str| {
        format!(
            "type st = A | B | C | D
type tt = X | Y
array T[proc] : tt
array S[proc] : st
init (p) {{ S[p] = A && T[p] = Y }}
unsafe (p) {{ S[p] = D && T[p] = X }}
transition ab (p) requires {{ S[p] = A }} {{ S[p] := B; }}
transition bc (p) requires {{ S[p] = B }} {{ S[p] := C; }}
transition cd (p) requires {{ S[p] = C }} {{ S[p] := D; }}
transition tx (p) requires {{ {tx_guard} }} {{ T[p] := X; }}
"
        )
    };
    let opts = Options {
        max_nodes: Some(1000),
        timeout: Some(Duration::from_secs(20)),
        brab: Some(2),
        forward_depth: Some(1),
    };
    let mut errors = Vec::new();
    for (guard, safe) in [("S[p] = A && T[p] = X", true), ("S[p] = B", false)] {
        let sys = fencer_cub::load("t.cub", &src(guard), fencer_cub::Mode::Sc).unwrap();
        let r = check(&sys, &opts);
        match r.outcome {
            Outcome::Safe { .. } if safe => {}
            Outcome::Unsafe { .. } if !safe => {}
            ref o => panic!("tx requires {guard}: {o:?}"),
        }
        assert!(
            r.restarts >= 1,
            "tx requires {guard}: no candidate was banned"
        );
        compare_with(guard, &sys, Some(2), &mut errors);
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
