//! The lowering of one function: registers, source locations, blocks and the phi copies
//! of their edges, terminators, and the lazy refusal of what cannot be modelled.

use super::{add, mul, name_str, Ctx, FnLower, Slot, Target, TLS_THREADS};
use crate::Error;
use fencer_ir::{BinOp, Expr, Function, Instr, Op, Reg, SrcLoc};
use llvm_ir::terminator::Terminator;
use llvm_ir::{DebugLoc, Instruction, Name, Operand, Type, TypeRef};
use std::collections::HashMap;

impl<'m> Ctx<'m> {
    fn file_index(&mut self, d: &DebugLoc) -> u16 {
        let name = match &d.directory {
            Some(dir) if dir == crate::RUNTIME_DIR => d.filename.clone(),
            Some(dir) if !d.filename.starts_with('/') && !dir.is_empty() => {
                // Relative to the compiler's directory: shown as written when it is the
                // file the user named.
                if self.main_file.ends_with(&d.filename) {
                    self.main_file.clone()
                } else {
                    format!("{dir}/{}", d.filename)
                }
            }
            _ => d.filename.clone(),
        };
        match self.files.iter().position(|f| *f == name) {
            Some(i) => i as u16,
            None => {
                self.files.push(name);
                (self.files.len() - 1) as u16
            }
        }
    }
}

impl<'a, 'm> FnLower<'a, 'm> {
    pub(super) fn new(cx: &'a mut Ctx<'m>, f: &'m llvm_ir::Function) -> Self {
        let mut s = FnLower {
            cx,
            f,
            reg_names: Vec::new(),
            regs: HashMap::new(),
            promoted: HashMap::new(),
            stack: Vec::new(),
            defs: HashMap::new(),
            block_index: HashMap::new(),
            body: Vec::new(),
            fixups: Vec::new(),
            stubs: Vec::new(),
            cmpxchg: HashMap::new(),
            loc: SrcLoc::NONE,
            asm_next: 0,
            fence_next: 0,
            stub_count: 0,
            tid: None,
            fatal: false,
        };
        if let Some(d) = &f.debugloc {
            let file = s.cx.file_index(d);
            s.loc = SrcLoc::new(file, d.line, d.col.unwrap_or(0));
        }
        for p in &f.parameters {
            s.reg(&p.name);
        }
        if !s.cx.tls.is_empty() {
            s.tid = Some(s.new_reg("%tid.tls".into()));
        }
        s
    }

    pub(super) fn err(&self, message: impl Into<String>) -> Error {
        Error {
            file: self.cx.files[self.loc.file as usize].clone(),
            line: self.loc.line,
            col: self.loc.col,
            message: format!("in function `{}`: {}", self.f.name, message.into()),
            help: None,
        }
    }

    pub(super) fn new_reg(&mut self, name: String) -> Reg {
        self.reg_names.push(name);
        (self.reg_names.len() - 1) as Reg
    }

    pub(super) fn reg(&mut self, n: &Name) -> Reg {
        if let Some(&r) = self.regs.get(n) {
            return r;
        }
        let r = self.new_reg(format!("%{}", name_str(n)));
        self.regs.insert(n.clone(), r);
        r
    }

    pub(super) fn emit(&mut self, op: Op) {
        self.body.push(Instr { op, loc: self.loc });
    }

    fn set_loc(&mut self, d: &Option<DebugLoc>) {
        if let Some(d) = d {
            let file = self.cx.file_index(d);
            self.loc = SrcLoc::new(file, d.line, d.col.unwrap_or(0));
        }
    }

    pub(super) fn ty(&self, op: &Operand) -> TypeRef {
        self.cx.m.type_of(op)
    }

    pub(super) fn bits(&self, op: &Operand) -> u32 {
        match self.ty(op).as_ref() {
            Type::IntegerType { bits } => *bits,
            _ => 64,
        }
    }

    pub(super) fn operand(&mut self, op: &Operand) -> Result<Expr, Error> {
        match op {
            Operand::LocalOperand { name, .. } => {
                if self.promoted.contains_key(name) {
                    return Err(self.err(format!(
                        "internal: the stack slot {name} is used as a value"
                    )));
                }
                Ok(Expr::Reg(self.reg(name)))
            }
            Operand::ConstantOperand(c) => {
                let v = self.cx.const_value(c).map_err(|e| self.err(e))?;
                match (self.cx.tls_stride(c), self.tid) {
                    (Some(size), Some(tid)) => {
                        Ok(add(Expr::Const(v), mul(Expr::Reg(tid), size as i64)))
                    }
                    _ => Ok(Expr::Const(v)),
                }
            }
            Operand::MetadataOperand => Err(self.err("metadata used as a value")),
        }
    }

    pub(super) fn run(mut self) -> Result<Function, Error> {
        let f = self.f;
        for (k, bb) in f.basic_blocks.iter().enumerate() {
            self.block_index.insert(bb.name.clone(), k);
            for i in &bb.instrs {
                if let Some(d) = i.try_get_result() {
                    self.defs.insert(d.clone(), i);
                }
            }
        }
        self.find_promotable();
        if let Some(tid) = self.tid {
            self.thread_id_below_copies(
                tid,
                format!(
                    "in function `{}`: thread-local storage in a thread with id {TLS_THREADS} \
                     or more\n  help: fencer keeps {TLS_THREADS} copies of each thread-local \
                     variable; threads are numbered in creation order",
                    f.name
                ),
            );
        }
        if self.cx.svcomp && f.name == "reach_error" {
            // Reached through a pointer (direct calls are the violation at their call site).
            self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: "reach_error() is not reached".into(),
            });
        }
        let mut starts = Vec::new();
        let mut stub_starts = Vec::new();
        for (k, bb) in f.basic_blocks.iter().enumerate() {
            starts.push(self.body.len());
            for i in &bb.instrs {
                self.set_loc(&llvm_ir::HasDebugLoc::get_debug_loc(i).clone());
                let mark = self.mark();
                if let Err(e) = self.instr(i) {
                    self.refuse_lazily(mark, e)?;
                }
            }
            self.set_loc(&llvm_ir::HasDebugLoc::get_debug_loc(&bb.term).clone());
            let mark = self.mark();
            if let Err(e) = self.terminator(k, &bb.term) {
                self.refuse_lazily(mark, e)?;
            }
            // Edge stubs (the phi copies of an edge, then a jump to its block) right after
            // their block, so that a jump backwards is a loop's back edge and nothing else:
            // loop bounds and spin pruning count back edges.
            let stubs = std::mem::take(&mut self.stubs);
            for (succ, copies) in stubs {
                stub_starts.push(self.body.len());
                self.emit_copies(copies);
                self.fixups
                    .push((self.body.len(), Slot::Jump, Target::Block(succ)));
                self.emit(Op::Jump(0));
            }
        }
        for (pc, slot, target) in std::mem::take(&mut self.fixups) {
            let to = match target {
                Target::Block(b) => starts[b],
                Target::Stub(s) => stub_starts[s],
            } as u32;
            match (&mut self.body[pc].op, slot) {
                (Op::Jump(t), Slot::Jump) => *t = to,
                (Op::Branch { then_to, .. }, Slot::Then) => *then_to = to,
                (Op::Branch { else_to, .. }, Slot::Else) => *else_to = to,
                _ => unreachable!("fixups name the slot they were made for"),
            }
        }
        Ok(Function {
            name: f.name.clone(),
            params: f.parameters.len() as u32,
            reg_names: self.reg_names,
            body: self.body,
            loc: f
                .debugloc
                .as_ref()
                .map(|d| SrcLoc::new(0, d.line, d.col.unwrap_or(0)))
                .unwrap_or(SrcLoc::NONE),
        })
    }

    fn mark(&self) -> (usize, usize, usize, usize) {
        (
            self.body.len(),
            self.fixups.len(),
            self.stubs.len(),
            self.stub_count,
        )
    }

    /// An instruction the lowering cannot model becomes [`Op::Unsupported`] with the error
    /// it would have given, so that the program is refused only by an execution that gets
    /// there; what the instruction had emitted so far is dropped.
    fn refuse_lazily(&mut self, mark: (usize, usize, usize, usize), e: Error) -> Result<(), Error> {
        if std::mem::take(&mut self.fatal) {
            return Err(e);
        }
        self.body.truncate(mark.0);
        self.fixups.truncate(mark.1);
        self.stubs.truncate(mark.2);
        self.stub_count = mark.3;
        let mut message = e.message;
        if let Some(h) = e.help {
            message = format!("{message}\n  help: {h}");
        }
        self.emit(Op::Unsupported { message });
        Ok(())
    }

    fn emit_copies(&mut self, copies: Vec<(Reg, Expr)>) {
        if copies.is_empty() {
            return;
        }
        if copies.len() == 1 {
            let (dst, e) = copies.into_iter().next().expect("one");
            self.emit(Op::Local { dst, expr: e });
            return;
        }
        // A parallel copy: a phi may read another phi of the same block.
        let tmps: Vec<Reg> = copies
            .iter()
            .map(|_| self.new_reg("%phi.tmp".into()))
            .collect();
        for (t, (_, e)) in tmps.iter().zip(&copies) {
            self.emit(Op::Local {
                dst: *t,
                expr: e.clone(),
            });
        }
        for (t, (dst, _)) in tmps.iter().zip(&copies) {
            self.emit(Op::Local {
                dst: *dst,
                expr: Expr::Reg(*t),
            });
        }
    }

    /// The target of an edge; a stub when the successor starts with phis.
    fn target(&mut self, from: usize, to: &Name) -> Result<Target, Error> {
        self.target_with(from, to, false)
    }

    /// A conditional edge: a backward one goes through a stub, so that every back edge is
    /// an unconditional jump (the shape the spin-loop passes recognise).
    fn cond_target(&mut self, from: usize, to: &Name) -> Result<Target, Error> {
        self.target_with(from, to, true)
    }

    fn target_with(&mut self, from: usize, to: &Name, conditional: bool) -> Result<Target, Error> {
        let Some(&succ) = self.block_index.get(to) else {
            return Err(self.err(format!("branch to unknown block {to}")));
        };
        let pred_name = &self.f.basic_blocks[from].name;
        let mut copies = Vec::new();
        for i in &self.f.basic_blocks[succ].instrs {
            let Instruction::Phi(p) = i else { break };
            let Some((v, _)) = p.incoming_values.iter().find(|(_, b)| b == pred_name) else {
                return Err(self.err(format!("phi {} has no value for its predecessor", p.dest)));
            };
            let e = self.operand(v)?;
            let dst = self.reg(&p.dest);
            copies.push((dst, e));
        }
        if copies.is_empty() && !(conditional && succ <= from) {
            return Ok(Target::Block(succ));
        }
        self.stubs.push((succ, copies));
        self.stub_count += 1;
        Ok(Target::Stub(self.stub_count - 1))
    }

    fn jump(&mut self, t: Target) {
        self.fixups.push((self.body.len(), Slot::Jump, t));
        self.emit(Op::Jump(0));
    }

    fn terminator(&mut self, k: usize, t: &Terminator) -> Result<(), Error> {
        match t {
            Terminator::Ret(r) => {
                let v = match &r.return_operand {
                    Some(o) => Some(self.operand(o)?),
                    None => None,
                };
                // Returning from `main` ends the process (the wrapper that called it
                // exits): its locals live on for the threads still running until then.
                if self.f.name != "main" {
                    for s in self.stack.clone().into_iter().rev() {
                        self.emit(Op::Free(Expr::Reg(s)));
                    }
                }
                self.emit(Op::Return(v));
            }
            Terminator::Br(b) => {
                let t = self.target(k, &b.dest)?;
                self.jump(t);
            }
            Terminator::CondBr(c) => {
                let cond = self.operand(&c.condition)?;
                let a = self.cond_target(k, &c.true_dest)?;
                let b = self.cond_target(k, &c.false_dest)?;
                let pc = self.body.len();
                self.fixups.push((pc, Slot::Then, a));
                self.fixups.push((pc, Slot::Else, b));
                self.emit(Op::Branch {
                    cond,
                    then_to: 0,
                    else_to: 0,
                });
            }
            Terminator::Switch(s) => {
                let v = self.operand(&s.operand)?;
                for (c, dest) in &s.dests {
                    let cv = self.cx.const_value(c).map_err(|e| self.err(e))?;
                    let t = self.cond_target(k, dest)?;
                    let pc = self.body.len();
                    self.fixups.push((pc, Slot::Then, t));
                    self.emit(Op::Branch {
                        cond: Expr::bin(BinOp::Eq, v.clone(), Expr::Const(cv)),
                        then_to: 0,
                        else_to: pc as u32 + 1,
                    });
                }
                let t = self.target(k, &s.default_dest)?;
                self.jump(t);
            }
            Terminator::Unreachable(_) => {
                // Reached only after calls that do not return (assert, abort, exit), whose
                // lowering already ends the thread; reaching it otherwise is undefined
                // behaviour, reported as a violation.
                self.emit(Op::Assert {
                    cond: Expr::Const(0),
                    text: "unreachable code is not reached".into(),
                });
            }
            other => return Err(self.err(format!("the terminator `{other}` is not supported"))),
        }
        Ok(())
    }

    pub(super) fn local(&mut self, dest: &Name, expr: Expr) {
        let dst = self.reg(dest);
        self.emit(Op::Local { dst, expr });
    }
}
