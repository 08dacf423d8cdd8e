//! Lowering from the syntax tree to the program IR, with the semantic checks: every name
//! resolves, shared locations and registers are used as such, calls match their functions.
//!
//! Shared reads inside an expression become loads into fresh temporaries (`%t0`, ...),
//! performed left to right, each once, before the expression is evaluated. So `&&` and
//! `||` short-circuit the arithmetic but not the memory reads: every location the
//! expression names is read.

use crate::ast::{self, *};
use crate::diag::{Diagnostic, LineIndex};
use crate::printer::print_expr;
use fencer_ir as ir;
use fencer_ir::{Addr, BinOp, CondExpr, CondVar, Instr, ObjKind, Op, Reg, RmwOp, SrcLoc, UnOp};
use std::collections::HashMap;

pub struct Lowerer<'a> {
    file: &'a str,
    src: &'a str,
    lines: LineIndex,
    objects: Vec<ir::Object>,
    obj_by_name: HashMap<String, u32>,
    funcs: HashMap<String, (u32, usize, bool)>,
}

type LResult<T> = Result<T, Diagnostic>;

struct FnCtx {
    regs: Vec<String>,
    reg_by_name: HashMap<String, Reg>,
    code: Vec<Instr>,
    temps: u32,
    owner: String,
}

impl<'a> Lowerer<'a> {
    pub fn new(file: &'a str, src: &'a str) -> Lowerer<'a> {
        Lowerer {
            file,
            src,
            lines: LineIndex::new(src),
            objects: Vec::new(),
            obj_by_name: HashMap::new(),
            funcs: HashMap::new(),
        }
    }

    fn err(&self, span: Span, msg: impl Into<String>, label: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, self.src, span, msg, label)
    }

    fn loc(&self, span: Span) -> SrcLoc {
        let (line, col) = self.lines.line_col(self.src, span.start);
        SrcLoc::new(0, line, col)
    }

    pub fn lower(mut self, name: &str, ast: &Ast) -> LResult<ir::Program> {
        // Declarations first, so that threads may use names declared after them.
        let mut declared: HashMap<String, Span> = HashMap::new();
        let mut check_dup = |this: &Self, id: &Ident| -> LResult<()> {
            if let Some(prev) = declared.get(&id.name) {
                let (l, c) = this.lines.line_col(this.src, prev.start);
                return Err(this.err(
                    id.span,
                    format!(
                        "`{}` is declared twice (first at line {l}, column {c})",
                        id.name
                    ),
                    "second declaration",
                ));
            }
            declared.insert(id.name.clone(), id.span);
            Ok(())
        };
        let mut func_items = Vec::new();
        let mut cells = 0;
        for item in &ast.items {
            match item {
                Item::Shared(decls) => {
                    for d in decls {
                        check_dup(&self, &d.name)?;
                        let n = d.size.unwrap_or(1);
                        let (size, init) = match &d.init {
                            Init::Zero | Init::Scalar(0) => (n, Vec::new()),
                            Init::Scalar(v) => (n, (0..n).map(|k| (k, *v)).collect()),
                            Init::List(vs) => (
                                vs.len() as u32,
                                (0..)
                                    .zip(vs.iter().copied())
                                    .filter(|&(_, v)| v != 0)
                                    .collect(),
                            ),
                        };
                        // Zero cells cost nothing (memory is sparse); cells with another
                        // initial value are stored, in every state the exploration keeps.
                        cells += init.len();
                        if cells > MAX_CELLS {
                            return Err(self
                                .err(
                                    d.name.span,
                                    format!("too much initialised shared memory: expected at most {MAX_CELLS} cells with a non-zero initial value in all, and `{}` passes that", d.name.name),
                                    "too large",
                                )
                                .with_help("every state of the exploration holds a copy of every cell that is not zero"));
                        }
                        self.add_object(&d.name, ObjKind::Shared, size, init, d.size.is_some());
                    }
                }
                Item::Mutex(names) => {
                    for m in names {
                        check_dup(&self, m)?;
                        self.add_object(m, ObjKind::Mutex, 1, Vec::new(), false);
                    }
                }
                Item::Thread { name, body } => {
                    check_dup(&self, name)?;
                    func_items.push((name, &[][..], body, true));
                }
                Item::Func { name, params, body } => {
                    check_dup(&self, name)?;
                    func_items.push((name, &params[..], body, false));
                }
            }
        }
        if !func_items.iter().any(|f| f.3) {
            return Err(self.err(
                Span::new(self.src.len(), self.src.len()),
                "the program has no thread: expected at least one `thread NAME { ... }`",
                "no thread declared",
            ));
        }
        for (i, (n, params, _, is_thread)) in func_items.iter().enumerate() {
            self.funcs
                .insert(n.name.clone(), (i as u32, params.len(), *is_thread));
        }
        let mut functions = Vec::new();
        let mut threads = Vec::new();
        for (i, (n, params, body, is_thread)) in func_items.iter().enumerate() {
            functions.push(self.lower_fn(n, params, body)?);
            if *is_thread {
                threads.push(ir::ThreadDecl {
                    name: n.name.clone(),
                    func: i as u32,
                    arg: 0,
                });
            }
        }
        let cond = match &ast.cond {
            None => None,
            Some(c) => Some(self.lower_cond(c, &functions, &threads)?),
        };
        Ok(ir::Program {
            name: name.to_string(),
            files: vec![self.file.to_string()],
            objects: self.objects,
            functions,
            threads,
            cond,
            observe: Vec::new(),
            observe_explicit: false,
            source_trace: false,
            hang_is_violation: true,
            assumptions: Vec::new(),
            uninit_arbitrary: false,
            wait_variant: None,
        })
    }

    fn add_object(
        &mut self,
        id: &Ident,
        kind: ObjKind,
        size: u32,
        init: Vec<(u32, i64)>,
        is_array: bool,
    ) {
        let loc = self.loc(id.span);
        self.obj_by_name
            .insert(id.name.clone(), self.objects.len() as u32);
        self.objects.push(ir::Object {
            name: id.name.clone(),
            kind,
            size,
            init,
            is_array,
            cell_names: Vec::new(),
            loc,
        });
    }

    fn lower_fn(&self, name: &Ident, params: &[Ident], body: &[Stmt]) -> LResult<ir::Function> {
        let mut cx = FnCtx {
            regs: Vec::new(),
            reg_by_name: HashMap::new(),
            code: Vec::new(),
            temps: 0,
            owner: name.name.clone(),
        };
        for p in params {
            if self.obj_by_name.contains_key(&p.name) || self.funcs.contains_key(&p.name) {
                return Err(self.err(
                    p.span,
                    format!(
                        "parameter `{}` has the name of a global declaration",
                        p.name
                    ),
                    "choose another name",
                ));
            }
            if cx.reg_by_name.contains_key(&p.name) {
                return Err(self.err(
                    p.span,
                    format!("parameter `{}` appears twice", p.name),
                    "repeated",
                ));
            }
            self.new_reg(&mut cx, &p.name);
        }
        // Registers are the names a function assigns; collect them before lowering so that
        // a loop may read a register it assigns later in its body.
        self.collect_regs(&mut cx, body);
        self.lower_block(&mut cx, body)?;
        Ok(ir::Function {
            name: name.name.clone(),
            params: params.len() as u32,
            reg_names: cx.regs,
            body: cx.code,
            loc: self.loc(name.span),
        })
    }

    fn new_reg(&self, cx: &mut FnCtx, name: &str) -> Reg {
        let r = cx.regs.len() as Reg;
        cx.regs.push(name.to_string());
        cx.reg_by_name.insert(name.to_string(), r);
        r
    }

    fn temp(&self, cx: &mut FnCtx) -> Reg {
        let n = format!("%t{}", cx.temps);
        cx.temps += 1;
        self.new_reg(cx, &n)
    }

    fn collect_regs(&self, cx: &mut FnCtx, body: &[Stmt]) {
        for st in body {
            match &st.kind {
                StmtKind::Assign { lhs, .. } => {
                    let n = &lhs.name.name;
                    if lhs.index.is_none()
                        && !self.obj_by_name.contains_key(n)
                        && !self.funcs.contains_key(n)
                        && !cx.reg_by_name.contains_key(n)
                    {
                        self.new_reg(cx, n);
                    }
                }
                StmtKind::If { arms, els } => {
                    for (_, then) in arms {
                        self.collect_regs(cx, then);
                    }
                    if let Some(e) = els {
                        self.collect_regs(cx, e);
                    }
                }
                StmtKind::While { body, .. } => self.collect_regs(cx, body),
                _ => {}
            }
        }
    }

    fn emit(&self, cx: &mut FnCtx, op: Op, span: Span) -> u32 {
        cx.code.push(Instr {
            op,
            loc: self.loc(span),
        });
        cx.code.len() as u32 - 1
    }

    fn lower_block(&self, cx: &mut FnCtx, body: &[Stmt]) -> LResult<()> {
        for st in body {
            self.lower_stmt(cx, st)?;
        }
        Ok(())
    }

    /// The address of a shared place, or an error naming why it is not one.
    fn shared_addr(&self, cx: &mut FnCtx, p: &Place, what: &str) -> LResult<Addr> {
        let n = &p.name.name;
        match self.obj_by_name.get(n) {
            Some(&obj) => {
                let o = &self.objects[obj as usize];
                if o.kind == ObjKind::Mutex {
                    return Err(self
                        .err(
                            p.name.span,
                            format!("mutex `{n}` used as {what}"),
                            "a mutex",
                        )
                        .with_help("mutexes are only used with `lock(m);` and `unlock(m);`"));
                }
                match (&p.index, o.is_array) {
                    (None, false) => Ok(Addr::scalar(obj)),
                    (Some(i), true) => {
                        let index = self.lower_expr(cx, i)?;
                        Ok(Addr::Global { obj, index })
                    }
                    (None, true) => Err(self.err(
                        p.name.span,
                        format!("array `{n}` used without an index"),
                        format!("expected `{n}[index]`"),
                    )),
                    (Some(i), false) => Err(self.err(
                        i.span,
                        format!("`{n}` is a scalar, not an array"),
                        "unexpected index",
                    )),
                }
            }
            None if cx.reg_by_name.contains_key(n) => Err(self
                .err(
                    p.name.span,
                    format!("`{n}` is a register, but {what} must be a shared location"),
                    "a register",
                )
                .with_help("declare it with `shared` at the top of the file")),
            None => Err(self.unknown(cx, &p.name)),
        }
    }

    fn unknown(&self, cx: &FnCtx, id: &Ident) -> Diagnostic {
        let what = if self.funcs.contains_key(&id.name) {
            format!("`{}` is a thread or function, not a value", id.name)
        } else {
            format!(
                "unknown name `{}`: not a shared location, mutex, or register of `{}`",
                id.name, cx.owner
            )
        };
        self.err(id.span, what, "not declared")
            .with_help("shared locations are declared with `shared`; registers are created by assigning to them")
    }

    fn lower_expr(&self, cx: &mut FnCtx, e: &Expr) -> LResult<ir::Expr> {
        Ok(self.lower_node(cx, e)?.e)
    }

    /// Lowers an expression whose operator chains may be arbitrarily long. The tree the
    /// parser builds for `a + b + ... + z` is as deep as the chain is long; the IR must
    /// not be (the machine, `Expr::regs` and friends recurse over it), so chains are
    /// walked in a loop and bounded by [`Self::limit`].
    fn lower_node(&self, cx: &mut FnCtx, e: &Expr) -> LResult<Node> {
        let node = match &e.kind {
            ExprKind::Int(v) => Node::leaf(ir::Expr::Const(*v)),
            ExprKind::Bool(b) => Node::leaf(ir::Expr::Const(*b as i64)),
            ExprKind::Place(p) => {
                if let Some(&r) = cx.reg_by_name.get(&p.name.name) {
                    if let Some(i) = &p.index {
                        return Err(self.err(
                            i.span,
                            format!("register `{}` is not an array", p.name.name),
                            "unexpected index",
                        ));
                    }
                    return Ok(Node::leaf(ir::Expr::Reg(r)));
                }
                let addr = self.shared_addr(cx, p, "a value")?;
                let t = self.temp(cx);
                self.emit(
                    cx,
                    Op::Load {
                        dst: t,
                        addr,
                        copy: false,
                    },
                    e.span,
                );
                Node::leaf(ir::Expr::Reg(t))
            }
            ExprKind::ThreadReg(t, r) => {
                return Err(self
                    .err(
                        t.span.to(r.span),
                        format!("`{}.{}` names a thread's register, which only the final condition may read", t.name, r.name),
                        "not allowed in code",
                    )
                    .with_help("share values between threads through `shared` locations"))
            }
            ExprKind::Un(op, a) => {
                let a = self.lower_node(cx, a)?;
                Node {
                    depth: a.depth + 1,
                    faults: a.faults,
                    e: ir::Expr::Un(*op, Box::new(a.e)),
                }
            }
            ExprKind::Bin(..) => {
                let (first, rights) = spine(e);
                let first = self.lower_node(cx, first)?;
                let mut operands = Vec::with_capacity(rights.len());
                // Left to right, so that the loads of shared reads keep their order.
                for (op, r) in rights {
                    operands.push((op, self.lower_node(cx, r)?));
                }
                return chain(first, operands, &mut |n| self.limit(cx, n, e.span));
            }
        };
        self.limit(cx, node, e.span)
    }

    /// Keeps an expression within [`MAX_IR_DEPTH`]: past [`SPLIT_DEPTH`], a subexpression
    /// that cannot fault is computed beforehand into a fresh temporary (`Op::Local`).
    /// Computing it early changes nothing: it reads registers only, all already set, and
    /// cannot fail. A subexpression that can divide by zero stays where it is, because
    /// moving it out of the right operand of `&&` or `||`, or before a fault of another
    /// kind, would change what the program does; if those alone pass the bound, that is
    /// an error.
    fn limit(&self, cx: &mut FnCtx, n: Node, span: Span) -> LResult<Node> {
        if n.depth <= SPLIT_DEPTH {
            return Ok(n);
        }
        let hoist = |this: &Self, cx: &mut FnCtx, e: ir::Expr| {
            let t = this.temp(cx);
            this.emit(cx, Op::Local { dst: t, expr: e }, span);
            ir::Expr::Reg(t)
        };
        if !n.faults {
            return Ok(Node::leaf(hoist(self, cx, n.e)));
        }
        let mut e = n.e;
        match &mut e {
            ir::Expr::Un(_, a) | ir::Expr::AddrOf(_, a) if !can_fault(a) => {
                let a0 = std::mem::replace(&mut **a, ir::Expr::Const(0));
                **a = hoist(self, cx, a0);
            }
            ir::Expr::Bin(_, a, b) => {
                for x in [a, b] {
                    if !can_fault(x) && depth(x) > 1 {
                        let x0 = std::mem::replace(&mut **x, ir::Expr::Const(0));
                        **x = hoist(self, cx, x0);
                    }
                }
            }
            _ => {}
        }
        let d = depth(&e);
        if d > MAX_IR_DEPTH {
            return Err(self
                .err(
                    span,
                    format!(
                        "expression too deep: expected at most {MAX_IR_DEPTH} nested operators that can divide by zero"
                    ),
                    "too deep",
                )
                .with_help("compute parts of it into registers first"));
        }
        Ok(Node {
            e,
            depth: d,
            faults: true,
        })
    }

    fn check_call(&self, func: &Ident, nargs: usize, spawn: bool) -> LResult<u32> {
        let Some(&(id, params, is_thread)) = self.funcs.get(&func.name) else {
            return Err(self.err(
                func.span,
                format!("unknown function `{}`", func.name),
                "not declared with `fn`",
            ));
        };
        if is_thread {
            return Err(self
                .err(
                    func.span,
                    format!(
                        "`{}` is a thread, which starts on its own and cannot be {}",
                        func.name,
                        if spawn { "spawned" } else { "called" }
                    ),
                    "a thread",
                )
                .with_help("declare it with `fn` to call or spawn it"));
        }
        if spawn && params > 1 {
            return Err(self.err(
                func.span,
                format!(
                    "`{}` takes {params} parameters; a spawned function takes at most one",
                    func.name
                ),
                "too many parameters",
            ));
        }
        if nargs != params {
            return Err(self.err(
                func.span,
                format!(
                    "`{}` takes {params} argument(s) but is given {nargs}",
                    func.name
                ),
                "wrong number of arguments",
            ));
        }
        Ok(id)
    }

    fn lower_stmt(&self, cx: &mut FnCtx, st: &Stmt) -> LResult<()> {
        let span = st.span;
        match &st.kind {
            StmtKind::Assign { lhs, rhs } => {
                let n = &lhs.name.name;
                let dst_reg = cx
                    .reg_by_name
                    .get(n)
                    .copied()
                    .filter(|_| lhs.index.is_none());
                if dst_reg.is_none() && !self.obj_by_name.contains_key(n) {
                    if lhs.index.is_some() && cx.reg_by_name.contains_key(n) {
                        return Err(self.err(
                            lhs.name.span,
                            format!("register `{n}` is not an array"),
                            "unexpected index",
                        ));
                    }
                    return Err(self.unknown(cx, &lhs.name));
                }
                // A register target receives results directly; a shared target gets them
                // through a temporary and a store.
                let target = |this: &Self, cx: &mut FnCtx| dst_reg.unwrap_or_else(|| this.temp(cx));
                let value: ir::Expr = match rhs {
                    Rhs::Expr(e) => {
                        if let (Some(r), ExprKind::Place(p)) = (dst_reg, &e.kind) {
                            if !cx.reg_by_name.contains_key(&p.name.name) {
                                let addr = self.shared_addr(cx, p, "a value")?;
                                self.emit(
                                    cx,
                                    Op::Load {
                                        dst: r,
                                        addr,
                                        copy: false,
                                    },
                                    span,
                                );
                                return Ok(());
                            }
                        }
                        let v = self.lower_expr(cx, e)?;
                        match dst_reg {
                            Some(r) => {
                                self.emit(cx, Op::Local { dst: r, expr: v }, span);
                                return Ok(());
                            }
                            None => v,
                        }
                    }
                    Rhs::Cas {
                        place,
                        expected,
                        new,
                    } => {
                        let addr = self.shared_addr(cx, place, "the target of `cas`")?;
                        let expected = self.lower_expr(cx, expected)?;
                        let new = self.lower_expr(cx, new)?;
                        let dst = target(self, cx);
                        self.emit(
                            cx,
                            Op::Rmw {
                                dst,
                                addr,
                                op: RmwOp::Cas { expected, new },
                            },
                            span,
                        );
                        ir::Expr::Reg(dst)
                    }
                    Rhs::FetchAdd { place, value } | Rhs::Xchg { place, value } => {
                        let what = if matches!(rhs, Rhs::FetchAdd { .. }) {
                            "the target of `fetch_add`"
                        } else {
                            "the target of `xchg`"
                        };
                        let addr = self.shared_addr(cx, place, what)?;
                        let v = self.lower_expr(cx, value)?;
                        let op = if matches!(rhs, Rhs::FetchAdd { .. }) {
                            RmwOp::FetchAdd(v)
                        } else {
                            RmwOp::Xchg(v)
                        };
                        let dst = target(self, cx);
                        self.emit(cx, Op::Rmw { dst, addr, op }, span);
                        ir::Expr::Reg(dst)
                    }
                    Rhs::Spawn { func, arg } => {
                        let f = self.check_call(func, arg.iter().count(), true);
                        // A spawned function may take no parameter and be given none.
                        let f = match (f, arg) {
                            (Ok(f), _) => f,
                            (Err(e), _) => return Err(e),
                        };
                        let arg = match arg {
                            Some(a) => self.lower_expr(cx, a)?,
                            None => ir::Expr::Const(0),
                        };
                        let dst = target(self, cx);
                        self.emit(cx, Op::Spawn { dst, func: f, arg }, span);
                        ir::Expr::Reg(dst)
                    }
                    Rhs::Call { func, args } => {
                        let f = self.check_call(func, args.len(), false)?;
                        let mut a = Vec::new();
                        for e in args {
                            a.push(self.lower_expr(cx, e)?);
                        }
                        let dst = target(self, cx);
                        self.emit(
                            cx,
                            Op::Call {
                                dst: Some(dst),
                                func: f,
                                args: a,
                            },
                            span,
                        );
                        ir::Expr::Reg(dst)
                    }
                };
                match dst_reg {
                    Some(_) => {}
                    None => {
                        let addr = self.shared_addr(cx, lhs, "an assignment target")?;
                        self.emit(cx, Op::Store { addr, value }, span);
                    }
                }
            }
            StmtKind::Fence(kind) => {
                self.emit(cx, Op::Fence(*kind), span);
            }
            StmtKind::Assume(e) => {
                let c = self.lower_expr(cx, e)?;
                self.emit(cx, Op::Assume(c), span);
            }
            StmtKind::Assert(e) => {
                let c = self.lower_expr(cx, e)?;
                self.emit(
                    cx,
                    Op::Assert {
                        cond: c,
                        text: print_expr(e),
                    },
                    span,
                );
            }
            StmtKind::Lock(m) | StmtKind::Unlock(m) => {
                let obj = match self.obj_by_name.get(&m.name) {
                    Some(&o) if self.objects[o as usize].kind == ObjKind::Mutex => o,
                    Some(_) => {
                        return Err(self
                            .err(
                                m.span,
                                format!("`{}` is not a mutex", m.name),
                                "a shared location",
                            )
                            .with_help(format!("declare it with `mutex {};`", m.name)))
                    }
                    None => {
                        return Err(self
                            .err(
                                m.span,
                                format!("unknown mutex `{}`", m.name),
                                "not declared",
                            )
                            .with_help(format!("declare it with `mutex {};`", m.name)))
                    }
                };
                let op = if matches!(st.kind, StmtKind::Lock(_)) {
                    Op::Lock(Addr::scalar(obj))
                } else {
                    Op::Unlock(Addr::scalar(obj))
                };
                self.emit(cx, op, span);
            }
            StmtKind::If { arms, els } => {
                // Each arm: its condition, a branch past its body when false, its body, and
                // a jump to the end (patched once the end is known).
                let mut to_end = Vec::new();
                for (i, (cond, then)) in arms.iter().enumerate() {
                    let c = self.lower_expr(cx, cond)?;
                    let br = self.emit(
                        cx,
                        Op::Branch {
                            cond: c,
                            then_to: 0,
                            else_to: 0,
                        },
                        cond.span,
                    );
                    self.lower_block(cx, then)?;
                    if i + 1 < arms.len() || els.is_some() {
                        to_end.push(self.emit(cx, Op::Jump(0), span));
                    }
                    let else_to = cx.code.len() as u32;
                    if let Op::Branch {
                        then_to,
                        else_to: e,
                        ..
                    } = &mut cx.code[br as usize].op
                    {
                        *then_to = br + 1;
                        *e = else_to;
                    }
                }
                if let Some(b) = els {
                    self.lower_block(cx, b)?;
                }
                let end = cx.code.len() as u32;
                for j in to_end {
                    cx.code[j as usize].op = Op::Jump(end);
                }
            }
            StmtKind::While { cond, body } => {
                let head = cx.code.len() as u32;
                let c = self.lower_expr(cx, cond)?;
                let br = self.emit(
                    cx,
                    Op::Branch {
                        cond: c,
                        then_to: 0,
                        else_to: 0,
                    },
                    cond.span,
                );
                self.lower_block(cx, body)?;
                self.emit(cx, Op::Jump(head), span);
                let end = cx.code.len() as u32;
                if let Op::Branch {
                    then_to, else_to, ..
                } = &mut cx.code[br as usize].op
                {
                    *then_to = br + 1;
                    *else_to = end;
                }
            }
            StmtKind::Join(e) => {
                let t = self.lower_expr(cx, e)?;
                self.emit(cx, Op::Join(t), span);
            }
            StmtKind::Return(e) => {
                let v = match e {
                    Some(e) => Some(self.lower_expr(cx, e)?),
                    None => None,
                };
                self.emit(cx, Op::Return(v), span);
            }
            StmtKind::Call { func, args } => {
                let f = self.check_call(func, args.len(), false)?;
                let mut a = Vec::new();
                for e in args {
                    a.push(self.lower_expr(cx, e)?);
                }
                self.emit(
                    cx,
                    Op::Call {
                        dst: None,
                        func: f,
                        args: a,
                    },
                    span,
                );
            }
        }
        Ok(())
    }

    fn lower_cond(
        &self,
        c: &ast::Cond,
        functions: &[ir::Function],
        threads: &[ir::ThreadDecl],
    ) -> LResult<ir::FinalCond> {
        let expr = self.cond_expr(&c.expr, functions, threads)?;
        let quant = match c.quant {
            CondQuant::Exists => ir::Quantifier::Exists,
            CondQuant::Forall => ir::Quantifier::Forall,
        };
        let q = match c.quant {
            CondQuant::Exists => "exists",
            CondQuant::Forall => "forall",
        };
        Ok(ir::FinalCond {
            quant,
            expr,
            text: format!("{q} ({})", print_expr(&c.expr)),
            loc: self.loc(c.span),
        })
    }

    fn cond_expr(
        &self,
        e: &Expr,
        functions: &[ir::Function],
        threads: &[ir::ThreadDecl],
    ) -> LResult<CondExpr> {
        Ok(self.cond_node(e, functions, threads)?.0)
    }

    /// A final condition has no code to compute parts of it beforehand: long chains of
    /// associative operators are balanced, and anything still deeper than
    /// [`MAX_IR_DEPTH`] is an error.
    fn cond_node(
        &self,
        e: &Expr,
        functions: &[ir::Function],
        threads: &[ir::ThreadDecl],
    ) -> LResult<(CondExpr, u32)> {
        let mut check = |n: (CondExpr, u32)| {
            if n.1 > MAX_IR_DEPTH {
                return Err(self
                    .err(
                        e.span,
                        format!("final condition too deep: expected at most {MAX_IR_DEPTH} nested operators"),
                        "too deep",
                    )
                    .with_help("`&&`, `||`, `+`, `*`, `&`, `|`, `^` chains of any length are fine; other operators nest"));
            }
            Ok(n)
        };
        let leaf = |c: CondExpr| Ok((c, 1));
        match &e.kind {
            ExprKind::Int(v) => leaf(CondExpr::Const(*v)),
            ExprKind::Bool(b) => leaf(CondExpr::Const(*b as i64)),
            ExprKind::Un(op, a) => {
                let (a, d) = self.cond_node(a, functions, threads)?;
                check((CondExpr::Un(*op, Box::new(a)), d + 1))
            }
            ExprKind::Bin(..) => {
                let (first, rights) = spine(e);
                let first = self.cond_node(first, functions, threads)?;
                let mut operands = Vec::with_capacity(rights.len());
                for (op, r) in rights {
                    operands.push((op, self.cond_node(r, functions, threads)?));
                }
                chain(first, operands, &mut check)
            }
            ExprKind::ThreadReg(t, r) => {
                let Some(ti) = threads.iter().position(|d| d.name == t.name) else {
                    return Err(self.err(
                        t.span,
                        format!("unknown thread `{}` in the final condition", t.name),
                        "expected a thread name",
                    ));
                };
                let f = &functions[threads[ti].func as usize];
                let Some(reg) = f.reg_by_name(&r.name).filter(|_| !r.name.starts_with('%')) else {
                    return Err(self
                        .err(
                            r.span,
                            format!("thread `{}` has no register `{}`", t.name, r.name),
                            "no such register",
                        )
                        .with_help("registers are the names a thread assigns to"));
                };
                leaf(CondExpr::Var(CondVar::Reg {
                    thread: ti as u32,
                    reg,
                }))
            }
            ExprKind::Place(p) => {
                let n = &p.name.name;
                let Some(&obj) = self.obj_by_name.get(n) else {
                    let help = threads
                        .iter()
                        .find(|d| functions[d.func as usize].reg_by_name(n).is_some())
                        .map(|d| format!("for a register write `{}.{n}`", d.name))
                        .unwrap_or_else(|| "final conditions read shared locations (`x`, `a[1]`) and thread registers (`p.r1`)".into());
                    return Err(self
                        .err(
                            p.name.span,
                            format!("unknown shared location `{n}` in the final condition"),
                            "not a shared location",
                        )
                        .with_help(help));
                };
                let o = &self.objects[obj as usize];
                let index = match (&p.index, o.is_array) {
                    (None, false) => 0,
                    (Some(i), true) => match i.kind {
                        ExprKind::Int(k) if k >= 0 && k < o.size as i64 => k as u32,
                        ExprKind::Int(k) => {
                            return Err(self.err(
                                i.span,
                                format!("index {k} out of bounds of `{n}` (size {})", o.size),
                                "out of bounds",
                            ))
                        }
                        _ => {
                            return Err(self.err(
                                i.span,
                                "expected a constant index in the final condition",
                                "not a constant",
                            ))
                        }
                    },
                    (None, true) => {
                        return Err(self.err(
                            p.name.span,
                            format!("array `{n}` used without an index"),
                            format!("expected `{n}[index]`"),
                        ))
                    }
                    (Some(i), false) => {
                        return Err(self.err(
                            i.span,
                            format!("`{n}` is a scalar, not an array"),
                            "unexpected index",
                        ))
                    }
                };
                leaf(CondExpr::Var(CondVar::Cell { obj, index }))
            }
        }
    }
}

/// Shared cells in all: each array may have a million, but ten thousand such arrays
/// would exhaust memory before the first step.
const MAX_CELLS: usize = 1 << 24;

/// Operator chains are split or rebalanced once their IR would be deeper than this.
const SPLIT_DEPTH: u32 = 32;
/// No lowered expression or condition is deeper than this.
pub const MAX_IR_DEPTH: u32 = 64;
/// Runs of one associative operator longer than this become balanced trees. Shorter ones
/// keep the shape they are written in, so that ordinary programs lower as they always did.
const BALANCE_RUN: usize = 8;

/// A lowered expression with what [`Lowerer::limit`] needs to know about it.
struct Node {
    e: ir::Expr,
    depth: u32,
    /// Whether evaluating it can fail (divide by zero).
    faults: bool,
}

impl Node {
    fn leaf(e: ir::Expr) -> Node {
        Node {
            e,
            depth: 1,
            faults: false,
        }
    }
}

/// What [`chain`] builds: IR expressions in code, conditions in the final condition.
trait ChainNode: Sized {
    fn bin(op: BinOp, a: Self, b: Self) -> Self;
    fn neg(a: Self) -> Self;
}

impl ChainNode for Node {
    fn bin(op: BinOp, a: Node, b: Node) -> Node {
        let divides = matches!(op, BinOp::Div | BinOp::Rem | BinOp::UDiv | BinOp::URem)
            && !matches!(b.e, ir::Expr::Const(c) if c != 0);
        Node {
            depth: a.depth.max(b.depth) + 1,
            faults: a.faults || b.faults || divides,
            e: ir::Expr::bin(op, a.e, b.e),
        }
    }
    fn neg(a: Node) -> Node {
        Node {
            depth: a.depth + 1,
            faults: a.faults,
            e: ir::Expr::Un(UnOp::Neg, Box::new(a.e)),
        }
    }
}

impl ChainNode for (CondExpr, u32) {
    fn bin(op: BinOp, a: Self, b: Self) -> Self {
        (
            CondExpr::Bin(op, Box::new(a.0), Box::new(b.0)),
            a.1.max(b.1) + 1,
        )
    }
    fn neg(a: Self) -> Self {
        (CondExpr::Un(UnOp::Neg, Box::new(a.0)), a.1 + 1)
    }
}

/// The left spine of a binary expression, in a loop: the leftmost operand, then each
/// operator with its right operand, in source order.
fn spine(e: &Expr) -> (&Expr, Vec<(BinOp, &Expr)>) {
    let mut rights = Vec::new();
    let mut cur = e;
    while let ExprKind::Bin(op, a, b) = &cur.kind {
        rights.push((*op, &**b));
        cur = a;
    }
    rights.reverse();
    (cur, rights)
}

/// The operator a run is balanced with, for operators whose chains can be regrouped
/// without changing the value or what is evaluated. Wrapping `+`, `*`, `&`, `|`, `^` are
/// associative, and `a - b` is `a + (-b)` exactly in wrapping arithmetic. A balanced tree
/// of `&&` (`||`) still evaluates operands left to right and stops at the first false
/// (true) one, with the same 0/1 result.
fn group(op: BinOp) -> Option<BinOp> {
    use BinOp::*;
    match op {
        Add | Sub => Some(Add),
        Mul | And | Or | Xor | LogAnd | LogOr => Some(op),
        _ => None,
    }
}

/// Combines `first op1 r1 op2 r2 ...` (left-associative) into a tree, calling `fix` on
/// every node built so that it can split or refuse it.
fn chain<T: ChainNode>(
    first: T,
    rights: Vec<(BinOp, T)>,
    fix: &mut dyn FnMut(T) -> LResult<T>,
) -> LResult<T> {
    let mut acc = first;
    let mut rights = rights.into_iter().peekable();
    while let Some((op, r)) = rights.next() {
        let g = group(op);
        let mut run = vec![(op, r)];
        while let Some((o, _)) = rights.peek() {
            if g.is_some() && group(*o) == g {
                run.push(rights.next().expect("peeked"));
            } else {
                break;
            }
        }
        match g {
            Some(g) if run.len() > BALANCE_RUN => {
                let mut items = vec![acc];
                for (o, r) in run {
                    items.push(if o == BinOp::Sub { fix(T::neg(r))? } else { r });
                }
                acc = balance(g, items, fix)?;
            }
            _ => {
                for (o, r) in run {
                    acc = fix(T::bin(o, acc, r))?;
                }
            }
        }
    }
    Ok(acc)
}

/// A balanced tree of `op` over `items`, in order.
fn balance<T: ChainNode>(
    op: BinOp,
    mut items: Vec<T>,
    fix: &mut dyn FnMut(T) -> LResult<T>,
) -> LResult<T> {
    if items.len() == 1 {
        return Ok(items.pop().expect("one item"));
    }
    let right = items.split_off(items.len() / 2);
    let a = balance(op, items, fix)?;
    let b = balance(op, right, fix)?;
    fix(T::bin(op, a, b))
}

fn depth(e: &ir::Expr) -> u32 {
    match e {
        ir::Expr::Const(_) | ir::Expr::Reg(_) => 1,
        ir::Expr::AddrOf(_, a) | ir::Expr::Un(_, a) => depth(a) + 1,
        ir::Expr::Bin(_, a, b) => depth(a).max(depth(b)) + 1,
    }
}

fn can_fault(e: &ir::Expr) -> bool {
    match e {
        ir::Expr::Const(_) | ir::Expr::Reg(_) => false,
        ir::Expr::AddrOf(_, a) | ir::Expr::Un(_, a) => can_fault(a),
        ir::Expr::Bin(op, a, b) => {
            (matches!(op, BinOp::Div | BinOp::Rem | BinOp::UDiv | BinOp::URem)
                && !matches!(**b, ir::Expr::Const(c) if c != 0))
                || can_fault(a)
                || can_fault(b)
        }
    }
}
