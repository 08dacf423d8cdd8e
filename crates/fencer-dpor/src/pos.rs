//! What the engine knows at one position of the current execution: the processes to
//! explore there (backtrack set or wakeup tree), those explored, and the sleep set.

use crate::options::Algo;
use crate::wut;
use fencer_machine::{Access, Step};

/// What the engine knows about one position of the current execution: the state before
/// its event.
#[derive(Clone, Default)]
pub(crate) struct Pos {
    /// Source-DPOR: processes to explore from here.
    pub(crate) backtrack: Vec<Step>,
    /// Optimal-DPOR: the wakeup tree of sequences to explore from here.
    pub(crate) wut: Vec<wut::Node>,
    /// Processes already explored from here, with what their event accesses here (for
    /// weak initials).
    pub(crate) done: Vec<(Step, Access)>,
    /// Processes whose next event need not be explored from here, with the same.
    pub(crate) sleep: Vec<(Step, Access)>,
}

impl Pos {
    /// Makes this the position after a new step (keeping the vectors' allocations, and
    /// the old tree's in `spare`).
    pub(crate) fn reset(
        &mut self,
        sleep: &[(Step, Access)],
        wut: Vec<wut::Node>,
        spare: &mut wut::Spare,
    ) {
        self.backtrack.clear();
        self.done.clear();
        self.sleep.clear();
        self.sleep.extend_from_slice(sleep);
        // A new tree that is empty and never held anything (a leaf's): the old one's
        // list takes what insertion puts here.
        if wut.capacity() == 0 {
            self.wut.clear();
        } else {
            spare.give(std::mem::replace(&mut self.wut, wut));
        }
    }

    pub(crate) fn asleep(&self, s: Step) -> bool {
        self.sleep.iter().any(|&(q, _)| q == s)
    }

    pub(crate) fn explored(&self, s: Step) -> bool {
        self.done.iter().any(|&(q, _)| q == s)
    }

    /// Whether something is left to explore from here.
    pub(crate) fn pending(&self, algo: Algo) -> bool {
        match algo {
            Algo::Source => self
                .backtrack
                .iter()
                .any(|&s| !self.explored(s) && !self.asleep(s)),
            Algo::Optimal => !self.wut.is_empty(),
        }
    }
}
