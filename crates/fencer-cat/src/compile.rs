//! Loads a model (stdlib, includes) and resolves every name to a slot, once per model.
//!
//! herd keeps its environment as a map from names to lazy values and looks names up as it
//! runs. Scoping in cat is lexical, so each use of a name can be tied to its binding here;
//! the one dynamic corner is that bindings made inside `if "variant" ... end` (or an
//! instruction-level `match`) are visible after it: each such name gets a join slot that
//! every branch fills (`Instr::Alias`).

use crate::ast::{self, Exp, Ins, Op2, Sp};
use crate::ir::*;
use crate::variant;
use crate::CatError;
use fencer_text::ast::Span;
use fencer_text::Diagnostic;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

pub(crate) struct SourceFile {
    pub name: String,
    pub path: PathBuf,
    pub text: Arc<str>,
}

/// A loaded model, ready to run.
pub(crate) struct Program {
    pub files: Vec<SourceFile>,
    pub title: Vec<String>,
    pub catdep: bool,
    pub top: Vec<Instr>,
    pub global_slots: u32,
    /// Names the model reads but never binds: the execution's sets and relations, the
    /// primitives.
    pub ext: Vec<String>,
    /// Whether the model reads `ext[i]` itself, rather than only to join the branches of
    /// a conditional that binds it on one side.
    pub ext_read: Vec<bool>,
    /// The top-level bindings at the end of the model.
    pub final_scope: HashMap<String, Slot>,
    /// Enumeration name to its tags, sorted.
    pub enums: HashMap<String, Vec<TagName>>,
    pub warnings: Vec<String>,
}

impl Program {
    pub fn error(&self, sp: Sp, msg: impl Into<String>, label: impl Into<String>) -> CatError {
        make_error(&self.files, sp, msg, label)
    }
}

pub(crate) fn make_error(
    files: &[SourceFile],
    sp: Sp,
    msg: impl Into<String>,
    label: impl Into<String>,
) -> CatError {
    match files.get(sp.file as usize) {
        Some(f) => {
            let mut d = Diagnostic::new(
                &f.name,
                &f.text,
                Span::new(sp.start as usize, sp.end as usize),
                msg,
                label,
            );
            if d.message.starts_with("unbound var: ") {
                d = d.with_help(
                    "expected a name the model binds (`let`, `with`, `procedure`, `enum`) \
                     or the execution gives (its sets and relations)",
                );
            }
            CatError::new(d, f.text.clone())
        }
        None => CatError::without_source("<model>", msg),
    }
}

struct FrameCx {
    nslots: u32,
    scope: HashMap<String, Vec<Slot>>,
    /// Names in binding order, to undo a scope.
    undo: Vec<String>,
    /// For the frame of a non-recursive function: the free names the execution supplies.
    collect_ext: bool,
    ext_free: Vec<(u32, Sp)>,
}

impl FrameCx {
    fn new(collect_ext: bool) -> FrameCx {
        FrameCx {
            nslots: 0,
            scope: HashMap::new(),
            undo: Vec::new(),
            collect_ext,
            ext_free: Vec::new(),
        }
    }
}

struct Compiler {
    libdir: PathBuf,
    files: Vec<SourceFile>,
    cache: HashMap<PathBuf, (u32, Rc<ast::File>)>,
    frames: Vec<FrameCx>,
    ext: Vec<String>,
    ext_ix: HashMap<String, u32>,
    ext_read: Vec<bool>,
    tags: HashMap<String, String>,
    enums: HashMap<String, Vec<String>>,
    include_stack: Vec<PathBuf>,
    warnings: Vec<String>,
    /// How many conditionals (`if "variant"`, instruction `match`) enclose the code.
    cond_depth: u32,
}

type R<T> = Result<T, CatError>;

/// Loads `path` with the implicit `stdlib.cat` of `libdir` first (and a bell file between
/// them, as herd runs one).
pub(crate) fn load(path: &Path, bell: Option<&Path>, libdir: &Path) -> R<Program> {
    load_with(path, bell, libdir, true)
}

/// `hoist`: keep the bindings that do not depend on a `with` from one branch to the
/// next (off only to test that it changes nothing).
pub(crate) fn load_with(
    path: &Path,
    bell: Option<&Path>,
    libdir: &Path,
    hoist: bool,
) -> R<Program> {
    let mut c = Compiler {
        libdir: libdir.to_path_buf(),
        files: Vec::new(),
        cache: HashMap::new(),
        frames: vec![FrameCx::new(false)],
        ext: Vec::new(),
        ext_ix: HashMap::new(),
        ext_read: Vec::new(),
        tags: HashMap::new(),
        enums: HashMap::new(),
        include_stack: Vec::new(),
        warnings: Vec::new(),
        cond_depth: 0,
    };
    let mut top = Vec::new();
    let stdlib = libdir.join("stdlib.cat");
    let (_, std_ast) = c.load_file(&stdlib, None)?;
    c.include_stack.push(stdlib.clone());
    c.ins_list(&std_ast.body, &mut top)?;
    c.include_stack.pop();
    if let Some(bell) = bell {
        let (_, bell_ast) = c.load_file(bell, None)?;
        c.include_stack.push(bell.to_path_buf());
        c.ins_list(&bell_ast.body, &mut top)?;
        c.include_stack.pop();
    }
    let (_, main) = c.load_file(path, None)?;
    c.include_stack.push(path.to_path_buf());
    c.ins_list(&main.body, &mut top)?;
    c.include_stack.pop();
    let mut title = main.title.clone();
    if title.is_empty() {
        title.push(
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
    }
    let g = c.frames.pop().expect("global frame");
    let mut dep = vec![!hoist; g.nslots as usize];
    if hoist {
        mark_stable(&mut top, &mut dep, false);
    }
    // Which slots each `with` clears is known once the whole program has been seen.
    fill_resets(&mut top, &dep);
    let final_scope = g
        .scope
        .iter()
        .filter_map(|(k, v)| v.last().map(|s| (k.clone(), *s)))
        .collect();
    let enums = c
        .enums
        .into_iter()
        .map(|(ty, mut tags)| {
            tags.sort();
            tags.dedup();
            let tags = tags
                .into_iter()
                .map(|name| TagName {
                    ty: ty.clone(),
                    name,
                })
                .collect();
            (ty, tags)
        })
        .collect();
    Ok(Program {
        files: c.files,
        title,
        catdep: main.catdep,
        top,
        global_slots: g.nslots,
        ext: c.ext,
        ext_read: c.ext_read,
        final_scope,
        enums,
        warnings: c.warnings,
    })
}

fn bound_by(p: &ast::Pat0, x: &str) -> bool {
    matches!(p, Some((y, _)) if y == x)
}

fn pat_binds(p: &ast::Pat, x: &str) -> bool {
    match p {
        ast::Pat::Var(p0) => bound_by(p0, x),
        ast::Pat::Tuple(ps) => ps.iter().any(|p| bound_by(p, x)),
    }
}

/// Whether `x` occurs free in `e` (herd's `ASTUtils.free`).
fn free_in(x: &str, e: &Exp) -> bool {
    match e {
        Exp::EmptyRel(_) | Exp::Universe(_) | Exp::Tag(..) => false,
        Exp::Var(_, y) => y == x,
        Exp::Op1(_, _, e) => free_in(x, e),
        Exp::Op(_, _, es) | Exp::ExplicitSet(_, es) => es.iter().any(|e| free_in(x, e)),
        Exp::App(_, f, a) => free_in(x, f) || free_in(x, a),
        Exp::Bind(_, bds, body) => {
            bds.iter().any(|b| free_in(x, &b.exp))
                || (!bds.iter().any(|b| pat_binds(&b.pat, x)) && free_in(x, body))
        }
        Exp::BindRec(_, bds, body) => {
            !bds.iter().any(|b| pat_binds(&b.pat, x))
                && (bds.iter().any(|b| free_in(x, &b.exp)) || free_in(x, body))
        }
        Exp::Fun(_, p, body, _) => !pat_binds(p, x) && free_in(x, body),
        Exp::Match(_, e, cls, d) => {
            free_in(x, e)
                || cls.iter().any(|(_, e)| free_in(x, e))
                || d.as_ref().is_some_and(|d| free_in(x, d))
        }
        Exp::MatchSet(_, e, em, cl) => {
            free_in(x, e)
                || free_in(x, em)
                || match cl {
                    ast::SetClause::EltRem(a, b, body) => {
                        !bound_by(a, x) && !bound_by(b, x) && free_in(x, body)
                    }
                    ast::SetClause::PreEltPost(a, b, c, body) => {
                        !bound_by(a, x) && !bound_by(b, x) && !bound_by(c, x) && free_in(x, body)
                    }
                }
        }
        Exp::Try(_, a, b) => free_in(x, a) || free_in(x, b),
        Exp::If(_, c, a, b) => {
            (match &**c {
                ast::Cond::Eq(p, q) | ast::Cond::Subset(p, q) | ast::Cond::In(p, q) => {
                    free_in(x, p) || free_in(x, q)
                }
                ast::Cond::Variant(_) => false,
            }) || free_in(x, a)
                || free_in(x, b)
        }
    }
}

/// herd's `ASTUtils.rec2plus`: `let rec x = a | b | x;x` is `let x = (a | b)+`.
fn as_plus(bds: &[ast::Binding]) -> Option<(String, Sp, Exp)> {
    let [b] = bds else { return None };
    let ast::Pat::Var(Some((x, _))) = &b.pat else {
        return None;
    };
    let Exp::Op(usp, Op2::Union, es) = &b.exp else {
        return None;
    };
    let mut kept = Vec::new();
    let mut saw_seq = false;
    for e in es {
        if free_in(x, e) {
            match e {
                Exp::Op(_, Op2::Seq, xs)
                    if xs.len() == 2
                        && xs.iter().all(|v| matches!(v, Exp::Var(_, y) if y == x)) =>
                {
                    saw_seq = true;
                }
                _ => return None,
            }
        } else {
            kept.push(e.clone());
        }
    }
    if !saw_seq {
        return None;
    }
    let union = Exp::Op(*usp, Op2::Union, kept);
    Some((
        x.clone(),
        b.sp,
        Exp::Op1(*usp, ast::Op1::Plus, Box::new(union)),
    ))
}

fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Compiler {
    fn load_file(&mut self, path: &Path, from: Option<Sp>) -> R<(u32, Rc<ast::File>)> {
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some((id, f)) = self.cache.get(&key) {
            return Ok((*id, f.clone()));
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                let msg = format!("cannot read {}: {e}", path.display());
                return Err(match from {
                    Some(sp) => make_error(&self.files, sp, msg, "included here"),
                    None => CatError::without_source(&path.display().to_string(), msg),
                });
            }
        };
        let id = self.files.len() as u32;
        self.files.push(SourceFile {
            name: path.display().to_string(),
            path: path.to_path_buf(),
            text: text.into(),
        });
        let text = self.files[id as usize].text.clone();
        let file = match crate::parser::parse_file(id, &text) {
            Ok(f) => Rc::new(f),
            Err(e) => return Err(make_error(&self.files, e.sp, e.msg, e.label)),
        };
        self.cache.insert(key, (id, file.clone()));
        Ok((id, file))
    }

    fn err(&self, sp: Sp, msg: impl Into<String>, label: &str) -> CatError {
        make_error(&self.files, sp, msg, label)
    }

    fn frame(&mut self) -> &mut FrameCx {
        self.frames.last_mut().expect("a frame")
    }

    fn alloc(&mut self) -> Slot {
        let f = self.frame();
        f.nslots += 1;
        f.nslots - 1
    }

    fn bind(&mut self, name: &str, slot: Slot) {
        let f = self.frame();
        f.scope.entry(name.to_string()).or_default().push(slot);
        f.undo.push(name.to_string());
    }

    fn mark(&mut self) -> usize {
        self.frame().undo.len()
    }

    fn undo_to(&mut self, mark: usize) {
        let f = self.frame();
        while f.undo.len() > mark {
            let name = f.undo.pop().expect("undo entry");
            if let Some(v) = f.scope.get_mut(&name) {
                v.pop();
                if v.is_empty() {
                    f.scope.remove(&name);
                }
            }
        }
    }

    fn ext_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ext_ix.get(name) {
            return i;
        }
        let i = self.ext.len() as u32;
        self.ext.push(name.to_string());
        self.ext_read.push(false);
        self.ext_ix.insert(name.to_string(), i);
        i
    }

    fn resolve(&mut self, name: &str) -> VarRef {
        for (depth, f) in self.frames.iter().rev().enumerate() {
            if let Some(slot) = f.scope.get(name).and_then(|v| v.last()) {
                return VarRef::Local {
                    depth: depth as u32,
                    slot: *slot,
                };
            }
        }
        VarRef::Ext(self.ext_id(name))
    }

    /// Resolves a name the model reads.
    fn lookup(&mut self, name: &str, sp: Sp) -> VarRef {
        let r = self.resolve(name);
        if let VarRef::Ext(id) = r {
            self.ext_read[id as usize] = true;
            for f in self.frames.iter_mut() {
                if f.collect_ext && !f.ext_free.iter().any(|(i, _)| *i == id) {
                    f.ext_free.push((id, sp));
                }
            }
        }
        r
    }

    /// Marks the definition of `cross` of herd's `cross.cat` as native: the coherence
    /// orders of every candidate go through it, and interpreting its nested recursion
    /// costs more than the rest of most models.
    fn recognise_native(&self, b: &ast::Binding, e: &mut Expr) {
        const CROSS: &str = "cross =
  let rec do_cross (k,ys,oss) = match oss with
  || {} -> ys ++ k
  || os ++ oss ->
       let rec call_rec (k,os) = match os with
       || {} -> k
       || o ++ os -> call_rec (do_cross (k,o | ys,oss),os)
       end in
       call_rec (k,os)
  end in
  fun oss -> do_cross ({},0,oss)";
        if !matches!(&b.pat, ast::Pat::Var(Some((x, _))) if x == "cross") {
            return;
        }
        let f = &self.files[b.sp.file as usize];
        let Some(text) = f.text.get(b.sp.start as usize..b.sp.end as usize) else {
            return;
        };
        if !crate::parser::same_tokens(text, CROSS) {
            return;
        }
        if let ExprKind::LetRec(_, body) = &mut e.kind {
            if let ExprKind::Fun(def) = &mut body.kind {
                def.native = Some(Native::Cross);
            }
        }
    }

    /// In the top-level frame, evaluates `e` through a hidden `let`, so that when it does
    /// not depend on a `with` its value is kept across the branches (see `mark_stable`).
    fn hoistable(&mut self, e: Expr, out: &mut Vec<Instr>) -> Expr {
        if self.frames.len() != 1 {
            return e;
        }
        let sp = e.sp;
        let slot = self.alloc();
        out.push(Instr::Let {
            binds: vec![Bind {
                pat: Pat::One(Some(slot)),
                expr: e,
                sp,
            }],
            stable: false,
        });
        Expr {
            kind: ExprKind::Var(VarRef::Local { depth: 0, slot }, String::new()),
            sp,
        }
    }

    fn text(&self, sp: Sp) -> String {
        let f = &self.files[sp.file as usize];
        collapse_ws(f.text.get(sp.start as usize..sp.end as usize).unwrap_or(""))
    }

    fn ins_list(&mut self, ins: &[Ins], out: &mut Vec<Instr>) -> R<()> {
        for i in ins {
            self.ins(i, out)?;
        }
        Ok(())
    }

    /// Compiles alternative instruction lists that continue into the same code, joining
    /// the names they bind.
    fn branches(&mut self, brs: &[&[Ins]]) -> R<Vec<Vec<Instr>>> {
        let mark = self.mark();
        let mut outs = Vec::new();
        let mut added: Vec<Vec<(String, Slot)>> = Vec::new();
        for br in brs {
            let mut out = Vec::new();
            self.cond_depth += 1;
            let r = self.ins_list(br, &mut out);
            self.cond_depth -= 1;
            r?;
            let f = self.frame();
            let mut m: Vec<(String, Slot)> = Vec::new();
            for name in &f.undo[mark..] {
                if !m.iter().any(|(n, _)| n == name) {
                    let slot = *f.scope[name].last().expect("bound name");
                    m.push((name.clone(), slot));
                }
            }
            self.undo_to(mark);
            outs.push(out);
            added.push(m);
        }
        let mut names: Vec<String> = Vec::new();
        for m in &added {
            for (n, _) in m {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        for name in names {
            let j = self.alloc();
            for (k, out) in outs.iter_mut().enumerate() {
                let from = match added[k].iter().find(|(n, _)| *n == name) {
                    Some((_, s)) => VarRef::Local { depth: 0, slot: *s },
                    None => self.resolve(&name),
                };
                out.push(Instr::Alias { to: j, from });
            }
            self.bind(&name, j);
        }
        Ok(outs)
    }

    fn vcond(&mut self, v: &ast::VariantCond) -> VCond {
        match v {
            ast::VariantCond::Variant(s, sp) => {
                let c = variant::canonical(s);
                if c.is_none() {
                    let (file, line) = self.position(*sp);
                    self.warnings.push(format!(
                        "{file}:{line}: non-existent variant \"{s}\", assumed unset"
                    ));
                }
                VCond::Var(c)
            }
            ast::VariantCond::Not(a) => VCond::Not(Box::new(self.vcond(a))),
            ast::VariantCond::And(a, b) => {
                VCond::And(Box::new(self.vcond(a)), Box::new(self.vcond(b)))
            }
            ast::VariantCond::Or(a, b) => {
                VCond::Or(Box::new(self.vcond(a)), Box::new(self.vcond(b)))
            }
        }
    }

    fn position(&self, sp: Sp) -> (String, u32) {
        let f = &self.files[sp.file as usize];
        let line = f.text[..(sp.start as usize).min(f.text.len())]
            .matches('\n')
            .count() as u32
            + 1;
        (f.name.clone(), line)
    }

    fn ins(&mut self, ins: &Ins, out: &mut Vec<Instr>) -> R<()> {
        match ins {
            Ins::Show | Ins::Events => {}
            Ins::Let(bds) => {
                let mut binds = self.let_binds(bds)?;
                if let [b] = bds.as_slice() {
                    self.recognise_native(b, &mut binds[0].expr);
                }
                out.push(Instr::Let {
                    binds,
                    stable: false,
                });
            }
            Ins::Rec(sp, bds, test) => {
                if test.is_none() {
                    if let Some((x, bsp, e)) = as_plus(bds) {
                        let expr = self.exp(&e)?;
                        let slot = self.alloc();
                        self.bind(&x, slot);
                        out.push(Instr::Let {
                            binds: vec![Bind {
                                pat: Pat::One(Some(slot)),
                                expr,
                                sp: bsp,
                            }],
                            stable: false,
                        });
                        return Ok(());
                    }
                }
                let rec = self.rec(*sp, bds)?;
                let test = match test {
                    Some(t) => Some(Box::new(self.test(t, ast::TestType::Check)?)),
                    None => None,
                };
                out.push(Instr::Rec {
                    rec: Box::new(rec),
                    test,
                    stable: false,
                });
            }
            Ins::Test(t, ty) => {
                let mut t = self.test(t, *ty)?;
                let sp = t.expr.sp;
                let placeholder = Expr {
                    kind: ExprKind::EmptyRel,
                    sp,
                };
                let expr = std::mem::replace(&mut t.expr, placeholder);
                t.expr = self.hoistable(expr, out);
                out.push(Instr::Test(Box::new(t)));
            }
            Ins::Match(sp, e, cls, default) => {
                let scrut = self.exp(e)?;
                let mut brs: Vec<&[Ins]> = cls.iter().map(|(_, b)| b.as_slice()).collect();
                if let Some(d) = default {
                    brs.push(d);
                }
                let mut outs = self.branches(&brs)?;
                let default = if default.is_some() { outs.pop() } else { None };
                let clauses = cls.iter().map(|(t, _)| t.clone()).zip(outs).collect();
                out.push(Instr::Match {
                    scrut,
                    clauses,
                    default,
                    sp: *sp,
                });
            }
            Ins::IfVariant(v, a, b) => {
                let cond = self.vcond(v);
                let mut outs = self.branches(&[a, b])?;
                let b = outs.pop().expect("else branch");
                let a = outs.pop().expect("then branch");
                out.push(Instr::IfVariant(cond, a, b));
            }
            Ins::Include(sp, fname) => {
                let cur = &self.files[sp.file as usize].path;
                let near = cur.parent().map(|d| d.join(fname));
                let path = match near {
                    Some(p) if p.is_file() => p,
                    _ => self.libdir.join(fname),
                };
                let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
                if self
                    .include_stack
                    .iter()
                    .any(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()) == key)
                {
                    return Err(self.err(
                        *sp,
                        format!(
                            "\"{fname}\" includes itself: expected an include chain without cycles"
                        ),
                        "recursive include",
                    ));
                }
                let file = match self.load_file(&path, Some(*sp)) {
                    Ok((_, f)) => f,
                    Err(e) if self.cond_depth > 0 => {
                        out.push(Instr::Fail(Box::new(e)));
                        return Ok(());
                    }
                    Err(e) => return Err(e),
                };
                self.include_stack.push(path);
                self.ins_list(&file.body, out)?;
                self.include_stack.pop();
            }
            Ins::Procedure {
                name,
                params,
                body,
                is_rec,
            } => {
                let slot = self.alloc();
                if *is_rec {
                    self.bind(name, slot);
                }
                self.frames.push(FrameCx::new(false));
                let params = self.params(params);
                let mut code = Vec::new();
                let r = self.ins_list(body, &mut code);
                let f = self.frames.pop().expect("procedure frame");
                r?;
                if !*is_rec {
                    self.bind(name, slot);
                }
                out.push(Instr::Procedure {
                    slot,
                    def: Box::new(ProcDef {
                        params,
                        frame_size: f.nslots,
                        body: code,
                    }),
                });
            }
            Ins::Call(sp, name, arg, tname) => {
                let proc = self.lookup(name, *sp);
                let arg = self.exp(arg)?;
                out.push(Instr::Call {
                    proc,
                    arg,
                    name: name.clone(),
                    tname: tname.clone(),
                    sp: *sp,
                });
            }
            Ins::Enum(name, tags) => {
                let slot = self.alloc();
                self.bind(name, slot);
                for t in tags {
                    self.tags.insert(t.clone(), name.clone());
                }
                self.enums.insert(name.clone(), tags.clone());
                let mut tags = tags.clone();
                tags.sort();
                tags.dedup();
                let tags = tags
                    .into_iter()
                    .map(|t| TagName {
                        ty: name.clone(),
                        name: t,
                    })
                    .collect();
                out.push(Instr::Enum {
                    slot,
                    name: name.clone(),
                    tags,
                });
            }
            Ins::Forall((x, _), e, body) => {
                let set = self.exp(e)?;
                self.frames.push(FrameCx::new(false));
                let s = self.alloc();
                self.bind(x, s);
                let mut code = Vec::new();
                let r = self.ins_list(body, &mut code);
                let f = self.frames.pop().expect("forall frame");
                r?;
                out.push(Instr::Forall {
                    set,
                    body: code,
                    frame_size: f.nslots,
                });
            }
            Ins::WithFrom((x, _), e) => {
                let set = self.exp(e)?;
                let set = self.hoistable(set, out);
                let reset_from = self.frame().nslots;
                let slot = self.alloc();
                self.bind(x, slot);
                out.push(Instr::WithFrom {
                    slot,
                    set,
                    reset_from,
                    reset: None,
                    name: x.clone(),
                });
            }
        }
        Ok(())
    }

    fn test(&mut self, t: &ast::AppTest, kind: ast::TestType) -> R<Test> {
        Ok(Test {
            kind,
            negated: t.negated,
            test: t.test,
            expr: self.exp(&t.exp)?,
            name: t.name.clone(),
            text: self.text(t.sp),
            sp: t.sp,
        })
    }

    fn params(&mut self, p: &ast::Pat) -> Params {
        let (ps, tuple) = match p {
            ast::Pat::Var(p0) => (vec![p0.clone()], false),
            ast::Pat::Tuple(ps) => (ps.clone(), true),
        };
        let mut slots = Vec::new();
        for p in &ps {
            slots.push(p.as_ref().map(|(x, _)| {
                let s = self.alloc();
                self.bind(x, s);
                s
            }));
        }
        Params { slots, tuple }
    }

    /// Slots for a binding's pattern, bound later by `bind_pat`.
    fn alloc_pat(&mut self, p: &ast::Pat) -> Pat {
        match p {
            ast::Pat::Var(None) => Pat::One(None),
            ast::Pat::Var(Some(_)) => Pat::One(Some(self.alloc())),
            ast::Pat::Tuple(ps) => {
                let whole = self.alloc();
                let parts = ps
                    .iter()
                    .map(|p| p.as_ref().map(|_| self.alloc()))
                    .collect();
                Pat::Tuple { whole, parts }
            }
        }
    }

    fn bind_pat(&mut self, p: &ast::Pat, slots: &Pat) {
        match (p, slots) {
            (ast::Pat::Var(Some((x, _))), Pat::One(Some(s))) => self.bind(x, *s),
            (ast::Pat::Tuple(ps), Pat::Tuple { parts, .. }) => {
                for (p, s) in ps.iter().zip(parts) {
                    if let (Some((x, _)), Some(s)) = (p, s) {
                        self.bind(x, *s);
                    }
                }
            }
            _ => {}
        }
    }

    /// A non-recursive `let`: expressions see the enclosing scope; on a repeated name the
    /// first binding wins, as in herd.
    fn let_binds(&mut self, bds: &[ast::Binding]) -> R<Vec<Bind>> {
        let mut exprs = Vec::new();
        for b in bds {
            exprs.push(self.exp(&b.exp)?);
        }
        let pats: Vec<Pat> = bds.iter().map(|b| self.alloc_pat(&b.pat)).collect();
        for (b, p) in bds.iter().zip(&pats).rev() {
            self.bind_pat(&b.pat, p);
        }
        Ok(pats
            .into_iter()
            .zip(exprs)
            .zip(bds)
            .map(|((pat, expr), b)| Bind {
                pat,
                expr,
                sp: b.sp,
            })
            .collect())
    }

    fn rec(&mut self, sp: Sp, bds: &[ast::Binding]) -> R<Rec> {
        let pats: Vec<Pat> = bds.iter().map(|b| self.alloc_pat(&b.pat)).collect();
        for (b, p) in bds.iter().zip(&pats) {
            self.bind_pat(&b.pat, p);
        }
        let mut funs = Vec::new();
        let mut vals = Vec::new();
        for (b, pat) in bds.iter().zip(pats) {
            match (&b.exp, &pat) {
                (Exp::Fun(_, p, body, name), Pat::One(Some(slot))) => {
                    let def = self.fun(p, body, name, true)?;
                    funs.push((*slot, def));
                }
                (Exp::Fun(..), _) => {
                    return Err(self.err(
                        b.sp,
                        "binding mismatch: expected a single name for a recursive function",
                        "function bound to a pattern",
                    ))
                }
                _ => vals.push(Bind {
                    pat,
                    expr: self.exp(&b.exp)?,
                    sp: b.sp,
                }),
            }
        }
        Ok(Rec { funs, vals, sp })
    }

    fn fun(&mut self, p: &ast::Pat, body: &Exp, name: &str, is_rec: bool) -> R<FunDef> {
        self.frames.push(FrameCx::new(!is_rec));
        let params = self.params(p);
        let body = self.exp(body);
        let f = self.frames.pop().expect("function frame");
        Ok(FunDef {
            params,
            frame_size: f.nslots,
            body: body?,
            name: name.to_string(),
            ext_free: f.ext_free,
            native: None,
        })
    }

    fn bx(&mut self, e: &Exp) -> R<Box<Expr>> {
        Ok(Box::new(self.exp(e)?))
    }

    fn exp(&mut self, e: &Exp) -> R<Expr> {
        let sp = e.sp();
        let kind = match e {
            Exp::EmptyRel(_) => ExprKind::EmptyRel,
            Exp::Universe(_) => ExprKind::Unv,
            Exp::Tag(_, t) => match self.tags.get(t) {
                Some(ty) => ExprKind::Tag(TagName {
                    ty: ty.clone(),
                    name: t.clone(),
                }),
                None => ExprKind::UndefTag(t.clone()),
            },
            Exp::Var(_, x) => ExprKind::Var(self.lookup(x, sp), x.clone()),
            Exp::Op1(_, op, a) => ExprKind::Op1(*op, self.bx(a)?),
            Exp::Op(_, op, es) => match (op, es.as_slice()) {
                (Op2::Union, _) => ExprKind::Union(self.exps(es)?),
                (Op2::Seq, _) => ExprKind::Seq(self.exps(es)?),
                (Op2::Tuple, _) => ExprKind::Tuple(self.exps(es)?),
                (Op2::Inter, [a, Exp::Op(_, Op2::Cartesian, xy)])
                | (Op2::Inter, [Exp::Op(_, Op2::Cartesian, xy), a])
                    if xy.len() == 2 =>
                {
                    ExprKind::InterCart(self.bx(a)?, self.bx(&xy[0])?, self.bx(&xy[1])?)
                }
                (Op2::Inter, [a, Exp::Op1(_, ast::Op1::Comp, b)])
                | (Op2::Inter, [Exp::Op1(_, ast::Op1::Comp, b), a]) => {
                    ExprKind::Diff(self.bx(a)?, self.bx(b)?)
                }
                (Op2::Inter, [a, b]) => ExprKind::Inter(self.bx(a)?, self.bx(b)?),
                (Op2::Diff, [a, b]) => ExprKind::Diff(self.bx(a)?, self.bx(b)?),
                (Op2::Cartesian, [a, b]) => ExprKind::Cartesian(self.bx(a)?, self.bx(b)?),
                (Op2::Add, [a, b]) => ExprKind::Add(self.bx(a)?, self.bx(b)?),
                _ => {
                    return Err(self.err(
                        sp,
                        "malformed operator application: expected two operands",
                        "here",
                    ))
                }
            },
            Exp::App(_, f, a) => ExprKind::App(self.bx(f)?, self.bx(a)?),
            Exp::Bind(_, bds, body) => {
                let mark = self.mark();
                let binds = self.let_binds(bds);
                let body = binds.and_then(|b| Ok((b, self.bx(body)?)));
                self.undo_to(mark);
                let (binds, body) = body?;
                ExprKind::Let(binds, body)
            }
            Exp::BindRec(rsp, bds, body) => {
                let mark = self.mark();
                let r = self
                    .rec(*rsp, bds)
                    .and_then(|rec| Ok((rec, self.bx(body)?)));
                self.undo_to(mark);
                let (rec, body) = r?;
                ExprKind::LetRec(Box::new(rec), body)
            }
            Exp::Fun(_, p, body, name) => ExprKind::Fun(Box::new(self.fun(p, body, name, false)?)),
            Exp::ExplicitSet(_, es) => ExprKind::ExplicitSet(self.exps(es)?),
            Exp::Match(_, s, cls, d) => {
                let s = self.bx(s)?;
                let mut out = Vec::new();
                for (t, e) in cls {
                    out.push((t.clone(), self.exp(e)?));
                }
                let d = match d {
                    Some(d) => Some(self.bx(d)?),
                    None => None,
                };
                ExprKind::Match(s, out, d)
            }
            Exp::MatchSet(_, s, em, cl) => {
                let s = self.bx(s)?;
                let em = self.bx(em)?;
                let mark = self.mark();
                let slot_of = |c: &mut Compiler, p: &ast::Pat0| {
                    p.as_ref().map(|(x, _)| {
                        let s = c.alloc();
                        c.bind(x, s);
                        s
                    })
                };
                let r = match cl {
                    ast::SetClause::EltRem(a, b, body) => {
                        let a = slot_of(self, a);
                        let b = slot_of(self, b);
                        self.bx(body).map(|body| SetClause::EltRem(a, b, body))
                    }
                    ast::SetClause::PreEltPost(a, b, c, body) => {
                        let a = slot_of(self, a);
                        let b = slot_of(self, b);
                        let c = slot_of(self, c);
                        self.bx(body)
                            .map(|body| SetClause::PreEltPost(a, b, c, body))
                    }
                };
                self.undo_to(mark);
                ExprKind::MatchSet(s, em, r?)
            }
            Exp::Try(_, a, b) => ExprKind::Try(self.bx(a)?, self.bx(b)?),
            Exp::If(_, c, a, b) => {
                let c = match &**c {
                    ast::Cond::Eq(p, q) => Cond::Eq(self.exp(p)?, self.exp(q)?),
                    ast::Cond::Subset(p, q) => Cond::Subset(self.exp(p)?, self.exp(q)?),
                    ast::Cond::In(p, q) => Cond::In(self.exp(p)?, self.exp(q)?),
                    ast::Cond::Variant(v) => Cond::Variant(self.vcond(v)),
                };
                ExprKind::If(Box::new(c), self.bx(a)?, self.bx(b)?)
            }
        };
        Ok(Expr { kind, sp })
    }

    fn exps(&mut self, es: &[Exp]) -> R<Vec<Expr>> {
        es.iter().map(|e| self.exp(e)).collect()
    }
}

/// Whether `e` reads a top-level slot marked in `dep`. `fdepth` is how many function
/// frames `e` is nested in, so that `Local { depth: fdepth, .. }` is a top-level slot.
fn reads_dep(e: &Expr, dep: &[bool], fdepth: u32) -> bool {
    let r = |x: &Expr| reads_dep(x, dep, fdepth);
    let fun = |d: &FunDef| reads_dep(&d.body, dep, fdepth + 1);
    match &e.kind {
        ExprKind::EmptyRel | ExprKind::Unv | ExprKind::Tag(_) | ExprKind::UndefTag(_) => false,
        ExprKind::Var(VarRef::Local { depth, slot }, _) => {
            *depth == fdepth && dep.get(*slot as usize).copied().unwrap_or(true)
        }
        ExprKind::Var(VarRef::Ext(_), _) => false,
        ExprKind::Op1(_, a) => r(a),
        ExprKind::Union(es)
        | ExprKind::Seq(es)
        | ExprKind::Tuple(es)
        | ExprKind::ExplicitSet(es) => es.iter().any(r),
        ExprKind::Inter(a, b)
        | ExprKind::Diff(a, b)
        | ExprKind::Cartesian(a, b)
        | ExprKind::Add(a, b)
        | ExprKind::App(a, b)
        | ExprKind::Try(a, b) => r(a) || r(b),
        ExprKind::InterCart(a, b, c) => r(a) || r(b) || r(c),
        ExprKind::Let(bds, body) => bds.iter().any(|b| r(&b.expr)) || r(body),
        ExprKind::LetRec(rec, body) => rec_reads_dep(rec, dep, fdepth) || r(body),
        ExprKind::Fun(d) => fun(d),
        ExprKind::Match(s, cls, d) => {
            r(s) || cls.iter().any(|(_, e)| r(e)) || d.as_deref().is_some_and(r)
        }
        ExprKind::MatchSet(s, em, cl) => {
            r(s) || r(em)
                || match cl {
                    SetClause::EltRem(_, _, b) | SetClause::PreEltPost(_, _, _, b) => r(b),
                }
        }
        ExprKind::If(c, a, b) => {
            (match &**c {
                Cond::Eq(x, y) | Cond::Subset(x, y) | Cond::In(x, y) => r(x) || r(y),
                Cond::Variant(_) => false,
            }) || r(a)
                || r(b)
        }
    }
}

fn rec_reads_dep(rec: &Rec, dep: &[bool], fdepth: u32) -> bool {
    rec.funs
        .iter()
        .any(|(_, d)| reads_dep(&d.body, dep, fdepth + 1))
        || rec.vals.iter().any(|b| reads_dep(&b.expr, dep, fdepth))
}

fn pat_slots(p: &Pat) -> Vec<Slot> {
    match p {
        Pat::One(s) => s.iter().copied().collect(),
        Pat::Tuple { whole, parts } => std::iter::once(*whole)
            .chain(parts.iter().flatten().copied())
            .collect(),
    }
}

/// Marks which top-level bindings do not depend on a `with` variable (`stable`), and
/// which slots each top-level `with` must clear. `tainted`: inside a `match` whose choice
/// may differ from branch to branch.
fn mark_stable(code: &mut [Instr], dep: &mut Vec<bool>, tainted: bool) {
    for i in code.iter_mut() {
        match i {
            Instr::Let { binds, stable } => {
                let d = tainted || binds.iter().any(|b| reads_dep(&b.expr, dep, 0));
                for b in binds.iter() {
                    for s in pat_slots(&b.pat) {
                        dep[s as usize] = d;
                    }
                }
                *stable = !d;
            }
            Instr::Rec { rec, test, stable } => {
                let d = tainted || test.is_some() || rec_reads_dep(rec, dep, 0);
                for (s, _) in &rec.funs {
                    dep[*s as usize] = d;
                }
                for b in &rec.vals {
                    for s in pat_slots(&b.pat) {
                        dep[s as usize] = d;
                    }
                }
                *stable = !d;
            }
            Instr::Alias { to, from } => {
                // Every branch of the conditional writes `to`: it depends on a `with` if
                // any of them does.
                dep[*to as usize] |= tainted
                    || match from {
                        VarRef::Local { slot, .. } => dep[*slot as usize],
                        VarRef::Ext(_) => false,
                    };
            }
            Instr::Procedure { slot, .. } | Instr::Enum { slot, .. } => {
                dep[*slot as usize] = tainted;
            }
            Instr::WithFrom { slot, .. } => {
                dep[*slot as usize] = true;
            }
            Instr::IfVariant(_, a, b) => {
                mark_stable(a, dep, tainted);
                mark_stable(b, dep, tainted);
            }
            Instr::Match {
                scrut,
                clauses,
                default,
                ..
            } => {
                let t = tainted || reads_dep(scrut, dep, 0);
                for (_, b) in clauses.iter_mut() {
                    mark_stable(b, dep, t);
                }
                if let Some(d) = default {
                    mark_stable(d, dep, t);
                }
            }
            Instr::Test(_) | Instr::Call { .. } | Instr::Forall { .. } | Instr::Fail(_) => {}
        }
    }
}

fn fill_resets(code: &mut [Instr], dep: &[bool]) {
    for i in code.iter_mut() {
        match i {
            Instr::WithFrom {
                reset_from, reset, ..
            } => {
                *reset = Some(
                    (*reset_from..dep.len() as Slot)
                        .filter(|s| dep[*s as usize])
                        .collect(),
                );
            }
            Instr::IfVariant(_, a, b) => {
                fill_resets(a, dep);
                fill_resets(b, dep);
            }
            Instr::Match {
                clauses, default, ..
            } => {
                for (_, b) in clauses.iter_mut() {
                    fill_resets(b, dep);
                }
                if let Some(d) = default {
                    fill_resets(d, dep);
                }
            }
            _ => {}
        }
    }
}
