//! The set of stored states: an arena of fixed-width state vectors, split into shards by
//! hash so that threads can fill different shards at once, each shard with its own open
//! addressing table. A state's id is its index in its shard's arena with the shard number
//! in the low bits.
//!
//! A table slot is one `u64`: the upper half of the state's 64-bit hash and, below it, the
//! state's index + 1 (0 marks an empty slot). A probe thus reads one slot and looks at the
//! arena only when 32 bits of hash agree (nearly always the state itself), the table grows
//! without hashing a state again, and a stored state costs its bytes, a parent link and
//! 8 bytes / load factor of table.

use crate::{Next, TransitionSystem};

/// The parent link of the initial state.
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// A 64-bit hash of a state vector: eight bytes at a time through a multiply-rotate round,
/// then MurmurHash3's finaliser, so that both the low bits (the shard) and the high bits
/// (the table position and tag) depend on every byte.
#[inline]
pub(crate) fn hash(s: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let n = s.len();
    let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"));
    let mut h = n as u64;
    let mut at = 0;
    while at + 8 <= n {
        h = (h ^ word(at)).wrapping_mul(K).rotate_left(31);
        at += 8;
    }
    let r = n - at;
    if r > 0 {
        // The tail as a zero-padded little-endian word: when the state has eight bytes
        // or more, the last eight shifted down (one load, no copy of a variable length).
        let tail = if n >= 8 {
            word(n - 8) >> ((8 - r) * 8)
        } else {
            let mut b = [0u8; 8];
            b[..r].copy_from_slice(&s[at..]);
            u64::from_le_bytes(b)
        };
        h = (h ^ tail).wrapping_mul(K);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Whether two states of one width are equal: a word at a time, inline (states are a few
/// dozen bytes, where a call to `memcmp` cost more than the comparison).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let n = a.len().min(b.len());
    let word = |v: &[u8], at: usize| u64::from_le_bytes(v[at..at + 8].try_into().expect("8"));
    if n < 8 {
        return a == b;
    }
    let mut at = 0;
    while at + 8 <= n {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    // The last word, overlapping the ones compared.
    at == n || word(a, n - 8) == word(b, n - 8)
}

pub(crate) struct Shard {
    arena: Vec<u8>,
    parent: Vec<u32>,
    slots: Vec<u64>,
    /// How many states the shard may hold: its ids must stay below `NO_PARENT`.
    limit: u32,
}

impl Shard {
    fn new(bits: u32) -> Shard {
        Shard {
            arena: Vec::new(),
            parent: Vec::new(),
            slots: vec![0; 16],
            limit: (u32::MAX >> bits) - 1,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.parent.len() as u32
    }

    #[inline]
    fn get(&self, w: usize, k: u32) -> &[u8] {
        &self.arena[k as usize * w..(k as usize + 1) * w]
    }

    /// Stores `s` (whose hash is `h`) unless it is there: `Ok(index)` when it is new,
    /// `Err(index)` of the stored copy otherwise.
    #[inline(always)]
    pub(crate) fn insert(&mut self, w: usize, s: &[u8], h: u64, parent: u32) -> Result<u32, u32> {
        // At most 3/4 full: linear probing stays short (at 7/8, the longer probes cost 4%
        // more instructions on BEEM's peterson.4 with a property), and a probe's slots
        // mostly share a cache line.
        if (self.parent.len() + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let tag = h >> 32;
        let mask = self.slots.len() - 1;
        let mut i = tag as usize & mask;
        loop {
            let x = self.slots[i];
            if x == 0 {
                break;
            }
            if x >> 32 == tag {
                let k = x as u32 - 1;
                if same(self.get(w, k), s) {
                    return Err(k);
                }
            }
            i = (i + 1) & mask;
        }
        let k = self.parent.len() as u32;
        assert!(
            k < self.limit,
            "more states than a 32-bit state id can name"
        );
        self.slots[i] = (tag << 32) | (k as u64 + 1);
        self.arena.extend_from_slice(s);
        self.parent.push(parent);
        Ok(k)
    }

    /// Reads where `h` would be probed first, and the stored state there if its tag
    /// agrees, for nothing but to bring both into the cache: a batch touches its next
    /// candidates before inserting them, and these independent loads overlap, where
    /// each insertion's own loads would wait one after the other.
    #[inline]
    pub(crate) fn touch(&self, w: usize, h: u64) -> u64 {
        let tag = h >> 32;
        let x = self.slots[tag as usize & (self.slots.len() - 1)];
        // An empty slot's tag reads as 0, a real tag too.
        if x != 0 && x >> 32 == tag {
            let k = (x as u32 - 1) as usize;
            x ^ self.arena[k * w] as u64
        } else {
            x
        }
    }

    /// Gives stored state `k` another parent (a distributed search keeps, per new state,
    /// the earliest of its discoverers, which arrive in any order).
    pub(crate) fn set_parent(&mut self, k: u32, parent: u32) {
        self.parent[k as usize] = parent;
    }

    fn grow(&mut self) {
        let mut slots = vec![0u64; self.slots.len() * 2];
        let mask = slots.len() - 1;
        for &x in self.slots.iter().filter(|&&x| x != 0) {
            let mut i = (x >> 32) as usize & mask;
            while slots[i] != 0 {
                i = (i + 1) & mask;
            }
            slots[i] = x;
        }
        self.slots = slots;
    }

    fn memory(&self) -> usize {
        self.arena.capacity() + self.parent.capacity() * 4 + self.slots.len() * 8
    }
}

/// Every stored state, in `1 << bits` shards.
pub(crate) struct Store {
    pub(crate) width: usize,
    bits: u32,
    pub(crate) shards: Vec<Shard>,
    /// `expand`'s buffers: successors' bytes and hashes.
    scratch: (Vec<u8>, Vec<u64>),
}

impl Store {
    pub(crate) fn new(width: usize, bits: u32) -> Store {
        Store {
            width,
            bits,
            shards: (0..1usize << bits).map(|_| Shard::new(bits)).collect(),
            scratch: Default::default(),
        }
    }

    #[inline]
    pub(crate) fn shard_of(&self, h: u64) -> usize {
        h as usize & ((1 << self.bits) - 1)
    }

    #[inline]
    pub(crate) fn id(&self, shard: usize, k: u32) -> u32 {
        (k << self.bits) | shard as u32
    }

    #[inline]
    pub(crate) fn get(&self, id: u32) -> &[u8] {
        let shard = id as usize & ((1 << self.bits) - 1);
        self.shards[shard].get(self.width, id >> self.bits)
    }

    pub(crate) fn parent(&self, id: u32) -> u32 {
        let shard = id as usize & ((1 << self.bits) - 1);
        self.shards[shard].parent[(id >> self.bits) as usize]
    }

    /// States stored.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.parent.len()).sum()
    }

    /// One more than the largest id: the length of a vector indexed by ids.
    pub(crate) fn id_bound(&self) -> usize {
        self.shards
            .iter()
            .enumerate()
            .map(|(k, s)| ((s.parent.len() << self.bits) | k) + 1)
            .max()
            .unwrap_or(0)
    }

    /// Bytes held by the arenas, parent links and tables.
    pub(crate) fn memory(&self) -> u64 {
        self.shards.iter().map(Shard::memory).sum::<usize>() as u64
    }

    /// Stores `s`: its id, and whether it is new.
    pub(crate) fn insert(&mut self, s: &[u8], parent: u32) -> (u32, bool) {
        let h = hash(s);
        let k = self.shard_of(h);
        match self.shards[k].insert(self.width, s, h, parent) {
            Ok(i) => (self.id(k, i), true),
            Err(i) => (self.id(k, i), false),
        }
    }

    /// The successors of state `i` as ids, storing new ones (`cur` is scratch space);
    /// counts the steps and errors in `stats`. All successors are generated first and
    /// their table slots touched together (see `Shard::touch`), then stored.
    pub(crate) fn expand<S: TransitionSystem>(
        &mut self,
        sys: &S,
        i: u32,
        cur: &mut Vec<u8>,
        stats: &mut crate::Stats,
    ) -> Vec<(S::Label, u32)> {
        // Room for the usual number of successors: growing a vector one push at a time
        // cost more than the rest of the bookkeeping.
        let mut out = Vec::with_capacity(self.scratch.1.len().max(8));
        self.expand_into(sys, i, cur, stats, &mut out);
        out
    }

    /// `expand`, appending to `out` (a stack the caller keeps: no allocation per state).
    pub(crate) fn expand_into<S: TransitionSystem>(
        &mut self,
        sys: &S,
        i: u32,
        cur: &mut Vec<u8>,
        stats: &mut crate::Stats,
        out: &mut Vec<(S::Label, u32)>,
    ) {
        cur.clear();
        cur.extend_from_slice(self.get(i));
        let base = out.len();
        let (mut bytes, mut hashes) = std::mem::take(&mut self.scratch);
        bytes.clear();
        hashes.clear();
        sys.successors(cur, &mut |l, r: Next<'_>| {
            stats.transitions += 1;
            match r {
                Err(_) => stats.errors += 1,
                Ok(s) => {
                    bytes.extend_from_slice(s);
                    hashes.push(hash(s));
                    out.push((l, 0));
                }
            }
        });
        let w = self.width;
        let mut touched = 0;
        for &h in &hashes {
            touched ^= self.shards[self.shard_of(h)].touch(w, h);
        }
        std::hint::black_box(touched);
        for (k, (&h, o)) in hashes.iter().zip(&mut out[base..]).enumerate() {
            let shard = self.shard_of(h);
            let local = match self.shards[shard].insert(w, &bytes[k * w..(k + 1) * w], h, i) {
                Ok(x) | Err(x) => x,
            };
            o.1 = self.id(shard, local);
        }
        self.scratch = (bytes, hashes);
    }

    /// The path from the initial state to `i`, each step with the label of a transition
    /// that takes it (found again among the parent's successors: labels are not stored).
    #[allow(clippy::type_complexity)]
    pub(crate) fn path<S: TransitionSystem>(
        &self,
        sys: &S,
        i: u32,
    ) -> (Vec<u8>, Vec<(S::Label, Vec<u8>)>) {
        let mut chain = vec![i];
        while self.parent(*chain.last().expect("non-empty")) != NO_PARENT {
            chain.push(self.parent(*chain.last().expect("non-empty")));
        }
        chain.reverse();
        let steps = chain
            .windows(2)
            .map(|w| (self.label(sys, w[0], w[1]), self.get(w[1]).to_vec()))
            .collect();
        (self.get(chain[0]).to_vec(), steps)
    }

    /// The label of a step from stored state `from` to stored state `to` (found among
    /// `from`'s successors: labels are not stored).
    pub(crate) fn label<S: TransitionSystem>(&self, sys: &S, from: u32, to: u32) -> S::Label {
        let (from, to) = (self.get(from), self.get(to));
        let mut label = None;
        sys.successors(from, &mut |l, r| {
            if label.is_none() && r.as_deref() == Ok(to) {
                label = Some(l);
            }
        });
        label.expect("a stored state's successor is one of its successors")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash as first written (the tail copied into a zero-padded word): state ids,
    /// and so the order of the search and its counterexamples, do not change with how
    /// the hash is computed.
    fn hash_by_copy(s: &[u8]) -> u64 {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut h = s.len() as u64;
        let mut chunks = s.chunks_exact(8);
        for c in &mut chunks {
            let x = u64::from_le_bytes(c.try_into().expect("eight bytes"));
            h = (h ^ x).wrapping_mul(K).rotate_left(31);
        }
        let r = chunks.remainder();
        if !r.is_empty() {
            let mut b = [0u8; 8];
            b[..r.len()].copy_from_slice(r);
            h = (h ^ u64::from_le_bytes(b)).wrapping_mul(K);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }

    #[test]
    fn hash_and_comparison_of_every_width() {
        let bytes: Vec<u8> = (0..64u32).map(|i| (i * 37 + 11) as u8).collect();
        for n in 0..48 {
            let a = &bytes[..n];
            assert_eq!(hash(a), hash_by_copy(a), "width {n}");
            assert!(same(a, a));
            for k in 0..n {
                let mut b = a.to_vec();
                b[k] ^= 1 << (k % 8);
                assert!(!same(a, &b), "width {n}, byte {k}");
            }
        }
    }

    #[test]
    fn shards_store_each_state_once_and_find_it_again() {
        let mut st = Store::new(3, 4);
        let states: Vec<[u8; 3]> = (0..20_000u32)
            .map(|i| {
                let b = i.to_le_bytes();
                [b[0], b[1], (i % 7) as u8]
            })
            .collect();
        let mut ids = Vec::new();
        for (n, s) in states.iter().enumerate() {
            let (id, new) = st.insert(s, n as u32);
            assert!(new);
            ids.push(id);
        }
        assert_eq!(st.len(), states.len());
        for (n, s) in states.iter().enumerate() {
            assert_eq!(st.insert(s, 0), (ids[n], false));
            assert_eq!(st.get(ids[n]), s);
            assert_eq!(st.parent(ids[n]), n as u32);
        }
        assert!(ids.iter().all(|&i| (i as usize) < st.id_bound()));
    }
}
