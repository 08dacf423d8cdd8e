//! Property test: DVE models mutated token by token (a token deleted, duplicated, swapped
//! with another, replaced by a DVE keyword or operator, or the text cut short) never panic
//! the parser, the semantic checker or the first steps of exploration, and every error
//! names the file, a line and a column inside the text. The models are BEEM's and
//! DIVINE's (`../shared/dve`) and the examples in `examples/dve`.
//!
//! `FENCER_CASES=N` sets the number of mutated models (default 500); the soak:
//! `FENCER_CASES=5000 cargo test --release -p fencer-dve --test mutations`.

use proptest::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn dve_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            dve_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "dve") {
            out.push(p);
        }
    }
}

/// Each model as tokens: words, numbers, operators (two-character ones whole), and the
/// whitespace between them, so that joining them gives the model back.
fn models() -> &'static [Vec<String>] {
    static MODELS: OnceLock<Vec<Vec<String>>> = OnceLock::new();
    MODELS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        dve_files(&root.join("examples/dve"), &mut files);
        dve_files(&root.join("../shared/dve"), &mut files);
        files.sort();
        files
            .iter()
            .map(|f| tokens(&std::fs::read_to_string(f).unwrap()))
            .collect()
    })
}

fn tokens(src: &str) -> Vec<String> {
    const TWO: &[&str] = &[
        "->", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "..", "/*", "*/", "//",
    ];
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let s = i;
        let class = |x: char| {
            if x.is_alphanumeric() || x == '_' {
                0
            } else if x.is_whitespace() {
                1
            } else {
                2
            }
        };
        match class(c[i]) {
            k @ (0 | 1) => {
                while i < c.len() && class(c[i]) == k {
                    i += 1;
                }
            }
            _ => {
                let two: String = c[i..(i + 2).min(c.len())].iter().collect();
                i += if TWO.contains(&two.as_str()) { 2 } else { 1 };
            }
        }
        out.push(c[s..i].iter().collect());
    }
    out
}

const VOCABULARY: &[&str] = &[
    "process", "state", "init", "trans", "guard", "sync", "effect", "system", "async", "property",
    "channel", "byte", "int", "const", "accept", "commit", "assert", "for", "in", "->", "?", "!",
    "{", "}", "(", ")", "[", "]", ";", ",", ".", "=", "==", "/", "%", "-", "0", "1", "255",
    "32768", "x", "P_0", "and", "or", "not", "imply", "\"", "/*",
];

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    Replace(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        at.prop_map(Mutation::Delete),
        at.prop_map(Mutation::Duplicate),
        (at, at).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (at, 0..VOCABULARY.len()).prop_map(|(a, w)| Mutation::Replace(a, w)),
        at.prop_map(Mutation::Truncate),
    ]
}

fn apply(model: &[String], ms: &[Mutation]) -> String {
    let mut t = model.to_vec();
    for m in ms {
        if t.is_empty() {
            break;
        }
        let n = t.len();
        match *m {
            Mutation::Delete(i) => {
                t.remove(i % n);
            }
            Mutation::Duplicate(i) => t.insert(i % n, t[i % n].clone()),
            Mutation::Swap(i, j) => t.swap(i % n, j % n),
            Mutation::Replace(i, w) => t[i % n] = VOCABULARY[w].to_string(),
            Mutation::Truncate(i) => t.truncate(i % n),
        }
    }
    t.concat()
}

fn cases() -> u32 {
    std::env::var("FENCER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(500)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_models_load_or_fail_with_a_position(
        which in any::<usize>(),
        ms in prop::collection::vec(mutation(), 1..4),
    ) {
        let all = models();
        prop_assert!(all.len() >= 6, "the models are missing");
        let text = apply(&all[which % all.len()], &ms);
        let r = fencer_dve::load("m.dve", &text, &HashMap::new());
        match r {
            Err(d) => {
                let lines = text.split('\n').count() as u32;
                prop_assert_eq!(&d.file, "m.dve");
                prop_assert!(d.line >= 1 && d.line <= lines, "line {} of {}: {}", d.line, lines, d.message);
                prop_assert!(d.col >= 1, "column {}: {}", d.col, d.message);
                prop_assert!(d.render(&text).contains("m.dve:"));
            }
            Ok(sys) => {
                // A model that loads can be explored: the first few states' successors
                // (run-time errors are answers, not panics).
                let mut buf = Vec::new();
                let mut todo = vec![sys.initial.clone()];
                let mut seen = 0;
                while let Some(s) = todo.pop() {
                    seen += 1;
                    if seen > 30 {
                        break;
                    }
                    sys.successors(&s, &mut buf, &mut |_, r| {
                        if let Ok(t) = r {
                            todo.push(t.to_vec());
                        }
                    });
                    let _ = sys.failed_assertion(&s);
                }
            }
        }
    }
}
