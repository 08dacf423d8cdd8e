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

mod address;
mod dependence;
mod describe;
mod enabled;
mod end;
mod eval;
mod event;
pub mod input;
mod locals;
mod memory;
mod spin;
mod state;
mod step;
#[cfg(test)]
mod tests;

pub use dependence::{dependent, family, Access};
pub use describe::loc_name;
pub use end::HangScratch;
pub use eval::eval;
pub use event::{
    CutKind, Event, EventId, EventKind, Fault, FaultKind, NoObserver, Observer, ReadFrom, Status,
    Step,
};
pub use locals::{BackEdge, LOCAL_FUEL, MAX_FRAMES};
pub use memory::{Cell, CellState, Memory, ObjState, DENSE_MAX, MAX_ALLOC};
pub use spin::SpinTrack;
pub use state::{Frame, State, StoreTag, ThreadState};
