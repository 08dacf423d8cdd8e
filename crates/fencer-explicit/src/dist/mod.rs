//! Explicit-state search across ranks (processes, possibly on many machines): states are
//! partitioned by hash, every rank stores and expands its own, and successors travel to
//! their owner in batches. See `docs/design/distributed.md`.

mod ltl;
mod reach;
mod transport;

pub(crate) use ltl::accepting_cycle;
pub(crate) use reach::{any, reach_states};

pub use transport::{Threads, Transport};

use std::sync::Arc;

/// The most ranks a search runs on: each owns whole store shards.
pub const MAX_RANKS: usize = reach::SHARDS;

/// The most processes a weakly fair search across ranks takes as fairness constraints:
/// the conditions a cycle must meet are the bits of a word.
pub const MAX_FAIR_PROCESSES: usize = 63;

/// The ranks a search runs on: a transport shared by the caller and the engine.
#[derive(Clone)]
pub struct Ranks(pub Arc<dyn Transport>);

impl Ranks {
    pub fn new(t: impl Transport + 'static) -> Ranks {
        Ranks(Arc::new(t))
    }
    pub fn rank(&self) -> usize {
        self.0.rank()
    }
    pub fn size(&self) -> usize {
        self.0.size()
    }
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks(rank {} of {})", self.rank(), self.size())
    }
}
