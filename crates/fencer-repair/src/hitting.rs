//! Exact minimum hitting sets by branch and bound.
//!
//! The cost is lexicographic: the number of elements first, then the number of *heavy*
//! ones (full fences, where store-store fences are the light ones).
//!
//! The instances are small (one set per counterexample, tens of positions each), so a
//! plain search does: iterative deepening on the size and then on the heavy elements
//! allowed, branching on the elements of the
//! unhit set with the fewest choices, excluding each element from the branches after its
//! own (so every solution is found once), and bounding by a packing of pairwise disjoint
//! unhit sets, each of which needs an element of its own. Sets are bit sets, since the
//! repair loop asks again after every counterexample, with hundreds of sets on the larger
//! programs.

/// Every minimum hitting set of `sets` (up to `cap` of them; at least one), each sorted:
/// the fewest elements, and among those the fewest `heavy` ones. `None` when a set is
/// empty and nothing can hit it. `rank` orders the elements tried first within a set
/// (lower first). `at_least` is a known lower bound on (size, heavy elements), compared
/// lexicographically (the minimum of a subset of these sets), where the deepening starts.
pub fn minimum(
    sets: &[Vec<u32>],
    rank: &dyn Fn(u32) -> u32,
    heavy: &dyn Fn(u32) -> bool,
    cap: usize,
    at_least: (usize, usize),
) -> Option<Vec<Vec<u32>>> {
    if sets.iter().any(|s| s.is_empty()) {
        return None;
    }
    let n = sets.iter().flatten().max().map_or(0, |&m| m as usize + 1);
    let words = n.div_ceil(64).max(1);
    let mut lists: Vec<Vec<u32>> = sets
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.sort_by_key(|&e| (rank(e), e));
            s.dedup();
            s
        })
        .collect();
    lists.sort();
    lists.dedup();
    let bits: Vec<Vec<u64>> = lists
        .iter()
        .map(|l| {
            let mut b = vec![0u64; words];
            for &e in l {
                b[e as usize / 64] |= 1 << (e % 64);
            }
            b
        })
        .collect();
    // A set that contains another is hit whenever that one is: only the minimal sets
    // constrain anything, and every search node scans the sets (hundreds of
    // counterexamples give many supersets, the store-store and full candidates of one
    // position even more).
    let subset = |a: &[u64], b: &[u64]| a.iter().zip(b).all(|(x, y)| x & !y == 0);
    let keep: Vec<bool> = (0..bits.len())
        .map(|i| {
            // `lists` holds no set twice, so this is a strict subset.
            !(0..bits.len()).any(|j| j != i && subset(&bits[j], &bits[i]))
        })
        .collect();
    let lists: Vec<Vec<u32>> = lists
        .into_iter()
        .zip(&keep)
        .filter_map(|(l, &k)| k.then_some(l))
        .collect();
    let bits: Vec<Vec<u64>> = bits
        .into_iter()
        .zip(&keep)
        .filter_map(|(b, &k)| k.then_some(b))
        .collect();
    let mut heavy_bits = vec![0u64; words];
    for e in 0..n as u32 {
        if heavy(e) {
            heavy_bits[e as usize / 64] |= 1 << (e % 64);
        }
    }
    let mut search = Search {
        lists: &lists,
        bits: &bits,
        heavy: &heavy_bits,
        words,
        k: at_least.0,
        h: at_least.1.min(at_least.0),
        sols: Vec::new(),
        cap: cap.max(1),
    };
    loop {
        let mut chosen = Vec::new();
        let mut chosen_bits = vec![0u64; words];
        let mut banned = vec![0u64; words];
        search.go(&mut chosen, &mut chosen_bits, &mut banned);
        if !search.sols.is_empty() {
            break;
        }
        if search.h < search.k {
            search.h += 1;
        } else {
            search.k += 1;
            search.h = 0;
        }
    }
    for s in &mut search.sols {
        s.sort_unstable();
    }
    search.sols.sort();
    search.sols.dedup();
    Some(search.sols)
}

/// Indices of pairwise disjoint sets, as many as a bounded search finds (at most
/// `want`): a lower bound on the size of any hitting set, and the witnesses of that bound.
pub fn disjoint_packing(sets: &[Vec<u32>], want: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sets.len()).collect();
    order.sort_by_key(|&i| sets[i].len());
    let mut best = Vec::new();
    let mut cur = Vec::new();
    let mut budget = 200_000u32;
    pack(sets, &order, 0, &mut cur, &mut best, want, &mut budget);
    best.sort_unstable();
    best
}

fn pack(
    sets: &[Vec<u32>],
    order: &[usize],
    from: usize,
    cur: &mut Vec<usize>,
    best: &mut Vec<usize>,
    want: usize,
    budget: &mut u32,
) {
    if cur.len() > best.len() {
        best.clone_from(cur);
    }
    if best.len() >= want || *budget == 0 || cur.len() + (order.len() - from) <= best.len() {
        return;
    }
    for k in from..order.len() {
        let i = order[k];
        // The budget counts checks, so that hundreds of sets stay cheap.
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        if cur
            .iter()
            .all(|&j| sets[i].iter().all(|e| !sets[j].contains(e)))
        {
            cur.push(i);
            pack(sets, order, k + 1, cur, best, want, budget);
            cur.pop();
            if best.len() >= want || *budget == 0 {
                return;
            }
        }
    }
}

struct Search<'a> {
    lists: &'a [Vec<u32>],
    bits: &'a [Vec<u64>],
    heavy: &'a [u64],
    words: usize,
    /// The size looked for.
    k: usize,
    /// The heavy elements allowed.
    h: usize,
    sols: Vec<Vec<u32>>,
    cap: usize,
}

fn disjoint(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).all(|(x, y)| x & y == 0)
}

impl Search<'_> {
    fn go(&mut self, chosen: &mut Vec<u32>, chosen_bits: &mut [u64], banned: &mut [u64]) {
        if self.sols.len() >= self.cap {
            return;
        }
        // The unhit sets, with how many elements each has left.
        let mut unhit: Vec<(u32, usize)> = Vec::new();
        for (i, b) in self.bits.iter().enumerate() {
            if disjoint(b, chosen_bits) {
                let left: u32 = b
                    .iter()
                    .zip(banned.iter())
                    .map(|(x, y)| (x & !y).count_ones())
                    .sum();
                if left == 0 {
                    return;
                }
                unhit.push((left, i));
            }
        }
        let heavy_chosen: usize = chosen_bits
            .iter()
            .zip(self.heavy)
            .map(|(c, h)| (c & h).count_ones() as usize)
            .sum();
        if heavy_chosen > self.h {
            return;
        }
        if unhit.is_empty() {
            self.sols.push(chosen.clone());
            return;
        }
        unhit.sort_unstable();
        let mut used = vec![0u64; self.words];
        let mut lb = 0;
        for &(_, i) in &unhit {
            let avail: Vec<u64> = self.bits[i]
                .iter()
                .zip(banned.iter())
                .map(|(x, y)| x & !y)
                .collect();
            if disjoint(&avail, &used) {
                for (u, a) in used.iter_mut().zip(&avail) {
                    *u |= a;
                }
                lb += 1;
            }
        }
        if chosen.len() + lb > self.k {
            return;
        }
        // Unhit sets left with heavy elements only, pairwise disjoint, each need a heavy
        // element of their own.
        let mut used = vec![0u64; self.words];
        let mut hb = 0;
        for &(_, i) in &unhit {
            let avail: Vec<u64> = self.bits[i]
                .iter()
                .zip(banned.iter())
                .map(|(x, y)| x & !y)
                .collect();
            let all_heavy = avail.iter().zip(self.heavy).all(|(a, h)| a & !h == 0);
            if all_heavy && disjoint(&avail, &used) {
                for (u, a) in used.iter_mut().zip(&avail) {
                    *u |= a;
                }
                hb += 1;
            }
        }
        if heavy_chosen + hb > self.h {
            return;
        }
        let pick = unhit[0].1;
        let saved = banned.to_vec();
        for &e in &self.lists[pick] {
            let (w, bit) = (e as usize / 64, 1u64 << (e % 64));
            if banned[w] & bit != 0 {
                continue;
            }
            chosen.push(e);
            chosen_bits[w] |= bit;
            self.go(chosen, chosen_bits, banned);
            chosen.pop();
            chosen_bits[w] &= !bit;
            banned[w] |= bit;
        }
        banned.copy_from_slice(&saved);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(
        sets: &[Vec<u32>],
        n: u32,
        heavy: &dyn Fn(u32) -> bool,
    ) -> ((usize, usize), Vec<Vec<u32>>) {
        let mut best = (usize::MAX, usize::MAX);
        let mut all = Vec::new();
        for mask in 0u32..(1 << n) {
            let s: Vec<u32> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            if sets.iter().all(|t| t.iter().any(|e| s.contains(e))) {
                let cost = (s.len(), s.iter().filter(|&&e| heavy(e)).count());
                if cost < best {
                    best = cost;
                    all.clear();
                }
                if cost == best {
                    all.push(s);
                }
            }
        }
        all.sort();
        (best, all)
    }

    #[test]
    fn equals_brute_force_on_small_instances() {
        let mut seed = 12345u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..300 {
            let n = 1 + next(9) as u32;
            let k = 1 + next(7) as usize;
            let sets: Vec<Vec<u32>> = (0..k)
                .map(|_| {
                    let mut s: Vec<u32> = (0..1 + next(4)).map(|_| next(n as u64) as u32).collect();
                    s.sort_unstable();
                    s.dedup();
                    s
                })
                .collect();
            let got =
                minimum(&sets, &|_| 0, &|_| false, usize::MAX, (0, 0)).expect("non-empty sets");
            let (best, all) = brute(&sets, n, &|_| false);
            assert_eq!(got[0].len(), best.0, "{sets:?}");
            assert_eq!(got, all, "{sets:?}");
        }
    }

    /// Fence-like instances: element `2p` is a full fence at position `p`, `2p + 1` a
    /// store-store one, and a set holding the light one of a position holds the heavy one.
    #[test]
    fn lexicographic_cost_equals_brute_force() {
        let mut seed = 987654321u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let heavy = |e: u32| e.is_multiple_of(2);
        let mut some_light = 0;
        for _ in 0..300 {
            let positions = 1 + next(5) as u32;
            let k = 1 + next(6) as usize;
            let sets: Vec<Vec<u32>> = (0..k)
                .map(|_| {
                    let mut s = Vec::new();
                    for _ in 0..1 + next(3) {
                        let p = next(positions as u64) as u32;
                        s.push(2 * p);
                        if next(2) == 0 {
                            s.push(2 * p + 1);
                        }
                    }
                    s.sort_unstable();
                    s.dedup();
                    s
                })
                .collect();
            let got = minimum(&sets, &|_| 0, &heavy, usize::MAX, (0, 0)).expect("non-empty");
            let (best, all) = brute(&sets, 2 * positions, &heavy);
            assert_eq!(got, all, "{sets:?}");
            assert_eq!(
                (got[0].len(), got[0].iter().filter(|&&e| heavy(e)).count()),
                best
            );
            some_light += usize::from(best.1 < best.0);
            // A lower bound taken from a subset of the sets gives the same answer.
            let sub = minimum(&sets[..1], &|_| 0, &heavy, usize::MAX, (0, 0)).expect("one");
            let lb = (sub[0].len(), sub[0].iter().filter(|&&e| heavy(e)).count());
            let again = minimum(&sets, &|_| 0, &heavy, usize::MAX, lb).expect("non-empty");
            assert_eq!(again, all, "{sets:?} from {lb:?}");
        }
        assert!(
            some_light > 50,
            "light elements were chosen in {some_light} instances"
        );
    }

    #[test]
    fn empty_set_cannot_be_hit() {
        assert_eq!(
            minimum(&[vec![1], vec![]], &|_| 0, &|_| false, 10, (0, 0)),
            None
        );
    }
}
