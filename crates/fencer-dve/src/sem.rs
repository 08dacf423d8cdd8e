//! From a syntax tree to an executable model: constants evaluated, templates instantiated,
//! names resolved, every variable, process state and channel buffer given a place in one
//! packed state vector. Semantic errors (unknown names, wrong arity, a constant that is not
//! constant) are diagnostics here, before any exploration.

use crate::ast::{self, BinOp, Expr, Ident, Init, Item, Span, Type, UnOp};
use crate::code::Code;
use fencer_text::Diagnostic;
use std::collections::HashMap;
use std::sync::Arc;

/// A variable's place in the state vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Var {
    pub offset: u32,
    pub ty: Type,
    /// Array length; `None` for a scalar.
    pub len: Option<u32>,
}

impl Type {
    pub fn width(self) -> u32 {
        match self {
            Type::Byte => 1,
            Type::Int => 2,
        }
    }
    pub fn fits(self, v: i32) -> bool {
        match self {
            Type::Byte => (0..=255).contains(&v),
            Type::Int => (-32768..=32767).contains(&v),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Type::Byte => "byte",
            Type::Int => "int",
        }
    }
}

/// A compiled expression: names resolved to places.
#[derive(Clone, Debug)]
pub enum CExpr {
    Const(i32),
    Load(Var),
    /// An array element; out-of-range indices are run-time errors at `span`.
    Index(Var, Box<CExpr>, Span),
    /// Process `proc` is in control state `state`.
    InState {
        proc: usize,
        state: u32,
    },
    Unary(UnOp, Box<CExpr>),
    Binary(BinOp, Box<CExpr>, Box<CExpr>, Span),
    /// `x op c` and `x op y` for scalar variables, with an operator that cannot fail
    /// (made by `fuse`).
    VarConst(BinOp, Var, i32),
    VarVar(BinOp, Var, Var),
}

/// `a op b`, as one node when it is a variable against a constant or another variable
/// with an operator that neither fails nor skips its right side: most guards and
/// right-hand sides, evaluated without visiting three nodes.
fn fuse(op: BinOp, a: CExpr, b: CExpr, span: Span) -> CExpr {
    let total = !matches!(
        op,
        BinOp::Div | BinOp::Rem | BinOp::And | BinOp::Or | BinOp::Imply
    );
    match (a, b) {
        (CExpr::Load(x), CExpr::Const(c)) if total => CExpr::VarConst(op, x, c),
        (CExpr::Load(x), CExpr::Load(y)) if total => CExpr::VarVar(op, x, y),
        (a, b) => CExpr::Binary(op, Box::new(a), Box::new(b), span),
    }
}

/// Whether `k` indexes array `v`.
fn in_range(v: Var, k: i32) -> bool {
    (0..v.len.unwrap_or(1) as i32).contains(&k)
}

/// Element `k` of array `v` as a scalar variable of its own.
fn at(v: Var, k: i32) -> Var {
    Var {
        offset: v.offset + k as u32 * v.ty.width(),
        ty: v.ty,
        len: None,
    }
}

/// `v[i]`: at a constant index in range, the element is read like a scalar (one node,
/// which `fuse` can join with a comparison: the store-buffer models' flags and slots are
/// array elements at constant indices); otherwise an indexed read checked at run time.
fn element(v: Var, i: CExpr, span: Span) -> CExpr {
    match i {
        CExpr::Const(k) if in_range(v, k) => CExpr::Load(at(v, k)),
        i => CExpr::Index(v, Box::new(i), span),
    }
}

/// Where an assignment stores.
#[derive(Clone, Debug)]
pub enum Place {
    Scalar(Var),
    Element(Var, CExpr, Span),
}

#[derive(Clone, Debug)]
pub enum SyncOp {
    Send(Vec<CExpr>),
    Recv(Vec<Place>),
}

#[derive(Clone, Debug)]
pub struct Transition {
    pub from: u32,
    pub to: u32,
    pub guard: Option<CExpr>,
    pub sync: Option<(usize, SyncOp)>,
    pub effect: Vec<(Place, CExpr)>,
    /// `from -> to` as written, for counterexamples.
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub name: String,
    pub states: Vec<String>,
    /// Where its control state lives (one byte; two when it has more than 256 states).
    pub state_var: Var,
    pub init: u32,
    pub accept: Vec<bool>,
    pub commit: Vec<bool>,
    pub asserts: Vec<(u32, CExpr, String)>,
    pub trans: Vec<Transition>,
    /// Its local variables, by name (for `P->x` and counterexamples).
    pub locals: Vec<(String, Var)>,
    pub property: bool,
    /// Per control state, the transitions that leave it (indices into `trans`), so that
    /// a state's successors do not scan every transition; `index` builds it.
    pub outgoing: Vec<Vec<u32>>,
}

impl Process {
    /// The transitions that leave control state `q`.
    #[inline]
    pub fn leaving(&self, q: u32) -> &[u32] {
        self.outgoing.get(q as usize).map_or(&[], Vec::as_slice)
    }

    /// Builds `outgoing` from `trans`: call after changing `trans`.
    pub fn index(&mut self) {
        self.outgoing = vec![Vec::new(); self.states.len()];
        for (t, tr) in self.trans.iter().enumerate() {
            if let Some(o) = self.outgoing.get_mut(tr.from as usize) {
                o.push(t as u32);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Channel {
    pub name: String,
    pub items: Vec<Type>,
    /// Buffer size; 0 is a rendezvous.
    pub size: u32,
    /// Buffered: the fill count's place (one byte), then `size` messages.
    pub count: Option<Var>,
    pub msg_width: u32,
}

#[derive(Clone, Debug)]
pub struct System {
    pub width: u32,
    pub initial: Vec<u8>,
    pub globals: Vec<(String, Var)>,
    pub processes: Vec<Process>,
    pub channels: Vec<Channel>,
    /// The property process (a Büchi automaton), if `system ... property P`.
    pub property: Option<usize>,
    pub synchronous: bool,
    /// Named expressions (DiVinE 3's `expression`), without parameters.
    pub definitions: HashMap<String, CExpr>,
    /// LTL properties written in the model (`property ltl NAME "formula"`).
    pub ltl: Vec<(String, String)>,
    /// Names in scope at the top level, for expressions given later (`--reach`).
    scope: Scope,
    /// Set in the sink state a run-time error leads to in a product with a property
    /// process: the system cannot move there, and the property moves alone (as DIVINE
    /// treats an error state), so a property can be violated by an error.
    pub error_var: Var,
    /// The guards and effects compiled (`code.rs`), for `successors`: built by `compile`
    /// and `with_property`; whoever changes `processes` afterwards calls `recompile`.
    pub(crate) code: Arc<Code>,
}

#[derive(Clone, Debug, Default)]
struct Scope {
    consts: HashMap<String, i32>,
    globals: HashMap<String, Var>,
    proc_index: HashMap<String, usize>,
    locals_of: Vec<HashMap<String, Var>>,
    consts_of: Vec<HashMap<String, i32>>,
}

impl System {
    /// This model with an LTL property: the Büchi automaton `b` (of the formula's
    /// negation) becomes its property process, reading the atoms `atoms` (compiled
    /// expressions, by the automaton's atom indices). Any property process the model had
    /// is replaced.
    pub fn with_property(&self, b: &fencer_ltl::Buchi, atoms: &[CExpr]) -> System {
        let mut sys = self.clone();
        if let Some(p) = sys.property.take() {
            sys.processes[p].property = false;
            // An old property process stays, but never moves (it is not part of the model).
            sys.processes[p].trans.clear();
            sys.processes[p].index();
        }
        let ty = if b.states <= 256 {
            Type::Byte
        } else {
            Type::Int
        };
        let var = Var {
            offset: sys.width,
            ty,
            len: None,
        };
        sys.width += ty.width();
        sys.initial.resize(sys.width as usize, 0);
        let lit = |&(a, pos): &fencer_ltl::Literal| {
            let e = atoms[a].clone();
            if pos {
                e
            } else {
                CExpr::Unary(UnOp::Not, Box::new(e))
            }
        };
        let trans = b
            .transitions
            .iter()
            .map(|t| Transition {
                from: t.from as u32,
                to: t.to as u32,
                guard: t.guard.iter().map(lit).reduce(|x, y| {
                    CExpr::Binary(BinOp::And, Box::new(x), Box::new(y), Span::default())
                }),
                sync: None,
                effect: Vec::new(),
                text: format!("q{} -> q{}", t.from, t.to),
                span: Span::default(),
            })
            .collect();
        sys.processes.push(Process {
            name: "LTL".into(),
            states: (0..b.states).map(|q| format!("q{q}")).collect(),
            state_var: var,
            init: 0,
            accept: b.accepting.clone(),
            commit: vec![false; b.states],
            asserts: Vec::new(),
            trans,
            locals: Vec::new(),
            property: true,
            outgoing: Vec::new(),
        });
        sys.processes.last_mut().expect("pushed").index();
        sys.property = Some(sys.processes.len() - 1);
        sys.recompile();
        sys
    }

    /// Compiles the guards and effects again (after a change to `processes`).
    pub fn recompile(&mut self) {
        self.code = Arc::new(Code::new(self));
    }

    /// Compiles an expression over the model's globals, `P.state` and `P->var` (`--reach`,
    /// atomic propositions). `file` and `src` are the expression's own, for diagnostics.
    pub fn expression(&self, file: &str, src: &str) -> R<CExpr> {
        let e = crate::parse::parse_expr(file, src)?;
        let none = HashMap::new();
        let cx = Ctx {
            file,
            src,
            width: self.width,
            init: Vec::new(),
            consts: self.scope.consts.clone(),
            globals: self.scope.globals.clone(),
            global_list: Vec::new(),
            chans: HashMap::new(),
            channels: Vec::new(),
            procs: self.processes.clone(),
            proc_index: self.scope.proc_index.clone(),
            overrides: &none,
        };
        let env = Env {
            locals_of: &self.scope.locals_of,
            consts_of: &self.scope.consts_of,
        };
        cx.expr(&e, None, &env, &self.definitions)
    }
}

struct Ctx<'a> {
    file: &'a str,
    src: &'a str,
    width: u32,
    init: Vec<(Var, Vec<i32>)>,
    consts: HashMap<String, i32>,
    globals: HashMap<String, Var>,
    global_list: Vec<(String, Var)>,
    chans: HashMap<String, usize>,
    channels: Vec<Channel>,
    procs: Vec<Process>,
    proc_index: HashMap<String, usize>,
    overrides: &'a HashMap<String, i32>,
}

type R<T> = Result<T, Diagnostic>;

impl Ctx<'_> {
    fn err(&self, span: Span, msg: impl Into<String>, label: &str) -> Diagnostic {
        Diagnostic::new(self.file, self.src, span, msg, label)
    }

    fn alloc(&mut self, ty: Type, len: Option<u32>) -> Var {
        let v = Var {
            offset: self.width,
            ty,
            len,
        };
        self.width += ty.width() * len.unwrap_or(1);
        v
    }

    /// A constant expression's value (constants, inputs and template parameters only).
    fn constant(&self, e: &Expr, local: &HashMap<String, i32>) -> R<i32> {
        let bad = |span: Span, what: &str| {
            self.err(
                span,
                format!("{what} in a constant expression"),
                "must be known before exploring",
            )
        };
        Ok(match e {
            Expr::Num(n, _) => *n as i32,
            Expr::Bool(b, _) => *b as i32,
            Expr::Var(id, None) => {
                match local.get(&id.name).or_else(|| self.consts.get(&id.name)) {
                    Some(v) => *v,
                    None => return Err(bad(id.span, &format!("`{}` is not a constant", id.name))),
                }
            }
            Expr::Unary(op, a, _) => {
                let a = self.constant(a, local)?;
                match op {
                    UnOp::Neg => a.wrapping_neg(),
                    UnOp::Not => (a == 0) as i32,
                    UnOp::BitNot => !a,
                }
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.constant(a, local)?, self.constant(b, local)?);
                binop(*op, x, y).ok_or_else(|| {
                    self.err(
                        e.span(),
                        "division by zero in a constant expression",
                        "divides by zero",
                    )
                })?
            }
            other => return Err(bad(other.span(), "a variable or process state")),
        })
    }

    fn declare(
        &mut self,
        d: &ast::VarDecl,
        local: &mut HashMap<String, i32>,
        scope: Option<&mut Vec<(String, Var)>>,
    ) -> R<()> {
        let name = d.name.name.clone();
        if d.konst || d.input {
            if d.size.is_some() {
                return Err(self.err(
                    d.name.span,
                    "a constant array is not supported",
                    "make it a variable",
                ));
            }
            let mut v = match &d.init {
                Some(Init::Scalar(e)) => self.constant(e, local)?,
                Some(Init::List(_, s)) => {
                    return Err(self.err(*s, "a constant needs one value", "not a list"))
                }
                None => 0,
            };
            if d.input {
                if let Some(o) = self.overrides.get(&name) {
                    v = *o;
                }
            }
            if !d.ty.fits(v) {
                return Err(self.err(
                    d.name.span,
                    format!("`{name}` = {v} does not fit in a {}", d.ty.name()),
                    "out of range",
                ));
            }
            match scope {
                Some(_) => local.insert(name, v),
                None => self.consts.insert(name, v),
            };
            return Ok(());
        }
        let len = match &d.size {
            Some(e) => {
                let n = self.constant(e, local)?;
                if !(1..=65536).contains(&n) {
                    return Err(self.err(
                        e.span(),
                        format!("array size {n} is not between 1 and 65536"),
                        "bad size",
                    ));
                }
                Some(n as u32)
            }
            None => None,
        };
        let mut values = match &d.init {
            None => vec![0],
            Some(Init::Scalar(e)) => vec![self.constant(e, local)?],
            // BEEM's anderson instances give one value more than the array holds: the
            // extra values are ignored, a short list is padded with zeros.
            Some(Init::List(es, _)) => es
                .iter()
                .map(|e| self.constant(e, local))
                .collect::<R<Vec<_>>>()?,
        };
        let n = len.unwrap_or(1) as usize;
        if len.is_some() && values.len() == 1 && matches!(d.init, Some(Init::Scalar(_))) {
            values = vec![values[0]; n];
        }
        values.resize(n.max(values.len()), 0);
        values.truncate(n);
        if let Some(bad) = values.iter().find(|v| !d.ty.fits(**v)) {
            return Err(self.err(
                d.name.span,
                format!("initial value {bad} does not fit in a {}", d.ty.name()),
                "out of range",
            ));
        }
        let var = self.alloc(d.ty, len);
        self.init.push((var, values));
        match scope {
            Some(s) => s.push((name, var)),
            None => {
                if self.globals.insert(name.clone(), var).is_some() {
                    return Err(self.err(
                        d.name.span,
                        format!("`{name}` is declared twice"),
                        "declared again here",
                    ));
                }
                self.global_list.push((name, var));
            }
        }
        Ok(())
    }

    fn channel(&mut self, c: &ast::ChanDecl, local: &HashMap<String, i32>, prefix: &str) -> R<()> {
        let size = match &c.size {
            Some(e) => {
                let n = self.constant(e, local)?;
                if !(0..=255).contains(&n) {
                    return Err(self.err(
                        e.span(),
                        format!("buffer size {n} is not between 0 and 255"),
                        "bad size",
                    ));
                }
                n as u32
            }
            None => 0,
        };
        let msg_width: u32 = c.types.iter().map(|t| t.width()).sum();
        let count = (size > 0).then(|| {
            let v = self.alloc(Type::Byte, None);
            self.width += msg_width * size;
            v
        });
        let name = format!("{prefix}{}", c.name.name);
        if self
            .chans
            .insert(name.clone(), self.channels.len())
            .is_some()
        {
            return Err(self.err(
                c.name.span,
                format!("channel `{}` is declared twice", c.name.name),
                "declared again here",
            ));
        }
        self.channels.push(Channel {
            name,
            items: c.types.clone(),
            size,
            count,
            msg_width,
        });
        Ok(())
    }
}

fn binop(op: BinOp, x: i32, y: i32) -> Option<i32> {
    binop_inline(op, x, y)
}

/// `binop`, inlined where the operator is a constant (`code.rs`'s closures): one
/// definition of the operators' meaning for both evaluators.
#[inline(always)]
pub(crate) fn binop_inline(op: BinOp, x: i32, y: i32) -> Option<i32> {
    Some(match op {
        BinOp::Imply => (x == 0 || y != 0) as i32,
        BinOp::Or => (x != 0 || y != 0) as i32,
        BinOp::And => (x != 0 && y != 0) as i32,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::BitAnd => x & y,
        BinOp::Eq => (x == y) as i32,
        BinOp::Ne => (x != y) as i32,
        BinOp::Lt => (x < y) as i32,
        BinOp::Le => (x <= y) as i32,
        BinOp::Gt => (x > y) as i32,
        BinOp::Ge => (x >= y) as i32,
        BinOp::Shl => x.wrapping_shl(y as u32),
        BinOp::Shr => x.wrapping_shr(y as u32),
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => x.checked_div(y)?,
        BinOp::Rem => x.checked_rem(y)?,
    })
}

pub(crate) fn apply_binop(op: BinOp, x: i32, y: i32) -> Option<i32> {
    binop(op, x, y)
}

/// A template instance's name: `a(1)`.
fn instance_name(name: &str, args: &[i32]) -> String {
    let a: Vec<String> = args.iter().map(|v| v.to_string()).collect();
    format!("{name}({})", a.join(","))
}

/// A process to build: its declaration and its parameters' values.
struct Pending<'m> {
    decl: &'m ast::Process,
    name: String,
    params: HashMap<String, i32>,
}

/// Compiles a parsed model. `overrides` sets `input` constants (`-D name=value`).
pub fn compile(
    file: &str,
    src: &str,
    m: &ast::Model,
    overrides: &HashMap<String, i32>,
) -> R<System> {
    let mut cx = Ctx {
        file,
        src,
        width: 0,
        init: Vec::new(),
        consts: HashMap::new(),
        globals: HashMap::new(),
        global_list: Vec::new(),
        chans: HashMap::new(),
        channels: Vec::new(),
        procs: Vec::new(),
        proc_index: HashMap::new(),
        overrides,
    };
    let mut templates: HashMap<String, &ast::Process> = HashMap::new();
    let mut pending: Vec<Pending> = Vec::new();
    let mut definitions_ast = Vec::new();
    let mut ltl = Vec::new();
    // Items in order; loops expanded with their variable as a constant.
    let mut work: Vec<(&Item, HashMap<String, i32>)> =
        m.items.iter().rev().map(|i| (i, HashMap::new())).collect();
    while let Some((item, env)) = work.pop() {
        match item {
            Item::Var(d) => {
                let mut local = env.clone();
                cx.declare(d, &mut local, None)?;
            }
            Item::Chan(c) => cx.channel(c, &env, "")?,
            Item::Process(p) if p.params.is_some() => {
                templates.insert(p.name.name.clone(), p);
            }
            Item::Process(p) => pending.push(Pending {
                decl: p,
                name: p.name.name.clone(),
                params: HashMap::new(),
            }),
            Item::Instance(i) => {
                let Some(t) = templates.get(&i.template.name) else {
                    return Err(cx.err(
                        i.template.span,
                        format!("no process template `{}`", i.template.name),
                        "declare `process NAME(params) { ... }` first",
                    ));
                };
                let ps = t.params.as_ref().expect("a template");
                if ps.len() != i.args.len() {
                    return Err(cx.err(
                        i.span,
                        format!(
                            "`{}` takes {} arguments, given {}",
                            i.template.name,
                            ps.len(),
                            i.args.len()
                        ),
                        "wrong number of arguments",
                    ));
                }
                let args = i
                    .args
                    .iter()
                    .map(|a| cx.constant(a, &env))
                    .collect::<R<Vec<_>>>()?;
                let params = ps
                    .iter()
                    .map(|(_, n)| n.name.clone())
                    .zip(args.iter().copied())
                    .collect();
                // An instance is named by its `key` parameters (all of them when none is
                // marked): `a(1)` for `process a(key i, limit)` instantiated as `a(1, 3)`.
                let is_key = |q: &Option<Ident>| q.as_ref().is_some_and(|q| q.name == "key");
                let keyed = ps.iter().any(|(q, _)| is_key(q));
                let key: Vec<i32> = ps
                    .iter()
                    .zip(&args)
                    .filter(|((q, _), _)| !keyed || is_key(q))
                    .map(|(_, v)| *v)
                    .collect();
                pending.push(Pending {
                    decl: t,
                    name: instance_name(&i.template.name, &key),
                    params,
                });
            }
            Item::For(l) => {
                let (a, b) = (cx.constant(&l.from, &env)?, cx.constant(&l.to, &env)?);
                if b.saturating_sub(a) > 10_000 {
                    return Err(cx.err(
                        l.var.span,
                        "a loop of more than 10000 instances",
                        "too many",
                    ));
                }
                for x in (a..=b).rev() {
                    for it in l.body.iter().rev() {
                        let mut e = env.clone();
                        e.insert(l.var.name.clone(), x);
                        work.push((it, e));
                    }
                }
            }
            Item::Definition(d) => definitions_ast.push(d),
            Item::Ltl(p) => ltl.push((p.name.name.clone(), p.formula.clone())),
        }
    }
    // First every process's places, so that any process can name any other.
    let mut locals_of: Vec<HashMap<String, Var>> = Vec::new();
    let mut consts_of: Vec<HashMap<String, i32>> = Vec::new();
    for p in &pending {
        if cx
            .proc_index
            .insert(p.name.clone(), cx.procs.len())
            .is_some()
        {
            return Err(cx.err(
                p.decl.name.span,
                format!("process `{}` is declared twice", p.name),
                "declared again here",
            ));
        }
        let d = p.decl;
        if d.states.is_empty() {
            return Err(cx.err(
                d.name.span,
                format!("process `{}` has no states", p.name),
                "add `state ...;`",
            ));
        }
        let states: Vec<String> = d.states.iter().map(|s| s.name.clone()).collect();
        let state_ty = if states.len() <= 256 {
            Type::Byte
        } else {
            Type::Int
        };
        let state_var = cx.alloc(state_ty, None);
        let idx = |id: &Ident, cx: &Ctx| -> R<u32> {
            states
                .iter()
                .position(|s| *s == id.name)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    cx.err(
                        id.span,
                        format!("`{}` is not a state of `{}`", id.name, p.name),
                        "unknown state",
                    )
                })
        };
        let init = match &d.init {
            Some(i) => idx(i, &cx)?,
            None => {
                return Err(cx.err(
                    d.name.span,
                    format!("process `{}` has no `init` state", p.name),
                    "add `init STATE;`",
                ))
            }
        };
        let mut accept = vec![false; states.len()];
        for a in &d.accept {
            accept[idx(a, &cx)? as usize] = true;
        }
        let mut commit = vec![false; states.len()];
        for c in &d.commit {
            commit[idx(c, &cx)? as usize] = true;
        }
        cx.init.push((state_var, vec![init as i32]));
        let mut local = p.params.clone();
        let mut vars = Vec::new();
        for v in &d.vars {
            cx.declare(v, &mut local, Some(&mut vars))?;
        }
        for c in &d.channels {
            cx.channel(c, &local, &format!("{}->", p.name))?;
        }
        locals_of.push(vars.iter().cloned().collect());
        consts_of.push(local);
        cx.procs.push(Process {
            name: p.name.clone(),
            states,
            state_var,
            init,
            accept,
            commit,
            asserts: Vec::new(),
            trans: Vec::new(),
            outgoing: Vec::new(),
            locals: vars,
            property: d.property || m.property.as_ref().is_some_and(|n| n.name == p.name),
        });
    }
    if let Some(pn) = &m.property {
        if !cx.proc_index.contains_key(&pn.name) {
            return Err(cx.err(
                pn.span,
                format!("no process `{}` for the property", pn.name),
                "unknown process",
            ));
        }
    }
    let env = Env {
        locals_of: &locals_of,
        consts_of: &consts_of,
    };
    let mut definitions = HashMap::new();
    for d in definitions_ast {
        if !d.params.is_empty() {
            return Err(cx.err(
                d.name.span,
                "an expression with parameters is not supported",
                "use one without parameters",
            ));
        }
        let e = cx.expr(&d.body, None, &env, &definitions)?;
        definitions.insert(d.name.name.clone(), e);
    }
    // Then transitions and assertions, in each process's scope.
    for (pi, p) in pending.iter().enumerate() {
        let d = p.decl;
        let states = cx.procs[pi].states.clone();
        let idx = |id: &Ident, cx: &Ctx| -> R<u32> {
            states
                .iter()
                .position(|s| *s == id.name)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    cx.err(
                        id.span,
                        format!("`{}` is not a state of `{}`", id.name, p.name),
                        "unknown state",
                    )
                })
        };
        let mut asserts = Vec::new();
        for (st, e) in &d.asserts {
            let s = idx(st, &cx)?;
            let c = cx.expr(e, Some(pi), &env, &definitions)?;
            asserts.push((
                s,
                c,
                cx.src
                    .get(e.span().start..e.span().end)
                    .unwrap_or("")
                    .to_string(),
            ));
        }
        let mut trans = Vec::new();
        for t in &d.trans {
            let from = idx(&t.from, &cx)?;
            let to = idx(&t.to, &cx)?;
            let guard = t
                .guard
                .as_ref()
                .map(|g| cx.expr(g, Some(pi), &env, &definitions))
                .transpose()?;
            let sync = match &t.sync {
                None => None,
                Some(s) => {
                    let cname = match &s.owner {
                        Some(o) => {
                            let owner = match &o.args {
                                Some(args) => instance_name(
                                    &o.name.name,
                                    &args
                                        .iter()
                                        .map(|a| cx.constant(a, &consts_of[pi]))
                                        .collect::<R<Vec<_>>>()?,
                                ),
                                None => o.name.name.clone(),
                            };
                            format!("{owner}->{}", s.chan.name)
                        }
                        None => {
                            let own = format!("{}->{}", p.name, s.chan.name);
                            if cx.chans.contains_key(&own) {
                                own
                            } else {
                                s.chan.name.clone()
                            }
                        }
                    };
                    let Some(&ci) = cx.chans.get(&cname) else {
                        return Err(cx.err(
                            s.chan.span,
                            format!("no channel `{}`", s.chan.name),
                            "unknown channel",
                        ));
                    };
                    let ch = &cx.channels[ci];
                    let arity = ch.items.len().max(if ch.size == 0 { 1 } else { 0 });
                    if ch.size > 0 && s.values.len() != ch.items.len()
                        || ch.size == 0
                            && s.values.len() > arity.max(1)
                            && ch.items.len() != s.values.len()
                    {
                        return Err(cx.err(
                            s.span,
                            format!(
                                "channel `{}` carries {} values, given {}",
                                s.chan.name,
                                ch.items.len(),
                                s.values.len()
                            ),
                            "wrong number of values",
                        ));
                    }
                    let op = if s.send {
                        SyncOp::Send(
                            s.values
                                .iter()
                                .map(|v| cx.expr(v, Some(pi), &env, &definitions))
                                .collect::<R<Vec<_>>>()?,
                        )
                    } else {
                        SyncOp::Recv(
                            s.values
                                .iter()
                                .map(|v| cx.place(v, pi, &env, &definitions))
                                .collect::<R<Vec<_>>>()?,
                        )
                    };
                    Some((ci, op))
                }
            };
            let effect = t
                .effect
                .iter()
                .map(|a| {
                    Ok((
                        cx.place(&a.target, pi, &env, &definitions)?,
                        cx.expr(&a.value, Some(pi), &env, &definitions)?,
                    ))
                })
                .collect::<R<Vec<_>>>()?;
            trans.push(Transition {
                from,
                to,
                guard,
                sync,
                effect,
                text: format!("{} -> {}", t.from.name, t.to.name),
                span: t.span,
            });
        }
        cx.procs[pi].asserts = asserts;
        cx.procs[pi].trans = trans;
        cx.procs[pi].index();
    }
    let error_var = cx.alloc(Type::Byte, None);
    let mut initial = vec![0u8; cx.width as usize];
    for (var, values) in &cx.init {
        for (k, v) in values.iter().enumerate() {
            store(&mut initial, *var, k as u32, *v);
        }
    }
    let property = cx.procs.iter().position(|p| p.property);
    let scope = Scope {
        consts: cx.consts.clone(),
        globals: cx.globals.clone(),
        proc_index: cx.proc_index.clone(),
        locals_of: locals_of.clone(),
        consts_of: consts_of.clone(),
    };
    let mut sys = System {
        code: Arc::new(Code::empty()),
        error_var,
        scope,
        width: cx.width,
        initial,
        globals: cx.global_list,
        processes: cx.procs,
        channels: cx.channels,
        property,
        synchronous: m.synchronous,
        definitions,
        ltl,
    };
    sys.recompile();
    Ok(sys)
}

struct Env<'a> {
    locals_of: &'a [HashMap<String, Var>],
    consts_of: &'a [HashMap<String, i32>],
}

impl Ctx<'_> {
    fn lookup(&self, id: &Ident, proc: Option<usize>, env: &Env) -> R<Result<Var, i32>> {
        if let Some(p) = proc {
            if let Some(v) = env.locals_of[p].get(&id.name) {
                return Ok(Ok(*v));
            }
            if let Some(c) = env.consts_of[p].get(&id.name) {
                return Ok(Err(*c));
            }
        }
        if let Some(v) = self.globals.get(&id.name) {
            return Ok(Ok(*v));
        }
        if let Some(c) = self.consts.get(&id.name) {
            return Ok(Err(*c));
        }
        Err(self.err(
            id.span,
            format!("unknown variable `{}`", id.name),
            "not declared",
        ))
    }

    fn proc_of(&self, r: &ast::ProcRef, proc: Option<usize>, env: &Env) -> R<usize> {
        let name = match &r.args {
            Some(args) => {
                let local = proc.map(|p| env.consts_of[p].clone()).unwrap_or_default();
                instance_name(
                    &r.name.name,
                    &args
                        .iter()
                        .map(|a| self.constant(a, &local))
                        .collect::<R<Vec<_>>>()?,
                )
            }
            None => r.name.name.clone(),
        };
        self.proc_index.get(&name).copied().ok_or_else(|| {
            self.err(
                r.name.span,
                format!("unknown process `{name}`"),
                "not declared",
            )
        })
    }

    fn expr(
        &self,
        e: &Expr,
        proc: Option<usize>,
        env: &Env,
        defs: &HashMap<String, CExpr>,
    ) -> R<CExpr> {
        Ok(match e {
            Expr::Num(n, _) => CExpr::Const(*n as i32),
            Expr::Bool(b, _) => CExpr::Const(*b as i32),
            Expr::Var(id, idx) => match (self.lookup(id, proc, env)?, idx) {
                (Err(c), None) => CExpr::Const(c),
                (Err(_), Some(_)) => {
                    return Err(self.err(
                        id.span,
                        format!("`{}` is a constant, not an array", id.name),
                        "not an array",
                    ))
                }
                (Ok(v), None) if v.len.is_none() => CExpr::Load(v),
                (Ok(_), None) => {
                    return Err(self.err(
                        id.span,
                        format!("`{}` is an array: give an index", id.name),
                        "needs `[i]`",
                    ))
                }
                (Ok(v), Some(i)) if v.len.is_some() => {
                    element(v, self.expr(i, proc, env, defs)?, e.span())
                }
                (Ok(_), Some(_)) => {
                    return Err(self.err(
                        id.span,
                        format!("`{}` is not an array", id.name),
                        "no index here",
                    ))
                }
            },
            Expr::InState(r, st) => {
                let p = self.proc_of(r, proc, env)?;
                let Some(s) = self.procs[p].states.iter().position(|s| *s == st.name) else {
                    return Err(self.err(
                        st.span,
                        format!("`{}` is not a state of `{}`", st.name, self.procs[p].name),
                        "unknown state",
                    ));
                };
                CExpr::InState {
                    proc: p,
                    state: s as u32,
                }
            }
            Expr::Remote(r, var, idx) => {
                let p = self.proc_of(r, proc, env)?;
                let Some(v) = env.locals_of[p].get(&var.name).copied() else {
                    return Err(self.err(
                        var.span,
                        format!(
                            "`{}` is not a variable of `{}`",
                            var.name, self.procs[p].name
                        ),
                        "unknown variable",
                    ));
                };
                match (v.len, idx) {
                    (None, None) => CExpr::Load(v),
                    (Some(_), Some(i)) => element(v, self.expr(i, proc, env, defs)?, e.span()),
                    (None, Some(_)) => {
                        return Err(self.err(
                            var.span,
                            format!("`{}` is not an array", var.name),
                            "no index here",
                        ))
                    }
                    (Some(_), None) => {
                        return Err(self.err(
                            var.span,
                            format!("`{}` is an array: give an index", var.name),
                            "needs `[i]`",
                        ))
                    }
                }
            }
            Expr::Call(name, args, span) => {
                if !args.is_empty() {
                    return Err(self.err(
                        *span,
                        "expressions with arguments are not supported",
                        "no arguments",
                    ));
                }
                match defs.get(&name.name) {
                    Some(d) => d.clone(),
                    None => {
                        return Err(self.err(
                            name.span,
                            format!("no expression `{}`", name.name),
                            "not defined",
                        ))
                    }
                }
            }
            Expr::Unary(op, a, _) => CExpr::Unary(*op, Box::new(self.expr(a, proc, env, defs)?)),
            Expr::Binary(op, a, b) => fuse(
                *op,
                self.expr(a, proc, env, defs)?,
                self.expr(b, proc, env, defs)?,
                e.span(),
            ),
        })
    }

    fn place(&self, e: &Expr, proc: usize, env: &Env, defs: &HashMap<String, CExpr>) -> R<Place> {
        match e {
            Expr::Var(id, idx) => match (self.lookup(id, Some(proc), env)?, idx) {
                (Ok(v), None) if v.len.is_none() => Ok(Place::Scalar(v)),
                (Ok(v), Some(i)) if v.len.is_some() => {
                    Ok(match self.expr(i, Some(proc), env, defs)? {
                        CExpr::Const(k) if in_range(v, k) => Place::Scalar(at(v, k)),
                        i => Place::Element(v, i, e.span()),
                    })
                }
                (Err(_), _) => Err(self.err(
                    id.span,
                    format!("cannot assign to the constant `{}`", id.name),
                    "a constant",
                )),
                _ => Err(self.err(
                    e.span(),
                    "an array needs an index to be assigned (and a scalar none)",
                    "not assignable",
                )),
            },
            _ => Err(self.err(
                e.span(),
                "only a variable or an array element can be assigned",
                "not assignable",
            )),
        }
    }
}

/// Reads element `k` of `var` from a state vector.
#[inline]
pub fn load(s: &[u8], var: Var, k: u32) -> i32 {
    let at = (var.offset + k * var.ty.width()) as usize;
    match var.ty {
        Type::Byte => s[at] as i32,
        Type::Int => i16::from_le_bytes([s[at], s[at + 1]]) as i32,
    }
}

/// Writes element `k` of `var` (the caller has checked the range).
#[inline]
pub fn store(s: &mut [u8], var: Var, k: u32, v: i32) {
    let at = (var.offset + k * var.ty.width()) as usize;
    match var.ty {
        Type::Byte => s[at] = v as u8,
        Type::Int => s[at..at + 2].copy_from_slice(&(v as i16).to_le_bytes()),
    }
}
