//! The DVE parser on every model of `../shared/dve/` (BEEM's instances and property files,
//! DIVINE's test models, the thesis's models), and on broken input: every error names its
//! line and column and says what was expected. Needs `../shared` for the corpus part
//! (skipped with a message without it).

use fencer_dve::parse;
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve");
    d.is_dir().then_some(d)
}

fn dve_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            dve_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "dve") {
            out.push(p);
        }
    }
}

#[test]
fn every_corpus_model_parses() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let mut files = Vec::new();
    dve_files(&dir, &mut files);
    files.sort();
    assert!(files.len() > 300, "{}", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        if let Err(d) = parse(&f.display().to_string(), &src) {
            failures.push(d.render(&src));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} files fail:\n{}",
        failures.len(),
        files.len(),
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn error(src: &str) -> (u32, u32, String) {
    let d = parse("m.dve", src).expect_err("must not parse");
    (d.line, d.col, d.message)
}

#[test]
fn errors_name_line_column_and_what_was_expected() {
    let cases: &[(&str, u32, u32, &str)] = &[
        ("byte x = 0\nsystem async;", 2, 1, "expected `;` after a declaration"),
        ("process P { state a; init a; trans a -> b { guard x > ; }; }\nsystem async;", 1, 55, "expected an expression"),
        ("process P { state a; init a; trans a -> a { effect x = 1 }; }\nsystem async;", 1, 58, "expected `;` after the effect"),
        ("process P { state a; init a; trans a -> a { effect x = 1; guard y; }; }\nsystem async;", 1, 59, "expected `guard`, `sync`, `effect` (in that order)"),
        ("byte x;\n", 2, 1, "expected `system async;`"),
        ("byte x;\nsystem async; byte y;", 2, 15, "expected the end of the model"),
        ("byte x = 99999999999;\nsystem async;", 1, 10, "is not a number"),
        ("byte x = 1 $ 2;\nsystem async;", 1, 12, "unexpected character `$`"),
        ("/* no end\nsystem async;", 1, 1, "unterminated comment"),
        ("process P { state a; init a; trans a -> a { sync c; }; }\nsystem async;", 1, 51, "expected `!` or `?`"),
        ("byte byte;\nsystem async;", 1, 6, "expected a variable name"),
        ("process { }\nsystem async;", 1, 9, "expected a process name"),
        ("system synchronous;", 1, 8, "expected `async` or `sync`"),
        ("process P { stat a; }\nsystem async;", 1, 13, "expected a declaration, `state`"),
    ];
    for &(src, line, col, msg) in cases {
        let (l, c, m) = error(src);
        assert!(m.contains(msg), "{src:?}: {m}");
        assert_eq!((l, c), (line, col), "{src:?}: {m}");
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "byte x = {}1{};\nsystem async;",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let (_, _, m) = error(&deep);
    assert!(m.contains("nested deeper"), "{m}");
    let neg = format!("byte x = {}1;\nsystem async;", "-".repeat(100_000));
    assert!(error(&neg).2.contains("nested deeper"));
    let chain = format!("byte x = 1{};\nsystem async;", " + 1".repeat(100_000));
    assert!(error(&chain).2.contains("more than 1024 operators"));
    let chain = format!("byte x = 1{};\nsystem async;", " + 1".repeat(1000));
    parse("m.dve", &chain).unwrap();
}

#[test]
fn the_language() {
    let src = "
        const byte N = 3;
        input int K = 2;
        byte a[N] = {1, 2, 3}, b;
        int c = -5;
        channel ch, d; channel {byte, int} buf[2];
        process P {
            byte x = 0;
            state s, t, u;
            init s;
            accept t;
            commit u;
            assert s: x < 3, t: a[x] != 0;
            trans
                s -> t { guard x < N && P.s or not (x == 1) imply true; sync ch!x; effect x = x + 1, a[x] = 2; },
                t -> u { sync buf?{x, b}; },
                u -> s { guard Q->y[1] >= 0; };
        }
        process Q { int y[2]; state q; init q; trans q -> q { sync ch?b; }; }
        process T(key i) { state z; init z; }
        process T(1);
        system async property P;";
    let m = parse("m.dve", src).unwrap();
    assert_eq!(m.items.len(), 12);
    assert_eq!(m.property.as_ref().unwrap().name, "P");
    assert!(!m.synchronous);
}

/// Broken models never panic the parser: every corpus model cut short, with bytes deleted,
/// and with DVE tokens spliced in at random places (seeded, so a failure reproduces).
#[test]
fn mutated_models_never_panic() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let mut files = Vec::new();
    dve_files(&dir, &mut files);
    files.sort();
    let splices = [
        "(", ")", "{", "}", "[", "]", ";", ",", "->", "..", "?", "!", "\"", "/*", "process",
        "trans", "guard", "sync", "effect", "system", "for", "-", "not", "1", "x", "P.",
    ];
    let mut rng = fencer_testgen::Rng::new(11);
    let mut n = 0;
    for f in files.iter().step_by(3) {
        let src = std::fs::read_to_string(f).unwrap();
        for _ in 0..20 {
            let mut m = src.clone().into_bytes();
            match rng.below(3) {
                0 => m.truncate(rng.below(m.len() as u64 + 1) as usize),
                1 => {
                    let at = rng.below(m.len() as u64) as usize;
                    let len = (rng.below(20) as usize).min(m.len() - at);
                    m.drain(at..at + len);
                }
                _ => {
                    let at = rng.below(m.len() as u64 + 1) as usize;
                    let s = rng.pick(&splices);
                    m.splice(at..at, s.bytes());
                }
            }
            let text = String::from_utf8_lossy(&m).into_owned();
            let r = std::panic::catch_unwind(|| parse("m.dve", &text).map(|_| ()));
            assert!(r.is_ok(), "{} mutated: panic", f.display());
            if let Ok(Err(d)) = r {
                assert!(d.line >= 1 && d.col >= 1);
            }
            n += 1;
        }
    }
    assert!(n > 1000, "{n}");
}
