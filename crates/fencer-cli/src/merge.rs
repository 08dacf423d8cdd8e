//! `check --shard I/N` and `fencer merge`: the split tree's description in the JSON
//! result, and the combination of one result per shard into one verdict.

use crate::{out, usage_error};
use fencer::split::with_split;
use fencer_report::{Report, Verdict};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

pub const AFTER_HELP: &str = "Each file is the `--json` output of `fencer check FILE --shard I/N \
--json` for one I; together they must cover 1..N of one run (same program, model, algorithm \
and options). The merged verdict is a violation if any shard found one (the counterexample \
of the smallest unit index, the one `--shard 1/1` reports, which may differ from `--jobs 1`'s: \
the frontier orders the tree differently), else incomplete if any shard stopped at a limit, \
else safe. Statistics are summed; the time is the longest shard's. When no shard stopped early \
(at a violation without --all, or at a limit), the executions, `blocked` (by an assume, a \
deadlock or a bound: one per trace) and the final states are exactly a one-worker run's; \
`sleep-set blocked` (explorations a sleep set stopped, which the shards' units have and one \
Optimal-DPOR worker has not), events and races count the shards' own work. With a stop at a \
violation the sums include the units after it, so they grow with N.\n\n\
Example:\n  for i in 1 2 3; do fencer check prog.c --shard $i/3 --json > part$i.json & done; wait\n  \
fencer merge part1.json part2.json part3.json\n\n\
Exit codes: 0 safe, 1 violation, 2 bad input (unreadable file, a missing or repeated shard, \
parts of different runs), 3 a shard stopped at a limit.";

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shards' JSON results.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print the merged result as JSON.
    #[arg(long)]
    json: bool,
    /// Also print the number of races found and reversed.
    #[arg(long, short)]
    verbose: bool,
}

/// One shard's result.
struct Part {
    file: String,
    report: Report,
    split: Value,
    index: u64,
    count: u64,
}

fn read_part(file: &std::path::Path) -> Result<Part, String> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("{name}: error: cannot read the file: {e}"))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{name}:{}:{}: error: not JSON: {e}", e.line(), e.column()))?;
    if let Some(m) = v.get("error") {
        return Err(format!(
            "{name}: error: this run failed: {}",
            m["message"].as_str().unwrap_or("")
        ));
    }
    let split = v.get("split").cloned().unwrap_or(Value::Null);
    let (Some(index), Some(count)) = (
        split["shard"]["index"].as_u64(),
        split["shard"]["count"].as_u64(),
    ) else {
        return Err(format!(
            "{name}: error: not the result of a `fencer check --shard I/N --json` run (no `split.shard`)"
        ));
    };
    if count == 0 || count > u32::MAX as u64 || index == 0 || index > count {
        return Err(format!(
            "{name}: error: `split.shard` says shard {index} of {count}: expected 1 <= I <= N <= {}",
            u32::MAX
        ));
    }
    let report: Report = serde_json::from_value(v)
        .map_err(|e| format!("{name}: error: not a result of `fencer check --json`: {e}"))?;
    Ok(Part {
        file: name,
        report,
        split,
        index,
        count,
    })
}

/// What must be equal in every part of one run.
fn run_key(p: &Part) -> [(&'static str, Value); 8] {
    let r = &p.report;
    [
        ("program", json!(r.program)),
        ("program hash", p.split["program_hash"].clone()),
        ("model", json!(r.model)),
        ("engine", json!(r.engine)),
        ("algorithm", json!(r.algo)),
        ("options", p.split["options"].clone()),
        ("number of shards", json!(p.count)),
        ("units", p.split["units"].clone()),
    ]
}

pub fn merge(args: MergeArgs) -> ExitCode {
    match merged(&args) {
        Ok((report, info)) => {
            if args.json {
                out(&format!("{}\n", with_split(&report, &info)));
            } else {
                out(&report.to_text(args.verbose));
                let mut s = format!(
                    "merged: {} shards of {} units (depth {})",
                    info["shards"], info["units"], info["frontier_depth"]
                );
                if let Some(u) = info["violation_unit"].as_u64() {
                    s += &format!("; counterexample from unit {u}");
                }
                out(&format!("{s}\n"));
            }
            ExitCode::from(report.verdict.exit_code() as u8)
        }
        Err(msg) => usage_error(args.json, &msg, None),
    }
}

fn merged(args: &MergeArgs) -> Result<(Report, Value), String> {
    let parts = args
        .files
        .iter()
        .map(|f| read_part(f))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &parts[0];
    let key = run_key(first);
    for p in &parts[1..] {
        for ((what, a), (_, b)) in key.iter().zip(run_key(p)) {
            if *a != b {
                return Err(format!(
                    "error: {} and {} are not shards of one run: they differ in {what} ({a} and {b})",
                    first.file, p.file
                ));
            }
        }
    }
    let n = first.count;
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    for p in &parts {
        if let Some(other) = seen.insert(p.index, &p.file) {
            return Err(format!(
                "error: shard {}/{n} appears twice ({other} and {})",
                p.index, p.file
            ));
        }
    }
    // Every index is in 1..=n and none repeats: the shards are all there when there are n.
    let absent = n - seen.len() as u64;
    if absent > 0 {
        // The first few only: N can be in the billions.
        let first: Vec<String> = (1..=n)
            .filter(|i| !seen.contains_key(i))
            .take(10)
            .map(|i| i.to_string())
            .collect();
        let more = if absent > first.len() as u64 {
            format!(" and {} more", absent - first.len() as u64)
        } else {
            String::new()
        };
        return Err(format!(
            "error: shard{} {}{more} of {n} missing: every shard's result is needed for a verdict",
            if absent == 1 { "" } else { "s" },
            first.join(", ")
        ));
    }
    for p in &parts {
        let r = &p.report;
        let Some(c) = &r.final_state_executions else {
            continue;
        };
        if r.final_states.as_ref().is_none_or(|f| f.len() != c.len()) {
            return Err(format!(
                "{}: error: `final_states` and `final_state_executions` differ in length",
                p.file
            ));
        }
    }
    let mut r = first.report.clone();
    // Sums that overflow come only from edited files; they saturate rather than wrap.
    let sum = |f: &dyn Fn(&Report) -> u64| {
        parts
            .iter()
            .fold(0u64, |a, p| a.saturating_add(f(&p.report)))
    };
    let sum_opt = |f: &dyn Fn(&Report) -> Option<u64>| {
        parts
            .iter()
            .map(|p| f(&p.report))
            .try_fold(0u64, |a, x| x.map(|x| a.saturating_add(x)))
    };
    let st = &mut r.stats;
    st.executions = sum(&|r| r.stats.executions);
    st.blocked = sum(&|r| r.stats.blocked);
    st.assume_blocked = sum(&|r| r.stats.assume_blocked);
    st.waits_forever = sum(&|r| r.stats.waits_forever);
    st.depth_cut = sum(&|r| r.stats.depth_cut);
    st.unroll_cut = sum(&|r| r.stats.unroll_cut);
    st.recursion_cut = sum(&|r| r.stats.recursion_cut);
    st.local_loop_cut = sum(&|r| r.stats.local_loop_cut);
    st.events = sum(&|r| r.stats.events);
    st.sleep_blocked = sum_opt(&|r| r.stats.sleep_blocked);
    st.races = sum_opt(&|r| r.stats.races);
    st.reversed = sum_opt(&|r| r.stats.reversed);
    // The shards ran side by side: the run took as long as the longest one.
    st.elapsed_ms = parts
        .iter()
        .map(|p| p.report.stats.elapsed_ms)
        .max()
        .unwrap_or(0);
    st.peak_rss_kib = parts
        .iter()
        .filter_map(|p| p.report.stats.peak_rss_kib)
        .max();
    st.executions_per_sec = st.executions as f64 / (st.elapsed_ms as f64 / 1000.0).max(1e-3);
    r.executions = st.executions;
    r.blocked = st.blocked;
    r.elapsed_ms = st.elapsed_ms;
    let mut finals: BTreeMap<Vec<i64>, u64> = BTreeMap::new();
    let mut any_finals = false;
    for p in &parts {
        if let Some(fs) = &p.report.final_states {
            any_finals = true;
            let counts = p.report.final_state_executions.clone().unwrap_or_default();
            for (k, s) in fs.iter().enumerate() {
                let n = finals.entry(s.clone()).or_default();
                *n = n.saturating_add(counts.get(k).copied().unwrap_or(0));
            }
        }
    }
    if any_finals {
        r.final_state_executions = Some(finals.values().copied().collect());
        r.final_states = Some(finals.into_keys().collect());
    }
    // The counterexample one run would report: that of the smallest unit.
    let violating = parts
        .iter()
        .filter(|p| p.report.counterexample.is_some())
        .min_by_key(|p| p.split["violation_unit"].as_u64().unwrap_or(u64::MAX));
    r.counterexample = violating.and_then(|p| p.report.counterexample.clone());
    let violation_unit = violating.and_then(|p| p.split["violation_unit"].as_u64());
    r.stopped_by = parts.iter().find_map(|p| p.report.stopped_by.clone());
    // A part's verdict counts even without its counterexample (a result saved without it).
    let violated = parts.iter().any(|p| p.report.verdict == Verdict::Violation);
    r.verdict = if r.counterexample.is_some() || violated {
        Verdict::Violation
    } else if r.stopped_by.is_some() {
        Verdict::Incomplete
    } else {
        Verdict::Safe
    };
    let info = json!({
        "shards": n,
        "units": first.split["units"],
        "frontier_depth": first.split["frontier_depth"],
        "violation_unit": violation_unit,
        "program_hash": first.split["program_hash"],
        "options": first.split["options"],
        "parts": parts.iter().map(|p| p.file.clone()).collect::<Vec<_>>(),
    });
    Ok((r, info))
}
