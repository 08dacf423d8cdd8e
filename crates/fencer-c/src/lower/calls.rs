//! Calls: to the program's functions, through pointers, to the functions it declares
//! and does not define (each handled by its module, or refused), and the wrappers that
//! give declared functions an address.

use super::{name_str, FnLower};
use crate::Error;
use fencer_ir::{Addr, Expr, Op};
use llvm_ir::constant::Constant;
use llvm_ir::terminator::Terminator;
use llvm_ir::{Instruction, Module, Name, Operand, Type};

/// The external functions the lowering knows, for the error that lists them.
const KNOWN: &str =
    "pthread_create/join/exit/self/detach/equal/once, pthread_mutex_init/lock/trylock/unlock/\
    destroy, pthread_cond_init/wait/signal/broadcast/destroy, pthread_rwlock_*, \
    pthread_barrier_*, pthread_key_*/getspecific/setspecific, sem_init/wait/trywait/post/\
    getvalue/destroy, malloc, calloc, free, assert, abort, exit, strlen, strnlen, strcpy, \
    strncpy, strcat, strncat, strcmp, strncmp, strchr, strrchr, memcmp, memchr, memcpy, \
    memmove, memset, abs, labs, llabs, __VERIFIER_error/assume/atomic_begin/atomic_end, \
    Nidhugg's __VERIFIER_load_await_*/xchg_await_*, \
    printf and puts (ignored)";

/// A function the program declares and does not define, reached through a pointer (a
/// callback such as `free`, a thread start): a function whose body calls it directly, so
/// that the library functions fencer knows work the same both ways, and the others are
/// refused when called.
pub(super) fn wrapper(m: &Module, d: &llvm_ir::function::FunctionDeclaration) -> llvm_ir::Function {
    let mut f = llvm_ir::Function::new(d.name.clone());
    f.parameters = d.parameters.clone();
    f.return_type = d.return_type.clone();
    f.is_var_arg = d.is_var_arg;
    let ty = m.types.func_type(
        d.return_type.clone(),
        d.parameters.iter().map(|p| p.ty.clone()).collect(),
        d.is_var_arg,
    );
    let callee = Operand::ConstantOperand(llvm_ir::ConstantRef::new(Constant::GlobalReference {
        name: Name::from(d.name.clone()),
        ty,
    }));
    let dest = (!matches!(d.return_type.as_ref(), Type::VoidType))
        .then(|| Name::from("fencer.result".to_string()));
    let call = llvm_ir::instruction::Call {
        function: either::Either::Right(callee),
        arguments: d
            .parameters
            .iter()
            .map(|p| {
                let op = Operand::LocalOperand {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                };
                (op, Vec::new())
            })
            .collect(),
        return_attributes: Vec::new(),
        dest: dest.clone(),
        function_attributes: Vec::new(),
        is_tail_call: false,
        calling_convention: llvm_ir::function::CallingConvention::C,
        debugloc: None,
    };
    let mut bb = llvm_ir::BasicBlock::new(Name::from("entry".to_string()));
    bb.instrs.push(Instruction::Call(call));
    bb.term = Terminator::Ret(llvm_ir::terminator::Ret {
        return_operand: dest.map(|name| Operand::LocalOperand {
            name,
            ty: d.return_type.clone(),
        }),
        debugloc: None,
    });
    f.basic_blocks.push(bb);
    f
}

impl<'a, 'm> FnLower<'a, 'm> {
    /// A function named by a call or by pthread_create.
    pub(super) fn callee_name(op: &Operand) -> Option<String> {
        let Operand::ConstantOperand(c) = op else {
            return None;
        };
        let mut c: &Constant = c;
        loop {
            match c {
                Constant::GlobalReference { name, .. } => return Some(name_str(name)),
                Constant::BitCast(b) => c = &b.operand,
                _ => return None,
            }
        }
    }

    pub(super) fn is_null(op: &Operand) -> bool {
        matches!(op, Operand::ConstantOperand(c) if matches!(c.as_ref(), Constant::Null(_))
            || matches!(c.as_ref(), Constant::Int { value: 0, .. }))
    }

    pub(super) fn arg(&mut self, c: &llvm_ir::instruction::Call, k: usize) -> Result<Expr, Error> {
        match c.arguments.get(k) {
            Some((o, _)) => self.operand(o),
            None => Err(self.err(format!("expected at least {} arguments", k + 1))),
        }
    }

    pub(super) fn set_result(&mut self, c: &llvm_ir::instruction::Call, e: Expr) {
        if let Some(d) = &c.dest {
            self.local(d, e);
        }
    }

    pub(super) fn call(&mut self, c: &'m llvm_ir::instruction::Call) -> Result<(), Error> {
        let callee = match &c.function {
            either::Either::Left(_) => return self.inline_asm(),
            either::Either::Right(op) => Self::callee_name(op),
        };
        let Some(name) = callee else {
            let either::Either::Right(op) = &c.function else {
                unreachable!("inline assembly returned above")
            };
            let target = self.operand(op)?;
            let mut args = Vec::new();
            for k in 0..c.arguments.len() {
                args.push(self.arg(c, k)?);
            }
            let dst = c.dest.as_ref().map(|d| self.reg(d));
            self.emit(Op::CallIndirect { dst, target, args });
            return Ok(());
        };
        if self.cx.svcomp && name == "reach_error" {
            self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: "reach_error() is not reached".into(),
            });
            return Ok(());
        }
        if name.starts_with("llvm.dbg.")
            || name.starts_with("llvm.lifetime.")
            || name.starts_with("llvm.stacksave")
            || name.starts_with("llvm.stackrestore")
        {
            return Ok(());
        }
        if name.starts_with("llvm.expect.") {
            let e = self.arg(c, 0)?;
            self.set_result(c, e);
            return Ok(());
        }
        if name.starts_with("llvm.memcpy.") || name.starts_with("llvm.memmove.") {
            return self.memcpy(c);
        }
        if name.starts_with("llvm.memset.") {
            return self.memset(c);
        }
        if let Some(&fid) = self.cx.funcs.get(&name) {
            let callee = self
                .cx
                .m
                .functions
                .iter()
                .find(|f| f.name == name)
                .expect("defined");
            let varargs = callee.is_var_arg && callee.parameters.len() <= c.arguments.len();
            if callee.parameters.len() != c.arguments.len() && !varargs {
                return Err(self.err(format!(
                    "`{name}` takes {} arguments and is called with {}",
                    callee.parameters.len(),
                    c.arguments.len()
                )));
            }
            let mut args = Vec::new();
            for k in 0..callee.parameters.len() {
                args.push(self.arg(c, k)?);
            }
            let dst = c.dest.as_ref().map(|d| self.reg(d));
            let atomic = name.starts_with("__VERIFIER_atomic_");
            let m = atomic.then(|| self.cx.hidden_mutex());
            if let Some(m) = m {
                self.emit(Op::Lock(Addr::scalar(m)));
            }
            self.emit(Op::Call {
                dst,
                func: fid,
                args,
            });
            if let Some(m) = m {
                self.emit(Op::Unlock(Addr::scalar(m)));
            }
            return Ok(());
        }
        self.external(c, &name)
    }

    pub(super) fn callee_str(&self, c: &llvm_ir::instruction::Call) -> String {
        c.function
            .as_ref()
            .right()
            .and_then(Self::callee_name)
            .unwrap_or_default()
    }

    fn external(&mut self, c: &'m llvm_ir::instruction::Call, name: &str) -> Result<(), Error> {
        if self.external_pthread(c, name)?
            || self.external_svcomp(c, name)?
            || self.external_heap(c, name)?
        {
            return Ok(());
        }
        match name {
            "usleep" | "sleep" | "printf" | "puts" | "putchar" | "fprintf" | "fflush" => {
                self.set_result(c, Expr::Const(0))
            }
            n if n.starts_with("__VERIFIER_load_await")
                || n.starts_with("__VERIFIER_xchg_await") =>
            {
                self.await_call(c, n)?
            }
            _ => {
                return Err(Error {
                    help: Some(format!("fencer knows these library functions: {KNOWN}")),
                    ..self.err(format!(
                    "call to `{name}`, which the program does not define and fencer does not know"
                ))
                })
            }
        }
        Ok(())
    }
}
