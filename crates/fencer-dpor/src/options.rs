//! What an exploration is asked to do: the algorithm, its limits and bounds.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Optimal-DPOR: sleep sets and wakeup trees (races reversed by whole event
    /// sequences). One complete execution per trace, and none blocked by a sleep set
    /// where [`optimal_exact`] holds; elsewhere some executions are blocked.
    ///
    /// [`optimal_exact`]: crate::optimal_exact
    Optimal,
    /// Source-DPOR with sleep sets (races reversed by one process each): also one
    /// complete execution per trace, with executions its sleep sets block.
    Source,
}

impl Algo {
    pub fn name(self) -> &'static str {
        match self {
            Algo::Optimal => "optimal",
            Algo::Source => "source",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub algo: Algo,
    pub timeout: Option<Duration>,
    pub max_executions: Option<u64>,
    /// Stop after this many events (an unsplit exploration only): a budget for a search
    /// that is worth running only if it is cheap (the shallow rounds of a deepening one).
    pub max_events: Option<u64>,
    /// Cut executions that take any backward jump more than this many times in one entry
    /// of its loop.
    pub unroll: Option<u32>,
    /// Most visible events one thread may execute in one execution: a thread that reaches
    /// it is cut while the others go on (the result is then bounded). Executions longer
    /// than 64 times this (only programs that spawn threads without bound get there) are
    /// cut whole.
    pub max_depth: usize,
    /// Stop at the first violation (the normal use); `false` explores everything, so that
    /// the final states can be compared with the reference explorer.
    pub stop_on_violation: bool,
    /// Kept up to date with the number of complete executions, for a progress display
    /// running in another thread (one relaxed store per execution).
    pub progress: Option<Arc<AtomicU64>>,
    /// Most values an input (`__VERIFIER_nondet_*`) may have for the engine to try each;
    /// a wider one is refused where it is read.
    pub input_values: u64,
    /// The input values of one run of a program with inputs (set by `inputs.rs`, one run
    /// per assignment).
    #[doc(hidden)]
    pub plan: Option<Arc<fencer_machine::input::InputPlan>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algo: Algo::Optimal,
            timeout: None,
            max_executions: None,
            max_events: None,
            unroll: None,
            max_depth: 100_000,
            stop_on_violation: true,
            progress: None,
            input_values: fencer_machine::input::DEFAULT_LIMIT,
            plan: None,
        }
    }
}

/// `--unroll` and `--max-depth` as the machine state keeps them.
pub(crate) fn bounds(opts: &Options) -> (u32, u32) {
    (
        opts.unroll.unwrap_or(u32::MAX),
        opts.max_depth.min(u32::MAX as usize) as u32,
    )
}
