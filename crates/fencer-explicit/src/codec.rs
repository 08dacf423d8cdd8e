//! Bit-packed storage of states. A system that knows which values each byte of its state
//! vector can hold (`TransitionSystem::byte_values`) gets its states stored in
//! `ceil(log2(n))` bits per byte instead of eight: a flag costs one bit, a control state of
//! ten a nibble, a byte that never changes nothing. The search runs on `Packed`, a system
//! whose states are the packed vectors; the caller sees only full vectors.
//!
//! The value sets are the system's claim, not checked in advance. A value outside its set
//! would be stored as another one, so `pack` reports it, the packed search is thrown away
//! and the search is run again unpacked: a wrong claim costs time, never a wrong answer.

use crate::{Lasso, LtlOutcome, Next, Outcome, TransitionSystem};
use std::sync::atomic::{AtomicBool, Ordering};

/// Per byte of the full vector: its width in bits and the code of each value.
pub(crate) struct Codec {
    width: usize,
    packed: usize,
    bits: Vec<u8>,
    /// Where each byte's code starts in the packed vector, in bits.
    offset: Vec<u32>,
    /// `enc[p][v]`: the code of value `v` at byte `p`, `INVALID` if `v` is not in its set.
    enc: Vec<[u16; 256]>,
    /// `dec[p][c]`: the value of code `c` at byte `p`.
    dec: Vec<[u8; 256]>,
}

const INVALID: u16 = u16::MAX;

impl Codec {
    /// A codec for `sets` (one 256-bit set per byte), or `None` when packing would save
    /// less than half of the vector: packing and unpacking cost 15-30% more time per
    /// state (measured on BEEM's peterson.4, 21 bytes to 15), worth it when memory is what
    /// limits a search, as in store-buffer models (Lamport under pso1, 43 bytes to 8).
    pub(crate) fn new(sets: &[[u64; 4]]) -> Option<Codec> {
        let width = sets.len();
        let mut bits = Vec::with_capacity(width);
        let mut enc = Vec::with_capacity(width);
        let mut dec = Vec::with_capacity(width);
        for set in sets {
            let mut e = [INVALID; 256];
            let mut d = [0u8; 256];
            let mut n = 0u16;
            for v in 0..256usize {
                if set[v / 64] >> (v % 64) & 1 == 1 {
                    e[v] = n;
                    d[n as usize] = v as u8;
                    n += 1;
                }
            }
            if n == 0 {
                // No value at all cannot be: treat the byte as unknown.
                for (v, x) in e.iter_mut().enumerate() {
                    *x = v as u16;
                    d[v] = v as u8;
                }
                n = 256;
            }
            bits.push((16 - (n - 1).leading_zeros()) as u8);
            enc.push(e);
            dec.push(d);
        }
        let total: usize = bits.iter().map(|&b| b as usize).sum();
        let packed = total.div_ceil(8).max(1);
        let offset = bits
            .iter()
            .scan(0u32, |at, &b| {
                let o = *at;
                *at += b as u32;
                Some(o)
            })
            .collect();
        (packed * 2 <= width).then_some(Codec {
            width,
            packed,
            bits,
            offset,
            enc,
            dec,
        })
    }

    /// Packs `s` into `out` (`packed` bytes); false if a byte held a value outside its set.
    #[inline]
    pub(crate) fn pack(&self, s: &[u8], out: &mut [u8]) -> bool {
        debug_assert_eq!(s.len(), self.width);
        let mut ok = true;
        let (mut acc, mut n, mut o) = (0u64, 0u32, 0usize);
        for (p, &v) in s.iter().enumerate() {
            let c = self.enc[p][v as usize];
            ok &= c != INVALID;
            let b = self.bits[p] as u32;
            acc |= (c as u64 & ((1u64 << b) - 1)) << n;
            n += b;
            if n >= 32 {
                out[o..o + 4].copy_from_slice(&(acc as u32).to_le_bytes());
                acc >>= 32;
                n -= 32;
                o += 4;
            }
        }
        for b in &mut out[o..] {
            *b = acc as u8;
            acc >>= 8;
        }
        ok
    }

    /// Packs `t` into `out`, which holds the packing of `s`, a vector that differs from `t`
    /// in few bytes (a state and its successor): only those are encoded again. `out` has
    /// one byte more than a packed vector (always zero), so that a code is written as a
    /// 16-bit window. False if a byte of `t` is outside its set.
    #[inline]
    pub(crate) fn repack(&self, s: &[u8], t: &[u8], out: &mut [u8]) -> bool {
        let mut ok = true;
        let words = self.width / 8;
        let word =
            |v: &[u8], k: usize| u64::from_le_bytes(v[k * 8..k * 8 + 8].try_into().expect("8"));
        for k in 0..words {
            let mut x = word(s, k) ^ word(t, k);
            while x != 0 {
                let p = k * 8 + x.trailing_zeros() as usize / 8;
                x &= !(0xffu64 << ((p % 8) * 8));
                ok &= self.set(p, t[p], out);
            }
        }
        for p in words * 8..self.width {
            if s[p] != t[p] {
                ok &= self.set(p, t[p], out);
            }
        }
        ok
    }

    /// Writes the code of value `v` of byte `p` into `out` (padded by a byte).
    #[inline]
    fn set(&self, p: usize, v: u8, out: &mut [u8]) -> bool {
        let c = self.enc[p][v as usize];
        let (bits, off) = (self.bits[p] as u32, self.offset[p]);
        let (i, sh) = (off as usize / 8, off % 8);
        let mask = (((1u32 << bits) - 1) << sh) as u16;
        let w = u16::from_le_bytes([out[i], out[i + 1]]);
        let w = (w & !mask) | ((((c as u32) << sh) as u16) & mask);
        out[i..i + 2].copy_from_slice(&w.to_le_bytes());
        c != INVALID
    }

    #[inline]
    pub(crate) fn unpack(&self, s: &[u8], out: &mut [u8]) {
        // The codes in order from a bit buffer refilled a byte at a time: a code has at
        // most eight bits, so eight buffered bits always suffice.
        let (mut acc, mut n) = (0u64, 0u32);
        let mut bytes = s.iter();
        for ((x, &b), d) in out.iter_mut().zip(&self.bits).zip(&self.dec) {
            if n < 8 {
                while n <= 56 {
                    match bytes.next() {
                        Some(&y) => acc |= (y as u64) << n,
                        None => break,
                    }
                    n += 8;
                }
            }
            *x = d[(acc & ((1u64 << b) - 1)) as usize];
            acc >>= b;
            n = n.saturating_sub(b as u32);
        }
    }

    pub(crate) fn packed_width(&self) -> usize {
        self.packed
    }
}

/// `sys` with packed states.
pub(crate) struct Packed<'a, S> {
    pub(crate) sys: &'a S,
    pub(crate) codec: Codec,
    /// Set when a state held a value outside its byte's set (see the module comment).
    pub(crate) miss: AtomicBool,
}

/// Runs `f` with a scratch vector of `n` bytes: on the stack when small (a state is
/// unpacked and its successors packed on every expansion).
#[inline]
fn with_scratch<R>(n: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    if n <= 256 {
        let mut a = [0u8; 256];
        f(&mut a[..n])
    } else {
        f(&mut vec![0u8; n])
    }
}

impl<S: TransitionSystem> Packed<'_, S> {
    pub(crate) fn new(sys: &S, codec: Codec) -> Packed<'_, S> {
        Packed {
            sys,
            codec,
            miss: AtomicBool::new(false),
        }
    }

    fn pack_into(&self, s: &[u8], out: &mut [u8]) {
        if !self.codec.pack(s, out) {
            self.miss.store(true, Ordering::Relaxed);
        }
    }

    pub(crate) fn unpack(&self, s: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; self.codec.width];
        self.codec.unpack(s, &mut v);
        v
    }

    /// `f` of the full vector of packed state `s`.
    pub(crate) fn with_full<R>(&self, s: &[u8], f: impl FnOnce(&[u8]) -> R) -> R {
        with_scratch(self.codec.width, |full| {
            self.codec.unpack(s, full);
            f(full)
        })
    }

    pub(crate) fn missed(&self) -> bool {
        self.miss.load(Ordering::Relaxed)
    }

    pub(crate) fn unpack_outcome(&self, o: Outcome<S::Label>) -> Outcome<S::Label> {
        Outcome {
            found: o.found.map(|mut f| {
                f.initial = self.unpack(&f.initial);
                for st in &mut f.steps {
                    st.1 = self.unpack(&st.1);
                }
                f
            }),
            ..o
        }
    }

    pub(crate) fn unpack_ltl(&self, o: LtlOutcome<S::Label>) -> LtlOutcome<S::Label> {
        let un = |v: Vec<(S::Label, Vec<u8>)>| {
            v.into_iter()
                .map(|(l, s)| (l, self.unpack(&s)))
                .collect::<Vec<_>>()
        };
        LtlOutcome {
            lasso: o.lasso.map(|l| Lasso {
                initial: self.unpack(&l.initial),
                prefix: un(l.prefix),
                cycle: un(l.cycle),
            }),
            ..o
        }
    }
}

impl<S: TransitionSystem> TransitionSystem for Packed<'_, S> {
    type Label = S::Label;
    fn width(&self) -> usize {
        self.codec.packed_width()
    }
    fn initial(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.codec.packed];
        self.pack_into(&self.sys.initial(), &mut out);
        out
    }
    fn successors(&self, s: &[u8], f: &mut dyn FnMut(Self::Label, Next<'_>)) {
        let w = self.codec.packed;
        with_scratch(self.codec.width, |full| {
            self.codec.unpack(s, full);
            with_scratch(w + 1, |next| {
                self.sys.successors(full, &mut |l, r| match r {
                    Ok(t) => {
                        next[..w].copy_from_slice(s);
                        next[w] = 0;
                        if !self.codec.repack(full, t, next) {
                            self.miss.store(true, Ordering::Relaxed);
                        }
                        f(l, Ok(&next[..w]))
                    }
                    Err(e) => f(l, Err(e)),
                })
            })
        })
    }
    fn accepting(&self, s: &[u8]) -> bool {
        self.with_full(s, |full| self.sys.accepting(full))
    }
    fn processes(&self) -> u32 {
        self.sys.processes()
    }
    fn moved(&self, l: Self::Label, out: &mut Vec<u32>) {
        self.sys.moved(l, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(values: &[u8]) -> [u64; 4] {
        let mut s = [0u64; 4];
        for &v in values {
            s[v as usize / 64] |= 1 << (v % 64);
        }
        s
    }

    #[test]
    fn packs_and_unpacks_every_combination() {
        let sets = vec![
            set(&[0, 1]),
            set(&[7]),
            set(&(0..=255).collect::<Vec<_>>()),
            set(&[0, 1, 2, 255]),
            set(&[3, 9, 200]),
            set(&[0, 1]),
            set(&[0, 1]),
            set(&[0, 1]),
        ];
        let c = Codec::new(&sets).expect("worth packing");
        assert_eq!(c.packed_width(), 16usize.div_ceil(8));
        let mut out = vec![0u8; c.packed_width()];
        let mut back = vec![0u8; sets.len()];
        for a in [0u8, 1] {
            for x in [0u8, 17, 255] {
                for y in [0u8, 1, 2, 255] {
                    for z in [3u8, 9, 200] {
                        let s = [a, 7, x, y, z, a, 1 - a, 1];
                        assert!(c.pack(&s, &mut out));
                        c.unpack(&out, &mut back);
                        assert_eq!(back, s);
                    }
                }
            }
        }
        assert!(
            !c.pack(&[2, 7, 0, 0, 3, 0, 0, 0], &mut out),
            "2 is not a value of byte 0"
        );
    }

    #[test]
    fn repacking_a_changed_vector_is_packing_it() {
        let sets: Vec<[u64; 4]> = (0..37)
            .map(|k| set(&(0..=(k % 5) as u8 * 6).collect::<Vec<_>>()))
            .collect();
        let c = Codec::new(&sets).expect("worth packing");
        let w = c.packed_width();
        let value = |k: usize, x: usize| (x % ((k % 5) * 6 + 1)) as u8;
        let s: Vec<u8> = (0..37).map(|k| value(k, k * 7)).collect();
        let mut base = vec![0u8; w + 1];
        assert!(c.pack(&s, &mut base[..w]));
        for seed in 0..200usize {
            let mut t = s.clone();
            for j in 0..(seed % 6) {
                let k = (seed * 31 + j * 17) % 37;
                t[k] = value(k, seed * 13 + j);
            }
            let mut want = vec![0u8; w];
            assert!(c.pack(&t, &mut want));
            let mut got = base.clone();
            assert!(c.repack(&s, &t, &mut got));
            assert_eq!(&got[..w], &want[..], "seed {seed}");
            assert_eq!(got[w], 0);
        }
    }

    #[test]
    fn long_vectors_cross_word_boundaries() {
        let sets: Vec<[u64; 4]> = (0..100)
            .map(|k| set(&(0..=(k % 7) as u8 * 5).collect::<Vec<_>>()))
            .collect();
        let c = Codec::new(&sets).expect("worth packing");
        let s: Vec<u8> = (0..100)
            .map(|k| ((k * 13) % ((k % 7) * 5 + 1)) as u8)
            .collect();
        let mut out = vec![0u8; c.packed_width()];
        assert!(c.pack(&s, &mut out));
        let mut back = vec![0u8; 100];
        c.unpack(&out, &mut back);
        assert_eq!(back, s);
    }

    #[test]
    fn not_worth_packing_when_little_is_saved() {
        let full = set(&(0..=255).collect::<Vec<_>>());
        assert!(Codec::new(&[full, full, set(&[0, 1]), set(&[0, 1])]).is_none());
        assert!(Codec::new(&[full, set(&[0, 1]), set(&[0, 1]), set(&[0, 1])]).is_some());
    }
}
