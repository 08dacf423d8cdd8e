//! How a split run (`--jobs`, `--shard`) describes itself: the `split` field of its JSON
//! result, its `split:` line, and a shard's headline, which is never a verdict.

use crate::Options;
use fencer_dpor::{Shard, SplitResult};
use fencer_report::Report;
use serde_json::{json, Value};

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
    args: &Options,
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
