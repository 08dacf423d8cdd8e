//! Wakeup trees of Optimal-DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014, section 6):
//! at each position of the current execution, the ordered set of event sequences still
//! to explore from there, kept so that no sequence starts a trace already explored.

use fencer_machine::{Access, Step};

/// A node: the next event of process `step`, and the sequences that continue it. The tree
/// of a position is the list of its root's children.
#[derive(Clone, Debug)]
pub struct Node {
    pub step: Step,
    /// What the event accesses, where kinds are stable (elsewhere insertion asks the state
    /// at the node instead): weak initials compare it with the events of a sequence being
    /// inserted.
    pub acc: Access,
    pub children: Vec<Node>,
}

/// What insertion needs to know about the events of the sequence being inserted (they are
/// events of the current execution, named by position).
pub trait Events {
    /// Where in the tree insertion stands: what judging commutation there needs (the
    /// machine state at the node, where kinds can change).
    type Ctx;
    fn step(&self, k: usize) -> Step;
    /// What the event accesses.
    fn access(&self, k: usize) -> Access;
    /// Whether the event at `a` happens before the one at `b` (`a` precedes `b` in `w`).
    fn before(&self, a: usize, b: usize) -> bool;
    /// Whether the next event of process `p` (which accesses `acc` at the node `ctx`)
    /// commutes with every event of `w` as `w` runs from there: neither changes what the
    /// other does nor whether it can run, judged as sleep sets judge them along `w`.
    fn commutes(&self, ctx: &Self::Ctx, p: Step, acc: Access, w: &[usize]) -> bool;
    /// Moves `ctx` down to the child of process `p`.
    fn advance(&self, ctx: &mut Self::Ctx, p: Step);
}

/// How a process can start a sequence `w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Its first event in `w`, at this index of `w`, has no predecessor there.
    Initial(usize),
    /// It has no event in `w` and its next event commutes with all of `w`.
    Commutes,
}

/// Whether process `p`, whose next event may access `acc`, is a weak initial of `w` (the
/// paper's `WI`): `w` can be reordered so that `p`'s next event comes first, or `p` has no
/// event in `w` and its next event commutes with every event of `w`.
///
/// The second half judges the events of `w` by what they do where they run after the node
/// `ctx`, as the sleep sets will (see `kinds_stable` in the crate root for why).
pub fn weak_initial<E: Events>(
    ev: &E,
    ctx: &E::Ctx,
    w: &[usize],
    p: Step,
    acc: Access,
) -> Option<Start> {
    match w.iter().position(|&k| ev.step(k) == p) {
        Some(at) => {
            let k = w[at];
            (!w[..at].iter().any(|&a| ev.before(a, k))).then_some(Start::Initial(at))
        }
        None => ev.commutes(ctx, p, acc, w).then_some(Start::Commutes),
    }
}

/// Inserts `w` (positions of the current execution) into the tree `roots`, unless the tree
/// already holds a leaf whose sequence is compatible with it. `w` is consumed; `ctx` is the
/// tree's root.
pub fn insert<E: Events>(ev: &E, mut ctx: E::Ctx, roots: &mut Vec<Node>, mut w: Vec<usize>) {
    let mut children = roots;
    let mut at_root = true;
    loop {
        if w.is_empty() {
            return;
        }
        if children.is_empty() && !at_root {
            // A leaf compatible with `w`: exploring it covers `w`.
            return;
        }
        let mut next = None;
        for (ci, c) in children.iter().enumerate() {
            match weak_initial(ev, &ctx, &w, c.step, c.acc) {
                Some(Start::Initial(at)) => {
                    w.remove(at);
                    next = Some(ci);
                    break;
                }
                // `c`'s event commutes with all of `w`: `c.w` has `w`'s trace, and what
                // is explored below `c` must be compatible with `w` itself.
                Some(Start::Commutes) => {
                    next = Some(ci);
                    break;
                }
                None => {}
            }
        }
        match next {
            Some(ci) => {
                ev.advance(&mut ctx, children[ci].step);
                children = &mut children[ci].children;
                at_root = false;
            }
            None => {
                // A new branch, rightmost, so that it is explored after what is there.
                let mut chain: Option<Node> = None;
                for &k in w.iter().rev() {
                    chain = Some(Node {
                        step: ev.step(k),
                        acc: ev.access(k),
                        children: chain.into_iter().collect(),
                    });
                }
                children.extend(chain);
                return;
            }
        }
    }
}
