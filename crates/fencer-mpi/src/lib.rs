//! fencer-explicit's [`Transport`] over MPI: the ranks of a distributed search are the
//! processes an MPI launcher (`mpirun`, `mpiexec`, `srun`) started.
//!
//! ```no_run
//! # fn search(_: fencer_explicit::dist::Ranks) {}
//! match fencer_mpi::init() {
//!     Ok(Some(mpi)) => search(fencer_explicit::dist::Ranks::new(mpi)),
//!     Ok(None) => { /* not launched by MPI: search alone */ }
//!     Err(e) => eprintln!("error: {e}"),
//! }
//! // Every rank, on every way out that all ranks take together, including before
//! // `std::process::exit` (or call `fencer_mpi::exit(code)`):
//! fencer_mpi::finish();
//! ```
//!
//! **Initialisation** happens only when [`launched`] says an MPI launcher started this
//! process with more than one rank, a decision taken from the environment alone: a plain
//! run never initialises MPI (a singleton `MPI_Init` is slow and, with Open MPI, noisy).
//!
//! **Threads.** The engine makes its MPI calls from one thread at a time, though not
//! necessarily the thread that called [`init`], so [`init`] asks for
//! `MPI_THREAD_SERIALIZED` (not `MULTIPLE`, whose locking slows every call) and fails if
//! the library gives less. A mutex around the communicator keeps calls from overlapping
//! even if a caller shares the transport between threads.
//!
//! **Finalisation.** Rust runs no destructor for statics, and `std::process::exit` runs
//! none at all, so MPI is finalised only by [`finish`] (or [`exit`]). Open MPI's `mpirun`
//! treats a rank that initialised MPI and then exits with status 0 without
//! `MPI_Finalize` as an abnormal termination: it prints a banner ("... exiting
//! improperly ... called "init", but exited without calling "finalize""), kills the other
//! ranks and exits with status 1. A rank that exits with a non-zero status makes `mpirun`
//! abort the job and exit with that status, finalised or not. So: call [`finish`] on
//! every way out that all ranks take together. On a way out that one rank takes alone (a
//! panic, an I/O error) do *not* finalise: `MPI_Finalize` waits for every rank, and the
//! others may be waiting in a collective for this one, so finalising there would hang
//! the job where exiting without it lets `mpirun` abort the job with the rank's status.
//! That is why nothing finalises behind the caller's back (no `atexit`, no `Drop`).
//!
//! Building needs an MPI library with its `mpicc` wrapper (rsmpi's build script runs
//! `mpicc -show`) and libclang for bindgen: see this crate's README.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use fencer_explicit::dist::Transport;
use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

/// Whether an MPI launcher started this process as one of several ranks. Reads only the
/// environment; MPI is not initialised.
///
/// - Open MPI (`mpirun`, `prterun`): `OMPI_COMM_WORLD_SIZE`.
/// - MPICH's and Intel MPI's Hydra, Slurm's PMI-1/PMI-2 (`srun --mpi=pmi2`): `PMI_SIZE`.
/// - PMIx (`srun --mpi=pmix`): `PMIX_RANK`, which PMIx sets without any size; Slurm's
///   `SLURM_STEP_NUM_TASKS` (or `SLURM_NTASKS`) gives the size. With `PMIX_RANK` and no
///   size the answer is yes: initialising MPI for one rank costs a little, while not
///   initialising it would have every rank search the whole state space alone.
pub fn launched() -> bool {
    launched_in(|name| std::env::var(name).ok())
}

fn launched_in(var: impl Fn(&str) -> Option<String>) -> bool {
    let size = |name: &str| var(name).and_then(|v| v.trim().parse::<usize>().ok());
    if let Some(n) = size("OMPI_COMM_WORLD_SIZE").or_else(|| size("PMI_SIZE")) {
        return n > 1;
    }
    if var("PMIX_RANK").is_some() {
        return size("SLURM_STEP_NUM_TASKS")
            .or_else(|| size("SLURM_NTASKS"))
            .is_none_or(|n| n > 1);
    }
    false
}

/// The MPI environment from [`init`] until [`finish`]: dropping it finalises MPI.
static UNIVERSE: Mutex<Option<Universe>> = Mutex::new(None);
/// Set by [`finish`]: MPI cannot be initialised again, nor used.
static FINISHED: AtomicBool = AtomicBool::new(false);

/// Initialises MPI and returns the transport over `MPI_COMM_WORLD` when [`launched`];
/// `Ok(None)` (MPI untouched) when not. Every rank must call it, once. An error means
/// MPI was initialised already, or cannot give the thread level the engine needs
/// (MPI is then finalised again, on every rank alike).
pub fn init() -> Result<Option<Mpi>, String> {
    if !launched() {
        return Ok(None);
    }
    let mut slot = UNIVERSE.lock().unwrap_or_else(PoisonError::into_inner);
    if slot.is_some() || FINISHED.load(Ordering::SeqCst) {
        return Err("fencer_mpi::init called twice".into());
    }
    let (universe, level) = mpi::initialize_with_threading(Threading::Serialized)
        .ok_or("MPI was initialised already, outside fencer_mpi::init")?;
    if level < Threading::Serialized {
        FINISHED.store(true, Ordering::SeqCst);
        drop(universe);
        return Err(format!(
            "the MPI library gives thread level {level:?}; the distributed search needs \
             Serialized (MPI called from one thread at a time, not always the main one)"
        ));
    }
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    *slot = Some(universe);
    Ok(Some(Mpi {
        world: Mutex::new(world),
        rank,
        size,
        round: AtomicUsize::new(default_round(size)),
    }))
}

/// Finalises MPI if [`init`] initialised it and it is not finalised yet; otherwise does
/// nothing. Collective: every rank calls it (Open MPI's `MPI_Finalize` waits for all),
/// from the thread that called [`init`] (MPI's rule), after its last use of the
/// transport. Call it before every exit that all ranks take together, `process::exit`
/// included (see the crate's documentation for why not on a rank's lone way out).
pub fn finish() {
    let universe = UNIVERSE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(universe) = universe {
        FINISHED.store(true, Ordering::SeqCst);
        drop(universe); // MPI_Finalize
    }
}

/// [`finish`], then `std::process::exit(code)`.
pub fn exit(code: i32) -> ! {
    finish();
    std::process::exit(code)
}

/// Most bytes one rank sends to another in one `MPI_Alltoallv`: MPI counts and
/// displacements are C `int`s, so a round's whole send (and receive) buffer, at most
/// `size` times this, stays within `i32::MAX`.
fn default_round(size: usize) -> usize {
    (i32::MAX as usize / size.max(1)).max(1)
}

/// The transport over `MPI_COMM_WORLD`. Every method is collective: all ranks call it,
/// in the same order.
///
/// [`Transport::exchange`] is one `MPI_Alltoall` of two words per rank (the length of
/// the buffer for that rank, and this rank's longest buffer) followed by one
/// `MPI_Alltoallv` of the bytes, none when every buffer on every rank is empty. A buffer
/// longer than `i32::MAX / size` bytes (MPI counts are C `int`s) is sent in several
/// `MPI_Alltoallv` rounds of that many bytes each, as many as the longest buffer on any
/// rank needs, which the `MPI_Alltoall` tells every rank. A rank's buffer for itself is
/// moved, not sent. The pieces a round sends are copied into one buffer, and those it
/// receives come in one buffer and are copied out, except a piece that is the only one
/// (as with two ranks): it goes from its own buffer, or straight into its result.
/// `sum`, `min` and `max` are `MPI_Allreduce` on `MPI_UINT64_T` (`sum` wraps, as the
/// default does), and `broadcast` is `MPI_Bcast` of the length, then of the bytes.
pub struct Mpi {
    world: Mutex<SimpleCommunicator>,
    rank: usize,
    size: usize,
    /// Most bytes per pair of ranks in one `MPI_Alltoallv`, and per `MPI_Bcast`.
    round: AtomicUsize,
}

// SAFETY: rsmpi's communicator is neither Send nor Sync because it holds a raw MPI
// handle; MPI_COMM_WORLD's handle is a pointer to a library-global object that is never
// freed and belongs to no thread. MPI was initialised with MPI_THREAD_SERIALIZED (init
// fails otherwise), under which any thread may call MPI provided no two calls overlap:
// every call here is made holding the `world` mutex, and the engine makes them from one
// thread at a time anyway. Finalisation is not tied to this value (see `finish`).
unsafe impl Send for Mpi {}
unsafe impl Sync for Mpi {}

impl Mpi {
    fn world(&self) -> MutexGuard<'_, SimpleCommunicator> {
        assert!(
            !FINISHED.load(Ordering::SeqCst),
            "the MPI transport was used after fencer_mpi::finish"
        );
        self.world
            .lock()
            .expect("an earlier MPI call on this rank panicked")
    }

    /// Sets the most bytes per pair of ranks in one `MPI_Alltoallv` round (and per
    /// `MPI_Bcast`), `None` for the default; for tests of the rounds. Collective: every
    /// rank must set the same.
    #[doc(hidden)]
    pub fn set_round_limit(&self, bytes: Option<usize>) {
        let bytes = bytes.map_or(default_round(self.size), |b| {
            b.clamp(1, default_round(self.size))
        });
        self.round.store(bytes, Ordering::Relaxed);
    }

    fn reduce(&self, v: &mut [u64], op: fn() -> SystemOperation) {
        let world = self.world();
        for chunk in v.chunks_mut(i32::MAX as usize) {
            let send = chunk.to_vec();
            world.all_reduce_into(&send[..], chunk, op());
        }
    }
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mpi(rank {} of {})", self.rank, self.size)
    }
}

fn count(n: usize) -> Count {
    Count::try_from(n).expect("a round's buffer fits in an MPI count")
}

/// The counts and displacements of `pieces` laid end to end in rank order; their total.
fn layout(pieces: &[Range<usize>], counts: &mut [Count], displs: &mut [Count]) -> usize {
    let mut total = 0;
    for (k, p) in pieces.iter().enumerate() {
        displs[k] = count(total);
        counts[k] = count(p.len());
        total += p.len();
    }
    total
}

/// The rank of the one non-empty piece, if just one is.
fn only(pieces: &[Range<usize>]) -> Option<usize> {
    let mut nonempty = pieces.iter().enumerate().filter(|(_, p)| !p.is_empty());
    match (nonempty.next(), nonempty.next()) {
        (Some((k, _)), None) => Some(k),
        _ => None,
    }
}

impl Transport for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }

    fn exchange(&self, mut out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let (me, n) = (self.rank, self.size);
        assert_eq!(out.len(), n, "one buffer per rank");
        let world = self.world();
        let mut got: Vec<Vec<u8>> = vec![Vec::new(); n];
        got[me] = std::mem::take(&mut out[me]);

        let longest = out.iter().map(Vec::len).max().unwrap_or(0) as u64;
        let header: Vec<u64> = out.iter().flat_map(|b| [b.len() as u64, longest]).collect();
        let mut heard = vec![0u64; 2 * n];
        world.all_to_all_into(&header[..], &mut heard[..]);
        let incoming: Vec<usize> = heard.chunks(2).map(|h| h[0] as usize).collect();
        let longest = heard.chunks(2).map(|h| h[1] as usize).max().unwrap_or(0);
        for (from, b) in got.iter_mut().enumerate() {
            if from != me {
                b.reserve_exact(incoming[from]);
            }
        }

        let round = self.round.load(Ordering::Relaxed);
        // Allocated even when empty: an empty Vec's dangling pointer is 0x1, which is
        // Open MPI's MPI_IN_PLACE.
        let (mut send, mut recv) = (Vec::with_capacity(1), Vec::with_capacity(1));
        let (mut send_counts, mut recv_counts) = (vec![0; n], vec![0; n]);
        let (mut send_displs, mut recv_displs) = (vec![0; n], vec![0; n]);
        for start in (0..longest).step_by(round) {
            let piece = |len: usize| start.min(len)..(start + round).min(len);
            let sending: Vec<_> = out.iter().map(|b| piece(b.len())).collect();
            let receiving: Vec<_> = (0..n)
                .map(|from| {
                    if from == me {
                        0..0
                    } else {
                        piece(incoming[from])
                    }
                })
                .collect();
            layout(&sending, &mut send_counts, &mut send_displs);
            let total = layout(&receiving, &mut recv_counts, &mut recv_displs);
            // A piece that is the only one goes from its own buffer, or straight into
            // its result; several go through one buffer of all, in rank order.
            let sendbuf: &[u8] = match only(&sending) {
                Some(to) => {
                    send_displs.fill(0);
                    &out[to][sending[to].clone()]
                }
                None => {
                    send.clear();
                    for (b, p) in out.iter().zip(&sending) {
                        send.extend_from_slice(&b[p.clone()]);
                    }
                    &send
                }
            };
            let sendbuf = Partition::new(sendbuf, &send_counts[..], &send_displs[..]);
            if let Some(from) = only(&receiving) {
                recv_displs.fill(0);
                let b = &mut got[from];
                let at = b.len();
                b.resize(at + total, 0);
                world.all_to_all_varcount_into(
                    &sendbuf,
                    &mut PartitionMut::new(&mut b[at..], &recv_counts[..], &recv_displs[..]),
                );
            } else {
                recv.resize(total, 0);
                world.all_to_all_varcount_into(
                    &sendbuf,
                    &mut PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]),
                );
                for (from, b) in got.iter_mut().enumerate() {
                    let at = recv_displs[from] as usize;
                    b.extend_from_slice(&recv[at..at + recv_counts[from] as usize]);
                }
            }
            // A buffer sent in full is freed at once.
            out.iter_mut()
                .filter(|b| b.len() <= start + round)
                .for_each(|b| *b = Vec::new());
        }
        got
    }

    fn sum(&self, v: &mut [u64]) {
        self.reduce(v, SystemOperation::sum);
    }
    fn min(&self, v: &mut [u64]) {
        self.reduce(v, SystemOperation::min);
    }
    fn max(&self, v: &mut [u64]) {
        self.reduce(v, SystemOperation::max);
    }

    fn broadcast(&self, root: usize, buf: &mut Vec<u8>) {
        assert!(root < self.size, "root {root} of {} ranks", self.size);
        let world = self.world();
        let root = world.process_at_rank(root as mpi::Rank);
        let mut len = buf.len() as u64;
        root.broadcast_into(&mut len);
        if self.rank != root.rank() as usize {
            buf.clear();
            buf.resize(len as usize, 0);
        }
        for chunk in buf.chunks_mut(self.round.load(Ordering::Relaxed)) {
            root.broadcast_into(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launched_with(vars: &[(&str, &str)]) -> bool {
        launched_in(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn launchers_are_told_from_the_environment() {
        assert!(!launched_with(&[]));
        assert!(!launched_with(&[("OMPI_COMM_WORLD_SIZE", "1")]));
        assert!(launched_with(&[("OMPI_COMM_WORLD_SIZE", "2")]));
        assert!(launched_with(&[("PMI_SIZE", "4"), ("PMI_RANK", "0")]));
        assert!(!launched_with(&[("PMI_SIZE", "1")]));
        assert!(launched_with(&[("PMIX_RANK", "0")]));
        assert!(launched_with(&[
            ("PMIX_RANK", "0"),
            ("SLURM_STEP_NUM_TASKS", "8")
        ]));
        assert!(!launched_with(&[("PMIX_RANK", "0"), ("SLURM_NTASKS", "1")]));
        // Slurm's variables alone are an allocation (sbatch, salloc), not a launch.
        assert!(!launched_with(&[("SLURM_NTASKS", "8")]));
        // Open MPI sets PMIX_RANK too; its size decides.
        assert!(!launched_with(&[
            ("OMPI_COMM_WORLD_SIZE", "1"),
            ("PMIX_RANK", "0")
        ]));
    }

    #[test]
    fn rounds_keep_counts_within_an_int() {
        assert_eq!(default_round(1), i32::MAX as usize);
        assert!(default_round(3) * 3 <= i32::MAX as usize);
        assert!(default_round(4096) * 4096 <= i32::MAX as usize);
    }
}
