//! The views of four counterexamples, held to snapshots (`expect-test`; rerun with
//! `UPDATE_EXPECT=1 cargo test -p fencer-view` after a deliberate change and look at the
//! files in `tests/snapshots/`, which open as they are in a browser or in Graphviz):
//! store buffering under TSO, message passing under PSO, a C deadlock and a C assertion
//! with a long trace. Every SARIF log is validated against the SARIF 2.1.0 JSON schema;
//! the HTML report is loaded in headless Chromium where one is installed.

use expect_test::expect_file;
use fencer_memory::ModelKind;
use fencer_report::Report;
use fencer_view::{replay, replay_schedule, Execution, Limits, TraceStep};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Loads a program as `fencer check` does (spin-loop rewrite included), with the path
/// relative to this crate so that snapshots name files the same everywhere.
fn load(path: &str, model: ModelKind) -> fencer_ir::Program {
    let mut prog = if path.ends_with(".c") {
        fencer_c::load(Path::new(path), &fencer_c::CompileOptions::default(), model)
            .unwrap_or_else(|e| panic!("{path}: {e}"))
    } else {
        let src = std::fs::read_to_string(path).unwrap();
        fencer_text::parse_program(path, &src).unwrap_or_else(|d| panic!("{}", d.render(&src)))
    };
    fencer_ir::spin::spin_assume(&mut prog);
    prog
}

/// The engine's counterexample, replayed.
fn found(prog: &fencer_ir::Program, model: ModelKind) -> (Report, Execution<'_>) {
    let mut report = fencer_dpor::explore(prog, model, &fencer_dpor::Options::default());
    // Times vary from run to run; the snapshots keep the rest.
    report.stats.elapsed_ms = 0;
    report.elapsed_ms = 0;
    report.stats.peak_rss_kib = None;
    let c = report
        .counterexample
        .clone()
        .expect("the program has a counterexample");
    let x = replay_schedule(prog, model, Limits::default(), &c.schedule).expect("it replays");
    let again = x.cex.as_ref().expect("the replay ends in the violation");
    assert_eq!(again, &c, "the replay gives the same counterexample");
    (report, x)
}

fn sources(x: &Execution) -> Vec<(String, String)> {
    let mut files: Vec<String> = x.lines().into_iter().map(|l| l.file).collect();
    files.sort();
    files.dedup();
    files
        .into_iter()
        .filter_map(|f| std::fs::read_to_string(&f).ok().map(|t| (f, t)))
        .collect()
}

fn sarif_validator() -> jsonschema::Validator {
    // The committed schema is the OASIS SARIF 2.1.0 schema as published. One of its
    // patterns (`language`) has an unescaped `]`, which ECMA-262 accepts outside a class
    // but the validator's regex check rejects; escaping it changes no match.
    let text = std::fs::read_to_string("tests/sarif-schema-2.1.0.json").unwrap();
    let text = text.replace(r#"{2}]?$"#, r#"{2}\\]?$"#);
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).expect("the SARIF schema compiles")
}

fn check_sarif(text: &str) {
    let v = sarif_validator();
    let log: serde_json::Value = serde_json::from_str(text).unwrap();
    let errors: Vec<String> = v
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF invalid:\n{}", errors.join("\n"));
}

/// Every view of one counterexample, each against its snapshot.
fn snapshot(name: &str, path: &str, model: ModelKind) {
    let prog = load(path, model);
    let (report, x) = found(&prog, model);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    expect_file![dir.join(format!("{name}.svg"))].assert_eq(&fencer_view::svg::render(&x));
    expect_file![dir.join(format!("{name}.dot"))].assert_eq(&fencer_view::dot::render(&x));
    let c = report.counterexample.as_ref().unwrap();
    let sarif = fencer_view::sarif::render(&prog.name, model.name(), &[c]);
    check_sarif(&sarif);
    expect_file![dir.join(format!("{name}.sarif.json"))].assert_eq(&sarif);
    let html = fencer_view::html::render(&x, Some(&report), &sources(&x));
    expect_file![dir.join(format!("{name}.html"))].assert_eq(&html);
}

#[test]
fn store_buffering_under_tso() {
    snapshot("sb-tso", "../../examples/sb.fen", ModelKind::Tso);
}

#[test]
fn message_passing_under_pso() {
    snapshot("mp-pso", "../../examples/mp.fen", ModelKind::Pso);
}

#[test]
fn c_deadlock() {
    snapshot(
        "c-deadlock",
        "../fencer-c/tests/c/deadlock.c",
        ModelKind::Sc,
    );
}

#[test]
fn c_assertion_with_a_long_trace() {
    snapshot(
        "c-semaphore-race-tso",
        "../fencer-c/tests/c/semaphore_race.c",
        ModelKind::Tso,
    );
}

/// The README's picture is what fencer draws today: exactly what
/// `fencer check examples/sb.fen --model tso --view docs/sb-tso.svg` writes at the root.
#[test]
fn readme_picture_is_current() {
    let src = std::fs::read_to_string("../../examples/sb.fen").unwrap();
    let mut prog = fencer_text::parse_program("examples/sb.fen", &src).unwrap();
    fencer_ir::spin::spin_assume(&mut prog);
    let (_, x) = found(&prog, ModelKind::Tso);
    let svg = fencer_view::svg::render(&x);
    expect_file!["../../../docs/sb-tso.svg"].assert_eq(&svg);
}

#[test]
fn the_svg_shows_buffers_arrows_and_the_verdict() {
    let prog = load("../../examples/sb.fen", ModelKind::Tso);
    let (_, x) = found(&prog, ModelKind::Tso);
    let svg = fencer_view::svg::render(&x);
    for want in [
        ">buf(p)<",
        ">buf(q)<",
        "class=\"arrow fr\"",
        "L10 store x=1 (buffered)",
        "final state satisfies",
        "id=\"row-6\"",
    ] {
        assert!(svg.contains(want), "missing {want}");
    }
    // The reads see 0 while both stores sit in the buffers: the buffer columns say so.
    assert!(svg.contains(">x=1<"));
}

#[test]
fn robustness_cycle_is_highlighted() {
    let prog = load("../../examples/mp.fen", ModelKind::Pso);
    let (_, mut x) = found(&prog, ModelKind::Pso);
    x.highlight = vec![0, 1, 3, 4];
    let svg = fencer_view::svg::render(&x);
    assert!(svg.contains("ev buf cycle"));
    assert!(fencer_view::dot::render(&x).contains("penwidth=2.5"));
}

#[test]
fn sarif_of_a_clean_run_is_valid_and_empty() {
    let s = fencer_view::sarif::render("sb", "sc", &[]);
    check_sarif(&s);
    assert!(s.contains("\"results\": []"));
}

#[test]
fn a_schedule_that_does_not_fit_says_which_step_and_why() {
    let prog = load("../../examples/sb.fen", ModelKind::Tso);
    let steps = vec![
        TraceStep::Thread(0),
        TraceStep::Update(1, None),
        TraceStep::Thread(0),
    ];
    let e = replay(&prog, ModelKind::Tso, Limits::default(), &steps)
        .err()
        .unwrap();
    assert_eq!(e.step, 2);
    assert!(e.why.contains("store buffers are empty"), "{e}");
    let steps = vec![
        TraceStep::Thread(0),
        TraceStep::Thread(0),
        TraceStep::Thread(0),
    ];
    let e = replay(&prog, ModelKind::Tso, Limits::default(), &steps)
        .err()
        .unwrap();
    assert_eq!(e.step, 3);
    assert!(e.why.contains("p has finished"), "{e}");
    let e = replay(
        &prog,
        ModelKind::Tso,
        Limits::default(),
        &[TraceStep::Thread(7)],
    )
    .err()
    .unwrap();
    assert!(e.why.contains("2 threads"), "{e}");
    let prog = load("../../examples/mp.fen", ModelKind::Pso);
    let steps = vec![
        TraceStep::Thread(0),
        TraceStep::Update(0, Some("flag".into())),
    ];
    let e = replay(&prog, ModelKind::Pso, Limits::default(), &steps)
        .err()
        .unwrap();
    assert!(e.why.contains("no buffered store to flag"), "{e}");
    // An unfinished schedule is no violation, and says so.
    let x = replay(&prog, ModelKind::Pso, Limits::default(), &steps[..1]).unwrap();
    assert!(x.cex.is_none() && x.enabled_at_end > 0);
}

/// The page loads in a real browser without console errors, its script runs (the last
/// row is highlighted and the state panel is filled), and a screenshot is taken.
#[test]
fn html_report_loads_in_headless_chromium() {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("skipped: no chromium installed (apt-get install chromium)");
        return;
    };
    let prog = load("../../examples/sb.fen", ModelKind::Tso);
    let (report, x) = found(&prog, ModelKind::Tso);
    let html = fencer_view::html::render(&x, Some(&report), &sources(&x));
    let dir = std::env::temp_dir().join(format!("fencer-view-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();
    let url = format!("file://{}", page.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--enable-logging=stderr",
        "--v=0",
    ];
    // `timeout`: a browser that hangs fails the test instead of stalling the suite.
    let out = Command::new("timeout")
        .args(["120", browser])
        .args(common)
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed: {:?}", out.status);
    let dom = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
    assert!(dom.contains("<svg"), "no timeline in the page:\n{dom}");
    assert!(
        dom.contains("class=\"row current\" id=\"row-6\""),
        "the script did not run"
    );
    assert!(
        dom.contains("store buffers (oldest first)"),
        "no state panel"
    );
    // The slider at another step: that row, that event, that state.
    let out = Command::new("timeout")
        .args(["120", browser])
        .args(common)
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg("--dump-dom")
        .arg(format!("{url}#step=2"))
        .output()
        .expect("run chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("class=\"row current\" id=\"row-2\""),
        "step 2 not shown"
    );
    assert!(dom.contains("step 2 of 6: p"), "no event line for step 2");
    assert!(dom.contains("p (running, at line 11)") || dom.contains("p (finished)"));
    let shot = dir.join("shot.png");
    let out = Command::new("timeout")
        .args(["120", browser])
        .args(common)
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,900")
        .arg(&url)
        .output()
        .expect("run chromium");
    assert!(out.status.success());
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    let _ = std::fs::remove_dir_all(&dir);
}
