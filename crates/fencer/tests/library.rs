//! The library as another program uses it: every input kind from text, the same answers
//! as from the file, and options that do not apply refused by name.

use fencer::{check, Engine, Model, Options, Verdict};
use std::path::Path;

fn example(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(rel)
}

/// A file and its text given as `source` get the same verdict and counts.
#[test]
fn text_and_file_agree_on_every_kind() {
    for (rel, model) in [
        ("sb.fen", Model::Tso),
        ("mp.fen", Model::Pso),
        ("MP.litmus", Model::Pso),
        ("dve/peterson.dve", Model::Sc),
        ("dve/peterson.dve", Model::Pso1),
        ("cub/lock.cub", Model::Sc),
    ] {
        let path = example(rel);
        let src = std::fs::read_to_string(&path).unwrap();
        // One worker where workers apply (.cub's engine has none), so counts compare.
        let jobs = (!rel.ends_with(".cub")).then_some(1);
        let mut from_file = Options::file(&path).model(model);
        from_file.jobs = jobs;
        let mut from_text = Options::text(&path, src).model(model);
        from_text.jobs = jobs;
        let (a, b) = (check(from_file).unwrap(), check(from_text).unwrap());
        assert_eq!(a.verdict, b.verdict, "{rel}");
        let (ra, rb) = (a.report.unwrap(), b.report.unwrap());
        assert_eq!(ra.executions, rb.executions, "{rel}");
        assert_eq!(ra.stats.states, rb.stats.states, "{rel}");
    }
}

#[test]
fn verdicts_by_model() {
    let sb = std::fs::read_to_string(example("sb.fen")).unwrap();
    for (model, want) in [
        (Model::Sc, Verdict::Safe),
        (Model::Tso, Verdict::Violation),
        (Model::Pso, Verdict::Violation),
    ] {
        let o = check(Options::text("sb.fen", sb.clone()).model(model)).unwrap();
        assert_eq!(o.verdict, want, "{model:?}");
        assert_eq!(o.exit_code(), want.exit_code() as u8);
        // The reference explorer, the oracle, agrees.
        let r = check(
            Options::text("sb.fen", sb.clone())
                .model(model)
                .engine(Engine::Reference),
        )
        .unwrap();
        assert_eq!(r.verdict, want, "reference, {model:?}");
    }
}

/// A field set away from its default counts as given: set where it does not apply, it is
/// refused with the option's name, as on the command line.
#[test]
fn options_that_do_not_apply_are_refused() {
    let sb = std::fs::read_to_string(example("sb.fen")).unwrap();
    type Set = fn(&mut Options);
    let cases: [(&str, Set); 5] = [
        ("--reach", |o| o.reach = Some("x == 1".into())),
        ("--deadlock", |o| o.deadlock = true),
        ("--invariant", |o| o.invariant = true),
        ("--buffer-bound", |o| o.buffer_bound = 3),
        ("-I", |o| o.include.push("inc".into())),
    ];
    for (flag, set) in cases {
        let mut o = Options::text("sb.fen", sb.clone());
        set(&mut o);
        let e = check(o).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{flag}");
        assert!(e.message.contains(flag), "{flag}: {}", e.message);
    }
    let mut dve = Options::file(example("dve/peterson.dve"));
    dve.max_executions = Some(10);
    assert!(check(dve).unwrap_err().message.contains("--max-executions"));
}

#[test]
fn bad_input_is_an_error_with_its_position() {
    let e = check(Options::text("bad.fen", "shared x = ;")).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let d = e.diagnostic.expect("a position");
    assert_eq!((d.file.as_str(), d.line), ("bad.fen", 1));
    let e = check(Options::file("notes.txt")).unwrap_err();
    assert!(e.message.contains("does not know this kind of file"));
}

/// The bug at a spin loop's first iteration: depth-first search alone would run the
/// loop to `--max-depth` (100,000 events) before reversing the race at its start.
const SPINNER: &str = "shared go = 0;
thread spinner { k = 0; while (go == 0) { k = k + 2; } assert(k != 2); }
thread starter { go = 1; }";

#[test]
fn the_first_bug_first() {
    for jobs in [1, 2] {
        let mut o = Options::text("spinner.fen", SPINNER);
        o.jobs = Some(jobs);
        o.timeout = Some(60.0);
        let t = std::time::Instant::now();
        let r = check(o).unwrap();
        assert_eq!(r.verdict, Verdict::Violation, "jobs {jobs}: {}", r.output);
        assert!(
            r.output.contains("assertion `k != 2` failed"),
            "{}",
            r.output
        );
        // Generous for a loaded debug build; it takes milliseconds.
        assert!(t.elapsed().as_secs() < 20, "jobs {jobs}: {:?}", t.elapsed());
    }
}

/// Without a bug, shallow rounds change nothing but the note: the last round is the
/// search at `--max-depth`, with the executions `--all` (which does not deepen) explores.
#[test]
fn deepening_explores_the_same_tree() {
    // p runs 400 events: past the first round's bound of 256.
    let long = "shared x = 0, y = 0;
thread p { i = 0; while (i < 400) { x = i; i = i + 1; } }
thread q { r = y; s = x; }";
    let deep = check(Options::text("long.fen", long)).unwrap();
    let mut all = Options::text("long.fen", long);
    all.all = true;
    let all = check(all).unwrap();
    assert_eq!(deep.verdict, Verdict::Safe, "{}", deep.output);
    let (d, a) = (deep.report.unwrap(), all.report.unwrap());
    assert_eq!(d.executions, a.executions);
    assert_eq!(d.final_states, a.final_states);
    assert!(
        d.notes.iter().any(|n| n.contains("shallow first")),
        "{:?}",
        d.notes
    );
    assert!(a.notes.is_empty(), "{:?}", a.notes);
}

/// `--keep-going` with `--deadlock` explores everything and, a deadlock found, answers
/// VIOLATION (it once answered SAFE, counting only errors and goals).
#[test]
fn kept_going_deadlocks_are_violations() {
    let mut o = Options::file(example("dve/philosophers.dve"));
    o.deadlock = true;
    o.keep_going = true;
    let out = check(o).unwrap();
    assert_eq!(out.verdict, Verdict::Violation);
    assert!(out.output.contains("1 are deadlocks"), "{}", out.output);
}

/// A DVE search across ranks (threads here, MPI's processes under `mpirun`): the same
/// verdict and counts as one process, every rank's share reported; and what does not
/// run across ranks is refused.
#[test]
fn ranks_answer_as_one_process() {
    use fencer_explicit::dist::{Ranks, Threads};
    let one = check(Options::file(example("dve/peterson.dve")).model(Model::Pso1)).unwrap();
    let outs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = Threads::ranks(2)
            .into_iter()
            .map(|t| {
                s.spawn(move || {
                    let mut o = Options::file(example("dve/peterson.dve")).model(Model::Pso1);
                    o.ranks = Some(Ranks::new(t));
                    check(o).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for o in &outs {
        assert_eq!(o.verdict, one.verdict);
        let (r, r1) = (o.report.as_ref().unwrap(), one.report.as_ref().unwrap());
        assert_eq!(r.stats.states, r1.stats.states);
        assert_eq!(r.stats.transitions, r1.stats.transitions);
        assert_eq!(r.stats.ranks.as_ref().map(Vec::len), Some(2));
        assert!(
            o.output.contains("explicit-state on 2 ranks"),
            "{}",
            o.output
        );
    }
    let mut sb = Options::file(example("sb.fen"));
    sb.ranks = Some(Ranks::new(Threads::ranks(2).swap_remove(0)));
    let e = check(sb).expect_err("refused");
    assert!(e.message.contains("DVE models only"), "{}", e.message);
}
