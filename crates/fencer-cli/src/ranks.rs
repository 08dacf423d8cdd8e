//! Running under an MPI launcher (`mpirun -np K fencer check model.dve`): joining the job,
//! keeping every rank but rank 0 silent, and leaving it so that the launcher reports rank
//! 0's exit code.
//!
//! Ranks other than 0 exit with status 0 once the search is over: Open MPI's `mpirun`
//! aborts the whole job as soon as one rank exits non-zero, and would kill rank 0 before
//! it printed the verdict. Rank 0 exits with the verdict's code, after MPI is finalised
//! (which waits for every rank), and `mpirun` passes that code on.

use fencer_explicit::dist::Ranks;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set on ranks other than 0: what they would print, rank 0 prints.
static SILENT: AtomicBool = AtomicBool::new(false);

/// Whether this process prints (it is rank 0, or not part of a job).
pub fn speaks() -> bool {
    !SILENT.load(Ordering::Relaxed)
}

/// Silences this process from the start if a launcher's environment says it is not rank
/// 0: what goes wrong before the job is joined (an argument clap rejects, a command that
/// does not run across ranks) is then said once, by rank 0.
pub fn silence_other_ranks() {
    let rank = ["OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<u64>().ok());
    if launched() && rank.is_some_and(|r| r != 0) {
        SILENT.store(true, Ordering::Relaxed);
    }
}

/// The job's ranks when an MPI launcher started this process as one of several; `None`
/// for a plain run (MPI is then never initialised).
#[cfg(feature = "mpi")]
pub fn join() -> Result<Option<Ranks>, String> {
    if !fencer_mpi::launched() {
        return Ok(None);
    }
    let mpi = fencer_mpi::init().map_err(|e| format!("error: MPI: {e}"))?;
    Ok(mpi.map(|m| {
        let r = Ranks::new(m);
        SILENT.store(r.rank() != 0, Ordering::Relaxed);
        r
    }))
}

/// Without MPI, a run under a launcher would have every rank search alone and print the
/// same answer K times: refused instead.
#[cfg(not(feature = "mpi"))]
pub fn join() -> Result<Option<Ranks>, String> {
    let size = |v: &str| std::env::var(v).ok().and_then(|s| s.parse::<usize>().ok());
    match size("OMPI_COMM_WORLD_SIZE").or_else(|| size("PMI_SIZE")) {
        Some(n) if n > 1 => Err(format!(
            "error: started as one of {n} MPI ranks, but this fencer is built without MPI (the cargo feature `mpi`): rebuild it with the feature, or run it without mpirun"
        )),
        _ => Ok(None),
    }
}

/// Whether an MPI launcher started this process as one of several ranks.
pub fn launched() -> bool {
    #[cfg(feature = "mpi")]
    {
        fencer_mpi::launched()
    }
    #[cfg(not(feature = "mpi"))]
    {
        join().is_err()
    }
}

/// Finalises MPI on a way out that every rank takes together; whether this rank's exit
/// code is the run's (rank 0's is; the others leave with 0).
pub fn leave() -> bool {
    #[cfg(feature = "mpi")]
    fencer_mpi::finish();
    speaks()
}
