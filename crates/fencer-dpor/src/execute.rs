//! The explorer's core: one execution after another, each replaying a prefix of the last
//! and choosing new steps from backtrack sets or wakeup trees, with the races each step
//! finds.

use crate::engine::Dpor;
use crate::hb;
use crate::options::Algo;
use crate::pos::Pos;
use crate::replay::{Snapshot, SNAP_CAP, SNAP_GAP};
use crate::{parallel, wut};
use fencer_ir::Program;
use fencer_machine::{dependent, Access, State, Status, Step};
use fencer_memory::{Drain, MemoryModel};
use fencer_report::Limit;
use std::sync::atomic::Ordering;

impl<'a, M: MemoryModel> Dpor<'a, M> {
    /// Explores from the current schedule's first `replay` steps until nothing is left
    /// (at positions from `root` on), a limit stops it, or a violation does.
    pub(crate) fn explore(&mut self, mut replay: usize) {
        loop {
            self.execute(replay);
            self.fresh = usize::MAX;
            self.prefix_races = false;
            // The leader of an exact split stopped at its depth: the unit below is
            // explored elsewhere, and it reverses this execution's races too.
            let adopted = std::mem::take(&mut self.reached);
            if adopted {
                if self.kept_at.is_some() {
                    self.adopt_kept();
                } else {
                    self.adopt();
                }
            }
            self.send_above();
            if let Some(sink) = self.rec_sink {
                sink.serve(self.unit);
            }
            if self.shared.is_none() {
                if let Some(p) = &self.opts.progress {
                    p.store(self.col.stats.executions, Ordering::Relaxed);
                }
            }
            if self.limit_hit() || (self.opts.stop_on_violation && self.col.cex.is_some()) {
                break;
            }
            if self.frontier.is_some() && self.units.len() >= self.unit_cap {
                break;
            }
            if self.opts.algo == Algo::Optimal && !adopted {
                self.reverse_races();
            }
            match self.backtrack_point() {
                Some(d) => {
                    if let Some(v) = self.inserted.get_mut(d..) {
                        v.iter_mut().for_each(Vec::clear);
                    }
                    if let Some(lead) = self.lead {
                        if let Some(n) = self.shallower.as_mut().and_then(|s| s.moved(lead, d)) {
                            self.lead = Some(n);
                            if let Some(src) = self.lead_src {
                                src.redepth();
                            }
                        }
                    }
                    self.depth = d + 1;
                    self.schedule.truncate(d);
                    replay = d;
                }
                None => break,
            }
        }
    }

    /// The deepest position with something left to explore.
    pub(crate) fn backtrack_point(&self) -> Option<usize> {
        let algo = self.opts.algo;
        let full = self.frontier.unwrap_or(0);
        (0..self.depth).rev().find(|&d| {
            let p = &self.pos[d];
            if self.vacant[d] {
                false
            } else if d < full {
                p.backtrack.iter().any(|&s| !p.explored(s) && !p.asleep(s))
            } else {
                p.pending(algo)
            }
        })
    }

    /// Runs one execution: replays the first `replay` steps of the schedule, then takes a
    /// new step at position `replay` and continues to the end.
    pub(crate) fn execute(&mut self, replay: usize) {
        self.replayed = replay;
        self.accs.truncate(replay);
        // The races of the replayed prefix stay: every execution reverses all of its
        // races (see `reverse_races`).
        let keep = self.pending.partition_point(|&(_, j)| j < replay);
        self.pending.truncate(keep);
        self.new_races = keep;
        self.alone = None;
        let snaps = self.snap_ok && self.frontier.is_none() && self.fresh >= replay;
        let resumed = if snaps { self.resume(replay) } else { None };
        let (mut state, start) = match resumed {
            Some(r) => r,
            None => match self.start(replay) {
                Some(state) => (state, 0),
                None => return,
            },
        };
        self.execute_from(&mut state, start, replay, snaps);
        // The next execution resumes into its allocations.
        self.last = Some(state);
    }

    /// Runs the execution from `state`, which is at position `start`: replays the
    /// schedule up to `replay`, then explores.
    fn execute_from(&mut self, state: &mut State, start: usize, replay: usize, snaps: bool) {
        let mut found = std::mem::take(&mut self.found_buf);
        self.execute_with(state, start, replay, snaps, &mut found);
        self.found_buf = found;
    }

    /// Keeps `state`, the machine after the schedule's first `upto` steps, with the
    /// happens-before relation as it stands, for executions that share those steps.
    fn snapshot(&mut self, state: &State, upto: usize) {
        if self.snaps.len() >= SNAP_CAP {
            // Full: every other one goes (the newest stays), so the snapshots thin out
            // evenly over the execution instead of all standing where the first
            // executions backtracked. A search that backtracks deeper and deeper (each
            // execution one iteration longer than the last) otherwise replays from the
            // last snapshot taken, ever further away.
            let last = self.snaps.len() - 1;
            let all = std::mem::take(&mut self.snaps);
            for (i, s) in all.into_iter().enumerate() {
                if i % 2 == 0 || i == last {
                    self.snaps.push(s);
                } else {
                    self.snap_pool.push(s);
                }
            }
        }
        let mut snap = match self.snap_pool.pop() {
            Some(mut snap) => {
                snap.state.clone_from(state);
                snap
            }
            None => Snapshot {
                sched: Vec::new(),
                state: state.clone(),
                hb: hb::Saved::default(),
            },
        };
        snap.sched.clear();
        snap.sched.extend_from_slice(&self.schedule[..upto]);
        self.hb.save(&mut snap.hb);
        self.snaps.push(snap);
    }

    /// [`Dpor::execute_from`], with `found` for the races each event's record finds.
    fn execute_with(
        &mut self,
        state: &mut State,
        start: usize,
        replay: usize,
        snaps: bool,
        found: &mut Vec<usize>,
    ) {
        // Halfway through a long replay, a snapshot too: depth-first search backtracks
        // upwards, and a snapshot is only good for positions below it, so with snapshots
        // at the ends of replays alone a long execution with a race at every iteration
        // (two threads handing control back and forth) replays from the start at every
        // backtrack, a cost quadratic in its length (GenMC's `pgsql` at 16,384 events per
        // thread: 11 s). The halves make it about n log n (0.4 s).
        let end = replay.min(self.fresh);
        let mid = if snaps && end >= start + 2 * SNAP_GAP {
            start + (end - start) / 2
        } else {
            usize::MAX
        };
        for d in start..end {
            if d == mid {
                self.snapshot(state, d);
            }
            let step = self.schedule[d];
            self.replayed_access(state, d, step);
            let (ev, status) = state.step::<M>(self.prog, step);
            if let Status::Fault(f) = status {
                state.threads[f.thread as usize].faulted = true;
            }
            self.hb
                .record::<M>(step, &ev, || waited::<M>(self.prog, state, step), None);
            self.events.push(ev);
        }
        if snaps && replay - start >= SNAP_GAP {
            self.snapshot(state, replay);
        }
        // A unit's prefix steps that no earlier unit took: new, as in the exploration
        // without a frontier (their faults are reported).
        for d in self.fresh.min(replay)..replay {
            let step = self.schedule[d];
            self.replayed_access(state, d, step);
            let (ev, status) = state.step::<M>(self.prog, step);
            if self.prefix_races || self.above.is_some() {
                found.clear();
                self.hb.record::<M>(
                    step,
                    &ev,
                    || waited::<M>(self.prog, state, step),
                    Some(&mut *found),
                );
                self.events.push(ev);
                if self.prefix_races {
                    // An exact split's unit: the leader took these steps (and counted
                    // them, and reported their faults); their races are reversed here.
                    self.pending.extend(found.iter().map(|&i| (i, d)));
                    if let Status::Fault(f) = status {
                        state.threads[f.thread as usize].faulted = true;
                    }
                    continue;
                }
                // The top of a race-driven split took these steps for this unit: their
                // races are reversed there, and this unit is the one to find them.
                for &i in found.iter() {
                    self.races += 1;
                    self.race_above(i, d);
                }
            } else {
                self.hb
                    .record::<M>(step, &ev, || waited::<M>(self.prog, state, step), None);
                self.events.push(ev);
            }
            self.col.stats.events += 1;
            if let Status::Fault(f) = status {
                self.col.fault(state, &f, &self.events);
                self.obs.fault(state, &f, &self.events);
                if self.opts.stop_on_violation {
                    return;
                }
                state.threads[f.thread as usize].faulted = true;
            }
        }
        let mut d = replay;
        // The position whose step running alone declined: it takes the normal path, and
        // the check whether the thread runs alone is not repeated there.
        let mut declined = usize::MAX;
        loop {
            if d >= self.opts.max_depth.saturating_mul(64) {
                if self.frontier.is_some() {
                    self.record_unit(d, Vec::new(), replay, false);
                    return;
                }
                self.col.stats.blocked += 1;
                self.col.stats.depth_cut += 1;
                return;
            }
            if let Some(t) = self.alone {
                match self.step_alone(state, t, d) {
                    Some(true) => {
                        d += 1;
                        continue;
                    }
                    Some(false) => return,
                    None => {
                        self.alone = None;
                        declined = d;
                    }
                }
            }
            self.enabled.clear();
            state.enabled::<M>(self.prog, &mut self.enabled);
            // A fresh position, or the first one after a run alone.
            if d == self.depth || self.vacant[d] {
                self.occupy(d, &[], Vec::new());
                self.depth = self.depth.max(d + 1);
            }
            if self.frontier == Some(d) {
                let sleep = self.pos[d].sleep.clone();
                self.record_unit(d, sleep, replay, true);
                return;
            }
            if self.lead == Some(d) || self.finds_kept(d) {
                self.reached = true;
                return;
            }
            if let Some(&Step::Thread(t)) = self.enabled.first() {
                if d >= replay
                    && d != declined
                    && self.frontier.is_none()
                    && self.lead.is_none()
                    // Kept units were found by a leader that never runs alone above its
                    // depth: its positions there are what their keys hold.
                    && self.kept.as_ref().is_none_or(|k| d >= k.depth)
                    && self.runs_alone(state, t, d)
                {
                    self.alone = Some(t);
                    continue;
                }
            }
            let Some((step, subtree)) = self.choose(d) else {
                if self.frontier.is_some() {
                    let sleep = self.pos[d].sleep.clone();
                    self.record_unit(d, sleep, replay, false);
                    return;
                }
                if self.enabled.is_empty() {
                    if let Some(sh) = self.shared.filter(|_| self.record.is_none()) {
                        // Workers count complete executions together, before judging one,
                        // so that --max-executions stops at exactly that many.
                        let completes = state.choice.own()
                            && state.is_complete::<M>(self.prog)
                            && state.cut().is_none()
                            && !state.threads.iter().any(|t| t.faulted);
                        if completes && !self.count(sh) {
                            self.stop(Limit::MaxExecutions);
                            return;
                        }
                    }
                    self.blocked_locks(state, d);
                    if let Some(t) = &mut self.traces {
                        if state.choice.own() && state.is_complete::<M>(self.prog) {
                            let mut h = fencer_machine::trace::TraceHash::default();
                            for e in &self.events {
                                h.record(e);
                            }
                            t.push(h.value().wrapping_add(state.choice.fingerprint()));
                        }
                    }
                    self.obs.execution(state, &self.events);
                    self.col.end::<M>(state, &self.events);
                } else {
                    // Every enabled process sleeps: this execution would repeat another.
                    // Its threads that wait for a mutex for good still race with the
                    // acquisition that blocks them: the executions the sleeping processes
                    // lead to start elsewhere and do not reverse that race here.
                    self.blocked_locks(state, d);
                    // Not `blocked`: how many explorations a sleep set stops depends on
                    // how the tree is explored (Source-DPOR, a frontier split), while the
                    // executions the program blocks are one per trace, whatever the split.
                    self.sleep_blocked += 1;
                }
                return;
            };
            // The child's sleep set: what sleeps here or was explored here before, and
            // commutes with the step taken.
            let acc = state.next_access::<M>(self.prog, step);
            let mut child_sleep = std::mem::take(&mut self.sleep_buf);
            child_sleep.clear();
            {
                let p = &self.pos[d];
                for &(q, _) in p.sleep.iter().chain(p.done.iter()) {
                    if q != step && !child_sleep.iter().any(|&(r, _)| r == q) {
                        let qa = state.next_access::<M>(self.prog, q);
                        if !dependent::<M>((q, qa), (step, acc)) {
                            child_sleep.push((q, qa));
                        }
                    }
                }
            }
            let full = self.frontier.is_some_and(|f| d < f);
            let p = &mut self.pos[d];
            if self.opts.algo == Algo::Source && p.backtrack.is_empty() && !full {
                p.backtrack.push(step);
            }
            p.done.push((step, acc));
            self.schedule.truncate(d);
            self.schedule.push(step);
            let (ev, status) = state.step::<M>(self.prog, step);
            self.col.stats.events += 1;
            found.clear();
            self.hb.record::<M>(
                step,
                &ev,
                || waited::<M>(self.prog, state, step),
                Some(&mut *found),
            );
            self.events.push(ev);
            self.accs.truncate(d);
            self.accs.push(acc);
            for &i in found.iter() {
                self.races += 1;
                if i < self.root && self.record.is_none() {
                    // Above the root every process is explored or asleep: the reversal
                    // is covered there (`parallel.rs`); or the top of a race-driven split
                    // reverses it (`dynamic.rs`).
                    if self.above.is_some() {
                        self.race_above(i, d);
                    }
                    continue;
                }
                match self.opts.algo {
                    Algo::Source => self.add_backtrack(i, d),
                    Algo::Optimal => self.pending.push((i, d)),
                }
            }
            if let Status::Fault(f) = status {
                if self.frontier.is_some() {
                    // The unit's explorer reports the fault (it is a new step there).
                    if self.opts.stop_on_violation {
                        self.record_unit(d + 1, Vec::new(), replay, false);
                        return;
                    }
                } else {
                    self.col.fault(state, &f, &self.events);
                    self.obs.fault(state, &f, &self.events);
                    if self.opts.stop_on_violation {
                        return;
                    }
                }
                // Exploring everything: the faulting thread stops, the others go on, so
                // that the races of the events they have yet to run are seen.
                state.threads[f.thread as usize].faulted = true;
            }
            d += 1;
            self.occupy(d, &child_sleep, subtree);
            self.depth = d + 1;
            self.sleep_buf = child_sleep;
            if self.limit_hit() {
                return;
            }
        }
    }

    /// Frontier enumeration: the execution stops here, at position `end` (the frontier,
    /// or where it ended earlier); the schedule's first `end` steps and the sleep set
    /// there become a unit.
    pub(crate) fn record_unit(
        &mut self,
        end: usize,
        sleep: Vec<(Step, Access)>,
        fresh: usize,
        open: bool,
    ) {
        self.units.push(parallel::Unit {
            prefix: self.schedule[..end].to_vec(),
            sleep,
            fresh,
            open,
        });
    }

    /// Makes position `d` (at most one past the last) the one after a new step, with this
    /// sleep set and wakeup tree.
    fn occupy(&mut self, d: usize, sleep: &[(Step, Access)], wut: Vec<wut::Node>) {
        if d == self.pos.len() {
            self.pos.push(Pos::default());
            self.vacant.push(false);
        }
        self.pos[d].reset(sleep, wut, &mut self.wut_spare);
        self.vacant[d] = false;
    }

    /// Makes the first `n` positions empty ones, for a unit or top branch to start at
    /// the last.
    pub(crate) fn empty_positions(&mut self, n: usize) {
        self.pos.clear();
        self.pos.resize_with(n, Pos::default);
        self.vacant.clear();
        self.vacant.resize(n, false);
    }

    /// Records what a replayed step accesses, unless an earlier execution of this engine
    /// did (a unit's prefix is new to its engine).
    fn replayed_access(&mut self, state: &State, d: usize, step: Step) {
        if self.accs.len() == d {
            self.accs.push(state.next_access::<M>(self.prog, step));
        }
    }

    /// The step to take at position `d` of the current execution, and (Optimal-DPOR) the
    /// wakeup tree to follow after it.
    fn choose(&mut self, d: usize) -> Option<(Step, Vec<wut::Node>)> {
        let p = &mut self.pos[d];
        if self.frontier.is_some_and(|f| d < f) {
            if self.thin {
                let step = match p
                    .backtrack
                    .iter()
                    .find(|&&s| !p.explored(s) && !p.asleep(s))
                {
                    Some(&s) => {
                        planned_enabled(&self.enabled, s, d);
                        Some(s)
                    }
                    None if p.done.is_empty() => {
                        self.enabled.iter().copied().find(|&s| !p.asleep(s))
                    }
                    None => None,
                };
                return step.map(|s| (s, Vec::new()));
            }
            // The top of a split tree: every enabled process that is not asleep, in
            // enabled order (the same on every replay).
            if p.done.is_empty() && p.backtrack.is_empty() {
                p.backtrack.extend_from_slice(&self.enabled);
            }
            let step = p
                .backtrack
                .iter()
                .copied()
                .find(|&s| !p.explored(s) && !p.asleep(s));
            step.inspect(|&s| planned_enabled(&self.enabled, s, d));
            return step.map(|s| (s, Vec::new()));
        }
        match self.opts.algo {
            Algo::Source => {
                let step = if p.backtrack.is_empty() {
                    self.enabled.iter().copied().find(|&s| !p.asleep(s))
                } else {
                    let s = p
                        .backtrack
                        .iter()
                        .copied()
                        .find(|&s| !p.explored(s) && !p.asleep(s));
                    s.inspect(|&s| planned_enabled(&self.enabled, s, d))
                };
                step.map(|s| (s, Vec::new()))
            }
            Algo::Optimal => {
                while !p.wut.is_empty() {
                    let node = p.wut.remove(0);
                    // Insertion keeps sleeping processes out of the tree as far as weak
                    // initials let it see; where one slips in, skipping it is sound: a
                    // sleeping process's executions have all been explored.
                    if p.asleep(node.step) || p.explored(node.step) {
                        continue;
                    }
                    planned_enabled(&self.enabled, node.step, d);
                    return Some((node.step, node.children));
                }
                if !p.done.is_empty() {
                    return None;
                }
                let step = self.enabled.iter().copied().find(|&s| !p.asleep(s))?;
                Some((step, Vec::new()))
            }
        }
    }
}

/// Checks, in release builds too, that a step taken from a wakeup tree or a backtrack set
/// (planned in another execution) is enabled at depth `d`: running a step the machine has
/// not enabled would explore an execution the program cannot take, and report on it.
/// (Steps picked from the enabled set need no check.)
fn planned_enabled(enabled: &[Step], step: Step, d: usize) {
    assert!(
        enabled.contains(&step),
        "a planned step is not enabled: {step:?} at depth {d}; enabled {enabled:?}"
    );
}

/// What of its thread's buffers a fault of `step`, just run to `state`, waited for (the
/// thread stays at the instruction); the hb relation reads that of other events from the
/// events themselves.
pub(crate) fn waited<M: MemoryModel>(prog: &Program, state: &State, step: Step) -> Drain {
    match step {
        Step::Thread(t) => state.waits::<M>(prog, t),
        Step::Update(..) => Drain::Nothing,
    }
}
