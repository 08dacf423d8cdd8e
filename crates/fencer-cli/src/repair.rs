//! `fencer repair`: the fewest fences that make a program correct under TSO or PSO,
//! written back into the user's source and re-checked from that source.

use super::{failed, out, usage_error, views, Model, Options};
use clap::ValueEnum;
use fencer::repair::{anchor, fence_text, input_kind, place, unified_diff, Anchor, Input};
use fencer::EXTENSIONS;
use fencer_ir::Program;
use fencer_memory::ModelKind;
use fencer_repair::{FenceKind, Outcome};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Goal {
    /// No assertion failure, deadlock or memory error; for litmus tests, the condition's
    /// answer equals SC's.
    Safety,
    /// Robust (`fencer robust`'s sense): every execution under the model has a
    /// sequentially consistent trace, whatever the program asserts.
    Robustness,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum RepairModel {
    Tso,
    Pso,
    /// DVE models: the DiVinE thesis's one-slot store buffers (the repair makes writes
    /// atomic instead of adding fences).
    Pso1,
}

#[derive(clap::Args)]
pub(crate) struct RepairArgs {
    /// The program to repair: `.fen`, `.litmus` or `.c` (with fences), or a `.dve` model
    /// (with atomic writes, under --model pso1, tso or pso).
    file: PathBuf,
    /// The memory model the program must be correct under.
    #[arg(long, short, value_enum, ignore_case = true, default_value = "tso")]
    model: RepairModel,
    /// What the fences must achieve.
    #[arg(long, value_enum, default_value = "safety")]
    goal: Goal,
    /// List every set of fences minimal under the cost (fewest fences, then fewest full
    /// ones), each verified, not only one.
    #[arg(long)]
    all_minimal: bool,
    /// Print the repair as a unified diff of the source.
    #[arg(long, conflicts_with = "write")]
    diff: bool,
    /// Write the repaired source to this file (re-checked from the file).
    #[arg(long, value_name = "OUT")]
    write: Option<PathBuf>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    views: views::ViewArgs,
    /// Stop after this many seconds in all (exit code 3).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Cut executions that run any loop more than N times (the result then holds up to
    /// that bound).
    #[arg(long, value_name = "N")]
    unroll: Option<u32>,
    /// Most events one thread may execute in one execution.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    max_depth: usize,
    /// Keep spin loops as they are (see `fencer check --help`).
    #[arg(long)]
    no_spin_assume: bool,
    /// C: `pthread_cond_wait` returns only when signalled (see `fencer check --help`).
    #[arg(long)]
    no_spurious_wakeups: bool,
    /// Programs: what a thread that waits forever counts as (see `fencer check --help`).
    #[arg(long, value_enum, value_name = "POLICY")]
    hangs: Option<fencer::Hangs>,
    /// C: define a macro (passed to clang as -D).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// C: add a directory to the include path (passed to clang as -I).
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
    /// C: the language standard (passed to clang as -std=).
    #[arg(long, value_name = "STD")]
    std: Option<String>,
    /// C: the clang 14 to compile with.
    #[arg(long, value_name = "PATH")]
    clang: Option<PathBuf>,
    /// C: further compiler flags, after `--`.
    #[arg(last = true, value_name = "CFLAGS")]
    cflags: Vec<String>,
    /// DVE: the LTL property to make hold (a formula or a `.ltl` file, as in `check`);
    /// without it, the model's own properties, else errors and assertions.
    #[arg(long, value_name = "FORMULA|FILE.ltl")]
    ltl: Option<String>,
    /// DVE: the states to make unreachable (as in `check --reach`).
    #[arg(long, value_name = "EXPR")]
    reach: Option<String>,
    /// DVE: deadlocks count as violations.
    #[arg(long)]
    deadlock: bool,
    /// DVE, LTL: only weakly fair runs count (as in `check --fair`).
    #[arg(long)]
    fair: bool,
    /// DVE, LTL: let a buffered write be delayed forever (see `check --help`).
    #[arg(long)]
    no_buffer_fairness: bool,
    /// DVE: stop each check after storing this many states (exit code 3).
    #[arg(long, value_name = "N")]
    max_states: Option<u64>,
    /// The options given on the command line, for `applies`.
    #[arg(skip)]
    pub(crate) given: fencer::applies::Given,
}

impl RepairArgs {
    /// The `check` arguments that load `file` as this command would.
    fn check_args(&self, file: &Path, model: Model, extra_include: Option<PathBuf>) -> Options {
        let mut include = self.include.clone();
        include.extend(extra_include);
        Options {
            file: file.to_path_buf(),
            define: self.define.clone(),
            include,
            std: self.std.clone(),
            clang: self.clang.clone(),
            cflags: self.cflags.clone(),
            model,
            json: self.json,
            timeout: self.timeout,
            max_depth: self.max_depth,
            unroll: self.unroll,
            no_spin_assume: self.no_spin_assume,
            deadlock: self.deadlock,
            reach: self.reach.clone(),
            ltl: self.ltl.clone(),
            fair: self.fair,
            max_states: self.max_states,
            no_buffer_fairness: self.no_buffer_fairness,
            no_spurious_wakeups: self.no_spurious_wakeups,
            hangs: self.hangs,
            given: self.given.clone(),

            ..Options::default()
        }
    }
}

fn load(args: &Options, model: ModelKind) -> Result<Program, ExitCode> {
    let mut prog = fencer::load(args, model).map_err(|e| failed(args.json, &e))?;
    fencer::inputs::refuse_program("repair", &prog).map_err(|e| failed(args.json, &e))?;
    // Repair's paths know waiting loops, not barriers as operations.
    fencer_ir::barrier::as_loops(&mut prog);
    if !args.no_spin_assume {
        fencer_ir::spin::spin_assume(&mut prog);
    }
    Ok(prog)
}

/// What the output of a repair needs to know about the run.
struct Run<'a> {
    args: &'a RepairArgs,
    kind: Input,
    src: &'a str,
    prog: &'a Program,
    file: &'a str,
    model: ModelKind,
    model_arg: Model,
    started: Instant,
}

pub(crate) fn repair(args: RepairArgs) -> ExitCode {
    let started = Instant::now();
    let timeout = match fencer::timeout_arg(args.timeout) {
        Ok(t) => t,
        Err(e) => return failed(args.json, &e),
    };
    if let Some(msg) = fencer::applies::refusal_in(
        fencer::applies::Cmd::Repair,
        &args.check_args(&args.file, Model::Tso, None),
    ) {
        return usage_error(args.json, &msg, None);
    }
    if args.file.extension().is_some_and(|e| e == "dve") {
        let model = match args.model {
            RepairModel::Tso => Model::Tso,
            RepairModel::Pso => Model::Pso,
            RepairModel::Pso1 => Model::Pso1,
        };
        let cargs = args.check_args(&args.file, model, None);
        return match fencer::dve_repair::repair(
            cargs,
            args.all_minimal,
            args.write.clone(),
            timeout,
        ) {
            Ok(o) => {
                out(&o.output);
                ExitCode::from(o.exit_code())
            }
            Err(e) => failed(args.json, &e),
        };
    }
    let Some(kind) = input_kind(&args.file) else {
        return usage_error(
            args.json,
            &format!(
                "{}: error: fencer does not know this kind of file\n  help: fencer reads {EXTENSIONS}",
                args.file.display()
            ),
            None,
        );
    };
    let ext = args.file.extension().and_then(|e| e.to_str()).unwrap_or("");
    if matches!(ext, "ll" | "bc") {
        return usage_error(
            args.json,
            &format!(
                "{}: error: repair edits source files: give it the `.c` file",
                args.file.display()
            ),
            None,
        );
    }
    let model = match args.model {
        RepairModel::Tso => ModelKind::Tso,
        RepairModel::Pso => ModelKind::Pso,
        RepairModel::Pso1 => {
            return usage_error(
                args.json,
                "error: --model pso1 is for DVE models; programs take tso or pso",
                None,
            )
        }
    };
    let model_arg = match args.model {
        RepairModel::Tso => Model::Tso,
        RepairModel::Pso | RepairModel::Pso1 => Model::Pso,
    };
    let src = match std::fs::read_to_string(&args.file) {
        Ok(s) => s,
        Err(e) => {
            return usage_error(
                args.json,
                &format!("{}: error: cannot read the file: {e}", args.file.display()),
                None,
            )
        }
    };
    let cargs = args.check_args(&args.file, model_arg, None);
    // Loading (clang) counts against --timeout, as in `check`: on a thread of its own.
    let loaded = {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(load(&cargs, model));
        });
        match timeout {
            Some(t) => rx.recv_timeout(t).ok(),
            None => rx.recv().ok(),
        }
    };
    let prog = match loaded {
        Some(Ok(p)) => p,
        Some(Err(code)) => return code,
        None => {
            if args.json {
                let j = serde_json::json!({
                    "verdict": "incomplete",
                    "model": model.name(),
                    "file": args.file.display().to_string(),
                    "stopped_by": "timeout",
                });
                out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&j).expect("json")
                ));
            } else {
                out(&format!(
                    "{}: the --timeout ran out while loading the program\n",
                    args.file.display()
                ));
            }
            return ExitCode::from(3);
        }
    };
    let opts = fencer_repair::Options {
        dpor: fencer_dpor::Options {
            unroll: args.unroll,
            max_depth: args.max_depth,
            ..Default::default()
        },
        timeout: timeout.map(|t| t.saturating_sub(started.elapsed())),
        all_minimal: args.all_minimal,
        condition_is_question: kind == Input::Litmus,
        robustness: matches!(args.goal, Goal::Robustness),
    };
    let file = args.file.display().to_string();
    let outcome = fencer_repair::repair(&prog, model, &opts);
    // `--view`, `--html`, `--sarif`, `--save-trace`: the first counterexample the repair
    // had to kill (on the program as written), or the SC counterexample.
    if args.views.any() {
        let cargs = args.check_args(&args.file, model_arg, None);
        let drawn = match &outcome {
            Outcome::UnsafeUnderSc { report } => {
                views::after_check(&cargs, &args.views, &prog, ModelKind::Sc, report)
            }
            Outcome::Repaired(r) => match r.counterexamples.first() {
                Some(c) if c.under.is_empty() => {
                    let mut rep = r.report.clone();
                    rep.verdict = fencer_report::Verdict::Violation;
                    rep.counterexample = Some(c.report.clone());
                    views::after_check(&cargs, &args.views, &prog, model, &rep)
                }
                _ => Ok(()),
            },
            _ => Ok(()),
        };
        if let Err(code) = drawn {
            return code;
        }
    }
    match outcome {
        Outcome::Unsupported { report } => {
            let c = report.counterexample.expect("unsupported has one");
            let msg = format!(
                "{}:{}: error: {}",
                c.file.unwrap_or_default(),
                c.line.unwrap_or(0),
                c.message
            );
            usage_error(args.json, &msg, None)
        }
        Outcome::NotNeeded { report } => {
            if args.json {
                let j = serde_json::json!({
                    "verdict": "not-needed",
                    "model": model.name(),
                    "file": file,
                    "fences": [],
                    "minimum": 0,
                    "bounded": fencer_repair::bounded(&report),
                    "elapsed_ms": started.elapsed().as_millis() as u64,
                    "report": serde_json::from_str::<serde_json::Value>(&report.to_json()).ok(),
                });
                out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&j).expect("json")
                ));
            } else {
                out(&format!(
                    "{file}: no fence needed: correct under {} as it is ({} executions){}\n",
                    model,
                    report.executions,
                    bound_note(&report)
                ));
                if args.diff {
                    out("(no changes)\n");
                }
            }
            if let Some(w) = &args.write {
                if let Err(e) = std::fs::write(w, &src) {
                    return usage_error(
                        args.json,
                        &format!("{}: error: cannot write: {e}", w.display()),
                        None,
                    );
                }
            }
            if fencer_repair::bounded(&report) {
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            }
        }
        Outcome::UnsafeUnderSc { report } => {
            if args.json {
                let j = serde_json::json!({
                    "verdict": "unsafe-under-sc",
                    "model": model.name(),
                    "file": file,
                    "elapsed_ms": started.elapsed().as_millis() as u64,
                    "counterexample": report.counterexample,
                });
                out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&j).expect("json")
                ));
            } else {
                out(&format!(
                    "{file}: wrong under SC already: no fence can repair it. The SC counterexample:\n\n"
                ));
                out(&report.to_text(false));
            }
            ExitCode::from(1)
        }
        Outcome::Limit {
            report,
            rounds,
            counterexamples,
        } => {
            let why = report
                .stopped_by
                .as_ref()
                .map_or("a limit".to_string(), |l| format!("{l:?}").to_lowercase());
            if args.json {
                let j = serde_json::json!({
                    "verdict": "incomplete",
                    "model": model.name(),
                    "file": file,
                    "stopped_by": report.stopped_by,
                    "rounds": rounds,
                    "counterexamples": counterexamples,
                    "elapsed_ms": started.elapsed().as_millis() as u64,
                });
                out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&j).expect("json")
                ));
            } else {
                out(&format!(
                    "{file}: stopped by {why} after {rounds} verification rounds and {counterexamples} counterexamples: no repair found yet\n"
                ));
            }
            ExitCode::from(3)
        }
        Outcome::Unrepairable {
            report,
            counterexample,
        } => {
            if args.json {
                let j = serde_json::json!({
                    "verdict": "unrepairable",
                    "model": model.name(),
                    "file": file,
                    "reorderings": counterexample.reorderings,
                    "counterexample": report.counterexample,
                });
                out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&j).expect("json")
                ));
            } else {
                out(&format!(
                    "{file}: no fence in this file can forbid this failing execution under {model} \
                     (its reorderings, if any, are in code fences cannot go into):\n"
                ));
                for r in &counterexample.reorderings {
                    out(&format!("  - {r}\n"));
                }
                out("\n");
                out(&report.to_text(false));
            }
            ExitCode::from(1)
        }
        Outcome::Repaired(r) => repaired(
            &Run {
                args: &args,
                kind,
                src: &src,
                prog: &prog,
                file: &file,
                model,
                model_arg,
                started,
            },
            &r,
        ),
    }
}

fn repaired(run: &Run, r: &fencer_repair::Repair) -> ExitCode {
    let Run {
        args,
        kind,
        src,
        prog,
        file,
        model,
        model_arg,
        started,
    } = *run;
    let lines: Vec<&str> = src.lines().collect();
    let c11 = src.contains("<stdatomic.h>");
    let fence_text = |k: FenceKind| fence_text(kind, c11, k);
    // The file that is checked: OUT, or a copy in a temporary directory of its own.
    let (check_path, temp) = match &args.write {
        Some(w) => (w.clone(), false),
        None => {
            let name = args
                .file
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repaired".into());
            let dir = std::env::temp_dir().join(format!("fencer-repair-{}", std::process::id()));
            let _ = std::fs::create_dir_all(&dir);
            (dir.join(name), true)
        }
    };
    // The preferred anchors first; if the source they give does not check, the other
    // anchor of each fence (before the next access instead of after the store, or back).
    let mut attempts = Vec::new();
    for alternate in [false, true] {
        let (placed, unplaced, new_src) =
            place(kind, &lines, prog, &r.fences, &fence_text, alternate, src);
        if attempts
            .iter()
            .any(|(_, _, s, _): &(_, _, String, _)| *s == new_src)
        {
            continue;
        }
        if let Err(e) = std::fs::write(&check_path, &new_src) {
            return usage_error(
                args.json,
                &format!("{}: error: cannot write: {e}", check_path.display()),
                None,
            );
        }
        let recheck = recheck(args, &check_path, model, model_arg);
        let ok = matches!(&recheck, Ok(rep) if checks(rep));
        attempts.push((placed, unplaced, new_src, recheck));
        if ok {
            break;
        }
    }
    let verified_at = attempts
        .iter()
        .position(|a| matches!(&a.3, Ok(rep) if checks(rep)));
    let (placed, unplaced, new_src, recheck) = attempts.swap_remove(verified_at.unwrap_or(0));
    if verified_at.is_none() && !temp {
        // OUT holds the last attempt; leave the preferred one, whose check is reported.
        let _ = std::fs::write(&check_path, &new_src);
    }
    if temp {
        let _ = std::fs::remove_file(&check_path);
        if let Some(d) = check_path.parent() {
            let _ = std::fs::remove_dir(d);
        }
    }
    let verified = matches!(&recheck, Ok(rep) if checks(rep));
    let within_bounds = matches!(&recheck, Ok(rep) if fencer_repair::bounded(rep));
    let recheck_note = match &recheck {
        Ok(rep) => format!("{:?}", rep.verdict).to_lowercase(),
        Err(e) => format!("does not load: {e}"),
    };
    let n = r.fences.len();
    let (_, n_full) = fencer_repair::cost(&r.fences);
    let n_ss = n - n_full;
    let cex_word = |i: usize| {
        let c = &r.counterexamples[i];
        c.reorderings
            .first()
            .cloned()
            .unwrap_or_else(|| c.report.message.clone())
    };
    let why = if n == 0 {
        String::new()
    } else if n == 1 {
        format!(
            "without a fence it fails: counterexample #1 ({})",
            cex_word(0)
        )
    } else if r.disjoint.len() >= n {
        let w: Vec<String> = r.disjoint[..n]
            .iter()
            .map(|&i| format!("#{} ({})", i + 1, cex_word(i)))
            .collect();
        format!(
            "no set of {} fence{} suffices: counterexamples {} each need a fence of their own (no position kills two of them)",
            n - 1,
            plural(n - 1),
            w.join(", ")
        )
    } else {
        format!(
            "no set of {} fence{} suffices: an exhaustive search found no {} position{} that kill all {} counterexamples (e.g. counterexample #1: {})",
            n - 1,
            plural(n - 1),
            n - 1,
            plural(n - 1),
            r.counterexamples.len(),
            cex_word(0)
        )
    };
    // The second half of the cost: fewer full fences among sets of `n`.
    let why_kinds = if model == ModelKind::Pso && n_full > 0 {
        format!(
            "; no set of {n} fence{} with fewer than {n_full} full fence{} suffices (a store-store fence kills a counterexample only where a later store overtook the pending one, not a load)",
            plural(n),
            plural(n_full)
        )
    } else {
        String::new()
    };
    let why = format!("{why}{why_kinds}");
    let kind_name = |k: FenceKind| match k {
        FenceKind::Full => "full",
        FenceKind::StoreStore => "store-store",
    };
    let fence_json: Vec<serde_json::Value> = placed
        .iter()
        .map(|(p, a, func, e)| {
            let (place, loc) = match a {
                Anchor::After(l) => ("after", l),
                Anchor::Before(l) => ("before", l),
            };
            serde_json::json!({
                "file": file,
                "line": e.line,
                "function": func,
                "placement": place,
                "anchor_line": loc.line,
                "kind": kind_name(p.kind),
                "text": if kind == Input::Litmus { fence_text(p.kind).to_string() } else { e.text.trim().to_string() },
                "ir": { "function": p.pos.func, "pc": p.pos.pc },
            })
        })
        .collect();
    if args.json {
        let j = serde_json::json!({
            "verdict": if verified { "repaired" } else { "unverified" },
            "model": model.name(),
            "file": file,
            "minimum": n,
            "full_fences": n_full,
            "store_store_fences": n_ss,
            "cost_model": COST_MODEL,
            "minimality": if r.exact { why.clone() } else { "not proven: some kill sets were approximated".into() },
            "fences": fence_json,
            "unplaced": unplaced.iter().map(|p| serde_json::json!({"function": p.pos.func, "pc": p.pos.pc, "kind": kind_name(p.kind)})).collect::<Vec<_>>(),
            "all_minimal": r.all.iter().map(|s| s.iter().map(|p| serde_json::json!({"function": prog.functions[p.pos.func as usize].name, "pc": p.pos.pc, "kind": kind_name(p.kind)})).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "rounds": r.rounds,
            "search_ms": r.elapsed.as_millis() as u64,
            "counterexamples": r.counterexamples.iter().map(|c| serde_json::json!({
                "message": c.report.message,
                "reorderings": c.reorderings,
                "kill_positions": c.kill.len(),
            })).collect::<Vec<_>>(),
            "verified": verified,
            "bounded": within_bounds,
            "recheck": recheck_note,
            "written": args.write.as_ref().map(|w| w.display().to_string()),
            "diff": args.diff.then(|| unified_diff(file, src, &new_src)),
            "elapsed_ms": started.elapsed().as_millis() as u64,
        });
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&j).expect("json")
        ));
    } else {
        let bad = if matches!(args.goal, Goal::Robustness) {
            "not robust against"
        } else {
            "unsafe under"
        };
        let kinds = if model == ModelKind::Pso && n > 0 {
            format!(" ({n_ss} store-store, {n_full} full)")
        } else {
            String::new()
        };
        let mut t = format!(
            "{file}: {bad} {model}; minimum: {n} fence{}{kinds} ({} verification round{}, {} counterexample{}, {:.2} s)\n",
            plural(n),
            r.rounds,
            plural(r.rounds),
            r.counterexamples.len(),
            plural(r.counterexamples.len()),
            r.elapsed.as_secs_f64()
        );
        if model == ModelKind::Pso {
            t.push_str(&format!("  cost: {COST_MODEL}\n"));
        }
        if r.exact {
            t.push_str(&format!("  {why}\n"));
        } else {
            t.push_str(
                "  (minimality not proven: some counterexamples' paths were approximated)\n",
            );
        }
        for (p, a, func, e) in &placed {
            let (place, l) = match a {
                Anchor::After(l) => ("after", l),
                Anchor::Before(l) => ("before", l),
            };
            t.push_str(&format!(
                "{file}:{}: in {func}: insert `{}` ({} fence) {place} the statement at line {}\n",
                e.line,
                if kind == Input::Litmus {
                    fence_text(p.kind)
                } else {
                    e.text.trim()
                },
                kind_name(p.kind),
                l.line
            ));
        }
        for p in &unplaced {
            t.push_str(&format!(
                "  (a {} fence in {} at IR pc {} has no source position)\n",
                kind_name(p.kind),
                prog.functions[p.pos.func as usize].name,
                p.pos.pc
            ));
        }
        if args.all_minimal {
            t.push_str(&format!("every minimum set ({}):\n", r.all.len()));
            for s in &r.all {
                let w: Vec<String> = s
                    .iter()
                    .map(|&p| {
                        let k = kind_name(p.kind);
                        match anchor(prog, p.pos) {
                            Some((Anchor::After(l), f)) => {
                                format!("{f}: {k} after line {}", l.line)
                            }
                            Some((Anchor::Before(l), f)) => {
                                format!("{f}: {k} before the access at line {}", l.line)
                            }
                            None => format!("{k} at pc {}", p.pos.pc),
                        }
                    })
                    .collect();
                t.push_str(&format!("  {{{}}}\n", w.join("; ")));
            }
        }
        t.push_str("counterexamples used:\n");
        const SHOWN: usize = 8;
        for (i, c) in r.counterexamples.iter().enumerate().take(SHOWN) {
            t.push_str(&format!("  #{} {}\n", i + 1, c.report.message));
            for o in &c.reorderings {
                t.push_str(&format!("     {o}\n"));
            }
        }
        if r.counterexamples.len() > SHOWN {
            t.push_str(&format!(
                "  ... and {} more (--json lists them all)\n",
                r.counterexamples.len() - SHOWN
            ));
        }
        if args.diff {
            t.push_str(&unified_diff(file, src, &new_src));
        }
        if let Some(w) = &args.write {
            t.push_str(&format!("wrote {}\n", w.display()));
        }
        if verified {
            let good = if matches!(args.goal, Goal::Robustness) {
                "robust against"
            } else {
                "safe under"
            };
            t.push_str(&format!(
                "verified: the repaired source, loaded again, is {good} {model} ({} executions){}\n",
                recheck.as_ref().map_or(0, |r| r.executions),
                recheck.as_ref().map_or(String::new(), bound_note)
            ));
        } else {
            t.push_str(&format!(
                "NOT verified: the repaired source, loaded again, is {recheck_note}: the fences \
                 above are right for fencer's IR, but their place in the source needs a look\n"
            ));
        }
        out(&t);
    }
    if verified && within_bounds {
        ExitCode::from(3)
    } else if verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether a re-check counts: safe, or safe up to the bounds the user gave.
fn checks(rep: &fencer_report::Report) -> bool {
    rep.verdict == fencer_report::Verdict::Safe || fencer_repair::bounded(rep)
}

/// ", up to the bounds (...)" when bounds cut executions.
fn bound_note(rep: &fencer_report::Report) -> String {
    match &rep.stopped_by {
        Some(l) if fencer_repair::bounded(rep) => format!(
            ", up to the bounds: some executions were cut ({})",
            format!("{l:?}").to_lowercase()
        ),
        _ => String::new(),
    }
}

/// The cost model, as output and `--help` state it.
const COST_MODEL: &str = "fewest fences first, then fewest full fences: a store-store fence \
(PSO) is cheaper, since it never waits for the store buffers, while a full fence stalls until \
every pending store has reached memory";

/// Loads the written file through the front-end and checks it under the model.
fn recheck(
    args: &RepairArgs,
    path: &Path,
    model: ModelKind,
    model_arg: Model,
) -> Result<fencer_report::Report, String> {
    // Includes next to the original still resolve from wherever the copy is.
    let dir = args
        .file
        .parent()
        .map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
        })
        .map(Path::to_path_buf);
    let mut cargs = args.check_args(path, model_arg, dir);
    cargs.json = true;
    load_quiet(&cargs, model).map(|p| {
        let o = fencer_dpor::Options {
            unroll: args.unroll,
            max_depth: args.max_depth,
            ..Default::default()
        };
        if matches!(args.goal, Goal::Robustness) {
            // Robust means no violation of sequential consistency; assertions aside.
            let out = fencer_robust::check(&p, model, fencer_robust::Method::Monitor, &o);
            let mut rep = out.report;
            rep.counterexample = None;
            rep.verdict = if !out.violations.is_empty() {
                fencer_report::Verdict::Violation
            } else if rep.stopped_by.is_some() {
                fencer_report::Verdict::Incomplete
            } else {
                fencer_report::Verdict::Safe
            };
            return rep;
        }
        fencer_dpor::explore(&p, model, &o)
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Loads without printing diagnostics (the caller reports a failed re-check itself).
fn load_quiet(args: &Options, model: ModelKind) -> Result<Program, String> {
    let mut prog = fencer::load(args, model)
        .map_err(|e| e.message.lines().next().unwrap_or_default().to_string())?;
    fencer_ir::barrier::as_loops(&mut prog);
    if !args.no_spin_assume {
        fencer_ir::spin::spin_assume(&mut prog);
    }
    Ok(prog)
}

pub(crate) const AFTER_HELP: &str = "Counterexample-guided: each failing execution under the \
model is killed by a full fence at some of the program points its thread passes between a \
store and a later access that overtook it, and under PSO by a store-store fence there when \
the access that overtook it is a later store; fencer collects failing executions, chooses a \
minimum set of fences that kills them all, re-verifies with the DPOR engine and repeats. The \
set is minimum because every counterexample is a real execution that some chosen fence must \
kill.\n\n\
Cost model: fewest fences first, then fewest full fences. A store-store fence (PSO only; TSO \
keeps store order) is cheaper: it never waits, while a full fence stalls the thread until \
every pending store has reached memory. --all-minimal lists every set minimal in that order.\n\n\
Fences are inserted as statements. Full: C atomic_thread_fence(memory_order_seq_cst); with \
<stdatomic.h>, else __sync_synchronize();  .fen fence;  litmus MFENCE. Store-store: C \
atomic_thread_fence(memory_order_release); with <stdatomic.h>, else \
__atomic_thread_fence(__ATOMIC_RELEASE);  .fen fence ss;  litmus SFENCE. The repaired source \
is loaded and checked again before fencer says \"verified\".\n\n\
Examples:\n  fencer repair prog.c --model tso --diff\n  fencer repair sb.litmus --write sb_fixed.litmus\n\n\
Exit codes: 0 repaired and verified (or nothing needed), 1 wrong under SC (no fence can help), \
or the source edit could not be verified, 2 bad input or usage, 3 stopped by a limit.";
