//! What real C programs use: thread-local storage, SV-COMP's conventions, `argc`/`argv`,
//! function pointers, the C library (`runtime/fencer_rt.c`), lazy refusal, and messages
//! that name the user's file. The verdicts of `tests/c/*.c` are checked by `bench_c.rs`;
//! this checks what a verdict alone does not show. Needs clang-14 and llvm-link-14.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Options};
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use std::path::{Path, PathBuf};

fn run(path: &Path, model: ModelKind) -> Report {
    let mut p = load(path, &CompileOptions::default(), model)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    fencer_ir::spin::spin_assume(&mut p);
    explore(&p, model, &Options::default())
}

fn construct(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fencer-c-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn safe_verdicts_come_from_explored_executions() {
    // A safe verdict with no complete execution would say nothing (every execution
    // blocked); the wait nobody ends is a hang.
    for f in [
        "tls.c",
        "svcomp_abort.c",
        "argv.c",
        "function_pointers.c",
        "join_result.c",
        "library_function_pointers.c",
        "lazy_refusal.c",
        "rwlock.c",
        "barrier.c",
        "semaphore.c",
        "once_keys.c",
        "strings.c",
    ] {
        for m in ModelKind::ALL {
            let r = run(&construct(f), m);
            assert_eq!(r.verdict, Verdict::Safe, "{f} under {m}");
            assert!(
                r.stats.executions > 0,
                "{f} under {m}: no complete execution"
            );
        }
    }
    for m in ModelKind::ALL {
        let r = run(&construct("semaphore_blocked.c"), m);
        assert_eq!(r.verdict, Verdict::Violation);
        let c = r.counterexample.expect("a counterexample");
        assert_eq!(c.kind, "hang", "{}", c.message);
        assert!(c.message.contains("main"), "{}", c.message);
    }
}

#[test]
fn reaching_reach_error_is_the_violation_at_its_call() {
    for m in ModelKind::ALL {
        let r = run(&construct("svcomp_reach_error.c"), m);
        let c = r.counterexample.expect("reach_error is reached");
        assert_eq!(c.kind, "assertion");
        assert_eq!(c.line, Some(18), "{c:?}");
        assert!(c.message.contains("reach_error()"), "{}", c.message);
    }
}

#[test]
fn without_reach_error_abort_is_still_a_violation() {
    let f = scratch("plain_abort.c");
    std::fs::write(
        &f,
        "#include <stdlib.h>\nint x;\nint main(void) {\n  if (x == 0)\n    abort();\n  return 0;\n}\n",
    )
    .unwrap();
    let r = run(&f, ModelKind::Sc);
    let c = r.counterexample.expect("abort is a violation");
    assert_eq!(c.line, Some(5), "{c:?}");
}

#[test]
fn a_reached_unsupported_call_refuses_the_program_with_its_line() {
    let f = scratch("mystery.c");
    std::fs::write(
        &f,
        "int mystery(int);\nint flag = 1;\nint main(void) {\n  if (flag)\n    return mystery(1);\n  return 0;\n}\n",
    )
    .unwrap();
    for m in ModelKind::ALL {
        let r = run(&f, m);
        let c = r.counterexample.expect("refused");
        assert_eq!(c.kind, "unsupported");
        assert_eq!((c.line, c.column), (Some(5), Some(12)), "{c:?}");
        assert!(
            c.message
                .contains("call to `mystery`, which the program does not define"),
            "{}",
            c.message
        );
    }
}

#[test]
fn a_thread_started_through_a_pointer_to_an_undefined_function_is_refused() {
    let f = scratch("spawn_undefined.c");
    std::fs::write(
        &f,
        "#include <pthread.h>\nvoid *run(void *);\nint main(void) {\n  pthread_t t;\n  \
         pthread_create(&t, 0, run, 0);\n  return 0;\n}\n",
    )
    .unwrap();
    let c = run(&f, ModelKind::Tso).counterexample.expect("refused");
    assert_eq!(c.kind, "unsupported");
    assert!(c.message.contains("`run`"), "{}", c.message);
}

#[test]
fn ll_and_bc_errors_name_the_users_file() {
    let ll = scratch("broken.ll");
    std::fs::write(&ll, "define i32 @main() {\n  ret i32 %nope\n}\n").unwrap();
    let e = load(&ll, &CompileOptions::default(), ModelKind::Sc).unwrap_err();
    let text = e.to_string();
    let tmp = format!("fencer-c-{}-", std::process::id());
    assert!(text.contains(&ll.display().to_string()), "{text}");
    assert!(
        !text.contains(&tmp) && !text.contains("program.ll"),
        "{text}"
    );
    let bc = scratch("broken.bc");
    std::fs::write(&bc, b"not bitcode").unwrap();
    let text = load(&bc, &CompileOptions::default(), ModelKind::Sc)
        .unwrap_err()
        .to_string();
    assert!(text.contains(&bc.display().to_string()), "{text}");
    assert!(!text.contains(&tmp), "{text}");
}

#[test]
fn library_functions_show_in_counterexamples_under_their_own_name() {
    // The semaphore lets two threads in; the counterexample passes through sem_wait,
    // whose events name fencer_rt.c and the function.
    let r = run(&construct("semaphore_race.c"), ModelKind::Pso);
    let c = r.counterexample.expect("violation");
    let e = c
        .events
        .iter()
        .find(|e| e.function.as_deref() == Some("sem_wait"))
        .expect("an event of sem_wait");
    assert_eq!(e.file, fencer_c::RUNTIME_FILE, "{e:?}");
    assert!(e.line > 0);
    assert!(fencer_c::RUNTIME_SOURCE.lines().count() >= e.line as usize);
}

/// SV-COMP pthread programs without nondeterministic inputs, with their `unreach-call`
/// verdicts (`../shared/svcomp/expected.tsv`); the verdicts are for SC. Under TSO and PSO
/// the mutual-exclusion algorithms without fences fail, as they should.
#[test]
fn svcomp_programs_give_their_expected_verdicts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/svcomp");
    if !dir.join("expected.tsv").exists() {
        eprintln!("skipped: ../shared/svcomp is not here");
        return;
    }
    use Verdict::{Safe, Violation};
    let all = |v| [v, v, v];
    let cases: &[(&str, [Verdict; 3])] = &[
        ("pthread/bigshot_p.c", all(Violation)),
        ("pthread/bigshot_s.c", all(Safe)),
        ("pthread/fib_bench-1.c", all(Safe)),
        ("pthread/fib_bench-2.c", all(Violation)),
        ("pthread/lazy01.c", all(Violation)),
        ("pthread/sigma.c", all(Violation)),
        ("pthread/reorder_2.c", all(Violation)),
        ("pthread/twostage_3.c", all(Violation)),
        ("pthread-atomic/time_var_mutex.c", all(Safe)),
        ("pthread-atomic/dekker.c", [Safe, Violation, Violation]),
        ("pthread-atomic/peterson.c", [Safe, Violation, Violation]),
        ("pthread-atomic/szymanski.c", [Safe, Violation, Violation]),
    ];
    let mut wrong = Vec::new();
    for (file, want) in cases {
        for (k, m) in ModelKind::ALL.iter().enumerate() {
            let r = run(&dir.join(file), *m);
            if r.verdict != want[k] {
                wrong.push(format!(
                    "{file} under {m}: {:?}, expected {:?}",
                    r.verdict, want[k]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_list_of_library_functions_is_the_librarys() {
    let text = fencer_c::runtime_text(&CompileOptions::default()).expect("clang-14 compiles it");
    let mut defined: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("define ") && !l.contains(" internal "))
        .filter_map(|l| {
            let name = &l[l.find('@')? + 1..];
            Some(&name[..name.find('(')?])
        })
        .collect();
    let mut listed = fencer_c::RUNTIME_FUNCTIONS.to_vec();
    defined.sort();
    listed.sort();
    assert_eq!(defined, listed);
}
