//! Events: what a step did and who took it, the faults and bounds that stop a thread, and
//! the observers engines show executions to.

use crate::State;
use fencer_ir::{FenceKind, FuncId, SrcLoc, Value};
use fencer_memory::{Chan, Loc};

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
    /// An arrival at a barrier ([`fencer_ir::Op::BarrierArrive`]): in generation `gen`
    /// of the barrier initialised by the store it read (`from`), the `arrived`-th arrival
    /// (from 1) of `count`; the last one (`arrived == count`) released the others.
    BarrierArrive {
        loc: Loc,
        from: ReadFrom,
        gen: u32,
        arrived: u32,
        count: u32,
        /// The program reads which arrival was the last (the serial thread): the order of
        /// the generation's arrivals matters.
        serial_used: bool,
    },
    /// A thread passed the barrier: every arrival of its generation happened before.
    BarrierPass {
        loc: Loc,
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
            | EventKind::FaultedAccess { loc, .. }
            | EventKind::BarrierArrive { loc, .. } => Some(*loc),
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
            | EventKind::TryLockFailed { loc, from }
            | EventKind::BarrierArrive { loc, from, .. } => Some((*loc, *from)),
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
    ///
    /// [`Op::Unsupported`]: fencer_ir::Op::Unsupported
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
    ///
    /// [`LOCAL_FUEL`]: crate::LOCAL_FUEL
    LocalLoop,
    /// A thread's call stack grew past [`MAX_FRAMES`].
    ///
    /// [`MAX_FRAMES`]: crate::MAX_FRAMES
    Recursion,
    /// A thread executed as many visible events as the depth bound allows.
    Depth,
}
