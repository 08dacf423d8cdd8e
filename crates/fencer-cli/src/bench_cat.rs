//! `fencer bench --cat MODEL`: litmus tests under a herd7 `.cat` model, one child process
//! per run (the time a user waits, start-up included), with the engine's own time beside
//! it; with `--herd7 PATH`, herd7 on the same tests, runs alternated, medians compared,
//! and every answer checked against herd7's.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

pub struct CatBench {
    pub paths: Vec<PathBuf>,
    pub cat: PathBuf,
    pub libdir: Option<PathBuf>,
    pub herd7: Option<PathBuf>,
    pub rounds: usize,
    pub json: bool,
}

/// The `.litmus` files named, directories searched recursively (sorted).
fn litmus_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        let rd = std::fs::read_dir(d)
            .map_err(|e| format!("{}: error: cannot read the directory: {e}", d.display()))?;
        let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        v.sort();
        for p in v {
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|x| x == "litmus") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: error: no such file or directory", p.display()));
        }
    }
    if out.is_empty() {
        return Err("error: no litmus tests (`.litmus`) to run".into());
    }
    Ok(out)
}

/// herd7's answer lines, without the lines that differ between runs or tools.
fn answer_lines(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| !l.is_empty() && !l.starts_with("Hash=") && !l.starts_with("Time "))
        .map(str::to_string)
        .collect()
}

fn run(cmd: &mut Command) -> (f64, Option<String>) {
    let t = Instant::now();
    let out = cmd.output();
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    match out {
        Ok(o) if o.status.success() => (ms, Some(String::from_utf8_lossy(&o.stdout).into())),
        _ => (ms, None),
    }
}

fn median(v: &mut [f64]) -> f64 {
    super::bench::min_median(v).1
}

pub fn bench(o: CatBench) -> ExitCode {
    let files = match litmus_files(&o.paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(super::EXIT_USAGE);
        }
    };
    let exe = match super::bench::own_exe() {
        Ok(e) => e,
        Err(c) => return c,
    };
    let cat = o.cat.display().to_string();
    let libdir = o
        .libdir
        .clone()
        .or_else(|| std::env::var_os(fencer::cat::LIBDIR_ENV).map(PathBuf::from));
    let fencer_cmd = |f: &Path, json: bool| {
        let mut c = Command::new(&exe);
        c.arg("litmus").arg(f).arg("--cat").arg(&cat);
        if let Some(d) = &libdir {
            c.arg("--libdir").arg(d);
        }
        if json {
            c.arg("--json");
        }
        c
    };
    let herd_cmd = |h: &Path, f: &Path| {
        let mut c = Command::new(h);
        if let Some(d) = &libdir {
            c.arg("-set-libdir").arg(d);
        }
        c.arg("-model").arg(&cat).arg(f);
        c
    };
    if !o.json {
        super::out(&format!(
            "{:<28} {:<6} {:>6} {:>10} {:>9} {:>9} {:>9} {:>7}\n",
            "test", "result", "states", "executions", "engine ms", "wall ms", "herd7 ms", "agrees"
        ));
    }
    let (mut total_f, mut total_h, mut faster, mut disagree, mut errors) = (0.0, 0.0, 0, 0, 0);
    let mut rows = Vec::new();
    for f in &files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let (mut tf, mut th) = (Vec::new(), Vec::new());
        let (mut ours, mut theirs) = (None, None);
        for _ in 0..o.rounds.max(1) {
            let (ms, out) = run(&mut fencer_cmd(f, false));
            tf.push(ms);
            ours = out;
            if let Some(h) = &o.herd7 {
                let (ms, out) = run(&mut herd_cmd(h, f));
                th.push(ms);
                // herd7 refuses a test with a message on stderr and no answer, exit 0.
                theirs = out.filter(|s| s.lines().any(|l| l.starts_with("Test ")));
            }
        }
        let answer: Option<Value> = run(&mut fencer_cmd(f, true))
            .1
            .and_then(|s| serde_json::from_str(&s).ok());
        let a = answer.as_ref().map(|j| &j["tests"][0]);
        let wall = median(&mut tf);
        let herd = (!th.is_empty()).then(|| median(&mut th));
        let agrees = match (&ours, &theirs, &o.herd7) {
            (_, _, None) => None,
            (Some(x), Some(y), _) => Some(answer_lines(x) == answer_lines(y)),
            // Both refuse the test: they agree.
            (None, None, _) => Some(true),
            _ => Some(false),
        };
        if ours.is_none() {
            errors += 1;
        }
        if agrees == Some(false) {
            disagree += 1;
        }
        if let Some(h) = herd {
            total_f += wall;
            total_h += h;
            if wall < h {
                faster += 1;
            }
        }
        let result = ours.as_deref().and_then(|s| {
            s.lines()
                .find(|l| matches!(*l, "Ok" | "No" | "Undef") || l.starts_with("Loop "))
                .map(str::to_string)
        });
        let row = json!({
            "test": name,
            "file": f.display().to_string(),
            "result": result,
            "states": a.and_then(|a| a["states"].as_array().map(Vec::len)),
            "executions": a.and_then(|a| a["executions"].as_u64()),
            "engine_ms": a.and_then(|a| a["elapsed_ms"].as_u64()),
            "wall_ms": wall,
            "herd7_ms": herd,
            "agrees_with_herd7": agrees,
        });
        if !o.json {
            let opt = |v: &Value| v.as_u64().map_or("-".into(), |n| n.to_string());
            super::out(&format!(
                "{:<28} {:<6} {:>6} {:>10} {:>9} {:>9.1} {:>9} {:>7}\n",
                name,
                row["result"].as_str().unwrap_or("error"),
                opt(&row["states"]),
                opt(&row["executions"]),
                opt(&row["engine_ms"]),
                wall,
                herd.map_or("-".into(), |h| format!("{h:.1}")),
                agrees.map_or("-", |a| if a { "yes" } else { "NO" }),
            ));
        }
        rows.push(row);
    }
    let summary = json!({
        "tests": files.len(),
        "refused": errors,
        "rounds": o.rounds.max(1),
        "fencer_wall_ms": total_f,
        "herd7_wall_ms": o.herd7.as_ref().map(|_| total_h),
        "fencer_faster_on": o.herd7.as_ref().map(|_| faster),
        "disagreements": o.herd7.as_ref().map(|_| disagree),
    });
    if o.json {
        super::out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({ "runs": rows, "summary": summary }))
                .expect("json")
        ));
    } else if o.herd7.is_some() {
        super::out(&format!(
            "\n{} tests ({} refused), medians of {} runs: fencer {:.0} ms, herd7 {:.0} ms in \
             all ({:.2}x); fencer faster on {}; {} disagreement(s)\n",
            files.len(),
            errors,
            o.rounds.max(1),
            total_f,
            total_h,
            total_h / total_f.max(1e-9),
            faster,
            disagree
        ));
    }
    ExitCode::from(if disagree > 0 { 1 } else { 0 })
}
