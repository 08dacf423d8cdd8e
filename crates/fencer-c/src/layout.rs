//! Type layout for x86-64 (the target clang compiles for): sizes, alignments, field offsets,
//! and the scalar leaves of a type. Memory is a row of byte cells; a scalar of any width
//! lives in the cell of its first byte, so the leaves say where values can be.

use llvm_ir::types::{NamedStructDef, Types};
use llvm_ir::{Type, TypeRef};

pub struct Layout<'m> {
    pub types: &'m Types,
}

/// A scalar inside a type: byte offset, size in bytes, and a path for reports (`[2].1`).
pub struct Leaf {
    pub offset: u64,
    pub size: u64,
    pub path: String,
}

impl<'m> Layout<'m> {
    fn resolve<'a>(&'a self, ty: &'a Type) -> Result<&'a Type, String> {
        match ty {
            Type::NamedStructType { name } => match self.types.named_struct_def(name) {
                Some(NamedStructDef::Defined(t)) => Ok(t.as_ref()),
                _ => Err(format!(
                    "the type `%{name}` is opaque (declared but never defined)"
                )),
            },
            t => Ok(t),
        }
    }

    /// Size and alignment in bytes.
    pub fn size_align(&self, ty: &Type) -> Result<(u64, u64), String> {
        Ok(match self.resolve(ty)? {
            Type::IntegerType { bits } => match bits {
                1..=8 => (1, 1),
                9..=16 => (2, 2),
                17..=32 => (4, 4),
                33..=64 => (8, 8),
                b => {
                    return Err(format!(
                        "{b}-bit integers are not supported (at most 64 bits)"
                    ))
                }
            },
            Type::PointerType { .. } => (8, 8),
            Type::ArrayType {
                element_type,
                num_elements,
            }
            | Type::VectorType {
                element_type,
                num_elements,
                ..
            } => {
                let (s, a) = self.size_align(element_type)?;
                (s * *num_elements as u64, a)
            }
            Type::StructType {
                element_types,
                is_packed,
            } => {
                let mut off = 0u64;
                let mut align = 1u64;
                for t in element_types {
                    let (s, a) = self.size_align(t)?;
                    let a = if *is_packed { 1 } else { a };
                    off = off.div_ceil(a) * a + s;
                    align = align.max(a);
                }
                (off.div_ceil(align) * align, align)
            }
            Type::FPType(_) => {
                return Err(
                    "floating point is not supported (fencer models integers and pointers)".into(),
                )
            }
            t => return Err(format!("values of type `{t}` are not supported")),
        })
    }

    pub fn size(&self, ty: &Type) -> Result<u64, String> {
        Ok(self.size_align(ty)?.0)
    }

    /// Byte offset of field `k` of a struct type.
    pub fn field_offset(&self, ty: &Type, k: usize) -> Result<u64, String> {
        let Type::StructType {
            element_types,
            is_packed,
        } = self.resolve(ty)?
        else {
            return Err(format!(
                "field {k} of a value of type `{ty}`, which is not a struct"
            ));
        };
        let mut off = 0u64;
        for (i, t) in element_types.iter().enumerate() {
            let (s, a) = self.size_align(t)?;
            let a = if *is_packed { 1 } else { a };
            off = off.div_ceil(a) * a;
            if i == k {
                return Ok(off);
            }
            off += s;
        }
        Err(format!(
            "field {k} of a struct with {} fields",
            element_types.len()
        ))
    }

    /// The type of field or element `k` of an aggregate.
    pub fn element(&self, ty: &Type, k: usize) -> Result<TypeRef, String> {
        match self.resolve(ty)? {
            Type::StructType { element_types, .. } => {
                element_types.get(k).cloned().ok_or_else(|| {
                    format!("field {k} of a struct with {} fields", element_types.len())
                })
            }
            Type::ArrayType { element_type, .. } | Type::VectorType { element_type, .. } => {
                Ok(element_type.clone())
            }
            t => Err(format!(
                "an element of a value of type `{t}`, which is not an aggregate"
            )),
        }
    }

    /// Every scalar of a type, in address order. Arrays larger than `max` elements are
    /// described by their first `max` only when `max` is given; callers needing every byte
    /// fall back to byte-wise handling.
    pub fn leaves(
        &self,
        ty: &Type,
        offset: u64,
        path: &str,
        out: &mut Vec<Leaf>,
    ) -> Result<(), String> {
        match self.resolve(ty)? {
            Type::StructType { element_types, .. } => {
                for (k, t) in element_types.iter().enumerate() {
                    let off = self.field_offset(ty, k)?;
                    self.leaves(t, offset + off, &format!("{path}.{k}"), out)?;
                }
            }
            Type::ArrayType {
                element_type,
                num_elements,
            }
            | Type::VectorType {
                element_type,
                num_elements,
                ..
            } => {
                let s = self.size(element_type)?;
                for i in 0..*num_elements as u64 {
                    self.leaves(element_type, offset + i * s, &format!("{path}[{i}]"), out)?;
                }
            }
            t => {
                let size = self.size(t)?;
                out.push(Leaf {
                    offset,
                    size,
                    path: path.to_string(),
                });
            }
        }
        Ok(())
    }
}
