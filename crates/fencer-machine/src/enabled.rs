//! Which steps a state enables, and what a thread's next instruction waits for.

use crate::{eval, State, Step};
use fencer_ir::{FenceKind, Op, Program};
use fencer_memory::{Drain, MemoryModel};

/// Whether `op` runs only with its thread's buffers empty (it is a full fence), whether
/// it faults or not.
fn drains_all(op: &Op) -> bool {
    matches!(
        op,
        Op::Fence(FenceKind::Full)
            | Op::Spawn { .. }
            | Op::SpawnIndirect { .. }
            | Op::Lock(_)
            | Op::Unlock(_)
            | Op::TryLock { .. }
            | Op::MutexDestroy(_)
            | Op::BarrierArrive { .. }
    )
}

impl State {
    /// The steps enabled in this state, threads first, then updates; appended to `out`.
    pub fn enabled<M: MemoryModel>(&self, prog: &Program, out: &mut Vec<Step>) {
        for t in 0..self.threads.len() as u32 {
            if self.thread_runs::<M>(prog, t) {
                out.push(Step::Thread(t));
            }
        }
        for (t, b) in self.bufs.iter().enumerate() {
            for c in b.channels() {
                // Behind a store-store fence, a buffer waits for the older epochs.
                if b.updatable(c) {
                    out.push(Step::Update(t as u32, c));
                }
            }
        }
    }

    /// Whether `step` is enabled in this state (one of [`State::enabled`]'s).
    pub fn step_enabled<M: MemoryModel>(&self, prog: &Program, step: Step) -> bool {
        match step {
            Step::Thread(t) => (t as usize) < self.threads.len() && self.thread_runs::<M>(prog, t),
            Step::Update(t, c) => self.bufs.get(t as usize).is_some_and(|b| b.updatable(c)),
        }
    }

    /// Whether thread `t` can take a step: it has not finished, been cut, blocked in a
    /// spin loop or faulted, and its next instruction may run now.
    pub(crate) fn thread_runs<M: MemoryModel>(&self, prog: &Program, t: u32) -> bool {
        let th = &self.threads[t as usize];
        !th.finished
            && th.cut.is_none()
            && !th.spin.blocked
            && !th.faulted
            && !th.exited
            && self.thread_enabled::<M>(prog, t)
    }

    /// Which of thread `t`'s buffers its next visible instruction waits to find empty
    /// ([`State::thread_enabled`]); one that faults waits as if it ran, so after a fault
    /// (which leaves the thread at the instruction) this says what the fault waited for.
    /// (A read-modify-write after a store-store fence also waits for the stores before
    /// the fence.)
    pub fn waits<M: MemoryModel>(&self, prog: &Program, t: u32) -> Drain {
        let (fr, ins) = self.current(prog, t);
        match &ins.op {
            Op::Rmw { addr, .. } => match self.resolve(prog, fr, addr) {
                Ok(loc) => M::rmw_drain(loc),
                Err(_) => Drain::Nothing,
            },
            op if drains_all(op) => Drain::All,
            _ => Drain::Nothing,
        }
    }

    /// Whether thread `t`'s next visible instruction may run now. Instructions that would
    /// fault are enabled, so that the fault is reported.
    pub fn thread_enabled<M: MemoryModel>(&self, prog: &Program, t: u32) -> bool {
        let (fr, ins) = self.current(prog, t);
        let buf = &self.bufs[t as usize];
        match &ins.op {
            // Its write is a store: one after a store-store fence waits for the stores
            // before the fence, like the updates of stores after it.
            Op::Rmw { addr, .. } => match self.resolve(prog, fr, addr) {
                Ok(loc) => buf.drained(M::rmw_drain(loc)) && !buf.fenced_stores_pending(),
                Err(_) => true,
            },
            Op::Lock(addr) => {
                buf.is_empty()
                    && match self.resolve(prog, fr, addr) {
                        Ok(loc) => self.cell_value(loc) == 0,
                        Err(_) => true,
                    }
            }
            op if drains_all(op) => buf.is_empty(),
            Op::Join(e) => match eval(e, &fr.regs) {
                Some(c) if c >= 0 && (c as usize) < self.threads.len() && c as u32 != t => {
                    self.threads[c as usize].finished && self.bufs[c as usize].is_empty()
                }
                _ => true,
            },
            // Until the last arrival of the thread's generation releases it.
            Op::BarrierPass(_) => self.threads[t as usize]
                .barrier
                .is_none_or(|(_, released)| released),
            // The condition reads registers only, so a false `assume` blocks for good.
            Op::Assume(c) => eval(c, &fr.regs) != Some(0),
            _ => true,
        }
    }
}
