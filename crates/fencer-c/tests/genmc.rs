//! Programs written for GenMC (`tests/c/genmc`): fencer's own `genmc.h` makes its API
//! plain C, and DPOR agrees with the reference explorer on them. Also what made fencer
//! explore more than GenMC on its data-structure tests: allocations of different threads
//! now commute, and `--unroll` bounds each entry of a loop. Needs clang-14.

use fencer_c::{load, CompileOptions};
use fencer_dpor::{explore, Options};
use fencer_memory::ModelKind;
use fencer_report::{Report, Verdict};
use std::path::{Path, PathBuf};

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c/genmc")
        .join(name)
}

fn dpor(path: &Path, flags: &[&str], unroll: Option<u32>) -> Report {
    let opts = CompileOptions {
        flags: flags.iter().map(|s| s.to_string()).collect(),
        ..CompileOptions::default()
    };
    let mut p = load(path, &opts, ModelKind::Sc).unwrap_or_else(|e| panic!("{e}"));
    fencer_ir::spin::spin_assume(&mut p);
    explore(
        &p,
        ModelKind::Sc,
        &Options {
            stop_on_violation: false,
            unroll,
            ..Options::default()
        },
    )
}

fn reference(path: &Path) -> Report {
    let p = load(path, &CompileOptions::default(), ModelKind::Sc).unwrap();
    fencer_reference::explore(&p, ModelKind::Sc, &Default::default()).report
}

#[test]
fn a_program_written_for_genmc_loads_and_agrees_with_the_reference() {
    let f = file("stack.c");
    let d = dpor(&f, &[], None);
    let r = reference(&f);
    assert_eq!(d.verdict, Verdict::Safe);
    assert_eq!(r.verdict, Verdict::Safe);
    assert_eq!(d.final_states, r.final_states);
    assert_eq!(Some(d.stats.executions), r.stats.traces);
}

#[test]
fn a_genmc_h_of_the_programs_own_comes_first() {
    let dir = std::env::temp_dir().join(format!("fencer-genmc-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("genmc.h"), "#define FROM_THE_PROGRAM 1\n").unwrap();
    let src = dir.join("own.c");
    std::fs::write(
        &src,
        "#include <genmc.h>\n#include <assert.h>\nint main(void) { assert(FROM_THE_PROGRAM == 1); return 0; }\n",
    )
    .unwrap();
    let flag = format!("-I{}", dir.display());
    let d = dpor(&src, &[&flag], None);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(d.verdict, Verdict::Safe);
}

#[test]
fn allocations_of_different_threads_commute() {
    let f = file("allocs.c");
    let d = dpor(&f, &[], None);
    assert_eq!(
        d.stats.executions, 1,
        "one trace, whatever the allocation order"
    );
    assert_eq!(reference(&f).stats.traces, Some(1));
}

#[test]
fn unroll_bounds_each_entry_of_a_loop() {
    let f = file("nested.c");
    // 3 iterations per entry: 3 backward jumps at most, never the 9 of the sum.
    let d = dpor(&f, &[], Some(3));
    assert_eq!(d.verdict, Verdict::Safe, "{:?}", d.stats);
    assert_eq!(d.stats.unroll_cut, 0);
    // One iteration more than the bound in the inner loops is cut.
    let d = dpor(&f, &["-DINNER=4"], Some(3));
    assert_eq!(d.verdict, Verdict::Incomplete);
    assert!(d.stats.unroll_cut > 0);
}

#[test]
fn a_loop_that_takes_a_mutex_and_gives_it_back_spins_no_more() {
    let f = file("lock_loop.c");
    // Each failed iteration is dropped: no bound needed, none reached.
    let d = dpor(&f, &[], None);
    assert_eq!(d.verdict, Verdict::Safe, "{:?}", d.stats);
    assert_eq!(d.stats.executions, 2);
    assert!(d.stats.assume_blocked > 0);
    // The reference explorer runs the loop as written, up to a bound.
    let p = load(&f, &CompileOptions::default(), ModelKind::Sc).unwrap();
    let opts = fencer_reference::Options {
        unroll: Some(3),
        ..Default::default()
    };
    let r = fencer_reference::explore(&p, ModelKind::Sc, &opts).report;
    assert_eq!(d.final_states, r.final_states);
    // A trylock sees the mutex held during a failed iteration: kept, the violation found.
    let d = dpor(&f, &["-DPROBE"], Some(3));
    assert_eq!(d.verdict, Verdict::Violation, "{:?}", d.stats);
}
