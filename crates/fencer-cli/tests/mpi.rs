//! `mpirun -np K fencer check model.dve`: the ranks together find exactly the states one
//! process finds (a partition that lost or duplicated a state would change the total),
//! each rank stores its own share, and the verdicts and reachability counterexamples are
//! one process's. Runs the examples' DVE models and, when `../shared` is here, BEEM
//! instances up to 20,000 states. Skipped (with a message) without `mpirun` or without
//! the `mpi` feature.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

fn fencer() -> &'static str {
    env!("CARGO_BIN_EXE_fencer")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mpirun() -> Option<PathBuf> {
    if !cfg!(feature = "mpi") {
        eprintln!("skipped: fencer is built without the `mpi` feature");
        return None;
    }
    let found = std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("mpirun"))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipped: mpirun is not on PATH (apt-get install openmpi-bin libopenmpi-dev)");
    }
    found
}

/// `fencer check ARGS` on `ranks` ranks (1: no launcher).
fn run(mpirun: &Path, ranks: usize, args: &[&str]) -> Output {
    let mut c = if ranks == 1 {
        Command::new(fencer())
    } else {
        let mut c = Command::new("timeout");
        c.arg("600").arg(mpirun).arg("-q");
        // A violation (exit 1) would otherwise cost a second of Open MPI's clean-up.
        c.args(["--mca", "odls_base_sigkill_timeout", "0"]);
        c.arg("-np").arg(ranks.to_string());
        if ranks > 2 {
            c.arg("--oversubscribe");
        }
        c.arg(fencer());
        c
    };
    // Each launch gets a session directory of its own: the tests run in parallel, and
    // Open MPI's launchers share one per user under TMPDIR, so one launcher's clean-up
    // could remove the directory another was creating (ORTE_ERROR_LOG in session_dir.c,
    // a rank exiting 1; seen once in a full test run).
    static LAUNCH: AtomicUsize = AtomicUsize::new(0);
    let tmp = std::env::temp_dir().join(format!(
        "fencer-mpi-test-{}-{}",
        std::process::id(),
        LAUNCH.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    // Open MPI refuses root unless told; harmless otherwise.
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("TMPDIR", &tmp)
        .current_dir(root())
        .arg("check")
        .args(args);
    let out = c.output().expect("runs");
    let _ = std::fs::remove_dir_all(&tmp);
    out
}

fn json(out: &Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: not JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// One process and `ranks` ranks on `args`: the same verdict and exit code; with no
/// violation the same states and transitions, which the ranks' shares add up to; a
/// reachability counterexample step for step.
fn same(mpirun: &Path, ranks: usize, args: &[&str]) -> Result<(), String> {
    let mut a = args.to_vec();
    a.push("--json");
    let one = run(mpirun, 1, &a);
    let many = run(mpirun, ranks, &a);
    let what = format!("{} on {ranks} ranks", args.join(" "));
    if one.status.code() != many.status.code() {
        return Err(format!(
            "{what}: exit {:?}, one process {:?}\n{}",
            many.status.code(),
            one.status.code(),
            String::from_utf8_lossy(&many.stderr)
        ));
    }
    let (o, m) = (json(&one, &what), json(&many, &what));
    // Several properties: a report each.
    if let (Some(os), Some(ms)) = (o["properties"].as_array(), m["properties"].as_array()) {
        if os.len() != ms.len() {
            return Err(format!(
                "{what}: {} properties, one process {}",
                ms.len(),
                os.len()
            ));
        }
        return os.iter().zip(ms).enumerate().try_for_each(|(k, (o, m))| {
            let what = format!("{what}, property {}", k + 1);
            agree(&what, ranks, &o["report"], &m["report"])
        });
    }
    agree(&what, ranks, &o, &m)
}

/// One report of one process and one of `ranks` ranks agree.
fn agree(what: &str, ranks: usize, o: &Value, m: &Value) -> Result<(), String> {
    if o["verdict"] != m["verdict"] {
        return Err(format!("{what}: {} vs {}", m["verdict"], o["verdict"]));
    }
    let shares = m["stats"]["ranks"]
        .as_array()
        .ok_or(format!("{what}: no per-rank statistics"))?;
    if shares.len() != ranks {
        return Err(format!("{what}: {} shares", shares.len()));
    }
    let sum: u64 = shares.iter().map(|r| r["states"].as_u64().unwrap()).sum();
    if sum != m["stats"]["states"].as_u64().unwrap() {
        return Err(format!("{what}: the shares add up to {sum}"));
    }
    let cex = |v: &Value| v["counterexample"].clone();
    if o["verdict"].as_str() == Some("violation") && cex(o)["kind"] == "ltl" {
        let cycle = |v: &Value| {
            v["counterexample"]["message"]
                .as_str()
                .is_some_and(|t| t.contains("repeat forever"))
        };
        if !cycle(m) {
            return Err(format!("{what}: no accepting cycle"));
        }
    }
    match o["verdict"].as_str() {
        Some("safe") => {
            for k in ["states", "transitions"] {
                if o["stats"][k] != m["stats"][k] {
                    return Err(format!(
                        "{what}: {k} {} vs one process {}",
                        m["stats"][k], o["stats"][k]
                    ));
                }
            }
        }
        _ if cex(o)["kind"] != "ltl" && cex(o)["events"] != cex(m)["events"] => {
            return Err(format!("{what}: another counterexample"));
        }
        _ => {}
    }
    Ok(())
}

#[test]
fn examples_on_two_and_four_ranks() {
    let Some(mpirun) = mpirun() else { return };
    let cases: &[&[&str]] = &[
        &["examples/dve/peterson.dve"],
        &["examples/dve/peterson.dve", "--model", "pso1"],
        &[
            "examples/dve/peterson.dve",
            "--model",
            "tso",
            "--keep-going",
        ],
        &["examples/dve/philosophers.dve", "--deadlock"],
        &["examples/dve/counter.dve"],
        &["examples/dve/peterson_ltl.dve"],
        &["examples/dve/peterson_starve.dve"],
        &["examples/dve/peterson_starve.dve", "--fair"],
        &[
            "examples/dve/peterson.dve",
            "--ltl",
            "examples/dve/peterson.ltl",
        ],
    ];
    let mut wrong = Vec::new();
    for args in cases {
        if let Err(e) = same(&mpirun, 2, args) {
            wrong.push(e);
        }
    }
    if let Err(e) = same(&mpirun, 4, cases[1]) {
        wrong.push(e);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn beem_instances_on_two_ranks() {
    let Some(mpirun) = mpirun() else { return };
    let dir = root().join("../shared/dve/beem");
    let Ok(tsv) = std::fs::read_to_string(dir.join("instances.tsv")) else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    let mut families = std::collections::HashSet::new();
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c[4].parse::<u64>().map_or(true, |n| n > 20_000) {
            continue;
        }
        let file = dir.join(c[0]).display().to_string();
        // Every instance's whole state space, and one LTL property of each family
        // (crates/fencer-explicit/tests/dist.rs holds every property, ranks as threads).
        let args: Vec<&str> = match c[9] {
            "" => vec![&file, "--keep-going"],
            "LTL" if families.insert(c[1]) => vec![&file],
            _ => continue,
        };
        match same(&mpirun, 2, &args) {
            Ok(()) => checked += 1,
            Err(e) => wrong.push(e),
        }
    }
    eprintln!("{checked} BEEM runs agree on 2 ranks");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 20, "{checked}");
}

#[test]
fn what_does_not_run_across_ranks_is_refused_once() {
    let Some(mpirun) = mpirun() else { return };
    for (args, says) in [
        (&["examples/sb.fen"][..], "search DVE models only"),
        (&["examples/dve/peterson.dve", "--jobs", "2"][..], "--jobs"),
    ] {
        let out = run(&mpirun, 2, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches(says).count(), 1, "{args:?}: {err}");
    }
}

/// The output docs/guide/parallel.md shows for `mpirun` (a ```text block trycmd cannot
/// run): the same verdict and counterexample lines, and a `ranks:` block.
#[test]
fn the_guides_mpirun_output_holds() {
    let Some(mpirun) = mpirun() else { return };
    let guide = std::fs::read_to_string(root().join("docs/guide/parallel.md")).unwrap();
    let cmd = "$ mpirun -q -np 2 fencer check examples/dve/philosophers.dve --deadlock\n";
    let at = guide.find(cmd).expect("the guide shows the command") + cmd.len();
    let shown: Vec<&str> = guide[at..]
        .lines()
        .take_while(|l| !l.starts_with("states:"))
        .collect();
    let out = run(&mpirun, 2, &["examples/dve/philosophers.dve", "--deadlock"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let got: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("states:"))
        .collect();
    assert_eq!(got, shown);
    assert!(text.contains("\nranks: 2\n  rank 0: 7 states"), "{text}");
}
