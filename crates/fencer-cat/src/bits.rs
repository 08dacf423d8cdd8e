//! Event sets and relations over the events `0..n` of one execution, as bitsets.
//!
//! A relation is a square bit matrix stored row by row, so that the operations a model
//! checker repeats for every candidate (composition, closure, acyclicity) work a word at a
//! time rather than a pair at a time.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, DerefMut};

/// Words of a bitset, kept inline up to `N` words: the event sets of a small execution then
/// cost one allocation (their `Rc`) rather than two. Relations use a small `N`: inline
/// rows would not be faster, and would make the stack frames of the evaluator, which
/// recursion in a model nests, several times larger.
#[derive(Clone)]
enum Words<const N: usize> {
    Inline(usize, [u64; N]),
    Heap(Vec<u64>),
}

impl<const N: usize> Words<N> {
    fn filled(len: usize, w: u64) -> Words<N> {
        if len <= N {
            Words::Inline(len, [w; N])
        } else {
            Words::Heap(vec![w; len])
        }
    }
}

impl<const N: usize> Deref for Words<N> {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        match self {
            Words::Inline(len, buf) => &buf[..*len],
            Words::Heap(v) => v,
        }
    }
}

impl<const N: usize> DerefMut for Words<N> {
    fn deref_mut(&mut self) -> &mut [u64] {
        match self {
            Words::Inline(len, buf) => &mut buf[..*len],
            Words::Heap(v) => v,
        }
    }
}

impl<const N: usize> PartialEq for Words<N> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<const N: usize> Eq for Words<N> {}

impl<const N: usize> PartialOrd for Words<N> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<const N: usize> Ord for Words<N> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (**self).cmp(&**other)
    }
}

impl<const N: usize> Hash for Words<N> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

fn words(n: usize) -> usize {
    n.div_ceil(64)
}

/// Iterates the indices of the set bits of a word slice, in increasing order.
pub struct Bits<'a> {
    words: &'a [u64],
    index: usize,
    current: u64,
}

impl<'a> Bits<'a> {
    fn new(words: &'a [u64]) -> Bits<'a> {
        Bits {
            words,
            index: 0,
            current: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for Bits<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                return Some(self.index * 64 + bit);
            }
            self.index += 1;
            if self.index >= self.words.len() {
                return None;
            }
            self.current = self.words[self.index];
        }
    }
}

/// A set of events of an execution with `n` events.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventSet {
    n: usize,
    bits: Words<4>,
}

impl EventSet {
    /// The empty set over `0..n`.
    pub fn new(n: usize) -> EventSet {
        EventSet {
            n,
            bits: Words::filled(words(n), 0),
        }
    }

    /// Every event of `0..n`.
    pub fn full(n: usize) -> EventSet {
        let mut s = EventSet {
            n,
            bits: Words::filled(words(n), !0),
        };
        s.clear_tail();
        s
    }

    pub fn from_events<I: IntoIterator<Item = usize>>(n: usize, events: I) -> EventSet {
        let mut s = EventSet::new(n);
        for e in events {
            s.insert(e);
        }
        s
    }

    fn clear_tail(&mut self) {
        if !self.n.is_multiple_of(64) {
            if let Some(last) = self.bits.last_mut() {
                *last &= (1u64 << (self.n % 64)) - 1;
            }
        }
    }

    /// The number of events of the execution (not of the set).
    pub fn n(&self) -> usize {
        self.n
    }

    /// Adds `e`; panics when `e >= n`. Returns whether it was absent.
    pub fn insert(&mut self, e: usize) -> bool {
        assert!(e < self.n, "event {e} out of range 0..{}", self.n);
        let (w, b) = (e / 64, 1u64 << (e % 64));
        let absent = self.bits[w] & b == 0;
        self.bits[w] |= b;
        absent
    }

    pub fn remove(&mut self, e: usize) {
        if e < self.n {
            self.bits[e / 64] &= !(1u64 << (e % 64));
        }
    }

    pub fn contains(&self, e: usize) -> bool {
        e < self.n && self.bits[e / 64] & (1u64 << (e % 64)) != 0
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    pub fn iter(&self) -> Bits<'_> {
        Bits::new(&self.bits)
    }

    /// The smallest event of the set.
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    pub fn is_subset(&self, other: &EventSet) -> bool {
        self.bits
            .iter()
            .zip(other.bits.iter())
            .all(|(a, b)| a & !b == 0)
    }

    pub fn union_with(&mut self, other: &EventSet) {
        for (a, b) in self.bits.iter_mut().zip(other.bits.iter()) {
            *a |= b;
        }
    }

    pub fn intersect_with(&mut self, other: &EventSet) {
        for (a, b) in self.bits.iter_mut().zip(other.bits.iter()) {
            *a &= b;
        }
    }

    pub fn difference_with(&mut self, other: &EventSet) {
        for (a, b) in self.bits.iter_mut().zip(other.bits.iter()) {
            *a &= !b;
        }
    }

    /// Replaces the set by its complement in `0..n`.
    pub(crate) fn invert(&mut self) {
        for w in self.bits.iter_mut() {
            *w = !*w;
        }
        self.clear_tail();
    }

    /// The events of `0..n` not in the set.
    pub fn complement(&self) -> EventSet {
        let mut s = self.clone();
        for w in s.bits.iter_mut() {
            *w = !*w;
        }
        s.clear_tail();
        s
    }
}

impl fmt::Debug for EventSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// A binary relation over the events `0..n` of an execution.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Relation {
    n: usize,
    w: usize,
    bits: Words<2>,
}

impl Relation {
    /// The empty relation over `0..n`.
    pub fn new(n: usize) -> Relation {
        let w = words(n);
        Relation {
            n,
            w,
            bits: Words::filled(n * w, 0),
        }
    }

    /// The identity over `0..n`.
    pub fn identity(n: usize) -> Relation {
        let mut r = Relation::new(n);
        for i in 0..n {
            r.insert(i, i);
        }
        r
    }

    /// The identity restricted to `s`.
    pub fn identity_on(s: &EventSet) -> Relation {
        let mut r = Relation::new(s.n);
        for i in s.iter() {
            r.insert(i, i);
        }
        r
    }

    /// Every pair over `0..n`.
    pub fn full(n: usize) -> Relation {
        Relation::cartesian(&EventSet::full(n), &EventSet::full(n))
    }

    /// `a × b`.
    pub fn cartesian(a: &EventSet, b: &EventSet) -> Relation {
        let mut r = Relation::new(a.n);
        for i in a.iter() {
            r.row_mut(i).copy_from_slice(&b.bits);
        }
        r
    }

    pub fn from_pairs<I: IntoIterator<Item = (usize, usize)>>(n: usize, pairs: I) -> Relation {
        let mut r = Relation::new(n);
        for (a, b) in pairs {
            r.insert(a, b);
        }
        r
    }

    /// The number of events of the execution.
    pub fn n(&self) -> usize {
        self.n
    }

    pub(crate) fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.w..(i + 1) * self.w]
    }

    pub(crate) fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.w..(i + 1) * self.w]
    }

    /// Adds `(a, b)`; panics when either is out of range.
    pub fn insert(&mut self, a: usize, b: usize) {
        assert!(
            a < self.n && b < self.n,
            "pair ({a}, {b}) out of range 0..{}",
            self.n
        );
        self.bits[a * self.w + b / 64] |= 1u64 << (b % 64);
    }

    pub fn remove(&mut self, a: usize, b: usize) {
        if a < self.n && b < self.n {
            self.bits[a * self.w + b / 64] &= !(1u64 << (b % 64));
        }
    }

    pub fn contains(&self, a: usize, b: usize) -> bool {
        a < self.n && b < self.n && self.bits[a * self.w + b / 64] & (1u64 << (b % 64)) != 0
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// The number of pairs.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The pairs, ordered by source then target.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.n).flat_map(move |i| self.successors(i).map(move |j| (i, j)))
    }

    /// The events `b` with `(a, b)` in the relation.
    pub fn successors(&self, a: usize) -> Bits<'_> {
        Bits::new(self.row(a))
    }

    /// The first pair in `iter` order.
    pub fn first(&self) -> Option<(usize, usize)> {
        (0..self.n).find_map(|i| self.successors(i).next().map(|j| (i, j)))
    }

    pub fn is_subset(&self, other: &Relation) -> bool {
        self.bits
            .iter()
            .zip(other.bits.iter())
            .all(|(a, b)| a & !b == 0)
    }

    pub fn union_with(&mut self, other: &Relation) {
        for (a, b) in self.bits.iter_mut().zip(other.bits.iter()) {
            *a |= b;
        }
    }

    pub fn intersect_with(&mut self, other: &Relation) {
        for (a, b) in self.bits.iter_mut().zip(other.bits.iter()) {
            *a &= b;
        }
    }

    pub fn difference_with(&mut self, other: &Relation) {
        for (a, b) in self.bits.iter_mut().zip(other.bits.iter()) {
            *a &= !b;
        }
    }

    /// Replaces the relation by its complement in `0..n × 0..n`.
    pub(crate) fn invert(&mut self) {
        let tail = if self.n.is_multiple_of(64) {
            !0
        } else {
            (1u64 << (self.n % 64)) - 1
        };
        let w = self.w;
        for (k, x) in self.bits.iter_mut().enumerate() {
            *x = !*x;
            if k % w == w - 1 {
                *x &= tail;
            }
        }
    }

    /// Pairs over `0..n` not in the relation.
    pub fn complement(&self) -> Relation {
        let mut r = Relation::full(self.n);
        r.difference_with(self);
        r
    }

    pub fn inverse(&self) -> Relation {
        let mut r = Relation::new(self.n);
        for (a, b) in self.iter() {
            r.insert(b, a);
        }
        r
    }

    /// `self ; other`.
    pub fn compose(&self, other: &Relation) -> Relation {
        let mut r = Relation::new(self.n);
        let w = self.w;
        for i in 0..self.n {
            let (row_i, out) = (self.row(i), &mut r.bits[i * w..(i + 1) * w]);
            for j in Bits::new(row_i) {
                for (o, s) in out.iter_mut().zip(&other.bits[j * w..(j + 1) * w]) {
                    *o |= s;
                }
            }
        }
        r
    }

    /// The transitive closure (Warshall's algorithm, a row at a time).
    pub fn transitive_closure(&self) -> Relation {
        let mut r = self.clone();
        r.close();
        r
    }

    pub(crate) fn close(&mut self) {
        let w = self.w;
        let mut tmp = vec![0u64; w];
        for k in 0..self.n {
            let (kw, kb) = (k / 64, 1u64 << (k % 64));
            tmp.copy_from_slice(&self.bits[k * w..(k + 1) * w]);
            if tmp.iter().all(|&x| x == 0) {
                continue;
            }
            for i in 0..self.n {
                if self.bits[i * w + kw] & kb != 0 {
                    for (o, s) in self.bits[i * w..(i + 1) * w].iter_mut().zip(&tmp) {
                        *o |= s;
                    }
                }
            }
        }
    }

    pub fn is_irreflexive(&self) -> bool {
        (0..self.n).all(|i| !self.contains(i, i))
    }

    /// Whether the relation has no cycle. Small relations peel off their sinks round by
    /// round, without allocating; large ones use a depth-first search.
    pub fn is_acyclic(&self) -> bool {
        if self.w > 4 {
            return self.find_cycle_node().is_none();
        }
        let mut rem = EventSet::full(self.n);
        loop {
            let mut next = rem.clone();
            for v in rem.iter() {
                if self
                    .row(v)
                    .iter()
                    .zip(rem.bits.iter())
                    .all(|(r, m)| r & m == 0)
                {
                    next.remove(v);
                }
            }
            if next == rem {
                return rem.is_empty();
            }
            rem = next;
        }
    }

    fn find_cycle_node(&self) -> Option<usize> {
        // 0: unvisited, 1: on the current path, 2: done.
        let mut colour = vec![0u8; self.n];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for root in 0..self.n {
            if colour[root] != 0 {
                continue;
            }
            colour[root] = 1;
            stack.push((root, 0));
            while let Some(&(u, start)) = stack.last() {
                let row = self.row(u);
                let mut pos = start;
                let mut next = None;
                while pos < self.n {
                    let (wi, bi) = (pos / 64, pos % 64);
                    let word = row[wi] >> bi;
                    if word == 0 {
                        pos = (wi + 1) * 64;
                        continue;
                    }
                    let v = pos + word.trailing_zeros() as usize;
                    pos = v + 1;
                    next = Some(v);
                    break;
                }
                if let Some(top) = stack.last_mut() {
                    top.1 = pos;
                }
                match next {
                    Some(v) if colour[v] == 1 => return Some(v),
                    Some(v) if colour[v] == 0 => {
                        colour[v] = 1;
                        stack.push((v, 0));
                    }
                    Some(_) => {}
                    None => {
                        colour[u] = 2;
                        stack.pop();
                    }
                }
            }
        }
        None
    }

    /// The events with a successor.
    pub fn domain(&self) -> EventSet {
        let mut s = EventSet::new(self.n);
        for i in 0..self.n {
            if self.row(i).iter().any(|&w| w != 0) {
                s.insert(i);
            }
        }
        s
    }

    /// The events with a predecessor.
    pub fn range(&self) -> EventSet {
        let mut s = EventSet::new(self.n);
        for i in 0..self.n {
            for (o, x) in s.bits.iter_mut().zip(self.row(i)) {
                *o |= x;
            }
        }
        s
    }

    /// Keeps the pairs whose source is in `s`.
    pub fn restrict_domain(&mut self, s: &EventSet) {
        for i in 0..self.n {
            if !s.contains(i) {
                self.row_mut(i).fill(0);
            }
        }
    }

    /// Keeps the pairs whose target is in `s`.
    pub fn restrict_range(&mut self, s: &EventSet) {
        for i in 0..self.n {
            for (o, x) in self.row_mut(i).iter_mut().zip(s.bits.iter()) {
                *o &= x;
            }
        }
    }

    /// The pairs `(a, b)` of `self` for which `keep(a, b)`.
    pub fn filter(&self, mut keep: impl FnMut(usize, usize) -> bool) -> Relation {
        let mut r = Relation::new(self.n);
        for (a, b) in self.iter() {
            if keep(a, b) {
                r.insert(a, b);
            }
        }
        r
    }

    /// Every strict total order of `nodes` that contains the transitive closure of `self`
    /// restricted to `nodes`, each as a (transitive) relation; none when the closure has a
    /// cycle through a node of `nodes`. Paths through events outside `nodes` count, as in herd.
    pub fn linearisations(&self, nodes: &EventSet) -> Vec<Relation> {
        let tc = self.transitive_closure();
        if nodes.iter().any(|v| tc.contains(v, v)) {
            return Vec::new();
        }
        // preds[v]: the nodes that must come before v.
        let mut preds = vec![EventSet::new(self.n); self.n];
        for v in nodes.iter() {
            for u in nodes.iter() {
                if tc.contains(u, v) {
                    preds[v].insert(u);
                }
            }
        }
        let mut out = Vec::new();
        let mut order = Relation::new(self.n);
        let mut remaining = nodes.clone();
        enumerate_orders(&preds, &mut remaining, &mut order, &mut out);
        out
    }
}

fn enumerate_orders(
    preds: &[EventSet],
    remaining: &mut EventSet,
    order: &mut Relation,
    out: &mut Vec<Relation>,
) {
    if remaining.is_empty() {
        out.push(order.clone());
        return;
    }
    let candidates: Vec<usize> = remaining
        .iter()
        .filter(|&v| {
            preds[v]
                .bits
                .iter()
                .zip(remaining.bits.iter())
                .all(|(p, r)| p & r == 0)
        })
        .collect();
    for v in candidates {
        remaining.remove(v);
        order.row_mut(v).copy_from_slice(&remaining.bits);
        enumerate_orders(preds, remaining, order, out);
        order.row_mut(v).fill(0);
        remaining.insert(v);
    }
}

impl fmt::Debug for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closure_and_cycles() {
        let r = Relation::from_pairs(70, [(0, 1), (1, 65), (65, 3)]);
        let tc = r.transitive_closure();
        assert!(tc.contains(0, 3) && tc.contains(1, 3) && !tc.contains(3, 0));
        assert!(r.is_acyclic());
        let mut c = r.clone();
        c.insert(3, 0);
        assert!(!c.is_acyclic());
        assert!(c.find_cycle_node().is_some() && r.find_cycle_node().is_none());
        let mut big = Relation::new(300);
        for i in 0..299 {
            big.insert(i, i + 1);
        }
        assert!(big.is_acyclic());
        big.insert(299, 5);
        assert!(!big.is_acyclic());
        let mut selfloop = Relation::new(3);
        selfloop.insert(1, 1);
        assert!(!selfloop.is_acyclic());
        assert!(!c.transitive_closure().is_irreflexive());
    }

    #[test]
    fn compose_domain_range() {
        let a = Relation::from_pairs(4, [(0, 1), (2, 3)]);
        let b = Relation::from_pairs(4, [(1, 2), (3, 0)]);
        let c = a.compose(&b);
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![(0, 2), (2, 0)]);
        assert_eq!(a.domain().iter().collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(a.range().iter().collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(EventSet::full(3).complement().len(), 0);
    }

    #[test]
    fn complements() {
        for n in [0, 5, 64, 70, 130] {
            let r = Relation::from_pairs(n, (0..n).map(|i| (i, (i * 7) % n.max(1))));
            let mut inv = r.clone();
            inv.invert();
            assert_eq!(inv, r.complement(), "{n}");
            assert_eq!(inv.len() + r.len(), n * n);
            let s = EventSet::from_events(n, (0..n).step_by(3));
            let mut t = s.clone();
            t.invert();
            assert_eq!(t, s.complement());
            assert_eq!(t.len() + s.len(), n);
        }
    }

    #[test]
    fn linearisations_count() {
        let nodes = EventSet::from_events(5, [0, 1, 2, 3]);
        let r = Relation::from_pairs(5, [(0, 1), (0, 2), (0, 3)]);
        let ls = r.linearisations(&nodes);
        assert_eq!(ls.len(), 6);
        for l in &ls {
            assert!(l.contains(0, 1) && l.contains(0, 2) && l.len() == 6);
        }
        let cyc = Relation::from_pairs(5, [(0, 4), (4, 0)]);
        assert!(cyc.linearisations(&nodes).is_empty());
    }
}
