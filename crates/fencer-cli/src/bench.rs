//! `fencer bench`: runs `fencer check` on a set of programs under each model, one child
//! process per run (so that each run's peak memory is its own), and prints a table and,
//! with `--json`, the same rows as JSON.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

pub struct BenchOptions {
    pub paths: Vec<PathBuf>,
    pub models: Vec<&'static str>,
    pub algo: &'static str,
    pub timeout: f64,
    pub json: bool,
    /// Robustness mode: `fencer robust` with the monitor and with the exhaustive method.
    pub robust: bool,
    /// DVE models: threads for reachability.
    pub jobs: usize,
    /// Scaling mode: this many rounds of `--jobs 1`, `--jobs N` and N independent
    /// `--jobs 1` runs side by side.
    pub scaling: Option<usize>,
    /// Pass `--no-spin-assume` to every DPOR run: the programs as written.
    pub no_spin_assume: bool,
}

fn is_program(f: &Path) -> bool {
    let ext = f.extension().and_then(|x| x.to_str());
    matches!(ext, Some("fen" | "dve"))
        || (cfg!(feature = "c") && matches!(ext, Some("c" | "ll" | "bc")))
}

/// The programs named (`.fen`, and C files when built with C support), directories
/// expanded (sorted).
fn programs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .map_err(|e| format!("{}: error: cannot read the directory: {e}", p.display()))?;
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| is_program(f))
                .collect();
            v.sort();
            out.extend(v);
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: error: no such file or directory", p.display()));
        }
    }
    if out.is_empty() {
        return Err("error: no programs (`.fen`, `.dve`, `.c`, `.ll`, `.bc`) to run".into());
    }
    Ok(out)
}

/// The verdict expected for `model`: from the program's `// expect: sc=... tso=... pso=...`
/// line, else from an `expected.tsv` beside it (columns `file sc tso pso`, verdicts `safe`
/// or `unsafe`, the layout of the shared C benchmarks).
fn expected(path: &Path, model: &str) -> Option<String> {
    let src = std::fs::read_to_string(path).ok()?;
    if let Some(line) = src.lines().find_map(|l| l.strip_prefix("// expect:")) {
        return line.split_whitespace().find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == model).then(|| v.to_string())
        });
    }
    let table = std::fs::read_to_string(path.parent()?.join("expected.tsv")).ok()?;
    let mut rows = table.lines().map(|l| l.split('\t').collect::<Vec<_>>());
    let header = rows.next()?;
    let col = header.iter().position(|h| h.eq_ignore_ascii_case(model))?;
    let name = path.file_name()?.to_str()?;
    let row = rows.find(|r| r.first() == Some(&name))?;
    Some(match *row.get(col)? {
        "unsafe" => "violation".to_string(),
        v => v.to_string(),
    })
}

fn run_one(exe: &Path, file: &Path, model: &str, o: &BenchOptions) -> Value {
    let start = Instant::now();
    let out = Command::new(exe)
        .arg("check")
        .arg(file)
        .args(if model == "dve" {
            vec!["--json".to_string(), "--jobs".into(), o.jobs.to_string()]
        } else if file.extension().is_some_and(|e| e == "cub") {
            // The parameterized engine has no DPOR algorithm and runs on one thread.
            ["--model", model, "--json"].map(String::from).to_vec()
        } else {
            // DPOR runs one worker unless said, so that rows compare engines, not cores.
            let jobs = o.jobs.to_string();
            [
                "--model", model, "--algo", o.algo, "--json", "--jobs", &jobs,
            ]
            .map(String::from)
            .to_vec()
        })
        .args(["--timeout", &o.timeout.to_string()])
        .args(if file.extension().is_some_and(|e| e == "cub") {
            &[]
        } else {
            spin_flag(model, o)
        })
        .output();
    let wall_ms = start.elapsed().as_secs_f64() * 1000.0;
    let name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expect = expected(file, model);
    let parsed: Option<Value> = out
        .as_ref()
        .ok()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok());
    // A run that failed (bad input, an internal error) prints `{"error": {...}}` instead
    // of a report: its message is the row's error, as stderr is when there is no JSON.
    let failed = parsed
        .as_ref()
        .and_then(|r| r.get("error"))
        .map(|e| e["message"].as_str().unwrap_or("").to_string());
    let report = parsed.filter(|_| failed.is_none());
    let Some(r) = report else {
        let why = match (&out, failed) {
            (_, Some(m)) => m,
            (Ok(o), None) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
            (Err(e), None) => e.to_string(),
        };
        return json!({
            "program": name, "file": file.display().to_string(), "model": model,
            "verdict": "error", "expected": expect, "error": why, "wall_ms": wall_ms,
        });
    };
    let verdict = r["verdict"].as_str().unwrap_or("error").to_string();
    let st = &r["stats"];
    // A DVE run's rate is in states per second of exploration.
    let rate = match (model, st["states"].as_f64(), st["elapsed_ms"].as_f64()) {
        ("dve", Some(n), Some(ms)) => json!(n / (ms.max(1.0) / 1000.0)),
        _ => st["executions_per_sec"].clone(),
    };
    json!({
        "program": name,
        "file": file.display().to_string(),
        "model": model,
        "algo": o.algo,
        "no_spin_assume": o.no_spin_assume,
        "verdict": verdict,
        "expected": expect,
        "executions": st["executions"],
        "states": st["states"],
        "transitions": st["transitions"],
        "blocked": st["blocked"],
        "sleep_blocked": st["sleep_blocked"],
        "events": st["events"],
        "executions_per_sec": rate,
        "explore_ms": st["elapsed_ms"],
        "wall_ms": wall_ms,
        "peak_rss_kib": st["peak_rss_kib"],
    })
}

/// The robustness expected for `model` from a `// robust: tso=yes pso=no` line.
fn expected_robust(path: &Path, model: &str) -> Option<bool> {
    let src = std::fs::read_to_string(path).ok()?;
    let line = src.lines().find_map(|l| l.strip_prefix("// robust:"))?;
    line.split_whitespace().find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == model).then_some(v == "yes")
    })
}

fn robust_json(
    exe: &Path,
    file: &Path,
    model: &str,
    method: &str,
    o: &BenchOptions,
) -> (Option<Value>, f64) {
    let start = Instant::now();
    let out = Command::new(exe)
        .arg("robust")
        .arg(file)
        .args([
            "--model", model, "--method", method, "--algo", o.algo, "--json",
        ])
        .args(["--timeout", &o.timeout.to_string()])
        .output();
    let wall = start.elapsed().as_secs_f64() * 1000.0;
    (
        out.ok()
            .and_then(|o| serde_json::from_slice(&o.stdout).ok()),
        wall,
    )
}

/// Robustness mode: per program and weak model, the monitor's run (SC exploration and
/// monitoring time separately) and the exhaustive method's.
fn bench_robust(exe: &Path, files: &[PathBuf], o: &BenchOptions) -> ExitCode {
    let mut rows = Vec::new();
    let mut mismatches = 0;
    if !o.json {
        super::out(&format!(
            "{:<18} {:<5} {:<10} {:>5} {:>5} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9}\n",
            "program",
            "model",
            "robust",
            "pairs",
            "exh",
            "SC execs",
            "SC ms",
            "mon ms",
            "mon %",
            "weak exec",
            "exh ms"
        ));
    }
    for f in files {
        for &m in o.models.iter().filter(|m| **m != "sc") {
            let (mon, mon_wall) = robust_json(exe, f, m, "monitor", o);
            let (exh, exh_wall) = robust_json(exe, f, m, "exhaustive", o);
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let robust = |r: &Option<Value>| r.as_ref().and_then(|r| r["robust"].as_bool());
            let pairs = |r: &Option<Value>| {
                r.as_ref()
                    .and_then(|r| r["violations"].as_array().map(|v| v.len()))
            };
            let (rm, re) = (robust(&mon), robust(&exh));
            let expect = expected_robust(f, m);
            let ok = rm.is_some() && rm == re && expect.is_none_or(|e| Some(e) == rm);
            if !ok {
                mismatches += 1;
            }
            let total = mon.as_ref().and_then(|r| r["elapsed_ms"].as_f64());
            let mon_ms = mon.as_ref().and_then(|r| r["monitor_ms"].as_f64());
            let sc_ms = total.zip(mon_ms).map(|(t, m)| (t - m).max(0.0));
            let row = json!({
                "program": name,
                "file": f.display().to_string(),
                "model": m,
                "robust": rm,
                "expected": expect,
                "exhaustive_robust": re,
                "monitor_pairs": pairs(&mon),
                "exhaustive_pairs": pairs(&exh),
                "sc_executions": mon.as_ref().map(|r| r["executions"].clone()),
                "sc_explore_ms": sc_ms,
                "monitor_ms": mon_ms,
                "monitor_overhead_percent": sc_ms.zip(mon_ms).map(|(s, m)| if s > 0.0 { 100.0 * m / s } else { 0.0 }),
                "monitor_wall_ms": mon_wall,
                "weak_executions": exh.as_ref().map(|r| r["executions"].clone()),
                "exhaustive_ms": exh.as_ref().and_then(|r| r["elapsed_ms"].as_f64()),
                "exhaustive_wall_ms": exh_wall,
            });
            if !o.json {
                let word = match rm {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "?",
                };
                let f1 = |v: &Value| v.as_f64().map_or("-".into(), |x| format!("{x:.0}"));
                let n = |v: &Value| v.as_u64().map_or("-".into(), |x| x.to_string());
                super::out(&format!(
                    "{:<18} {:<5} {:<10} {:>5} {:>5} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9}\n",
                    name,
                    m,
                    if ok {
                        word.to_string()
                    } else {
                        format!("{word}!")
                    },
                    n(&row["monitor_pairs"]),
                    n(&row["exhaustive_pairs"]),
                    n(&row["sc_executions"]),
                    f1(&row["sc_explore_ms"]),
                    f1(&row["monitor_ms"]),
                    row["monitor_overhead_percent"]
                        .as_f64()
                        .map_or("-".into(), |x| format!("{x:.1}")),
                    n(&row["weak_executions"]),
                    f1(&row["exhaustive_ms"]),
                ));
            }
            rows.push(row);
        }
    }
    if o.json {
        super::out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({ "runs": rows, "mismatches": mismatches }))
                .expect("json")
        ));
    } else if mismatches > 0 {
        super::out(&format!(
            "\n{mismatches} row(s) marked `!`: the two methods disagree, or the program's `// robust:` line does\n"
        ));
    }
    ExitCode::from(if mismatches > 0 { 1 } else { 0 })
}

pub fn bench(o: BenchOptions) -> ExitCode {
    let files = match programs(&o.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(super::EXIT_USAGE);
        }
    };
    let exe = match own_exe() {
        Ok(e) => e,
        Err(c) => return c,
    };
    if o.robust {
        return bench_robust(&exe, &files, &o);
    }
    if let Some(rounds) = o.scaling {
        return bench_scaling(&exe, &files, &o, rounds);
    }
    let mut rows = Vec::new();
    let mut mismatches = 0;
    if !o.json {
        super::out(&format!(
            "{:<20} {:<5} {:<11} {:>9} {:>8} {:>11} {:>9} {:>8}\n",
            "program", "model", "verdict", "execs", "blocked", "execs/s", "wall ms", "RSS MiB"
        ));
    }
    for f in &files {
        // A DVE model has no memory model: one run, its states in the executions column.
        let dve = f.extension().is_some_and(|x| x == "dve");
        let models: &[&str] = if dve { &["dve"] } else { &o.models };
        for m in models {
            let row = run_one(&exe, f, m, &o);
            let verdict = row["verdict"].as_str().unwrap_or("error");
            let ok = match row["expected"].as_str() {
                Some(e) => e == verdict,
                None => verdict != "error",
            };
            if !ok {
                mismatches += 1;
            }
            if !o.json {
                let num = |k: &str| row[k].as_u64().map_or("-".into(), |n| n.to_string());
                super::out(&format!(
                    "{:<20} {:<5} {:<11} {:>9} {:>8} {:>11} {:>9.0} {:>8}\n",
                    row["program"].as_str().unwrap_or(""),
                    m,
                    if ok {
                        verdict.to_string()
                    } else {
                        format!("{verdict}!")
                    },
                    if dve {
                        num("states")
                    } else {
                        num("executions")
                    },
                    num("blocked"),
                    row["executions_per_sec"]
                        .as_f64()
                        .map_or("-".into(), |r| format!("{r:.0}")),
                    row["wall_ms"].as_f64().unwrap_or(0.0),
                    row["peak_rss_kib"]
                        .as_u64()
                        .map_or("-".into(), |k| format!("{:.1}", k as f64 / 1024.0)),
                ));
            }
            rows.push(row);
        }
    }
    if o.json {
        super::out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({ "runs": rows, "mismatches": mismatches }))
                .expect("json")
        ));
    } else if mismatches > 0 {
        super::out(&format!(
            "\n{mismatches} run(s) marked `!` disagree with their program's `// expect:` line\n"
        ));
    }
    ExitCode::from(if mismatches > 0 { 1 } else { 0 })
}

/// A `check --all --json` run with `jobs` workers, started (see [`timed`]).
fn spin_flag(model: &str, o: &BenchOptions) -> &'static [&'static str] {
    if o.no_spin_assume && model != "dve" {
        &["--no-spin-assume"]
    } else {
        &[]
    }
}

fn start_check(
    exe: &Path,
    file: &Path,
    model: &str,
    jobs: usize,
    o: &BenchOptions,
) -> std::io::Result<std::process::Child> {
    let mut c = Command::new(exe);
    c.arg("check").arg(file);
    if model != "dve" {
        c.args(["--model", model, "--algo", o.algo, "--all"]);
    }
    c.arg("--json")
        .args(["--jobs", &jobs.to_string()])
        .args(["--timeout", &o.timeout.to_string()])
        .args(spin_flag(model, o))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
}

/// A finished run's exploration time in ms (the engine's, which leaves a C front-end's
/// clang out), complete executions (a DVE model's states), and, for an exact split, the
/// part of the units' events thrown away; `Err` says why there is none (a limit stopped
/// it, or it failed).
fn timed(child: std::io::Result<std::process::Child>) -> Result<(f64, u64, Option<f64>), String> {
    let out = child
        .and_then(|c| c.wait_with_output())
        .map_err(|e| e.to_string())?;
    let r: Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| String::from_utf8_lossy(&out.stderr).trim().to_string())?;
    if r["verdict"] == "incomplete" {
        return Err("stopped by --timeout".into());
    }
    let st = &r["stats"];
    let thrown = fencer::split::thrown_share(&r["split"]);
    match (
        st["elapsed_ms"].as_f64(),
        st["states"].as_u64().or(st["executions"].as_u64()),
    ) {
        (Some(ms), Some(n)) => Ok((ms, n, thrown)),
        _ => Err("no statistics in the result".into()),
    }
}

/// This `fencer` executable, which benchmarks run as child processes.
pub(crate) fn own_exe() -> Result<PathBuf, ExitCode> {
    std::env::current_exe().map_err(|e| {
        eprintln!("error: cannot find the fencer executable: {e}");
        ExitCode::from(super::EXIT_USAGE)
    })
}

pub(crate) fn min_median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[(v.len() - 1) / 2])
}

/// Scaling mode: per program and model, `rounds` rounds of one `--jobs 1` run alone, one
/// `--jobs N` run alone, and N independent `--jobs 1` runs side by side, whose slowest
/// says what N cores give N processes on this machine (the *ceiling* of the speedup:
/// N times one run's time over it). Rounds interleave the three, so that a machine whose
/// speed drifts slows them alike; medians and minima of each are reported, and every
/// `--jobs N` run must explore `--jobs 1`'s executions.
fn bench_scaling(exe: &Path, files: &[PathBuf], o: &BenchOptions, rounds: usize) -> ExitCode {
    let n = o.jobs.max(2);
    let mut rows = Vec::new();
    let mut failures = 0;
    if !o.json {
        super::out(&format!(
            "{:<20} {:<5} {:>9} {:>14} {:>14} {:>8} {:>8} {:>8} {:>15} {:>7}\n",
            "program",
            "model",
            "execs",
            "jobs 1 ms",
            format!("jobs {n} ms"),
            "speedup",
            "(min)",
            "ceiling",
            "per round",
            "thrown"
        ));
    }
    for f in files {
        let dve = f.extension().is_some_and(|x| x == "dve");
        let models: &[&str] = if dve { &["dve"] } else { &o.models };
        for &m in models {
            let name = f
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let (mut one, mut many, mut side) = (Vec::new(), Vec::new(), Vec::new());
            let mut thrown = Vec::new();
            let mut error = None;
            let mut execs = None;
            for _ in 0..rounds {
                let a = timed(start_check(exe, f, m, 1, o));
                let b = timed(start_check(exe, f, m, n, o));
                let pair: Vec<_> = (0..n).map(|_| start_check(exe, f, m, 1, o)).collect();
                let pair: Result<Vec<_>, String> = pair.into_iter().map(timed).collect();
                match (a, b, pair) {
                    (Ok((ta, ea, _)), Ok((tb, eb, tw)), Ok(p)) => {
                        if ea != eb {
                            let what = if dve { "states" } else { "executions" };
                            error = Some(format!("--jobs {n} explored {eb} {what}, --jobs 1 {ea}"));
                            break;
                        }
                        execs = Some(ea);
                        one.push(ta);
                        many.push(tb);
                        thrown.extend(tw);
                        side.push(p.iter().map(|x| x.0).fold(0.0, f64::max));
                    }
                    (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let row = match error {
                Some(e) => {
                    failures += 1;
                    if !o.json {
                        super::out(&format!("{name:<20} {m:<5} error: {e}\n"));
                    }
                    json!({ "program": name, "file": f.display().to_string(), "model": m,
                            "error": e })
                }
                None => {
                    // Each round's own speedup and ceiling, its runs minutes apart at most:
                    // on a machine whose speed drifts, the median of these is steadier
                    // than the ratio of the medians.
                    let per_round = |over: &[f64], times: f64| {
                        let mut v: Vec<f64> = one
                            .iter()
                            .zip(over)
                            .filter(|(a, b)| **a >= 1.0 && **b >= 1.0)
                            .map(|(a, b)| times * a / b)
                            .collect();
                        (!v.is_empty()).then(|| min_median(&mut v).1)
                    };
                    let round = per_round(&many, 1.0);
                    let round_ceiling = per_round(&side, n as f64);
                    // Sorted copies: the JSON keeps every round's times in round order.
                    let (a_min, a_med) = min_median(&mut one.clone());
                    let (b_min, b_med) = min_median(&mut many.clone());
                    let (_, s_med) = min_median(&mut side.clone());
                    // Runs of a few milliseconds measure nothing but start-up.
                    let ratio = |a: f64, b: f64| (a >= 1.0 && b >= 1.0).then(|| a / b);
                    let speedup = ratio(a_med, b_med);
                    let speedup_min = ratio(a_min, b_min);
                    let ceiling = ratio(n as f64 * a_med, s_med);
                    // What the exact split explored and did not keep, which unlike the
                    // times does not depend on how busy the machine is.
                    let thrown_med = (!thrown.is_empty()).then(|| min_median(&mut thrown).1);
                    if !o.json {
                        let x = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}x"));
                        super::out(&format!(
                            "{name:<20} {m:<5} {:>9} {:>14} {:>14} {:>8} {:>8} {:>8} {:>15} {:>7}\n",
                            execs.unwrap_or(0),
                            format!("{a_med:.0} ({a_min:.0})"),
                            format!("{b_med:.0} ({b_min:.0})"),
                            x(speedup),
                            x(speedup_min),
                            x(ceiling),
                            format!("{} ({})", x(round), x(round_ceiling)),
                            thrown_med.map_or("-".into(), |t| format!("{:.1}%", 100.0 * t))
                        ));
                    }
                    json!({
                        "program": name, "file": f.display().to_string(), "model": m,
                        "algo": o.algo, "jobs": n, "rounds": rounds, "executions": execs,
                        "no_spin_assume": o.no_spin_assume,
                        "jobs1_ms": one, "jobsn_ms": many, "side_by_side_ms": side,
                        "jobs1_median_ms": a_med, "jobsn_median_ms": b_med,
                        "speedup": speedup, "speedup_of_minima": speedup_min,
                        "ceiling": ceiling,
                        "speedup_per_round_median": round, "ceiling_per_round_median": round_ceiling,
                        "thrown_away": thrown, "thrown_away_median": thrown_med,
                    })
                }
            };
            rows.push(row);
        }
    }
    if o.json {
        super::out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({ "scaling": rows, "failures": failures }))
                .expect("json")
        ));
    } else {
        super::out(&format!(
            "\nmedians of {rounds} rounds (minima in parentheses); speedup: jobs 1 over jobs {n}; \
             ceiling: {n} x jobs 1 over the slowest of {n} jobs-1 runs side by side; \
             per round: the median of each round's own speedup (and ceiling), steadier where \
             the machine's speed drifts between rounds; thrown: events the exact split explored in units it did not take, over those of \
             the units it took (median)\n"
        ));
    }
    ExitCode::from(if failures > 0 { 1 } else { 0 })
}
