//! Wakeup trees of Optimal-DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014, section 6):
//! at each position of the current execution, the ordered set of event sequences still
//! to explore from there, kept so that no sequence starts a trace already explored.

use fencer_machine::{Access, Step};

/// A node: the next event of process `step`, and the sequences that continue it. The tree
/// of a position is the list of its root's children.
#[derive(Clone, Debug, PartialEq, Hash)]
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
    /// For each process of `ps` (with what its next event accesses at the node `ctx`), in
    /// order, whether it is a weak initial of `w` (the paper's `WI`) as `w` runs from there,
    /// and how (`out` is overwritten): judged as the sleep sets will judge it along `w`, so
    /// that a sequence insertion lets in never meets a process asleep at its own event.
    fn weak_initials(
        &self,
        ctx: &Self::Ctx,
        w: &[usize],
        ps: &[(Step, Access)],
        out: &mut Vec<Option<Start>>,
    );
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

/// Whether process `p` is a weak initial of `w` by a happens-before relation of `w`'s
/// events (`before(a, b)`: the event at `a` happens before the one at `b`): its first event
/// in `w` has no predecessor there; or, with no event in `w`, `commutes` says its next
/// event commutes with all of `w`.
pub fn initial_by(
    w: &[usize],
    p: Step,
    step: impl Fn(usize) -> Step,
    before: impl Fn(usize, usize) -> bool,
    commutes: impl FnOnce() -> bool,
) -> Option<Start> {
    match w.iter().position(|&k| step(k) == p) {
        Some(at) => {
            let k = w[at];
            (!w[..at].iter().any(|&a| before(a, k))).then_some(Start::Initial(at))
        }
        None => commutes().then_some(Start::Commutes),
    }
}

/// How many emptied children lists [`Spare`] keeps: about as many as the trees of a deep
/// execution hold at once; more would only hold memory.
const SPARE_LISTS: usize = 4096;

/// Children lists that were emptied (a position's tree once explored), kept for their
/// allocations: nearly every node a reversal inserts is a new list of one child, and every
/// execution inserts some, so without them the engine would allocate and free a few
/// lists per execution (the commonest allocation left on its hot path).
#[derive(Default)]
pub struct Spare {
    lists: Vec<Vec<Node>>,
    starts: Vec<Option<Start>>,
}

impl Spare {
    /// Keeps `list`'s allocation (what it still holds is dropped).
    pub fn give(&mut self, mut list: Vec<Node>) {
        if list.capacity() > 0 && self.lists.len() < SPARE_LISTS {
            list.clear();
            self.lists.push(list);
        }
    }

    fn list_of(&mut self, node: Option<Node>) -> Vec<Node> {
        match node {
            Some(n) => {
                let mut list = self.lists.pop().unwrap_or_default();
                list.push(n);
                list
            }
            None => Vec::new(),
        }
    }
}

/// Inserts `w` (positions of the current execution) into the tree `roots`, unless the tree
/// already holds a leaf whose sequence is compatible with it. `w` is used up (a buffer the
/// caller keeps for its allocation); `ctx` is the tree's root, and is left at the node
/// where insertion stopped. New nodes' lists come from `spare`.
pub fn insert<E: Events>(
    ev: &E,
    ctx: &mut E::Ctx,
    roots: &mut Vec<Node>,
    w: &mut Vec<usize>,
    spare: &mut Spare,
) {
    let mut children = roots;
    let mut at_root = true;
    let mut starts = std::mem::take(&mut spare.starts);
    loop {
        if w.is_empty() {
            break;
        }
        if children.is_empty() && !at_root {
            // A leaf compatible with `w`: exploring it covers `w`.
            break;
        }
        let mut next = None;
        for (ci, c) in children.iter().enumerate() {
            ev.weak_initials(ctx, w, &[(c.step, c.acc)], &mut starts);
            match starts[0] {
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
                ev.advance(ctx, children[ci].step);
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
                        children: spare.list_of(chain),
                    });
                }
                children.extend(chain);
                break;
            }
        }
    }
    spare.starts = starts;
}
