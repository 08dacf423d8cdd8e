//! LLVM constants: their values (scalars, addresses of globals and functions, constant
//! expressions) and the initial cells of globals.

use super::{canon, name_str, Ctx};
use fencer_ir::{Ptr, Value};
use llvm_ir::constant::Constant;
use llvm_ir::types::Typed;
use llvm_ir::{Type, TypeRef};

impl<'m> Ctx<'m> {
    pub(super) fn pointee(&self, ty: &Type) -> Result<TypeRef, String> {
        match ty {
            Type::PointerType { pointee_type, .. } => Ok(pointee_type.clone()),
            t => Err(format!("expected a pointer, found a value of type `{t}`")),
        }
    }

    /// The value of a constant (scalars, addresses of globals, constant expressions).
    pub(super) fn const_value(&self, c: &Constant) -> Result<Value, String> {
        Ok(match c {
            Constant::Int { bits, value } => canon(*bits, *value),
            Constant::Null(_) | Constant::AggregateZero(_) => 0,
            Constant::Undef(_) | Constant::Poison(_) => 0,
            Constant::GlobalReference { name, ty } => {
                let n = name_str(name);
                let func = self.funcs.get(&n).or_else(|| self.stubs.get(&n));
                match self.globals.get(&n) {
                    Some(&obj) => Ptr { obj, offset: 0 }.encode(),
                    None if func.is_some() => fencer_ir::func_ptr(*func.expect("checked")),
                    None if matches!(ty.as_ref(), Type::FuncType { .. }) => {
                        return Err(format!(
                            "the address of function `{n}` is used as a value; fencer supports \
                             functions called directly and thread functions named in pthread_create"
                        ))
                    }
                    None => return Err(format!("unknown global `{n}`")),
                }
            }
            Constant::BitCast(b) => self.const_value(&b.operand)?,
            Constant::AddrSpaceCast(b) => self.const_value(&b.operand)?,
            Constant::PtrToInt(b) => self.const_value(&b.operand)?,
            Constant::IntToPtr(b) => self.const_value(&b.operand)?,
            Constant::GetElementPtr(g) => {
                let base = self.const_value(&g.address)?;
                let ty = g.address.get_type(&self.m.types);
                let mut off = 0i64;
                let mut cur = self.pointee(&ty)?;
                for (k, idx) in g.indices.iter().enumerate() {
                    let i = self.const_value(idx)?;
                    if k == 0 {
                        off += i * self.layout.size(&cur)? as i64;
                        continue;
                    }
                    if let Type::StructType { .. } | Type::NamedStructType { .. } =
                        self.resolve(&cur)
                    {
                        off += self.layout.field_offset(&cur, i as usize)? as i64;
                    } else {
                        let e = self.layout.element(&cur, 0)?;
                        off += i * self.layout.size(&e)? as i64;
                    }
                    cur = self.layout.element(&cur, i as usize)?;
                }
                base.wrapping_add(off)
            }
            Constant::Add(a) => self
                .const_value(&a.operand0)?
                .wrapping_add(self.const_value(&a.operand1)?),
            Constant::Sub(a) => self
                .const_value(&a.operand0)?
                .wrapping_sub(self.const_value(&a.operand1)?),
            Constant::Float(_) => return Err("floating point is not supported".into()),
            c => return Err(format!("the constant expression `{c}` is not supported")),
        })
    }

    /// The size of one copy, when the constant is an address inside a thread-local global.
    pub(super) fn tls_stride(&self, c: &Constant) -> Option<u64> {
        match c {
            Constant::GlobalReference { name, .. } => self.tls.get(&name_str(name)).copied(),
            Constant::BitCast(b) => self.tls_stride(&b.operand),
            Constant::AddrSpaceCast(b) => self.tls_stride(&b.operand),
            Constant::PtrToInt(b) => self.tls_stride(&b.operand),
            Constant::IntToPtr(b) => self.tls_stride(&b.operand),
            Constant::GetElementPtr(g) => self.tls_stride(&g.address),
            Constant::Add(a) => self.tls_stride(&a.operand0),
            Constant::Sub(a) => self.tls_stride(&a.operand0),
            _ => None,
        }
    }

    pub(super) fn resolve<'a>(&'a self, t: &'a TypeRef) -> &'a Type {
        match t.as_ref() {
            Type::NamedStructType { name } => match self.m.types.named_struct_def(name) {
                Some(llvm_ir::types::NamedStructDef::Defined(d)) => d.as_ref(),
                _ => t.as_ref(),
            },
            other => other,
        }
    }

    /// The scalars of a constant placed from byte `off`, as (byte, value); zeros (in
    /// particular `zeroinitializer`) produce nothing, so a large zeroed global costs nothing.
    pub(super) fn init_const(
        &self,
        c: &Constant,
        off: u64,
        cells: &mut Vec<(u64, Value)>,
    ) -> Result<(), String> {
        match c {
            Constant::Struct { values, .. } => {
                let ty = c.get_type(&self.m.types);
                for (k, v) in values.iter().enumerate() {
                    let fo = self.layout.field_offset(&ty, k)?;
                    self.init_const(v, off + fo, cells)?;
                }
            }
            Constant::Array {
                element_type,
                elements,
            } => {
                let s = self.layout.size(element_type)?;
                for (i, v) in elements.iter().enumerate() {
                    self.init_const(v, off + i as u64 * s, cells)?;
                }
            }
            Constant::Vector(elements) => {
                for (i, v) in elements.iter().enumerate() {
                    let s = self.layout.size(&v.get_type(&self.m.types))?;
                    self.init_const(v, off + i as u64 * s, cells)?;
                }
            }
            Constant::AggregateZero(_)
            | Constant::Null(_)
            | Constant::Undef(_)
            | Constant::Poison(_) => {}
            c => {
                let v = self.const_value(c)?;
                if v != 0 {
                    cells.push((off, v));
                }
            }
        }
        Ok(())
    }

    /// The NUL-terminated string a constant pointer points at (assertion texts).
    pub(super) fn c_string(&self, v: Value) -> Option<String> {
        let p = Ptr::decode(v)?;
        let o = self.objects.get(p.obj as usize)?;
        let bytes: Vec<u8> = (p.offset..o.size)
            .map(|k| o.init_value(k))
            .take_while(|&b| b != 0)
            .map(|b| b as u8)
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}
