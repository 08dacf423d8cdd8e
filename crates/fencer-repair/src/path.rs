//! Which fence positions kill a failing execution.
//!
//! The engine hands over the execution's events. They are replayed on the machine, and
//! for every step of a thread the local instructions it ran after its visible one are
//! re-traced (the machine runs them inside the step), so that every program point the
//! thread passed is known, with the events it passed it between.
//!
//! A fence at position `q` kills the execution when some pass of `q` by thread `t`, after
//! `t`'s event `k` and before its event `k + 1`, has a store `s` of `t` issued at or
//! before `k` whose buffer update comes after `o`, the first event of `t` after `k` that
//! is not a store into the same buffer as `s` (such stores queue behind `s` and nobody
//! sees them before its update): the fence would have to wait for that update, so `o`
//! could no longer overtake `s`. If no pass of `q` is like that, the stores into the same
//! buffers can be moved after the updates (they are invisible until then) and a fence at
//! `q` can run right before the next event, with every earlier store in memory: the same
//! execution, fence included, is one of the fenced program, and `q` does not kill it.
//! That direction is what makes the repair minimum: positions outside the set computed
//! here cannot kill the execution, so any repair uses one inside it.
//!
//! A store-store fence (PSO) at `q` kills the execution when some pass of `q` as above
//! has a store `s` pending and a later store of `t` into another buffer reaches memory
//! before `s` (or a later read-modify-write of `t` runs before `s`'s update): the fence
//! would hold that update (or write) back until `s`'s. Otherwise the fence, run right
//! after event `k`, changes nothing in this execution: it never waits, and every store
//! issued after it reaches memory after every store pending at it, as the fence asks. A
//! later *load* overtaking `s` is no reason: only a full fence stops that. Every position
//! whose store-store fence kills the execution is in the full fences' set too (the
//! overtaking store or read-modify-write comes after `o` at the latest).

use crate::Position;
use fencer_ir::{func_of_ptr, FuncId, Op, Program, Ptr, Value};
use fencer_machine::{eval, Event, EventKind, Frame, State, Status, Step, ThreadState};
use fencer_memory::MemoryModel;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The positions of the fenced program (in its own pcs) whose fence would kill the
/// execution, and whether every step's local path was re-traced exactly (when not, the
/// passes known for sure are used and the set may miss positions).
pub struct Kill {
    pub positions: BTreeSet<Position>,
    /// The positions whose store-store fence kills it (empty under TSO, which keeps store
    /// order already); a subset of `positions`.
    pub store_store: BTreeSet<Position>,
    pub exact: bool,
    /// Each overtaken store with the first event that overtook it, as indices into the
    /// events.
    pub pairs: Vec<(usize, usize)>,
}

/// One thread's passes: after each of its events, the positions it went through before
/// its next one (the next visible instruction's position included).
struct Pass {
    event: usize,
    positions: Vec<Position>,
}

/// The kill set of an execution of `prog` (its events, in order, as the engine ran them
/// with these bounds).
pub fn kill_set<M: MemoryModel>(
    prog: &Program,
    unroll: Option<u32>,
    max_depth: usize,
    events: &[Event],
) -> Kill {
    let (mut state, status) = State::initial_limited(
        prog,
        unroll.unwrap_or(u32::MAX),
        max_depth.min(u32::MAX as usize) as u32,
    );
    if let Status::Fault(f) = &status {
        state.threads[f.thread as usize].faulted = true;
    }
    let mut exact = true;
    let mut passes: BTreeMap<u32, Vec<Pass>> = BTreeMap::new();
    for (i, ev) in events.iter().enumerate() {
        let before = match ev.step {
            Step::Thread(t) => Some(state.threads[t as usize].frames.clone()),
            Step::Update(..) => None,
        };
        let (_, status) = state.step::<M>(prog, ev.step);
        let faulted = matches!(status, Status::Fault(_));
        if let Status::Fault(f) = status {
            state.threads[f.thread as usize].faulted = true;
        }
        let (Step::Thread(t), Some(before)) = (ev.step, before) else {
            continue;
        };
        let mut positions = Vec::new();
        if !faulted
            && !local_path(
                prog,
                t,
                &before,
                ev,
                &state.threads[t as usize],
                &mut positions,
            )
        {
            exact = false;
            // What is certain: the position right after the visible instruction, and the
            // one the thread now stands at.
            positions.clear();
            let fr = before.last().expect("frame");
            if !matches!(
                prog.functions[fr.func as usize].body[fr.pc as usize].op,
                Op::Exit
            ) {
                positions.push(Position {
                    func: fr.func,
                    pc: fr.pc + 1,
                });
            }
            let th = &state.threads[t as usize];
            if let Some(fr) = th.frames.last() {
                if !th.finished {
                    positions.push(Position {
                        func: fr.func,
                        pc: fr.pc,
                    });
                }
            }
        }
        passes.entry(t).or_default().push(Pass {
            event: i,
            positions,
        });
    }
    // When each store reached memory (never, within these events: after the end).
    let mut update_at: HashMap<(u32, u32), usize> = HashMap::new();
    for (i, ev) in events.iter().enumerate() {
        if let EventKind::Update { store, .. } = ev.kind {
            update_at.insert((store.thread, store.index), i);
        }
    }
    let mut out = BTreeSet::new();
    let mut out_ss = BTreeSet::new();
    let mut pairs = Vec::new();
    for ps in passes.values() {
        for w in 0..ps.len() {
            let k = ps[w].event;
            // Each store of the thread so far still in its buffer after event `k`.
            for s in ps[..=w].iter().map(|p| p.event) {
                let EventKind::Store {
                    loc,
                    buffered: true,
                    ..
                } = events[s].kind
                else {
                    continue;
                };
                let id = events[s].id;
                let upd = update_at
                    .get(&(id.thread, id.index))
                    .copied()
                    .unwrap_or(usize::MAX);
                if upd < k {
                    continue;
                }
                // The first later event of the thread that really overtakes it: a store
                // into the same buffer queues behind it (nobody sees it before it), so
                // a fence can wait for the update and that store after it alike.
                let chan = M::channel(loc);
                let over = ps[w + 1..].iter().map(|p| p.event).find(|&o| {
                    !matches!(events[o].kind, EventKind::Store { loc: l, buffered: true, .. }
                        if M::channel(l) == chan)
                });
                if let Some(o) = over {
                    if upd > o {
                        out.extend(ps[w].positions.iter().copied());
                        // Each store once, with the first event that overtook it.
                        if !pairs.iter().any(|&(s2, _)| s2 == s) {
                            pairs.push((s, o));
                        }
                    }
                }
                if M::STORES_IN_ORDER {
                    continue;
                }
                // A later store into another buffer that reached memory first, or a later
                // read-modify-write that wrote first.
                let store_over =
                    ps[w + 1..]
                        .iter()
                        .map(|p| p.event)
                        .any(|o| match events[o].kind {
                            EventKind::Store {
                                loc: l,
                                buffered: true,
                                ..
                            } if M::channel(l) != chan => {
                                let id = events[o].id;
                                update_at
                                    .get(&(id.thread, id.index))
                                    .is_some_and(|&u| u < upd)
                            }
                            EventKind::Rmw { .. } => o < upd,
                            _ => false,
                        });
                if store_over {
                    out_ss.extend(ps[w].positions.iter().copied());
                    out.extend(ps[w].positions.iter().copied());
                }
            }
        }
    }
    Kill {
        positions: out,
        store_store: out_ss,
        exact,
        pairs,
    }
}

/// Re-traces the local instructions thread `t` ran after its visible event `ev`, from its
/// frames before the step to `after`, pushing every position it reached. Mirrors the
/// machine's local semantics; where the machine decides on state this cannot see (a spin
/// loop's purity, a bound), the thread's frames after the step tell where it stopped.
/// Returns false when the re-traced frames do not end as the machine's did.
fn local_path(
    prog: &Program,
    t: u32,
    before: &[Frame],
    ev: &Event,
    after: &ThreadState,
    out: &mut Vec<Position>,
) -> bool {
    let mut frames: Vec<(FuncId, u32, Vec<Value>, Option<u32>)> = before
        .iter()
        .map(|f| (f.func, f.pc, f.regs.clone(), f.ret))
        .collect();
    let same = |frames: &[(FuncId, u32, Vec<Value>, Option<u32>)]| {
        frames.len() == after.frames.len()
            && frames
                .iter()
                .zip(&after.frames)
                .all(|(a, b)| a.0 == b.func && a.1 == b.pc && a.2 == b.regs)
    };
    {
        let top = frames.last_mut().expect("frame");
        let op = &prog.functions[top.0 as usize].body[top.1 as usize].op;
        let set = match (op, &ev.kind) {
            (Op::Load { dst, .. }, EventKind::Load { value, .. }) => Some((*dst, *value)),
            (Op::Rmw { dst, .. }, EventKind::Rmw { read, .. }) => Some((*dst, *read)),
            (Op::TryLock { dst, .. }, EventKind::Lock { .. }) => Some((*dst, 0)),
            (Op::TryLock { dst, .. }, EventKind::TryLockFailed { .. }) => Some((*dst, 1)),
            (Op::Spawn { dst, .. } | Op::SpawnIndirect { dst, .. }, EventKind::Spawn { child }) => {
                Some((*dst, *child as Value))
            }
            (Op::Alloc { dst, .. }, EventKind::Alloc { obj, .. }) => Some((
                *dst,
                Ptr {
                    obj: *obj,
                    offset: 0,
                }
                .encode(),
            )),
            // An exit frees stack objects and ends the thread: nothing after it matters.
            (Op::Exit, _) => return true,
            _ => None,
        };
        if let Some((r, v)) = set {
            top.2[r as usize] = v;
        }
        top.1 += 1;
    }
    for _ in 0..fencer_machine::LOCAL_FUEL {
        let depth = frames.len();
        let (func, pc) = {
            let top = frames.last().expect("frame");
            (top.0, top.1)
        };
        out.push(Position { func, pc });
        let f = &prog.functions[func as usize];
        let Some(ins) = f.body.get(pc as usize) else {
            if depth == 1 {
                return after.finished && same(&frames);
            }
            frames.pop();
            frames.last_mut().expect("caller").1 += 1;
            continue;
        };
        let top = frames.last_mut().expect("frame");
        match &ins.op {
            Op::Local { dst, expr } => {
                let Some(v) = eval(expr, &top.2) else {
                    return same(&frames);
                };
                top.2[*dst as usize] = v;
                top.1 += 1;
            }
            Op::Jump(_) | Op::Branch { .. } => {
                let to = match &ins.op {
                    Op::Jump(to) => *to,
                    Op::Branch {
                        cond,
                        then_to,
                        else_to,
                    } => match eval(cond, &top.2) {
                        Some(0) => *else_to,
                        Some(_) => *then_to,
                        None => return same(&frames),
                    },
                    _ => unreachable!(),
                };
                // A back edge can block the thread (a pure iteration) or cut it (a
                // bound): the machine's frames say whether it stopped here.
                if to <= pc && (after.spin.blocked || after.cut.is_some()) && same(&frames) {
                    return true;
                }
                frames.last_mut().expect("frame").1 = to;
            }
            Op::SpinBack { to, .. } => {
                let to = *to;
                if (after.spin.blocked || after.cut.is_some()) && same(&frames) {
                    return true;
                }
                frames.last_mut().expect("frame").1 = to;
            }
            Op::Assert { cond, .. } => match eval(cond, &top.2) {
                Some(c) if c != 0 => top.1 += 1,
                _ => return same(&frames),
            },
            Op::Call { dst, func, args } => {
                if depth >= fencer_machine::MAX_FRAMES {
                    return same(&frames);
                }
                let callee = &prog.functions[*func as usize];
                let mut regs = vec![0; callee.num_regs()];
                for (i, a) in args.iter().enumerate() {
                    let Some(v) = eval(a, &top.2) else {
                        return same(&frames);
                    };
                    regs[i] = v;
                }
                frames.push((*func, 0, regs, *dst));
            }
            Op::CallIndirect { dst, target, args } => {
                if depth >= fencer_machine::MAX_FRAMES {
                    return same(&frames);
                }
                let Some(func) =
                    eval(target, &top.2).and_then(|v| func_of_ptr(v, prog.functions.len()))
                else {
                    return same(&frames);
                };
                let callee = &prog.functions[func as usize];
                let mut regs = vec![0; callee.num_regs()];
                for (i, a) in args.iter().enumerate().take(callee.params as usize) {
                    let Some(v) = eval(a, &top.2) else {
                        return same(&frames);
                    };
                    regs[i] = v;
                }
                frames.push((func, 0, regs, *dst));
            }
            Op::Return(e) => {
                let v = match e {
                    Some(e) => match eval(e, &top.2) {
                        Some(v) => Some(v),
                        None => return same(&frames),
                    },
                    None => None,
                };
                if depth == 1 {
                    // A return leaves the function without passing a fence at its end.
                    top.1 = f.body.len() as u32;
                    return after.finished && same(&frames);
                }
                let done = frames.pop().expect("frame");
                let caller = frames.last_mut().expect("caller");
                if let (Some(r), Some(v)) = (done.3, v) {
                    caller.2[r as usize] = v;
                }
                caller.1 += 1;
            }
            Op::ThreadId { dst } => {
                top.2[*dst as usize] = t as Value;
                top.1 += 1;
            }
            Op::LoopHead { dst } => {
                top.2[*dst as usize] = after.events as Value;
                top.1 += 1;
            }
            Op::Exit => {
                // Without stack objects left to free, an exit ends the thread at once.
                if after.finished {
                    frames.truncate(1);
                    frames[0].1 = prog.functions[frames[0].0 as usize].body.len() as u32;
                }
                return same(&frames);
            }
            // The thread stops here (a refusal) or stands at a visible instruction.
            _ => return same(&frames),
        }
    }
    false
}
