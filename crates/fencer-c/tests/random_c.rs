//! Random small C programs (`fencer_testgen::c_program`) with TLS destructors, condition
//! variables (waited on with `while` and with `if`), reads of a mutex's word, and `main`
//! returning, calling `exit` or `pthread_exit` while threads run: DPOR with the spin-loop
//! rewrite is held to the reference explorer on the program as written, under every
//! model: the same final states (every global), and a violation exactly when it finds
//! one. Needs clang-14.
//!
//! `FENCER_C_CASES=N` sets the number of programs (default 16); `FENCER_SEED=S` runs the
//! one program of seed S and prints it.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Options};
use fencer_memory::ModelKind;
use fencer_report::{Limit, Verdict};

/// Loop bound of the reference explorer, which runs the waits as written.
const UNROLL: u32 = 3;

fn cases() -> u64 {
    std::env::var("FENCER_C_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16)
}

thread_local! {
    /// Runs whose reference stopped at its state limit (no oracle for them), counted so
    /// that the test fails should that become common.
    static SKIPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn compare(seed: u64, dir: &std::path::Path) -> Result<(), String> {
    let src = fencer_testgen::c_program(seed);
    let f = dir.join(format!("gen{seed}.c"));
    std::fs::write(&f, &src).unwrap();
    for model in ModelKind::ALL {
        let loaded =
            load(&f, &CompileOptions::default(), model).map_err(|e| format!("{e}\n{src}"))?;
        // The program, and its variant whose waits return only when signalled.
        let variant = loaded.wait_variant.clone();
        for (original, which) in std::iter::once((loaded, ""))
            .chain(variant.map(|v| (*v, " (waits return only when signalled)")))
        {
            compare_one(seed, &src, model, &original, which)?;
        }
    }
    Ok(())
}

fn compare_one(
    seed: u64,
    src: &str,
    model: ModelKind,
    original: &fencer_ir::Program,
    which: &str,
) -> Result<(), String> {
    {
        let mut rewritten = original.clone();
        fencer_ir::spin::spin_assume(&mut rewritten);
        // Both bounded alike: loops that are no waiting loops (a destructor pass over the
        // keys) are cut the same way; waiting loops only the reference runs as written.
        let d = explore(
            &rewritten,
            model,
            &Options {
                stop_on_violation: false,
                unroll: Some(UNROLL),
                ..Options::default()
            },
        );
        let r = fencer_reference::explore(
            original,
            model,
            &fencer_reference::Options {
                unroll: Some(UNROLL),
                ..Default::default()
            },
        )
        .report;
        if r.stopped_by == Some(Limit::MaxStates) {
            SKIPPED.with(|k| k.set(k.get() + 1));
            return Ok(());
        }
        let fail = |what: String| Err(format!("seed {seed} under {model}{which}: {what}\n{src}"));
        if (d.verdict == Verdict::Violation) != (r.verdict == Verdict::Violation) {
            return fail(format!(
                "DPOR {:?} ({:?}), reference {:?} ({:?})",
                d.verdict,
                d.counterexample.map(|c| c.message),
                r.verdict,
                r.counterexample.map(|c| c.message)
            ));
        }
        if d.final_states != r.final_states {
            return fail(format!(
                "final states over {:?}: DPOR {:?}, reference {:?}",
                d.final_vars, d.final_states, r.final_states
            ));
        }
    }
    Ok(())
}

#[test]
fn random_c_programs_agree_with_the_reference() {
    let dir = std::env::temp_dir().join(format!("fencer-random-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(seed) = std::env::var("FENCER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        println!("{}", fencer_testgen::c_program(seed));
        let r = compare(seed, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        r.unwrap();
        return;
    }
    let mut failures = Vec::new();
    for seed in 0..cases() {
        if let Err(e) = compare(seed, &dir) {
            failures.push(e);
            if failures.len() >= 3 {
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let skipped = SKIPPED.with(|k| k.get());
    assert!(
        skipped * 10 <= cases() * 3,
        "{skipped} of {} runs too large for the reference",
        cases() * 3
    );
}
