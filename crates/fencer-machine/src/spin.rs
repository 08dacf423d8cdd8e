//! Run-time spin-loop pruning: iterations that changed nothing, mutex windows (a lock and
//! unlock that form a pair, and other threads' passes through them), and stores a later
//! iteration redid.

use crate::{EventId, EventKind, ReadFrom, State};
use fencer_ir::{FuncId, Op, Program, Value};
use fencer_memory::Loc;

/// Dynamic spin-loop pruning. When a thread takes a backward jump, comes back to the same
/// jump having done nothing visible but loads, and finds its registers as they were, the
/// iteration in between changed nothing: dropping it leaves a valid execution with the same
/// outcome, so every execution that goes on from here has a shorter equivalent one, and
/// this one is discarded (the thread blocks, as at a false `assume`). This catches the
/// waiting loops the static spin-loop rewrite cannot, such as Dekker's
/// `while (flag1) { if (turn != 0) { ... } }` when the `if` is not taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SpinTrack {
    /// The backward jump last taken: function, pc, call depth.
    pub(crate) at: Option<(FuncId, u32, u32)>,
    /// Whether a register of the jump's frame or a caller's has taken a new value since
    /// then. (Set on a write of a value other than the register's: a register that
    /// changes and changes back counts as changed, which only keeps an iteration that
    /// could have been dropped. Comparing whole register files at every backward jump
    /// cost more than the rest of a long local loop's step.)
    pub(crate) changed: bool,
    /// Only loads since then.
    pub(crate) pure: bool,
    /// One past the index of the thread's last impure event (for [`Op::SpinBack`]).
    pub(crate) impure_upto: u32,
    /// A mutex the thread took with its last impure event, and no other thread has
    /// touched the mutex's cell since: the mutex, the lock's index, and `impure_upto`
    /// before it.
    pub(crate) lock_open: Option<(Loc, u32, u32)>,
    /// The same for a mutex the thread gave back with its last impure event.
    pub(crate) unlock_open: Option<(Loc, u32, u32)>,
    /// The unlock the thread's next lock of that mutex must read for the two to be a
    /// pair: its own, or the last one of other threads' passes through the window (see
    /// [`Handoff`]).
    pub(crate) unlock_from: Option<EventId>,
    /// Another thread's pass through the `unlock_open` window, under way.
    pub(crate) handoff: Option<Handoff>,
    /// The last lock and unlock (or unlock and lock) of one mutex with nothing impure in
    /// between, and no other thread touching the mutex's cell in between: the first's
    /// index, the second's, and `impure_upto` before the first. An iteration whose only
    /// impure events are such a pair is dropped like a pure one (see
    /// [`State::lock_pairs`]).
    pub(crate) pair: Option<(u32, u32, u32)>,
    /// The thread repeated a pure iteration: it never runs again.
    pub blocked: bool,
    /// An input was read since the backward jump last taken.
    pub(crate) input: bool,
    /// One past the thread's event count at its last input read (0: none yet).
    pub(crate) input_event: u32,
    /// The iteration that blocked the thread read an input: another value could have
    /// let it leave, so its waiting is no hang (an input loop), and the execution is
    /// discarded as at a false `assume`.
    pub input_blocked: bool,
    /// The cells stored since the last loop head, while every impure event since was a
    /// store that went straight to memory (see [`Stored`]).
    pub(crate) stored: Stored,
    /// The thread's event count at the last loop head.
    pub(crate) stored_from: u32,
    /// What an iteration that ended at its back edge stored, its other events all pure:
    /// until the thread stores to each of these cells again, with nobody (the thread
    /// included) reading it in between. Then that iteration changed nothing a later one
    /// did not redo, and the thread blocks as after a pure iteration (see
    /// [`State::watch_stores`]).
    dead: Stored,
    /// Blocked because an earlier iteration turned out to have changed nothing: the
    /// thread is not waiting, and an execution without that iteration goes on.
    pub dropped: bool,
}

/// Another thread's pass through a thread's unlock-then-lock window: it took the mutex
/// from the window's expected unlock, and stood then at `pc` of `func` at call depth
/// `depth` with the registers `regs`. If it gives the mutex back with only pure events in
/// between, standing at that lock again with the same registers (a second waiter's
/// spurious wake-up: `unlock; lock` in a predicate loop), the pass changed nothing, and
/// both it and the window's iteration can be dropped: the window stays a pair, now
/// expecting the pass's unlock. Without this, two waiters on one mutex would hand it back
/// and forth forever, each pass keeping the other's iteration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Handoff {
    thread: u32,
    func: FuncId,
    pc: u32,
    depth: u32,
    regs: Box<[Value]>,
}

/// Whether two register files of a frame of `f` agree but for the registers its loop
/// heads write ([`Op::LoopHead`]: an event count, new at every iteration).
fn same_but_loop_heads(f: &fencer_ir::Function, a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).enumerate().all(|(r, (x, y))| {
            x == y
                || f.body
                    .iter()
                    .any(|i| matches!(i.op, Op::LoopHead { dst } if dst as usize == r))
        })
}

/// A few cells, or a mark that there were too many (or something other than stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Stored {
    locs: [Loc; STORED],
    /// How many of `locs` hold cells; [`Stored::SPOILT`] when they cannot say.
    len: u8,
}

/// Cells an iteration may store to and still be dropped: a CAS retry loop that prepares
/// its node (`n->next = top`) stores one or two.
const STORED: usize = 4;

impl Default for Stored {
    /// No cells, and none collected: a thread collects its stores only from a rewritten
    /// loop's head on, so that one outside such loops is never watched.
    fn default() -> Self {
        Stored {
            locs: [Loc { obj: 0, index: 0 }; STORED],
            len: Self::SPOILT,
        }
    }
}

impl Stored {
    const SPOILT: u8 = u8::MAX;

    /// No cells yet, collecting.
    pub(crate) const EMPTY: Stored = Stored {
        locs: [Loc { obj: 0, index: 0 }; STORED],
        len: 0,
    };

    fn cells(&self) -> &[Loc] {
        if self.len == Self::SPOILT {
            &[]
        } else {
            &self.locs[..self.len as usize]
        }
    }

    fn add(&mut self, loc: Loc) {
        if self.len == Self::SPOILT || self.cells().contains(&loc) {
            return;
        }
        if self.len as usize == STORED {
            self.len = Self::SPOILT;
        } else {
            self.locs[self.len as usize] = loc;
            self.len += 1;
        }
    }

    /// Removes `loc`; whether it was there.
    fn remove(&mut self, loc: Loc) -> bool {
        let Some(i) = self.cells().iter().position(|&l| l == loc) else {
            return false;
        };
        self.len -= 1;
        self.locs[i] = self.locs[self.len as usize];
        true
    }

    fn is_empty(&self) -> bool {
        self.cells().is_empty()
    }
}

impl SpinTrack {
    /// Notes an impure event for the iteration under way (see [`SpinTrack::dead`]).
    pub(crate) fn note_impure(&mut self, kind: &EventKind) {
        match kind {
            EventKind::Store {
                loc,
                buffered: false,
                ..
            } => self.stored.add(*loc),
            _ => self.stored.len = Stored::SPOILT,
        }
    }

    /// At the back edge of an iteration that started at event count `start` and was not
    /// pure: if its only impure events were stores to memory, none of them read since,
    /// the thread watches those cells from now on.
    pub(crate) fn end_iteration(&mut self, start: Value) {
        if self.stored_from as Value == start && !self.stored.is_empty() {
            self.dead = self.stored;
        }
    }

    /// Whether some cell of the thread's is watched for reads ([`State::watch_stores`]).
    pub(crate) fn watching(&self) -> bool {
        !self.stored.is_empty() || !self.dead.is_empty()
    }

    /// Whether every event since the iteration that started at event count `start` was
    /// pure, but for at most one lock and unlock of one mutex (when `pairs`).
    pub(crate) fn pure_since(&self, start: Value, pairs: bool) -> bool {
        if self.impure_upto as Value <= start {
            return true;
        }
        pairs
            && matches!(self.pair, Some((lock, unlock, before))
                if self.impure_upto == unlock + 1
                    && lock as Value >= start
                    && before as Value <= start)
    }
}

impl State {
    /// Watches the cells stored by iterations of rewritten loops, after thread `t`'s event
    /// `kind`. An iteration whose impure events were all stores straight to memory, of
    /// cells its thread stores to again later with nobody (the thread included) reading
    /// them in between, changed nothing a later iteration did not redo. Every execution
    /// from there has an equivalent one without that iteration (its loads and failed
    /// compare-and-swaps only read; its registers are dead at the loop's head, as the
    /// rewrite checked), one event shorter, so this one is discarded: the thread blocks
    /// at the last overwrite. A CAS retry loop that prepares its node (`n->next = top`)
    /// is the case: GenMC drops its failed tries too.
    ///
    /// A read spoils a cell from the store on: from [`SpinTrack::stored`] while the
    /// iteration runs, then from [`SpinTrack::dead`]. That is what makes blocking depend
    /// on the trace alone (the order of the cell's accesses, which DPOR reverses like
    /// any race), as an `assume` on values read does: a read watched only from the back
    /// edge on could move before it, unseen, in an equivalent execution. And only stores
    /// that went straight to memory count: a buffered one's update could be read by
    /// another thread after the overwrite was issued, which the events so far cannot tell.
    pub(crate) fn watch_stores(&mut self, t: u32, kind: &EventKind) {
        if let Some((loc, _)) = kind.read_loc() {
            for (u, th) in self.threads.iter_mut().enumerate() {
                let sp = &mut th.spin;
                let before = sp.watching();
                if sp.stored.cells().contains(&loc) {
                    sp.stored.len = Stored::SPOILT;
                }
                if sp.dead.cells().contains(&loc) {
                    sp.dead = Stored::default();
                }
                // `t`'s own count is settled at the end of its step.
                if before && !sp.watching() && u != t as usize {
                    self.watching -= 1;
                }
            }
            return;
        }
        if let EventKind::Store {
            loc,
            buffered: false,
            ..
        } = kind
        {
            let sp = &mut self.threads[t as usize].spin;
            if sp.dead.remove(*loc) && sp.dead.is_empty() {
                sp.blocked = true;
                sp.dropped = true;
            }
        }
    }

    /// Closes the mutex windows of threads other than `t` on `loc`: `t` has just touched
    /// the mutex's cell while another thread held it (or had given it back to take it
    /// again), so that thread's lock and unlock are no longer a pair that changed nothing.
    pub(crate) fn spoil_windows(&mut self, t: u32, loc: Loc) {
        for (u, th) in self.threads.iter_mut().enumerate() {
            let sp = &mut th.spin;
            if u == t as usize || sp.lock_open.is_none() && sp.unlock_open.is_none() {
                continue;
            }
            if sp.lock_open.is_some_and(|(l, ..)| l == loc) {
                sp.lock_open = None;
            }
            if sp.unlock_open.is_some_and(|(l, ..)| l == loc) {
                sp.unlock_open = None;
                sp.handoff = None;
            }
            if sp.lock_open.is_none() && sp.unlock_open.is_none() {
                self.windows -= 1;
            }
        }
    }

    /// [`State::spoil_windows`] for thread `t`'s event `kind` (`id`), `t` standing at the
    /// instruction that made it: a lock that takes the mutex from another thread's
    /// unlock-then-lock window starts a pass through it, and the unlock that ends a pass
    /// which changed nothing keeps the window (see [`Handoff`]); any other access to the
    /// window's mutex, or an impure event of a thread in a pass, closes it.
    pub(crate) fn watch_windows(&mut self, prog: &Program, t: u32, kind: &EventKind, id: EventId) {
        let loc = kind.loc();
        let mine = |sp: &SpinTrack| sp.handoff.as_ref().is_some_and(|h| h.thread == t);
        let passes = self.threads.iter().enumerate().any(|(a, th)| {
            a != t as usize
                && th.spin.unlock_open.is_some()
                && (mine(&th.spin) || loc.is_some_and(|l| th.spin.unlock_open.unwrap().0 == l))
        });
        if !passes {
            if let Some(l) = loc {
                self.spoil_windows(t, l);
            }
            return;
        }
        let (func, pc, depth, regs) = {
            let th = &self.threads[t as usize];
            let fr = th.frames.last().expect("frame");
            (fr.func, fr.pc, th.frames.len() as u32, fr.regs.as_slice())
        };
        let regs: Box<[Value]> = regs.into();
        for a in 0..self.threads.len() {
            if a == t as usize {
                continue;
            }
            let sp = &mut self.threads[a].spin;
            let was_open = sp.lock_open.is_some() || sp.unlock_open.is_some();
            if !was_open {
                continue;
            }
            if sp.lock_open.is_some_and(|(l, ..)| Some(l) == loc) {
                sp.lock_open = None;
            }
            if let Some((window, ..)) = sp.unlock_open {
                let keep = match (loc == Some(window), &sp.handoff) {
                    (true, None) => {
                        let takes = matches!(kind, EventKind::Lock { from, trylock: false, destroy: false, .. }
                            if sp.unlock_from.is_some_and(|u| *from == ReadFrom::Store(u)));
                        if takes {
                            sp.handoff = Some(Handoff {
                                thread: t,
                                func,
                                pc,
                                depth,
                                regs: regs.clone(),
                            });
                        }
                        takes
                    }
                    (true, Some(h)) => {
                        let back = h.thread == t
                            && matches!(kind, EventKind::Unlock { .. })
                            && (h.func, h.depth) == (func, depth)
                            && pc + 1 == h.pc
                            && matches!(
                                prog.functions[func as usize].body.get(h.pc as usize),
                                Some(fencer_ir::Instr {
                                    op: Op::Lock(_),
                                    ..
                                })
                            )
                            && same_but_loop_heads(&prog.functions[func as usize], &h.regs, &regs);
                        if back {
                            sp.unlock_from = Some(id);
                            sp.handoff = None;
                        }
                        back
                    }
                    (false, Some(h)) => h.thread != t || kind.is_pure(),
                    (false, None) => true,
                };
                if !keep {
                    sp.unlock_open = None;
                    sp.handoff = None;
                }
            }
            if sp.lock_open.is_none() && sp.unlock_open.is_none() {
                self.windows -= 1;
            }
        }
    }
}
