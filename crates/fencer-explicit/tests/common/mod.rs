//! The DVE front-end as the engine's tests see it (the CLI has its own adapter: the engine
//! does not depend on front-ends).

use fencer_dve::run::Label;
use fencer_explicit::TransitionSystem;

/// A DVE model: alone, or (`product`) in step with its property process; with `fair`, its
/// processes are weak-fairness constraints.
pub struct Dve {
    pub sys: fencer_dve::System,
    pub product: bool,
    pub fair: bool,
}

#[allow(dead_code)]
pub fn plain(sys: fencer_dve::System) -> Dve {
    Dve {
        sys,
        product: false,
        fair: false,
    }
}

#[allow(dead_code)]
pub fn product(sys: fencer_dve::System) -> Dve {
    Dve {
        sys,
        product: true,
        fair: false,
    }
}

impl TransitionSystem for Dve {
    type Label = Label;
    fn width(&self) -> usize {
        self.sys.width as usize
    }
    fn initial(&self) -> Vec<u8> {
        self.sys.initial.clone()
    }
    fn successors(&self, s: &[u8], f: &mut dyn FnMut(Label, fencer_explicit::Next<'_>)) {
        let mut buf = Vec::new();
        let f = &mut |l, r: fencer_dve::run::Next<'_>| f(l, r.map_err(|e| e.message));
        if self.product {
            self.sys.product_successors(s, &mut buf, f);
        } else {
            self.sys.successors(s, &mut buf, f);
        }
    }
    fn accepting(&self, s: &[u8]) -> bool {
        self.product && self.sys.accepting(s)
    }
    fn byte_values(&self) -> Option<Vec<[u64; 4]>> {
        Some(self.sys.byte_values())
    }
    fn processes(&self) -> u32 {
        if self.fair {
            self.sys.processes.len() as u32
        } else {
            0
        }
    }
    fn moved(&self, l: Label, out: &mut Vec<u32>) {
        for (p, _) in std::iter::once(l.first).chain(l.second) {
            if !self.sys.processes[p as usize].property {
                out.push(p);
            }
        }
    }
}
