//! `fencer repair model.dve`: the fewest atomic writes under which a DVE model satisfies
//! its property under a relaxed model (the DiVinE thesis's counterexample-guided
//! synthesis): each counterexample's kill set (the buffered writes some other process
//! observes while they are pending), a minimum hitting set of them all, verified by
//! checking the model with those writes atomic.

use crate::dve_relaxed::{
    accepting_prefix, build, build_error, mentions, placement_text, private_vars, shared,
    terminal_acceptance, Relaxed,
};
use crate::{dve, Error, Model, Options, Outcome, Verdict};
use fencer_dve::relaxed::{Origin, Placement};
use fencer_dve::run::Label;
use fencer_dve::sem::load;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A run that violates the property: the initial state, each step with the state it leads
/// to (for a lasso, the cycle follows the prefix), and the step that failed, if any.
struct Run {
    initial: Vec<u8>,
    steps: Vec<(Label, Vec<u8>)>,
    cycle_from: Option<usize>,
    failed: Option<Label>,
    what: String,
}

/// Looks for a violation of what `args` asks (properties, else errors, assertions,
/// `--reach`, `--deadlock`) in `sys`; `Err` names the limit that stopped the search.
fn violation(
    args: &Options,
    sys: &fencer_dve::System,
    relaxed: Option<&Relaxed>,
    timeout: Option<Duration>,
) -> Result<Result<Option<Run>, &'static str>, Error> {
    let opts = fencer_explicit::Options {
        deadlock: args.deadlock,
        timeout,
        max_states: args.max_states,
        exhaustive: false,
        jobs: args.workers(),
        unpacked: args.no_pack,
        ranks: args.ranks.clone(),
    };
    let props = dve::properties(args, sys)?;
    if props.is_empty() {
        let goal = match &args.reach {
            Some(e) => Some(
                sys.expression("--reach", e)
                    .map_err(|d| Error::usage(&d.render(e), Some(&d)))?,
            ),
            None => None,
        };
        let judge = |s: &[u8]| -> Option<String> {
            if let Some((p, text)) = sys.failed_assertion(s) {
                return Some(format!(
                    "assertion `{text}` of {} fails",
                    sys.processes[p].name
                ));
            }
            match sys.eval(goal.as_ref()?, s) {
                Ok(0) => None,
                _ => Some(format!("`{}` holds", args.reach.as_deref().unwrap_or(""))),
            }
        };
        let judged = sys.has_assertions() || goal.is_some();
        let out = fencer_explicit::reach(
            &dve::Dve::new(sys, false),
            &opts,
            judged.then_some(&judge as _),
        );
        if let Some(s) = out.stopped {
            return Ok(Err(s));
        }
        return Ok(Ok(out.found.map(|f| Run {
            what: match &f.kind {
                fencer_explicit::FoundKind::Error(m) | fencer_explicit::FoundKind::Goal(m) => {
                    m.clone()
                }
                fencer_explicit::FoundKind::Deadlock => "a deadlock".into(),
            },
            initial: f.initial,
            steps: f.steps,
            cycle_from: None,
            failed: f.failed,
        })));
    }
    for (name, formula, psys) in &props {
        let mut product = dve::Dve::new(psys, true);
        let buffer_fair = relaxed.filter(|r| r.fairness);
        if let Some(r) = buffer_fair {
            product.buffers = Some((&r.group_of, r.meta.groups));
            product.fair_processes = args.fair;
        }
        let out = if terminal_acceptance(psys) {
            accepting_prefix(&product, &opts)
        } else if args.fair || buffer_fair.is_some() {
            fencer_explicit::fair_accepting_cycle(&product, &opts)
        } else {
            fencer_explicit::accepting_cycle(&product, &opts)
        };
        if let Some(s) = out.stopped {
            return Ok(Err(s));
        }
        if let Some(l) = out.lasso {
            let cycle_from = l.prefix.len();
            let mut steps = l.prefix;
            steps.extend(l.cycle);
            return Ok(Ok(Some(Run {
                initial: l.initial,
                steps,
                cycle_from: Some(cycle_from),
                failed: None,
                what: format!(
                    "property {name} {}is violated",
                    formula
                        .as_ref()
                        .map(|f| format!("`{f}` "))
                        .unwrap_or_default()
                ),
            })));
        }
    }
    Ok(Ok(None))
}

/// The original process `p`'s transition `t`, as written.
fn written<'a>(
    r: &'a Relaxed,
    p: &str,
    t: usize,
) -> Option<(
    &'a fencer_dve::ast::Process,
    &'a fencer_dve::ast::Transition,
)> {
    r.ast.items.iter().find_map(|i| match i {
        fencer_dve::ast::Item::Process(q) if q.name.name == p => Some((q, q.trans.get(t)?)),
        _ => None,
    })
}

/// A write position: (process, transition index, variable).
type WritePos = (String, usize, String);

/// A hazard interval: a write of `process` to element `e` of `g`, from the step that
/// buffered it to its flush.
struct Interval {
    process: String,
    g: String,
    e: u32,
    write: WritePos,
    /// Another process touched `g` meanwhile, or a property reads it.
    hazardous: bool,
    open: bool,
    /// The intervals of the same process open when this one opened.
    pending: Vec<usize>,
}

/// The writes that some atomic placement must include to rule `run` out: those whose
/// hazard interval (from the write into the buffer to its flush) holds an inconsistent
/// access (another process's step that touches the variable, or a flush of another
/// process's write to it), or whose variable the property itself reads. Every write of
/// the run outside this set can be made atomic without changing what any other process
/// or the property sees, so the run survives (up to stuttering) every placement that
/// misses the set: each repair must hit it.
fn kill_set(
    run: &Run,
    sys: &fencer_dve::System,
    r: &Relaxed,
    watched: &std::collections::HashSet<String>,
) -> std::collections::BTreeSet<(String, usize, String)> {
    let shared = shared(&r.orig);
    // For a lasso, the cycle twice: an interval may wrap around.
    let mut word: Vec<(Label, usize)> = run
        .steps
        .iter()
        .enumerate()
        .map(|(k, s)| (s.0, k))
        .collect();
    if let Some(c) = run.cycle_from {
        word.extend((c..run.steps.len()).map(|k| (run.steps[k].0, k)));
    }
    let state = |k: usize| &run.steps[k].1;
    let before = |k: usize| {
        if k == 0 {
            &run.initial
        } else {
            &run.steps[k - 1].1
        }
    };
    let find = |n: &str| sys.globals.iter().find(|(m, _)| m == n).map(|(_, v)| *v);
    let fifo = r.meta.bound.is_some();
    let mut ivs: Vec<Interval> = Vec::new();
    // Another process's access to `g` makes every open interval of `g` hazardous.
    let access = |ivs: &mut Vec<Interval>, who: &str, g: &str| {
        for o in ivs
            .iter_mut()
            .filter(|o| o.open && o.g == g && o.process != who)
        {
            o.hazardous = true;
        }
    };
    let elem = |name: &str| match name.split_once('[') {
        Some((g, e)) => (g.to_string(), e.trim_end_matches(']').parse().unwrap_or(0)),
        None => (name.to_string(), 0),
    };
    let open = |ivs: &mut Vec<Interval>, p: &str, g: String, e: u32, trans: usize| {
        let pending = (0..ivs.len())
            .filter(|&i| ivs[i].open && ivs[i].process == p)
            .collect();
        ivs.push(Interval {
            process: p.to_string(),
            hazardous: watched.contains(&g),
            write: (p.to_string(), trans, g.clone()),
            g,
            e,
            open: true,
            pending,
        });
    };
    let mut steps: Vec<(Label, Option<usize>)> = word.iter().map(|(l, k)| (*l, Some(*k))).collect();
    if let Some(f) = run.failed {
        steps.push((f, None));
    }
    for (l, k) in steps {
        for pt in std::iter::once(l.first).chain(l.second) {
            // The property process (in a product) is no memory access.
            let Some(pr) = sys.processes.get(pt.0 as usize) else {
                continue;
            };
            let pname = pr.name.clone();
            match r.origin(sys, pt) {
                Some(Origin::Flush { process, var, .. }) => {
                    let (g, e) = elem(var);
                    access(&mut ivs, process, &g);
                    // pso1: the slot's write (and any it replaced) reaches memory; a FIFO:
                    // the oldest buffered write of the location.
                    for o in ivs
                        .iter_mut()
                        .filter(|o| o.open && &o.process == process && o.g == g && o.e == e)
                        .take(if fifo { 1 } else { usize::MAX })
                    {
                        o.open = false;
                    }
                }
                Some(Origin::Program { trans }) => {
                    let Some((q, t)) = written(r, &pname, *trans) else {
                        continue;
                    };
                    for g in fencer_dve::relaxed::touched(q, t) {
                        if shared.iter().any(|s| s.name == g) {
                            access(&mut ivs, &pname, &g);
                        }
                    }
                    // The writes this step put into the process's buffer.
                    let Some(k) = k else { continue };
                    for (g, p, _sb, fl) in &r.meta.buffers {
                        if p != &pname
                            || !r.meta.writes.contains(&(pname.clone(), *trans, g.clone()))
                        {
                            continue;
                        }
                        let Some(fv) = find(fl) else { continue };
                        for e in 0..fv.len.unwrap_or(1) {
                            // Every valid slot after a writing step (a superset of what the
                            // step wrote, which keeps the set a superset of what must be hit).
                            if load(state(k), fv, e) == 1 {
                                open(&mut ivs, &pname, g.clone(), e, *trans);
                            }
                        }
                    }
                    // A FIFO: the entries this step appended to the process's queue.
                    for (qp, addr, _val, n) in &r.meta.queues {
                        let (Some(av), Some(nv)) = (find(addr), find(n)) else {
                            continue;
                        };
                        if qp != &pname {
                            continue;
                        }
                        let (n0, n1) = (load(before(k), nv, 0), load(state(k), nv, 0));
                        for slot in n0.max(0)..n1.max(0) {
                            let a = load(state(k), av, slot as u32) as usize;
                            let (g, e) = elem(r.meta.addresses.get(a).map_or("", |s| s.as_str()));
                            open(&mut ivs, &pname, g, e, *trans);
                        }
                    }
                }
                None => {}
            }
        }
    }
    // A hazardous write must be made atomic; under TSO/PSO an atomic write also waits for
    // the process's earlier writes, so a write is needed too when one pending at it is
    // hazardous (its flush would move before the write).
    ivs.iter()
        .filter(|o| o.hazardous || (fifo && o.pending.iter().any(|&i| ivs[i].hazardous)))
        .map(|o| o.write.clone())
        .collect()
}

/// `fencer repair model.dve`: the fewest atomic writes under which the model satisfies
/// its property under `--model`, counterexample-guided and verified.
pub fn repair(
    args: Options,
    all_minimal: bool,
    write: Option<PathBuf>,
    timeout: Option<Duration>,
) -> Result<Outcome, Error> {
    let started = Instant::now();
    let path = args.file.display().to_string();
    let src = crate::read_source(&args)?;
    let ov = dve::overrides(&args).map_err(|m| build_error(&m))?;
    let orig = fencer_dve::load(&path, &src, &ov).map_err(|d| Error::diagnostic(&d, &src))?;
    let ast = fencer_dve::parse(&path, &src).map_err(|d| Error::diagnostic(&d, &src))?;
    let left = |t: Option<Duration>| t.map(|t| t.saturating_sub(started.elapsed()));
    let outcome = |verdict: Verdict, output: String| Outcome {
        verdict,
        output,
        messages: Vec::new(),
        report: None,
        split: None,
        shown: None,
    };
    let limit = |what: &str, rounds: usize| {
        let msg = format!("{path}: repair stopped by a limit ({what}) after {rounds} rounds");
        Ok(outcome(
            Verdict::Incomplete,
            if args.json {
                format!(
                    "{}\n",
                    serde_json::json!({"verdict": "incomplete", "stopped_by": what, "rounds": rounds})
                )
            } else {
                format!("{msg}\n")
            },
        ))
    };
    // Under SC first: atomic writes cannot repair a model that is wrong there.
    match violation(&args, &orig, None, left(timeout))? {
        Err(what) => return limit(what, 0),
        Ok(Some(run)) => {
            let mut sc_args = args.clone();
            sc_args.model = Model::Sc;
            let msg = format!(
                "{path}: the model is wrong under SC ({}): no atomic writes can repair it; the SC counterexample follows",
                run.what
            );
            let mut sc = dve::check(&sc_args, left(timeout))?;
            if !args.json {
                sc.output = format!("{msg}\n\n{}", sc.output);
            }
            return Ok(sc);
        }
        Ok(None) => {}
    }
    let shared_vars = shared(&orig);
    // What the property reads: a write to it is hazardous whoever else looks.
    let mut watched_text = args.reach.clone().unwrap_or_default();
    if let Some(l) = &args.ltl {
        watched_text.push(' ');
        watched_text.push_str(&std::fs::read_to_string(l).unwrap_or_else(|_| l.clone()));
    }
    for p in &orig.processes {
        for (_, _, text) in &p.asserts {
            watched_text.push(' ');
            watched_text.push_str(text);
        }
        if p.property {
            for t in &p.trans {
                watched_text.push(' ');
                watched_text.push_str(&t.text);
            }
        }
    }
    for (_, f) in &orig.ltl {
        watched_text.push(' ');
        watched_text.push_str(f);
    }
    for d in orig.definitions.keys() {
        watched_text.push(' ');
        watched_text.push_str(d);
    }
    let watched = mentions(&watched_text, &shared_vars);
    let private = private_vars(&args, &ast, &orig);
    let mut ids: Vec<(String, usize, String)> = Vec::new();
    let mut sets: Vec<Vec<u32>> = Vec::new();
    let mut chosen: Vec<Vec<u32>> = vec![Vec::new()];
    let mut rounds = 0usize;
    let mut examples: Vec<String> = Vec::new();
    let mut all_writes: std::collections::BTreeSet<(String, usize, String)> = Default::default();
    let verified = loop {
        rounds += 1;
        let placement = |set: &[u32]| Placement {
            atomic: set.iter().map(|&i| ids[i as usize].clone()).collect(),
            barrier: Default::default(),
            keep_stale: args.keep_stale,
        };
        // The first minimum set, and with --all-minimal every other one too, must
        // verify; the first that does not gives the next counterexample.
        let mut first: Option<(Placement, Relaxed)> = None;
        let mut failing: Option<(Run, fencer_dve::System, Relaxed)> = None;
        for (ci, set) in chosen.iter().enumerate() {
            if ci > 0 && !all_minimal {
                break;
            }
            let pl = placement(set);
            let (sys, r) = build(
                &path,
                &src,
                &ast,
                orig.clone(),
                &pl,
                args.model,
                &ov,
                !args.no_buffer_fairness,
                args.buffer_bound,
                &private,
            )
            .map_err(|m| build_error(&m))?;
            if rounds == 1 {
                all_writes = r.meta.writes.iter().cloned().collect();
            }
            match violation(&args, &sys, Some(&r), left(timeout))? {
                Err(what) => return limit(what, rounds),
                Ok(Some(run)) => {
                    failing = Some((run, sys, r));
                    break;
                }
                Ok(None) => {
                    if ci == 0 {
                        first = Some((pl, r));
                    }
                }
            }
        }
        let Some((run, sys, r)) = failing else {
            break first.expect("the first set was checked");
        };
        let k = kill_set(&run, &sys, &r, &watched);
        if k.is_empty() {
            let msg = format!(
                "{path}: no set of atomic writes repairs the model under {}: a counterexample ({}) has no write that another process observes while it is buffered",
                r.model, run.what
            );
            return Ok(outcome(Verdict::Violation, format!("{msg}\n")));
        }
        examples.push(run.what.clone());
        let set: Vec<u32> = k
            .into_iter()
            .map(|w| match ids.iter().position(|x| *x == w) {
                Some(i) => i as u32,
                None => {
                    ids.push(w);
                    (ids.len() - 1) as u32
                }
            })
            .collect();
        sets.push(set);
        let at_least = chosen[0].len();
        chosen = match fencer_repair::hitting::minimum(
            &sets,
            &|_| 0,
            &|_| false,
            if all_minimal { 64 } else { 1 },
            (at_least, 0),
        ) {
            Some(c) => c,
            None => unreachable!("kill sets are not empty"),
        };
    };
    let (pl, r) = verified;
    let lt = args.reach.is_none()
        && !args.deadlock
        && (args.ltl.is_some() || orig.property.is_some() || !orig.ltl.is_empty());
    let size = pl.atomic.len();
    // The thesis counts writes after splitting arrays: a write with a computed index
    // stands for one write per element.
    let split = |set: &std::collections::BTreeSet<(String, usize, String)>| -> usize {
        set.iter()
            .map(|(p, t, g)| {
                let dynamic = written(&r, p, *t)
                    .is_some_and(|(_, t)| !fencer_dve::relaxed::constant_index(t, g));
                let len = shared_vars
                    .iter()
                    .find(|s| &s.name == g)
                    .and_then(|s| s.len)
                    .unwrap_or(1) as usize;
                if dynamic {
                    len
                } else {
                    1
                }
            })
            .sum()
    };
    let all = &all_writes;
    let text = placement_text(&pl, &ast, &src);
    if let Some(w) = &write {
        if let Err(e) = std::fs::write(w, &text) {
            return Err(Error::usage(
                &format!("{}: error: cannot write: {e}", w.display()),
                None,
            ));
        }
    }
    let ms = started.elapsed().as_millis();
    if args.json {
        let sets_json: Vec<serde_json::Value> = chosen
            .iter()
            .map(|c| {
                serde_json::json!(c
                    .iter()
                    .map(|&i| {
                        let (p, t, g) = &ids[i as usize];
                        let line = written(&r, p, *t).map_or(0, |(_, tr)| {
                            fencer_text::diag::LineIndex::new(&src)
                                .line_col(&src, tr.span.start)
                                .0
                        });
                        serde_json::json!({"process": p, "transition": t, "line": line, "variable": g})
                    })
                    .collect::<Vec<_>>())
            })
            .collect();
        return Ok(outcome(
            Verdict::Safe,
            format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({
                    "verdict": "repaired",
                    "model": r.model,
                    "atomic_writes": size,
                    "atomic_writes_split": split(&pl.atomic),
                    "writes": all.len(),
                    "writes_split": split(all),
                    "rounds": rounds,
                    "counterexamples": sets.len(),
                    "minimal_sets": sets_json,
                    "atomic_file": text,
                    "elapsed_ms": ms,
                }))
                .expect("json")
            ),
        ));
    }
    let mut s = String::new();
    if size == 0 {
        s.push_str(&format!(
            "{path}: correct under {} as it is: no atomic write needed\n",
            r.model
        ));
    } else {
        s.push_str(&format!(
            "{path}: repaired under {} with {size} atomic writes of {} ({} of {} counting as the DiVinE thesis does, one per array element a computed index can reach)\n",
            r.model,
            all.len(),
            split(&pl.atomic),
            split(all)
        ));
        s.push_str(&format!(
            "minimum: every one of the {} counterexamples found needs one of its own hazardous writes made atomic, and no {} writes hit them all\n",
            sets.len(),
            size - 1
        ));
        s.push_str("\nthe atomic file (--atomic):\n");
        for l in text.lines() {
            s.push_str(&format!("  {l}\n"));
        }
        if all_minimal && chosen.len() > 1 {
            s.push_str(&format!("\nall {} minimum sets:\n", chosen.len()));
            for c in &chosen {
                let pl = Placement {
                    atomic: c.iter().map(|&i| ids[i as usize].clone()).collect(),
                    ..Placement::default()
                };
                let lines: Vec<String> = placement_text(&pl, &ast, &src)
                    .lines()
                    .map(str::to_string)
                    .collect();
                s.push_str(&format!("  {}\n", lines.join("; ")));
            }
        }
    }
    s.push_str(&format!(
        "\nverified: with these atomic writes, {} under {}{}\nrounds: {rounds}  counterexamples: {}  time: {ms} ms\n",
        if lt {
            "the model satisfies its property"
        } else if args.reach.is_some() {
            "no reachable state satisfies the --reach expression"
        } else {
            "no run reaches an error, a failed assertion or (with --deadlock) a deadlock"
        },
        r.model,
        if r.fairness && lt {
            " (every buffered write eventually flushed)"
        } else {
            ""
        },
        sets.len()
    ));
    if let Some(w) = &write {
        s.push_str(&format!("wrote {}\n", w.display()));
    }
    Ok(outcome(Verdict::Safe, s))
}
