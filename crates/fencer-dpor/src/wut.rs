//! Wakeup trees of Optimal-DPOR (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014, section 6):
//! at each position of the current execution, the ordered set of event sequences still
//! to explore from there, kept so that no sequence starts a trace already explored.

use fencer_machine::Step;

/// A node: the next event of process `step`, and the sequences that continue it. The tree
/// of a position is the list of its root's children.
#[derive(Clone, Debug)]
pub struct Node {
    pub step: Step,
    pub children: Vec<Node>,
}

/// What insertion needs to know about the events of the sequence being inserted (they are
/// events of the current execution, named by position).
pub trait Events {
    fn step(&self, k: usize) -> Step;
    /// Whether the event at `a` happens before the one at `b` (`a` precedes `b` in `w`).
    fn before(&self, a: usize, b: usize) -> bool;
}

/// Whether process `p` can start `w`: `w` can be reordered so that `p`'s next event comes
/// first (its first event in `w` has no predecessor there). Returns that event's position.
///
/// The paper's weak initials also count a process whose next event commutes with all of
/// `w`. That half is left out on purpose: with events whose kind depends on where they run
/// (a compare-and-swap that fails is a read, a forwarded load reads no memory, an `assume`
/// can block) it judged races already covered that were not, and the property test against
/// the reference explorer found traces missing. Without it no trace is lost; what it costs
/// is some executions that the sleep sets then block, which the statistics count.
pub fn initial<E: Events>(ev: &E, w: &[usize], p: Step) -> Option<usize> {
    let at = w.iter().position(|&k| ev.step(k) == p)?;
    let k = w[at];
    (!w[..at].iter().any(|&a| ev.before(a, k))).then_some(at)
}

/// Inserts `w` (positions of the current execution) into the tree `roots`, unless the tree
/// already holds a leaf whose sequence is compatible with it. `w` is consumed.
pub fn insert<E: Events>(ev: &E, roots: &mut Vec<Node>, mut w: Vec<usize>) {
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
            if let Some(at) = initial(ev, &w, c.step) {
                w.remove(at);
                next = Some(ci);
                break;
            }
        }
        match next {
            Some(ci) => {
                children = &mut children[ci].children;
                at_root = false;
            }
            None => {
                // A new branch, rightmost, so that it is explored after what is there.
                let mut chain: Option<Node> = None;
                for &k in w.iter().rev() {
                    chain = Some(Node {
                        step: ev.step(k),
                        children: chain.into_iter().collect(),
                    });
                }
                children.extend(chain);
                return;
            }
        }
    }
}
