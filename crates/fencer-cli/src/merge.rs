//! `check --shard I/N` and `fencer merge`: the split tree's description in the JSON
//! result, and the combination of one result per shard into one verdict.

use crate::{out, usage_error, CheckArgs};
use fencer_dpor::{Shard, SplitResult};
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

/// `I/N` with 1 <= I <= N, as the engine's 0-based shard.
pub fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = |why: &str| {
        format!("error: --shard {s}: {why}\n  help: --shard I/N explores shard I of N, 1 <= I <= N (e.g. --shard 2/4)")
    };
    let (i, n) = s.split_once('/').ok_or_else(|| bad("expected I/N"))?;
    let i: u32 = i.trim().parse().map_err(|_| bad("I is not a number"))?;
    let n: u32 = n.trim().parse().map_err(|_| bad("N is not a number"))?;
    if n == 0 {
        return Err(bad("N must be at least 1"));
    }
    if i == 0 || i > n {
        return Err(bad("I must be between 1 and N"));
    }
    Ok(Shard {
        index: i - 1,
        count: n,
    })
}

/// The `split` field of a split run's JSON result.
pub fn split_json(
    args: &CheckArgs,
    prog: &fencer_ir::Program,
    jobs: usize,
    shard: Option<Shard>,
    s: &SplitResult,
) -> Value {
    json!({
        "jobs": jobs,
        "units": s.units,
        "frontier_depth": s.depth,
        // The exact split moves its depth up while units prove small: its last unit's.
        "last_depth": s.last_depth,
        // "exact": one worker's exploration, its subtrees below the depth explored ahead
        // by the other workers (--jobs, Optimal-DPOR); "races": the top of the tree is
        // Source-DPOR fed by the units' races (--jobs, Source-DPOR); "frontier": a
        // static, fully expanded top (--shard).
        "method": s.method.name(),
        "ahead": (s.method == fencer_dpor::Method::Exact).then_some(s.ahead),
        // The exact split: events workers explored in units the leader did not take
        // (mispredicted, or dropped by a depth move or by going on alone), and those of
        // the units it took; the first over the second is what the split threw away.
        "dropped_events": s.dropped.map(|d| d.0),
        "unit_events": s.dropped.map(|d| d.1),
        // The exact split: units a depth move left finished, which units at the new depth
        // took where they reached them instead of exploring them again.
        "kept_units": (s.method == fencer_dpor::Method::Exact).then_some(s.kept),
        // The exact split's leader went on alone after this many units: too little of
        // the units' work was done before it needed them for the split to pay.
        "alone_after": s.fell_back,
        "shard": shard.map(|s| json!({ "index": s.index + 1, "count": s.count })),
        "violation_unit": s.violation_unit,
        // Total work over the busiest worker's, were a unit's time its events (not known
        // for the exact split, whose leader takes the units in its own order).
        "balance": (s.method != fencer_dpor::Method::Exact)
            .then(|| (fencer_dpor::predicted_speedup(&s.unit_events, jobs) * 100.0).round() / 100.0),
        "program_hash": fencer_view::program_hash(prog),
        "options": {
            "all": args.all,
            "unroll": args.unroll,
            "max_depth": args.max_depth,
        },
    })
}

/// The report's JSON with the `split` field added.
pub fn with_split(report: &Report, info: &Value) -> String {
    let mut v = serde_json::to_value(report).expect("a report always serialises");
    v["split"] = info.clone();
    serde_json::to_string_pretty(&v).expect("json")
}

/// The part of an exact split's work thrown away: events explored in units the leader
/// did not take, over those of the units it took.
pub fn thrown_share(info: &Value) -> Option<f64> {
    match (
        info["dropped_events"].as_f64(),
        info["unit_events"].as_f64(),
    ) {
        (Some(d), Some(u)) if u > 0.0 => Some(d / u),
        _ => None,
    }
}

/// The headline of a shard's run that found no violation: what it covered, never SAFE
/// (the other shards' units are unexplored); `None` for a run that is not a shard.
pub fn shard_headline(info: &Value) -> Option<String> {
    let sh = info["shard"].as_object()?;
    let (i, n) = (sh["index"].as_u64()?, sh["count"].as_u64()?);
    let units = info["units"].as_u64()?;
    // Shard I takes the units of index I-1 modulo N.
    let mine = if i > units { 0 } else { (units - i) / n + 1 };
    Some(format!(
        "no violation in shard {i}/{n}'s {mine} of {units} units (a partial run: `fencer merge` of every shard's --json result gives the verdict)"
    ))
}

pub fn split_text(info: &Value) -> String {
    let at = if info["method"] == "races" {
        "below a race-driven top of depth"
    } else if info["method"] == "exact" {
        "below depth"
    } else {
        "at depth"
    };
    let plural = |v: &Value| if *v == 1 { "" } else { "s" };
    let mut s = format!(
        "split: {} unit{} {at} {}, {} worker{}",
        info["units"],
        plural(&info["units"]),
        info["frontier_depth"],
        info["jobs"],
        plural(&info["jobs"])
    );
    if let Some(l) = info["last_depth"].as_u64() {
        s += &format!(", moved up to {l} as units proved small");
    }
    if let Some(sh) = info["shard"].as_object() {
        s += &format!("; shard {}/{}", sh["index"], sh["count"]);
        // Shard I takes the units of index I-1 modulo N: none when I exceeds them.
        if let (Some(i), Some(u)) = (sh["index"].as_u64(), info["units"].as_u64()) {
            if i > u {
                s += &format!(" (no unit: shard {i} of more shards than the {u} units)");
            }
        }
    }
    if let Some(u) = info["violation_unit"].as_u64() {
        s += &format!("; counterexample from unit {u}");
    }
    if info["method"] == "exact" {
        if info["jobs"] != 1 {
            s += &format!(" ({} explored ahead of the one-worker order", info["ahead"]);
            if let Some(k) = info["kept_units"].as_u64().filter(|&k| k > 0) {
                s += &format!(", {k} kept across depth moves");
            }
            if let Some(t) = thrown_share(info) {
                s += &format!("; {:.1}% more events explored than taken", 100.0 * t);
            }
            s.push(')');
            if let Some(n) = info["alone_after"].as_u64() {
                s += &format!(
                    "; one worker after unit {n}: units came one after another, the split did not pay"
                );
            }
        }
    } else if info["jobs"] != 1 {
        s += &format!(
            " (balance {}: speedup on idle cores at best)",
            info["balance"]
        );
    }
    s.push('\n');
    s
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
