//! How an execution that cannot go on ended: complete, stopped by a false `assume`, or hung
//! in a waiting loop.

use crate::locals::Local;
use crate::{eval, EventKind, State, Status, Step};
use fencer_ir::{Op, Program, SrcLoc, Value};
use fencer_memory::MemoryModel;

/// What [`State::hang`] works in, kept by its caller for the allocations: a copy of the
/// final state, and a waiting thread's registers after its last iteration and after this
/// one.
#[derive(Default)]
pub struct HangScratch {
    state: Option<State>,
    last: Vec<Value>,
    now: Vec<Value>,
}

impl State {
    /// Every buffer empty, and every thread finished; or the process ended
    /// ([`Op::ExitProcess`]) and every other thread is done for good: finished, or
    /// waiting for something that can never come (a waiting loop that [`State::hang`]
    /// proves stuck, a mutex or a join), with none cut by a bound, faulted, stopped by a
    /// false `assume`, or blocked after an iteration that changed nothing. A thread blocked
    /// in a waiting loop that could still leave it is not done: the execution in which it
    /// reads later is explored, and this one is discarded, as without the exit.
    pub fn is_complete<M: MemoryModel>(&self, prog: &Program) -> bool {
        if !self.bufs.iter().all(|b| b.is_empty()) {
            return false;
        }
        if !self.threads.iter().any(|t| t.exited) {
            return self.threads.iter().all(|t| t.finished);
        }
        let mut waiting = false;
        for (t, th) in self.threads.iter().enumerate() {
            if th.finished || th.exited {
                continue;
            }
            if th.cut.is_some() || th.faulted || th.spin.dropped {
                return false;
            }
            if th.spin.blocked {
                waiting = true;
            } else if matches!(&self.current(prog, t as u32).1.op, Op::Assume(c)
                if eval(c, &self.current(prog, t as u32).0.regs) == Some(0))
            {
                return false;
            }
        }
        !waiting || self.hang::<M>(prog, &mut HangScratch::default()).is_some()
    }

    /// Whether some thread is blocked for good by a false `assume`: an execution that ends
    /// so is discarded (it is not a deadlock).
    pub fn assume_blocked(&self, prog: &Program) -> bool {
        (0..self.threads.len() as u32).any(|t| {
            self.threads[t as usize].spin.blocked
                || !self.threads[t as usize].finished
                    && matches!(&self.current(prog, t).1.op, Op::Assume(c)
                    if eval(c, &self.current(prog, t).0.regs) == Some(0))
        })
    }

    /// Whether this execution, which cannot go on, ends in a *hang*: a thread blocked in a
    /// waiting loop that could never leave it. Such a thread was blocked because an
    /// iteration read nothing new; that alone proves nothing (it may have read too early,
    /// and another execution lets it read later). So each waiting thread is run once more,
    /// alone, on the final memory: if it comes back to its loop having again done nothing
    /// but read, nothing can ever release it. Returns the thread and its loop's position.
    /// A thread stopped by a false `assume` the user wrote means the execution is
    /// discarded instead. The threads run in `scratch`, kept for its allocations (every
    /// execution an `assume` blocks comes here).
    pub fn hang<M: MemoryModel>(
        &self,
        prog: &Program,
        scratch: &mut HangScratch,
    ) -> Option<(u32, SrcLoc)> {
        // A thread cut by a bound may not be waiting at all.
        if self
            .threads
            .iter()
            .any(|th| !th.finished && th.cut.is_some())
        {
            return None;
        }
        for (t, th) in self.threads.iter().enumerate() {
            if !th.finished
                && !th.spin.blocked
                && matches!(&self.current(prog, t as u32).1.op, Op::Assume(_))
            {
                return None;
            }
        }
        let waiting = (0..self.threads.len() as u32).filter(|&t| {
            let th = &self.threads[t as usize];
            !th.finished && th.spin.blocked
        });
        // One copy of the state for the threads run alone (as before them all: each
        // only reads), and a fresh one for each value an input loop is tried with.
        match &mut scratch.state {
            Some(s) => s.clone_from(self),
            None => scratch.state = Some(self.clone()),
        }
        let mut first = None;
        for t in waiting {
            let th = &self.threads[t as usize];
            // Blocked at a store that redid an earlier iteration's: the execution without
            // that iteration is explored, but it too is cut at its next overwrite, so no
            // execution of a loop that stores forever would ever block as a pure one.
            // Whether this one is stuck is judged on its own: run alone from here, its
            // state (memory included) must come back to what it was.
            if th.spin.dropped {
                let tries: Vec<Option<Value>> = if th.spin.input_event > 0 {
                    self.choice
                        .values_read_by(t)
                        .into_iter()
                        .map(Some)
                        .collect()
                } else {
                    vec![None]
                };
                if tries.is_empty() {
                    return None;
                }
                for v in tries {
                    let at = self.stores_forever::<M>(prog, t, v, scratch)?;
                    first.get_or_insert((t, at));
                }
                continue;
            }
            // A loop whose iteration read an input may leave on another value: it waits
            // forever only if it comes back unchanged whatever its reads give. Each value
            // of the sites the thread read is tried for all its reads (a loop that leaves
            // only on a mix of values is judged to wait: a hang that some input sequence
            // does give, never a hang missed).
            let tries: Vec<Option<Value>> = if th.spin.input_blocked {
                self.choice
                    .values_read_by(t)
                    .into_iter()
                    .map(Some)
                    .collect()
            } else {
                vec![None]
            };
            if tries.is_empty() {
                return None;
            }
            for v in tries {
                let at = self.waits_forever::<M>(prog, t, v, scratch)?;
                first.get_or_insert((t, at));
            }
        }
        first
    }

    /// Whether thread `t`, blocked at a store that redid one of an earlier iteration
    /// ([`SpinTrack::dropped`](crate::spin::SpinTrack)), goes round its loop forever when
    /// run alone on this state (with every input it reads giving `input`, where one is
    /// given): `Some` of the loop's position once it blocks twice at the same place with
    /// the same registers (but for the loop heads' event counts) and the same memory, the
    /// iterations in between having been deterministic; `None` if it leaves the loop's
    /// code, lets another thread go on, or stores where another thread's update could
    /// see it (a buffered store: nothing then comes back).
    fn stores_forever<M: MemoryModel>(
        &self,
        prog: &Program,
        t: u32,
        input: Option<Value>,
        scratch: &mut HangScratch,
    ) -> Option<SrcLoc> {
        // The rewritten loop the thread stands in (the innermost, in the deepest frame
        // that stands in one): only those collect stores.
        let (func, head, jump, depth) = self.threads[t as usize]
            .frames
            .iter()
            .enumerate()
            .rev()
            .find_map(|(d, fr)| {
                let body = &prog.functions[fr.func as usize].body;
                body.iter()
                    .enumerate()
                    .filter_map(|(back, i)| match i.op {
                        Op::SpinBack { to, .. } if to <= fr.pc && fr.pc <= back as u32 => {
                            Some((fr.func, to, back as u32, d as u32 + 1))
                        }
                        _ => None,
                    })
                    .max_by_key(|&(_, to, ..)| to)
            })?;
        let at = prog.functions[func as usize].body[head as usize].loc;
        let HangScratch { state, last, now } = scratch;
        let s = state.as_mut().expect("hang copies the state first");
        s.clone_from(self);
        if let Some(v) = input {
            if s.inputs.len() <= t as usize {
                s.inputs.resize(t as usize + 1, Vec::new());
            }
            s.inputs[t as usize] = vec![v; INPUT_TRIES];
        }
        let inside = |s: &State| {
            let th = &s.threads[t as usize];
            !th.finished
                && !th.exited
                && th.cut.is_none()
                && (th.frames.len() as u32 > depth
                    || th.frames.len() as u32 == depth && {
                        let fr = th.frames.last().expect("frame");
                        fr.func == func && fr.pc >= head && fr.pc <= jump
                    })
        };
        // Where the thread blocked last: its frames' positions and registers, with the
        // loop heads' counts blanked (new every iteration, and dead at the head).
        let snapshot = |s: &State, r: &mut Vec<Value>| {
            r.clear();
            for fr in &s.threads[t as usize].frames {
                let body = &prog.functions[fr.func as usize].body;
                r.push(fr.func as Value);
                r.push(fr.pc as Value);
                let start = r.len();
                r.extend_from_slice(&fr.regs);
                for ins in body {
                    if let Op::LoopHead { dst } = ins.op {
                        if (dst as usize) < fr.regs.len() {
                            r[start + dst as usize] = 0;
                        }
                    }
                }
            }
        };
        snapshot(s, last);
        let mut last_mem = s.mem.clone();
        let mut steps = 0;
        loop {
            let th = &mut s.threads[t as usize];
            th.spin.blocked = false;
            th.spin.dropped = false;
            if !matches!(s.run_locals(prog, t), Local::Ready) || !inside(s) {
                return None;
            }
            if s.threads[t as usize].spin.blocked {
                snapshot(s, now);
                if now == last && s.mem.same_values(&last_mem) {
                    return Some(at);
                }
                std::mem::swap(last, now);
                last_mem.clone_from(&s.mem);
                continue;
            }
            steps += 1;
            if steps > 10_000 || !s.thread_enabled::<M>(prog, t) {
                return None;
            }
            let (ev, status) = s.step::<M>(prog, Step::Thread(t));
            if status != Status::Ok
                || matches!(ev.kind, EventKind::Store { buffered: true, .. })
                || (0..s.threads.len() as u32).any(|u| u != t && s.thread_runs::<M>(prog, u))
                || !inside(s)
            {
                return None;
            }
            if s.threads[t as usize].spin.blocked {
                snapshot(s, now);
                if now == last && s.mem.same_values(&last_mem) {
                    return Some(at);
                }
                std::mem::swap(last, now);
                last_mem.clone_from(&s.mem);
            }
        }
    }

    /// Whether thread `t`, run alone on this state's memory from its loop's start (with
    /// every input it reads giving `input`, where one is given), comes back to the loop
    /// having done nothing but read: `Some` of the loop's position, `None` if it can leave.
    fn waits_forever<M: MemoryModel>(
        &self,
        prog: &Program,
        t: u32,
        input: Option<Value>,
        scratch: &mut HangScratch,
    ) -> Option<SrcLoc> {
        let HangScratch { state, last, now } = scratch;
        let s = state.as_mut().expect("hang copies the state first");
        if let Some(v) = input {
            s.clone_from(self);
            if s.inputs.len() <= t as usize {
                s.inputs.resize(t as usize + 1, Vec::new());
            }
            s.inputs[t as usize] = vec![v; INPUT_TRIES];
        }
        let (fr, ins) = s.current(prog, t);
        let (at, to, start) = match ins.op {
            Op::SpinBack { to, start } => {
                let body = &prog.functions[fr.func as usize].body;
                (body[to as usize].loc, Some(to), Some(start))
            }
            _ => (ins.loc, None, None),
        };
        // The loop's code, for a thread tried with an input value: leaving it is what
        // shows the loop can end (an iteration with effects, `if (nondet()) y++;` in a
        // loop waiting for a flag, does not).
        let depth = s.threads[t as usize].frames.len();
        let region = loop_head(&ins.op, fr.pc).map(|head| (fr.func, head, fr.pc));
        let left = |s: &State| {
            let th = &s.threads[t as usize];
            th.finished
                || th.exited
                || th.frames.len() < depth
                || region.is_some_and(|(func, lo, hi)| {
                    let f = th.frames.last().expect("frame");
                    th.frames.len() == depth && (f.func != func || f.pc < lo || f.pc > hi)
                })
        };
        let trying = input.is_some() && region.is_some();
        // The thread's registers where it blocked, but for the iteration's start (an
        // event count, new every time): a loop that carries a register (a CAS retry loop
        // takes the value its failed CAS read) blocks again with other registers and may
        // leave on the next iteration; only a pure iteration that ends where the previous
        // one did proves that nothing ever lets it leave.
        let regs_now = |s: &State, t: u32, r: &mut Vec<Value>| {
            r.clone_from(&s.threads[t as usize].frames.last().expect("frame").regs);
            if let Some(x) = start.and_then(|k| r.get_mut(k as usize)) {
                *x = 0;
            }
        };
        regs_now(s, t, last);
        let restart = |s: &mut State| {
            let th = &mut s.threads[t as usize];
            th.spin.blocked = false;
            th.spin.at = None;
            if let Some(to) = to {
                th.frames.last_mut().expect("frame").pc = to;
            }
        };
        restart(s);
        if !matches!(s.run_locals(prog, t), Local::Ready) || trying && left(s) {
            return None;
        }
        let mut steps = 0;
        loop {
            let th = &s.threads[t as usize];
            if th.spin.blocked {
                regs_now(s, t, now);
                if now == last {
                    return Some(at);
                }
                std::mem::swap(last, now);
                steps += 1;
                if steps > 10_000 {
                    return trying.then_some(at);
                }
                restart(s);
                if !matches!(s.run_locals(prog, t), Local::Ready) || trying && left(s) {
                    return None;
                }
                continue;
            }
            steps += 1;
            if trying && th.cut.is_none() && !th.finished && !th.exited && steps > 10_000 {
                // Still going round with this value, never out of the loop.
                return Some(at);
            }
            if th.finished || th.exited || th.cut.is_some() || steps > 10_000 {
                return None;
            }
            if !s.thread_enabled::<M>(prog, t) {
                return None;
            }
            let (ev, status) = s.step::<M>(prog, Step::Thread(t));
            // The loop can let another thread go on (it gives back a mutex that one
            // waits for, then takes it again: `pthread_cond_wait` in a `while`): then
            // nothing says it waits forever; the execution where the other thread goes
            // on in that window is explored (the other's attempt races with the
            // acquisition that blocked it).
            if (0..s.threads.len() as u32).any(|u| u != t && s.thread_runs::<M>(prog, u)) {
                return None;
            }
            // A mutex taken and given back in the iteration is judged at its end.
            let paired = s.lock_pairs
                && matches!(
                    ev.kind,
                    EventKind::Lock {
                        trylock: false,
                        destroy: false,
                        ..
                    } | EventKind::Unlock { .. }
                );
            if status != Status::Ok {
                return None;
            }
            if trying {
                if left(s) {
                    return None;
                }
            } else if !(ev.kind.is_pure() || paired) {
                return None;
            }
        }
    }
}

/// The first instruction of the loop whose backward jump is `op` at `pc`.
fn loop_head(op: &Op, pc: u32) -> Option<u32> {
    match *op {
        Op::SpinBack { to, .. } => Some(to),
        Op::Jump(to) if to <= pc => Some(to),
        Op::Branch {
            then_to, else_to, ..
        } => [then_to, else_to].into_iter().filter(|&x| x <= pc).min(),
        _ => None,
    }
}

/// How many input reads a thread run alone to judge a hang gets the tried value for: a
/// waiting loop comes back within an iteration or two.
const INPUT_TRIES: usize = 64;
