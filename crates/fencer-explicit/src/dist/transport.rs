//! How the ranks of a distributed search talk. The engine needs one primitive, an
//! all-to-all exchange of byte buffers; sums, minima and broadcasts are built on it by
//! default, and a transport with native collectives (MPI's) overrides them.
//!
//! Every call is collective: every rank makes the same calls in the same order. The
//! distributed searches keep that true by giving every rank the same outcome (counts
//! summed, the counterexample broadcast), so that whatever the caller does next (print,
//! or search again, as repair does) stays in step on every rank.

use std::sync::{Arc, Barrier, Mutex};

pub trait Transport: Send + Sync {
    /// This process's rank, `0..size()`.
    fn rank(&self) -> usize;
    /// How many ranks search together.
    fn size(&self) -> usize;
    /// Sends `out[r]` to rank `r` (`out.len() == size()`, this rank's own included) and
    /// returns what each rank sent this one, in rank order.
    fn exchange(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>>;

    /// Element-wise sum over all ranks, in place on every rank.
    fn sum(&self, v: &mut [u64]) {
        self.combine(v, |a, b| a.wrapping_add(b));
    }
    fn min(&self, v: &mut [u64]) {
        self.combine(v, u64::min);
    }
    fn max(&self, v: &mut [u64]) {
        self.combine(v, u64::max);
    }
    /// Rank `root`'s `buf` on every rank.
    fn broadcast(&self, root: usize, buf: &mut Vec<u8>) {
        let n = self.size();
        let out = if self.rank() == root {
            vec![buf.clone(); n]
        } else {
            vec![Vec::new(); n]
        };
        *buf = self.exchange(out).swap_remove(root);
    }
    /// Every rank's `mine`, in rank order.
    fn gather_all(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        self.exchange(vec![mine.to_vec(); self.size()])
    }
    /// Every rank's `v`, combined element by element with `op`.
    #[doc(hidden)]
    fn combine(&self, v: &mut [u64], op: fn(u64, u64) -> u64) {
        let all = self.gather_all(&words_to_bytes(v));
        for (k, x) in v.iter_mut().enumerate() {
            *x = all
                .iter()
                .map(|b| u64::from_le_bytes(b[k * 8..k * 8 + 8].try_into().expect("8 bytes")))
                .reduce(op)
                .expect("at least one rank");
        }
    }
}

pub(crate) fn words_to_bytes(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Ranks as threads of one process, exchanging through shared memory: the distributed
/// algorithms run and are tested without MPI (every thread must make the same calls, as
/// MPI's processes must).
pub struct Threads {
    rank: usize,
    shared: Arc<Mailbox>,
}

struct Mailbox {
    size: usize,
    /// `slots[to][from]`.
    slots: Mutex<Vec<Vec<Vec<u8>>>>,
    barrier: Barrier,
}

impl Threads {
    /// `size` transports, one per rank, to be moved into one thread each.
    pub fn ranks(size: usize) -> Vec<Threads> {
        assert!(size > 0, "at least one rank");
        let shared = Arc::new(Mailbox {
            size,
            slots: Mutex::new(vec![vec![Vec::new(); size]; size]),
            barrier: Barrier::new(size),
        });
        (0..size)
            .map(|rank| Threads {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }
}

impl Transport for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn exchange(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        assert_eq!(out.len(), self.shared.size, "one buffer per rank");
        {
            let mut slots = self.shared.slots.lock().expect("no rank panicked");
            for (to, b) in out.into_iter().enumerate() {
                slots[to][self.rank] = b;
            }
        }
        self.shared.barrier.wait();
        let mine = std::mem::replace(
            &mut self.shared.slots.lock().expect("no rank panicked")[self.rank],
            vec![Vec::new(); self.shared.size],
        );
        // Nobody writes the next round's buffers before everyone has taken this round's.
        self.shared.barrier.wait();
        mine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_exchange_sum_and_broadcast() {
        let ranks = Threads::ranks(3);
        std::thread::scope(|s| {
            for t in ranks {
                s.spawn(move || {
                    let r = t.rank() as u8;
                    let got = t.exchange((0..3).map(|to| vec![r, to]).collect());
                    assert_eq!(got, (0..3).map(|from| vec![from, r]).collect::<Vec<_>>());
                    let mut v = [t.rank() as u64, 1];
                    t.sum(&mut v);
                    assert_eq!(v, [3, 3]);
                    let mut m = [t.rank() as u64 + 5];
                    t.min(&mut m);
                    assert_eq!(m, [5]);
                    let mut b = if t.rank() == 2 {
                        vec![9, 9]
                    } else {
                        Vec::new()
                    };
                    t.broadcast(2, &mut b);
                    assert_eq!(b, vec![9, 9]);
                });
            }
        });
    }
}
