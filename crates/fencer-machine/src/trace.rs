//! Shasha-Snir trace identity, computed incrementally.
//!
//! A Shasha-Snir trace of a complete execution is its program order (each thread's events),
//! store order (per location, the stores in the order they reach memory) and read-from map.
//! It is the set of facts "event k of thread t is instruction i, reading from store s" and
//! "the n-th store to reach location x is s". Each fact names its own position, so the set
//! determines the trace; its fingerprint is the sum of 128-bit hashes of the facts, which
//! is independent of the order the facts were found in. Two executions with equal traces
//! get equal fingerprints; different traces collide with probability about 2^-128 per pair.

use crate::{Event, EventId, EventKind, ReadFrom, Step};
use fencer_memory::Loc;
use std::hash::{Hash, Hasher};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TraceHash {
    sum: u128,
    /// Stores that reached memory so far, per location.
    so_len: Vec<(Loc, u32)>,
    /// Per barrier, the generation arrived at last and its arrivals so far (whether each
    /// reads its serial result).
    arrivals: Vec<Arrivals>,
}

/// A barrier, its generation, and that generation's arrivals so far with whether each
/// reads its serial result.
type Arrivals = (Loc, u32, Vec<(EventId, bool)>);

fn h128(fact: &impl Hash) -> u128 {
    let mut a = std::collections::hash_map::DefaultHasher::new();
    0xa5u8.hash(&mut a);
    fact.hash(&mut a);
    let mut b = std::collections::hash_map::DefaultHasher::new();
    0x5au8.hash(&mut b);
    fact.hash(&mut b);
    ((a.finish() as u128) << 64) | b.finish() as u128
}

impl TraceHash {
    pub fn value(&self) -> u128 {
        self.sum
    }

    /// Adds the facts of one executed event.
    pub fn record(&mut self, e: &Event) {
        let write = match &e.kind {
            EventKind::Update { loc, store, .. } => Some((*loc, *store)),
            EventKind::Store {
                loc,
                buffered: false,
                ..
            } => Some((*loc, e.id)),
            EventKind::Rmw {
                loc,
                written: Some(_),
                ..
            }
            | EventKind::Lock { loc, .. }
            | EventKind::Unlock { loc, .. } => Some((*loc, e.id)),
            _ => None,
        };
        if let Some((loc, id)) = write {
            let n = match self.so_len.iter_mut().find(|(l, _)| *l == loc) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    self.so_len.push((loc, 1));
                    self.so_len.sort_unstable();
                    1
                }
            };
            self.sum = self.sum.wrapping_add(h128(&("so", loc, n, id)));
        }
        if let EventKind::Alloc { obj, .. } = e.kind {
            // Allocations are ordered (each gets the next object): which one an event got
            // is part of the trace.
            self.sum = self.sum.wrapping_add(h128(&("alloc", e.id, obj)));
        }
        if let EventKind::BarrierArrive {
            loc,
            gen,
            arrived,
            count,
            serial_used,
            ..
        } = e.kind
        {
            // Which generation an arrival fell in is part of the trace, and the order of
            // two arrivals of one generation where either reads its serial result; not
            // the order of the others.
            self.sum = self.sum.wrapping_add(h128(&("barrier", e.id, loc, gen)));
            let at = match self.arrivals.iter().position(|(l, _, _)| *l == loc) {
                Some(k) => k,
                None => {
                    self.arrivals.push((loc, gen, Vec::new()));
                    self.arrivals.len() - 1
                }
            };
            let (_, g, before) = &mut self.arrivals[at];
            if *g != gen {
                *g = gen;
                before.clear();
            }
            for &(y, used) in before.iter() {
                if used || serial_used {
                    self.sum = self.sum.wrapping_add(h128(&("barrier-order", y, e.id)));
                }
            }
            if arrived == count {
                before.clear();
            } else {
                before.push((e.id, serial_used));
            }
        }
        if let EventKind::Spawn { child } = e.kind {
            // So are spawns, across threads: they take thread ids in the order they run.
            self.sum = self.sum.wrapping_add(h128(&("spawn", e.id, child)));
        }
        if let Step::Thread(_) = e.step {
            let rf: Option<(Loc, Option<EventId>)> = e.kind.read_loc().map(|(l, r)| {
                (
                    l,
                    match r {
                        ReadFrom::Init => None,
                        ReadFrom::Store(s) => Some(s),
                    },
                )
            });
            let what = (e.src.line, e.src.col, std::mem::discriminant(&e.kind));
            self.sum = self.sum.wrapping_add(h128(&("po", e.id, what, rf)));
        }
    }
}
