//! A thread that runs alone: its steps are taken without enabled sets, sleep sets, access
//! prediction or race detection, since nothing can race with them.

use crate::engine::Dpor;
use crate::execute::waited;
use crate::pos::Pos;
use fencer_ir::Op;
use fencer_machine::{Access, EventKind, State, Status, Step};
use fencer_memory::MemoryModel;

impl<'a, M: MemoryModel> Dpor<'a, M> {
    /// Whether thread `t`, the first enabled step at the fresh position `d`, runs alone
    /// from here (see [`Dpor::alone`]): the other enabled steps are its own updates, which
    /// the exploration would take only when the thread cannot move.
    pub(crate) fn runs_alone(&mut self, state: &State, t: u32, d: usize) -> bool {
        let p = &self.pos[d];
        p.sleep.is_empty()
            && p.done.is_empty()
            && p.wut.is_empty()
            && p.backtrack.is_empty()
            && self.enabled[1..]
                .iter()
                .all(|s| matches!(s, Step::Update(u, _) if *u == t))
            && state
                .threads
                .iter()
                .enumerate()
                .all(|(u, th)| u as u32 == t || th.finished && !th.faulted && th.cut.is_none())
            && state
                .bufs
                .iter()
                .enumerate()
                .all(|(u, b)| u as u32 == t || b.is_empty())
            && self.hb.covers_others(t)
            && self.hb.pending_updates_covered(t)
    }

    /// Takes the next step of thread `t` running alone, at position `d`: `Some(true)` if
    /// the execution goes on, `Some(false)` if it stops here (a violation or a limit),
    /// `None` if this step is not one to take alone (the normal path takes it).
    pub(crate) fn step_alone(&mut self, state: &mut State, t: u32, d: usize) -> Option<bool> {
        {
            let th = &state.threads[t as usize];
            if th.finished || th.cut.is_some() || th.spin.blocked || th.faulted {
                return None;
            }
            // Loads and stores are always enabled; a read-modify-write is when the
            // thread's buffers are empty. Anything else takes the normal path, and the
            // updates of the thread's buffers run only when the thread cannot: the
            // exploration's first choice, which nothing reverses.
            match &state.current(self.prog, t).1.op {
                Op::Load { .. } | Op::Store { .. } => {}
                Op::Rmw { .. } if state.bufs[t as usize].is_empty() => {}
                _ => return None,
            }
        }
        let step = Step::Thread(t);
        self.schedule.truncate(d);
        self.schedule.push(step);
        let (ev, status) = state.step::<M>(self.prog, step);
        self.col.stats.events += 1;
        let acc = match ev.kind {
            EventKind::Load {
                loc,
                forwarded: true,
                ..
            } => Some(Access::Buffered(loc)),
            EventKind::Load { loc, .. } => Some(Access::Read(loc)),
            EventKind::Store {
                loc,
                buffered: false,
                ..
            } => Some(Access::Write(loc)),
            EventKind::Rmw {
                loc,
                written: Some(_),
                ..
            } => Some(Access::Rmw(loc)),
            EventKind::Rmw {
                loc, written: None, ..
            } => Some(Access::RmwRead(loc)),
            _ => None,
        };
        self.accs.truncate(d);
        match acc {
            Some(acc) => {
                self.hb.record_alone(step);
                match ev.kind {
                    EventKind::Store { loc, value, .. }
                    | EventKind::Rmw {
                        loc,
                        written: Some(value),
                        ..
                    } => self.hb.wrote_alone(loc, value),
                    _ => {}
                }
                self.accs.push(acc);
            }
            None => {
                // A buffered store (its update needs the store's clock and its place in
                // the buffer's mirror), or a fault (a bad address or uninitialised
                // memory: what it would have accessed is what later events race with).
                let mut found = Vec::new();
                self.hb.record::<M>(
                    step,
                    &ev,
                    || waited::<M>(self.prog, state, step),
                    Some(&mut found),
                );
                debug_assert!(found.is_empty(), "an event running alone races");
                match ev.kind {
                    EventKind::Store { loc, .. } => self.accs.push(Access::Buffered(loc)),
                    _ => {
                        // The fault left the thread at the instruction: its access is
                        // what the sleep sets would have seen.
                        let acc = state.next_access::<M>(self.prog, step);
                        self.accs.push(acc);
                        self.alone = None;
                    }
                }
            }
        }
        self.events.push(ev);
        if let Status::Fault(f) = status {
            self.col.fault(state, &f, &self.events);
            self.obs.fault(state, &f, &self.events);
            if self.opts.stop_on_violation {
                return Some(false);
            }
            state.threads[t as usize].faulted = true;
            self.alone = None;
        }
        let d = d + 1;
        if d == self.pos.len() {
            self.pos.push(Pos::default());
            self.vacant.push(true);
        }
        self.depth = d + 1;
        self.vacant[d] = true;
        Some(!self.limit_hit())
    }
}
