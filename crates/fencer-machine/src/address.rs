//! What addresses denote: the cell, the absent object a faulting access names, what a
//! `free` does, and the stack objects an exit still has to free.

use crate::eval::binary;
use crate::{eval, Frame, Memory, State};
use fencer_ir::{Addr, ObjId, Program, Ptr, Value};
use fencer_memory::Loc;

/// What a `free` does ([`State::free_of`]).
pub(crate) enum Freeing {
    /// `free(NULL)`: nothing.
    Null,
    /// Frees this live heap object.
    Frees(ObjId),
    /// Faults with this message; on a heap object already freed, or not allocated yet,
    /// that object.
    Fault(&'static str, Option<ObjId>),
}

impl State {
    /// The cell an address denotes in frame `fr`, or why it denotes none.
    pub fn resolve(&self, prog: &Program, fr: &Frame, addr: &Addr) -> Result<Loc, String> {
        match addr {
            Addr::Global { obj, index } => {
                let i = binary(index, &fr.regs).ok_or("division by zero in an index")?;
                let o = &self.mem[*obj];
                if i < 0 || i >= o.size() as i64 {
                    return Err(format!(
                        "index {i} out of bounds of `{}` (size {})",
                        prog.objects[*obj as usize].name,
                        o.size()
                    ));
                }
                Ok(Loc {
                    obj: *obj,
                    index: i as u32,
                })
            }
            Addr::Ptr(e) => {
                let v = binary(e, &fr.regs).ok_or("division by zero in an address")?;
                if v == 0 {
                    return Err("null pointer dereference".into());
                }
                let p = Ptr::decode(v).ok_or_else(|| format!("{v} is not a valid address"))?;
                let o = self
                    .mem
                    .get(p.obj)
                    .ok_or_else(|| format!("{v} is not a valid address"))?;
                if !o.alive {
                    return Err("use after free".into());
                }
                if p.offset >= o.size() {
                    return Err(format!(
                        "offset {} out of bounds of an object of size {}",
                        p.offset,
                        o.size()
                    ));
                }
                Ok(Loc {
                    obj: p.obj,
                    index: p.offset,
                })
            }
        }
    }

    /// The cell an address points to in an object that is not alive, if it does: freed
    /// (heap or stack), or not allocated yet.
    pub(crate) fn absent_object(&self, fr: &Frame, addr: &Addr) -> Option<Loc> {
        let Addr::Ptr(e) = addr else { return None };
        let p = Ptr::decode(eval(e, &fr.regs)?)?;
        // A heap object after its free, or a stack object after its thread left the
        // call: either way the free is what makes the access fault. A pointer to an
        // object no thread has allocated may name one another thread allocates later:
        // then that allocation is what makes it fault (an access made after it would
        // not), so it is a dependence, seen by both sides (`Access::Alloc`).
        let absent = self.mem.get(p.obj).is_none_or(|o| !o.alive);
        absent.then_some(Loc {
            obj: p.obj,
            index: p.offset,
        })
    }

    /// What `free(v)` does: the one decision `thread_step` acts on and `next_access`
    /// reports, so that the two cannot disagree.
    pub(crate) fn free_of(&self, v: Value) -> Freeing {
        if v == 0 {
            return Freeing::Null;
        }
        let Some(p) = Ptr::decode(v) else {
            return Freeing::Fault("free of a value that is not a pointer", None);
        };
        match self.mem.get(p.obj) {
            // It may name an object another thread allocates later: the fault depends
            // on that allocation, as an access to a freed object on the free.
            None => Freeing::Fault("free of an invalid pointer", Some(p.obj)),
            Some(o) if o.heap && !o.alive => {
                let m = if p.offset != 0 {
                    "free of a pointer that malloc did not return"
                } else {
                    "double free"
                };
                Freeing::Fault(m, Some(p.obj))
            }
            Some(o) if !o.heap || p.offset != 0 => {
                Freeing::Fault("free of a pointer that malloc did not return", None)
            }
            Some(_) => Freeing::Frees(p.obj),
        }
    }
}

/// A stack object of one of the calls that is still alive (the next one an exit frees).
pub(crate) fn pending_stack_object(mem: &Memory, frames: &[Frame]) -> Option<u32> {
    frames
        .iter()
        .rev()
        .flat_map(|f| f.stack.iter().rev())
        .copied()
        .find(|&o| mem[o].alive)
}
