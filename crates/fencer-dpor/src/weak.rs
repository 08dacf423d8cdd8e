//! Weak initials: whether a process that sleeps or was explored at a race starts its
//! reversal, judged by the current execution's events where their kinds are stable
//! ([`kinds_stable`]), else by running the sequence from the machine state at the node.

use crate::hb::Hb;
use crate::options::{Algo, Options};
use crate::replay::{copy_into, copy_of, take, Cursor, Snapshot};
use crate::wut;
use fencer_ir::Program;
use fencer_machine::{dependent, Access, State, Step};
use fencer_memory::{MemoryModel, ModelKind};

/// How wakeup-tree insertion and the redundancy test judge a process that has no event in
/// the sequence: whether it commutes with all of it (the paper's weak initials).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Weak {
    /// Events keep their kinds wherever they run ([`kinds_stable`]): by what each event
    /// of the sequence accessed in the current execution.
    Stable,
    /// By running the sequence from the machine state at the node, judging each pair as
    /// the sleep sets will judge it there (kinds where the events run).
    Simulate,
    /// Never: weak initials restricted to initials (a split tree's units).
    Initials,
}

/// The current execution's events as the wakeup-tree insertion sees them, where kinds are
/// stable.
pub(crate) struct Current<'e, M> {
    pub(crate) hb: &'e Hb,
    pub(crate) stable: bool,
    pub(crate) accs: &'e [Access],
    /// The race reversed: the racing event at `j` is moved to the end of the sequence,
    /// before the event at `i`.
    pub(crate) i: usize,
    pub(crate) j: usize,
    pub(crate) _m: std::marker::PhantomData<M>,
}

impl<M: MemoryModel> Current<'_, M> {
    /// Whether `p`'s next event, accessing `acc`, commutes with every event of `w` by the
    /// kinds they had in the current execution (only where those are stable).
    pub(crate) fn commutes(&self, p: Step, acc: Access, w: &[usize]) -> bool {
        self.stable
            && w.iter()
                .all(|&k| !dependent::<M>((p, acc), (self.hb.step(k), self.accs[k])))
    }
}

impl<M: MemoryModel> wut::Events for Current<'_, M> {
    type Ctx = ();
    fn step(&self, k: usize) -> Step {
        self.hb.step(k)
    }
    fn access(&self, k: usize) -> Access {
        self.accs[k]
    }
    fn weak_initials(
        &self,
        _: &(),
        w: &[usize],
        ps: &[(Step, Access)],
        out: &mut Vec<Option<wut::Start>>,
    ) {
        out.clear();
        out.extend(ps.iter().map(|&(p, acc)| {
            wut::initial_by(
                w,
                p,
                |k| self.hb.step(k),
                |a, b| self.hb.before_in_reversal((self.i, self.j), a, b),
                || self.commutes(p, acc, w),
            )
        }));
    }
    fn advance(&self, _: &mut (), _: Step) {}
}

/// The current execution's events as insertion sees them where kinds can change: a
/// process commutes with a sequence if, running the sequence from the machine state at the
/// node, each of its events is independent of the process's next event *in the state
/// where that event runs*, both judged by what they do there (a CAS that fails there only
/// reads; a load forwarded there touches no memory). That is the test the sleep sets apply
/// step by step when the sequence is explored, so insertion, the redundancy test and the
/// sleep sets all see one dependence relation. A node that could not be run is judged as
/// commuting with nothing, which only inserts more.
///
/// Most judgements need no run (the clocks show an initial), and a run needs the machine
/// state before `i`: so the state of a node is made only when a judgement there needs it
/// ([`Lazy`]), from the state before `i`, which is made from a cursor that moves forward
/// over the current execution as the races are reversed in order of `i`, or from the
/// deepest snapshot on the way.
pub(crate) struct Simulated<'e, M> {
    pub(crate) prog: &'e Program,
    pub(crate) opts: &'e Options,
    /// Where sequences are run: a state kept across runs, so that cloning the node's
    /// state into it reuses its allocations.
    pub(crate) scratch: &'e std::cell::RefCell<Option<State>>,
    pub(crate) spare: &'e std::cell::RefCell<Option<State>>,
    pub(crate) judging: &'e std::cell::RefCell<Judging>,
    pub(crate) cursor: &'e std::cell::RefCell<Cursor>,
    pub(crate) snaps: &'e [Snapshot],
    pub(crate) schedule: &'e [Step],
    pub(crate) hb: &'e Hb,
    pub(crate) accs: &'e [Access],
    pub(crate) i: usize,
    pub(crate) j: usize,
    pub(crate) _m: std::marker::PhantomData<M>,
}

/// A wakeup-tree node below position `i`, as the steps from `i` to it; its machine state
/// is made when a judgement there first needs it, and then brought down the path only when
/// a judgement further down needs it (most of a descent needs no run, and stepping every
/// node on the way cost more than the runs' copies). `state` is that state and how many
/// steps of `path` it has taken (`None` in it: a node that cannot be run, a step on the
/// way not enabled). At `i` itself the state is the cursor's, copied into the scratch
/// state without allocating.
#[derive(Default)]
pub(crate) struct Lazy {
    pub(crate) path: Vec<Step>,
    state: std::cell::RefCell<Option<(Option<State>, usize)>>,
}

impl Lazy {
    /// The state at the node, made from `base` (the state at the tree's root) or brought
    /// down to the node now if it was not yet.
    pub(crate) fn state<M: MemoryModel>(
        &self,
        prog: &Program,
        base: impl FnOnce() -> State,
    ) -> Option<std::cell::Ref<'_, State>> {
        {
            let mut slot = self.state.borrow_mut();
            let (state, at) = slot.get_or_insert_with(|| (Some(base()), 0));
            while *at < self.path.len() {
                let Some(st) = state else { break };
                let p = self.path[*at];
                if !st.step_enabled::<M>(prog, p) {
                    *state = None;
                    break;
                }
                take::<M>(prog, st, p);
                *at += 1;
            }
        }
        std::cell::Ref::filter_map(self.state.borrow(), |slot| {
            slot.as_ref().and_then(|(state, _)| state.as_ref())
        })
        .ok()
    }

    /// The tree's root, with `path` (emptied) for the steps down from it.
    pub(crate) fn on(mut path: Vec<Step>) -> Lazy {
        path.clear();
        Lazy {
            path,
            state: Default::default(),
        }
    }

    /// Keeps the state of the node in `spare`, for the next insertion's allocations, and
    /// gives back the path's.
    pub(crate) fn recycle(self, spare: &std::cell::RefCell<Option<State>>) -> Vec<Step> {
        if let Some((Some(st), _)) = self.state.into_inner() {
            *spare.borrow_mut() = Some(st);
        }
        self.path
    }
}

/// Whether taking `s`, which accesses `sa`, leaves what `p`'s next event accesses (`pa`)
/// as it was. A thread's next access depends on its own registers and frames, on the
/// objects it points into (alive or freed, their sizes), on the value and state of the cell
/// a CAS, a mutex operation or a read-modify-write of uninitialised memory reads (whether
/// it succeeds or faults), on its own buffers (a forwarded load) and on
/// how many threads there are (a join). A step of another thread that only reads memory,
/// waits, or touches its own buffer changes none of those (what follows it locally
/// touches that thread only); one that writes a cell (a store, an update, a
/// read-modify-write) changes only that cell's value. An update's access is its buffer's
/// front, which its thread's stores can change: always worked out again.
fn keeps_access(s: Step, sa: Access, p: Step, pa: Access) -> bool {
    let Step::Thread(t) = p else {
        return false;
    };
    if t == fencer_machine::family(s) {
        return false;
    }
    match sa {
        Access::Read(_)
        | Access::RmwRead(_)
        | Access::MutexRead(_)
        | Access::Join(_)
        | Access::Local
        | Access::Buffered(_) => true,
        Access::Write(l) | Access::Rmw(l) => !matches!(
            pa,
            Access::Rmw(x)
                | Access::RmwRead(x)
                | Access::Mutex(x)
                | Access::MutexRead(x)
                | Access::Faulted(x)
                if x == l
        ),
        _ => false,
    }
}

/// What judging weak initials by running a sequence works in, kept across judgements for
/// the allocations (an insertion judges at every node it passes).
#[derive(Default)]
pub(crate) struct Judging {
    /// The processes of `ps` not yet judged.
    pub(crate) left: Vec<usize>,
    /// What each process's next event accesses, kept while the steps of `w` cannot
    /// change it (see `keeps_access`): most of `w` are loads and other threads' buffered
    /// stores, and working the access out again each step costs an address resolution.
    accs: Vec<Option<Access>>,
}

/// Runs `w` (whose events are processes `step_of(k)`) from `state` for the processes
/// `bufs.left` of `ps`, judging weak initials as [`Simulated::judge`] says.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_judged<M: MemoryModel>(
    prog: &Program,
    state: &mut State,
    w: &[usize],
    step_of: impl Fn(usize) -> Step,
    ps: &[(Step, Access)],
    bufs: &mut Judging,
    any: bool,
    out: &mut [Option<wut::Start>],
) {
    let Judging { left, accs } = bufs;
    accs.clear();
    accs.resize(ps.len(), None);
    for (at, &k) in w.iter().enumerate() {
        let s = step_of(k);
        let before = left.len();
        left.retain(|&n| {
            if ps[n].0 == s {
                out[n] = Some(wut::Start::Initial(at));
                false
            } else {
                true
            }
        });
        if left.is_empty() || (any && left.len() < before) || !state.step_enabled::<M>(prog, s) {
            return;
        }
        let sa = state.next_access::<M>(prog, s);
        left.retain(|&n| {
            let p = ps[n].0;
            let pa = *accs[n].get_or_insert_with(|| state.next_access::<M>(prog, p));
            debug_assert_eq!(pa, state.next_access::<M>(prog, p));
            !dependent::<M>((p, pa), (s, sa))
        });
        take::<M>(prog, state, s);
        for &n in left.iter() {
            if let Some(pa) = accs[n] {
                if !keeps_access(s, sa, ps[n].0, pa) {
                    accs[n] = None;
                }
            }
        }
    }
    for &n in left.iter() {
        out[n] = Some(wut::Start::Commutes);
    }
}

impl<M: MemoryModel> Simulated<'_, M> {
    /// Weak initials of `w` among `ps` at the node whose state is `state`: `w` runs from
    /// there, once for all of them, until each process's own event, each event judged
    /// against the process's next event with `dependent` in the state where it runs; the
    /// process starts `w` if none of them is dependent. Where the current execution's
    /// clocks see no predecessor of the process's event in `w`, none is there: those
    /// events keep the values they read, and so their kinds, wherever `w` puts them (no
    /// need to run `w`). Where they see one, the run decides: an event may do something
    /// else where `w` puts it (a load forwarded from its thread's buffer instead of
    /// reading memory no longer precedes another thread's write to that location), and
    /// then the clocks see a predecessor the sleep sets do not, and a branch they would
    /// block gets in. Where `w` cannot run as it stands (a step not enabled), or the node
    /// could not be run, the processes left are not counted. With `any`, it stops at the
    /// first weak initial found (the others are left uncounted).
    pub(crate) fn judge(
        &self,
        ctx: &Lazy,
        w: &[usize],
        ps: &[(Step, Access)],
        any: bool,
        out: &mut Vec<Option<wut::Start>>,
    ) {
        out.clear();
        out.resize(ps.len(), None);
        let mut bufs = self.judging.borrow_mut();
        let left = &mut bufs.left;
        left.clear();
        for (n, &(p, _)) in ps.iter().enumerate() {
            match w.iter().position(|&k| self.hb.step(k) == p) {
                Some(at)
                    if !w[..at]
                        .iter()
                        .any(|&a| self.hb.before_in_reversal((self.i, self.j), a, w[at])) =>
                {
                    out[n] = Some(wut::Start::Initial(at));
                    if any {
                        return;
                    }
                }
                _ => left.push(n),
            }
        }
        if left.is_empty() {
            return;
        }
        if ctx.path.is_empty() {
            // At `i` itself: `w` runs on the cursor's state, which is then spent (it is
            // mostly refilled from a snapshot for the next race anyway).
            let mut cursor = self.cursor.borrow_mut();
            cursor.seek::<M>(self.prog, self.opts, self.snaps, self.schedule, self.i);
            cursor.at = None;
            let state = cursor.state.as_mut().expect("a state");
            self.run(state, w, ps, &mut bufs, any, out);
            return;
        }
        let Some(src) = ctx.state::<M>(self.prog, || self.base()) else {
            return;
        };
        let mut slot = self.scratch.borrow_mut();
        let state = copy_into(&mut slot, &src);
        drop(src);
        self.run(state, w, ps, &mut bufs, any, out);
    }

    /// Runs `w` from `state` for the processes `bufs.left` of `ps` (see
    /// [`Simulated::judge`]).
    fn run(
        &self,
        state: &mut State,
        w: &[usize],
        ps: &[(Step, Access)],
        bufs: &mut Judging,
        any: bool,
        out: &mut [Option<wut::Start>],
    ) {
        run_judged::<M>(self.prog, state, w, |k| self.hb.step(k), ps, bufs, any, out);
    }

    /// The machine state before `i` (the cursor is left there).
    fn base(&self) -> State {
        let mut cursor = self.cursor.borrow_mut();
        let src = cursor.seek::<M>(self.prog, self.opts, self.snaps, self.schedule, self.i);
        copy_of(self.spare, src)
    }
}

impl<M: MemoryModel> wut::Events for Simulated<'_, M> {
    type Ctx = Lazy;
    fn step(&self, k: usize) -> Step {
        self.hb.step(k)
    }
    fn access(&self, k: usize) -> Access {
        self.accs[k]
    }
    fn weak_initials(
        &self,
        ctx: &Lazy,
        w: &[usize],
        ps: &[(Step, Access)],
        out: &mut Vec<Option<wut::Start>>,
    ) {
        self.judge(ctx, w, ps, false, out);
    }
    fn advance(&self, ctx: &mut Lazy, p: Step) {
        ctx.path.push(p);
    }
}

/// How weak initials are judged for `prog` under `model` on one worker: by the current
/// execution's kinds where they are stable, else by simulation (CAS, trylock, forwarded
/// loads, heap objects, pointers and indirect calls).
pub(crate) fn weak_mode(prog: &Program, model: ModelKind) -> Weak {
    if kinds_stable(prog, model) {
        Weak::Stable
    } else {
        Weak::Simulate
    }
}

/// Whether Optimal-DPOR blocks no execution with a sleep set on `prog` under `model` (the
/// property test asserts it) with `opts`: on one worker, wherever weak initials are
/// judged (by stable kinds, or by simulation), which is every program; not Source-DPOR,
/// and not a split tree's units (`explore_split`), where they are restricted to initials.
pub fn optimal_exact(prog: &Program, model: ModelKind, opts: &Options) -> bool {
    opts.algo == Algo::Optimal && weak_mode(prog, model) != Weak::Initials
}

/// Whether no event of the program can change kind when a reordering moves it: no
/// compare-and-swap (it fails or succeeds), no trylock (likewise), no mutex destroy (a
/// lock after it faults, and one after a re-initialisation does not), no barrier arrival
/// (whether it is the last of its generation depends on the others), no heap objects, no
/// addresses through pointers and no indirect calls (an access faults or not, a free races
/// with it), spawns in one thread at most (which id a spawn gives), and under TSO and PSO
/// no thread that both stores and loads an object (a load may be forwarded from the
/// thread's buffer or read memory). Every function is taken as a possible thread entry,
/// with the functions it calls. (A join moved before its child's spawn faults: its
/// access, and what it depends on there, are the same.)
///
/// Optimal-DPOR's weak initials count a process whose next event commutes with a whole
/// sequence. Where kinds are stable, the kinds of the current execution's events decide
/// it. Elsewhere they are not the kinds the events will have where the sequence puts them
/// (a CAS that succeeded may fail there, a load read memory may be forwarded), and judging
/// by kinds widened to cover every place is *not* enough: insertion then sees dependences
/// the sleep sets do not (the property test found such programs: a failing CAS and two
/// reads of its location). So elsewhere the sequence is simulated from the machine state
/// at the tree node, as the sleep sets will judge it (`weak_mode`).
pub fn kinds_stable(prog: &Program, model: ModelKind) -> bool {
    use fencer_ir::{Addr, Op, RmwOp};
    let n = prog.functions.len();
    let mut loads = vec![Vec::new(); n];
    let mut stores = vec![Vec::new(); n];
    let mut calls = vec![Vec::new(); n];
    let mut spawns = vec![false; n];
    let mut targets = Vec::new();
    for (fi, f) in prog.functions.iter().enumerate() {
        for ins in &f.body {
            match &ins.op {
                Op::Spawn { func, .. } => {
                    spawns[fi] = true;
                    targets.push(*func as usize);
                }
                Op::SpawnIndirect { .. } => {
                    spawns[fi] = true;
                    targets.extend(0..n);
                }
                Op::Rmw {
                    op: RmwOp::Cas { .. },
                    ..
                }
                | Op::TryLock { .. }
                | Op::MutexDestroy(_)
                | Op::BarrierArrive { .. }
                | Op::Alloc { .. }
                | Op::Free(_)
                | Op::CallIndirect { .. } => return false,
                Op::Load { addr, .. } | Op::Store { addr, .. } | Op::Rmw { addr, .. } => {
                    let Addr::Global { obj, .. } = addr else {
                        return false;
                    };
                    match ins.op {
                        Op::Load { .. } => loads[fi].push(*obj),
                        Op::Store { .. } => stores[fi].push(*obj),
                        _ => {}
                    }
                }
                Op::Lock(a) | Op::Unlock(a) if !matches!(a, Addr::Global { .. }) => {
                    return false;
                }
                Op::Call { func, .. } => calls[fi].push(*func as usize),
                _ => {}
            }
        }
    }
    // The functions a thread starting at `root` may run.
    let reach = |root: usize| {
        let mut seen = vec![false; n];
        let mut todo = vec![root];
        while let Some(f) = todo.pop() {
            if f < n && !std::mem::replace(&mut seen[f], true) {
                todo.extend(calls[f].iter().copied());
            }
        }
        seen
    };
    // Thread ids are taken in the order spawns run: where two threads can spawn, a
    // reordering changes which thread a spawn starts, and so what a join of that id
    // waits for. A thread started by a spawn counts twice (it can be started again).
    let spawning = |root: usize| reach(root).iter().zip(&spawns).any(|(&r, &s)| r && s);
    let declared = prog
        .threads
        .iter()
        .filter(|t| spawning(t.func as usize))
        .count();
    let started = targets.iter().any(|&f| f < n && spawning(f));
    if declared + 2 * started as usize > 1 {
        return false;
    }
    if model == ModelKind::Sc {
        return true;
    }
    (0..n).all(|root| {
        let seen = reach(root);
        let (mut l, mut st) = (Vec::new(), Vec::new());
        for f in (0..n).filter(|&f| seen[f]) {
            l.extend_from_slice(&loads[f]);
            st.extend_from_slice(&stores[f]);
        }
        !l.iter().any(|o| st.contains(o))
    })
}
