//! Stateless model checking with dynamic partial-order reduction on chronological traces
//! (Abdulla, Aronis, Atig, Jonsson, Leonardsson, Sagonas: "Stateless model checking for TSO
//! and PSO"), with Source-DPOR and sleep sets (Abdulla, Aronis, Jonsson, Sagonas: "Optimal
//! dynamic partial order reduction").
//!
//! Processes are the real threads and the auxiliary update threads of their store buffers
//! (`upd(p)` under TSO, `upd(p,x)` under PSO); a process is named by the [`Step`] that
//! schedules it. The happens-before relation of the chronological trace is computed on the
//! fly with vector clocks (the paper's Appendix B): a load that reads its own buffer is
//! attached to the buffer entry and ordered with memory only when the entry's update
//! happens. The races are the cross-process `src`, `cf` and `uu` edges (and, for mutexes,
//! consecutive acquisitions); each is reversed by adding a backtrack point.
//!
//! Exploration is stateless: after each execution the engine backtracks to the deepest
//! position with work left and replays the schedule from the initial state.
//!
//! [`Step`]: fencer_machine::Step

mod alone;
mod dynamic;
mod engine;
mod exact;
mod execute;
mod hb;
mod inputs;
mod kit;
mod options;
mod parallel;
mod pos;
mod races;
mod replay;
mod weak;
mod wut;

pub use engine::{explore, explore_observed, explore_traces};
pub use options::{Algo, Options};
pub use parallel::{explore_split, predicted_speedup, Method, Shard, Split, SplitResult, UNITS};
pub use weak::{kinds_stable, optimal_exact};

pub use fencer_machine::{NoObserver, Observer};

// What the split engines (`parallel.rs`, `dynamic.rs`, `exact.rs`) take from the one-worker
// engine, under the names they use.
pub(crate) use engine::Dpor;
pub(crate) use kit::Kit;
pub(crate) use replay::{copy_into, copy_of, Cursor};
pub(crate) use weak::{run_judged, Judging, Lazy, Weak};
