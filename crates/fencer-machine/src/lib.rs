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

use fencer_ir::{
    Addr, BinOp, Expr, FenceKind, FuncId, ObjId, Op, Program, Ptr, Reg, RmwOp, SrcLoc, Value,
};
use fencer_memory::{Buffers, Chan, Drain, Entry, Loc, MemoryModel};
use fencer_report::TraceLine;
use std::collections::BTreeMap;

/// Local instructions a thread may run between two visible ones before the step is cut as
/// a non-terminating local loop.
pub const LOCAL_FUEL: u32 = 100_000;
/// Deepest call stack a thread may have.
pub const MAX_FRAMES: usize = 256;
/// Largest heap object, in cells (see [`fencer_ir::MAX_CELLS`]).
pub const MAX_ALLOC: i64 = fencer_ir::MAX_CELLS;
/// Objects of at most this many cells are stored densely; larger ones keep only the cells
/// that differ from their initial state, so memory follows what a program touches rather
/// than what it declares.
pub const DENSE_MAX: u32 = 4096;

/// Sees every execution an engine explores, for commands built on top of engines
/// (robustness monitors, fence repair) that need the events themselves, not only the
/// report. The engines neither know nor care what they do with them.
pub trait Observer {
    /// An execution ended: every thread finished, or nothing can move (blocked, cut by a
    /// bound, deadlocked). Executions that an engine abandons as redundant (DPOR's sleep
    /// sets) are not shown: an equivalent one is. `events` is the whole execution.
    fn execution(&mut self, _state: &State, _events: &[Event]) {}
    /// A step faulted; `events` ends with the faulting event. (The reference explorer
    /// ends the execution there; DPOR exploring on after violations goes on with the
    /// other threads and shows the end too.)
    fn fault(&mut self, _state: &State, _fault: &Fault, _events: &[Event]) {}
}

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
    )
}

/// An observer that looks at nothing, for runs nobody watches.
pub struct NoObserver;
impl Observer for NoObserver {}

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
    /// A full fence ran with the thread's buffers empty; a store-store fence ran (it never
    /// waits) and opened a new epoch for the thread's later stores.
    Fence(FenceKind),
    /// An acquisition of a mutex; with `destroy`, `pthread_mutex_destroy`, which orders
    /// against the mutex's other acquisitions as an acquisition never released does.
    Lock {
        loc: Loc,
        from: ReadFrom,
        /// Taken by a `trylock`, which could also have run while the mutex was held.
        trylock: bool,
        /// A `pthread_mutex_destroy`: for races, an acquisition never released.
        destroy: bool,
    },
    Unlock {
        loc: Loc,
        from: ReadFrom,
    },
    /// A `trylock` that found the mutex held: it only read it.
    TryLockFailed {
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
    /// An access that faulted on what another thread did or has yet to do: a read of a
    /// cell nobody has written yet, an access to (or a free of) a freed heap object. It
    /// races with the cell's writers and the object's free.
    FaultedAccess {
        /// The cell it would have accessed (index `u32::MAX` for a free).
        loc: Loc,
        /// A `pthread_mutex_lock`, which waits while its mutex is held: it could not have
        /// run before a free that found the mutex held.
        lock: bool,
    },
    /// A join of a thread id no thread has yet: it faulted, and races with the spawn that
    /// gives that id, after which it would have joined that thread.
    FailedJoin {
        child: u32,
    },
}

impl EventKind {
    /// Whether the event is a fault (which ends its thread, and the execution).
    pub fn faulted(&self) -> bool {
        matches!(
            self,
            EventKind::Failed | EventKind::FaultedAccess { .. } | EventKind::FailedJoin { .. }
        )
    }

    /// Whether removing the event leaves a valid execution with the same state: loads,
    /// fences, assumes, failed trylocks, and read-modify-writes that wrote back the value
    /// they read (a failing test-and-set in a spin lock).
    pub fn is_pure(&self) -> bool {
        match self {
            EventKind::Load { .. }
            | EventKind::Fence(_)
            | EventKind::Assume
            | EventKind::TryLockFailed { .. } => true,
            EventKind::Rmw { read, written, .. } => written.is_none_or(|w| w == *read),
            _ => false,
        }
    }

    /// The cell the event touches (reads, writes, or faulted on), if any.
    pub fn loc(&self) -> Option<Loc> {
        match self {
            EventKind::Load { loc, .. }
            | EventKind::Store { loc, .. }
            | EventKind::Update { loc, .. }
            | EventKind::Rmw { loc, .. }
            | EventKind::Lock { loc, .. }
            | EventKind::Unlock { loc, .. }
            | EventKind::TryLockFailed { loc, .. }
            | EventKind::FaultedAccess { loc, .. } => Some(*loc),
            _ => None,
        }
    }

    /// The location the event reads, if it reads memory (or a buffer).
    pub fn read_loc(&self) -> Option<(Loc, ReadFrom)> {
        match self {
            EventKind::Load { loc, from, .. }
            | EventKind::Rmw { loc, from, .. }
            | EventKind::Lock { loc, from, .. }
            | EventKind::Unlock { loc, from }
            | EventKind::TryLockFailed { loc, from } => Some((*loc, *from)),
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
    /// Use of a destroyed mutex, or destruction of a held one.
    BadMutex,
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
            FaultKind::BadMutex => "bad-mutex",
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
    /// A thread executed as many visible events as the depth bound allows.
    Depth,
}

thread_local! {
    /// Register files of frames that returned, for the next frame's: a call and its
    /// return happen in nearly every execution, and so does the copy of a deeper call
    /// stack into a state that had returned from the call (a snapshot's into the last
    /// execution's state). Per thread, so that the workers of a split never share one.
    static SPARE_REGS: std::cell::RefCell<Vec<Vec<Value>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Most register files kept for reuse, per thread.
const SPARE_REGS_MAX: usize = 64;

/// A register file of `n` zeros, reusing one of a returned frame where there is one.
fn new_regs(n: usize) -> Vec<Value> {
    let mut v = SPARE_REGS
        .with(|p| p.borrow_mut().pop())
        .unwrap_or_default();
    v.clear();
    v.resize(n, 0);
    v
}

/// Keeps a returned frame's register file for the next frame.
fn spare_regs(v: Vec<Value>) {
    SPARE_REGS.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < SPARE_REGS_MAX {
            p.push(v);
        }
    });
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub func: FuncId,
    pub pc: u32,
    pub regs: Vec<Value>,
    /// Where the caller wants the return value.
    pub ret: Option<Reg>,
    /// The stack objects this call allocated (`Alloc { stack: true }`), freed if the thread
    /// exits from inside it.
    pub stack: Vec<u32>,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ThreadState {
    /// The call stack; the root frame stays after the thread finishes, so that final-state
    /// conditions can read its registers.
    pub frames: Vec<Frame>,
    pub finished: bool,
    /// Visible events executed so far (the index of the next one).
    pub events: u32,
    /// The function the thread started in (names spawned threads).
    pub func: FuncId,
    /// How often each backward jump was taken since its loop was entered, for `--unroll`.
    pub back_edges: Vec<BackEdge>,
    /// Set when a bound stopped the thread: it never runs again.
    pub cut: Option<CutKind>,
    /// Pure-iteration tracking (see [`SpinTrack`]).
    pub spin: SpinTrack,
    /// The thread faulted (a violation, already reported); when an engine explores on
    /// after a violation, the other threads go on so that their races are still seen.
    pub faulted: bool,
    /// The thread ended the process ([`Op::ExitProcess`]): it stands there for good.
    pub exited: bool,
}

/// Runs thread `t`'s assignments and jumps inside its current frame, the bulk of local
/// computation, with the frame's code, registers and pc held in locals: each instruction
/// then costs its own work, not the walk from the thread to its frame, function and body
/// (a chain of dependent loads that took a quarter of a long `main`'s steps). It stops at
/// any other instruction and when `fuel` runs out, and leaves those to `run_locals`;
/// `Some` is what `run_locals` returns: a division by zero, a spin loop's block, a cut by
/// `--unroll`, or `Ready` at a load, store or read-modify-write (visible: the common case,
/// where looking the instruction up again cost short local runs more than the fast loop
/// saved them).
#[inline]
fn straight_locals(
    prog: &Program,
    th: &mut ThreadState,
    t: u32,
    unroll: u32,
    spin_check: bool,
    fuel: &mut u32,
) -> Option<Local> {
    let depth = th.frames.len();
    let ThreadState {
        frames,
        spin,
        back_edges,
        ..
    } = th;
    let fr = frames.last_mut()?;
    let func = fr.func;
    let body = &prog.functions[func as usize].body[..];
    let regs = &mut fr.regs[..];
    let mut pc = fr.pc;
    let mut out = None;
    while *fuel > 0 {
        let Some(ins) = body.get(pc as usize) else {
            break;
        };
        let arith = || {
            Some(Local::Fault(Fault {
                kind: FaultKind::Arithmetic,
                thread: t,
                src: ins.loc,
                message: "division by zero".into(),
            }))
        };
        let to = match &ins.op {
            Op::Local { dst, expr } => {
                let Some(v) = eval_shallow(expr, regs) else {
                    out = arith();
                    break;
                };
                write_reg(&mut regs[*dst as usize], v, spin, depth);
                *fuel -= 1;
                pc += 1;
                continue;
            }
            Op::Jump(to) => *to,
            Op::Branch {
                cond,
                then_to,
                else_to,
            } => match eval_shallow(cond, regs) {
                Some(0) => *else_to,
                Some(_) => *then_to,
                None => {
                    out = arith();
                    break;
                }
            },
            Op::Load { .. } | Op::Store { .. } | Op::Rmw { .. } => {
                out = Some(Local::Ready);
                break;
            }
            _ => break,
        };
        if to <= pc {
            let key = (func, pc, depth as u32);
            if spin_check && spin.pure && spin.at == Some(key) && !spin.changed {
                spin.blocked = true;
                out = Some(Local::Ready);
                break;
            }
            spin.at = Some(key);
            spin.changed = false;
            spin.pure = true;
            if !take_back_edge(back_edges, func, pc, to, depth, unroll) {
                out = Some(Local::Cut(CutKind::Unroll));
                break;
            }
        }
        *fuel -= 1;
        pc = to;
    }
    fr.pc = pc;
    out
}

/// Counts a backward jump from `pc` of `func` for `--unroll`; false when taking it would
/// exceed the bound.
/// Writes a register of the frame at call depth `depth`, noting whether its value changed
/// (see `SpinTrack::changed`). A frame deeper than the backward jump being watched is gone
/// when control is back at that jump, so what it held does not count: a spin loop that
/// calls `try_lock(l)` comes back with the same state whatever the callee's registers did.
#[inline]
fn write_reg(slot: &mut Value, v: Value, sp: &mut SpinTrack, depth: usize) {
    if *slot != v {
        *slot = v;
        if sp.at.is_some_and(|a| depth as u32 <= a.2) {
            sp.changed = true;
        }
    }
}

fn take_back_edge(
    edges: &mut Vec<BackEdge>,
    func: FuncId,
    from: u32,
    to: u32,
    depth: usize,
    unroll: u32,
) -> bool {
    if unroll == u32::MAX {
        return true;
    }
    let depth = depth as u32;
    // The loops laid out inside this one are entered anew by its next iteration: their
    // counts start again, so that N bounds the iterations of each entry of a loop (as
    // CBMC's and GenMC's unrolling do), not their sum over the whole execution.
    edges.retain(|e| !(e.depth == depth && e.func == func && e.from > to && e.from < from));
    let n = match edges
        .iter_mut()
        .find(|e| (e.func, e.from, e.depth) == (func, from, depth))
    {
        Some(e) => {
            e.count += 1;
            e.count
        }
        None => {
            edges.push(BackEdge {
                func,
                from,
                depth,
                count: 1,
            });
            1
        }
    };
    n <= unroll
}

/// A backward jump taken by a thread, for `--unroll`: where (function, from-pc, and the
/// call depth of its frame) and how often since its loop was last entered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BackEdge {
    func: FuncId,
    from: u32,
    depth: u32,
    count: u32,
}

/// Forgets the backward jumps of frames deeper than `depth` (they returned): a loop in a
/// function called again starts its count again.
#[inline]
fn forget_back_edges(edges: &mut Vec<BackEdge>, depth: usize) {
    if !edges.is_empty() {
        edges.retain(|e| e.depth as usize <= depth);
    }
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
    /// Whether a register of the jump's frame or a caller's has taken a new value since
    /// then. (Set on a write of a value other than the register's: a register that
    /// changes and changes back counts as changed, which only keeps an iteration that
    /// could have been dropped. Comparing whole register files at every backward jump
    /// cost more than the rest of a long local loop's step.)
    changed: bool,
    /// Only loads since then.
    pure: bool,
    /// One past the index of the thread's last impure event (for [`Op::SpinBack`]).
    impure_upto: u32,
    /// A mutex the thread took with its last impure event, and no other thread has
    /// touched the mutex's cell since: the mutex, the lock's index, and `impure_upto`
    /// before it.
    lock_open: Option<(Loc, u32, u32)>,
    /// The same for a mutex the thread gave back with its last impure event.
    unlock_open: Option<(Loc, u32, u32)>,
    /// The unlock the thread's next lock of that mutex must read for the two to be a
    /// pair: its own, or the last one of other threads' passes through the window (see
    /// [`Handoff`]).
    unlock_from: Option<EventId>,
    /// Another thread's pass through the `unlock_open` window, under way.
    handoff: Option<Handoff>,
    /// The last lock and unlock (or unlock and lock) of one mutex with nothing impure in
    /// between, and no other thread touching the mutex's cell in between: the first's
    /// index, the second's, and `impure_upto` before the first. An iteration whose only
    /// impure events are such a pair is dropped like a pure one (see
    /// [`State::lock_pairs`]).
    pair: Option<(u32, u32, u32)>,
    /// The thread repeated a pure iteration: it never runs again.
    pub blocked: bool,
    /// The cells stored since the last loop head, while every impure event since was a
    /// store that went straight to memory (see [`Stored`]).
    stored: Stored,
    /// The thread's event count at the last loop head.
    stored_from: u32,
    /// What an iteration that ended at its back edge stored, its other events all pure:
    /// until the thread stores to each of these cells again, with nobody (the thread
    /// included) reading it in between. Then that iteration changed nothing a later one
    /// did not redo, and the thread blocks as after a pure iteration (see
    /// [`State::watch_stores`]).
    dead: Stored,
    /// Blocked because an earlier iteration turned out to have changed nothing: the
    /// thread is not waiting, and an execution without that iteration goes on.
    pub dropped: bool,
}

/// Another thread's pass through a thread's unlock-then-lock window: it took the mutex
/// from the window's expected unlock, and stood then at `pc` of `func` at call depth
/// `depth` with the registers `regs`. If it gives the mutex back with only pure events in
/// between, standing at that lock again with the same registers (a second waiter's
/// spurious wake-up: `unlock; lock` in a predicate loop), the pass changed nothing, and
/// both it and the window's iteration can be dropped: the window stays a pair, now
/// expecting the pass's unlock. Without this, two waiters on one mutex would hand it back
/// and forth forever, each pass keeping the other's iteration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Handoff {
    thread: u32,
    func: FuncId,
    pc: u32,
    depth: u32,
    regs: Box<[Value]>,
}

/// Whether two register files of a frame of `f` agree but for the registers its loop
/// heads write ([`Op::LoopHead`]: an event count, new at every iteration).
fn same_but_loop_heads(f: &fencer_ir::Function, a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).enumerate().all(|(r, (x, y))| {
            x == y
                || f.body
                    .iter()
                    .any(|i| matches!(i.op, Op::LoopHead { dst } if dst as usize == r))
        })
}

/// A few cells, or a mark that there were too many (or something other than stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Stored {
    locs: [Loc; STORED],
    /// How many of `locs` hold cells; [`Stored::SPOILT`] when they cannot say.
    len: u8,
}

/// Cells an iteration may store to and still be dropped: a CAS retry loop that prepares
/// its node (`n->next = top`) stores one or two.
const STORED: usize = 4;

impl Default for Stored {
    /// No cells, and none collected: a thread collects its stores only from a rewritten
    /// loop's head on, so that one outside such loops is never watched.
    fn default() -> Self {
        Stored {
            locs: [Loc { obj: 0, index: 0 }; STORED],
            len: Self::SPOILT,
        }
    }
}

impl Stored {
    const SPOILT: u8 = u8::MAX;

    /// No cells yet, collecting.
    const EMPTY: Stored = Stored {
        locs: [Loc { obj: 0, index: 0 }; STORED],
        len: 0,
    };

    fn cells(&self) -> &[Loc] {
        if self.len == Self::SPOILT {
            &[]
        } else {
            &self.locs[..self.len as usize]
        }
    }

    fn add(&mut self, loc: Loc) {
        if self.len == Self::SPOILT || self.cells().contains(&loc) {
            return;
        }
        if self.len as usize == STORED {
            self.len = Self::SPOILT;
        } else {
            self.locs[self.len as usize] = loc;
            self.len += 1;
        }
    }

    /// Removes `loc`; whether it was there.
    fn remove(&mut self, loc: Loc) -> bool {
        let Some(i) = self.cells().iter().position(|&l| l == loc) else {
            return false;
        };
        self.len -= 1;
        self.locs[i] = self.locs[self.len as usize];
        true
    }

    fn is_empty(&self) -> bool {
        self.cells().is_empty()
    }
}

impl SpinTrack {
    /// Notes an impure event for the iteration under way (see [`SpinTrack::dead`]).
    fn note_impure(&mut self, kind: &EventKind) {
        match kind {
            EventKind::Store {
                loc,
                buffered: false,
                ..
            } => self.stored.add(*loc),
            _ => self.stored.len = Stored::SPOILT,
        }
    }

    /// At the back edge of an iteration that started at event count `start` and was not
    /// pure: if its only impure events were stores to memory, none of them read since,
    /// the thread watches those cells from now on.
    fn end_iteration(&mut self, start: Value) {
        if self.stored_from as Value == start && !self.stored.is_empty() {
            self.dead = self.stored;
        }
    }

    /// Whether some cell of the thread's is watched for reads ([`State::watch_stores`]).
    fn watching(&self) -> bool {
        !self.stored.is_empty() || !self.dead.is_empty()
    }

    /// Whether every event since the iteration that started at event count `start` was
    /// pure, but for at most one lock and unlock of one mutex (when `pairs`).
    fn pure_since(&self, start: Value, pairs: bool) -> bool {
        if self.impure_upto as Value <= start {
            return true;
        }
        pairs
            && matches!(self.pair, Some((lock, unlock, before))
                if self.impure_upto == unlock + 1
                    && lock as Value >= start
                    && before as Value <= start)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub value: Value,
    /// The store (or read-modify-write, lock, unlock) whose value the cell holds.
    pub writer: Option<EventId>,
    pub state: CellState,
}

/// Whether a cell holds a value a program may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellState {
    Valid,
    /// Never written, in an object that does not start zeroed (`malloc`, stack slots):
    /// loading or read-modify-writing it is a fault; a store makes it valid.
    Uninit,
    /// A destroyed mutex (value 0, so that a lock of it is enabled and faults): locking,
    /// unlocking or read-modify-writing it is a fault; a store re-initialises it.
    Destroyed,
}

/// The cells of one object. Which representation an object uses depends on its size only,
/// and a sparse map never holds a cell equal to the object's blank one, so equal contents
/// are equal representations: derived `Eq` and `Hash` stay right for memoisation.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Cells {
    Dense(Vec<Cell>),
    Sparse { size: u32, map: BTreeMap<u32, Cell> },
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ObjState {
    /// Names these contents: a new one for every change, copied with them by a clone.
    version: Version,
    /// For dense cells, more than [`CHUNK`] of them, the same for each run of that many
    /// cells: `clone_from` copies only the runs that differ (a CAS table of which a
    /// sequence wrote a few cells). Empty for smaller objects, copied whole (a vector
    /// here would cost an allocation in every clone of the state).
    chunks: Chunks,
    cells: Cells,
    /// What every cell holds before it is first written.
    blank: Cell,
    pub alive: bool,
    pub heap: bool,
}

/// A name for an object's contents, made anew for every change (every mutable borrow
/// through [`Memory`], every [`ObjState::set`]) and copied only with the contents: two
/// objects with one version hold the same contents, and `clone_from` copies nothing
/// between them. DPOR refills one scratch state from others for every sequence it runs,
/// and most objects (string constants, tables only the main thread writes) are the same
/// in both.
type Version = Meta<u64>;

/// Cells per [`ObjState::chunks`] version.
const CHUNK: usize = 32;

/// Versions of runs of cells.
type Chunks = Meta<Vec<u64>>;

/// Bookkeeping kept beside an object's contents and not part of them: equal to any
/// other, hashed as nothing, shown as `_`.
#[derive(Clone, Copy)]
struct Meta<T>(T);

impl<T> PartialEq for Meta<T> {
    fn eq(&self, _: &Meta<T>) -> bool {
        true
    }
}

impl<T> Eq for Meta<T> {}

impl<T> std::hash::Hash for Meta<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl<T> std::fmt::Debug for Meta<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}

impl Version {
    /// Every write makes one: a counter of the thread's own, in a block of 2^40 that no
    /// other thread has, so that workers exploring in parallel share no cache line here
    /// (one atomic counter for all of them bounced between the cores on every write).
    fn fresh() -> Version {
        use std::cell::Cell;
        use std::sync::atomic::{AtomicU64, Ordering};
        const BLOCK: u64 = 1 << 40;
        static BLOCKS: AtomicU64 = AtomicU64::new(0);
        thread_local! {
            static NEXT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
        }
        NEXT.with(|n| {
            let (mut next, mut end) = n.get();
            if next == end {
                next = BLOCKS.fetch_add(1, Ordering::Relaxed) * BLOCK;
                end = next + BLOCK;
            }
            n.set((next + 1, end));
            Meta(next)
        })
    }
}

impl ObjState {
    /// An object of `size` cells, each 0 and valid if `zeroed`, else uninitialised.
    pub fn new(size: u32, zeroed: bool, heap: bool) -> ObjState {
        let blank = Cell {
            value: 0,
            writer: None,
            state: if zeroed {
                CellState::Valid
            } else {
                CellState::Uninit
            },
        };
        let cells = if size <= DENSE_MAX {
            Cells::Dense(vec![blank; size as usize])
        } else {
            Cells::Sparse {
                size,
                map: BTreeMap::new(),
            }
        };
        let version = Version::fresh();
        let chunks = match &cells {
            Cells::Dense(v) if v.len() > CHUNK => Meta(vec![version.0; v.len().div_ceil(CHUNK)]),
            _ => Meta(Vec::new()),
        };
        ObjState {
            version,
            chunks,
            cells,
            blank,
            alive: true,
            heap,
        }
    }

    /// Number of cells.
    pub fn size(&self) -> u32 {
        match &self.cells {
            Cells::Dense(v) => v.len() as u32,
            Cells::Sparse { size, .. } => *size,
        }
    }

    /// Cell `i`, which must be below [`ObjState::size`].
    pub fn get(&self, i: u32) -> Cell {
        match &self.cells {
            Cells::Dense(v) => v[i as usize],
            Cells::Sparse { map, .. } => map.get(&i).copied().unwrap_or(self.blank),
        }
    }

    /// Sets cell `i`, which must be below [`ObjState::size`].
    pub fn set(&mut self, i: u32, c: Cell) {
        self.version = Version::fresh();
        match &mut self.cells {
            Cells::Dense(v) => {
                v[i as usize] = c;
                if let Some(run) = self.chunks.0.get_mut(i as usize / CHUNK) {
                    *run = self.version.0;
                }
            }
            Cells::Sparse { map, .. } if c == self.blank => {
                map.remove(&i);
            }
            Cells::Sparse { map, .. } => {
                map.insert(i, c);
            }
        }
    }
}

/// Bits of a heap object's id that name the allocating thread (the rest count that
/// thread's allocations).
const ALLOC_THREAD_BITS: u32 = 10;

/// The program's objects: its globals, then what each thread allocated. A heap (or
/// escaping stack) object's id is the allocating thread and how many objects that thread
/// allocated before, never a global count: two threads' allocations then commute (the
/// same objects and pointer values in either order), so DPOR need not order them.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Memory {
    globals: Vec<ObjState>,
    /// Per thread, its allocations in order.
    heap: Vec<Vec<ObjState>>,
}

impl Memory {
    fn new(globals: Vec<ObjState>) -> Memory {
        Memory {
            globals,
            heap: Vec::new(),
        }
    }

    pub fn get(&self, id: ObjId) -> Option<&ObjState> {
        let g = self.globals.len() as u32;
        if id < g {
            return self.globals.get(id as usize);
        }
        let rel = id - g;
        self.heap
            .get((rel & ((1 << ALLOC_THREAD_BITS) - 1)) as usize)?
            .get((rel >> ALLOC_THREAD_BITS) as usize)
    }

    /// The object, to change: its contents get a new [`Version`].
    fn get_mut(&mut self, id: ObjId) -> Option<&mut ObjState> {
        let g = self.globals.len() as u32;
        let o = if id < g {
            self.globals.get_mut(id as usize)
        } else {
            let rel = id - g;
            self.heap
                .get_mut((rel & ((1 << ALLOC_THREAD_BITS) - 1)) as usize)?
                .get_mut((rel >> ALLOC_THREAD_BITS) as usize)
        }?;
        o.version = Version::fresh();
        Some(o)
    }

    /// Adds thread `t`'s next object; `None` when its id would not fit a pointer.
    fn alloc(&mut self, t: u32, o: ObjState) -> Option<ObjId> {
        let id = self.next_id(t)?;
        if self.heap.len() <= t as usize {
            self.heap.resize_with(t as usize + 1, Vec::new);
        }
        self.heap[t as usize].push(o);
        Some(id)
    }

    /// The id thread `t`'s next allocation gets, if it can allocate.
    fn next_id(&self, t: u32) -> Option<ObjId> {
        if t >= 1 << ALLOC_THREAD_BITS {
            return None;
        }
        let k = self.heap.get(t as usize).map_or(0, |h| h.len()) as u64;
        let id = self.globals.len() as u64 + ((k << ALLOC_THREAD_BITS) | t as u64);
        // Pointers encode `id + 1` in 31 bits (see `Ptr::encode`).
        (id < (1 << 31) - 1).then_some(id as ObjId)
    }

    /// Every object with its id: globals first, then each thread's allocations.
    pub fn iter(&self) -> impl Iterator<Item = (ObjId, &ObjState)> + '_ {
        let g = self.globals.len() as u32;
        let globals = self
            .globals
            .iter()
            .enumerate()
            .map(|(i, o)| (i as ObjId, o));
        let heap = self.heap.iter().enumerate().flat_map(move |(t, objs)| {
            objs.iter()
                .enumerate()
                .map(move |(k, o)| (g + ((k as u32) << ALLOC_THREAD_BITS | t as u32), o))
        });
        globals.chain(heap)
    }
}

impl std::ops::Index<ObjId> for Memory {
    type Output = ObjState;
    fn index(&self, id: ObjId) -> &ObjState {
        self.get(id).expect("an object the machine made")
    }
}

impl std::ops::IndexMut<ObjId> for Memory {
    fn index_mut(&mut self, id: ObjId) -> &mut ObjState {
        self.get_mut(id).expect("an object the machine made")
    }
}

// Clone by hand, for `clone_from`: the derived one allocates every vector anew, and DPOR
// clones a state into a scratch one for every sequence it simulates (see fencer-dpor's
// `Simulated`). Each `clone_from` names every field, so that a field added later cannot be
// forgotten.
impl Clone for Frame {
    fn clone(&self) -> Self {
        let Frame {
            func,
            pc,
            regs,
            ret,
            stack,
        } = self;
        let mut copy = new_regs(0);
        copy.extend_from_slice(regs);
        Frame {
            func: *func,
            pc: *pc,
            regs: copy,
            ret: *ret,
            stack: stack.clone(),
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let Frame {
            func,
            pc,
            regs,
            ret,
            stack,
        } = src;
        self.func = *func;
        self.pc = *pc;
        self.regs.clone_from(regs);
        self.ret = *ret;
        self.stack.clone_from(stack);
    }
}

impl Clone for ThreadState {
    fn clone(&self) -> Self {
        let ThreadState {
            frames,
            finished,
            events,
            func,
            back_edges,
            cut,
            spin,
            faulted,
            exited,
        } = self;
        ThreadState {
            frames: frames.clone(),
            finished: *finished,
            events: *events,
            func: *func,
            back_edges: back_edges.clone(),
            cut: *cut,
            spin: spin.clone(),
            faulted: *faulted,
            exited: *exited,
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let ThreadState {
            frames,
            finished,
            events,
            func,
            back_edges,
            cut,
            spin,
            faulted,
            exited,
        } = src;
        // Frames past the source's go to the spare register files, and the source's
        // extra frames come from there.
        while self.frames.len() > frames.len() {
            if let Some(f) = self.frames.pop() {
                spare_regs(f.regs);
            }
        }
        self.frames.clone_from(frames);
        self.finished = *finished;
        self.events = *events;
        self.func = *func;
        self.back_edges.clone_from(back_edges);
        self.cut = *cut;
        self.spin.clone_from(spin);
        self.faulted = *faulted;
        self.exited = *exited;
    }
}

impl Clone for Cells {
    fn clone(&self) -> Self {
        match self {
            Cells::Dense(v) => Cells::Dense(v.clone()),
            Cells::Sparse { size, map } => Cells::Sparse {
                size: *size,
                map: map.clone(),
            },
        }
    }
    fn clone_from(&mut self, src: &Self) {
        match (&mut *self, src) {
            (Cells::Dense(a), Cells::Dense(b)) => a.clone_from(b),
            _ => *self = src.clone(),
        }
    }
}

impl Clone for ObjState {
    fn clone(&self) -> Self {
        let ObjState {
            version,
            chunks,
            cells,
            blank,
            alive,
            heap,
        } = self;
        ObjState {
            version: *version,
            chunks: chunks.clone(),
            cells: cells.clone(),
            blank: *blank,
            alive: *alive,
            heap: *heap,
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let ObjState {
            version,
            chunks,
            cells,
            blank,
            alive,
            heap,
        } = src;
        if self.version.0 == version.0 {
            return;
        }
        self.version = *version;
        match (&mut self.cells, cells) {
            (Cells::Dense(a), Cells::Dense(b))
                if a.len() == b.len()
                    && !chunks.0.is_empty()
                    && self.chunks.0.len() == chunks.0.len() =>
            {
                for (k, (mine, theirs)) in self.chunks.0.iter_mut().zip(&chunks.0).enumerate() {
                    if *mine != *theirs {
                        let run = k * CHUNK..((k + 1) * CHUNK).min(a.len());
                        a[run.clone()].copy_from_slice(&b[run]);
                        *mine = *theirs;
                    }
                }
            }
            _ => {
                self.cells.clone_from(cells);
                self.chunks.0.clone_from(&chunks.0);
            }
        }
        self.blank = *blank;
        self.alive = *alive;
        self.heap = *heap;
    }
}

impl Clone for Memory {
    fn clone(&self) -> Self {
        let Memory { globals, heap } = self;
        Memory {
            globals: globals.clone(),
            heap: heap.clone(),
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let Memory { globals, heap } = src;
        self.globals.clone_from(globals);
        self.heap.clone_from(heap);
    }
}

impl Clone for State {
    fn clone(&self) -> Self {
        let State {
            threads,
            mem,
            bufs,
            unroll,
            max_events,
            inputs,
            lock_pairs,
            windows,
            watching,
            spin_check,
        } = self;
        State {
            threads: threads.clone(),
            mem: mem.clone(),
            bufs: bufs.clone(),
            unroll: *unroll,
            max_events: *max_events,
            inputs: inputs.clone(),
            lock_pairs: *lock_pairs,
            windows: *windows,
            watching: *watching,
            spin_check: *spin_check,
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let State {
            threads,
            mem,
            bufs,
            unroll,
            max_events,
            inputs,
            lock_pairs,
            windows,
            watching,
            spin_check,
        } = src;
        self.threads.clone_from(threads);
        self.mem.clone_from(mem);
        self.bufs.clone_from(bufs);
        self.unroll = *unroll;
        self.max_events = *max_events;
        self.inputs.clone_from(inputs);
        self.lock_pairs = *lock_pairs;
        self.windows = *windows;
        self.watching = *watching;
        self.spin_check = *spin_check;
    }
}

/// What [`State::hang`] works in, kept by its caller for the allocations: a copy of the
/// final state, and a waiting thread's registers after its last iteration and after this
/// one.
#[derive(Default)]
pub struct HangScratch {
    state: Option<State>,
    last: Vec<Value>,
    now: Vec<Value>,
}

/// A machine state: threads, memory, and every thread's store buffers.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub threads: Vec<ThreadState>,
    pub mem: Memory,
    pub bufs: Vec<Buffers<StoreTag>>,
    /// Most times a thread may take one backward jump (`--unroll`); `u32::MAX` for no bound.
    pub unroll: u32,
    /// Most visible events one thread may execute (`--max-depth`); `u32::MAX` for no bound.
    pub max_events: u32,
    /// Values [`Op::Nondet`] takes, per thread id, the next one last. Empty unless an
    /// engine that chooses inputs (the symbolic one) replays a trace: without a value an
    /// input is refused, since the explicit engines do not enumerate input values.
    pub inputs: Vec<Vec<Value>>,
    /// Whether an iteration of a rewritten spin loop that takes a mutex, only reads, and
    /// gives the mutex back counts as pure (GenMC's lock zero-net-effect loops: `while (1)
    /// { lock(m); if (done) break; unlock(m); }`), and so does one that gives back a mutex
    /// it holds and takes it again (`while (!ready) pthread_cond_wait(&c, &m);` with
    /// spurious wake-ups). Memory is as before the iteration; what another thread could
    /// have seen of it is the mutex in the other state, and that is judged by what the
    /// program does, not by what it could do: a `lock` of another thread waits (the same
    /// execution without the iteration has it not wait), but any other access to the
    /// mutex's cell by another thread between the two (a plain load of the word, a
    /// `memcpy` out of it, a compare-and-swap on it, a failed `trylock`, a store into it)
    /// saw or changed it, and then the pair is no pair ([`State::spoil_windows`]). Such an
    /// access conflicts with the lock and the unlock, so every equivalent execution has it
    /// in the same place.
    pub lock_pairs: bool,
    /// How many threads have a mutex window open (`SpinTrack::lock_open` or
    /// `unlock_open`): while none has, events need not look.
    windows: u32,
    /// How many threads watch cells they stored for reads ([`State::watch_stores`]):
    /// while none does, events need not look.
    watching: u32,
    /// Whether the run-time spin-loop check ([`SpinTrack`]) blocks a thread that comes
    /// back to a backward jump after an iteration that changed nothing. Off in the replay
    /// of a symbolic trace ([`State::initial_with_inputs`]): that engine runs every
    /// iteration, so its schedule goes on past a back edge the check would stop at, and
    /// a thread blocked there has no step the schedule could give it.
    pub spin_check: bool,
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
        Self::initial_limited(prog, unroll, u32::MAX)
    }

    /// The initial state with loops bounded to `unroll` iterations and every thread to
    /// `max_events` visible events: a thread that reaches either bound is cut
    /// ([`ThreadState::cut`]) while the others go on.
    pub fn initial_limited(prog: &Program, unroll: u32, max_events: u32) -> (State, Status) {
        Self::initial_full(prog, unroll, max_events, Vec::new(), true)
    }

    /// The initial state of a replay with input values: `inputs[t]` are the values thread
    /// `t`'s inputs ([`Op::Nondet`]) take, in the order it reads them. The symbolic engine
    /// that chose them runs every iteration of a loop, so the run-time spin-loop check is
    /// off ([`State::spin_check`]): the replay runs the program as that engine did.
    pub fn initial_with_inputs(prog: &Program, inputs: Vec<Vec<Value>>) -> (State, Status) {
        let inputs = inputs
            .into_iter()
            .map(|mut v| {
                v.reverse();
                v
            })
            .collect();
        Self::initial_full(prog, u32::MAX, u32::MAX, inputs, false)
    }

    fn initial_full(
        prog: &Program,
        unroll: u32,
        max_events: u32,
        inputs: Vec<Vec<Value>>,
        spin_check: bool,
    ) -> (State, Status) {
        let mem = prog
            .objects
            .iter()
            .map(|o| {
                let mut m = ObjState::new(o.size, true, false);
                for &(k, value) in &o.init {
                    if k < o.size {
                        m.set(
                            k,
                            Cell {
                                value,
                                writer: None,
                                state: CellState::Valid,
                            },
                        );
                    }
                }
                m
            })
            .collect();
        let mut s = State {
            threads: Vec::new(),
            mem: Memory::new(mem),
            bufs: Vec::new(),
            unroll,
            max_events,
            inputs,
            lock_pairs: true,
            windows: 0,
            watching: 0,
            spin_check,
        };
        let mut status = Status::Ok;
        for t in &prog.threads {
            let st = s.start_thread(prog, t.func, t.arg);
            if status == Status::Ok {
                status = st;
            } else if let Status::Fault(f) = st {
                // The first fault is the one reported; a thread that faults after it stops
                // there unreported (left at its faulting local instruction, it would be
                // taken as a visible one when exploring on after violations).
                s.threads[f.thread as usize].faulted = true;
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
                stack: Vec::new(),
            }],
            finished: false,
            events: 0,
            func,
            back_edges: Vec::new(),
            cut: None,
            spin: SpinTrack::default(),
            faulted: false,
            exited: false,
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

    /// Every buffer empty, and every thread finished; or the process ended
    /// ([`Op::ExitProcess`]) and every other thread is done for good: finished, or
    /// waiting for something that can never come (a waiting loop that [`State::hang`]
    /// proves stuck, a mutex or a join), with none cut by a bound, faulted, stopped by a
    /// false `assume`, or blocked after an iteration that changed nothing. A thread blocked
    /// in a waiting loop that could still leave it is not done: the execution in which it
    /// reads later is explored, and this one is discarded, as without the exit.
    pub fn is_complete<M: MemoryModel>(&self, prog: &Program) -> bool {
        if !self.bufs.iter().all(|b| b.is_empty()) {
            return false;
        }
        if !self.threads.iter().any(|t| t.exited) {
            return self.threads.iter().all(|t| t.finished);
        }
        let mut waiting = false;
        for (t, th) in self.threads.iter().enumerate() {
            if th.finished || th.exited {
                continue;
            }
            if th.cut.is_some() || th.faulted || th.spin.dropped {
                return false;
            }
            if th.spin.blocked {
                waiting = true;
            } else if matches!(&self.current(prog, t as u32).1.op, Op::Assume(c)
                if eval(c, &self.current(prog, t as u32).0.regs) == Some(0))
            {
                return false;
            }
        }
        !waiting || self.hang::<M>(prog, &mut HangScratch::default()).is_some()
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
        self.mem[loc.obj].get(loc.index).value
    }

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
    fn thread_runs<M: MemoryModel>(&self, prog: &Program, t: u32) -> bool {
        let th = &self.threads[t as usize];
        !th.finished
            && th.cut.is_none()
            && !th.spin.blocked
            && !th.faulted
            && !th.exited
            && self.thread_enabled::<M>(prog, t)
    }

    pub fn current<'p>(&self, prog: &'p Program, t: u32) -> (&Frame, &'p fencer_ir::Instr) {
        let fr = self.threads[t as usize]
            .frames
            .last()
            .expect("running thread has a frame");
        (fr, &prog.functions[fr.func as usize].body[fr.pc as usize])
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

    /// Whether this execution, which cannot go on, ends in a *hang*: a thread blocked in a
    /// waiting loop that could never leave it. Such a thread was blocked because an
    /// iteration read nothing new; that alone proves nothing (it may have read too early,
    /// and another execution lets it read later). So each waiting thread is run once more,
    /// alone, on the final memory: if it comes back to its loop having again done nothing
    /// but read, nothing can ever release it. Returns the thread and its loop's position.
    /// A thread stopped by a false `assume` the user wrote means the execution is
    /// discarded instead. The threads run in `scratch`, kept for its allocations (every
    /// execution an `assume` blocks comes here).
    pub fn hang<M: MemoryModel>(
        &self,
        prog: &Program,
        scratch: &mut HangScratch,
    ) -> Option<(u32, SrcLoc)> {
        // A thread cut by a bound may not be waiting at all; one blocked after an
        // iteration that changed nothing is not: the execution without that iteration
        // is explored, and shows any hang of the others.
        if self
            .threads
            .iter()
            .any(|th| !th.finished && th.cut.is_some() || th.spin.dropped)
        {
            return None;
        }
        for (t, th) in self.threads.iter().enumerate() {
            if !th.finished
                && !th.spin.blocked
                && matches!(&self.current(prog, t as u32).1.op, Op::Assume(_))
            {
                return None;
            }
        }
        let waiting = (0..self.threads.len() as u32).filter(|&t| {
            let th = &self.threads[t as usize];
            !th.finished && th.spin.blocked
        });
        let HangScratch { state, last, now } = scratch;
        let s = match state {
            Some(s) => {
                s.clone_from(self);
                s
            }
            None => state.insert(self.clone()),
        };
        let mut first = None;
        for t in waiting {
            let (fr, ins) = s.current(prog, t);
            let (at, to, start) = match ins.op {
                Op::SpinBack { to, start } => {
                    let body = &prog.functions[fr.func as usize].body;
                    (body[to as usize].loc, Some(to), Some(start))
                }
                _ => (ins.loc, None, None),
            };
            first.get_or_insert((t, at));
            // The thread's registers where it blocked, but for the iteration's start
            // (an event count, new every time): a loop that carries a register (a CAS
            // retry loop takes the value its failed CAS read) blocks again with other
            // registers and may leave on the next iteration; only a pure iteration that
            // ends where the previous one did proves that nothing ever lets it leave.
            let regs_now = |s: &State, t: u32, r: &mut Vec<Value>| {
                r.clone_from(&s.threads[t as usize].frames.last().expect("frame").regs);
                if let Some(x) = start.and_then(|k| r.get_mut(k as usize)) {
                    *x = 0;
                }
            };
            regs_now(s, t, last);
            let restart = |s: &mut State| {
                let th = &mut s.threads[t as usize];
                th.spin.blocked = false;
                th.spin.at = None;
                if let Some(to) = to {
                    th.frames.last_mut().expect("frame").pc = to;
                }
            };
            restart(s);
            if !matches!(s.run_locals(prog, t), Local::Ready) {
                return None;
            }
            let mut steps = 0;
            loop {
                let th = &s.threads[t as usize];
                if th.spin.blocked {
                    regs_now(s, t, now);
                    if now == last {
                        break;
                    }
                    std::mem::swap(last, now);
                    steps += 1;
                    if steps > 10_000 {
                        return None;
                    }
                    restart(s);
                    if !matches!(s.run_locals(prog, t), Local::Ready) {
                        return None;
                    }
                    continue;
                }
                steps += 1;
                if th.finished || th.exited || th.cut.is_some() || steps > 10_000 {
                    return None;
                }
                if !s.thread_enabled::<M>(prog, t) {
                    return None;
                }
                let (ev, status) = s.step::<M>(prog, Step::Thread(t));
                // The loop can let another thread go on (it gives back a mutex that one
                // waits for, then takes it again: `pthread_cond_wait` in a `while`): then
                // nothing says it waits forever; the execution where the other thread
                // goes on in that window is explored (the other's attempt races with the
                // acquisition that blocked it).
                if (0..s.threads.len() as u32).any(|u| u != t && s.thread_runs::<M>(prog, u)) {
                    return None;
                }
                // A mutex taken and given back in the iteration is judged at its end.
                let paired = s.lock_pairs
                    && matches!(
                        ev.kind,
                        EventKind::Lock {
                            trylock: false,
                            destroy: false,
                            ..
                        } | EventKind::Unlock { .. }
                    );
                if status != Status::Ok || !(ev.kind.is_pure() || paired) {
                    return None;
                }
            }
        }
        first
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
}

/// What a `free` does ([`State::free_of`]).
enum Freeing {
    /// `free(NULL)`: nothing.
    Null,
    /// Frees this live heap object.
    Frees(ObjId),
    /// Faults with this message; on a heap object already freed, or not allocated yet,
    /// that object.
    Fault(&'static str, Option<ObjId>),
}

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
            | Access::MutexRead(l) => Some(l),
            Access::Faulted(l) if l.index != u32::MAX => Some(l),
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
                Access::Mutex(_) | Access::MutexRead(_) | Access::Barrier | Access::Spawn(_) => {
                    true
                }
                _ => false,
            }
        };
        if waits(sa, aa, sb) || waits(sb, ab, sa) {
            return true;
        }
    }
    match (aa, ab) {
        (Access::Spawn(_), Access::Spawn(_)) if family(sa) != family(sb) => return true,
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
fn joinable(c: Value, t: u32) -> Option<u32> {
    u32::try_from(c).ok().filter(|&c| c != u32::MAX && c != t)
}

/// Evaluates a local expression; `None` on division by zero.
#[inline]
pub fn eval(e: &Expr, regs: &[Value]) -> Option<Value> {
    // Most operands are a register or a constant: those are read here, without a call.
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        _ => eval_tree(e, regs),
    }
}

/// [`eval`] for the assignments and branches of straight-line code, which at `-O0` are
/// mostly one operation on operands that are themselves leaves or one operation on
/// leaves (`sext(r + 1)`, `r < 16`): those are evaluated here, without a call.
#[inline(always)]
fn eval_shallow(e: &Expr, regs: &[Value]) -> Option<Value> {
    match e {
        Expr::Un(op, a) => Some(op.eval(binary(a, regs)?)),
        e => binary(e, regs),
    }
}

/// An operation on two [`operand`]s without a call (`r + (s == t)`, `4 * r + k`), else
/// anything through `eval_tree`.
#[inline(always)]
fn binary(e: &Expr, regs: &[Value]) -> Option<Value> {
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        Expr::Bin(op, a, b) => {
            // Short-circuit, as `eval_tree` does.
            let x = operand(a, regs)?;
            match op {
                BinOp::LogAnd if x == 0 => Some(0),
                BinOp::LogOr if x != 0 => Some(1),
                _ => op.eval(x, operand(b, regs)?),
            }
        }
        _ => eval_tree(e, regs),
    }
}

fn eval_tree(e: &Expr, regs: &[Value]) -> Option<Value> {
    Some(match e {
        Expr::Const(v) => *v,
        Expr::Reg(r) => regs[*r as usize],
        Expr::AddrOf(obj, idx) => Ptr {
            obj: *obj,
            offset: eval(idx, regs)? as u32,
        }
        .encode(),
        Expr::Un(op, a) => op.eval(operand(a, regs)?),
        Expr::Bin(op, a, b) => {
            // Short-circuit so that `p != 0 && 10 / p > 1` does not divide by zero.
            let x = operand(a, regs)?;
            match op {
                BinOp::LogAnd if x == 0 => 0,
                BinOp::LogOr if x != 0 => 1,
                _ => op.eval(x, operand(b, regs)?)?,
            }
        }
    })
}

/// An operand of an operator: also an operation on two registers or constants without
/// a call (`r + 1`, `r == s` inside `sext(found + (r == s))`). The C front-end's
/// expressions are mostly that deep, and a call per level cost more than its arithmetic.
#[inline(always)]
fn operand(e: &Expr, regs: &[Value]) -> Option<Value> {
    let leaf = |e: &Expr| match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        _ => None,
    };
    match e {
        Expr::Const(v) => Some(*v),
        Expr::Reg(r) => Some(regs[*r as usize]),
        // Both sides are read whatever the operator: neither can fault, so the
        // short-circuit of `&&` and `||` changes nothing here.
        Expr::Bin(op, a, b) => match (leaf(a), leaf(b)) {
            (Some(x), Some(y)) => op.eval(x, y),
            _ => eval_tree(e, regs),
        },
        _ => eval_tree(e, regs),
    }
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
    fn absent_object(&self, fr: &Frame, addr: &Addr) -> Option<Loc> {
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
    fn free_of(&self, v: Value) -> Freeing {
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

    /// What a step whose address `addr` does not resolve depends on, as the DPOR clocks
    /// record its fault: an access to a freed object or one not allocated yet, on the
    /// object's frees or allocation and the cell's writers ([`Access::Faulted`]); a null,
    /// out-of-bounds or non-pointer address (or a division by zero in it), on nothing (it
    /// depends on the thread's registers alone).
    fn bad_address(&self, fr: &Frame, addr: &Addr) -> Access {
        self.absent_object(fr, addr)
            .map_or(Access::Local, Access::Faulted)
    }

    fn read(&self, loc: Loc) -> (Value, ReadFrom) {
        let c = self.mem[loc.obj].get(loc.index);
        (c.value, c.writer.map_or(ReadFrom::Init, ReadFrom::Store))
    }

    /// Whether the cell holds a value a program may read.
    pub fn cell_state(&self, loc: Loc) -> CellState {
        self.mem[loc.obj].get(loc.index).state
    }

    fn write(&mut self, loc: Loc, value: Value, id: EventId) {
        self.write_state(loc, value, id, CellState::Valid);
    }

    fn write_state(&mut self, loc: Loc, value: Value, id: EventId, state: CellState) {
        self.mem[loc.obj].set(
            loc.index,
            Cell {
                value,
                writer: Some(id),
                state,
            },
        );
    }

    fn set_reg(&mut self, t: u32, r: Reg, v: Value) {
        let th = &mut self.threads[t as usize];
        let depth = th.frames.len();
        let fr = th.frames.last_mut().expect("frame");
        write_reg(&mut fr.regs[r as usize], v, &mut th.spin, depth);
    }

    /// Watches the cells stored by iterations of rewritten loops, after thread `t`'s event
    /// `kind`. An iteration whose impure events were all stores straight to memory, of
    /// cells its thread stores to again later with nobody (the thread included) reading
    /// them in between, changed nothing a later iteration did not redo. Every execution
    /// from there has an equivalent one without that iteration (its loads and failed
    /// compare-and-swaps only read; its registers are dead at the loop's head, as the
    /// rewrite checked), one event shorter, so this one is discarded: the thread blocks
    /// at the last overwrite. A CAS retry loop that prepares its node (`n->next = top`)
    /// is the case: GenMC drops its failed tries too.
    ///
    /// A read spoils a cell from the store on: from [`SpinTrack::stored`] while the
    /// iteration runs, then from [`SpinTrack::dead`]. That is what makes blocking depend
    /// on the trace alone (the order of the cell's accesses, which DPOR reverses like
    /// any race), as an `assume` on values read does: a read watched only from the back
    /// edge on could move before it, unseen, in an equivalent execution. And only stores
    /// that went straight to memory count: a buffered one's update could be read by
    /// another thread after the overwrite was issued, which the events so far cannot tell.
    fn watch_stores(&mut self, t: u32, kind: &EventKind) {
        if let Some((loc, _)) = kind.read_loc() {
            for (u, th) in self.threads.iter_mut().enumerate() {
                let sp = &mut th.spin;
                let before = sp.watching();
                if sp.stored.cells().contains(&loc) {
                    sp.stored.len = Stored::SPOILT;
                }
                if sp.dead.cells().contains(&loc) {
                    sp.dead = Stored::default();
                }
                // `t`'s own count is settled at the end of its step.
                if before && !sp.watching() && u != t as usize {
                    self.watching -= 1;
                }
            }
            return;
        }
        if let EventKind::Store {
            loc,
            buffered: false,
            ..
        } = kind
        {
            let sp = &mut self.threads[t as usize].spin;
            if sp.dead.remove(*loc) && sp.dead.is_empty() {
                sp.blocked = true;
                sp.dropped = true;
            }
        }
    }

    /// Closes the mutex windows of threads other than `t` on `loc`: `t` has just touched
    /// the mutex's cell while another thread held it (or had given it back to take it
    /// again), so that thread's lock and unlock are no longer a pair that changed nothing.
    fn spoil_windows(&mut self, t: u32, loc: Loc) {
        for (u, th) in self.threads.iter_mut().enumerate() {
            let sp = &mut th.spin;
            if u == t as usize || sp.lock_open.is_none() && sp.unlock_open.is_none() {
                continue;
            }
            if sp.lock_open.is_some_and(|(l, ..)| l == loc) {
                sp.lock_open = None;
            }
            if sp.unlock_open.is_some_and(|(l, ..)| l == loc) {
                sp.unlock_open = None;
                sp.handoff = None;
            }
            if sp.lock_open.is_none() && sp.unlock_open.is_none() {
                self.windows -= 1;
            }
        }
    }

    /// [`State::spoil_windows`] for thread `t`'s event `kind` (`id`), `t` standing at the
    /// instruction that made it: a lock that takes the mutex from another thread's
    /// unlock-then-lock window starts a pass through it, and the unlock that ends a pass
    /// which changed nothing keeps the window (see [`Handoff`]); any other access to the
    /// window's mutex, or an impure event of a thread in a pass, closes it.
    fn watch_windows(&mut self, prog: &Program, t: u32, kind: &EventKind, id: EventId) {
        let loc = kind.loc();
        let mine = |sp: &SpinTrack| sp.handoff.as_ref().is_some_and(|h| h.thread == t);
        let passes = self.threads.iter().enumerate().any(|(a, th)| {
            a != t as usize
                && th.spin.unlock_open.is_some()
                && (mine(&th.spin) || loc.is_some_and(|l| th.spin.unlock_open.unwrap().0 == l))
        });
        if !passes {
            if let Some(l) = loc {
                self.spoil_windows(t, l);
            }
            return;
        }
        let (func, pc, depth, regs) = {
            let th = &self.threads[t as usize];
            let fr = th.frames.last().expect("frame");
            (fr.func, fr.pc, th.frames.len() as u32, fr.regs.as_slice())
        };
        let regs: Box<[Value]> = regs.into();
        for a in 0..self.threads.len() {
            if a == t as usize {
                continue;
            }
            let sp = &mut self.threads[a].spin;
            let was_open = sp.lock_open.is_some() || sp.unlock_open.is_some();
            if !was_open {
                continue;
            }
            if sp.lock_open.is_some_and(|(l, ..)| Some(l) == loc) {
                sp.lock_open = None;
            }
            if let Some((window, ..)) = sp.unlock_open {
                let keep = match (loc == Some(window), &sp.handoff) {
                    (true, None) => {
                        let takes = matches!(kind, EventKind::Lock { from, trylock: false, destroy: false, .. }
                            if sp.unlock_from.is_some_and(|u| *from == ReadFrom::Store(u)));
                        if takes {
                            sp.handoff = Some(Handoff {
                                thread: t,
                                func,
                                pc,
                                depth,
                                regs: regs.clone(),
                            });
                        }
                        takes
                    }
                    (true, Some(h)) => {
                        let back = h.thread == t
                            && matches!(kind, EventKind::Unlock { .. })
                            && (h.func, h.depth) == (func, depth)
                            && pc + 1 == h.pc
                            && matches!(
                                prog.functions[func as usize].body.get(h.pc as usize),
                                Some(fencer_ir::Instr {
                                    op: Op::Lock(_),
                                    ..
                                })
                            )
                            && same_but_loop_heads(&prog.functions[func as usize], &h.regs, &regs);
                        if back {
                            sp.unlock_from = Some(id);
                            sp.handoff = None;
                        }
                        back
                    }
                    (false, Some(h)) => h.thread != t || kind.is_pure(),
                    (false, None) => true,
                };
                if !keep {
                    sp.unlock_open = None;
                    sp.handoff = None;
                }
            }
            if sp.lock_open.is_none() && sp.unlock_open.is_none() {
                self.windows -= 1;
            }
        }
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

    /// Runs thread `t`'s local instructions until a visible one or the end.
    fn run_locals(&mut self, prog: &Program, t: u32) -> Local {
        let unroll = self.unroll;
        let spin_check = self.spin_check;
        let lock_pairs = self.lock_pairs;
        let th = &mut self.threads[t as usize];
        let mut fuel = LOCAL_FUEL;
        while fuel > 0 {
            if let Some(end) = straight_locals(prog, th, t, unroll, spin_check, &mut fuel) {
                return end;
            }
            if fuel == 0 {
                break;
            }
            fuel -= 1;
            let depth = th.frames.len();
            let fr = th.frames.last_mut().expect("frame");
            let f = &prog.functions[fr.func as usize];
            let Some(ins) = f.body.get(fr.pc as usize) else {
                // Falling off the end of a function is `return;`.
                if th.frames.len() == 1 {
                    th.finished = true;
                    return Local::Ready;
                }
                if let Some(done) = th.frames.pop() {
                    spare_regs(done.regs);
                }
                forget_back_edges(&mut th.back_edges, th.frames.len());
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
                Op::Local { .. } | Op::Jump(_) | Op::Branch { .. } => {
                    unreachable!("straight_locals runs assignments and jumps")
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
                    let mut regs = new_regs(callee.num_regs());
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
                        stack: Vec::new(),
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
                    let mut regs = new_regs(callee.num_regs());
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
                        stack: Vec::new(),
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
                    forget_back_edges(&mut th.back_edges, depth - 1);
                    let caller = th.frames.last_mut().expect("caller");
                    if let (Some(r), Some(v)) = (done.ret, v) {
                        write_reg(&mut caller.regs[r as usize], v, &mut th.spin, depth - 1);
                    }
                    spare_regs(done.regs);
                    caller.pc += 1;
                }
                Op::Exit => {
                    // Leaving every call at once ends the life of their stack objects:
                    // those are freed first, one visible event each, since a free races
                    // with other threads' accesses (see `thread_step`).
                    if pending_stack_object(&self.mem, &th.frames).is_some() {
                        return Local::Ready;
                    }
                    th.frames.truncate(1);
                    let root = &mut th.frames[0];
                    root.pc = prog.functions[root.func as usize].body.len() as u32;
                    th.finished = true;
                    return Local::Ready;
                }
                Op::ExitProcess => {
                    th.exited = true;
                    return Local::Ready;
                }
                Op::ThreadId { dst } => {
                    write_reg(&mut fr.regs[*dst as usize], t as Value, &mut th.spin, depth);
                    fr.pc += 1;
                }
                Op::Nondet { dst, bits } => {
                    let Some(v) = self.inputs.get_mut(t as usize).and_then(|q| q.pop()) else {
                        return Local::Fault(Fault {
                            kind: FaultKind::Unsupported,
                            thread: t,
                            src,
                            message: "nondeterministic input: this engine does not choose \
                                      input values (use --engine abpress)"
                                .into(),
                        });
                    };
                    let v = match *bits {
                        1 => v & 1,
                        b if b >= 64 => v,
                        b => fencer_ir::UnOp::Sext(b).eval(v),
                    };
                    fr.regs[*dst as usize] = v;
                    fr.pc += 1;
                }
                Op::LoopHead { dst } => {
                    let n = th.events as Value;
                    write_reg(&mut fr.regs[*dst as usize], n, &mut th.spin, depth);
                    th.spin.stored = Stored::EMPTY;
                    th.spin.stored_from = th.events;
                    fr.pc += 1;
                }
                Op::SpinBack { to, start } => {
                    let start = fr.regs[*start as usize];
                    if th.spin.pure_since(start, lock_pairs) {
                        th.spin.blocked = true;
                        return Local::Ready;
                    }
                    // Counted by the step that ran this (`State::thread_step`).
                    th.spin.end_iteration(start);
                    let to = *to;
                    if !take_back_edge(&mut th.back_edges, fr.func, fr.pc, to, depth, unroll) {
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
            EventKind::Fence(k) => (k.name().into(), None, None),
            EventKind::Lock {
                loc,
                trylock,
                destroy,
                ..
            } => (
                format!(
                    "{} {}",
                    if *destroy {
                        "destroy"
                    } else if *trylock {
                        "trylock"
                    } else {
                        "lock"
                    },
                    name(*loc)
                ),
                Some(name(*loc)),
                None,
            ),
            EventKind::TryLockFailed { loc, .. } => (
                format!("trylock {} (held: not taken)", name(*loc)),
                Some(name(*loc)),
                None,
            ),
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
            EventKind::Failed | EventKind::FaultedAccess { .. } | EventKind::FailedJoin { .. } => {
                ("fails".into(), None, None)
            }
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

/// A stack object of one of the calls that is still alive (the next one an exit frees).
fn pending_stack_object(mem: &Memory, frames: &[Frame]) -> Option<u32> {
    frames
        .iter()
        .rev()
        .flat_map(|f| f.stack.iter().rev())
        .copied()
        .find(|&o| mem[o].alive)
}

/// `x`, `a[3]`, or `heap#5[0]` for a cell.
pub fn loc_name(prog: &Program, l: Loc) -> String {
    if (l.obj as usize) < prog.objects.len() {
        prog.cell_name(l.obj, l.index)
    } else {
        format!("heap#{}[{}]", l.obj, l.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencer_ir::{Function, Instr, ObjKind, Object, ThreadDecl};
    use fencer_memory::{Sc, Tso};
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    fn ins(op: Op) -> Instr {
        Instr {
            op,
            loc: SrcLoc::new(0, 1, 1),
        }
    }

    /// One thread running `body` over registers r0..r3, and objects `objects`.
    fn prog(objects: Vec<Object>, body: Vec<Op>) -> Program {
        Program {
            name: "t".into(),
            files: vec!["t".into()],
            objects,
            functions: vec![Function {
                name: "main".into(),
                params: 0,
                reg_names: (0..4).map(|i| format!("r{i}")).collect(),
                body: body.into_iter().map(ins).collect(),
                loc: SrcLoc::NONE,
            }],
            threads: vec![ThreadDecl {
                name: "main".into(),
                func: 0,
                arg: 0,
            }],
            cond: None,
            observe: Vec::new(),
            observe_explicit: false,
            source_trace: false,
            hang_is_violation: true,
            assumptions: Vec::new(),
            uninit_arbitrary: false,
            wait_variant: None,
        }
    }

    fn object(name: &str, kind: ObjKind, size: u32, init: Vec<(u32, Value)>) -> Object {
        Object {
            name: name.into(),
            kind,
            size,
            init,
            is_array: size > 1,
            cell_names: Vec::new(),
            loc: SrcLoc::NONE,
        }
    }

    /// Runs the only thread to the end (taking updates when it is blocked); the first
    /// fault, if any.
    fn run<M: MemoryModel>(p: &Program) -> (State, Option<Fault>) {
        let (mut s, st) = State::initial(p);
        if let Status::Fault(f) = st {
            return (s, Some(f));
        }
        loop {
            let mut en = Vec::new();
            s.enabled::<M>(p, &mut en);
            let Some(&step) = en.first() else {
                return (s, None);
            };
            if let (_, Status::Fault(f)) = s.step::<M>(p, step) {
                return (s, Some(f));
            }
        }
    }

    fn hash(s: &State) -> u64 {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }

    fn ptr(r: Reg, k: i64) -> Addr {
        Addr::Ptr(Expr::bin(BinOp::Add, Expr::Reg(r), Expr::Const(k)))
    }

    fn alloc(size: i64, zeroed: bool) -> Op {
        Op::Alloc {
            dst: 0,
            size: Expr::Const(size),
            zeroed,
            stack: false,
        }
    }

    fn store(addr: Addr, v: Value) -> Op {
        Op::Store {
            addr,
            value: Expr::Const(v),
        }
    }

    fn load(addr: Addr) -> Op {
        Op::Load {
            dst: 1,
            addr,
            copy: false,
        }
    }

    #[test]
    fn a_huge_global_is_sparse_and_keeps_its_initial_values() {
        let big = object("big", ObjKind::Shared, 1 << 30, vec![(5, 7), (1 << 29, 9)]);
        let p = prog(
            vec![big],
            vec![
                Op::Load {
                    dst: 1,
                    addr: Addr::Global {
                        obj: 0,
                        index: Expr::Const(1 << 29),
                    },
                    copy: false,
                },
                store(
                    Addr::Global {
                        obj: 0,
                        index: Expr::Const((1 << 30) - 1),
                    },
                    3,
                ),
            ],
        );
        let (s, f) = run::<Sc>(&p);
        assert_eq!(f, None);
        assert_eq!(s.reg_value(0, 1), 9);
        assert_eq!(s.cell_value(Loc { obj: 0, index: 5 }), 7);
        assert_eq!(s.cell_value(Loc { obj: 0, index: 6 }), 0);
        assert_eq!(
            s.cell_value(Loc {
                obj: 0,
                index: (1 << 30) - 1
            }),
            3
        );
    }

    #[test]
    fn clone_from_copies_what_changed_on_either_side() {
        let cell = |value| Cell {
            value,
            writer: None,
            state: CellState::Valid,
        };
        let size = CHUNK as u32 * 3 + 5;
        let mut src = ObjState::new(size, true, false);
        src.set(1, cell(7));
        let mut dst = src.clone();
        assert_eq!(dst, src);
        // The copy changes in one run of cells, the source in another and in its flag.
        dst.set(CHUNK as u32 + 2, cell(8));
        src.set(size - 1, cell(9));
        src.alive = false;
        dst.clone_from(&src);
        assert_eq!(dst, src);
        assert_eq!(dst.get(CHUNK as u32 + 2).value, 0);
        assert_eq!(dst.get(size - 1).value, 9);
        assert!(!dst.alive);
        // A change through the memory is seen too.
        let mut a = Memory::new(vec![src.clone()]);
        let mut b = a.clone();
        b[0].alive = true;
        a.clone_from(&b);
        assert!(a[0].alive);
        a[0].set(3, cell(4));
        b.clone_from(&a);
        assert_eq!(b[0].get(3).value, 4);
        // Objects of different sizes at one index are copied whole, and so are small ones.
        let mut small = ObjState::new(3, false, true);
        small.clone_from(&src);
        assert_eq!(small, src);
        let mut tiny = ObjState::new(4, true, false);
        let mut copy = tiny.clone();
        copy.set(2, cell(5));
        tiny.set(0, cell(6));
        copy.clone_from(&tiny);
        assert_eq!(copy, tiny);
        assert_eq!((copy.get(0).value, copy.get(2).value), (6, 0));
    }

    #[test]
    fn equal_contents_are_equal_states_whatever_the_order_of_writes() {
        let (a, b) = (1, DENSE_MAX + 100);
        let stores = |first: u32, second: u32| {
            prog(
                vec![],
                vec![
                    alloc(DENSE_MAX as i64 * 2, true),
                    store(ptr(0, first as i64), 1),
                    store(ptr(0, second as i64), 1),
                ],
            )
        };
        let (s1, _) = run::<Sc>(&stores(a, b));
        let (s2, _) = run::<Sc>(&stores(b, a));
        // Same cells, different writers: the states differ (as they must)...
        assert_ne!(s1, s2);
        // ...but the representation holds written cells only, keyed by index.
        let mut o1 = s1.mem[0].clone();
        let mut o2 = s2.mem[0].clone();
        let c = Cell {
            value: 1,
            writer: None,
            state: CellState::Valid,
        };
        for o in [&mut o1, &mut o2] {
            o.set(a, c);
            o.set(b, c);
        }
        assert_eq!(o1, o2);
        // A cell set back to its blank state leaves no trace.
        let fresh = ObjState::new(DENSE_MAX * 2, true, true);
        o1.set(a, fresh.get(a));
        o1.set(b, fresh.get(b));
        assert_eq!(o1, fresh);
        let mut h1 = DefaultHasher::new();
        o1.hash(&mut h1);
        let mut h2 = DefaultHasher::new();
        fresh.hash(&mut h2);
        assert_eq!(h1.finish(), h2.finish());
        assert_eq!(hash(&s1), hash(&s1.clone()));
    }

    #[test]
    fn allocations_up_to_the_offset_range_succeed() {
        for n in [2 << 20, MAX_ALLOC] {
            let p = prog(vec![], vec![alloc(n, false), store(ptr(0, n - 1), 1)]);
            let (s, f) = run::<Sc>(&p);
            assert_eq!(f, None, "{n}");
            assert_eq!(s.mem[0].size() as i64, n);
        }
        for n in [0, -1, MAX_ALLOC + 1] {
            let (_, f) = run::<Sc>(&prog(vec![], vec![alloc(n, false)]));
            let f = f.expect("a fault");
            assert_eq!(f.kind, FaultKind::MemoryError);
            assert!(
                f.message.contains(&format!("allocation of {n} cells")),
                "{}",
                f.message
            );
        }
    }

    #[test]
    fn reading_a_cell_never_written_faults_unless_zeroed_or_copied() {
        for (zeroed, size) in [(false, 4), (false, DENSE_MAX as i64 + 4)] {
            let p = prog(vec![], vec![alloc(size, zeroed), load(ptr(0, 2))]);
            let f = run::<Sc>(&p).1.expect("a fault");
            assert_eq!(f.kind, FaultKind::MemoryError);
            assert_eq!(f.message, "read of uninitialised memory");
            let rmw = Op::Rmw {
                dst: 1,
                addr: ptr(0, 2),
                op: RmwOp::FetchAdd(Expr::Const(1)),
            };
            let f = run::<Sc>(&prog(vec![], vec![alloc(size, zeroed), rmw]));
            assert_eq!(
                f.1.expect("a fault").message,
                "read of uninitialised memory"
            );
        }
        let ok = [
            vec![alloc(4, true), load(ptr(0, 2))],
            vec![alloc(4, false), store(ptr(0, 2), 5), load(ptr(0, 2))],
            vec![
                alloc(4, false),
                Op::Load {
                    dst: 1,
                    addr: ptr(0, 2),
                    copy: true,
                },
            ],
        ];
        for body in ok {
            assert_eq!(run::<Sc>(&prog(vec![], body.clone())).1, None, "{body:?}");
            assert_eq!(run::<Tso>(&prog(vec![], body)).1, None);
        }
    }

    #[test]
    fn a_buffered_store_initialises_for_its_thread_at_once_and_for_memory_on_update() {
        let p = prog(
            vec![],
            vec![alloc(4, false), store(ptr(0, 1), 5), load(ptr(0, 1))],
        );
        let (mut s, _) = State::initial(&p);
        s.step::<Tso>(&p, Step::Thread(0));
        s.step::<Tso>(&p, Step::Thread(0));
        let loc = Loc { obj: 0, index: 1 };
        assert_eq!(s.cell_state(loc), CellState::Uninit);
        let (e, st) = s.step::<Tso>(&p, Step::Thread(0));
        assert_eq!(st, Status::Ok);
        assert!(matches!(
            e.kind,
            EventKind::Load {
                forwarded: true,
                value: 5,
                ..
            }
        ));
        s.step::<Tso>(&p, Step::Update(0, Chan::Thread));
        assert_eq!(s.cell_state(loc), CellState::Valid);
    }

    fn mutex_prog(after: Vec<Op>) -> Program {
        let m = object("m", ObjKind::Mutex, 1, Vec::new());
        let mut body = vec![
            Op::Lock(Addr::scalar(0)),
            Op::Unlock(Addr::scalar(0)),
            Op::MutexDestroy(Addr::scalar(0)),
        ];
        body.extend(after);
        prog(vec![m], body)
    }

    #[test]
    fn a_destroyed_mutex_cannot_be_used_until_initialised_again() {
        let trylock = Op::Rmw {
            dst: 1,
            addr: Addr::scalar(0),
            op: RmwOp::Cas {
                expected: Expr::Const(0),
                new: Expr::Const(1),
            },
        };
        for op in [
            Op::Lock(Addr::scalar(0)),
            Op::Unlock(Addr::scalar(0)),
            Op::MutexDestroy(Addr::scalar(0)),
            trylock,
        ] {
            for model in ["sc", "tso"] {
                let p = mutex_prog(vec![op.clone()]);
                let f = if model == "sc" {
                    run::<Sc>(&p).1
                } else {
                    run::<Tso>(&p).1
                };
                let f = f.unwrap_or_else(|| panic!("{op:?} under {model}: no fault"));
                assert_eq!(f.kind, FaultKind::BadMutex, "{op:?}");
                assert_eq!(f.message, "use of a destroyed mutex");
            }
        }
        let again = mutex_prog(vec![
            store(Addr::scalar(0), 0),
            Op::Lock(Addr::scalar(0)),
            Op::Unlock(Addr::scalar(0)),
        ]);
        assert_eq!(run::<Sc>(&again).1, None);
        assert_eq!(run::<Tso>(&again).1, None);
    }

    #[test]
    fn destroying_a_held_mutex_faults() {
        let m = object("m", ObjKind::Mutex, 1, Vec::new());
        let p = prog(
            vec![m],
            vec![Op::Lock(Addr::scalar(0)), Op::MutexDestroy(Addr::scalar(0))],
        );
        let f = run::<Sc>(&p).1.expect("a fault");
        assert_eq!(f.kind, FaultKind::BadMutex);
        assert_eq!(f.message, "destroy of a locked mutex");
    }

    /// A step that will fault has the access the DPOR clocks record for its fault (they
    /// order it after the frees of its object and the writes of its cell, and nothing
    /// else): sleep sets that saw more would wake a process with no edge to its event.
    #[test]
    fn a_faulting_step_depends_on_what_its_fault_depends_on() {
        let p = prog(
            Vec::new(),
            vec![
                alloc(2, true),
                Op::Free(Expr::Reg(0)),
                store(ptr(0, 1), 5),
                Op::Free(Expr::Reg(0)),
                Op::Free(Expr::Const(0)),
                // Thread 1's first object, which it has not allocated.
                Op::Local {
                    dst: 1,
                    expr: Expr::Const(Ptr { obj: 1, offset: 1 }.encode()),
                },
                store(ptr(2, 0), 5),
                store(ptr(1, 0), 5),
                Op::Free(Expr::Reg(1)),
                alloc(1, true),
            ],
        );
        let (mut s, _) = State::initial(&p);
        let t = Step::Thread(0);
        // Takes the step; a fault leaves the thread at its instruction: go past it.
        let next = |s: &mut State| {
            let a = s.next_access::<Tso>(&p, t);
            if let (_, Status::Fault(_)) = s.step::<Tso>(&p, t) {
                s.threads[0].frames.last_mut().expect("frame").pc += 1;
            }
            a
        };
        next(&mut s);
        let Access::Free(obj) = next(&mut s) else {
            panic!("a free of a live heap object")
        };
        let cell = Loc { obj, index: 1 };
        let life = Loc {
            obj,
            index: u32::MAX,
        };
        let writes = (
            Step::Update(1, fencer_memory::Chan::Thread),
            Access::Write(cell),
        );
        let frees = (Step::Thread(1), Access::Free(obj));
        let frees_other = (Step::Thread(1), Access::Free(obj + 1));
        // Use after free: the free and the cell's writers, as a load of the cell.
        let a = next(&mut s);
        assert_eq!(a, Access::Faulted(cell));
        assert!(dependent::<Tso>((t, a), frees));
        assert!(dependent::<Tso>((t, a), writes));
        assert!(!dependent::<Tso>((t, a), frees_other));
        // Double free: the frees of the object only.
        let a = next(&mut s);
        assert_eq!(a, Access::Faulted(life));
        assert!(dependent::<Tso>((t, a), frees));
        assert!(!dependent::<Tso>((t, a), writes));
        // `free(NULL)` does nothing; a null dereference depends on the registers alone.
        assert_eq!(next(&mut s), Access::Local);
        assert_eq!(next(&mut s), Access::Local);
        // Through a pointer to an object not allocated yet: the allocation that would
        // make it valid, as an access to a freed object on the free (the clocks see the
        // same: the allocation writes the object's life).
        let unborn = Loc { obj: 1, index: 1 };
        let allocates = (Step::Thread(1), Access::Alloc(1));
        let a = next(&mut s);
        assert_eq!(a, Access::Faulted(unborn));
        assert!(dependent::<Tso>((t, a), allocates));
        assert!(!dependent::<Tso>(
            (t, a),
            (Step::Thread(1), Access::Alloc(2))
        ));
        let a = next(&mut s);
        assert_eq!(
            a,
            Access::Faulted(Loc {
                obj: 1,
                index: u32::MAX
            })
        );
        assert!(dependent::<Tso>((t, a), allocates));
        // An allocation names the object it makes: thread 0's second one here.
        assert_eq!(next(&mut s), Access::Alloc(1 << ALLOC_THREAD_BITS));
    }

    /// Thread ids are taken in spawn order: a spawn names the id it gives, and depends on
    /// another thread's spawn and on a join of that id; a join of an id no thread has yet
    /// faults as a `FailedJoin`, which the spawn of that id races with.
    #[test]
    fn spawns_and_joins_depend_on_thread_ids() {
        let p = prog(
            Vec::new(),
            vec![
                Op::Join(Expr::Const(1)),
                Op::Join(Expr::Const(0)),
                Op::Join(Expr::Const(-1)),
                Op::Spawn {
                    dst: 0,
                    func: 0,
                    arg: Expr::Const(0),
                },
                Op::Join(Expr::Reg(0)),
            ],
        );
        let (mut s, _) = State::initial(&p);
        let t = Step::Thread(0);
        let next = |s: &mut State| {
            let a = s.next_access::<Sc>(&p, t);
            let (e, st) = s.step::<Sc>(&p, t);
            if let Status::Fault(_) = st {
                s.threads[0].frames.last_mut().expect("frame").pc += 1;
            }
            (a, e.kind)
        };
        let other = |a: Access| (Step::Thread(7), a);
        // Thread 1 does not exist yet: the spawn that gives id 1 decides the fault.
        let (a, k) = next(&mut s);
        assert_eq!(
            (a, k),
            (Access::Join(1), EventKind::FailedJoin { child: 1 })
        );
        assert!(dependent::<Sc>((t, a), other(Access::Spawn(1))));
        assert!(!dependent::<Sc>((t, a), other(Access::Spawn(2))));
        // Its own id, or one no spawn gives: a fault wherever it runs.
        assert_eq!(next(&mut s), (Access::Local, EventKind::Failed));
        assert_eq!(next(&mut s), (Access::Local, EventKind::Failed));
        let (a, k) = next(&mut s);
        assert_eq!((a, k), (Access::Spawn(1), EventKind::Spawn { child: 1 }));
        assert!(dependent::<Sc>((t, a), other(Access::Spawn(1))));
        assert!(dependent::<Sc>((t, a), other(Access::Join(1))));
        assert!(!dependent::<Sc>((t, a), other(Access::Join(2))));
        // Joining the thread it made: its family is what it waits for.
        let a = s.next_access::<Sc>(&p, t);
        assert_eq!(a, Access::Join(1));
        assert!(dependent::<Sc>((t, a), (Step::Thread(1), Access::Local)));
    }

    /// A spawned thread whose first local instructions fault: the fault is the child's,
    /// and the spawn is done all the same (the parent stood at its spawn, and spawned
    /// again for ever when exploring on after violations).
    #[test]
    fn a_child_that_faults_at_its_start_leaves_the_spawn_done() {
        let mut p = prog(
            Vec::new(),
            vec![
                Op::Spawn {
                    dst: 0,
                    func: 1,
                    arg: Expr::Const(0),
                },
                Op::Spawn {
                    dst: 1,
                    func: 1,
                    arg: Expr::Const(0),
                },
            ],
        );
        p.functions.push(Function {
            name: "child".into(),
            params: 1,
            reg_names: vec!["v".into()],
            body: vec![ins(Op::Assert {
                cond: Expr::Reg(0),
                text: "v".into(),
            })],
            loc: SrcLoc::NONE,
        });
        let (mut s, _) = State::initial(&p);
        let (e, st) = s.step::<Sc>(&p, Step::Thread(0));
        assert_eq!(e.kind, EventKind::Spawn { child: 1 });
        let Status::Fault(f) = st else {
            panic!("the child's assertion fails")
        };
        assert_eq!((f.thread, f.kind), (1, FaultKind::Assertion));
        assert_eq!(s.threads[0].frames.last().expect("frame").pc, 1);
        assert!(!s.threads[0].faulted);
    }

    /// A mutex operation that faults reads the mutex (its state decides the fault), as the
    /// clocks record it: dependent with the locks, unlocks and destroys of other threads,
    /// not with their reads of it.
    #[test]
    fn a_faulting_mutex_operation_reads_the_mutex() {
        let m = Addr::Global {
            obj: 0,
            index: Expr::Const(0),
        };
        let p = prog(
            vec![object("m", ObjKind::Mutex, 1, Vec::new())],
            vec![
                Op::Unlock(m.clone()),
                Op::MutexDestroy(m.clone()),
                Op::Lock(m),
            ],
        );
        let l = Loc { obj: 0, index: 0 };
        let (mut s, _) = State::initial(&p);
        let t = Step::Thread(0);
        let other = |a: Access| (Step::Thread(1), a);
        // Unlock of a mutex the thread does not hold.
        let a = s.next_access::<Sc>(&p, t);
        assert_eq!(a, Access::MutexRead(l));
        assert!(dependent::<Sc>((t, a), other(Access::Mutex(l))));
        assert!(!dependent::<Sc>((t, a), other(Access::MutexRead(l))));
        let (e, st) = s.step::<Sc>(&p, t);
        assert!(matches!(st, Status::Fault(_)));
        assert_eq!(
            e.kind,
            EventKind::FaultedAccess {
                loc: l,
                lock: false
            }
        );
        s.threads[0].frames.last_mut().expect("frame").pc += 1;
        assert_eq!(s.next_access::<Sc>(&p, t), Access::Mutex(l));
        s.step::<Sc>(&p, t);
        // Lock of a destroyed mutex.
        assert_eq!(s.next_access::<Sc>(&p, t), Access::MutexRead(l));
        let (e, _) = s.step::<Sc>(&p, t);
        assert_eq!(e.kind, EventKind::FaultedAccess { loc: l, lock: true });
    }
}
