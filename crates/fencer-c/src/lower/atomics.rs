//! Atomics and fences: `fence`, `cmpxchg` and `atomicrmw` with their TSO and PSO
//! fences (see the mapping in the parent module), inline-assembly fences, Nidhugg's
//! `__VERIFIER_*_await_*`, and what the textual IR tells of fences and assembly.

use super::{name_str, wrap, FnLower};
use crate::Error;
use fencer_ir::{BinOp, Expr, FenceKind, Op, RmwOp};
use fencer_memory::ModelKind;
use llvm_ir::instruction::{Atomicity, MemoryOrdering, RMWBinOp};
use llvm_ir::{Operand, Type};
use std::collections::HashMap;

/// What the LLVM C API does not tell reliably, read from the textual IR per function, in
/// order of appearance: inline-assembly strings (hidden by the API) and each fence's scope
/// and order (LLVM 14's `LLVMGetOrdering` and `LLVMIsAtomicSingleThread` read a fence as if
/// it were another kind of instruction, and return garbage).
#[derive(Default, Clone)]
pub(super) struct TextFacts {
    asm: Vec<String>,
    fences: Vec<(bool, MemoryOrdering)>,
}

pub(super) fn scan_text(text: &str) -> HashMap<String, TextFacts> {
    let mut out: HashMap<String, TextFacts> = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("define ") {
            current = rest.find('@').map(|i| {
                let name = &rest[i + 1..];
                let end = name.find('(').unwrap_or(name.len());
                name[..end].trim_matches('"').to_string()
            });
            continue;
        }
        let Some(f) = &current else { continue };
        let code = line.split(", !dbg").next().unwrap_or(line).trim_start();
        if code.starts_with("fence ") {
            let ord = if code.contains("seq_cst") {
                MemoryOrdering::SequentiallyConsistent
            } else if code.contains("acq_rel") {
                MemoryOrdering::AcquireRelease
            } else if code.contains("release") {
                MemoryOrdering::Release
            } else {
                MemoryOrdering::Acquire
            };
            out.entry(f.clone())
                .or_default()
                .fences
                .push((code.contains("syncscope(\"singlethread\")"), ord));
        }
        for marker in [" asm sideeffect ", " asm inteldialect ", " asm "] {
            if let Some(i) = line.find(marker) {
                let rest = &line[i + marker.len()..];
                let rest = rest.trim_start_matches(|c: char| c != '"');
                let body = rest.get(1..).unwrap_or("");
                let end = body.find('"').unwrap_or(body.len());
                out.entry(f.clone())
                    .or_default()
                    .asm
                    .push(unescape(&body[..end]));
                break;
            }
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 2 < b.len() + 1 {
            if let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl<'a, 'm> FnLower<'a, 'm> {
    /// A full fence under PSO only (TSO's read-modify-writes drain the buffer anyway).
    pub(super) fn pso_fence(&mut self) {
        if self.cx.model == ModelKind::Pso {
            self.emit(Op::Fence(FenceKind::Full));
        }
    }

    /// A store-store fence, which orders something under PSO only: TSO and SC keep store
    /// order, and an event that changes nothing would only cost exploration.
    pub(super) fn store_fence(&mut self) {
        if self.cx.model == ModelKind::Pso {
            self.emit(Op::Fence(FenceKind::StoreStore));
        }
    }

    pub(super) fn full_fence(&mut self) {
        if self.cx.model != ModelKind::Sc {
            self.emit(Op::Fence(FenceKind::Full));
        }
    }

    /// A fence before a read-modify-write of this order under PSO: a full one for seq_cst,
    /// a store-store one for release and acq_rel (TSO read-modify-writes drain the buffer
    /// by themselves).
    fn rmw_fence(&mut self, a: &Atomicity) {
        match a.mem_ordering {
            MemoryOrdering::SequentiallyConsistent => self.pso_fence(),
            MemoryOrdering::Release | MemoryOrdering::AcquireRelease => self.store_fence(),
            _ => {}
        }
    }

    /// A `fence`, its order read from the text (see [`TextFacts`]).
    pub(super) fn fence(&mut self) -> Result<(), Error> {
        let Some((single, ord)) = self
            .cx
            .facts
            .get(&self.f.name)
            .and_then(|f| f.fences.get(self.fence_next).copied())
        else {
            return Err(self.err("a fence whose order cannot be read"));
        };
        self.fence_next += 1;
        if single {
            // atomic_signal_fence: orders against signal handlers only.
            return Ok(());
        }
        match ord {
            MemoryOrdering::SequentiallyConsistent => self.full_fence(),
            MemoryOrdering::Release | MemoryOrdering::AcquireRelease => self.store_fence(),
            _ => {}
        }
        Ok(())
    }

    /// A `cmpxchg`: one read-modify-write; its old value and success are kept for
    /// the `extractvalue`s that read them.
    pub(super) fn compare_exchange(
        &mut self,
        x: &llvm_ir::instruction::CmpXchg,
    ) -> Result<(), Error> {
        self.rmw_fence(&x.atomicity);
        let addr = self.addr(&x.address)?;
        let expected = self.operand(&x.expected)?;
        let new = self.operand(&x.replacement)?;
        let name = name_str(&x.dest);
        let old = self.new_reg(format!("%{name}.old"));
        let ok = self.new_reg(format!("%{name}.ok"));
        self.emit(Op::Rmw {
            dst: old,
            addr,
            op: RmwOp::Cas {
                expected: expected.clone(),
                new,
            },
        });
        self.emit(Op::Local {
            dst: ok,
            expr: Expr::bin(BinOp::Eq, Expr::Reg(old), expected),
        });
        self.cmpxchg.insert(x.dest.clone(), (old, ok));
        Ok(())
    }

    /// An `atomicrmw`: one read-modify-write.
    pub(super) fn atomic_rmw(&mut self, x: &llvm_ir::instruction::AtomicRMW) -> Result<(), Error> {
        self.rmw_fence(&x.atomicity);
        let bits = self.bits(&x.value);
        let addr = self.addr(&x.address)?;
        let value = self.operand(&x.value)?;
        let dst = self.reg(&x.dest);
        let fetch = |op| RmwOp::Fetch {
            op,
            value: value.clone(),
            bits: bits as u8,
        };
        let op = match x.operation {
            RMWBinOp::Xchg => RmwOp::Xchg(value.clone()),
            RMWBinOp::Add if bits == 64 => RmwOp::FetchAdd(value.clone()),
            RMWBinOp::Add => fetch(BinOp::Add),
            RMWBinOp::Sub => fetch(BinOp::Sub),
            RMWBinOp::And => fetch(BinOp::And),
            RMWBinOp::Nand => fetch(BinOp::Nand),
            RMWBinOp::Or => fetch(BinOp::Or),
            RMWBinOp::Xor => fetch(BinOp::Xor),
            RMWBinOp::Max => fetch(BinOp::Max),
            RMWBinOp::Min => fetch(BinOp::Min),
            RMWBinOp::UMax => fetch(BinOp::UMax),
            RMWBinOp::UMin => fetch(BinOp::UMin),
            other => {
                return Err(self.err(format!("the atomic operation `{other:?}` is not supported")))
            }
        };
        self.emit(Op::Rmw { dst, addr, op });
        Ok(())
    }

    /// An `extractvalue`, of a `cmpxchg`'s result only.
    pub(super) fn extract_value(
        &mut self,
        x: &llvm_ir::instruction::ExtractValue,
    ) -> Result<(), Error> {
        let src = match &x.aggregate {
            Operand::LocalOperand { name, .. } => self.cmpxchg.get(name).copied(),
            _ => None,
        };
        let Some((old, ok)) = src else {
            return Err(self.err(
                "aggregate values (structs passed by value) are not supported, except \
                 the result of a compare-and-swap",
            ));
        };
        let r = if x.indices.first() == Some(&0) {
            old
        } else {
            ok
        };
        self.local(&x.dest, Expr::Reg(r));
        Ok(())
    }

    pub(super) fn inline_asm(&mut self) -> Result<(), Error> {
        let list = self
            .cx
            .facts
            .get(&self.f.name)
            .map(|f| f.asm.clone())
            .unwrap_or_default();
        let Some(text) = list.get(self.asm_next).cloned() else {
            return Err(self.err("inline assembly whose text cannot be read"));
        };
        self.asm_next += 1;
        let norm: String = text
            .to_ascii_lowercase()
            .split([';', '\n'])
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(";");
        match norm.as_str() {
            "" => {}
            "mfence"
            | "lock addl $0,0(%%rsp)"
            | "lock; addl $0,0(%%rsp)"
            | "lock orl $0,(%%rsp)" => self.full_fence(),
            "sfence" => self.store_fence(),
            "lfence" => {}
            _ => return Err(Error {
                help: Some(
                    "fencer understands `asm volatile(\"mfence\")`, `sfence`, `lfence` and empty \
                         compiler barriers `asm volatile(\"\" ::: \"memory\")`; use \
                         __sync_synchronize() or <stdatomic.h> for anything else"
                        .into(),
                ),
                ..self.err(format!("inline assembly `{text}` is not supported"))
            }),
        }
        Ok(())
    }

    /// Nidhugg's awaits (`nidhugg_await.h`): `__VERIFIER_load_await_T(p, cond, operand)`
    /// returns `*p` once `*p cond operand` holds, and `__VERIFIER_xchg_await_T(p, v, cond,
    /// operand)` also writes `v` in the same atomic step; until then the thread waits.
    /// `cond` is Nidhugg's bit set, constant: 8 signed, 4 less, 2 equal, 1 greater (`0b010`
    /// is `==`, `0b101` is `!=`, `0b1100` signed `<`). The wait is a loop whose iterations
    /// that find the condition false only read, so the spin-loop rewrite turns it into
    /// the blocking step the await is: one execution per value it can return, and a
    /// wait nothing ends is a hang. The exchange is a compare-and-swap of the value that
    /// satisfied the condition, so it writes only while that value is still there.
    pub(super) fn await_call(
        &mut self,
        c: &'m llvm_ir::instruction::Call,
        name: &str,
    ) -> Result<(), Error> {
        let xchg = name.starts_with("__VERIFIER_xchg_await");
        let bits = match self.cx.m.type_of(c).as_ref() {
            Type::IntegerType { bits } => *bits,
            t => {
                return Err(self.err(format!(
                    "`{name}` returns `{t}`: an await reads an integer (Nidhugg's `_i8` to `_i64`)"
                )))
            }
        };
        let k = usize::from(xchg);
        if c.arguments.len() < k + 3 {
            return Err(self.err(format!(
                "`{name}` takes {} arguments (the address, {}the condition and its operand)",
                k + 3,
                if xchg { "the value to write, " } else { "" }
            )));
        }
        let addr = self.addr(&c.arguments[0].0)?;
        let new = if xchg { Some(self.arg(c, 1)?) } else { None };
        let cond = self.arg(c, k + 1)?;
        let operand = wrap(self.arg(c, k + 2)?, bits);
        let old = self.new_reg("%await".into());
        let rel = |op: BinOp| Expr::bin(op, Expr::Reg(old), operand.clone());
        let holds = match cond {
            // The usual case, and a readable condition in traces.
            Expr::Const(cond) => {
                let signed = cond & 0b1000 != 0;
                let rels: Vec<BinOp> = [
                    (0b0100, if signed { BinOp::Lt } else { BinOp::ULt }),
                    (0b0010, BinOp::Eq),
                    (0b0001, if signed { BinOp::Gt } else { BinOp::UGt }),
                ]
                .into_iter()
                .filter(|(bit, _)| cond & bit != 0)
                .map(|(_, op)| op)
                .collect();
                if rels.is_empty() || cond & !0b1111 != 0 {
                    return Err(self.err(format!(
                        "`{name}`: condition {cond:#b} is not one of Nidhugg's (bits 8 signed, 4 less, 2 equal, 1 greater, at least one of the last three)"
                    )));
                }
                rels.into_iter()
                    .map(rel)
                    .reduce(|a, b| Expr::bin(BinOp::LogOr, a, b))
                    .expect("a relation")
            }
            // A condition passed down at run time (Nidhugg's tests wrap the call).
            cond => {
                let bit = |b: i64| {
                    Expr::bin(
                        BinOp::Ne,
                        Expr::bin(BinOp::And, cond.clone(), Expr::Const(b)),
                        Expr::Const(0),
                    )
                };
                let either = |signed_op: BinOp, unsigned_op: BinOp| {
                    Expr::bin(
                        BinOp::LogOr,
                        Expr::bin(BinOp::LogAnd, bit(0b1000), rel(signed_op)),
                        Expr::bin(
                            BinOp::LogAnd,
                            Expr::bin(BinOp::Eq, bit(0b1000), Expr::Const(0)),
                            rel(unsigned_op),
                        ),
                    )
                };
                let less = Expr::bin(BinOp::LogAnd, bit(0b0100), either(BinOp::Lt, BinOp::ULt));
                let equal = Expr::bin(BinOp::LogAnd, bit(0b0010), rel(BinOp::Eq));
                let greater = Expr::bin(BinOp::LogAnd, bit(0b0001), either(BinOp::Gt, BinOp::UGt));
                Expr::bin(BinOp::LogOr, Expr::bin(BinOp::LogOr, less, equal), greater)
            }
        };
        let head = self.body.len() as u32;
        self.emit(Op::Load {
            dst: old,
            addr: addr.clone(),
            copy: false,
        });
        if bits < 64 {
            self.emit(Op::Local {
                dst: old,
                expr: wrap(Expr::Reg(old), bits),
            });
        }
        let at = self.body.len() as u32;
        self.emit(Op::Branch {
            cond: holds,
            then_to: at + 2,
            else_to: at + 1,
        });
        self.emit(Op::Jump(head));
        if let Some(new) = new {
            let got = self.new_reg("%await_xchg".into());
            self.emit(Op::Rmw {
                dst: got,
                addr,
                op: RmwOp::Cas {
                    expected: Expr::Reg(old),
                    new: wrap(new, bits),
                },
            });
            let at = self.body.len() as u32;
            self.emit(Op::Branch {
                cond: Expr::bin(BinOp::Eq, wrap(Expr::Reg(got), bits), Expr::Reg(old)),
                then_to: at + 2,
                else_to: at + 1,
            });
            self.emit(Op::Jump(head));
        }
        self.set_result(c, Expr::Reg(old));
        Ok(())
    }
}
