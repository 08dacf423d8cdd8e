//! The MPI transport under a real launcher: `mpirun` runs the self-test
//! (`src/bin/selftest.rs`), which checks every collective against the expected results
//! and against fencer-explicit's `Threads` transport. Skips, saying so, when `mpirun` is
//! not on PATH.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};

const SELFTEST: &str = env!("CARGO_BIN_EXE_fencer-mpi-selftest");

/// The variables `fencer_mpi::launched` reads, and Open MPI's and PMIx's others: none
/// must leak from the environment the tests run in.
const LAUNCH_VARS: [&str; 6] = [
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "PMIX_RANK",
    "PMIX_NAMESPACE",
];

/// One job at a time: a few cores, and the timings want them.
static ONE_JOB: Mutex<()> = Mutex::new(());

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `mpirun -np NP selftest ARGS`, or `None` (the test skips) without `mpirun`.
fn mpirun(np: usize, args: &[&str]) -> Option<Output> {
    let Some(mpirun) = on_path("mpirun") else {
        eprintln!(
            "skipped: mpirun is not on PATH (Debian: apt-get install openmpi-bin libopenmpi-dev)"
        );
        return None;
    };
    let _one = ONE_JOB.lock().unwrap_or_else(PoisonError::into_inner);
    // A job that hangs fails the test instead of the run (coreutils' timeout).
    let mut cmd = match on_path("timeout") {
        Some(timeout) => {
            let mut cmd = Command::new(timeout);
            cmd.args(["-k", "10", "300"]).arg(&mpirun);
            cmd
        }
        None => Command::new(&mpirun),
    };
    if open_mpi(&mpirun) {
        if is_root() {
            cmd.arg("--allow-run-as-root");
        }
        // More ranks than cores, and no hostfile.
        cmd.arg("--oversubscribe");
    }
    cmd.args(["-np", &np.to_string(), SELFTEST]).args(args);
    for v in LAUNCH_VARS {
        cmd.env_remove(v);
    }
    let out = cmd.stdin(Stdio::null()).output().expect("mpirun starts");
    Some(out)
}

fn open_mpi(mpirun: &std::path::Path) -> bool {
    let version = Command::new(mpirun)
        .arg("--version")
        .output()
        .expect("mpirun --version runs");
    [&version.stdout, &version.stderr]
        .iter()
        .any(|o| String::from_utf8_lossy(o).contains("Open MPI"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn text(out: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The self-test passed on every one of `np` ranks; its timing line, printed.
fn passes(np: usize, args: &[&str]) {
    let Some(out) = mpirun(np, args) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let agreed = stdout
        .lines()
        .filter(|l| l.ends_with("the same over MPI and Threads"))
        .count();
    assert_eq!(agreed, np, "{}", text(&out));
    for line in stdout.lines().filter(|l| l.starts_with("timing")) {
        println!("{line}");
    }
}

#[test]
fn two_ranks() {
    passes(2, &["--time"]);
}

#[test]
fn four_ranks_on_fewer_cores() {
    passes(4, &["--time"]);
}

#[test]
fn without_a_launcher_mpi_stays_uninitialised() {
    let mut cmd = Command::new(SELFTEST);
    for v in LAUNCH_VARS {
        cmd.env_remove(v);
    }
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .expect("the self-test runs");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("not launched"),
        "{}",
        text(&out)
    );
}

#[test]
fn one_rank_is_not_a_launch() {
    let Some(out) = mpirun(1, &[]) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("not launched"),
        "{}",
        text(&out)
    );
}

/// `fencer_mpi::exit` finalises, so the job ends as the ranks say; a panic on one rank
/// ends the job (the others, waiting for it in an exchange, are killed) rather than
/// hanging it; and, with Open MPI, exiting without `finish` is an abnormal termination.
#[test]
fn ways_out() {
    let Some(out) = mpirun(2, &["exit", "0"]) else {
        return;
    };
    assert!(out.status.success(), "{}", text(&out));

    let out = mpirun(2, &["exit", "3"]).expect("mpirun");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));

    let out = mpirun(2, &["panic"]).expect("mpirun");
    assert!(!out.status.success(), "{}", text(&out));
    assert_ne!(out.status.code(), Some(124), "timed out: {}", text(&out));

    let out = mpirun(2, &["no-finish"]).expect("mpirun");
    if open_mpi(&on_path("mpirun").expect("mpirun")) {
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("without calling \"finalize\""),
            "{}",
            text(&out)
        );
    }
}
