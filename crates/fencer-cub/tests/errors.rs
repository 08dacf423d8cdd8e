//! Every error path of the front-end names file:line:col, shows the line, and says what
//! was expected; and no input makes it panic.

mod common;

use proptest::prelude::*;

fn err(src: &str) -> fencer_text::Diagnostic {
    match fencer_cub::load("t.cub", src, fencer_cub::Mode::Sc) {
        Ok(_) => panic!("accepted:\n{src}"),
        Err(d) => d,
    }
}

const BASE: &str = "type loc = A | B\narray PC[proc] : loc\nvar X : int\n";

#[test]
fn error_messages() {
    let cases: &[(&str, &str, u32, u32)] = &[
        ("(* open", "unterminated comment", 1, 1),
        ("var X : int\n$", "unexpected character `$`", 2, 1),
        ("var x : int", "expected a variable name (capitalised)", 1, 5),
        ("var X : foo\nunsafe () { X = 1 }", "unknown type `foo`", 1, 9),
        ("array A : int", "expected `[proc]`", 1, 9),
        ("array A[int] : int", "expected `proc`", 1, 9),
        ("var X : int\nunsafe () { X = }", "expected a term", 2, 17),
        ("var X : int\nunsafe () { X }", "expected a comparison", 2, 15),
        ("var X : int\nunsafe () { Y = 1 }", "unknown variable `Y`", 2, 13),
        ("var X : int\nunsafe () { X = i }", "unknown process variable `i`", 2, 17),
        ("type t = A\nvar X : t\nunsafe () { X < A }", "values of t are not ordered", 3, 13),
        ("var X : bool\nunsafe () { X = 1 }", "cannot compare", 2, 13),
        ("var X : int\nunsafe () { X = #1 }", "needs a `number_procs` line", 2, 17),
        ("number_procs 2\nvar X : proc\nunsafe () { X = #3 }", "beyond `number_procs 2`", 3, 17),
        ("var X : int\nnumber_procs 2", "must come first", 2, 1),
        ("var X : int\nvar X : int\nunsafe () { X = 1 }", "declared twice", 2, 1),
        ("var X : int", "expected an `unsafe", 1, 12),
        ("var X : int\nunsafe () { X = 1 }\ntransition t () { Y := 1 }", "unknown variable `Y`", 3, 19),
        ("const K : int\nunsafe () { K = 1 }\ntransition t () { K := 1 }", "is a constant", 3, 19),
        ("var X : int\nunsafe () { X = 1 }\ntransition t () { X := 1; X := 2 }", "assigned twice", 3, 27),
        ("var X : int\nunsafe () { X = 1 }\ntransition t () { X := 1 X := 2 }", "expected `;` or `}`", 3, 26),
        ("var X : bool\nunsafe () { X = True }\ntransition t () { X := 1 }", "expected a value of bool", 3, 24),
        ("var X : int\nunsafe () { X = 1 }\ntransition t (i) requires { X = 1 && (X = 2 || forall_other j. X = 2) } { }", "may only be a conjunct", 3, 48),
        ("var X : int\nunsafe () { X = 1 && forall_other j. X = 2 }", "may only be a conjunct", 2, 22),
        ("var X : int\nunsafe (i i) { X = 1 }", "bound twice", 2, 11),
        ("array A[proc] : int\nunsafe (i) { A = 1 }", "takes 1 process indices, not 0", 2, 14),
        ("var X : int\npredicate p(i) { X = 1 }\nunsafe () { p(#1) }", "needs a `number_procs`", 3, 15),
        ("var X : int\npredicate p(i) { X = 1 }\nunsafe () { p() }", "takes 1 processes, not 0", 3, 13),
        ("var X : int\nunsafe () { p() }", "unknown predicate `p`", 2, 13),
        ("var X : int\nunsafe () { X = 1.5 }", "only whole real constants", 2, 17),
        ("var X : int\nunsafe () { X = 99999999999999999999 }", "too large", 2, 17),
        ("var X : int\nunsafe () { X = #0 }", "process constant", 2, 17),
        ("var X : int\nunsafe () { X = 1 }\ntransition t () { X := case X = 1 : 2 }", "expected `|` starting a case branch", 3, 29),
        ("var X : proc\nvar N : int\nunsafe (i) { X < N }", "cannot compare proc with int", 3, 14),
        ("weak var X : int\nunsafe () { X = 1 }\ntransition t ([p]) { X := 1 }", "", 0, 0),
        ("number_procs 0", "from 1 to 16", 1, 14),
    ];
    for (src, msg, line, col) in cases {
        if msg.is_empty() {
            // A weak variable is fine under SC ...
            fencer_cub::load("t.cub", src, fencer_cub::Mode::Sc).expect("weak under SC");
            // ... and refused with a reason under TSO.
            let d = fencer_cub::load("t.cub", src, fencer_cub::Mode::Tso).unwrap_err();
            assert!(d.message.contains("TSO"), "{}", d.message);
            continue;
        }
        let d = err(src);
        assert!(
            d.message.contains(msg),
            "{src:?}: expected {msg:?}, got {:?}",
            d.message
        );
        if *col > 0 {
            assert_eq!((d.line, d.col), (*line, *col), "{src:?}: {}", d.message);
        }
        let r = d.render(src);
        assert!(r.starts_with("t.cub:"), "{r}");
        assert!(r.contains(" | "), "the source line is shown: {r}");
    }
    let _ = BASE;
}

#[test]
fn deep_nesting_is_refused() {
    let src = format!(
        "var X : int\nunsafe () {{ {}X = 1{} }}",
        "(".repeat(500),
        ")".repeat(500)
    );
    assert!(err(&src).message.contains("nesting"));
    let src = format!("var X : int\nunsafe () {{ {}X = 1 }}", "not ".repeat(500));
    assert!(err(&src).message.contains("nesting") || err(&src).message.contains("deep"));
}

fn corpus_sources() -> Vec<String> {
    let mut out = vec![BASE.to_string() + "unsafe (i) { PC[i] = A && X = 1 }"];
    if let Some(dir) = common::corpus() {
        for row in common::rows(&dir) {
            out.push(std::fs::read_to_string(dir.join(&row.file)).unwrap());
        }
    }
    out.sort();
    out.dedup();
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Byte mutations of the corpus: parse and lowering answer, never panic.
    #[test]
    fn mutated_corpus_never_panics(
        which in 0usize..1000,
        edits in proptest::collection::vec((0usize..100_000, 0u8..6, any::<u8>()), 1..6),
    ) {
        let sources = corpus_sources();
        let mut b = sources[which % sources.len()].clone().into_bytes();
        for (at, kind, byte) in edits {
            if b.is_empty() {
                break;
            }
            let at = at % b.len();
            let tok = b"()[]{}:=;|&<>.#@_ \n0123456789AXjiforall_other case requires transition";
            match kind {
                0 => { b.remove(at); }
                1 => b.insert(at, tok[byte as usize % tok.len()]),
                2 => b[at] = tok[byte as usize % tok.len()],
                3 => { let end = (at + byte as usize % 40).min(b.len()); b.drain(at..end); }
                4 => { let end = (at + byte as usize % 40).min(b.len()); let dup: Vec<u8> = b[at..end].to_vec(); b.splice(at..at, dup); }
                _ => b.insert(at, byte),
            }
        }
        let src = String::from_utf8_lossy(&b).into_owned();
        for mode in [fencer_cub::Mode::Sc, fencer_cub::Mode::Tso] {
            match fencer_cub::load("m.cub", &src, mode) {
                Err(d) => {
                    prop_assert!(d.line >= 1 && d.col >= 1);
                    let _ = d.render(&src);
                }
                // What lowers must also run: a few nodes of the engine, without panicking
                // and without a trace that does not replay.
                Ok(sys) => {
                    let opts = fencer_param::Options {
                        max_nodes: Some(15),
                        timeout: Some(std::time::Duration::from_millis(300)),
                        ..Default::default()
                    };
                    let r = fencer_param::check(&sys, &opts);
                    prop_assert!(
                        !matches!(r.outcome, fencer_param::Outcome::Spurious { .. }),
                        "spurious trace on:\n{}",
                        src
                    );
                }
            }
        }
    }
}

/// Every construct the TSO layer refuses, with its position.
#[test]
fn tso_error_messages() {
    let head = "weak var X : int\nweak array A[proc] : bool\narray P[proc] : bool\n";
    let cases: &[(&str, &str, u32, u32)] = &[
        ("unsafe () { X = 1 }", "through a thread", 4, 13),
        ("unsafe (i) { i @ X = 1 }\ntransition t (i) requires { X = 0 } { P[i] := True }", "without a thread", 5, 29),
        ("unsafe (i) { i @ X = 1 }\ntransition t (i) { X := 1 }", "without a thread", 5, 20),
        ("unsafe (i) { i @ X = 1 }\ntransition t ([i] [j]) { X := 1 }", "one thread", 5, 20),
        ("unsafe (i) { i @ X = 1 }\ntransition t ([i]) requires { X = 0 && (fence() || X = 1) } { X := 1 }", "`fence()` may only be", 5, 41),
        ("unsafe (i) { i @ X = 1 }\ntransition t (i) requires { fence() } { P[i] := True }", "needs the transition's thread", 5, 29),
        ("unsafe (i) { i @ X = 1 }\ntransition t ([i]) requires { i @ X = 0 } { X := 1 }", "only supported in `unsafe`", 5, 31),
        ("unsafe (i) { i @ P[i] = True }", "reads a weak variable", 4, 18),
        ("unsafe (i) { i @ X = 1 }\ninvariant () { X = 2 }", "invariants over weak", 5, 16),
    ];
    for (body, msg, line, col) in cases {
        let src = format!("{head}{body}\n");
        let d = match fencer_cub::load("t.cub", &src, fencer_cub::Mode::Tso) {
            Ok(_) => panic!("{src:?}: accepted under TSO"),
            Err(d) => d,
        };
        assert!(
            d.message.contains(msg),
            "{src:?}: expected {msg:?}, got {:?}",
            d.message
        );
        assert_eq!((d.line, d.col), (*line, *col), "{src:?}: {}", d.message);
    }
}
