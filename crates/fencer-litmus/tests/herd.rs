//! fencer answers litmus tests as herd7 does.
//!
//! - Every test of `../shared/litmus/x86/` (herd7's own X86 tests and diy7-generated ones)
//!   under x86-TSO and SC: the same reachability and number of final states as
//!   `expected.tsv`, and, where herd7's full output is recorded, the same text line for
//!   line (states, Ok/No, witness counts, condition, observation). Needs `../shared`;
//!   skipped (with a message) in a clone without it.
//! - PSO, which herd7 does not answer: the tests in `tests/pso/`, each with the argument
//!   for its answer in a comment, against `tests/pso/expected.tsv`.

use fencer_dpor::{explore, Options};
use fencer_litmus::parse_litmus;
use fencer_memory::ModelKind;
use std::path::{Path, PathBuf};

fn answer(path: &Path, model: ModelKind) -> fencer_litmus::Answer {
    let src = std::fs::read_to_string(path).unwrap();
    let lit = parse_litmus(&path.display().to_string(), &src)
        .unwrap_or_else(|d| panic!("{}", d.render(&src)));
    let opts = Options {
        stop_on_violation: false,
        ..Options::default()
    };
    lit.answer(&explore(&lit.program, model, &opts))
}

fn tsv(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn corpus() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus/x86");
    d.join("expected.tsv").exists().then_some(d)
}

#[test]
fn every_x86_test_agrees_with_herd7_under_tso_and_sc() {
    let Some(dir) = corpus() else {
        eprintln!("skipped: ../shared/litmus/x86 is not here");
        return;
    };
    let rows = tsv(&dir.join("expected.tsv"));
    assert!(rows.len() > 200, "{} rows", rows.len());
    let mut failures = Vec::new();
    let mut exact = 0;
    for row in &rows {
        let file = dir.join(&row[0]);
        for (model, name, result, states) in [
            (ModelKind::Tso, "tso", &row[2], &row[4]),
            (ModelKind::Sc, "sc", &row[3], &row[5]),
        ] {
            let a = answer(&file, model);
            let got = if a.positive > 0 {
                "Allowed"
            } else {
                "Forbidden"
            };
            if got != result || a.states.len().to_string() != *states {
                failures.push(format!(
                    "{} {name}: {got} with {} states, herd7 says {result} with {states}",
                    row[0],
                    a.states.len()
                ));
                continue;
            }
            let out = dir.join("herd-out").join(format!(
                "{}.{name}.txt",
                row[0].trim_end_matches(".litmus").replace('/', "__")
            ));
            if let Ok(herd) = std::fs::read_to_string(&out) {
                let strip = |s: &str| -> Vec<String> {
                    s.lines()
                        .filter(|l| !l.is_empty() && !l.starts_with("Hash="))
                        .map(str::to_string)
                        .collect()
                };
                if strip(&a.to_herd()) != strip(&herd) {
                    failures.push(format!(
                        "{} {name}: output differs from herd7's\n--- fencer\n{}--- herd7\n{herd}",
                        row[0],
                        a.to_herd()
                    ));
                } else {
                    exact += 1;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(exact > 400, "only {exact} outputs compared line by line");
}

#[test]
fn pso_answers_argued_by_hand() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pso");
    let rows = tsv(&dir.join("expected.tsv"));
    assert!(rows.len() >= 5);
    for row in rows {
        let a = answer(&dir.join(&row[0]), ModelKind::Pso);
        let got = if a.positive > 0 {
            "Allowed"
        } else {
            "Forbidden"
        };
        assert_eq!(got, row[1], "{}", row[0]);
        assert_eq!(a.states.len().to_string(), row[2], "{}", row[0]);
    }
}

fn parse_err(src: &str) -> String {
    match parse_litmus("t.litmus", src) {
        Ok(_) => panic!("accepted:\n{src}"),
        Err(d) => d.render(src),
    }
}

#[test]
fn bad_tests_are_errors_with_a_position() {
    let ok = "X86 T\n{ }\n P0 | P1 ;\n MOV [x],$1 | MOV EAX,[x] ;\nexists (1:EAX=1)\n";
    assert!(parse_litmus("t.litmus", ok).is_ok());
    let cases = [
        (ok.replace("X86 T", "ARM T"), "t.litmus:1:1", "X86"),
        (
            ok.replace("MOV [x],$1", "FOO [x],$1"),
            "t.litmus:4:2",
            "unsupported instruction `FOO`",
        ),
        (
            ok.replace("MOV [x],$1", "MOV [x],[y]"),
            "t.litmus:4:2",
            "MOV",
        ),
        (ok.replace("[x] ;", "[x]  "), "t.litmus:4", "expected `;`"),
        (
            ok.replace(" | MOV EAX,[x] ;", " ;"),
            "t.litmus:4",
            "expected 2 columns",
        ),
        (
            ok.replace("exists (1:EAX=1)", "exists (1:EAX=)"),
            "t.litmus:5:15",
            "expected an integer",
        ),
        (
            ok.replace("exists (1:EAX=1)", "exists (5:EAX=1)"),
            "t.litmus:5:9",
            "no thread P5",
        ),
        (
            ok.replace("exists (1:EAX=1)", ""),
            "t.litmus",
            "expected the final condition",
        ),
        (
            ok.replace("{ }", "{ x=0; # comment\n}"),
            "t.litmus:2:8",
            "`#`",
        ),
        (
            ok.replace("MOV [x],$1", "JMP L9"),
            "t.litmus:4:6",
            "no label `L9`",
        ),
        (ok.replace("P1 ;", "P2 ;"), "t.litmus:3:7", "`P1`"),
        ("".to_string(), "t.litmus", "empty file"),
    ];
    for (src, at, what) in cases {
        let r = parse_err(&src);
        assert!(r.starts_with(at), "expected {at}, got:\n{r}");
        assert!(r.contains(what), "expected `{what}` in:\n{r}");
    }
}

#[test]
fn registers_labels_and_locked_instructions() {
    // A CAS-based lock with CMPXCHG, compare and jump, and register arithmetic.
    let src = "X86 lock
{ l=0; }
 P0                 | P1                 ;
 MOV EAX,$0         | MOV EAX,$0         ;
 MOV EBX,$1         | MOV EBX,$1         ;
 LOCK CMPXCHG [l],EBX | LOCK CMPXCHG [l],EBX ;
 CMP EAX,$0         | CMP EAX,$0         ;
 JNE Lout0          | JNE Lout1          ;
 MOV ECX,[c]        | MOV ECX,[c]        ;
 ADD ECX,$1         | INC ECX            ;
 MOV [c],ECX        | MOV [c],ECX        ;
 Lout0:             | Lout1:             ;
exists ([c]=2 \\/ (0:EAX=1 /\\ 1:EAX=1))
";
    let lit = parse_litmus("lock.litmus", src).unwrap_or_else(|d| panic!("{}", d.render(src)));
    for m in [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso] {
        let opts = Options {
            stop_on_violation: false,
            ..Options::default()
        };
        let a = lit.answer(&explore(&lit.program, m, &opts));
        // Exactly one thread takes the lock (the other sees 1 and skips), so the counter
        // is never 2 and not both fail.
        assert_eq!(a.positive, 0, "{m}: {}", a.to_herd());
        assert!(a.negative > 0);
    }
}
