//! Models of herd's library on hand-built candidate executions, and error reports.

use fencer_cat::{EventSet, Execution, Model, Relation, RunOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const LIBDIR: &str = "/work/shared/herd-libdir";

fn libdir() -> Option<PathBuf> {
    let p = PathBuf::from(LIBDIR);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: {LIBDIR} is absent");
        None
    }
}

#[derive(Clone, Copy, PartialEq)]
enum K {
    R,
    W,
    F,
}

/// An event: its thread (`None` for an initial write), kind, location, and extra sets.
struct Ev {
    thread: Option<u32>,
    kind: K,
    loc: Option<u32>,
    sets: &'static [&'static str],
}

fn ev(thread: Option<u32>, kind: K, loc: Option<u32>, sets: &'static [&'static str]) -> Ev {
    Ev {
        thread,
        kind,
        loc,
        sets,
    }
}

fn init(loc: u32) -> Ev {
    ev(None, K::W, Some(loc), &[])
}

/// Builds the sets and relations herd gives a model: program order is the order of the
/// events within each thread.
fn execution(evs: &[Ev], rf: &[(usize, usize)]) -> Execution {
    let n = evs.len();
    let mut x = Execution::new(n);
    let set = |p: &dyn Fn(&Ev) -> bool| {
        EventSet::from_events(
            n,
            evs.iter().enumerate().filter(|(_, e)| p(e)).map(|(i, _)| i),
        )
    };
    x.sets.insert("R".into(), set(&|e| e.kind == K::R));
    x.sets.insert("W".into(), set(&|e| e.kind == K::W));
    x.sets.insert("F".into(), set(&|e| e.kind == K::F));
    x.sets.insert("IW".into(), set(&|e| e.thread.is_none()));
    // The architecture's sets, even when no event is in them.
    let mut names: BTreeSet<&str> = [
        "RLX", "REL", "ACQ", "ACQ_REL", "SC", "CON", "RMW", "A", "NA", "MFENCE",
    ]
    .into();
    for e in evs {
        names.extend(e.sets.iter().copied());
    }
    for name in names {
        x.sets.insert(name.into(), set(&|e| e.sets.contains(&name)));
    }
    let mut po = Relation::new(n);
    let mut int = Relation::new(n);
    let mut ext = Relation::new(n);
    for (i, a) in evs.iter().enumerate() {
        for (j, b) in evs.iter().enumerate() {
            match (a.thread, b.thread) {
                (Some(p), Some(q)) if p == q => {
                    int.insert(i, j);
                    if i < j {
                        po.insert(i, j);
                    }
                }
                (None, None) => {}
                _ => ext.insert(i, j),
            }
        }
    }
    x.rels.insert("po".into(), po);
    x.rels.insert("int".into(), int);
    x.rels.insert("ext".into(), ext);
    x.rels
        .insert("rf".into(), Relation::from_pairs(n, rf.iter().copied()));
    x.locations = evs.iter().map(|e| e.loc).collect();
    x
}

/// Runs `model` and returns, per outcome, whether it is consistent and its flags.
fn outcomes(m: &Model, x: &Execution, variants: &[&str]) -> Vec<(bool, Vec<String>)> {
    let variants: BTreeSet<String> = variants.iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    m.run(x, &variants, &mut |o| {
        out.push((o.consistent(), o.flags().to_vec()))
    })
    .unwrap_or_else(|e| panic!("{}", e.render()));
    out
}

fn consistent_count(m: &Model, x: &Execution) -> usize {
    outcomes(m, x, &[]).iter().filter(|(ok, _)| *ok).count()
}

fn load(dir: &Path, f: &str) -> Model {
    Model::load(&dir.join(f), dir).unwrap_or_else(|e| panic!("{}", e.render()))
}

/// Store buffering with both reads from the initial writes (the weak outcome) or with
/// T1's read from T0's write.
fn sb(weak: bool) -> Execution {
    let evs = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::R, Some(1), &[]),
        ev(Some(1), K::W, Some(1), &[]),
        ev(Some(1), K::R, Some(0), &[]),
    ];
    let rf: &[(usize, usize)] = if weak {
        &[(1, 3), (0, 5)]
    } else {
        &[(1, 3), (2, 5)]
    };
    execution(&evs, rf)
}

/// Message passing: T0 writes x then y, T1 reads y (from T0) then x (from the initial
/// write when `weak`).
fn mp(weak: bool, sets: [&'static [&'static str]; 4]) -> Execution {
    let evs = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), sets[0]),
        ev(Some(0), K::W, Some(1), sets[1]),
        ev(Some(1), K::R, Some(1), sets[2]),
        ev(Some(1), K::R, Some(0), sets[3]),
    ];
    let rf: &[(usize, usize)] = if weak {
        &[(3, 4), (0, 5)]
    } else {
        &[(3, 4), (2, 5)]
    };
    execution(&evs, rf)
}

#[test]
fn sb_under_sc_and_x86tso() {
    let Some(dir) = libdir() else { return };
    let sc = load(&dir, "sc.cat");
    let tso = load(&dir, "x86tso.cat");
    assert_eq!(tso.name(), "X86 TSO");
    assert_eq!(consistent_count(&sc, &sb(true)), 0);
    assert_eq!(consistent_count(&tso, &sb(true)), 1);
    assert_eq!(consistent_count(&sc, &sb(false)), 1);
    assert_eq!(consistent_count(&tso, &sb(false)), 1);
    // The failing check is named.
    let mut failed = Vec::new();
    sc.run(&sb(true), &BTreeSet::new(), &mut |o| {
        failed.push(o.failed_check().map(str::to_string))
    })
    .unwrap();
    assert_eq!(failed, vec![Some("sc".to_string())]);
}

#[test]
fn mp_under_sc_tso_and_x86tso() {
    let Some(dir) = libdir() else { return };
    let none: &[&str] = &[];
    for f in ["sc.cat", "x86tso.cat", "tso.cat"] {
        let m = load(&dir, f);
        assert_eq!(consistent_count(&m, &mp(true, [none; 4])), 0, "{f}");
        assert_eq!(consistent_count(&m, &mp(false, [none; 4])), 1, "{f}");
    }
}

#[test]
fn mfence_orders_store_buffering() {
    let Some(dir) = libdir() else { return };
    let tso = load(&dir, "x86tso.cat");
    let evs = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::F, None, &["MFENCE"]),
        ev(Some(0), K::R, Some(1), &[]),
        ev(Some(1), K::W, Some(1), &[]),
        ev(Some(1), K::F, None, &["MFENCE"]),
        ev(Some(1), K::R, Some(0), &[]),
    ];
    let x = execution(&evs, &[(1, 4), (0, 7)]);
    assert_eq!(consistent_count(&tso, &x), 0);
}

const RLX: &[&str] = &["RLX", "A"];
const REL: &[&str] = &["REL", "A"];
const ACQ: &[&str] = &["ACQ", "A"];
const NA: &[&str] = &["NA"];

#[test]
fn rc11_message_passing() {
    let Some(dir) = libdir() else { return };
    let rc11 = load(&dir, "rc11.cat");
    assert_eq!(rc11.name(), "C RC11");
    // Release/acquire: the weak outcome is forbidden.
    let ra = [RLX, REL, ACQ, RLX];
    assert_eq!(outcomes(&rc11, &mp(true, ra), &[]), vec![(false, vec![])]);
    assert_eq!(outcomes(&rc11, &mp(false, ra), &[]), vec![(true, vec![])]);
    // All relaxed: allowed.
    let rlx = [RLX; 4];
    assert_eq!(outcomes(&rc11, &mp(true, rlx), &[]), vec![(true, vec![])]);
    // Non-atomic data under a relaxed flag is a data race: undefined.
    let racy = [NA, RLX, RLX, NA];
    let o = outcomes(&rc11, &mp(true, racy), &[]);
    assert_eq!(o, vec![(true, vec!["*undef*".to_string()])]);
    // Non-atomic data under release/acquire is not racy.
    let fine = [NA, REL, ACQ, NA];
    assert_eq!(outcomes(&rc11, &mp(false, fine), &[]), vec![(true, vec![])]);
}

#[test]
fn rc11_generates_every_coherence_order() {
    let Some(dir) = libdir() else { return };
    let rc11 = load(&dir, "rc11.cat");
    let evs = [
        init(0),
        ev(Some(0), K::W, Some(0), RLX),
        ev(Some(1), K::W, Some(0), RLX),
        ev(Some(2), K::W, Some(0), RLX),
    ];
    let x = execution(&evs, &[]);
    let mut cos = Vec::new();
    rc11.run(&x, &BTreeSet::new(), &mut |o| {
        assert!(o.consistent());
        let co = o.rel("co").expect("co is bound").clone();
        cos.push(co);
    })
    .unwrap();
    assert_eq!(cos.len(), 6);
    let distinct: BTreeSet<Vec<(usize, usize)>> = cos.iter().map(|c| c.iter().collect()).collect();
    assert_eq!(distinct.len(), 6);
    for co in &cos {
        // A strict total order on the four writes, the initial write first.
        assert_eq!(co.len(), 6);
        assert!(co.contains(0, 1) && co.contains(0, 2) && co.contains(0, 3));
        assert!(co.is_acyclic());
    }
    // Two locations: the product of the orders per location.
    let evs = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), RLX),
        ev(Some(0), K::W, Some(1), RLX),
        ev(Some(1), K::W, Some(1), RLX),
        ev(Some(1), K::W, Some(0), RLX),
    ];
    let x = execution(&evs, &[]);
    assert_eq!(outcomes(&rc11, &x, &[]).len(), 4);
}

#[test]
fn coherence_violations_are_caught() {
    let Some(dir) = libdir() else { return };
    // CoRR: T1 reads the new value then the initial one.
    let evs = [
        init(0),
        ev(Some(0), K::W, Some(0), RLX),
        ev(Some(1), K::R, Some(0), RLX),
        ev(Some(1), K::R, Some(0), RLX),
    ];
    let x = execution(&evs, &[(1, 2), (0, 3)]);
    for f in ["rc11.cat", "sc.cat", "x86tso.cat", "tso.cat"] {
        let m = load(&dir, f);
        assert_eq!(consistent_count(&m, &x), 0, "{f}");
    }
    let ok = execution(&evs, &[(0, 2), (1, 3)]);
    for f in ["rc11.cat", "sc.cat", "x86tso.cat", "tso.cat"] {
        let m = load(&dir, f);
        assert_eq!(consistent_count(&m, &ok), 1, "{f}");
    }
}

#[test]
fn cos_opt_variant_prunes_early() {
    let Some(dir) = libdir() else { return };
    let rc11 = load(&dir, "rc11.cat");
    // `cos-opt` reads herd's `pco`: empty here, so the same coherence orders.
    let evs = [
        init(0),
        ev(Some(0), K::W, Some(0), RLX),
        ev(Some(1), K::W, Some(0), RLX),
    ];
    let x = execution(&evs, &[]);
    assert_eq!(outcomes(&rc11, &x, &["cos-opt"]).len(), 2);
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fencer-cat-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("stdlib.cat"), "stdlib\nlet po-loc = po & loc\n").unwrap();
    d
}

#[test]
fn unbound_name_is_reported_with_its_position() {
    let d = temp_dir("unbound");
    let f = d.join("bad.cat");
    std::fs::write(&f, "\"bad\"\nlet ok = po\nacyclic ok | no-such-rel as c\n").unwrap();
    let m = Model::load(&f, &d).unwrap();
    let err = m
        .run(&sb(true), &BTreeSet::new(), &mut |_| {})
        .expect_err("no-such-rel is unbound");
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!(
            "{}:3:14: error: unbound var: no-such-rel",
            f.display()
        )),
        "{shown}"
    );
    assert!(err.render().contains("^^^^^^^^^^^"), "{}", err.render());
    // `try` catches it, as in herd.
    std::fs::write(&f, "\"ok\"\nacyclic (try no-such-rel with 0) | po as c\n").unwrap();
    let m = Model::load(&f, &d).unwrap();
    let mut n = 0;
    m.run(&sb(true), &BTreeSet::new(), &mut |o| {
        assert!(o.consistent());
        n += 1
    })
    .unwrap();
    assert_eq!(n, 1);
    // An unused binding that would fail does not.
    std::fs::write(&f, "\"ok\"\nlet unused = no-such-rel\nacyclic po\n").unwrap();
    let m = Model::load(&f, &d).unwrap();
    m.run(
        &sb(true),
        &BTreeSet::new(),
        &mut |o| assert!(o.consistent()),
    )
    .unwrap();
}

#[test]
fn syntax_error_is_reported_with_its_position() {
    let d = temp_dir("syntax");
    let f = d.join("bad.cat");
    std::fs::write(&f, "\"bad\"\nlet x = (po |\n  rf\nacyclic x\n").unwrap();
    let err = Model::load(&f, &d).err().expect("syntax error");
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!(
            "{}:4:1: error: expected `)`, found `acyclic`",
            f.display()
        )),
        "{shown}"
    );
    // In an included file, the included file is named.
    std::fs::write(d.join("inc.cat"), "let y = po ;; rf\n").unwrap();
    std::fs::write(&f, "\"main\"\ninclude \"inc.cat\"\n").unwrap();
    let err = Model::load(&f, &d).err().expect("syntax error");
    assert!(
        err.to_string().starts_with(&format!(
            "{}:1:13: error: expected an expression",
            d.join("inc.cat").display()
        )),
        "{err}"
    );
    std::fs::write(&f, "\"main\"\ninclude \"missing.cat\"\n").unwrap();
    let err = Model::load(&f, &d).err().expect("missing include");
    assert!(
        err.to_string().contains(":2:1: error: cannot read"),
        "{err}"
    );
}

#[test]
fn language_corners() {
    let d = temp_dir("corners");
    let f = d.join("m.cat");
    let model = r#""corners"
enum Colour = 'red || 'green || 'blue
let c = 'green
let name = match c with 'red -> 0 || 'green -> po || _ -> rf end
let rec reach = po | reach; reach
let add_all s = let rec go x = match x with || {} -> 0 || e ++ r -> e | go r end in go s
let pairs = add_all {po, rf}
let (a, b) = (po, rf)
let notred = ~{'red}
let other = if 'blue in notred then a else 0
procedure check(r) =
  acyclic r as proc-check
end
call check(pairs)
if "mixed" let v = rf else let v = po end
flag ~empty v as v-nonempty
let f = fun (x, y) -> x & y
let t = f(po, po)
empty (reach \ po) as reach-is-po
empty (name \ po) as match-ok
empty (other \ po) as if-ok
empty (t \ po) as tuple-ok
forall x in {po, rf} do
  acyclic x as each
end
with q from {po, rf}
"#;
    std::fs::write(&f, model).unwrap();
    let m = Model::load(&f, &d).unwrap_or_else(|e| panic!("{}", e.render()));
    let x = sb(true);
    let o = outcomes(&m, &x, &[]);
    assert_eq!(
        o,
        vec![
            (true, vec!["v-nonempty".to_string()]),
            (true, vec!["v-nonempty".to_string()])
        ]
    );
    let mut seen = Vec::new();
    m.run(&x, &["MIXED".to_string()].into(), &mut |o| {
        seen.push((o.rel("v").unwrap().clone(), o.rel("q").unwrap().clone()));
    })
    .unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(&seen[0].0, &x.rels["rf"]);
    let opts = RunOptions {
        skip_checks: ["v-nonempty".to_string()].into(),
        ..RunOptions::default()
    };
    m.run_with(&x, &opts, &mut |o| assert!(o.flags().is_empty()))
        .unwrap();
}

/// Fills in, empty, the sets of the architecture that no event of the test belongs to.
fn with_arch_sets(m: &Model, mut x: Execution) -> Execution {
    let derived = [
        "loc",
        "id",
        "M",
        "Exp",
        "sm",
        "same-instance",
        "pco",
        "inv-domain",
    ];
    for name in m.free_names() {
        let known = x.sets.contains_key(name)
            || x.rels.contains_key(name)
            || derived.contains(&name)
            || fencer_cat::DEFAULT_EMPTY_RELS.contains(&name)
            || fencer_cat::DEFAULT_EMPTY_SETS.contains(&name);
        if !known {
            x.sets.insert(name.to_string(), EventSet::new(x.n));
        }
    }
    x
}

#[test]
fn aarch64_message_passing() {
    let Some(dir) = libdir() else { return };
    let m = load(&dir, "aarch64.cat");
    let none: &[&str] = &[];
    let plain = with_arch_sets(&m, mp(true, [none; 4]));
    assert_eq!(outcomes(&m, &plain, &[]), vec![(true, vec![])]);
    // Release store, acquire load: forbidden.
    let ra = with_arch_sets(&m, mp(true, [none, &["L"], &["A"], none]));
    assert_eq!(consistent_count(&m, &ra), 0);
    let ra_ok = with_arch_sets(&m, mp(false, [none, &["L"], &["A"], none]));
    assert_eq!(consistent_count(&m, &ra_ok), 1);
    // DMB SY on both sides: forbidden.
    let evs = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::F, None, &["DMB.SY"]),
        ev(Some(0), K::W, Some(1), &[]),
        ev(Some(1), K::R, Some(1), &[]),
        ev(Some(1), K::F, None, &["DMB.SY"]),
        ev(Some(1), K::R, Some(0), &[]),
    ];
    let fenced = with_arch_sets(&m, execution(&evs, &[(4, 5), (0, 7)]));
    assert_eq!(consistent_count(&m, &fenced), 0);
    // DMB ST then DMB LD is enough too; DMB ST alone is not.
    let evs_ld = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::F, None, &["DMB.ST"]),
        ev(Some(0), K::W, Some(1), &[]),
        ev(Some(1), K::R, Some(1), &[]),
        ev(Some(1), K::F, None, &["DMB.LD"]),
        ev(Some(1), K::R, Some(0), &[]),
    ];
    let x = with_arch_sets(&m, execution(&evs_ld, &[(4, 5), (0, 7)]));
    assert_eq!(consistent_count(&m, &x), 0);
    let evs_st = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::F, None, &["DMB.ST"]),
        ev(Some(0), K::W, Some(1), &[]),
        ev(Some(1), K::R, Some(1), &[]),
        ev(Some(1), K::R, Some(0), &[]),
    ];
    let x = with_arch_sets(&m, execution(&evs_st, &[(4, 5), (0, 6)]));
    assert_eq!(consistent_count(&m, &x), 1);
    // The deprecated-shareability flag.
    let evs_ish = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::F, None, &["DMB.ISH"]),
        ev(Some(0), K::W, Some(1), &[]),
        ev(Some(1), K::R, Some(1), &[]),
        ev(Some(1), K::R, Some(0), &[]),
    ];
    let x = with_arch_sets(&m, execution(&evs_ish, &[(4, 5), (2, 6)]));
    assert_eq!(
        outcomes(&m, &x, &[]),
        vec![(
            true,
            vec!["Shareability-argument-for-DMB-is-deprecated".to_string()]
        )]
    );
}

/// `cross` of herd's `cross.cat` runs natively; a copy with a renamed variable runs
/// interpreted; both give the same coherence orders.
#[test]
fn native_cross_matches_the_interpreted_one() {
    let Some(dir) = libdir() else { return };
    let d = std::env::temp_dir().join(format!("fencer-cat-{}-cross", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(dir.join("stdlib.cat"), d.join("stdlib.cat")).unwrap();
    let cross = std::fs::read_to_string(dir.join("cross.cat")).unwrap();
    let renamed = cross.replace("ys", "zs");
    assert_ne!(cross, renamed);
    let model = "\"m\"\ninclude \"mycross.cat\"\nwith co from generate_cos(co0)\nacyclic po | rf | co as sc\n";
    std::fs::write(d.join("m.cat"), model).unwrap();
    let evs = [
        init(0),
        init(1),
        ev(Some(0), K::W, Some(0), &[]),
        ev(Some(0), K::W, Some(1), &[]),
        ev(Some(1), K::W, Some(1), &[]),
        ev(Some(1), K::W, Some(0), &[]),
        ev(Some(2), K::W, Some(0), &[]),
        ev(Some(2), K::R, Some(1), &[]),
    ];
    let x = execution(&evs, &[(3, 7)]);
    let mut results = Vec::new();
    for text in [&cross, &renamed] {
        std::fs::write(d.join("mycross.cat"), text).unwrap();
        let m = Model::load(&d.join("m.cat"), &d).unwrap_or_else(|e| panic!("{}", e.render()));
        let mut cos = Vec::new();
        m.run(&x, &BTreeSet::new(), &mut |o| {
            cos.push((
                o.consistent(),
                o.rel("co").unwrap().iter().collect::<Vec<_>>(),
            ))
        })
        .unwrap();
        results.push(cos);
    }
    assert_eq!(results[0].len(), 12);
    assert_eq!(results[0], results[1]);
}

/// A name bound by a conditional to a `with` variable in one branch and to a constant in
/// the other depends on the `with` whichever branch runs.
#[test]
fn conditional_bindings_follow_their_branch() {
    let d = temp_dir("cond");
    let f = d.join("m.cat");
    let model = "\"m\"
with c from {po, rf}
if \"mixed\" let x = c else let x = po end
let y = x
empty y \\ c as same
";
    std::fs::write(&f, model).unwrap();
    let m = Model::load(&f, &d).unwrap_or_else(|e| panic!("{}", e.render()));
    let x = sb(true);
    assert_eq!(
        outcomes(&m, &x, &["mixed"]),
        vec![(true, vec![]), (true, vec![])]
    );
    let o = outcomes(&m, &x, &[]);
    assert_eq!(o.iter().filter(|(ok, _)| *ok).count(), 1);
}
