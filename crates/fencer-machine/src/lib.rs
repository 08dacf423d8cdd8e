//! The operational semantics of the program IR under a memory model: machine states, the
//! steps enabled in a state, and what a step does.
//!
//! A *step* is either a thread executing its next visible instruction (followed by the
//! local instructions after it, which nobody else can observe), or an auxiliary thread
//! moving the oldest entry of one store buffer to memory (an *update*). After every step,
//! each running thread stands at a visible instruction or has finished.
//!
//! Engines drive this: the reference explorer clones states and tries every enabled step;
//! stateless engines replay steps from the initial state.

pub mod collect;
pub mod trace;

use fencer_ir::{Addr, BinOp, Expr, FuncId, Op, Program, Ptr, Reg, RmwOp, SrcLoc, Value};
use fencer_memory::{Buffers, Chan, Drain, Entry, Loc, MemoryModel};
use fencer_report::TraceLine;

/// Local instructions a thread may run between two visible ones before the step is cut as
/// a non-terminating local loop.
pub const LOCAL_FUEL: u32 = 100_000;
/// Deepest call stack a thread may have.
pub const MAX_FRAMES: usize = 256;
/// Largest heap object, in cells.
pub const MAX_ALLOC: i64 = 1 << 20;

/// A visible event of a real thread: the `index`-th of thread `thread`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    pub thread: u32,
    pub index: u32,
}

/// Who performs a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// A real thread's next visible instruction.
    Thread(u32),
    /// The update thread of a buffer channel of a real thread.
    Update(u32, Chan),
}

/// Where a load's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReadFrom {
    Init,
    Store(EventId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    Load {
        loc: Loc,
        value: Value,
        from: ReadFrom,
        forwarded: bool,
    },
    Store {
        loc: Loc,
        value: Value,
        buffered: bool,
    },
    /// A store buffer entry reaches memory.
    Update {
        loc: Loc,
        value: Value,
        store: EventId,
    },
    Rmw {
        loc: Loc,
        read: Value,
        from: ReadFrom,
        /// `None` for a compare-and-swap that failed (a read only).
        written: Option<Value>,
    },
    Fence,
    Lock {
        loc: Loc,
        from: ReadFrom,
    },
    Unlock {
        loc: Loc,
        from: ReadFrom,
    },
    Spawn {
        child: u32,
    },
    Join {
        child: u32,
    },
    Alloc {
        obj: u32,
        size: u32,
    },
    Free {
        obj: Option<u32>,
    },
    /// `assume` whose condition held (one whose condition fails never runs: its thread
    /// is blocked for good, and the execution is discarded when nothing else can move).
    Assume,
    /// The instruction faulted (the step's status says how); it had no effect.
    Failed,
}

impl EventKind {
    /// The location the event reads, if it reads memory (or a buffer).
    pub fn read_loc(&self) -> Option<(Loc, ReadFrom)> {
        match self {
            EventKind::Load { loc, from, .. }
            | EventKind::Rmw { loc, from, .. }
            | EventKind::Lock { loc, from }
            | EventKind::Unlock { loc, from } => Some((*loc, *from)),
            _ => None,
        }
    }
}

/// One executed step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub step: Step,
    /// For real-thread events, the event's identity; for updates, the store's.
    pub id: EventId,
    pub src: SrcLoc,
    /// The function the instruction belongs to (for updates, the store's).
    pub func: FuncId,
    pub kind: EventKind,
}

/// Something the program did wrong: each is a violation with a source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub thread: u32,
    pub src: SrcLoc,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    Assertion,
    MemoryError,
    Arithmetic,
    BadJoin,
    BadUnlock,
    /// The execution reached something the front-end cannot model ([`Op::Unsupported`]):
    /// not a violation of the program, a refusal to judge it.
    Unsupported,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Assertion => "assertion",
            FaultKind::MemoryError => "memory-error",
            FaultKind::Arithmetic => "arithmetic",
            FaultKind::BadJoin => "bad-join",
            FaultKind::BadUnlock => "bad-unlock",
            FaultKind::Unsupported => "unsupported",
        }
    }
}

/// The result of a step beyond its event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    Fault(Fault),
}

/// Why a thread was stopped by a bound. A cut thread stays where it is for good while the
/// others go on (so that their races with what it did are still seen); the execution is
/// then discarded, and the result holds up to the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CutKind {
    /// A loop ran more iterations than `--unroll` allows.
    Unroll,
    /// A thread ran [`LOCAL_FUEL`] local instructions without a visible one.
    LocalLoop,
    /// A thread's call stack grew past [`MAX_FRAMES`].
    Recursion,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub func: FuncId,
    pub pc: u32,
    pub regs: Vec<Value>,
    /// Where the caller wants the return value.
    pub ret: Option<Reg>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadState {
    /// The call stack; the root frame stays after the thread finishes, so that final-state
    /// conditions can read its registers.
    pub frames: Vec<Frame>,
    pub finished: bool,
    /// Visible events executed so far (the index of the next one).
    pub events: u32,
    /// The function the thread started in (names spawned threads).
    pub func: FuncId,
    /// How often each backward jump (function, from-pc) was taken, for `--unroll`.
    pub back_edges: Vec<(FuncId, u32, u32)>,
    /// Set when a bound stopped the thread: it never runs again.
    pub cut: Option<CutKind>,
    /// Pure-iteration tracking (see [`SpinTrack`]).
    pub spin: SpinTrack,
}

/// Counts a backward jump from `pc` of `func` for `--unroll`; false when taking it would
/// exceed the bound.
fn take_back_edge(edges: &mut Vec<(FuncId, u32, u32)>, func: FuncId, pc: u32, unroll: u32) -> bool {
    if unroll == u32::MAX {
        return true;
    }
    let n = match edges.iter_mut().find(|e| (e.0, e.1) == (func, pc)) {
        Some(e) => {
            e.2 += 1;
            e.2
        }
        None => {
            edges.push((func, pc, 1));
            1
        }
    };
    n <= unroll
}

/// Dynamic spin-loop pruning. When a thread takes a backward jump, comes back to the same
/// jump having done nothing visible but loads, and finds its registers as they were, the
/// iteration in between changed nothing: dropping it leaves a valid execution with the same
/// outcome, so every execution that goes on from here has a shorter equivalent one, and
/// this one is discarded (the thread blocks, as at a false `assume`). This catches the
/// waiting loops the static spin-loop rewrite cannot, such as Dekker's
/// `while (flag1) { if (turn != 0) { ... } }` when the `if` is not taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SpinTrack {
    /// The backward jump last taken: function, pc, call depth.
    at: Option<(FuncId, u32, u32)>,
    /// The registers when it was taken.
    regs: Vec<Value>,
    /// Only loads since then.
    pure: bool,
    /// One past the index of the thread's last impure event (for [`Op::SpinBack`]).
    impure_upto: u32,
    /// The thread repeated a pure iteration: it never runs again.
    pub blocked: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub value: Value,
    /// The store (or read-modify-write, lock, unlock) whose value the cell holds.
    pub writer: Option<EventId>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjState {
    pub cells: Vec<Cell>,
    pub alive: bool,
    pub heap: bool,
}

/// A machine state: threads, memory, and every thread's store buffers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub threads: Vec<ThreadState>,
    pub mem: Vec<ObjState>,
    pub bufs: Vec<Buffers<StoreTag>>,
    /// Most times a thread may take one backward jump (`--unroll`); `u32::MAX` for no bound.
    pub unroll: u32,
}

/// What a buffer entry remembers of the store that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoreTag {
    pub id: EventId,
    pub src: SrcLoc,
    pub func: FuncId,
}

enum Local {
    /// The thread stands at a visible instruction, or has finished.
    Ready,
    Fault(Fault),
    Cut(CutKind),
}

impl State {
    /// The initial state: memory initialised, every static thread at its first visible
    /// instruction. Faults in the threads' local prefixes are returned with the state.
    pub fn initial(prog: &Program) -> (State, Status) {
        Self::initial_bounded(prog, u32::MAX)
    }

    /// The initial state, with loops bounded to `unroll` iterations: an execution that
    /// would take one backward jump more often has that thread cut ([`ThreadState::cut`]).
    pub fn initial_bounded(prog: &Program, unroll: u32) -> (State, Status) {
        let mem = prog
            .objects
            .iter()
            .map(|o| ObjState {
                cells: o
                    .init
                    .iter()
                    .map(|&value| Cell {
                        value,
                        writer: None,
                    })
                    .collect(),
                alive: true,
                heap: false,
            })
            .collect();
        let mut s = State {
            threads: Vec::new(),
            mem,
            bufs: Vec::new(),
            unroll,
        };
        let mut status = Status::Ok;
        for t in &prog.threads {
            let st = s.start_thread(prog, t.func, t.arg);
            if status == Status::Ok {
                status = st;
            }
        }
        (s, status)
    }

    fn start_thread(&mut self, prog: &Program, func: FuncId, arg: Value) -> Status {
        let f = &prog.functions[func as usize];
        let mut regs = vec![0; f.num_regs()];
        if f.params > 0 {
            regs[0] = arg;
        }
        let tid = self.threads.len() as u32;
        self.threads.push(ThreadState {
            frames: vec![Frame {
                func,
                pc: 0,
                regs,
                ret: None,
            }],
            finished: false,
            events: 0,
            func,
            back_edges: Vec::new(),
            cut: None,
            spin: SpinTrack::default(),
        });
        self.bufs.push(Buffers::default());
        match self.run_locals(prog, tid) {
            Local::Ready => Status::Ok,
            Local::Fault(f) => Status::Fault(f),
            Local::Cut(m) => {
                self.threads[tid as usize].cut = Some(m);
                Status::Ok
            }
        }
    }

    /// The bound that cut some thread of this execution, if one did.
    pub fn cut(&self) -> Option<CutKind> {
        self.threads.iter().find_map(|t| t.cut)
    }

    /// Every thread finished and every buffer empty.
    pub fn is_complete(&self) -> bool {
        self.threads.iter().all(|t| t.finished) && self.bufs.iter().all(|b| b.is_empty())
    }

    /// Name of a thread in reports: the declared name, or `func#id` for spawned threads.
    pub fn thread_name(&self, prog: &Program, t: u32) -> String {
        match prog.threads.get(t as usize) {
            Some(d) => d.name.clone(),
            None => format!(
                "{}#{}",
                prog.functions[self.threads[t as usize].func as usize].name, t
            ),
        }
    }

    pub fn reg_value(&self, thread: u32, reg: Reg) -> Value {
        self.threads[thread as usize].frames[0].regs[reg as usize]
    }

    pub fn cell_value(&self, loc: Loc) -> Value {
        self.mem[loc.obj as usize].cells[loc.index as usize].value
    }

    /// The steps enabled in this state, threads first, then updates; appended to `out`.
    pub fn enabled<M: MemoryModel>(&self, prog: &Program, out: &mut Vec<Step>) {
        for (t, th) in self.threads.iter().enumerate() {
            if !th.finished
                && th.cut.is_none()
                && !th.spin.blocked
                && self.thread_enabled::<M>(prog, t as u32)
            {
                out.push(Step::Thread(t as u32));
            }
        }
        for (t, b) in self.bufs.iter().enumerate() {
            for c in b.channels() {
                out.push(Step::Update(t as u32, c));
            }
        }
    }

    pub fn current<'p>(&self, prog: &'p Program, t: u32) -> (&Frame, &'p fencer_ir::Instr) {
        let fr = self.threads[t as usize]
            .frames
            .last()
            .expect("running thread has a frame");
        (fr, &prog.functions[fr.func as usize].body[fr.pc as usize])
    }

    /// Whether thread `t`'s next visible instruction may run now. Instructions that would
    /// fault are enabled, so that the fault is reported.
    pub fn thread_enabled<M: MemoryModel>(&self, prog: &Program, t: u32) -> bool {
        let (fr, ins) = self.current(prog, t);
        let buf = &self.bufs[t as usize];
        match &ins.op {
            Op::Fence | Op::Spawn { .. } | Op::SpawnIndirect { .. } | Op::Unlock(_) => {
                buf.is_empty()
            }
            Op::Rmw { addr, .. } => match self.resolve(prog, fr, addr) {
                Ok(loc) => buf.drained(M::rmw_drain(loc)),
                Err(_) => true,
            },
            Op::Lock(addr) => {
                buf.is_empty()
                    && match self.resolve(prog, fr, addr) {
                        Ok(loc) => self.cell_value(loc) == 0,
                        Err(_) => true,
                    }
            }
            Op::Join(e) => match eval(e, &fr.regs) {
                Some(c) if c >= 0 && (c as usize) < self.threads.len() && c as u32 != t => {
                    self.threads[c as usize].finished && self.bufs[c as usize].is_empty()
                }
                _ => true,
            },
            // The condition reads registers only, so a false `assume` blocks for good.
            Op::Assume(c) => eval(c, &fr.regs) != Some(0),
            _ => true,
        }
    }

    /// Whether some thread is blocked for good by a false `assume`: an execution that ends
    /// so is discarded (it is not a deadlock).
    pub fn assume_blocked(&self, prog: &Program) -> bool {
        (0..self.threads.len() as u32).any(|t| {
            self.threads[t as usize].spin.blocked
                || !self.threads[t as usize].finished
                    && matches!(&self.current(prog, t).1.op, Op::Assume(c)
                    if eval(c, &self.current(prog, t).0.regs) == Some(0))
        })
    }

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
                match &ins.op {
                    Op::Load { addr, .. } => match at(addr) {
                        Some(l)
                            if M::channel(l).is_some()
                                && self.bufs[t as usize].forward(l).is_some() =>
                        {
                            Access::Local
                        }
                        Some(l) => Access::Read(l),
                        None => Access::Any,
                    },
                    Op::Store { addr, .. } => match at(addr) {
                        Some(l) if M::channel(l).is_some() => Access::Local,
                        Some(l) => Access::Write(l),
                        None => Access::Any,
                    },
                    Op::Rmw { addr, op, .. } => match (at(addr), op) {
                        (None, _) => Access::Any,
                        (Some(l), RmwOp::Cas { expected, .. }) => match eval(expected, &fr.regs) {
                            Some(v) if v != self.cell_value(l) => Access::RmwRead(l),
                            _ => Access::Rmw(l),
                        },
                        (Some(l), _) => Access::Rmw(l),
                    },
                    Op::Lock(a) | Op::Unlock(a) => at(a).map_or(Access::Any, Access::Mutex),
                    Op::Fence | Op::Spawn { .. } | Op::SpawnIndirect { .. } => Access::Barrier,
                    Op::Join(e) => match eval(e, &fr.regs) {
                        Some(c) if c >= 0 && (c as usize) < self.threads.len() => {
                            Access::Join(c as u32)
                        }
                        _ => Access::Any,
                    },
                    Op::Assume(_) | Op::Alloc { .. } => Access::Local,
                    _ => Access::Any,
                }
            }
        }
    }

    /// Executes an enabled step.
    pub fn step<M: MemoryModel>(&mut self, prog: &Program, step: Step) -> (Event, Status) {
        match step {
            Step::Update(t, chan) => {
                let e = self.bufs[t as usize]
                    .pop(chan)
                    .expect("an enabled update has an entry");
                self.mem[e.loc.obj as usize].cells[e.loc.index as usize] = Cell {
                    value: e.value,
                    writer: Some(e.store.id),
                };
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
}

/// What a step would do to shared state, for deciding whether two steps commute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    /// Waits for the thread's own buffers (fence, spawn).
    Barrier,
    /// Waits for a thread to finish.
    Join(u32),
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
            | Access::Mutex(l) => Some(l),
            _ => None,
        }
    }
    fn writes(self) -> bool {
        matches!(self, Access::Write(_) | Access::Rmw(_) | Access::Mutex(_))
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
    // A thread's buffer-draining operations wait for (some of) its own updates.
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
                Access::Mutex(_) | Access::Barrier => true,
                _ => false,
            }
        };
        if waits(sa, aa, sb) || waits(sb, ab, sa) {
            return true;
        }
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
    match (aa.loc(), ab.loc()) {
        (Some(x), Some(y)) if x == y => aa.writes() || ab.writes(),
        _ => false,
    }
}

/// Evaluates a local expression; `None` on division by zero.
pub fn eval(e: &Expr, regs: &[Value]) -> Option<Value> {
    Some(match e {
        Expr::Const(v) => *v,
        Expr::Reg(r) => regs[*r as usize],
        Expr::AddrOf(obj, idx) => Ptr {
            obj: *obj,
            offset: eval(idx, regs)? as u32,
        }
        .encode(),
        Expr::Un(op, a) => op.eval(eval(a, regs)?),
        Expr::Bin(op, a, b) => {
            // Short-circuit so that `p != 0 && 10 / p > 1` does not divide by zero.
            let x = eval(a, regs)?;
            match op {
                BinOp::LogAnd if x == 0 => 0,
                BinOp::LogOr if x != 0 => 1,
                _ => op.eval(x, eval(b, regs)?)?,
            }
        }
    })
}

impl State {
    fn fault(&self, t: u32, src: SrcLoc, kind: FaultKind, message: String) -> Fault {
        Fault {
            kind,
            thread: t,
            src,
            message,
        }
    }

    /// The cell an address denotes in frame `fr`, or why it denotes none.
    pub fn resolve(&self, prog: &Program, fr: &Frame, addr: &Addr) -> Result<Loc, String> {
        match addr {
            Addr::Global { obj, index } => {
                let i = eval(index, &fr.regs).ok_or("division by zero in an index")?;
                let o = &self.mem[*obj as usize];
                if i < 0 || i as usize >= o.cells.len() {
                    return Err(format!(
                        "index {i} out of bounds of `{}` (size {})",
                        prog.objects[*obj as usize].name,
                        o.cells.len()
                    ));
                }
                Ok(Loc {
                    obj: *obj,
                    index: i as u32,
                })
            }
            Addr::Ptr(e) => {
                let v = eval(e, &fr.regs).ok_or("division by zero in an address")?;
                if v == 0 {
                    return Err("null pointer dereference".into());
                }
                let p = Ptr::decode(v).ok_or_else(|| format!("{v} is not a valid address"))?;
                let o = self
                    .mem
                    .get(p.obj as usize)
                    .ok_or_else(|| format!("{v} is not a valid address"))?;
                if !o.alive {
                    return Err("use after free".into());
                }
                if p.offset as usize >= o.cells.len() {
                    return Err(format!(
                        "offset {} out of bounds of an object of size {}",
                        p.offset,
                        o.cells.len()
                    ));
                }
                Ok(Loc {
                    obj: p.obj,
                    index: p.offset,
                })
            }
        }
    }

    fn read(&self, loc: Loc) -> (Value, ReadFrom) {
        let c = self.mem[loc.obj as usize].cells[loc.index as usize];
        (c.value, c.writer.map_or(ReadFrom::Init, ReadFrom::Store))
    }

    fn write(&mut self, loc: Loc, value: Value, id: EventId) {
        self.mem[loc.obj as usize].cells[loc.index as usize] = Cell {
            value,
            writer: Some(id),
        };
    }

    fn set_reg(&mut self, t: u32, r: Reg, v: Value) {
        let fr = self.threads[t as usize].frames.last_mut().expect("frame");
        fr.regs[r as usize] = v;
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
                match self.resolve(prog, fr, $addr) {
                    Ok(l) => l,
                    Err(m) => {
                        let f = self.fault(t, src, FaultKind::MemoryError, m);
                        return (ev($kind), Status::Fault(f));
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
            Op::Load { dst, addr } => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let fwd = M::channel(loc)
                    .and_then(|_| self.bufs[t as usize].forward(loc))
                    .map(|e| (e.value, ReadFrom::Store(e.store.id)));
                let forwarded = fwd.is_some();
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
                let (old, from) = self.read(loc);
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
            Op::Fence => EventKind::Fence,
            Op::Assume(c) => {
                val_or_fault!(c, EventKind::Failed);
                EventKind::Assume
            }
            Op::Lock(addr) => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let (_, from) = self.read(loc);
                self.write(loc, t as Value + 1, id);
                EventKind::Lock { loc, from }
            }
            Op::Unlock(addr) => {
                let loc = loc_or_fault!(addr, EventKind::Failed);
                let (held, from) = self.read(loc);
                if held != t as Value + 1 {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::BadUnlock,
                        "unlock of a mutex this thread does not hold".into(),
                    );
                    return (ev(EventKind::Failed), Status::Fault(f));
                }
                self.write(loc, 0, id);
                EventKind::Unlock { loc, from }
            }
            Op::Spawn { dst, func, arg } => {
                let arg = val_or_fault!(arg, EventKind::Failed);
                let child = self.threads.len() as u32;
                self.set_reg(t, *dst, child as Value);
                let st = self.start_thread(prog, *func, arg);
                if st != Status::Ok {
                    return (ev(EventKind::Spawn { child }), st);
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
                let st = self.start_thread(prog, func, arg);
                if st != Status::Ok {
                    return (ev(EventKind::Spawn { child }), st);
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
                    return (ev(EventKind::Failed), Status::Fault(f));
                }
                EventKind::Join { child: c as u32 }
            }
            Op::Alloc { dst, size } => {
                let n = val_or_fault!(size, EventKind::Failed);
                if !(1..=MAX_ALLOC).contains(&n) {
                    let f = self.fault(
                        t,
                        src,
                        FaultKind::MemoryError,
                        format!("allocation of {n} cells (expected 1 to {MAX_ALLOC})"),
                    );
                    return (ev(EventKind::Failed), Status::Fault(f));
                }
                let obj = self.mem.len() as u32;
                self.mem.push(ObjState {
                    cells: vec![
                        Cell {
                            value: 0,
                            writer: None
                        };
                        n as usize
                    ],
                    alive: true,
                    heap: true,
                });
                self.set_reg(t, *dst, Ptr { obj, offset: 0 }.encode());
                EventKind::Alloc {
                    obj,
                    size: n as u32,
                }
            }
            Op::Free(e) => {
                let v = val_or_fault!(e, EventKind::Free { obj: None });
                if v == 0 {
                    EventKind::Free { obj: None }
                } else {
                    let bad = |m: &str| m.to_string();
                    let err = match Ptr::decode(v) {
                        None => Some(bad("free of a value that is not a pointer")),
                        Some(p) => match self.mem.get(p.obj as usize) {
                            None => Some(bad("free of an invalid pointer")),
                            Some(o) if !o.heap || p.offset != 0 => {
                                Some(bad("free of a pointer that malloc did not return"))
                            }
                            Some(o) if !o.alive => Some(bad("double free")),
                            _ => None,
                        },
                    };
                    if let Some(m) = err {
                        let f = self.fault(t, src, FaultKind::MemoryError, m);
                        return (ev(EventKind::Failed), Status::Fault(f));
                    }
                    let obj = Ptr::decode(v).expect("checked").obj;
                    self.mem[obj as usize].alive = false;
                    EventKind::Free { obj: Some(obj) }
                }
            }
            Op::Local { .. }
            | Op::Jump(_)
            | Op::Branch { .. }
            | Op::Call { .. }
            | Op::Return(_)
            | Op::Assert { .. }
            | Op::Exit
            | Op::ThreadId { .. }
            | Op::LoopHead { .. }
            | Op::SpinBack { .. }
            | Op::CallIndirect { .. }
            | Op::Unsupported { .. } => unreachable!("local instructions run inside run_locals"),
        };
        // Events whose removal leaves a valid execution with the same state: loads, fences,
        // assumes, and read-modify-writes that wrote back the value they read (a failing
        // test-and-set in a spin lock).
        let pure = match &kind {
            EventKind::Load { .. } | EventKind::Fence | EventKind::Assume => true,
            EventKind::Rmw { read, written, .. } => written.is_none_or(|w| w == *read),
            _ => false,
        };
        if !pure {
            let sp = &mut self.threads[t as usize].spin;
            sp.pure = false;
            sp.impure_upto = id.index + 1;
        }
        self.threads[t as usize]
            .frames
            .last_mut()
            .expect("frame")
            .pc += 1;
        let status = match self.run_locals(prog, t) {
            Local::Ready => Status::Ok,
            Local::Fault(f) => Status::Fault(f),
            Local::Cut(m) => {
                self.threads[t as usize].cut = Some(m);
                Status::Ok
            }
        };
        (ev(kind), status)
    }

    /// Runs thread `t`'s local instructions until a visible one or the end.
    fn run_locals(&mut self, prog: &Program, t: u32) -> Local {
        let unroll = self.unroll;
        let th = &mut self.threads[t as usize];
        for _ in 0..LOCAL_FUEL {
            let depth = th.frames.len();
            let fr = th.frames.last_mut().expect("frame");
            let f = &prog.functions[fr.func as usize];
            let Some(ins) = f.body.get(fr.pc as usize) else {
                // Falling off the end of a function is `return;`.
                if th.frames.len() == 1 {
                    th.finished = true;
                    return Local::Ready;
                }
                th.frames.pop();
                th.frames.last_mut().expect("caller").pc += 1;
                continue;
            };
            let src = ins.loc;
            let arith = || {
                Local::Fault(Fault {
                    kind: FaultKind::Arithmetic,
                    thread: t,
                    src,
                    message: "division by zero".into(),
                })
            };
            match &ins.op {
                Op::Local { dst, expr } => {
                    let Some(v) = eval(expr, &fr.regs) else {
                        return arith();
                    };
                    fr.regs[*dst as usize] = v;
                    fr.pc += 1;
                }
                Op::Jump(_) | Op::Branch { .. } => {
                    let to = match &ins.op {
                        Op::Jump(to) => *to,
                        Op::Branch {
                            cond,
                            then_to,
                            else_to,
                        } => match eval(cond, &fr.regs) {
                            Some(0) => *else_to,
                            Some(_) => *then_to,
                            None => return arith(),
                        },
                        _ => unreachable!(),
                    };
                    if to <= fr.pc {
                        let key = (fr.func, fr.pc, depth as u32);
                        let sp = &mut th.spin;
                        if sp.pure && sp.at == Some(key) && sp.regs == fr.regs {
                            sp.blocked = true;
                            return Local::Ready;
                        }
                        sp.at = Some(key);
                        sp.regs.clone_from(&fr.regs);
                        sp.pure = true;
                    }
                    if to <= fr.pc && !take_back_edge(&mut th.back_edges, fr.func, fr.pc, unroll) {
                        return Local::Cut(CutKind::Unroll);
                    }
                    let fr = th.frames.last_mut().expect("frame");
                    fr.pc = to;
                }
                Op::Assert { cond, text } => {
                    let Some(c) = eval(cond, &fr.regs) else {
                        return arith();
                    };
                    if c == 0 {
                        return Local::Fault(Fault {
                            kind: FaultKind::Assertion,
                            thread: t,
                            src,
                            message: format!("assertion `{text}` failed"),
                        });
                    }
                    fr.pc += 1;
                }
                Op::Call { dst, func, args } => {
                    if depth >= MAX_FRAMES {
                        return Local::Cut(CutKind::Recursion);
                    }
                    let callee = &prog.functions[*func as usize];
                    let mut regs = vec![0; callee.num_regs()];
                    for (i, a) in args.iter().enumerate() {
                        let Some(v) = eval(a, &fr.regs) else {
                            return arith();
                        };
                        regs[i] = v;
                    }
                    let ret = *dst;
                    th.frames.push(Frame {
                        func: *func,
                        pc: 0,
                        regs,
                        ret,
                    });
                }
                Op::CallIndirect { dst, target, args } => {
                    if depth >= MAX_FRAMES {
                        return Local::Cut(CutKind::Recursion);
                    }
                    let Some(v) = eval(target, &fr.regs) else {
                        return arith();
                    };
                    let Some(func) = fencer_ir::func_of_ptr(v, prog.functions.len()) else {
                        return Local::Fault(Fault {
                            kind: FaultKind::MemoryError,
                            thread: t,
                            src,
                            message: format!("call of {v}, which is not a function's address"),
                        });
                    };
                    let callee = &prog.functions[func as usize];
                    let mut regs = vec![0; callee.num_regs()];
                    for (i, a) in args.iter().enumerate().take(callee.params as usize) {
                        let Some(v) = eval(a, &fr.regs) else {
                            return arith();
                        };
                        regs[i] = v;
                    }
                    th.frames.push(Frame {
                        func,
                        pc: 0,
                        regs,
                        ret: *dst,
                    });
                }
                Op::Unsupported { message } => {
                    return Local::Fault(Fault {
                        kind: FaultKind::Unsupported,
                        thread: t,
                        src,
                        message: message.clone(),
                    });
                }
                Op::Return(e) => {
                    let v = match e {
                        Some(e) => match eval(e, &fr.regs) {
                            Some(v) => Some(v),
                            None => return arith(),
                        },
                        None => None,
                    };
                    if depth == 1 {
                        fr.pc = f.body.len() as u32;
                        th.finished = true;
                        return Local::Ready;
                    }
                    let done = th.frames.pop().expect("frame");
                    let caller = th.frames.last_mut().expect("caller");
                    if let (Some(r), Some(v)) = (done.ret, v) {
                        caller.regs[r as usize] = v;
                    }
                    caller.pc += 1;
                }
                Op::Exit => {
                    th.frames.truncate(1);
                    let root = &mut th.frames[0];
                    root.pc = prog.functions[root.func as usize].body.len() as u32;
                    th.finished = true;
                    return Local::Ready;
                }
                Op::ThreadId { dst } => {
                    fr.regs[*dst as usize] = t as Value;
                    fr.pc += 1;
                }
                Op::LoopHead { dst } => {
                    fr.regs[*dst as usize] = th.events as Value;
                    fr.pc += 1;
                }
                Op::SpinBack { to, start } => {
                    if th.spin.impure_upto as Value <= fr.regs[*start as usize] {
                        th.spin.blocked = true;
                        return Local::Ready;
                    }
                    let to = *to;
                    if !take_back_edge(&mut th.back_edges, fr.func, fr.pc, unroll) {
                        return Local::Cut(CutKind::Unroll);
                    }
                    let fr = th.frames.last_mut().expect("frame");
                    fr.pc = to;
                }
                _ => return Local::Ready,
            }
        }
        Local::Cut(CutKind::LocalLoop)
    }

    /// Renders an event for a counterexample.
    pub fn describe(&self, prog: &Program, e: &Event, step_no: usize) -> TraceLine {
        let name = |l: Loc| loc_name(prog, l);
        let (thread, buffer_update) = match e.step {
            Step::Thread(t) => (self.thread_name(prog, t), false),
            Step::Update(t, Chan::Thread) => (format!("upd({})", self.thread_name(prog, t)), true),
            Step::Update(t, Chan::Loc(l)) => (
                format!("upd({},{})", self.thread_name(prog, t), name(l)),
                true,
            ),
        };
        let from = |f: &ReadFrom| match f {
            ReadFrom::Init => "initial value".to_string(),
            ReadFrom::Store(id) => format!("{}'s store", self.thread_name(prog, id.thread)),
        };
        let (op, location, value) = match &e.kind {
            EventKind::Load {
                loc,
                value,
                from: f,
                forwarded,
            } => (
                format!(
                    "load {} -> {}{}",
                    name(*loc),
                    value,
                    if *forwarded {
                        " (from own store buffer)".to_string()
                    } else {
                        format!(" ({})", from(f))
                    }
                ),
                Some(name(*loc)),
                Some(*value),
            ),
            EventKind::Store {
                loc,
                value,
                buffered,
            } => (
                format!(
                    "store {} = {}{}",
                    name(*loc),
                    value,
                    if *buffered { " (to store buffer)" } else { "" }
                ),
                Some(name(*loc)),
                Some(*value),
            ),
            EventKind::Update { loc, value, .. } => (
                format!("update {} = {} (store buffer -> memory)", name(*loc), value),
                Some(name(*loc)),
                Some(*value),
            ),
            EventKind::Rmw {
                loc, read, written, ..
            } => (
                match written {
                    Some(w) => format!("atomic {} : {} -> {}", name(*loc), read, w),
                    None => format!(
                        "atomic {} : read {} (compare failed, no write)",
                        name(*loc),
                        read
                    ),
                },
                Some(name(*loc)),
                Some(written.unwrap_or(*read)),
            ),
            EventKind::Fence => ("fence".into(), None, None),
            EventKind::Lock { loc, .. } => (format!("lock {}", name(*loc)), Some(name(*loc)), None),
            EventKind::Unlock { loc, .. } => {
                (format!("unlock {}", name(*loc)), Some(name(*loc)), None)
            }
            EventKind::Spawn { child } => (
                format!("spawn {}", self.thread_name(prog, *child)),
                None,
                Some(*child as i64),
            ),
            EventKind::Join { child } => (
                format!("join {}", self.thread_name(prog, *child)),
                None,
                None,
            ),
            EventKind::Alloc { size, .. } => (format!("alloc {size} cells"), None, None),
            EventKind::Free { .. } => ("free".into(), None, None),
            EventKind::Assume => ("assume (holds)".into(), None, None),
            EventKind::Failed => ("fails".into(), None, None),
        };
        TraceLine {
            step: step_no,
            function: prog
                .source_trace
                .then(|| prog.functions[e.func as usize].name.clone()),
            thread,
            file: prog.file_name(e.src).to_string(),
            line: e.src.line,
            column: e.src.col,
            op,
            location,
            value,
            buffer_update,
        }
    }
}

/// `x`, `a[3]`, or `heap#5[0]` for a cell.
pub fn loc_name(prog: &Program, l: Loc) -> String {
    if (l.obj as usize) < prog.objects.len() {
        prog.cell_name(l.obj, l.index)
    } else {
        format!("heap#{}[{}]", l.obj, l.index)
    }
}
