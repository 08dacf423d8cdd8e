//! Exact minimum hitting sets by branch and bound.
//!
//! The instances are small (one set per counterexample, tens of positions each), so a
//! plain search does: branch on the elements of the unhit set with the fewest choices,
//! excluding each element from the branches after its own (so every solution is found
//! once), and bound by a packing of pairwise disjoint unhit sets, each of which needs an
//! element of its own.

/// Every minimum hitting set of `sets` (up to `cap` of them; at least one), each sorted;
/// `None` when a set is empty and nothing can hit it. `rank` orders the elements tried
/// first within a set (lower first).
pub fn minimum(sets: &[Vec<u32>], rank: &dyn Fn(u32) -> u32, cap: usize) -> Option<Vec<Vec<u32>>> {
    if sets.iter().any(|s| s.is_empty()) {
        return None;
    }
    let mut sorted: Vec<Vec<u32>> = sets
        .iter()
        .map(|s| {
            let mut s = s.clone();
            s.sort_by_key(|&e| (rank(e), e));
            s.dedup();
            s
        })
        .collect();
    sorted.sort();
    sorted.dedup();
    let mut search = Search {
        sets: &sorted,
        best: usize::MAX,
        sols: Vec::new(),
        cap: cap.max(1),
    };
    let mut chosen = Vec::new();
    let mut banned = Vec::new();
    search.go(&mut chosen, &mut banned);
    for s in &mut search.sols {
        s.sort_unstable();
    }
    search.sols.sort();
    search.sols.dedup();
    Some(search.sols)
}

/// Indices of pairwise disjoint sets, chosen greedily smallest first: a lower bound on
/// the size of any hitting set, and the witnesses of that bound.
pub fn disjoint_packing(sets: &[Vec<u32>]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sets.len()).collect();
    order.sort_by_key(|&i| sets[i].len());
    let mut used: Vec<u32> = Vec::new();
    let mut out = Vec::new();
    for i in order {
        if sets[i].iter().all(|e| !used.contains(e)) {
            used.extend(&sets[i]);
            out.push(i);
        }
    }
    out.sort_unstable();
    out
}

struct Search<'a> {
    sets: &'a [Vec<u32>],
    best: usize,
    sols: Vec<Vec<u32>>,
    cap: usize,
}

impl Search<'_> {
    fn go(&mut self, chosen: &mut Vec<u32>, banned: &mut Vec<u32>) {
        let unhit: Vec<&Vec<u32>> = self
            .sets
            .iter()
            .filter(|s| !s.iter().any(|e| chosen.contains(e)))
            .collect();
        if unhit.is_empty() {
            if chosen.len() < self.best {
                self.best = chosen.len();
                self.sols.clear();
            }
            if self.sols.len() < self.cap {
                self.sols.push(chosen.clone());
            }
            return;
        }
        let avail = |s: &Vec<u32>| -> Vec<u32> {
            s.iter().copied().filter(|e| !banned.contains(e)).collect()
        };
        let mut lb = 0;
        let mut used: Vec<u32> = Vec::new();
        let mut pick: Option<Vec<u32>> = None;
        let mut by_size: Vec<Vec<u32>> = unhit.iter().map(|s| avail(s)).collect();
        by_size.sort_by_key(|s| s.len());
        for s in &by_size {
            if s.is_empty() {
                return;
            }
            if s.iter().all(|e| !used.contains(e)) {
                used.extend(s);
                lb += 1;
            }
        }
        if let Some(s) = by_size.first() {
            pick = Some(s.clone());
        }
        let full = self.sols.len() >= self.cap;
        let bound = chosen.len() + lb;
        if bound > self.best || (full && bound >= self.best) {
            return;
        }
        let Some(pick) = pick else { return };
        let mark = banned.len();
        for e in pick {
            chosen.push(e);
            self.go(chosen, banned);
            chosen.pop();
            banned.push(e);
        }
        banned.truncate(mark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(sets: &[Vec<u32>], n: u32) -> (usize, Vec<Vec<u32>>) {
        let mut best = usize::MAX;
        let mut all = Vec::new();
        for mask in 0u32..(1 << n) {
            let s: Vec<u32> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
            if sets.iter().all(|t| t.iter().any(|e| s.contains(e))) {
                if s.len() < best {
                    best = s.len();
                    all.clear();
                }
                if s.len() == best {
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
            let got = minimum(&sets, &|_| 0, usize::MAX).expect("non-empty sets");
            let (best, all) = brute(&sets, n);
            assert_eq!(got[0].len(), best, "{sets:?}");
            assert_eq!(got, all, "{sets:?}");
        }
    }

    #[test]
    fn empty_set_cannot_be_hit() {
        assert_eq!(minimum(&[vec![1], vec![]], &|_| 0, 10), None);
    }
}
