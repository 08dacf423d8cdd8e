//! Order comparisons of process-valued variables (`Turn < i`, `Best[i] <= Best[j]`,
//! `#1 < Turn`): process identifiers are ordered integers, a process cell holds one. The
//! parameterized verdicts of small models, SAFE and UNSAFE, are held to an explicit
//! exploration of their instances with 2 and 3 processes (or the file's `number_procs`),
//! and so are their mutants: each order literal of a guard negated, each guard dropped.

use fencer_param::concrete::{explore, Explicit, Instance};
use fencer_param::{check, Formula, Lit, Options, Outcome, System};
use std::time::Duration;

fn load(src: &str) -> System {
    fencer_cub::load("order.cub", src, fencer_cub::Mode::Sc).expect("loads")
}

/// The largest identifier a process takes gossiped from others: it only grows, so no
/// process ever holds one below its own.
const GOSSIP: &str = "
array Best[proc] : proc
init (p) { Best[p] = p }
unsafe (i) { Best[i] < i }
transition gossip (i j)
requires { Best[i] < Best[j] }
{ Best[i] := Best[j] }
";

/// A token `Turn` (a global process variable) that starts at the smallest process and
/// passes to larger ones; only its holder enters.
const TURN: &str = "
type st = Idle | Crit
var Turn : proc
array S[proc] : st
init (p) { S[p] = Idle && Turn <= p }
unsafe (i j) { S[i] = Crit && S[j] = Crit }
transition enter (i)
requires { S[i] = Idle && Turn = i }
{ S[i] := Crit }
transition leave (i j)
requires { S[i] = Crit && Turn = i && i < j && forall_other k. (k < i || j <= k) }
{ S[i] := Idle; Turn := j }
";

/// `Owner` starts as no process (`Owner <> p`) and a process takes the lock when the
/// owner is smaller than itself: with the identifier of no process below every process,
/// the first one can take it. Mutual exclusion comes from the `forall_other` guard.
const OWNER: &str = "
var Owner : proc
array Crit[proc] : bool
init (p) { Owner <> p && Crit[p] = False }
unsafe (i j) { Crit[i] = True && Crit[j] = True }
transition take (i)
requires { Crit[i] = False && Owner < i && forall_other j. Crit[j] = False }
{ Crit[i] := True; Owner := i }
transition release (i)
requires { Crit[i] = True }
{ Crit[i] := False }
";

/// Two process arrays compared with each other and with identifiers (`>=`, `>`), and a
/// nondeterministic process value.
const ARRAYS: &str = "
type st = A | B | C
array Lo[proc] : proc
array Hi[proc] : proc
array S[proc] : st
init (p) { Lo[p] = p && Hi[p] = p && S[p] = A }
unsafe (i) { S[i] = C && Hi[i] < Lo[i] }
transition raise (i j)
requires { S[i] = A && Hi[j] >= Hi[i] }
{ Hi[i] := Hi[j] }
transition pick (i)
requires { S[i] = A }
{ S[i] := B; Lo[i] := . }
transition check (i)
requires { S[i] = B && Lo[i] <= Hi[i] && i <= Lo[i] }
{ S[i] := C }
";

/// A fixed instance: the constants `#k` ordered with a process variable.
const FIXED: &str = "
number_procs 3
type st = Idle | Crit
var Turn : proc
array S[proc] : st
init (p) { S[p] = Idle && Turn = #1 }
unsafe (i j) { S[i] = Crit && S[j] = Crit }
transition enter (i)
requires { S[i] = Idle && Turn = i }
{ S[i] := Crit }
transition leave (i)
requires { S[i] = Crit && Turn = i && Turn < #3 }
{ S[i] := Idle; Turn := #3 }
transition back (i)
requires { S[i] = Crit && Turn = i && #2 < Turn }
{ S[i] := Idle; Turn := #1 }
";

fn opts() -> Options {
    Options {
        max_nodes: Some(3000),
        timeout: Some(Duration::from_secs(5)),
        ..Default::default()
    }
}

/// The verdict against explicit instances; whether some instance decided. Errors are
/// collected in `errors`.
fn compare(name: &str, sys: &System, errors: &mut Vec<String>) -> Option<bool> {
    compare_with(name, sys, &opts(), errors)
}

fn compare_with(
    name: &str,
    sys: &System,
    opts: &Options,
    errors: &mut Vec<String>,
) -> Option<bool> {
    let r = check(sys, opts);
    let sizes: Vec<u8> = match sys.procs {
        Some(n) => vec![n],
        None => vec![2, 3],
    };
    let verdict = match &r.outcome {
        Outcome::Safe { .. } => Some(true),
        Outcome::Unsafe { .. } => Some(false),
        Outcome::Limit(_) => None,
        Outcome::Spurious { why, .. } => {
            errors.push(format!("{name}: spurious trace: {why}"));
            None
        }
    };
    for n in sizes {
        match (&r.outcome, explore(sys, n, 50_000)) {
            (Outcome::Safe { .. }, Explicit::Unsafe { trace }) => errors.push(format!(
                "{name}: SAFE, but {n} processes reach an unsafe state in {} steps: {trace:?}",
                trace.len()
            )),
            (Outcome::Unsafe { trace, procs, .. }, Explicit::Safe { .. }) if *procs == n => {
                errors.push(format!(
                    "{name}: UNSAFE with {procs} processes ({} steps), but the {n}-process instance is safe",
                    trace.len()
                ))
            }
            _ => {}
        }
    }
    // An UNSAFE run checked step by step on its instance, independently of replay.
    if let Outcome::Unsafe {
        trace,
        procs,
        states,
    } = &r.outcome
    {
        let inst = Instance::new(sys, *procs);
        let ok = inst.is_initial(&states[0])
            && trace.iter().enumerate().all(|(k, step)| {
                let t = &sys.transitions[step.transition];
                inst.enabled(&states[k], t, &step.args)
                    && inst
                        .fire(&states[k], t, &step.args)
                        .contains(&states[k + 1])
            })
            && inst.is_unsafe(states.last().expect("a state"));
        if !ok {
            errors.push(format!("{name}: the reported run does not run"));
        }
    }
    verdict
}

/// The formula with its `k`-th order literal (arithmetic over processes) negated, and how
/// many there are.
fn negate_nth(f: &Formula, k: &mut i64) -> Formula {
    match f {
        Formula::Lit(l @ Lit::Arith(..)) => {
            *k -= 1;
            if *k == -1 {
                Formula::Lit(l.negate())
            } else {
                f.clone()
            }
        }
        Formula::And(v) => Formula::And(v.iter().map(|x| negate_nth(x, k)).collect()),
        Formula::Or(v) => Formula::Or(v.iter().map(|x| negate_nth(x, k)).collect()),
        x => x.clone(),
    }
}

/// Mutants: each order literal of a guard (or `forall_other` guard) negated, each
/// transition's guards dropped.
fn mutants(sys: &System) -> Vec<(String, System)> {
    let mut out = Vec::new();
    for (ti, t) in sys.transitions.iter().enumerate() {
        let mut m = sys.clone();
        m.transitions[ti].guard = Formula::True;
        m.transitions[ti].forall_other.clear();
        out.push((format!("without the guard of {}", t.name), m));
        for part in 0..=t.forall_other.len() {
            for n in 0.. {
                let mut m = sys.clone();
                let mut k = n;
                let tm = &mut m.transitions[ti];
                let f = if part == 0 {
                    &mut tm.guard
                } else {
                    &mut tm.forall_other[part - 1]
                };
                *f = negate_nth(f, &mut k);
                if k >= 0 {
                    break;
                }
                out.push((
                    format!("{} with order literal {n} of part {part} negated", t.name),
                    m,
                ));
            }
        }
    }
    out
}

fn verdict(src: &str) -> Option<bool> {
    let mut errors = Vec::new();
    let v = compare("model", &load(src), &mut errors);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    v
}

#[test]
fn gossip_is_safe_and_its_reverse_unsafe() {
    assert_eq!(verdict(GOSSIP), Some(true));
    assert_eq!(
        verdict(&GOSSIP.replace("Best[i] < Best[j]", "Best[j] < Best[i]")),
        Some(false)
    );
}

#[test]
fn turn_is_safe_and_a_weaker_guard_unsafe() {
    assert_eq!(verdict(TURN), Some(true));
    assert_eq!(
        verdict(&TURN.replace("S[i] = Idle && Turn = i", "S[i] = Idle && Turn <= i")),
        Some(false)
    );
}

/// The bug without `forall_other` needs `Owner` to start below every process: the
/// concrete instance has such an identifier of no process (`-1`), and the trace runs.
#[test]
fn owner_below_every_process() {
    assert_eq!(verdict(OWNER), Some(true));
    let buggy = OWNER.replace(" && forall_other j. Crit[j] = False", "");
    assert_eq!(verdict(&buggy), Some(false));
    let sys = load(&buggy);
    let Outcome::Unsafe { states, .. } = check(&sys, &opts()).outcome else {
        panic!("unsafe");
    };
    let inst = Instance::new(&sys, 2);
    assert_eq!(states[0][inst.cell(0, &[])], -1, "{states:?}");
}

#[test]
fn arrays_compared() {
    assert_eq!(verdict(ARRAYS), Some(true));
    assert_eq!(
        verdict(&ARRAYS.replace("Lo[i] <= Hi[i] && ", "")),
        Some(false)
    );
}

#[test]
fn constants_of_a_fixed_instance() {
    assert_eq!(verdict(FIXED), Some(true));
    assert_eq!(
        verdict(&FIXED.replace("Turn < #3", "#1 < Turn")),
        Some(true)
    );
    assert_eq!(
        verdict(&FIXED.replace("S[i] = Idle && Turn = i", "S[i] = Idle && Turn >= i")),
        Some(false)
    );
}

/// Every mutant of every model: the verdicts hold to the explicit instances.
#[test]
fn mutants_agree_with_explicit_instances() {
    let mut errors = Vec::new();
    let (mut safe, mut unsafe_, mut total) = (0, 0, 0);
    for (name, src) in [
        ("gossip", GOSSIP),
        ("turn", TURN),
        ("owner", OWNER),
        ("arrays", ARRAYS),
        ("fixed", FIXED),
    ] {
        for (what, m) in mutants(&load(src)) {
            total += 1;
            match compare(&format!("{name} {what}"), &m, &mut errors) {
                Some(true) => safe += 1,
                Some(false) => unsafe_ += 1,
                None => {}
            }
        }
    }
    eprintln!("{total} mutants: {safe} SAFE, {unsafe_} UNSAFE");
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(safe >= 3 && unsafe_ >= 10, "{safe} SAFE, {unsafe_} UNSAFE");
}

/// The same with BRAB: its candidate invariants (the oracle explores the 2-process
/// instance, process cells ordered) must never make a SAFE answer wrong.
#[test]
fn brab_mutants_agree_with_explicit_instances() {
    let mut errors = Vec::new();
    let opts = Options {
        brab: Some(2),
        ..opts()
    };
    let mut decided = 0;
    for (name, src) in [
        ("gossip", GOSSIP),
        ("turn", TURN),
        ("owner", OWNER),
        ("arrays", ARRAYS),
    ] {
        let sys = load(src);
        let all = std::iter::once(("itself".to_string(), sys.clone())).chain(mutants(&sys));
        for (what, m) in all {
            if compare_with(&format!("{name} {what} (brab)"), &m, &opts, &mut errors).is_some() {
                decided += 1;
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(decided >= 15, "{decided} decided");
}

#[test]
fn lowering() {
    let ok = |src: &str| {
        fencer_cub::load("t.cub", src, fencer_cub::Mode::Sc)
            .unwrap_or_else(|d| panic!("{src}: {}", d.message));
    };
    ok("var X : proc\nunsafe (i) { X < i }");
    ok("var X : proc\nunsafe (i) { i >= X }");
    ok("array A[proc] : proc\nunsafe (i j) { A[i] <= A[j] && A[j] > i }");
    ok("number_procs 2\nvar X : proc\nunsafe () { #1 < X }");
    let err = |src: &str, mode, msg: &str| {
        let e = fencer_cub::load("t.cub", src, mode).expect_err(src);
        assert!(e.message.contains(msg), "{src}: {}", e.message);
    };
    err(
        "var X : proc\nvar N : int\nunsafe () { X < N }",
        fencer_cub::Mode::Sc,
        "cannot compare proc with int",
    );
    err(
        "weak var X : proc\nunsafe (i) { i = i }\ntransition t ([i]) requires { X < i } { }",
        fencer_cub::Mode::Tso,
        "weak process-valued",
    );
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

/// A random system over a program counter, a global process `T`, a process array `P`
/// and order comparisons between them and process identifiers.
fn random_program(seed: u64) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9E3779B97F4A7C15) | 1);
    let mut s = String::from(
        "type loc = A | B | C\nvar T : proc\narray P[proc] : proc\narray PC[proc] : loc\n",
    );
    let init = r.pick(&[
        "PC[i] = A && P[i] = i",
        "PC[i] = A && T <= i",
        "PC[i] = A && T <> i && P[i] = i",
        "PC[i] = A && P[i] <> i",
        "PC[i] = A",
    ]);
    s.push_str(&format!("init (i) {{ {init} }}\n"));
    let unsafe_ = r.pick(&[
        "PC[i] = C && PC[j] = C",
        "PC[i] = C && P[i] < i",
        "PC[i] = B && T < i && P[j] = i",
        "PC[i] = C && P[i] > P[j] && i < j",
        "PC[i] = C && T >= P[i]",
    ]);
    s.push_str(&format!("unsafe (i j) {{ {unsafe_} }}\n"));
    let cmps = [
        "T < p",
        "p < T",
        "T <= p",
        "P[p] < q",
        "q <= P[p]",
        "P[q] < P[p]",
        "P[p] >= T",
        "T = q",
        "P[p] <> p",
        "p < q",
    ];
    let alls = [
        "forall_other j. (j < p || PC[j] = A)",
        "forall_other j. P[j] < P[p]",
        "forall_other j. (T <> j || PC[j] <> C)",
        "forall_other j. p <= P[j]",
    ];
    let acts = [
        "T := p",
        "T := q",
        "P[p] := q",
        "P[p] := T",
        "T := P[q]",
        "P[p] := .",
        "T := .",
        "P[j] := case | P[j] < p : p | _ : P[j]",
    ];
    let locs = ["A", "B", "C"];
    for k in 0..2 + r.below(3) {
        let from = r.pick(&locs);
        let to = r.pick(&locs);
        let mut guard = vec![format!("PC[p] = {from}")];
        for _ in 0..r.below(3) {
            guard.push(r.pick(&cmps).to_string());
        }
        if r.below(3) == 0 {
            guard.push(r.pick(&alls).to_string());
        }
        let mut act = vec![format!("PC[p] := {to}")];
        if r.below(4) != 0 {
            act.push(r.pick(&acts).to_string());
        }
        s.push_str(&format!(
            "transition t{k} (p q)\nrequires {{ {} }}\n{{ {} }}\n",
            guard.join(" && "),
            act.join("; ")
        ));
    }
    s
}

fn random_run(seeds: std::ops::Range<u64>) -> (u32, u32) {
    random_run_with(seeds, None)
}

fn random_run_with(seeds: std::ops::Range<u64>, brab: Option<u8>) -> (u32, u32) {
    let mut errors = Vec::new();
    let (mut safe, mut unsafe_) = (0, 0);
    for seed in seeds {
        let src = random_program(seed);
        let sys = match fencer_cub::load("r.cub", &src, fencer_cub::Mode::Sc) {
            Ok(s) => s,
            Err(d) => panic!("seed {seed}: {}\n{src}", d.message),
        };
        let before = errors.len();
        // Small limits: a system the search does not finish decides nothing.
        let opts = Options {
            max_nodes: Some(1000),
            timeout: Some(Duration::from_secs(1)),
            brab,
            ..Default::default()
        };
        match compare_with(&format!("seed {seed}"), &sys, &opts, &mut errors) {
            Some(true) => safe += 1,
            Some(false) => unsafe_ += 1,
            None => {}
        }
        if errors.len() > before {
            errors.push(src);
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    eprintln!("{safe} SAFE and {unsafe_} UNSAFE random systems agree");
    (safe, unsafe_)
}

#[test]
fn random_systems_agree_with_explicit_instances() {
    let (safe, unsafe_) = random_run(0..60);
    assert!(safe >= 10 && unsafe_ >= 10, "{safe} SAFE, {unsafe_} UNSAFE");
}

/// More seeds: `cargo test --release -p fencer-cub --test proc_order -- --ignored`.
#[test]
#[ignore]
fn many_random_systems_agree_with_explicit_instances() {
    random_run(60..1000);
    random_run_with(0..300, Some(2));
}
