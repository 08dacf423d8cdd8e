//! An interpreter for herd7's `.cat` memory-model language, as herdtools7 defines it
//! (`lib/modelLexer.mll`, `lib/modelParser.mly`, `lib/interpreter.ml`).
//!
//! A model is loaded once ([`Model::load`]: the implicit `stdlib.cat`, the model and every
//! file it includes, parsed and with every name resolved) and then run on each candidate
//! execution an engine enumerates ([`Model::run`]). The engine describes an execution by
//! its events `0..n` and the primitive sets and relations herd would give the model
//! ([`Execution`]); the model's checks decide whether it is consistent, and its flags
//! (`flag`, `undefined_unless`) are reported as herd reports them. A model that picks a
//! coherence order or an enumeration with `with x from S` yields one [`Outcome`] per
//! element of `S`.
//!
//! Semantics follow herd's interpreter: lazy `let`s (an unused binding that would fail
//! does not), `try e with e'` catching any evaluation failure (herd's way of defaulting
//! names an architecture does not define), least fixpoints for `let rec`, evaluation of a
//! sequence stopping at its first empty operand, checks stopping a branch at the first
//! failure.
//!
//! `run` is the inner loop of a model checker, so the work per candidate is kept small:
//! names are resolved to slots at load time; sets and relations are bitsets over the
//! events (inline for small executions); a top-level binding that does not depend on a
//! `with` variable is computed once per run, not once per branch; and `cross` of herd's
//! `cross.cat` (through which every model enumerates its coherence orders) runs natively
//! when its text is herd's, token for token.

mod ast;
mod bits;
mod compile;
mod eval;
mod ir;
mod parser;
mod prims;
mod value;
mod variant;

pub use bits::{Bits, EventSet, Relation};
pub use prims::{DEFAULT_EMPTY_RELS, DEFAULT_EMPTY_SETS};

use fencer_text::ast::Span;
use fencer_text::Diagnostic;
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

/// An error loading or running a model: a diagnostic naming file, line and column, with
/// the text of that file so that it renders with a caret.
#[derive(Clone, Debug)]
pub struct CatError {
    inner: Box<(Diagnostic, Arc<str>)>,
}

impl CatError {
    pub(crate) fn new(diagnostic: Diagnostic, source: Arc<str>) -> CatError {
        CatError {
            inner: Box::new((diagnostic, source)),
        }
    }

    pub(crate) fn without_source(file: &str, msg: impl Into<String>) -> CatError {
        CatError::new(
            Diagnostic::new(file, "", Span::new(0, 0), msg, ""),
            Arc::from(""),
        )
    }

    /// Where and what: file, 1-based line and column, message.
    pub fn diagnostic(&self) -> &Diagnostic {
        &self.inner.0
    }

    /// The text of the file the diagnostic points into (empty when there is none).
    pub fn source_text(&self) -> &str {
        &self.inner.1
    }

    /// The diagnostic with its source line and a caret under the offending text.
    pub fn render(&self) -> String {
        self.inner.0.render(&self.inner.1)
    }
}

impl fmt::Display for CatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.0.fmt(f)
    }
}

impl std::error::Error for CatError {}

/// One candidate execution, as the primitive sets and relations herd gives a model.
///
/// Every set and relation must be over the same `n` events. Names a model reads that are
/// neither here nor defined by the model are unbound (an error, unless under `try`),
/// except the ones herd defines for every execution, which default when absent: `id`;
/// `loc` (from `locations`); `M` (`R | W`); `Exp` (`M`); `NExp` (`M \ Exp`, or empty);
/// `EXEC` (all but `SPEC`); `sm`, `si` (the identity on `M`); `same-instance`,
/// `same-instr` (the identity); `partial_po` (`po`); `pco` (herd's: the initial write
/// first and the final write (`FW`) last, per location); and [`DEFAULT_EMPTY_RELS`],
/// [`DEFAULT_EMPTY_SETS`], empty. [`Model::free_names`] lists what a model reads.
#[derive(Clone, Debug, Default)]
pub struct Execution {
    /// The events are `0..n`.
    pub n: usize,
    /// Primitive sets: `R`, `W`, `M`, `F`, `IW`, `FW`, `RMW`, `B`, ..., and any
    /// architecture's (`MFENCE`, `DMB.ISH`, `RLX`, ...).
    pub sets: BTreeMap<String, EventSet>,
    /// Primitive relations: `po`, `rf`, `loc`, `int`, `ext`, `addr`, `data`, `ctrl`,
    /// `iico_data`, `same-instance`, ...
    pub rels: BTreeMap<String, Relation>,
    /// Annotation sets: tag `t` is also the set named `t` with its first letter upper case
    /// (herd's `tag2instrs_var`), which `tag2events('t)` reads.
    pub tags: BTreeMap<String, EventSet>,
    /// Each event's location, `None` for events without one (fences); for `loc`,
    /// `classes-loc` (`partition`), and so for generating coherence orders.
    pub locations: Vec<Option<u32>>,
    /// The name of each location id, for `loc2events('x)`; may be empty.
    pub location_names: Vec<String>,
    /// Each event's value, for `different-values`; may be empty (values unknown).
    pub values: Vec<Option<i64>>,
    /// Pairs of page-table events with the same output address, for `same-oa`.
    pub same_oa: Option<Relation>,
    /// Page-table events whose value is writable, for `at-least-one-writable`.
    pub writable: Option<EventSet>,
}

impl Execution {
    /// An execution of `n` events with nothing defined yet.
    pub fn new(n: usize) -> Execution {
        Execution {
            n,
            ..Execution::default()
        }
    }

    fn check(&self) -> Result<(), CatError> {
        let bad = |what: &str, name: &str, m: usize| {
            Err(CatError::without_source(
                "<execution>",
                format!(
                    "{what} `{name}` is over {m} events: expected the execution's {}",
                    self.n
                ),
            ))
        };
        for (k, s) in self.sets.iter().chain(&self.tags) {
            if s.n() != self.n {
                return bad("set", k, s.n());
            }
        }
        for (k, r) in &self.rels {
            if r.n() != self.n {
                return bad("relation", k, r.n());
            }
        }
        Ok(())
    }
}

/// Parses one cat file on its own (its includes are not read): the syntax check herd does
/// when it loads a file.
pub fn check_syntax(path: &Path) -> Result<(), CatError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CatError::without_source(
            &path.display().to_string(),
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let file = compile::SourceFile {
        name: path.display().to_string(),
        path: path.to_path_buf(),
        text: text.into(),
    };
    match parser::parse_file(0, &file.text) {
        Ok(_) => Ok(()),
        Err(e) => Err(compile::make_error(&[file], e.sp, e.msg, e.label)),
    }
}

/// How to run a model: herd's `-variant` and `-skipcheck`.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Variants turned on (`"mixed"`, `"vmsa"`, `"cos-opt"`, ...), as herd's `-variant`
    /// tags: case does not matter, herd's aliases apply, commas separate several.
    pub variants: BTreeSet<String>,
    /// Checks (by `as` name) and procedure calls to skip, as herd's `-skipcheck`.
    pub skip_checks: BTreeSet<String>,
}

/// A loaded model.
pub struct Model {
    prog: compile::Program,
    name: String,
}

impl Model {
    /// Parses `path` and every file it includes (resolved first next to the including
    /// file, then in `libdir`), plus the implicit `stdlib.cat` from `libdir`.
    pub fn load(path: &Path, libdir: &Path) -> Result<Model, CatError> {
        Model::build(compile::load(path, None, libdir)?)
    }

    /// As [`Model::load`], with a bell file run between the stdlib and the model (its
    /// `enum`s declare the tags the model may use; its `instructions` are ignored, as when
    /// herd runs a model).
    pub fn load_with_bell(path: &Path, bell: &Path, libdir: &Path) -> Result<Model, CatError> {
        Model::build(compile::load(path, Some(bell), libdir)?)
    }

    fn build(prog: compile::Program) -> Result<Model, CatError> {
        let name = prog.title.join(" ");
        Ok(Model { prog, name })
    }

    /// The title line, e.g. `C RC11`, `X86 TSO`; the file name when there is none.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The architecture the title names when it has two words (`C` in `C RC11`, `X86` in
    /// `X86 TSO`), as herd checks it against the test's.
    pub fn arch(&self) -> Option<&str> {
        match self.prog.title.as_slice() {
            [a, _] => Some(a),
            _ => None,
        }
    }

    /// The model declares `catdep`: it computes dependencies itself (from `iico_data`,
    /// registers and so on) rather than reading the engine's `addr`, `data`, `ctrl`; herd
    /// also keeps the events of one instruction out of `po` for such models.
    pub fn catdep(&self) -> bool {
        self.prog.catdep
    }

    /// Names the model reads from the execution: every name it uses but never binds
    /// (herd's primitives excluded), in order of first use.
    pub fn free_names(&self) -> Vec<&str> {
        self.prog
            .ext
            .iter()
            .zip(&self.prog.ext_read)
            .filter(|(n, read)| **read && value::Prim::from_name(n).is_none())
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// Warnings from loading, such as variant names herd does not know.
    pub fn warnings(&self) -> &[String] {
        &self.prog.warnings
    }

    /// Evaluates the model on one execution with the given variants on. Calls `each` once
    /// per outcome (several when `with ... from` branches). An error is a failure of the
    /// model itself (an unbound name outside `try`, a type error, a failed `assert`).
    pub fn run(
        &self,
        exec: &Execution,
        variants: &BTreeSet<String>,
        each: &mut dyn FnMut(&Outcome),
    ) -> Result<(), CatError> {
        let opts = RunOptions {
            variants: variants.clone(),
            skip_checks: BTreeSet::new(),
        };
        self.run_with(exec, &opts, each)
    }

    /// [`Model::run`] with all of herd's run options.
    pub fn run_with(
        &self,
        exec: &Execution,
        opts: &RunOptions,
        each: &mut dyn FnMut(&Outcome),
    ) -> Result<(), CatError> {
        exec.check()?;
        let rt = eval::Rt::new(
            &self.prog,
            exec,
            variant::enabled(&opts.variants),
            &opts.skip_checks,
        );
        rt.run(each)
    }
}

/// What an outcome can look up in the state its branch ended in.
pub(crate) trait OutcomeEnv {
    fn rel(&self, name: &str) -> Option<Rc<Relation>>;
    fn set(&self, name: &str) -> Option<Rc<EventSet>>;
}

struct Node<T> {
    name: String,
    val: Option<Rc<T>>,
    next: OnceCell<Box<Node<T>>>,
}

/// Looks `name` up in an append-only list, computing and appending it when absent, so
/// that references to values handed out stay valid.
fn cached<'s, T>(
    mut cell: &'s OnceCell<Box<Node<T>>>,
    name: &str,
    f: impl FnOnce() -> Option<Rc<T>>,
) -> Option<&'s T> {
    loop {
        match cell.get() {
            Some(node) => {
                if node.name == name {
                    return node.val.as_deref();
                }
                cell = &node.next;
            }
            None => {
                let node = cell.get_or_init(|| {
                    Box::new(Node {
                        name: name.to_string(),
                        val: f(),
                        next: OnceCell::new(),
                    })
                });
                return node.val.as_deref();
            }
        }
    }
}

/// The end of one branch of a run: consistent, or stopped by a failed check.
pub struct Outcome<'a> {
    failed: Option<String>,
    flags: Vec<String>,
    env: &'a dyn OutcomeEnv,
    rels: OnceCell<Box<Node<Relation>>>,
    sets: OnceCell<Box<Node<EventSet>>>,
}

impl<'a> Outcome<'a> {
    pub(crate) fn new(failed: Option<String>, flags: Vec<String>, env: &'a dyn OutcomeEnv) -> Self {
        Outcome {
            failed,
            flags,
            env,
            rels: OnceCell::new(),
            sets: OnceCell::new(),
        }
    }

    /// Every check (not flags, not `undefined_unless`) holds.
    pub fn consistent(&self) -> bool {
        self.failed.is_none()
    }

    /// The name of the failed check (its `as` name, else its text), or why the branch
    /// stopped (`with x from: no candidate`).
    pub fn failed_check(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The flags raised, as herd prints them after `Flag`: `*undef*` when an
    /// `undefined_unless` failed, then the names of the `flag` checks that held.
    pub fn flags(&self) -> &[String] {
        &self.flags
    }

    /// An `undefined_unless` check failed: herd's result is then `Undef`.
    pub fn undefined(&self) -> bool {
        self.flags.first().is_some_and(|f| f == "*undef*")
    }

    /// A relation bound at the end of the branch (e.g. the `co` it chose), or given by
    /// the execution; `None` when unbound, not a relation, or failing to evaluate.
    pub fn rel(&self, name: &str) -> Option<&Relation> {
        cached(&self.rels, name, || self.env.rel(name))
    }

    /// A set of events bound at the end of the branch, or given by the execution.
    pub fn set(&self, name: &str) -> Option<&EventSet> {
        cached(&self.sets, name, || self.env.set(name))
    }
}

impl fmt::Debug for Outcome<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outcome")
            .field("failed", &self.failed)
            .field("flags", &self.flags)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Events as (thread, is_write, location, sets); initial writes have no thread.
    type Ev = (Option<u32>, bool, u32, &'static [&'static str]);

    /// Every candidate of the events: each read from any write to its location.
    fn candidates(evs: &[Ev], arch: &[&str]) -> Vec<Execution> {
        let n = evs.len();
        let mut base = Execution::new(n);
        let set =
            |p: &dyn Fn(&Ev) -> bool| EventSet::from_events(n, (0..n).filter(|&i| p(&evs[i])));
        base.sets.insert("R".into(), set(&|e| !e.1));
        base.sets.insert("W".into(), set(&|e| e.1));
        base.sets.insert("IW".into(), set(&|e| e.0.is_none()));
        for name in arch {
            base.sets
                .insert(name.to_string(), set(&|e| e.3.contains(name)));
        }
        let pairs = |p: &dyn Fn(&Ev, &Ev, usize, usize) -> bool| {
            let mut r = Relation::new(n);
            for i in 0..n {
                for j in 0..n {
                    if p(&evs[i], &evs[j], i, j) {
                        r.insert(i, j);
                    }
                }
            }
            r
        };
        base.rels.insert(
            "po".into(),
            pairs(&|a, b, i, j| a.0.is_some() && a.0 == b.0 && i < j),
        );
        base.rels.insert(
            "int".into(),
            pairs(&|a, b, _, _| a.0.is_some() && a.0 == b.0),
        );
        base.rels.insert(
            "ext".into(),
            pairs(&|a, b, _, _| a.0 != b.0 && (a.0.is_some() || b.0.is_some())),
        );
        base.locations = evs.iter().map(|e| Some(e.2)).collect();
        let reads: Vec<usize> = (0..n).filter(|&i| !evs[i].1).collect();
        let mut out = Vec::new();
        let mut choice = vec![0usize; reads.len()];
        loop {
            let mut rf = Relation::new(n);
            let mut ok = true;
            for (k, &r) in reads.iter().enumerate() {
                let ws: Vec<usize> = (0..n)
                    .filter(|&w| evs[w].1 && evs[w].2 == evs[r].2)
                    .collect();
                match ws.get(choice[k]) {
                    Some(&w) => rf.insert(w, r),
                    None => ok = false,
                }
            }
            if ok {
                let mut x = base.clone();
                x.rels.insert("rf".into(), rf);
                out.push(x);
            }
            let mut k = 0;
            loop {
                if k == reads.len() {
                    return out;
                }
                choice[k] += 1;
                if choice[k] <= n {
                    break;
                }
                choice[k] = 0;
                k += 1;
            }
        }
    }

    fn summary(m: &Model, x: &Execution, variants: &BTreeSet<String>) -> Vec<String> {
        let mut v = Vec::new();
        m.run(x, variants, &mut |o| {
            v.push(format!(
                "{:?} {:?} {:?}",
                o.failed_check(),
                o.flags(),
                o.rel("co").map(|r| r.iter().collect::<Vec<_>>())
            ))
        })
        .unwrap_or_else(|e| panic!("{}", e.render()));
        v
    }

    /// Keeping the bindings that do not depend on a `with` across its branches changes no
    /// outcome.
    #[test]
    fn hoisting_changes_nothing() {
        let dir = PathBuf::from("/work/shared/herd-libdir");
        if !dir.is_dir() {
            eprintln!("skipped: no herd library");
            return;
        }
        const C: &[&str] = &[
            "RLX", "REL", "ACQ", "ACQ_REL", "SC", "CON", "RMW", "A", "NA",
        ];
        let evs: Vec<Ev> = vec![
            (None, true, 0, &[]),
            (None, true, 1, &[]),
            (Some(0), true, 0, &["RLX", "A", "L"]),
            (Some(0), true, 1, &["REL", "A", "L"]),
            (Some(0), false, 0, &["ACQ", "A"]),
            (Some(1), true, 1, &["SC", "A"]),
            (Some(1), false, 1, &["ACQ", "A", "Q"]),
            (Some(1), false, 0, &["NA"]),
            (Some(1), true, 0, &["RLX", "A"]),
        ];
        let mut arch: Vec<&str> = C.to_vec();
        arch.extend(["MFENCE", "L", "Q"]);
        let xs = candidates(&evs, &arch);
        assert!(xs.len() > 20);
        for (f, variants) in [
            ("rc11.cat", vec![]),
            ("rc11.cat", vec!["cos-opt"]),
            ("x86tso.cat", vec![]),
            ("aarch64.cat", vec![]),
        ] {
            let variants: BTreeSet<String> = variants.into_iter().map(String::from).collect();
            let path = dir.join(f);
            let hoisted = Model::load(&path, &dir).unwrap();
            let plain =
                Model::build(compile::load_with(&path, None, &dir, false).unwrap()).unwrap();
            let mut consistent = 0;
            for x in &xs {
                let mut x = x.clone();
                for name in hoisted.free_names() {
                    if prims::initial_known(name)
                        || x.sets.contains_key(name)
                        || x.rels.contains_key(name)
                    {
                        continue;
                    }
                    x.sets.insert(name.to_string(), EventSet::new(x.n));
                }
                let a = summary(&hoisted, &x, &variants);
                let b = summary(&plain, &x, &variants);
                consistent += a.iter().filter(|s| s.starts_with("None")).count();
                assert_eq!(a, b, "{f}");
            }
            assert!(consistent > 0, "{f}");
        }
    }

    /// Engines run models from several threads.
    #[test]
    fn model_is_shareable() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Model>();
        shareable::<Execution>();
        shareable::<CatError>();
    }

    /// herd's own `cross` is recognised (a modified one is not: see the semantics tests).
    #[test]
    fn cross_is_native() {
        let dir = PathBuf::from("/work/shared/herd-libdir");
        if !dir.is_dir() {
            eprintln!("skipped: no herd library");
            return;
        }
        fn natives(code: &[ir::Instr]) -> usize {
            code.iter()
                .map(|i| match i {
                    ir::Instr::Let { binds, .. } => binds
                        .iter()
                        .filter(|b| match &b.expr.kind {
                            ir::ExprKind::LetRec(_, body) => {
                                matches!(&body.kind, ir::ExprKind::Fun(d) if d.native.is_some())
                            }
                            _ => false,
                        })
                        .count(),
                    ir::Instr::IfVariant(_, a, b) => natives(a) + natives(b),
                    _ => 0,
                })
                .sum()
        }
        let m = Model::load(&dir.join("rc11.cat"), &dir).unwrap();
        // Once in each branch of `if "cos-opt"`.
        assert_eq!(natives(&m.prog.top), 2);
        let m = Model::load(&dir.join("ncos.cat"), &dir).unwrap();
        assert_eq!(natives(&m.prog.top), 1);
        assert!(!parser::same_tokens(
            "cross = fun x -> x",
            "cross = fun y -> y"
        ));
    }
}
