//! Every row of `../shared/cubicle/VERDICTS.tsv` fencer supports gives its verdict; the
//! others are listed with the reason. Rows needing Cubicle's BRAB run with the row's
//! options (`-brab 2`, `-forward-depth 6`); those of `common::BRAB_PASS` must give their
//! verdict, the others must not answer wrongly (they stop at their limit instead).

mod common;

use fencer_param::{check, Options, Outcome};
use std::time::Duration;

fn run(slow: bool) {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    let mut wrong = Vec::new();
    let mut unsupported = Vec::new();
    let mut passed = 0;
    for row in common::rows(&dir) {
        if common::is_slow(&row) != slow {
            continue;
        }
        let sys = match common::load(&dir, &row) {
            Ok(s) => s,
            Err(e) => {
                // Every TSO row gives its verdict but those known to be refused.
                if row.mode == "tso" && !common::REFUSED_TSO.iter().any(|r| r.0 == row.file) {
                    wrong.push(format!("{} (tso): refused: {e}", row.file));
                }
                unsupported.push(format!("{} ({}): {e}", row.file, row.mode));
                continue;
            }
        };
        let opts = Options {
            max_nodes: Some(if row.brab { 2_000 } else { 20_000 }),
            // Rows that answer get room for debug builds (flash_buggy: under 1 s in release);
            // the others only show that they do not answer wrongly.
            timeout: Some(Duration::from_secs(
                match (row.brab, common::BRAB_PASS.contains(&row.file.as_str())) {
                    (true, true) => 30,
                    (true, false) => 3,
                    _ => 120,
                },
            )),
            brab: row.option("-brab").map(|n| n as u8),
            forward_depth: row.option("-forward-depth"),
        };
        let r = check(&sys, &opts);
        let got = match &r.outcome {
            Outcome::Safe { .. } => Some(true),
            Outcome::Unsafe { .. } => Some(false),
            Outcome::Limit(_) => None,
            Outcome::Spurious { why, .. } => {
                wrong.push(format!(
                    "{} ({}): a spurious trace: {why}",
                    row.file, row.mode
                ));
                continue;
            }
        };
        match got {
            Some(v) if v == row.safe => passed += 1,
            None if common::PLAIN_OPEN.contains(&row.file.as_str()) => unsupported.push(format!(
                "{} ({}): stopped at {} nodes without an answer",
                row.file, row.mode, r.nodes
            )),
            None if row.brab && !common::BRAB_PASS.contains(&row.file.as_str()) => unsupported
                .push(format!(
                    "{} ({}): BRAB ({}) stopped at {} nodes after {} restarts without an answer",
                    row.file, row.mode, row.options, r.nodes, r.restarts
                )),
            g => wrong.push(format!(
                "{} ({}): expected {}, got {:?} after {} nodes",
                row.file,
                row.mode,
                if row.safe { "safe" } else { "unsafe" },
                g,
                r.nodes
            )),
        }
    }
    eprintln!("{passed} rows give their verdict; unsupported:");
    for u in &unsupported {
        eprintln!("  {u}");
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
    assert!(passed > 0 || slow);
}

#[test]
fn corpus_verdicts() {
    run(false);
}

/// The slowest rows, a test of their own so that the others report first: `germanish4`
/// (SAFE, 618 cubes against Cubicle's 677), `distrib_channels` (SAFE, 1,254 against
/// 1,016) and `distrib_channels_int1` (UNSAFE). Since subsumption got faster they take
/// about 2 s together in the test profile, so CI runs them too.
#[test]
fn corpus_verdicts_slow() {
    run(true);
}

/// Slow rows without BRAB in their options: with `brab: Some(2)` fencer gives their SAFE
/// verdict in milliseconds (`germanish4`: 20 nodes, about 0.2 s without BRAB in a release
/// build; `distrib_channels`: 5, about 1.2 s without BRAB).
#[test]
fn slow_safe_rows_with_brab() {
    let Some(dir) = common::corpus() else {
        eprintln!("skipped: ../shared/cubicle is not here");
        return;
    };
    for row in common::rows(&dir) {
        if !["classic/germanish4.cub", "classic/distrib_channels.cub"].contains(&row.file.as_str())
        {
            continue;
        }
        let sys = common::load(&dir, &row).unwrap();
        let r = check(
            &sys,
            &Options {
                max_nodes: Some(2_000),
                timeout: Some(Duration::from_secs(20)),
                brab: Some(2),
                ..Default::default()
            },
        );
        assert!(row.safe, "{}", row.file);
        assert!(
            matches!(r.outcome, Outcome::Safe { .. }),
            "{}: {:?} after {} nodes",
            row.file,
            r.outcome,
            r.nodes
        );
    }
}
