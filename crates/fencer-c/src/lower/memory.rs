//! Memory: stack slots (promoted to registers when their address never escapes),
//! allocas, loads, stores, address arithmetic (`getelementptr`), `memcpy`/`memmove`/
//! `memset`, and the heap (`malloc`, `calloc`, `free`).

use super::{add, canon, mul, name_str, wrap, FnLower};
use crate::layout::Leaf;
use crate::Error;
use fencer_ir::{Addr, BinOp, Expr, Op};
use llvm_ir::constant::Constant;
use llvm_ir::instruction::MemoryOrdering;
use llvm_ir::terminator::Terminator;
use llvm_ir::{Instruction, Name, Operand, Type, TypeRef};
use std::collections::HashMap;

impl<'a, 'm> FnLower<'a, 'm> {
    /// Every operand of the instructions the lowering accepts (for escape analysis).
    fn operands(i: &Instruction) -> Vec<&Operand> {
        use Instruction as I;
        match i {
            I::Add(x) => vec![&x.operand0, &x.operand1],
            I::Sub(x) => vec![&x.operand0, &x.operand1],
            I::Mul(x) => vec![&x.operand0, &x.operand1],
            I::UDiv(x) => vec![&x.operand0, &x.operand1],
            I::SDiv(x) => vec![&x.operand0, &x.operand1],
            I::URem(x) => vec![&x.operand0, &x.operand1],
            I::SRem(x) => vec![&x.operand0, &x.operand1],
            I::And(x) => vec![&x.operand0, &x.operand1],
            I::Or(x) => vec![&x.operand0, &x.operand1],
            I::Xor(x) => vec![&x.operand0, &x.operand1],
            I::Shl(x) => vec![&x.operand0, &x.operand1],
            I::LShr(x) => vec![&x.operand0, &x.operand1],
            I::AShr(x) => vec![&x.operand0, &x.operand1],
            I::ICmp(x) => vec![&x.operand0, &x.operand1],
            I::Load(x) => vec![&x.address],
            I::Store(x) => vec![&x.address, &x.value],
            I::CmpXchg(x) => vec![&x.address, &x.expected, &x.replacement],
            I::AtomicRMW(x) => vec![&x.address, &x.value],
            I::GetElementPtr(x) => {
                let mut v = vec![&x.address];
                v.extend(x.indices.iter());
                v
            }
            I::Trunc(x) => vec![&x.operand],
            I::ZExt(x) => vec![&x.operand],
            I::SExt(x) => vec![&x.operand],
            I::PtrToInt(x) => vec![&x.operand],
            I::IntToPtr(x) => vec![&x.operand],
            I::BitCast(x) => vec![&x.operand],
            I::AddrSpaceCast(x) => vec![&x.operand],
            I::Freeze(x) => vec![&x.operand],
            I::Select(x) => vec![&x.condition, &x.true_value, &x.false_value],
            I::Phi(x) => x.incoming_values.iter().map(|(o, _)| o).collect(),
            I::ExtractValue(x) => vec![&x.aggregate],
            I::Call(x) => x.arguments.iter().map(|(o, _)| o).collect(),
            _ => Vec::new(),
        }
    }

    pub(super) fn find_promotable(&mut self) {
        let mut candidates: HashMap<Name, TypeRef> = HashMap::new();
        for bb in &self.f.basic_blocks {
            for i in &bb.instrs {
                if let Instruction::Alloca(a) = i {
                    let one = matches!(&a.num_elements, Operand::ConstantOperand(c)
                        if matches!(c.as_ref(), Constant::Int { value: 1, .. }));
                    if one
                        && matches!(
                            a.allocated_type.as_ref(),
                            Type::IntegerType { bits: 1..=64 } | Type::PointerType { .. }
                        )
                    {
                        candidates.insert(a.dest.clone(), a.allocated_type.clone());
                    }
                }
            }
        }
        // Casts of a slot's address to a pointer to a value of the same width (clang's
        // `__atomic` builtins at -O0 reach their temporaries as `i64*`): loads and stores
        // through them are the slot's, and a cast of a cast is the same slot. Each maps to
        // the slot it names.
        let width = |t: &Type| match t {
            Type::IntegerType { bits } => Some(*bits),
            Type::PointerType { .. } => Some(64),
            _ => None,
        };
        let mut casts: HashMap<Name, Name> = HashMap::new();
        for bb in &self.f.basic_blocks {
            for i in &bb.instrs {
                let Instruction::BitCast(b) = i else { continue };
                let Operand::LocalOperand { name, .. } = &b.operand else {
                    continue;
                };
                let slot = casts.get(name).unwrap_or(name).clone();
                let Some(ty) = candidates.get(&slot) else {
                    continue;
                };
                let same = match b.to_type.as_ref() {
                    Type::PointerType { pointee_type, .. } => {
                        width(pointee_type).is_some() && width(pointee_type) == width(ty)
                    }
                    _ => false,
                };
                if same {
                    casts.insert(b.dest.clone(), slot);
                }
            }
        }
        let mut escaped = Vec::new();
        let mut check = |op: &Operand, ok: bool| {
            if let Operand::LocalOperand { name, .. } = op {
                let slot = casts.get(name).unwrap_or(name);
                if !ok && candidates.contains_key(slot) {
                    escaped.push(slot.clone());
                }
            }
        };
        for bb in &self.f.basic_blocks {
            for i in &bb.instrs {
                match i {
                    Instruction::BitCast(b) if casts.contains_key(&b.dest) => {}
                    Instruction::Load(l) => check(&l.address, true),
                    Instruction::Store(s) => {
                        check(&s.address, true);
                        check(&s.value, false);
                    }
                    Instruction::Call(c) => {
                        let name = c.function.as_ref().right().and_then(Self::callee_name);
                        for (k, (a, _)) in c.arguments.iter().enumerate() {
                            // pthread_create's thread-id out-parameter is an assignment.
                            check(a, k == 0 && name.as_deref() == Some("pthread_create"));
                        }
                    }
                    other => {
                        for op in Self::operands(other) {
                            check(op, false);
                        }
                    }
                }
            }
            if let Terminator::Ret(r) = &bb.term {
                if let Some(op) = &r.return_operand {
                    check(op, false);
                }
            }
            if let Terminator::CondBr(c) = &bb.term {
                check(&c.condition, false);
            }
            if let Terminator::Switch(s) = &bb.term {
                check(&s.operand, false);
            }
        }
        for e in escaped {
            candidates.remove(&e);
        }
        let mut names: Vec<(Name, TypeRef)> = candidates.into_iter().collect();
        names.sort_by_key(|(n, _)| n.to_string());
        for (n, _) in names {
            let s = name_str(&n);
            let var = s.strip_suffix(".addr").unwrap_or(&s).to_string();
            let r = self.new_reg(var);
            self.promoted.insert(n, r);
        }
        for (cast, slot) in casts {
            if let Some(&r) = self.promoted.get(&slot) {
                self.promoted.insert(cast, r);
            }
        }
    }

    pub(super) fn addr(&mut self, op: &Operand) -> Result<Addr, Error> {
        Ok(Addr::Ptr(self.operand(op)?))
    }

    /// An `alloca`: a stack object, or nothing for a slot held in a register.
    pub(super) fn alloca(&mut self, a: &llvm_ir::instruction::Alloca) -> Result<(), Error> {
        if self.promoted.contains_key(&a.dest) {
            return Ok(());
        }
        let size = self
            .cx
            .layout
            .size(&a.allocated_type)
            .map_err(|e| self.err(e))?;
        let n = self.operand(&a.num_elements)?;
        let dst = self.reg(&a.dest);
        self.emit(Op::Alloc {
            dst,
            size: mul(n, size.max(1) as i64),
            zeroed: false,
            stack: true,
        });
        self.stack.push(dst);
        Ok(())
    }

    /// A load: through the pointer, or from the register of a promoted slot.
    pub(super) fn load(&mut self, l: &llvm_ir::instruction::Load) -> Result<(), Error> {
        let dst = self.reg(&l.dest);
        if let Operand::LocalOperand { name, .. } = &l.address {
            if let Some(&p) = self.promoted.get(name) {
                self.emit(Op::Local {
                    dst,
                    expr: Expr::Reg(p),
                });
                return Ok(());
            }
        }
        let ty = self
            .cx
            .pointee(&self.ty(&l.address))
            .map_err(|e| self.err(e))?;
        let bits = match ty.as_ref() {
            Type::IntegerType { bits } => *bits,
            Type::PointerType { .. } => 64,
            t => return Err(self.err(format!("loads of values of type `{t}` are not supported"))),
        };
        let addr = self.addr(&l.address)?;
        self.emit(Op::Load {
            dst,
            addr,
            copy: false,
        });
        if bits < 64 {
            // A narrower load of a wider stored value reads its low bytes.
            self.emit(Op::Local {
                dst,
                expr: wrap(Expr::Reg(dst), bits),
            });
        }
        Ok(())
    }

    /// A store, with the fences of its order (see the module's mapping).
    pub(super) fn store(&mut self, s: &llvm_ir::instruction::Store) -> Result<(), Error> {
        if let Operand::LocalOperand { name, .. } = &s.address {
            if let Some(&p) = self.promoted.get(name) {
                let v = self.operand(&s.value)?;
                self.emit(Op::Local { dst: p, expr: v });
                return Ok(());
            }
        }
        match self.ty(&s.value).as_ref() {
            Type::IntegerType { .. } | Type::PointerType { .. } => {}
            t => return Err(self.err(format!("stores of values of type `{t}` are not supported"))),
        }
        let value = self.operand(&s.value)?;
        let addr = self.addr(&s.address)?;
        let ord = s.atomicity.as_ref().map(|a| a.mem_ordering);
        let release = matches!(
            ord,
            Some(MemoryOrdering::Release | MemoryOrdering::SequentiallyConsistent)
        );
        if ord == Some(MemoryOrdering::SequentiallyConsistent) {
            self.pso_fence();
        } else if release {
            self.store_fence();
        }
        self.emit(Op::Store { addr, value });
        if ord == Some(MemoryOrdering::SequentiallyConsistent) {
            self.full_fence();
        }
        Ok(())
    }

    /// A `getelementptr`: the address plus the offsets its indices select.
    pub(super) fn get_element_ptr(
        &mut self,
        g: &llvm_ir::instruction::GetElementPtr,
    ) -> Result<(), Error> {
        let base = self.operand(&g.address)?;
        let mut cur = self
            .cx
            .pointee(&self.ty(&g.address))
            .map_err(|e| self.err(e))?;
        let mut e = base;
        for (k, idx) in g.indices.iter().enumerate() {
            let ix = self.operand(idx)?;
            if k > 0 {
                let is_struct = matches!(
                    self.cx.resolve(&cur),
                    Type::StructType { .. } | Type::NamedStructType { .. }
                );
                if is_struct {
                    let Expr::Const(fi) = ix else {
                        return Err(self.err("a struct field chosen at run time"));
                    };
                    let off = self
                        .cx
                        .layout
                        .field_offset(&cur, fi as usize)
                        .map_err(|m| self.err(m))?;
                    e = add(e, Expr::Const(off as i64));
                    cur = self
                        .cx
                        .layout
                        .element(&cur, fi as usize)
                        .map_err(|m| self.err(m))?;
                    continue;
                }
                cur = self.cx.layout.element(&cur, 0).map_err(|m| self.err(m))?;
            }
            let size = self.cx.layout.size(&cur).map_err(|m| self.err(m))?;
            e = add(e, mul(ix, size as i64));
        }
        self.local(&g.dest, e);
        Ok(())
    }

    /// The scalar leaves a pointer operand points at, when its type is known.
    fn pointed_leaves(&self, op: &Operand) -> Option<Vec<Leaf>> {
        let mut op = op;
        while let Operand::LocalOperand { name, .. } = op {
            match self.defs.get(name) {
                Some(Instruction::BitCast(b)) => op = &b.operand,
                _ => break,
            }
        }
        let ty = self.cx.pointee(&self.ty(op)).ok()?;
        if matches!(ty.as_ref(), Type::IntegerType { bits: 8 }) {
            return None;
        }
        let mut out = Vec::new();
        self.cx.layout.leaves(&ty, 0, "", &mut out).ok()?;
        Some(out)
    }

    fn const_len(&mut self, c: &llvm_ir::instruction::Call) -> Result<u64, Error> {
        match self.arg(c, 2)? {
            Expr::Const(n) if n >= 0 => Ok(n as u64),
            _ => {
                Err(self.err("memcpy/memset with a length known only at run time is not supported"))
            }
        }
    }

    /// A copy (or fill) whose length is known only at run time: a loop over the cells.
    /// Each cell is loaded and stored whole, so scalars of any width are copied as they are.
    /// `backward` copies from the last cell down (memmove onto a later address).
    fn cell_loop(&mut self, dst: &Expr, src: Option<&Expr>, fill: &Expr, n: &Expr, backward: bool) {
        let i = self.new_reg("%i".into());
        let tmp = self.new_reg("%cell".into());
        let start = if backward { n.clone() } else { Expr::Const(0) };
        self.emit(Op::Local {
            dst: i,
            expr: start,
        });
        let head = self.body.len() as u32;
        let cond = if backward {
            Expr::bin(BinOp::Ne, Expr::Reg(i), Expr::Const(0))
        } else {
            Expr::bin(BinOp::ULt, Expr::Reg(i), n.clone())
        };
        // The body: a step of `i`, the load when copying, the store, the back edge.
        let len = 3 + src.is_some() as u32;
        self.emit(Op::Branch {
            cond,
            then_to: head + 1,
            else_to: head + 1 + len,
        });
        if backward {
            self.emit(Op::Local {
                dst: i,
                expr: Expr::bin(BinOp::Sub, Expr::Reg(i), Expr::Const(1)),
            });
        }
        let value = match src {
            Some(src) => {
                // A copy, like memcpy's: it carries bytes nobody set without judging them.
                self.emit(Op::Load {
                    dst: tmp,
                    addr: Addr::Ptr(add(src.clone(), Expr::Reg(i))),
                    copy: true,
                });
                Expr::Reg(tmp)
            }
            None => fill.clone(),
        };
        self.emit(Op::Store {
            addr: Addr::Ptr(add(dst.clone(), Expr::Reg(i))),
            value,
        });
        if !backward {
            self.emit(Op::Local {
                dst: i,
                expr: Expr::bin(BinOp::Add, Expr::Reg(i), Expr::Const(1)),
            });
        }
        self.emit(Op::Jump(head));
        assert_eq!(self.body.len() as u32, head + 1 + len, "the loop's length");
    }

    pub(super) fn memcpy(&mut self, c: &'m llvm_ir::instruction::Call) -> Result<(), Error> {
        let len = self.arg(c, 2)?;
        if !matches!(len, Expr::Const(_)) {
            let dst = self.arg(c, 0)?;
            let src = self.arg(c, 1)?;
            let name = self.callee_str(c);
            if name.starts_with("llvm.memmove.") {
                // Backward when the destination lies after the source (same object).
                let pc = self.body.len() as u32;
                let br = self.body.len();
                self.emit(Op::Branch {
                    cond: Expr::bin(BinOp::UGt, dst.clone(), src.clone()),
                    then_to: 0,
                    else_to: pc + 1,
                });
                self.cell_loop(&dst, Some(&src), &Expr::Const(0), &len, false);
                let jump = self.body.len();
                self.emit(Op::Jump(0));
                let back = self.body.len() as u32;
                self.cell_loop(&dst, Some(&src), &Expr::Const(0), &len, true);
                let end = self.body.len() as u32;
                if let Op::Branch { then_to, .. } = &mut self.body[br].op {
                    *then_to = back;
                }
                self.body[jump].op = Op::Jump(end);
            } else {
                self.cell_loop(&dst, Some(&src), &Expr::Const(0), &len, false);
            }
            return Ok(());
        }
        let n = self.const_len(c)?;
        let dst = self.arg(c, 0)?;
        let src = self.arg(c, 1)?;
        let leaves = self
            .pointed_leaves(&c.arguments[0].0)
            .or_else(|| self.pointed_leaves(&c.arguments[1].0));
        let offsets: Vec<u64> = match leaves {
            Some(ls) => ls.iter().map(|l| l.offset).filter(|&o| o < n).collect(),
            None => (0..n).collect(),
        };
        let tmp = self.new_reg("%memcpy".into());
        for o in offsets {
            // A copy carries padding and unset fields without reading them as values.
            self.emit(Op::Load {
                dst: tmp,
                addr: Addr::Ptr(add(src.clone(), Expr::Const(o as i64))),
                copy: true,
            });
            self.emit(Op::Store {
                addr: Addr::Ptr(add(dst.clone(), Expr::Const(o as i64))),
                value: Expr::Reg(tmp),
            });
        }
        Ok(())
    }

    pub(super) fn memset(&mut self, c: &'m llvm_ir::instruction::Call) -> Result<(), Error> {
        let len = self.arg(c, 2)?;
        if !matches!(len, Expr::Const(_)) {
            // Byte stores: exact for 0 (the common case) and for arrays of char.
            let dst = self.arg(c, 0)?;
            let byte = wrap(self.arg(c, 1)?, 8);
            self.cell_loop(&dst, None, &byte, &len, false);
            return Ok(());
        }
        let n = self.const_len(c)?;
        let dst = self.arg(c, 0)?;
        let byte = self.arg(c, 1)?;
        let leaves: Vec<(u64, u64)> = match self.pointed_leaves(&c.arguments[0].0) {
            Some(ls) => ls
                .iter()
                .filter(|l| l.offset < n)
                .map(|l| (l.offset, l.size))
                .collect(),
            None => (0..n).map(|o| (o, 1)).collect(),
        };
        for (o, size) in leaves {
            let value = match &byte {
                Expr::Const(b) => {
                    let b = (*b as u64) & 0xff;
                    let mut v = 0u64;
                    for _ in 0..size {
                        v = (v << 8) | b;
                    }
                    Expr::Const(canon(size as u32 * 8, v))
                }
                e if size == 1 => wrap(e.clone(), 8),
                _ => {
                    return Err(
                        self.err("memset of a wide object with a value known only at run time")
                    )
                }
            };
            self.emit(Op::Store {
                addr: Addr::Ptr(add(dst.clone(), Expr::Const(o as i64))),
                value,
            });
        }
        Ok(())
    }

    /// The heap: `malloc`, `calloc` and `free`; whether `name` is one of them.
    pub(super) fn external_heap(
        &mut self,
        c: &'m llvm_ir::instruction::Call,
        name: &str,
    ) -> Result<bool, Error> {
        match name {
            "malloc" => {
                let n = self.arg(c, 0)?;
                let dst = self.reg(c.dest.as_ref().expect("malloc returns a value"));
                self.emit(Op::Alloc {
                    dst,
                    size: n,
                    zeroed: false,
                    stack: false,
                });
            }
            "calloc" => {
                let n = self.arg(c, 0)?;
                let s = self.arg(c, 1)?;
                let dst = self.reg(c.dest.as_ref().expect("calloc returns a value"));
                self.emit(Op::Alloc {
                    dst,
                    size: Expr::bin(BinOp::Mul, n, s),
                    zeroed: true,
                    stack: false,
                });
            }
            "free" => {
                let p = self.arg(c, 0)?;
                self.emit(Op::Free(p));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
