//! What a step does: an update reaching memory, or a thread's visible instruction with the
//! local ones after it, and the faults it can raise.

use crate::address::{pending_stack_object, Freeing};
use crate::dependence::joinable;
use crate::locals::Local;
use crate::memory::ALLOC_THREAD_BITS;
use crate::{
    eval, Cell, CellState, CutKind, Event, EventId, EventKind, Fault, FaultKind, ObjState,
    ReadFrom, State, Status, Step, StoreTag, MAX_ALLOC,
};
use fencer_ir::{barrier, FenceKind, Op, Program, Ptr, RmwOp, SrcLoc, Value};
use fencer_memory::{Entry, Loc, MemoryModel};

impl State {
    /// Executes an enabled step.
    pub fn step<M: MemoryModel>(&mut self, prog: &Program, step: Step) -> (Event, Status) {
        match step {
            Step::Update(t, chan) => {
                debug_assert!(self.bufs[t as usize].updatable(chan), "update not enabled");
                let e = self.bufs[t as usize]
                    .pop(chan)
                    .expect("an enabled update has an entry");
                self.write(e.loc, e.value, e.store.id);
                if self.windows > 0 {
                    self.spoil_windows(t, e.loc);
                }
                (
                    Event {
                        step,
                        id: e.store.id,
                        src: e.store.src,
                        func: e.store.func,
                        kind: EventKind::Update {
                            loc: e.loc,
                            value: e.value,
                            store: e.store.id,
                        },
                    },
                    Status::Ok,
                )
            }
            Step::Thread(t) => self.thread_step::<M>(prog, t),
        }
    }

    fn fault(&self, t: u32, src: SrcLoc, kind: FaultKind, message: String) -> Fault {
        Fault {
            kind,
            thread: t,
            src,
            message,
        }
    }

    /// Where a never-written cell's value is arbitrary ([`Program::uninit_arbitrary`]) and
    /// a replay gives thread `t` input values, the cell takes the next one, as the
    /// symbolic engine's read of it did; `false` when there is none (the explorer does
    /// not choose values).
    fn arbitrary_value(&mut self, prog: &Program, t: u32, loc: Loc) -> bool {
        let Some(value) = self.next_arbitrary(prog, t) else {
            return false;
        };
        self.inputs[t as usize].pop();
        self.mem[loc.obj].set(
            loc.index,
            Cell {
                value,
                writer: None,
                state: CellState::Valid,
            },
        );
        true
    }

    /// The value [`State::arbitrary_value`] would give thread `t`'s read.
    fn next_arbitrary(&self, prog: &Program, t: u32) -> Option<Value> {
        if !prog.uninit_arbitrary {
            return None;
        }
        self.inputs.get(t as usize).and_then(|q| q.last().copied())
    }

    fn uninit(&self, prog: &Program, t: u32, src: SrcLoc) -> Fault {
        if prog.uninit_arbitrary {
            return self.fault(
                t,
                src,
                FaultKind::Unsupported,
                fencer_ir::UNINIT_ARBITRARY.into(),
            );
        }
        self.fault(
            t,
            src,
            FaultKind::MemoryError,
            "read of uninitialised memory".into(),
        )
    }

    fn destroyed(&self, t: u32, src: SrcLoc) -> Fault {
        self.fault(
            t,
            src,
            FaultKind::BadMutex,
            "use of a destroyed mutex".into(),
        )
    }

    fn thread_step<M: MemoryModel>(&mut self, prog: &Program, t: u32) -> (Event, Status) {
        let id = EventId {
            thread: t,
            index: self.threads[t as usize].events,
        };
        self.threads[t as usize].events += 1;
        let (fr, ins) = self.current(prog, t);
        let src = ins.loc;
        let regs = &fr.regs;
        let func = fr.func;
        // A spawned thread whose first local instructions fault: the spawn itself is done.
        let mut child_fault = None;
        let ev = |kind| Event {
            step: Step::Thread(t),
            id,
            src,
            func,
            kind,
        };
        let arith = |s: &Self| {
            s.fault(
                t,
                src,
                FaultKind::Arithmetic,
                "division by zero".to_string(),
            )
        };
        macro_rules! loc_or_fault {
            ($addr:expr, $kind:expr) => {
                loc_or_fault!($addr, $kind, false)
            };
            ($addr:expr, $kind:expr, $lock:expr) => {
                match self.resolve(prog, fr, $addr) {
                    Ok(l) => l,
                    Err(m) => {
                        let f = self.fault(t, src, FaultKind::MemoryError, m);
                        let kind = match self.absent_object(fr, $addr) {
                            Some(loc) => EventKind::FaultedAccess { loc, lock: $lock },
                            None => $kind,
                        };
                        return (ev(kind), Status::Fault(f));
                    }
                }
            };
        }
        macro_rules! val_or_fault {
            ($e:expr, $kind:expr) => {
                match eval($e, regs) {
                    Some(v) => v,
                    None => {
                        let f = arith(self);
                        return (ev($kind), Status::Fault(f));
                    }
                }
            };
        }
        let kind = match &ins.op {
            Op::Load { dst, addr, copy } => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let fwd = M::channel(loc)
                    .and_then(|_| self.bufs[t as usize].forward(loc))
                    .map(|e| (e.value, ReadFrom::Store(e.store.id)));
                let forwarded = fwd.is_some();
                if !forwarded
                    && !copy
                    && self.cell_state(loc) == CellState::Uninit
                    && !self.arbitrary_value(prog, t, loc)
                {
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(self.uninit(prog, t, src)),
                    );
                }
                let (value, from) = fwd.unwrap_or_else(|| self.read(loc));
                self.set_reg(t, *dst, value);
                EventKind::Load {
                    loc,
                    value,
                    from,
                    forwarded,
                }
            }
            Op::Store { addr, value } => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let value = val_or_fault!(value, EventKind::Failed);
                match M::channel(loc) {
                    None => self.write(loc, value, id),
                    Some(ch) => self.bufs[t as usize].push(
                        ch,
                        Entry {
                            loc,
                            value,
                            store: StoreTag { id, src, func },
                            epoch: 0,
                        },
                    ),
                }
                EventKind::Store {
                    loc,
                    value,
                    buffered: M::channel(loc).is_some(),
                }
            }
            Op::Rmw { dst, addr, op } => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let arbitrary = match self.cell_state(loc) {
                    CellState::Valid => None,
                    CellState::Uninit if self.next_arbitrary(prog, t).is_some() => {
                        self.next_arbitrary(prog, t)
                    }
                    CellState::Uninit => {
                        return (
                            ev(EventKind::FaultedAccess { loc, lock: false }),
                            Status::Fault(self.uninit(prog, t, src)),
                        )
                    }
                    CellState::Destroyed => {
                        return (
                            ev(EventKind::FaultedAccess { loc, lock: false }),
                            Status::Fault(self.destroyed(t, src)),
                        )
                    }
                };
                let (old, from) = match arbitrary {
                    Some(v) => (v, ReadFrom::Init),
                    None => self.read(loc),
                };
                let written = match &op {
                    RmwOp::Cas { expected, new } => {
                        let exp = val_or_fault!(expected, EventKind::Failed);
                        let new = val_or_fault!(new, EventKind::Failed);
                        (old == exp).then_some(new)
                    }
                    RmwOp::FetchAdd(e) => {
                        Some(old.wrapping_add(val_or_fault!(e, EventKind::Failed)))
                    }
                    RmwOp::Xchg(e) => Some(val_or_fault!(e, EventKind::Failed)),
                    RmwOp::Fetch { op, value, bits } => {
                        let v = val_or_fault!(value, EventKind::Failed);
                        match op.eval(old, v) {
                            Some(w) => Some(fencer_ir::UnOp::Sext(*bits).eval(w)),
                            None => {
                                let f = arith(self);
                                return (ev(EventKind::Failed), Status::Fault(f));
                            }
                        }
                    }
                };
                if arbitrary.is_some() {
                    self.arbitrary_value(prog, t, loc);
                }
                if let Some(w) = written {
                    self.write(loc, w, id);
                }
                self.set_reg(t, *dst, old);
                EventKind::Rmw {
                    loc,
                    read: old,
                    from,
                    written,
                }
            }
            Op::Fence(kind) => {
                if *kind == FenceKind::StoreStore && !M::STORES_IN_ORDER {
                    self.bufs[t as usize].store_fence();
                }
                EventKind::Fence(*kind)
            }
            Op::Assume(c) => {
                val_or_fault!(c, EventKind::Failed);
                EventKind::Assume
            }
            Op::Lock(addr) => {
                let loc = loc_or_fault!(addr, EventKind::Failed, true);
                if self.cell_state(loc) == CellState::Destroyed {
                    // The mutex's state decides the fault: it reads the cell.
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: true }),
                        Status::Fault(self.destroyed(t, src)),
                    );
                }
                let (_, from) = self.read(loc);
                self.write(loc, t as Value + 1, id);
                EventKind::Lock {
                    loc,
                    from,
                    trylock: false,
                    destroy: false,
                }
            }
            Op::TryLock { dst, addr } => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                if self.cell_state(loc) == CellState::Destroyed {
                    // The mutex's state decides the fault: it reads the cell.
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(self.destroyed(t, src)),
                    );
                }
                let (held, from) = self.read(loc);
                if held == 0 {
                    self.write(loc, t as Value + 1, id);
                    self.set_reg(t, *dst, 0);
                    EventKind::Lock {
                        loc,
                        from,
                        trylock: true,
                        destroy: false,
                    }
                } else {
                    self.set_reg(t, *dst, 1);
                    EventKind::TryLockFailed { loc, from }
                }
            }
            Op::MutexDestroy(addr) => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let (held, from) = self.read(loc);
                let err = match self.cell_state(loc) {
                    CellState::Destroyed => Some(self.destroyed(t, src)),
                    // An uninitialised mutex reads as free: only a held one is wrong here.
                    _ if held != 0 => Some(self.fault(
                        t,
                        src,
                        FaultKind::BadMutex,
                        "destroy of a locked mutex".into(),
                    )),
                    _ => None,
                };
                if let Some(f) = err {
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(f),
                    );
                }
                self.write_state(loc, 0, id, CellState::Destroyed);
                EventKind::Lock {
                    loc,
                    from,
                    trylock: false,
                    destroy: true,
                }
            }
            Op::Unlock(addr) => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                if self.cell_state(loc) == CellState::Destroyed {
                    // The mutex's state decides the fault: it reads the cell.
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(self.destroyed(t, src)),
                    );
                }
                let (held, from) = self.read(loc);
                if held != t as Value + 1 {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::BadUnlock,
                        "unlock of a mutex this thread does not hold".into(),
                    );
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(f),
                    );
                }
                self.write(loc, 0, id);
                EventKind::Unlock { loc, from }
            }
            Op::BarrierArrive { addr, serial } => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                if self.cell_state(loc) == CellState::Uninit {
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(self.uninit(prog, t, src)),
                    );
                }
                let (cell, from) = self.read(loc);
                if self.cell_state(loc) == CellState::Destroyed || barrier::count(cell) <= 0 {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::Assertion,
                        "pthread_barrier_wait at a barrier not initialised, or destroyed".into(),
                    );
                    return (
                        ev(EventKind::FaultedAccess { loc, lock: false }),
                        Status::Fault(f),
                    );
                }
                let (next, last) = barrier::arrive(cell);
                // The cell keeps its writer: arrivals read the store that initialised
                // the barrier, not one another (their order is no part of the trace).
                let old = self.mem[loc.obj].get(loc.index);
                self.mem[loc.obj].set(loc.index, Cell { value: next, ..old });
                self.threads[t as usize].barrier = Some((loc, false));
                if last {
                    for th in &mut self.threads {
                        if th.barrier == Some((loc, false)) {
                            th.barrier = Some((loc, true));
                        }
                    }
                }
                if let Some(r) = serial {
                    self.set_reg(t, *r, Value::from(last));
                }
                EventKind::BarrierArrive {
                    loc,
                    from,
                    gen: barrier::generation(cell) as u32,
                    arrived: barrier::arrived(cell) as u32 + 1,
                    count: barrier::count(cell) as u32,
                    serial_used: serial.is_some(),
                }
            }
            Op::BarrierPass(_) => match self.threads[t as usize].barrier.take() {
                Some((loc, _)) => EventKind::BarrierPass { loc },
                // Nothing to wait for (no arrival came first): it only goes on.
                None => EventKind::Assume,
            },
            Op::Spawn { dst, func, arg } => {
                let arg = val_or_fault!(arg, EventKind::Failed);
                let child = self.threads.len() as u32;
                self.set_reg(t, *dst, child as Value);
                if let Status::Fault(f) = self.start_thread(prog, *func, arg) {
                    child_fault = Some(f);
                }
                EventKind::Spawn { child }
            }
            Op::SpawnIndirect { dst, target, arg } => {
                let v = val_or_fault!(target, EventKind::Failed);
                let Some(func) = fencer_ir::func_of_ptr(v, prog.functions.len()) else {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::MemoryError,
                        format!("thread start at {v}, which is not a function's address"),
                    );
                    return (ev(EventKind::Failed), Status::Fault(f));
                };
                let arg = val_or_fault!(arg, EventKind::Failed);
                let child = self.threads.len() as u32;
                self.set_reg(t, *dst, child as Value);
                if let Status::Fault(f) = self.start_thread(prog, func, arg) {
                    child_fault = Some(f);
                }
                EventKind::Spawn { child }
            }
            Op::Join(e) => {
                let c = val_or_fault!(e, EventKind::Failed);
                if c < 0 || c as usize >= self.threads.len() || c as u32 == t {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::BadJoin,
                        format!("join of {c}, which is not another thread's id"),
                    );
                    // An id a later spawn can give: the fault depends on that spawn.
                    let kind = match joinable(c, t) {
                        Some(child) => EventKind::FailedJoin { child },
                        None => EventKind::Failed,
                    };
                    return (ev(kind), Status::Fault(f));
                }
                EventKind::Join { child: c as u32 }
            }
            Op::Alloc {
                dst,
                size,
                zeroed,
                stack,
            } => {
                let n = val_or_fault!(size, EventKind::Failed);
                if !(1..=MAX_ALLOC).contains(&n) {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::MemoryError,
                        format!(
                            "allocation of {n} cells (fencer allows 1 to {MAX_ALLOC}: \
                             offsets within an object are 32 bits)"
                        ),
                    );
                    return (ev(EventKind::Failed), Status::Fault(f));
                }
                let Some(obj) = self.mem.alloc(t, ObjState::new(n as u32, *zeroed, true)) else {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::MemoryError,
                        format!(
                            "too many allocations: fencer names a heap object by its thread \
                             (at most {}) and the thread's allocation count",
                            1 << ALLOC_THREAD_BITS
                        ),
                    );
                    return (ev(EventKind::Failed), Status::Fault(f));
                };
                self.set_reg(t, *dst, Ptr { obj, offset: 0 }.encode());
                if *stack {
                    let fr = self.threads[t as usize].frames.last_mut().expect("frame");
                    fr.stack.push(obj);
                }
                EventKind::Alloc {
                    obj,
                    size: n as u32,
                }
            }
            Op::Free(e) => {
                let v = val_or_fault!(e, EventKind::Free { obj: None });
                match self.free_of(v) {
                    Freeing::Null => EventKind::Free { obj: None },
                    Freeing::Frees(obj) => {
                        self.mem[obj].alive = false;
                        EventKind::Free { obj: Some(obj) }
                    }
                    Freeing::Fault(m, freed) => {
                        let f = self.fault(t, src, FaultKind::MemoryError, m.into());
                        let kind = match freed {
                            Some(obj) => EventKind::FaultedAccess {
                                lock: false,
                                loc: Loc {
                                    obj,
                                    index: u32::MAX,
                                },
                            },
                            None => EventKind::Failed,
                        };
                        return (ev(kind), Status::Fault(f));
                    }
                }
            }
            Op::Exit => {
                let th = &self.threads[t as usize];
                let obj = pending_stack_object(&self.mem, &th.frames)
                    .expect("an exit stops only to free a stack object");
                self.mem[obj].alive = false;
                EventKind::Free { obj: Some(obj) }
            }
            Op::Local { .. }
            | Op::Jump(_)
            | Op::Branch { .. }
            | Op::Call { .. }
            | Op::Return(_)
            | Op::Assert { .. }
            | Op::ThreadId { .. }
            | Op::LoopHead { .. }
            | Op::SpinBack { .. }
            | Op::CallIndirect { .. }
            | Op::Nondet { .. }
            | Op::ExitProcess
            | Op::Unsupported { .. } => unreachable!("local instructions run inside run_locals"),
        };
        let watched = self.threads[t as usize].spin.watching();
        if self.watching > 0 {
            self.watch_stores(t, &kind);
        }
        if self.windows > 0 {
            self.watch_windows(prog, t, &kind, id);
        }
        if !kind.is_pure() {
            let sp = &mut self.threads[t as usize].spin;
            sp.note_impure(&kind);
            let before = sp.impure_upto;
            sp.pure = false;
            sp.impure_upto = id.index + 1;
            // A window lasts only while its lock or unlock is the last impure event.
            let open = sp.lock_open.take();
            let unlocked = sp.unlock_open.take();
            let from_ok = sp.unlock_from.take();
            let passing = sp.handoff.take().is_some();
            let was_open = open.is_some() || unlocked.is_some();
            match &kind {
                EventKind::Lock {
                    loc,
                    from,
                    trylock: false,
                    destroy: false,
                } if self.lock_pairs => {
                    if let Some((_, at, prev)) = unlocked.filter(|&(l, ..)| {
                        l == *loc
                            && !passing
                            && from_ok.is_some_and(|u| *from == ReadFrom::Store(u))
                    }) {
                        sp.pair = Some((at, id.index, prev));
                    }
                    sp.lock_open = Some((*loc, id.index, before));
                }
                EventKind::Unlock { loc, .. } if self.lock_pairs => {
                    if let Some((_, at, prev)) = open.filter(|&(l, ..)| l == *loc) {
                        sp.pair = Some((at, id.index, prev));
                    }
                    sp.unlock_open = Some((*loc, id.index, before));
                    sp.unlock_from = Some(id);
                }
                _ => {}
            }
            let is_open = sp.lock_open.is_some() || sp.unlock_open.is_some();
            match (was_open, is_open) {
                (false, true) => self.windows += 1,
                (true, false) => self.windows -= 1,
                _ => {}
            }
        }
        // An exit that freed a stack object stays where it is: it has more to free, or it
        // ends the thread when run again (in `run_locals`).
        if !matches!(ins.op, Op::Exit) {
            self.threads[t as usize]
                .frames
                .last_mut()
                .expect("frame")
                .pc += 1;
        }
        let status = match self.run_locals(prog, t) {
            Local::Ready => Status::Ok,
            Local::Fault(f) => Status::Fault(f),
            Local::Cut(m) => {
                self.threads[t as usize].cut = Some(m);
                Status::Ok
            }
        };
        let th = &mut self.threads[t as usize];
        if th.events >= self.max_events && !th.finished && th.cut.is_none() {
            th.cut = Some(CutKind::Depth);
        }
        match (watched, th.spin.watching()) {
            (false, true) => self.watching += 1,
            (true, false) => self.watching -= 1,
            _ => {}
        }
        debug_assert_eq!(
            self.watching as usize,
            self.threads.iter().filter(|th| th.spin.watching()).count()
        );
        // The spawning thread went on to its next visible instruction, as after any
        // spawn (had it stayed at the spawn, it would spawn again, for ever, when
        // exploring on after violations). The child's fault came first and is the one
        // reported; should the parent fault too, it stops there unreported, as a thread
        // stops after its own fault.
        if let Some(f) = child_fault {
            if let Status::Fault(_) = status {
                self.threads[t as usize].faulted = true;
            }
            return (ev(kind), Status::Fault(f));
        }
        (ev(kind), status)
    }
}
