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
    fn channel(_: Loc) -> Option<Chan> {
        None
    }
    fn rmw_drain(_: Loc) -> Drain {
        Drain::Nothing
    }
}

impl MemoryModel for Tso {
    const KIND: ModelKind = ModelKind::Tso;
    fn channel(_: Loc) -> Option<Chan> {
        Some(Chan::Thread)
    }
    fn rmw_drain(_: Loc) -> Drain {
        Drain::All
    }
}

impl MemoryModel for Pso {
    const KIND: ModelKind = ModelKind::Pso;
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
}

/// The store buffers of one thread: its non-empty channels, sorted by channel so that equal
/// buffer contents compare and hash equal.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Buffers<E> {
    chans: Vec<(Chan, VecDeque<Entry<E>>)>,
}

impl<E> Default for Buffers<E> {
    fn default() -> Self {
        Buffers { chans: Vec::new() }
    }
}

impl<E: Copy> Buffers<E> {
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

    pub fn push(&mut self, chan: Chan, entry: Entry<E>) {
        match self.chans.binary_search_by(|(c, _)| c.cmp(&chan)) {
            Ok(i) => self.chans[i].1.push_back(entry),
            Err(i) => self.chans.insert(i, (chan, VecDeque::from([entry]))),
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
            self.chans.remove(i);
        }
        e
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
    fn sc_never_buffers() {
        assert_eq!(Sc::channel(X), None);
        assert_eq!(Sc::rmw_drain(X), Drain::Nothing);
    }
}
