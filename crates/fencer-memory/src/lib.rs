//! Memory models: SC, TSO and PSO as implementations of one trait, and the store buffers
//! they share.
//!
//! A model is a *policy*: which store buffer (if any) a store goes to, and which buffers an
//! atomic read-modify-write must find empty. The buffer mechanics (FIFO order, forwarding,
//! updates as separate steps) are the same for every buffered model and live in
//! [`Buffers`], so the engines are written once, generic over the model.
//!
//! Semantics (the operational models of "sc-violation-monitoring-tso-pso", Figures 2 and 3):
//! - SC: a store writes memory at once.
//! - TSO: one FIFO buffer per thread; a load reads the newest buffered store to its location
//!   in its own buffer, else memory; a fence waits until the buffer is empty; an update moves
//!   the oldest entry to memory; a read-modify-write waits for an empty buffer, then acts on
//!   memory indivisibly.
//! - PSO: one FIFO buffer per thread *and location*; a read-modify-write waits only for the
//!   buffer of its own location.
//! - Store-store fences (PSO only; TSO and SC keep store order anyway): each buffered store
//!   carries the *epoch* of its thread when it was issued, and a store-store fence opens a
//!   new epoch. An update may move a store only when no store of an older epoch is pending
//!   in any of the thread's buffers, and a read-modify-write (whose write is a store) waits
//!   until no store of an older epoch than the current one is pending. Loads are not
//!   affected: a store-store fence never waits.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::fmt;

/// A memory cell: object and cell index within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    pub obj: u32,
    pub index: u32,
}

/// Which buffer of a thread a store goes to. Each channel is drained by its own auxiliary
/// "update" thread: `upd(p)` under TSO, `upd(p, x)` under PSO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Chan {
    /// The thread's single buffer (TSO).
    Thread,
    /// The thread's buffer for one location (PSO).
    Loc(Loc),
}

/// What a read-modify-write (or another draining operation) needs to find empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drain {
    /// Nothing: there are no buffers (SC).
    Nothing,
    /// Every buffer of the thread.
    All,
    /// Only the buffer that holds stores to this location.
    Chan(Chan),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    Sc,
    Tso,
    Pso,
}

impl ModelKind {
    pub const ALL: [ModelKind; 3] = [ModelKind::Sc, ModelKind::Tso, ModelKind::Pso];
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Sc => "sc",
            ModelKind::Tso => "tso",
            ModelKind::Pso => "pso",
        }
    }
}

impl fmt::Display for ModelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ModelKind::Sc => "SC",
            ModelKind::Tso => "TSO",
            ModelKind::Pso => "PSO",
        })
    }
}

impl std::str::FromStr for ModelKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "sc" => Ok(ModelKind::Sc),
            "tso" | "x86" | "x86-tso" => Ok(ModelKind::Tso),
            "pso" => Ok(ModelKind::Pso),
            _ => Err(format!(
                "unknown memory model `{s}` (expected sc, tso or pso)"
            )),
        }
    }
}

/// A memory model: where stores go and what atomic operations wait for.
pub trait MemoryModel: Copy + Default + Send + Sync + fmt::Debug + 'static {
    const KIND: ModelKind;

    /// Whether stores reach memory in the order their thread issued them (SC, TSO): then a
    /// store-store fence orders nothing, and the machine does not even open an epoch for
    /// it (equal states stay equal for the reference explorer's memoisation).
    const STORES_IN_ORDER: bool;

    /// The buffer a store to `loc` is appended to; `None` when stores write memory at once.
    fn channel(loc: Loc) -> Option<Chan>;

    /// What must be empty before a read-modify-write of `loc` acts on memory.
    fn rmw_drain(loc: Loc) -> Drain;
}

/// Sequential consistency: no buffers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sc;
/// x86-TSO: one FIFO store buffer per thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tso;
/// SPARC PSO: one FIFO store buffer per thread and location.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pso;

impl MemoryModel for Sc {
    const KIND: ModelKind = ModelKind::Sc;
    const STORES_IN_ORDER: bool = true;
    fn channel(_: Loc) -> Option<Chan> {
        None
    }
    fn rmw_drain(_: Loc) -> Drain {
        Drain::Nothing
    }
}

impl MemoryModel for Tso {
    const KIND: ModelKind = ModelKind::Tso;
    const STORES_IN_ORDER: bool = true;
    fn channel(_: Loc) -> Option<Chan> {
        Some(Chan::Thread)
    }
    fn rmw_drain(_: Loc) -> Drain {
        Drain::All
    }
}

impl MemoryModel for Pso {
    const KIND: ModelKind = ModelKind::Pso;
    const STORES_IN_ORDER: bool = false;
    fn channel(loc: Loc) -> Option<Chan> {
        Some(Chan::Loc(loc))
    }
    fn rmw_drain(loc: Loc) -> Drain {
        Drain::Chan(Chan::Loc(loc))
    }
}

/// One buffered store: location, value, and the store event `E` that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry<E> {
    pub loc: Loc,
    pub value: i64,
    pub store: E,
    /// The store-store epoch it was issued in, relative to the oldest pending one (0).
    /// [`Buffers::push`] sets it; what the caller puts here is ignored.
    pub epoch: u32,
}

/// The store buffers of one thread: its non-empty channels, sorted by channel so that equal
/// buffer contents compare and hash equal.
///
/// Epochs are kept canonical so that equal buffer contents stay equal values: the oldest
/// pending epoch is always 0 (when its last store leaves, every epoch moves down by one),
/// pending epochs are contiguous (updates leave oldest epochs first, fences open at most
/// one epoch past the newest pending store), and empty buffers have `epoch` 0.
pub struct Buffers<E> {
    chans: Vec<(Chan, VecDeque<Entry<E>>)>,
    /// The epoch of the next store issued.
    epoch: u32,
    /// Queues of channels that emptied, kept for their allocations (not part of the
    /// value): under TSO nearly every store fills an empty buffer and its update empties
    /// it again, and a queue allocated and freed each time was the commonest allocation
    /// of an execution.
    spare: Vec<VecDeque<Entry<E>>>,
}

/// At most this many queues are kept per thread: one per channel a thread uses at once
/// is all that is reused.
const SPARE_QUEUES: usize = 4;

impl<E: PartialEq> PartialEq for Buffers<E> {
    fn eq(&self, o: &Self) -> bool {
        self.epoch == o.epoch && self.chans == o.chans
    }
}

impl<E: Eq> Eq for Buffers<E> {}

impl<E: std::hash::Hash> std::hash::Hash for Buffers<E> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.chans.hash(h);
        self.epoch.hash(h);
    }
}

impl<E: std::fmt::Debug> std::fmt::Debug for Buffers<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffers")
            .field("chans", &self.chans)
            .field("epoch", &self.epoch)
            .finish()
    }
}

// Clone by hand, for `clone_from`: it keeps the queues' allocations (engines clone
// states into scratch ones; a tuple's `clone_from` would clone its queue afresh).
impl<E: Copy> Clone for Buffers<E> {
    fn clone(&self) -> Self {
        Buffers {
            chans: self.chans.clone(),
            epoch: self.epoch,
            spare: Vec::new(),
        }
    }
    fn clone_from(&mut self, src: &Self) {
        while self.chans.len() > src.chans.len() {
            let (_, q) = self.chans.pop().expect("longer");
            self.keep(q);
        }
        for ((c, q), (sc, sq)) in self.chans.iter_mut().zip(&src.chans) {
            *c = *sc;
            q.clone_from(sq);
        }
        for (c, sq) in &src.chans[self.chans.len()..] {
            let mut q = self.spare.pop().unwrap_or_default();
            q.extend(sq.iter().copied());
            self.chans.push((*c, q));
        }
        self.epoch = src.epoch;
    }
}

impl<E> Default for Buffers<E> {
    fn default() -> Self {
        Buffers {
            chans: Vec::new(),
            epoch: 0,
            spare: Vec::new(),
        }
    }
}

impl<E: Copy> Buffers<E> {
    /// Keeps an emptied queue for the next channel that fills.
    fn keep(&mut self, mut q: VecDeque<Entry<E>>) {
        if self.spare.len() < SPARE_QUEUES {
            q.clear();
            self.spare.push(q);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.chans.is_empty()
    }

    pub fn chan_is_empty(&self, chan: Chan) -> bool {
        !self.chans.iter().any(|(c, _)| *c == chan)
    }

    /// Whether everything `drain` asks for is empty.
    pub fn drained(&self, drain: Drain) -> bool {
        match drain {
            Drain::Nothing => true,
            Drain::All => self.is_empty(),
            Drain::Chan(c) => self.chan_is_empty(c),
        }
    }

    pub fn push(&mut self, chan: Chan, mut entry: Entry<E>) {
        entry.epoch = self.epoch;
        match self.chans.binary_search_by(|(c, _)| c.cmp(&chan)) {
            Ok(i) => self.chans[i].1.push_back(entry),
            Err(i) => {
                let mut q = self.spare.pop().unwrap_or_default();
                q.push_back(entry);
                self.chans.insert(i, (chan, q));
            }
        }
    }

    /// The newest buffered store to `loc` (store forwarding), if any.
    pub fn forward(&self, loc: Loc) -> Option<&Entry<E>> {
        self.chans
            .iter()
            .filter_map(|(_, q)| q.iter().rev().find(|e| e.loc == loc))
            .next()
    }

    /// Channels with a pending update, in a fixed order.
    pub fn channels(&self) -> impl Iterator<Item = Chan> + '_ {
        self.chans.iter().map(|(c, _)| *c)
    }

    /// The oldest entry of a channel: what its next update writes.
    pub fn front(&self, chan: Chan) -> Option<&Entry<E>> {
        self.chans
            .iter()
            .find(|(c, _)| *c == chan)
            .and_then(|(_, q)| q.front())
    }

    /// Removes and returns the oldest entry of a channel (an update).
    pub fn pop(&mut self, chan: Chan) -> Option<Entry<E>> {
        let i = self.chans.iter().position(|(c, _)| *c == chan)?;
        let e = self.chans[i].1.pop_front();
        if self.chans[i].1.is_empty() {
            let (_, q) = self.chans.remove(i);
            self.keep(q);
        }
        if self.chans.is_empty() {
            self.epoch = 0;
        } else if !self.chans.iter().any(|(_, q)| q[0].epoch == 0) {
            // The oldest epoch is gone: renumber, so that it is 0 again.
            for (_, q) in &mut self.chans {
                for x in q.iter_mut() {
                    x.epoch -= 1;
                }
            }
            self.epoch -= 1;
        }
        e
    }

    /// A store-store fence: stores issued from now on reach memory after every store
    /// pending now. With nothing pending it orders nothing.
    pub fn store_fence(&mut self) {
        if let Some(newest) = self.entries().map(|e| e.epoch).max() {
            self.epoch = newest + 1;
        }
    }

    /// Whether the oldest entry of `chan` may reach memory now: no store of an older
    /// epoch is pending in another channel.
    pub fn updatable(&self, chan: Chan) -> bool {
        self.front(chan).is_some_and(|e| e.epoch == 0)
    }

    /// Whether a store issued now would have to wait for stores still pending (a
    /// store-store fence lies between them): what a read-modify-write, whose write goes
    /// to memory at once, must find false.
    pub fn fenced_stores_pending(&self) -> bool {
        self.epoch > 0
    }

    /// The epoch the next store is issued in (0 unless a store-store fence separates it
    /// from pending stores).
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    pub fn len(&self) -> usize {
        self.chans.iter().map(|(_, q)| q.len()).sum()
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry<E>> {
        self.chans.iter().flat_map(|(_, q)| q.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: Loc = Loc { obj: 0, index: 0 };
    const Y: Loc = Loc { obj: 1, index: 0 };

    fn fill<M: MemoryModel>() -> Buffers<u32> {
        let mut b = Buffers::default();
        for (i, (loc, v)) in [(X, 1), (Y, 2), (X, 3)].into_iter().enumerate() {
            b.push(
                M::channel(loc).unwrap(),
                Entry {
                    loc,
                    value: v,
                    store: i as u32,
                    epoch: 0,
                },
            );
        }
        b
    }

    #[test]
    fn tso_is_one_fifo() {
        let mut b = fill::<Tso>();
        assert_eq!(b.forward(X).unwrap().value, 3);
        assert_eq!(b.channels().count(), 1);
        let order: Vec<_> = std::iter::from_fn(|| b.pop(Chan::Thread).map(|e| e.value)).collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert!(b.is_empty());
    }

    #[test]
    fn pso_has_a_fifo_per_location() {
        let mut b = fill::<Pso>();
        assert_eq!(b.forward(X).unwrap().value, 3);
        assert_eq!(b.channels().count(), 2);
        assert!(!b.drained(Pso::rmw_drain(Y)));
        assert_eq!(b.pop(Chan::Loc(Y)).unwrap().value, 2);
        assert!(b.drained(Pso::rmw_drain(Y)));
        assert!(!b.drained(Drain::All));
        assert_eq!(b.pop(Chan::Loc(X)).unwrap().value, 1);
        assert_eq!(b.forward(X).unwrap().value, 3);
    }

    #[test]
    fn store_fence_orders_updates_across_locations() {
        let e = |loc, value| Entry {
            loc,
            value,
            store: 0u32,
            epoch: 7,
        };
        let mut b: Buffers<u32> = Buffers::default();
        b.push(Pso::channel(X).unwrap(), e(X, 1));
        b.store_fence();
        // A second fence with no store in between opens no further epoch.
        b.store_fence();
        assert!(b.fenced_stores_pending());
        b.push(Pso::channel(Y).unwrap(), e(Y, 2));
        b.push(Pso::channel(X).unwrap(), e(X, 3));
        assert!(b.updatable(Chan::Loc(X)));
        assert!(!b.updatable(Chan::Loc(Y)), "y is behind the fence");
        assert_eq!(b.pop(Chan::Loc(X)).unwrap().value, 1);
        // Epochs moved down: the state equals one where the fence came first.
        assert!(b.updatable(Chan::Loc(Y)) && b.updatable(Chan::Loc(X)));
        assert!(!b.fenced_stores_pending());
        let mut c: Buffers<u32> = Buffers::default();
        c.push(Pso::channel(Y).unwrap(), e(Y, 2));
        c.push(Pso::channel(X).unwrap(), e(X, 3));
        assert_eq!(b, c);
        b.pop(Chan::Loc(X));
        b.pop(Chan::Loc(Y));
        assert_eq!(b, Buffers::default());
    }

    #[test]
    fn sc_never_buffers() {
        assert_eq!(Sc::channel(X), None);
        assert_eq!(Sc::rmw_drain(X), Drain::Nothing);
    }
}
