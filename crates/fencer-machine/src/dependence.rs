//! Dependence between steps: what a step would access if taken now, and whether two steps
//! may fail to commute.

use crate::address::{pending_stack_object, Freeing};
use crate::{eval, CellState, Frame, State, Step, MAX_ALLOC};
use fencer_ir::{Addr, FenceKind, ObjId, Op, Program, RmwOp, Value};
use fencer_memory::{Drain, Loc, MemoryModel};

/// What a step would do to shared state, for deciding whether two steps commute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Touches nothing another thread can see (a buffered store, a forwarded load, ...).
    Local,
    /// Reads memory.
    Read(Loc),
    /// Writes memory (a buffer update, or a store under SC).
    Write(Loc),
    /// An atomic read-modify-write; it also waits for the thread's buffers.
    Rmw(Loc),
    /// A compare-and-swap that would fail now: a read that waits for the thread's buffers.
    RmwRead(Loc),
    /// Lock or unlock; it also waits for the thread's buffers.
    Mutex(Loc),
    /// A trylock that would fail now: a read of the mutex that waits for the thread's
    /// buffers.
    MutexRead(Loc),
    /// Waits for the thread's own buffers (fence, spawn).
    Barrier,
    /// Waits for a thread to finish; or, for an id no thread has yet, faults (and depends
    /// on the spawn that would give that id).
    Join(u32),
    /// Starts a thread, which gets this id: the next one. Spawns take ids in the order
    /// they run, so two spawns of different threads do not commute (which thread gets which
    /// id is part of the state); like a barrier, it waits for the thread's own buffers.
    Spawn(u32),
    /// Allocates this object. Independent of other threads' allocations: an object's
    /// identity is its thread and that thread's allocation count (see [`Memory`]). An
    /// access through a pointer to it made before it exists (a fault then) depends on it.
    ///
    /// [`Memory`]: crate::Memory
    Alloc(ObjId),
    /// A store into the thread's buffer or a load from it: nothing another thread sees,
    /// but it faults if the object has been freed.
    Buffered(Loc),
    /// Frees a heap object: every access to it depends on this.
    Free(u32),
    /// An access that faults because its object has been freed (or a read of an
    /// uninitialised cell by a read-modify-write): it depends on the object's frees, and
    /// where the cell is known (`index != u32::MAX`) on the cell's writers, as a load
    /// does. That is what the DPOR clocks record of such a fault; the sleep sets must not
    /// see more (a sleeping process woken by a dependence the clocks miss can start a
    /// reversed sequence it does not start once that reversal changes later events).
    Faulted(Loc),
    /// An arrival at a barrier, with `remaining` arrivals to come in its generation
    /// (itself included) and whether its serial result is used. Two arrivals at one
    /// barrier commute unless they fall in different generations (the first is the last
    /// of its generation) or one's serial result is read (their order decides which can
    /// be the last). It waits for the thread's buffers.
    Arrive {
        loc: Loc,
        remaining: u32,
        serial: bool,
    },
    /// Unknown (the step faults): treated as dependent with everything.
    Any,
}

impl Access {
    fn loc(self) -> Option<Loc> {
        match self {
            Access::Read(l)
            | Access::Write(l)
            | Access::Rmw(l)
            | Access::RmwRead(l)
            | Access::Mutex(l)
            | Access::MutexRead(l)
            | Access::Arrive { loc: l, .. } => Some(l),
            Access::Faulted(l) if l.index != u32::MAX => Some(l),
            _ => None,
        }
    }
    fn writes(self) -> bool {
        matches!(
            self,
            Access::Write(_) | Access::Rmw(_) | Access::Mutex(_) | Access::Arrive { .. }
        )
    }
}

/// The thread a step belongs to: a real thread and its update threads form one family.
pub fn family(s: Step) -> u32 {
    match s {
        Step::Thread(t) | Step::Update(t, _) => t,
    }
}

/// Whether two steps of different processes may fail to commute: executed in either order
/// from one state they could reach different states, or one could enable or disable the
/// other. Conservative: `true` when unsure.
pub fn dependent<M: MemoryModel>(a: (Step, Access), b: (Step, Access)) -> bool {
    let ((sa, aa), (sb, ab)) = (a, b);
    if aa == Access::Any || ab == Access::Any {
        return true;
    }
    // A thread's buffer-draining operations wait for (some of) its own updates. Under PSO
    // with store-store fences an update can also enable a read-modify-write or another
    // update of its thread (the last store of the oldest epoch leaves); engines ask this
    // of steps enabled together, and then neither waits for the other: an enabled update
    // is of the oldest epoch, an enabled read-modify-write finds no older epoch pending.
    if family(sa) == family(sb) {
        let waits = |s: Step, x: Access, other: Step| {
            let Step::Update(_, chan) = other else {
                return false;
            };
            if !matches!(s, Step::Thread(_)) {
                return false;
            }
            match x {
                Access::Rmw(l) | Access::RmwRead(l) => match M::rmw_drain(l) {
                    Drain::Nothing => false,
                    Drain::All => true,
                    Drain::Chan(c) => c == chan,
                },
                Access::Mutex(_)
                | Access::MutexRead(_)
                | Access::Barrier
                | Access::Spawn(_)
                | Access::Arrive { .. } => true,
                _ => false,
            }
        };
        if waits(sa, aa, sb) || waits(sb, ab, sa) {
            return true;
        }
    }
    match (aa, ab) {
        (Access::Spawn(_), Access::Spawn(_)) if family(sa) != family(sb) => return true,
        (
            Access::Arrive {
                loc: x,
                remaining: r,
                serial: u,
            },
            Access::Arrive {
                loc: y,
                remaining: q,
                serial: v,
            },
        ) if x == y => {
            // Remaining arrivals only fall within a generation: the smaller count is the
            // later state's, where the question is asked. An arrival whose serial result
            // is read depends on every other (which of them came first decides who can
            // be last: the trace keeps their order, see `TraceHash`).
            return r.min(q) <= 1 || u || v;
        }
        (Access::Spawn(c), Access::Join(d)) | (Access::Join(d), Access::Spawn(c)) if c == d => {
            return true;
        }
        _ => {}
    }
    if let Access::Join(t) = aa {
        if family(sb) == t {
            return true;
        }
    }
    if let Access::Join(t) = ab {
        if family(sa) == t {
            return true;
        }
    }
    let object = |x: Access| match x {
        Access::Buffered(l) | Access::Faulted(l) => Some(l.obj),
        Access::Free(o) => Some(o),
        x => x.loc().map(|l| l.obj),
    };
    // A free, or an allocation, decides whether another thread's access to its object
    // faults.
    if let Access::Free(o) | Access::Alloc(o) = aa {
        if object(ab) == Some(o) && !matches!(sb, Step::Update(..)) {
            return true;
        }
    }
    if let Access::Free(o) | Access::Alloc(o) = ab {
        if object(aa) == Some(o) && !matches!(sa, Step::Update(..)) {
            return true;
        }
    }
    match (aa.loc(), ab.loc()) {
        (Some(x), Some(y)) if x == y => aa.writes() || ab.writes(),
        _ => false,
    }
}

/// The thread id that thread `t` can join as `c`, now or once a spawn gives it: not a
/// negative one, not one no spawn can give, not its own.
pub(crate) fn joinable(c: Value, t: u32) -> Option<u32> {
    u32::try_from(c).ok().filter(|&c| c != u32::MAX && c != t)
}

impl State {
    /// What `step` would do if taken now (see [`Access`]).
    pub fn next_access<M: MemoryModel>(&self, prog: &Program, step: Step) -> Access {
        match step {
            Step::Update(t, chan) => match self.bufs[t as usize].front(chan) {
                Some(e) => Access::Write(e.loc),
                None => Access::Any,
            },
            Step::Thread(t) => {
                let th = &self.threads[t as usize];
                if th.finished {
                    return Access::Any;
                }
                let (fr, ins) = self.current(prog, t);
                let at = |a: &Addr| self.resolve(prog, fr, a).ok();
                // What an access whose address does not resolve depends on: as much as
                // the clocks will see of the fault it is (see `bad_address`).
                let bad = |a: &Addr| self.bad_address(fr, a);
                match &ins.op {
                    Op::Load { addr, .. } => match at(addr) {
                        Some(l)
                            if M::channel(l).is_some()
                                && self.bufs[t as usize].forward(l).is_some() =>
                        {
                            Access::Buffered(l)
                        }
                        Some(l) => Access::Read(l),
                        None => bad(addr),
                    },
                    Op::Store { addr, value } => match at(addr) {
                        // The value faults (a division by zero) before anything is stored.
                        Some(_) if eval(value, &fr.regs).is_none() => Access::Local,
                        Some(l) if M::channel(l).is_some() => Access::Buffered(l),
                        Some(l) => Access::Write(l),
                        None => bad(addr),
                    },
                    Op::Rmw { addr, op, .. } => match (at(addr), op) {
                        (None, _) => bad(addr),
                        // It faults reading uninitialised memory, as a load would.
                        (Some(l), _) if self.cell_state(l) == CellState::Uninit => {
                            Access::Faulted(l)
                        }
                        // A destroyed mutex: it faults having read the cell.
                        (Some(l), _) if self.cell_state(l) == CellState::Destroyed => {
                            Access::RmwRead(l)
                        }
                        // An operand that faults (a division by zero) does so on
                        // registers alone, whatever the cell holds: `Local`.
                        (Some(l), RmwOp::Cas { expected, new }) => {
                            match (eval(expected, &fr.regs), eval(new, &fr.regs)) {
                                (Some(v), Some(_)) if v != self.cell_value(l) => Access::RmwRead(l),
                                (Some(_), Some(_)) => Access::Rmw(l),
                                _ => Access::Local,
                            }
                        }
                        (
                            Some(l),
                            RmwOp::FetchAdd(e) | RmwOp::Xchg(e) | RmwOp::Fetch { value: e, .. },
                        ) => match eval(e, &fr.regs) {
                            Some(_) => Access::Rmw(l),
                            None => Access::Local,
                        },
                    },
                    // A mutex operation that faults (a destroyed mutex, an unlock by
                    // a thread that does not hold it, a destroy of a held one) reads
                    // the mutex, waiting for the thread's buffers as it does.
                    Op::Lock(a) | Op::Unlock(a) | Op::MutexDestroy(a) => match at(a) {
                        None => bad(a),
                        Some(l) if self.cell_state(l) == CellState::Destroyed => {
                            Access::MutexRead(l)
                        }
                        Some(l) => match &ins.op {
                            Op::Unlock(_) if self.cell_value(l) != t as Value + 1 => {
                                Access::MutexRead(l)
                            }
                            Op::MutexDestroy(_) if self.cell_value(l) != 0 => Access::MutexRead(l),
                            _ => Access::Mutex(l),
                        },
                    },
                    Op::TryLock { addr, .. } => match at(addr) {
                        Some(l) if self.cell_state(l) == CellState::Destroyed => {
                            Access::MutexRead(l)
                        }
                        Some(l) if self.cell_value(l) != 0 => Access::MutexRead(l),
                        Some(l) => Access::Mutex(l),
                        None => bad(addr),
                    },
                    Op::Fence(FenceKind::Full) => Access::Barrier,
                    Op::BarrierArrive { addr, serial } => match at(addr) {
                        None => bad(addr),
                        Some(l) if self.cell_state(l) == CellState::Uninit => Access::Faulted(l),
                        Some(l) => {
                            let cell = self.cell_value(l);
                            let count = fencer_ir::barrier::count(cell);
                            if self.cell_state(l) == CellState::Destroyed || count <= 0 {
                                // It faults having read the cell.
                                Access::MutexRead(l)
                            } else {
                                Access::Arrive {
                                    loc: l,
                                    remaining: (count - fencer_ir::barrier::arrived(cell)).max(1)
                                        as u32,
                                    serial: serial.is_some(),
                                }
                            }
                        }
                    },
                    // It changes nothing another thread sees, and once enabled (released)
                    // stays so.
                    Op::BarrierPass(_) => Access::Local,
                    // A spawn that faults (its argument or its start address) depends on
                    // the thread alone, waiting for its buffers as any spawn does.
                    Op::Spawn { arg, .. } if eval(arg, &fr.regs).is_none() => Access::Barrier,
                    Op::SpawnIndirect { target, arg, .. }
                        if eval(arg, &fr.regs).is_none()
                            || eval(target, &fr.regs)
                                .and_then(|v| fencer_ir::func_of_ptr(v, prog.functions.len()))
                                .is_none() =>
                    {
                        Access::Barrier
                    }
                    Op::Spawn { .. } | Op::SpawnIndirect { .. } => {
                        Access::Spawn(self.threads.len() as u32)
                    }
                    // It only orders the thread's own later updates after its earlier
                    // ones, whenever it runs between them: it commutes with every update.
                    Op::Fence(FenceKind::StoreStore) => Access::Local,
                    // A thread id not spawned yet faults now, and joins the thread that
                    // takes that id if its spawn comes first: a join depends on that spawn
                    // as well as on the thread it joins. A negative id, one no spawn can
                    // take, or the thread's own, faults wherever it runs.
                    Op::Join(e) => match eval(e, &fr.regs).and_then(|c| joinable(c, t)) {
                        Some(c) => Access::Join(c),
                        None => Access::Local,
                    },
                    Op::Assume(_) => Access::Local,
                    // What `free_of` decides: a double free faults as an access to the
                    // freed object; the other faults (and `free(NULL)`) depend on the
                    // thread alone.
                    Op::Free(e) => match eval(e, &fr.regs).map(|v| (v, self.free_of(v))) {
                        None | Some((_, Freeing::Null)) => Access::Local,
                        Some((_, Freeing::Frees(obj))) => Access::Free(obj),
                        Some((_, Freeing::Fault(_, Some(obj)))) => Access::Faulted(Loc {
                            obj,
                            index: u32::MAX,
                        }),
                        Some((_, Freeing::Fault(_, None))) => Access::Local,
                    },
                    // An allocation that fails (a bad size, too many objects) depends on
                    // the thread alone, and the clocks see nothing of it.
                    Op::Alloc { size, .. } => match eval(size, &fr.regs) {
                        Some(n) if (1..=MAX_ALLOC).contains(&n) => {
                            self.mem.next_id(t).map_or(Access::Local, Access::Alloc)
                        }
                        _ => Access::Local,
                    },
                    Op::Exit => match pending_stack_object(&self.mem, &th.frames) {
                        Some(o) => Access::Free(o),
                        None => Access::Any,
                    },
                    _ => Access::Any,
                }
            }
        }
    }

    /// What a step whose address `addr` does not resolve depends on, as the DPOR clocks
    /// record its fault: an access to a freed object or one not allocated yet, on the
    /// object's frees or allocation and the cell's writers ([`Access::Faulted`]); a null,
    /// out-of-bounds or non-pointer address (or a division by zero in it), on nothing (it
    /// depends on the thread's registers alone).
    fn bad_address(&self, fr: &Frame, addr: &Addr) -> Access {
        self.absent_object(fr, addr)
            .map_or(Access::Local, Access::Faulted)
    }
}
