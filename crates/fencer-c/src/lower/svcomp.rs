//! SV-COMP's conventions and verdict calls: `reach_error`, `abort`, `assert`,
//! `__VERIFIER_assume`, `__VERIFIER_atomic_*` (under a hidden mutex) and
//! `__VERIFIER_nondet_*` inputs.

use super::Ctx;
use super::FnLower;
use crate::Error;
use fencer_ir::{Addr, BinOp, Expr, ObjId, ObjKind, Object, Op, SrcLoc};
use llvm_ir::{Module, Type};

/// Whether the program follows SV-COMP's conventions, one rule for every engine: it names
/// SV-COMP's error function (`reach_error`, or `__VERIFIER_error` in older tasks) or its
/// `assume_abort_if_not`. Then calling the error function is the violation, `abort()`
/// discards the execution (it is how `assume_abort_if_not` assumes), and a hang is no
/// violation (the property is reachability of the error call).
pub(super) fn svcomp_conventions(m: &Module) -> bool {
    const NAMES: [&str; 3] = ["reach_error", "__VERIFIER_error", "assume_abort_if_not"];
    m.functions.iter().any(|f| NAMES.contains(&f.name.as_str()))
        || m.func_declarations
            .iter()
            .any(|f| NAMES.contains(&f.name.as_str()))
}

impl<'m> Ctx<'m> {
    pub(super) fn hidden_mutex(&mut self) -> ObjId {
        if let Some(o) = self.atomic_mutex {
            return o;
        }
        let id = self.objects.len() as ObjId;
        self.objects.push(Object {
            name: "__VERIFIER_atomic".into(),
            kind: ObjKind::Mutex,
            size: 1,
            init: Vec::new(),
            is_array: false,
            cell_names: Vec::new(),
            loc: SrcLoc::NONE,
        });
        self.atomic_mutex = Some(id);
        id
    }
}

impl<'a, 'm> FnLower<'a, 'm> {
    /// SV-COMP's and C's verdict calls and inputs; whether `name` is one of them.
    pub(super) fn external_svcomp(
        &mut self,
        c: &'m llvm_ir::instruction::Call,
        name: &str,
    ) -> Result<bool, Error> {
        match name {
            // SV-COMP: `abort()` is how `assume_abort_if_not` discards an execution, no
            // violation. The thread stops for good and the execution is discarded; what
            // other threads could do before it is explored in the executions where this
            // thread is slower.
            "abort" if self.cx.svcomp => self.emit(Op::Assume(Expr::Const(0))),
            "__assert_fail" | "__assert" | "__assert_rtn" => {
                let text = match self.arg(c, 0)? {
                    Expr::Const(p) => self.cx.c_string(p).unwrap_or_else(|| "assertion".into()),
                    _ => "assertion".into(),
                };
                self.emit(Op::Assert {
                    cond: Expr::Const(0),
                    text,
                });
            }
            "__VERIFIER_error" | "reach_error" => self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: format!("{name}() is not reached"),
            }),
            "abort" => self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: "abort() is not called".into(),
            }),
            "__VERIFIER_assume" => {
                let e = self.arg(c, 0)?;
                self.emit(Op::Assume(Expr::bin(BinOp::Ne, e, Expr::Const(0))));
            }
            "__VERIFIER_atomic_begin" => {
                let m = self.cx.hidden_mutex();
                self.emit(Op::Lock(Addr::scalar(m)));
            }
            "__VERIFIER_atomic_end" => {
                let m = self.cx.hidden_mutex();
                self.emit(Op::Unlock(Addr::scalar(m)));
            }
            n if n.starts_with("__VERIFIER_nondet") && self.cx.inputs => {
                if let Some(d) = &c.dest {
                    let bits = match self.cx.m.type_of(c).as_ref() {
                        Type::IntegerType { bits } => (*bits).min(64) as u8,
                        _ => {
                            return Err(self.err(format!(
                                "`{n}()` does not return an integer: only integer inputs are \
                                 supported"
                            )))
                        }
                    };
                    let dst = self.reg(d);
                    self.emit(Op::Nondet { dst, bits });
                }
            }
            n if n.starts_with("__VERIFIER_nondet") => {
                self.fatal = true;
                return Err(Error {
                    help: Some(
                        "use --engine abpress: the symbolic engine treats inputs as unknown \
                         values; the other engines explore schedules, not input values (or \
                         give the variable a fixed value, e.g. with -D)"
                            .into(),
                    ),
                    ..self.err(format!("nondeterministic input `{n}()` is not supported"))
                });
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
