//! DVE models under a relaxed memory model: the model is rewritten with store buffers
//! (`fencer_dve::relaxed`), checked as an ordinary model, and its runs are shown in the
//! original model's terms (each step at its source line, buffer flushes as their own
//! events). Also `fencer transform`, which writes the rewritten model.

use crate::{dve, Error, Model, Options};
use fencer_dve::relaxed::{Meta, Origin, Placement, Shared};
use fencer_dve::run::Label;
use fencer_dve::sem::{load, Var};
use fencer_report::TraceLine;

/// A model checked under a relaxed memory model, with what is needed to read its runs.
pub struct Relaxed {
    /// The model as written, compiled (for its transitions' text and lines).
    pub orig: fencer_dve::System,
    pub src: String,
    pub meta: Meta,
    /// The transformed model as DVE text.
    pub text: String,
    pub model: &'static str,
    /// For each process and transition of the transformed model: the buffer it flushes.
    pub group_of: Vec<Vec<Option<u32>>>,
    /// Runs must flush every buffer infinitely often (LTL).
    pub fairness: bool,
    /// The model as written.
    pub ast: fencer_dve::ast::Model,
}

fn model_name(m: Model) -> &'static str {
    match m {
        Model::Sc => "sc",
        Model::Tso => "tso",
        Model::Pso => "pso",
        Model::Pso1 => "pso1",
    }
}

/// Reads an atomic-writes file: `atomic PROCESS LINE VAR|*` and `barrier PROCESS LINE`,
/// LINE being the line where the transition starts in the model.
pub fn read_placement(
    file: &str,
    text: &str,
    model: &fencer_dve::ast::Model,
    src: &str,
) -> Result<Placement, String> {
    let index = fencer_text::diag::LineIndex::new(src);
    let mut pl = Placement::default();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{file}:{}", n + 1);
        let w: Vec<&str> = line.split_whitespace().collect();
        let (kind, want) = match w.first() {
            Some(&"atomic") => ("atomic", 4),
            Some(&"barrier") => ("barrier", 3),
            _ => {
                return Err(format!(
                    "{at}: error: expected `atomic PROCESS LINE VAR|*` or `barrier PROCESS LINE`, found `{line}`"
                ))
            }
        };
        if w.len() != want {
            return Err(format!(
                "{at}: error: `{kind}` takes {} words after it, found `{line}`",
                want - 1
            ));
        }
        let pname = w[1];
        let Ok(lno) = w[2].parse::<u32>() else {
            return Err(format!(
                "{at}: error: expected a line number of the model, found `{}`",
                w[2]
            ));
        };
        let Some(p) = model.items.iter().find_map(|i| match i {
            fencer_dve::ast::Item::Process(p) if p.name.name == pname => Some(p),
            _ => None,
        }) else {
            return Err(format!("{at}: error: the model has no process `{pname}`"));
        };
        let ts: Vec<usize> = p
            .trans
            .iter()
            .enumerate()
            .filter(|(_, t)| index.line_col(src, t.span.start).0 == lno)
            .map(|(k, _)| k)
            .collect();
        if ts.is_empty() {
            return Err(format!(
                "{at}: error: no transition of `{pname}` starts on line {lno} of the model"
            ));
        }
        if kind == "barrier" {
            for t in ts {
                pl.barrier.insert((pname.to_string(), t));
            }
            continue;
        }
        // The globals each transition on the line writes.
        let mut all_writes: Vec<&str> = Vec::new();
        let mut any = false;
        for t in ts {
            let writes: Vec<&str> = fencer_dve::relaxed::written_names(&p.trans[t])
                .into_iter()
                .filter(|n| !p.vars.iter().any(|v| v.name.name == *n))
                .collect();
            let ok = if w[3] == "*" {
                !writes.is_empty()
            } else {
                writes.contains(&w[3])
            };
            if ok {
                any = true;
                pl.atomic.insert((pname.to_string(), t, w[3].to_string()));
            }
            all_writes.extend(writes);
        }
        if !any {
            return Err(format!(
                "{at}: error: the transitions of `{pname}` on line {lno} write {}, so `{line}` would change nothing",
                if all_writes.is_empty() {
                    "no global variable".to_string()
                } else {
                    format!("only `{}`", all_writes.join("`, `"))
                }
            ));
        }
    }
    Ok(pl)
}

/// The atomic-writes file for a placement.
pub fn placement_text(pl: &Placement, model: &fencer_dve::ast::Model, src: &str) -> String {
    let index = fencer_text::diag::LineIndex::new(src);
    let line_of = |p: &str, t: usize| {
        model
            .items
            .iter()
            .find_map(|i| match i {
                fencer_dve::ast::Item::Process(q) if q.name.name == p => {
                    Some(index.line_col(src, q.trans[t].span.start).0)
                }
                _ => None,
            })
            .unwrap_or(0)
    };
    let mut s = String::new();
    for (p, t, g) in &pl.atomic {
        s.push_str(&format!("atomic {p} {} {g}\n", line_of(p, *t)));
    }
    for (p, t) in &pl.barrier {
        s.push_str(&format!("barrier {p} {}\n", line_of(p, *t)));
    }
    s
}

/// The shared variables of a compiled model.
pub fn shared(sys: &fencer_dve::System) -> Vec<Shared> {
    sys.globals
        .iter()
        .map(|(n, v)| Shared {
            name: n.clone(),
            ty: v.ty,
            len: v.len,
        })
        .collect()
}

/// Rewrites `ast` (compiled as `orig`) for `model` with `pl`, and compiles the result.
#[allow(clippy::too_many_arguments)] // one call per caller, each with its own sources
pub fn build(
    path: &str,
    src: &str,
    ast: &fencer_dve::ast::Model,
    orig: fencer_dve::System,
    pl: &Placement,
    model: Model,
    ov: &std::collections::HashMap<String, i32>,
    fairness: bool,
    bound: u32,
    private: &std::collections::HashSet<String>,
) -> Result<(fencer_dve::System, Relaxed), String> {
    // Private globals are left out of memory: their writes are immediate.
    let memory: Vec<Shared> = shared(&orig)
        .into_iter()
        .filter(|s| !private.contains(&s.name))
        .collect();
    let (m2, meta) = match model {
        Model::Pso1 => fencer_dve::relaxed::pso1(ast, &memory, pl),
        Model::Tso => {
            fencer_dve::relaxed::fifo(ast, &memory, pl, fencer_dve::relaxed::Fifo::Tso, bound)
        }
        Model::Pso => {
            fencer_dve::relaxed::fifo(ast, &memory, pl, fencer_dve::relaxed::Fifo::Pso, bound)
        }
        Model::Sc => unreachable!("SC needs no transformation"),
    }
    .map_err(|e| {
        let d = fencer_text::Diagnostic::new(path, src, e.span, e.message.clone(), "here");
        d.render(src)
    })?;
    let text = fencer_dve::print::model(&m2);
    let name = format!("{path} (under {})", model_name(model));
    let sys = fencer_dve::load(&name, &text, ov).map_err(|d| {
        format!(
            "internal error: the transformed model does not compile:\n{}",
            d.render(&text)
        )
    })?;
    let group_of = sys
        .processes
        .iter()
        .map(|p| {
            let origin = meta.origin.get(&p.name);
            (0..p.trans.len())
                .map(|t| match origin.and_then(|o| o.get(t)) {
                    Some(Origin::Flush { group, .. }) => Some(*group),
                    _ => None,
                })
                .collect()
        })
        .collect();
    Ok((
        sys,
        Relaxed {
            orig,
            src: src.to_string(),
            meta,
            text,
            model: model_name(model),
            group_of,
            fairness,
            ast: ast.clone(),
        },
    ))
}

/// The globals whose writes need no buffer (see `fencer_dve::relaxed::private`), unless
/// `--buffer-private`; what the properties read comes from `--reach`, `--ltl` and the
/// model's own properties.
pub fn private_vars(
    args: &Options,
    ast: &fencer_dve::ast::Model,
    orig: &fencer_dve::System,
) -> std::collections::HashSet<String> {
    if args.buffer_private {
        return Default::default();
    }
    let mut text = args.reach.clone().unwrap_or_default();
    if let Some(l) = &args.ltl {
        text.push(' ');
        text.push_str(&std::fs::read_to_string(l).unwrap_or_else(|_| l.clone()));
    }
    for (_, f) in &orig.ltl {
        text.push(' ');
        text.push_str(f);
    }
    let shared = shared(orig);
    let watched = mentions(&text, &shared);
    fencer_dve::relaxed::private(ast, &shared, &watched)
}

/// For `check`: the model transformed for `--model`, or `None` under SC.
pub fn prepare(
    args: &Options,
    path: &str,
    src: &str,
    ov: &std::collections::HashMap<String, i32>,
    orig: &fencer_dve::System,
) -> Result<Option<(fencer_dve::System, Relaxed)>, Error> {
    if matches!(args.model, Model::Sc) {
        let given = [
            (args.atomic.is_some(), "--atomic"),
            (args.keep_stale, "--keep-stale"),
            (args.buffer_private, "--buffer-private"),
            (args.no_buffer_fairness, "--no-buffer-fairness"),
        ];
        if let Some((_, flag)) = given.iter().find(|g| g.0) {
            return Err(Error::usage(
                &format!("error: {flag} is about store buffers: add --model pso1, tso or pso"),
                None,
            ));
        }
        return Ok(None);
    }
    if args.buffer_bound == 0 || args.buffer_bound > MAX_BUFFER_BOUND {
        return Err(Error::usage(&format!("error: --buffer-bound takes 1 to {MAX_BUFFER_BOUND} writes per buffer (the transformed model grows with the bound: each slot is a variable, and each flush a transition per slot)"),
            None,
        ));
    }
    let ast = fencer_dve::parse(path, src).map_err(|d| Error::diagnostic(&d, src))?;
    let mut pl = match &args.atomic {
        None => Placement::default(),
        Some(f) => {
            let fname = f.display().to_string();
            let text = std::fs::read_to_string(f).map_err(|e| {
                Error::usage(&format!("{fname}: error: cannot read the file: {e}"), None)
            })?;
            read_placement(&fname, &text, &ast, src).map_err(|m| Error::usage(&m, None))?
        }
    };
    pl.keep_stale = args.keep_stale;
    build(
        path,
        src,
        &ast,
        orig.clone(),
        &pl,
        args.model,
        ov,
        !args.no_buffer_fairness,
        args.buffer_bound,
        &private_vars(args, &ast, orig),
    )
    .map(Some)
    .map_err(|m| build_error(&m))
}

/// A failed [`build`]: the model's fault (exit 2), or fencer's when the transformed model
/// does not compile (exit 4).
pub(crate) fn build_error(m: &str) -> Error {
    if m.starts_with("internal error") {
        Error::internal(m)
    } else {
        Error::usage(m, None)
    }
}

impl Relaxed {
    pub(crate) fn origin(&self, sys: &fencer_dve::System, (p, t): (u32, u32)) -> Option<&Origin> {
        self.meta
            .origin
            .get(&sys.processes.get(p as usize)?.name)?
            .get(t as usize)
    }

    /// The original transition a step of the transformed model takes.
    fn program(
        &self,
        sys: &fencer_dve::System,
        pt: (u32, u32),
    ) -> Option<&fencer_dve::sem::Transition> {
        match self.origin(sys, pt)? {
            Origin::Program { trans } => {
                let name = &sys.processes[pt.0 as usize].name;
                let q = self.orig.processes.iter().find(|q| &q.name == name)?;
                q.trans.get(*trans)
            }
            Origin::Flush { .. } => None,
        }
    }

    /// One counterexample line for a step from `a` to `b` of the transformed model.
    pub fn step_line(
        &self,
        sys: &fencer_dve::System,
        path: &str,
        step: usize,
        l: Label,
        (a, b): (&[u8], &[u8]),
        note: &str,
    ) -> TraceLine {
        let pr = &sys.processes[l.first.0 as usize];
        let changes = self.changes(sys, a, b);
        let tail = if changes.is_empty() {
            String::new()
        } else {
            format!("  [{}]", changes.join(", "))
        };
        if let Some(Origin::Flush { process, var, .. }) = self.origin(sys, l.first) {
            return TraceLine {
                step,
                thread: process.clone(),
                file: path.to_string(),
                line: 0,
                column: 0,
                function: None,
                op: format!("buffer: {var} reaches memory{tail}{note}"),
                location: Some(var.clone()),
                value: None,
                buffer_update: true,
            };
        }
        let one = |pt: (u32, u32)| match self.program(sys, pt) {
            Some(t) => format!("{}: {}", sys.processes[pt.0 as usize].name, t.text),
            None => sys.describe(Label {
                first: pt,
                second: None,
            }),
        };
        let op = match l.second {
            None => one(l.first),
            Some(q) => format!("{} with {}", one(l.first), one(q)),
        };
        let (line, column) = match self.program(sys, l.first) {
            Some(t) => {
                let d = fencer_text::Diagnostic::new(path, &self.src, t.span, "", "");
                (d.line, d.col)
            }
            None => (0, 0),
        };
        TraceLine {
            step,
            thread: pr.name.clone(),
            file: path.to_string(),
            line,
            column,
            function: None,
            op: format!("{op}{tail}{note}"),
            location: None,
            value: None,
            buffer_update: false,
        }
    }

    /// What a step changed, in the original model's terms: memory, locals, process
    /// states, and each buffered write as `x=v (buffered)`.
    pub fn changes(&self, sys: &fencer_dve::System, a: &[u8], b: &[u8]) -> Vec<String> {
        let find =
            |n: &str| -> Option<Var> { sys.globals.iter().find(|(m, _)| m == n).map(|(_, v)| *v) };
        let mut out: Vec<String> = Vec::new();
        let hidden: std::collections::HashSet<&str> = self
            .meta
            .buffers
            .iter()
            .flat_map(|(_, _, s, f)| [s.as_str(), f.as_str()])
            .chain(self.meta.hidden.iter().map(String::as_str))
            .collect();
        for (n, v) in &sys.globals {
            if hidden.contains(n.as_str()) {
                continue;
            }
            for k in 0..v.len.unwrap_or(1) {
                let (x, y) = (load(a, *v, k), load(b, *v, k));
                if x != y {
                    out.push(match v.len {
                        Some(_) => format!("{n}[{k}]={y}"),
                        None => format!("{n}={y}"),
                    });
                }
            }
        }
        for (g, _p, s, f) in &self.meta.buffers {
            let (Some(sv), Some(fv)) = (find(s), find(f)) else {
                continue;
            };
            for k in 0..sv.len.unwrap_or(1) {
                let (fa, fb) = (load(a, fv, k), load(b, fv, k));
                let (sa, sb) = (load(a, sv, k), load(b, sv, k));
                let name = match sv.len {
                    Some(_) => format!("{g}[{k}]"),
                    None => g.clone(),
                };
                if fb == 1 && (fa == 0 || sa != sb) {
                    out.push(format!("{name}={sb} (buffered)"));
                } else if fa == 1 && fb == 0 && !out.iter().any(|o| o.starts_with(&name)) {
                    out.push(format!("buffered {name} dropped"));
                }
            }
        }
        for (p, addr, val, n) in &self.meta.queues {
            let (Some(av), Some(vv), Some(nv)) = (find(addr), find(val), find(n)) else {
                continue;
            };
            let entries = |s: &[u8]| -> Vec<String> {
                (0..load(s, nv, 0).max(0) as u32)
                    .map(|k| {
                        let a = load(s, av, k) as usize;
                        let name = self.meta.addresses.get(a).cloned().unwrap_or_default();
                        format!("{name}={}", load(s, vv, k))
                    })
                    .collect()
            };
            let (x, y) = (entries(a), entries(b));
            if x != y {
                out.push(format!("{p}'s buffer: [{}]", y.join(", ")));
            }
        }
        for pr in &sys.processes {
            for (n, v) in &pr.locals {
                for k in 0..v.len.unwrap_or(1) {
                    let (x, y) = (load(a, *v, k), load(b, *v, k));
                    if x != y {
                        out.push(match v.len {
                            Some(_) => format!("{}->{n}[{k}]={y}", pr.name),
                            None => format!("{}->{n}={y}", pr.name),
                        });
                    }
                }
            }
        }
        out
    }
}

/// The largest `--buffer-bound`: beyond it the transformed model's expressions pass the
/// DVE compiler's limits (16 did, on peterson) long before anyone could explore it.
pub const MAX_BUFFER_BOUND: u32 = 8;

/// `fencer transform`: the DVE model at `file` with store buffers for `model` built in,
/// as DVE text with a header that says what was added.
pub fn transform(
    file: &std::path::Path,
    model: Model,
    atomic: Option<&std::path::Path>,
    define: &[String],
    buffer_bound: u32,
) -> Result<String, Error> {
    let path = file.display().to_string();
    if file.extension().is_none_or(|e| e != "dve") {
        return Err(Error::usage(
            &format!("{path}: error: `fencer transform` rewrites DVE models (`.dve` files)"),
            None,
        ));
    }
    let src = std::fs::read_to_string(file)
        .map_err(|e| Error::usage(&format!("{path}: error: cannot read the file: {e}"), None))?;
    let mut ov = std::collections::HashMap::new();
    for d in define {
        match d.split_once('=').map(|(k, v)| (k, v.trim().parse::<i32>())) {
            Some((k, Ok(v))) => {
                ov.insert(k.to_string(), v);
            }
            _ => {
                return Err(Error::usage(
                    &format!("error: -D {d}: expected NAME=VALUE with an integer VALUE"),
                    None,
                ))
            }
        }
    }
    if matches!(model, Model::Sc) {
        return Err(Error::usage(
            "error: under --model sc a DVE model is its own transformation; pick pso1, tso or pso",
            None,
        ));
    }
    let orig = fencer_dve::load(&path, &src, &ov).map_err(|d| Error::diagnostic(&d, &src))?;
    let ast = fencer_dve::parse(&path, &src).map_err(|d| Error::diagnostic(&d, &src))?;
    let pl = match atomic {
        None => Placement::default(),
        Some(f) => {
            let fname = f.display().to_string();
            let text = std::fs::read_to_string(f).map_err(|e| {
                Error::usage(&format!("{fname}: error: cannot read the file: {e}"), None)
            })?;
            read_placement(&fname, &text, &ast, &src).map_err(|m| Error::usage(&m, None))?
        }
    };
    let (_, r) = build(
        &path,
        &src,
        &ast,
        orig,
        &pl,
        model,
        &ov,
        true,
        buffer_bound,
        // Every global is buffered: what a property of the written model reads is not
        // known here.
        &Default::default(),
    )
    .map_err(|m| build_error(&m))?;
    let buffers = match r.meta.bound {
        Some(k) => format!("{} queues of at most {k} writes", r.meta.queues.len()),
        None => format!("{} buffers", r.meta.buffers.len()),
    };
    let header = format!(
        "// {} under {}: store buffers added by `fencer transform` ({buffers}, memory process `{}`).\n// Every global is buffered. A property of this model is checked without the buffer\n// fairness of `fencer check --model {}` (no write delayed forever).\n",
        path, r.model, r.meta.memory, r.model
    );
    Ok(format!("{header}{}", r.text))
}

/// Whether the accepting states of the model's property process accept whatever follows:
/// each moves only to accepting states, and always can (an unconditional move), as in the
/// automaton of `G !p`. Then the property is a safety property: a run violates it as soon
/// as it reaches an accepting state (a continuation always exists, since a deadlocked
/// model stutters, and a weakly fair one too, by scheduling the enabled processes and
/// buffers in turn), so a breadth-first search finds a shortest counterexample where a
/// cycle search would explore the whole product.
pub(crate) fn terminal_acceptance(sys: &fencer_dve::System) -> bool {
    let Some(p) = sys.property else {
        return false;
    };
    let pr = &sys.processes[p];
    let always = |g: &Option<fencer_dve::sem::CExpr>| match g {
        None => true,
        Some(fencer_dve::sem::CExpr::Const(c)) => *c != 0,
        _ => false,
    };
    let acc = |s: u32| pr.accept.get(s as usize).copied().unwrap_or(false);
    pr.accept.iter().any(|&a| a)
        && (0..pr.accept.len() as u32).filter(|&s| acc(s)).all(|s| {
            let out: Vec<_> = pr.trans.iter().filter(|t| t.from == s).collect();
            out.iter()
                .all(|t| acc(t.to) && t.sync.is_none() && t.effect.is_empty())
                && out.iter().any(|t| always(&t.guard))
        })
}

/// A shortest run of the product into an accepting state (for `terminal_acceptance`):
/// the lasso is that path and a self-loop of the property process.
pub(crate) fn accepting_prefix(
    product: &dve::Dve,
    opts: &fencer_explicit::Options,
) -> fencer_explicit::LtlOutcome<Label> {
    let sys = product.sys;
    let judge = |s: &[u8]| sys.accepting(s).then(|| "accepting".to_string());
    let out = fencer_explicit::reach(product, opts, Some(&judge));
    let lasso = out.found.map(|f| {
        // No cycle: every continuation of the prefix is accepting.
        let cycle = Vec::new();
        fencer_explicit::Lasso {
            initial: f.initial,
            prefix: f.steps,
            cycle,
        }
    });
    fencer_explicit::LtlOutcome {
        stats: out.stats,
        accepting: u64::from(lasso.is_some()),
        lasso,
        stopped: out.stopped,
    }
}

/// The names of shared variables that `text` mentions (as whole words).
pub(crate) fn mentions(text: &str, shared: &[Shared]) -> std::collections::HashSet<String> {
    let words: std::collections::HashSet<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    shared
        .iter()
        .filter(|s| words.contains(s.name.as_str()))
        .map(|s| s.name.clone())
        .collect()
}
