//! Bringing the machine to a position of the current execution: the initial state, the
//! snapshots an execution resumes from, the cursor simulations read, and copies of states
//! that keep their allocations.

use crate::engine::Dpor;
use crate::hb;
use crate::options::{bounds, Options};
use fencer_ir::Program;
use fencer_machine::{State, Status, Step};
use fencer_memory::MemoryModel;

/// The machine and the happens-before relation after the first `sched.len()` steps of an
/// execution: an execution whose schedule starts with those steps resumes here instead of
/// replaying them from the initial state. Exploration backtracks depth-first, so the
/// snapshots valid for the next execution are a stack: those at or above the backtrack
/// point. One is taken at the end of a replay that ran [`SNAP_GAP`] steps or more past the
/// snapshot it started from, so an execution replays fewer than that many steps after the
/// first return to a point, and one halfway through a replay of twice that (a search
/// that backtracks upwards then finds one nearer). There are at most [`SNAP_CAP`] of them
/// (memory: that many machine states and per-location tables, besides the events they
/// share with the execution): a full stack drops every other one, so that they stay
/// spread over the execution however deep the search goes.
pub(crate) struct Snapshot {
    pub(crate) sched: Vec<Step>,
    pub(crate) state: State,
    pub(crate) hb: hb::Saved,
}

pub(crate) const SNAP_GAP: usize = 8;
pub(crate) const SNAP_CAP: usize = 64;

/// The machine state before a position of the current execution, for simulations: moved
/// forward step by step while the races are reversed in order of their first event, or
/// refilled from the deepest snapshot on the way (or the initial state) where that is
/// nearer. The states keep their allocations across executions.
#[derive(Default)]
pub(crate) struct Cursor {
    /// Where `state` is, if it is for the current execution.
    pub(crate) at: Option<usize>,
    pub(crate) state: Option<State>,
    pub(crate) initial: Option<State>,
}

/// A snapshot is copied in at about the cost of this many steps.
const COPY_STEPS: usize = 4;

impl Cursor {
    /// Brings the cursor to position `i` of the execution with schedule `schedule`.
    pub(crate) fn seek<M: MemoryModel>(
        &mut self,
        prog: &Program,
        opts: &Options,
        snaps: &[Snapshot],
        schedule: &[Step],
        i: usize,
    ) -> &State {
        let snap = deepest_snapshot(snaps, schedule, i);
        let from = snap.map_or(0, |s| s.sched.len());
        let mut at = match (self.at, &mut self.state) {
            (Some(at), Some(_)) if at <= i && at + COPY_STEPS >= from => at,
            (_, state) => {
                let src = match snap {
                    Some(s) => &s.state,
                    None => self.initial.get_or_insert_with(|| {
                        let (mut state, status) = initial_state(prog, opts);
                        if let Status::Fault(f) = status {
                            state.threads[f.thread as usize].faulted = true;
                        }
                        state
                    }),
                };
                copy_into(state, src);
                from
            }
        };
        let state = self.state.as_mut().expect("a state");
        while at < i {
            take::<M>(prog, state, schedule[at]);
            at += 1;
        }
        self.at = Some(at);
        state
    }
}

fn deepest_snapshot<'s>(
    snaps: &'s [Snapshot],
    schedule: &[Step],
    i: usize,
) -> Option<&'s Snapshot> {
    snaps.iter().rev().find(|s| {
        let at = s.sched.len();
        at <= i && s.sched[..] == schedule[..at]
    })
}

/// The program's initial state under `opts`' bounds, and whether it faults already.
fn initial_state(prog: &Program, opts: &Options) -> (State, Status) {
    let (unroll, max_events) = bounds(opts);
    match &opts.plan {
        Some(plan) => State::initial_planned(prog, unroll, max_events, plan.clone(), Vec::new()),
        None => State::initial_limited(prog, unroll, max_events),
    }
}

/// Takes `step` as a replay does: a faulting thread stops, the others go on.
pub(crate) fn take<M: MemoryModel>(prog: &Program, state: &mut State, step: Step) {
    let (_, status) = state.step::<M>(prog, step);
    if let Status::Fault(f) = status {
        state.threads[f.thread as usize].faulted = true;
    }
}

/// A copy of `src`, in the allocations of the state kept in `spare` if there is one.
pub(crate) fn copy_of(spare: &std::cell::RefCell<Option<State>>, src: &State) -> State {
    let mut slot = spare.borrow_mut().take();
    copy_into(&mut slot, src);
    slot.expect("just filled")
}

/// Makes `slot` a copy of `src`, in its state's allocations if it holds one.
pub(crate) fn copy_into<'s>(slot: &'s mut Option<State>, src: &State) -> &'s mut State {
    match slot {
        Some(st) => {
            st.clone_from(src);
            st
        }
        None => slot.insert(src.clone()),
    }
}

impl<'a, M: MemoryModel> Dpor<'a, M> {
    /// The initial state, with the relation and the events reset: `None` if the execution
    /// stops at once (a fault of the initial state, when violations stop the search).
    pub(crate) fn start(&mut self, replay: usize) -> Option<State> {
        let (unroll, max_events) = bounds(self.opts);
        let (mut state, status) = match &self.initial {
            // Made under the same bounds (a kit can come from an engine with others).
            Some((init, status)) if init.unroll == unroll && init.max_events == max_events => {
                let state = match self.last.take() {
                    Some(mut last) => {
                        last.clone_from(init);
                        last
                    }
                    None => init.clone(),
                };
                (state, status.clone())
            }
            _ => {
                let made = initial_state(self.prog, self.opts);
                self.initial = Some(made.clone());
                made
            }
        };
        self.hb.reset();
        self.events.clear();
        if let Status::Fault(f) = &status {
            self.snap_ok = false;
            self.snaps.clear();
            if self.frontier.is_some() {
                // The enumeration judges nothing: the unit's explorer meets this fault.
                if self.opts.stop_on_violation {
                    self.record_unit(0, Vec::new(), replay, false);
                    return None;
                }
                state.threads[f.thread as usize].faulted = true;
            } else {
                self.col.fault(&state, f, &[]);
                self.obs.fault(&state, f, &[]);
                if self.opts.stop_on_violation {
                    return None;
                }
                state.threads[f.thread as usize].faulted = true;
            }
        }
        Some(state)
    }

    /// The state at the deepest snapshot on the way to position `replay`, with the
    /// relation and the events brought back there; the snapshots past it are dropped.
    pub(crate) fn resume(&mut self, replay: usize) -> Option<(State, usize)> {
        while let Some(s) = self.snaps.last() {
            let at = s.sched.len();
            if at <= replay
                && at <= self.events.len()
                && at <= self.hb.recorded()
                && s.sched[..] == self.schedule[..at]
            {
                break;
            }
            let s = self.snaps.pop().expect("a snapshot");
            self.snap_pool.push(s);
        }
        let s = self.snaps.last()?;
        let at = s.sched.len();
        self.hb.restore(&s.hb);
        self.events.truncate(at);
        // Copies only the objects and threads that differ from the last execution's.
        let state = match self.last.take() {
            Some(mut last) => {
                last.clone_from(&s.state);
                last
            }
            None => s.state.clone(),
        };
        Some((state, at))
    }
}
