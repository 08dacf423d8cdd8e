//! The machine state: threads and their call frames, memory, store buffers and bounds;
//! how it is made, copied, and read.

use crate::input::{Choice, InputPlan, PlanRef};
use crate::locals::{write_reg, Local};
use crate::{
    BackEdge, Cell, CellState, CutKind, EventId, Memory, ObjState, ReadFrom, SpinTrack, Status,
};
use fencer_ir::{FuncId, Program, Reg, SrcLoc, Value};
use fencer_memory::{Buffers, Loc};
use std::sync::Arc;

thread_local! {
    /// Register files of frames that returned, for the next frame's: a call and its
    /// return happen in nearly every execution, and so does the copy of a deeper call
    /// stack into a state that had returned from the call (a snapshot's into the last
    /// execution's state). Per thread, so that the workers of a split never share one.
    static SPARE_REGS: std::cell::RefCell<Vec<Vec<Value>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Most register files kept for reuse, per thread.
const SPARE_REGS_MAX: usize = 64;

/// A register file of `n` zeros, reusing one of a returned frame where there is one.
pub(crate) fn new_regs(n: usize) -> Vec<Value> {
    let mut v = SPARE_REGS
        .with(|p| p.borrow_mut().pop())
        .unwrap_or_default();
    v.clear();
    v.resize(n, 0);
    v
}

/// Keeps a returned frame's register file for the next frame.
pub(crate) fn spare_regs(v: Vec<Value>) {
    SPARE_REGS.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < SPARE_REGS_MAX {
            p.push(v);
        }
    });
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub func: FuncId,
    pub pc: u32,
    pub regs: Vec<Value>,
    /// Where the caller wants the return value.
    pub ret: Option<Reg>,
    /// The stack objects this call allocated (`Alloc { stack: true }`), freed if the thread
    /// exits from inside it.
    pub stack: Vec<u32>,
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ThreadState {
    /// The call stack; the root frame stays after the thread finishes, so that final-state
    /// conditions can read its registers.
    pub frames: Vec<Frame>,
    pub finished: bool,
    /// Visible events executed so far (the index of the next one).
    pub events: u32,
    /// The function the thread started in (names spawned threads).
    pub func: FuncId,
    /// How often each backward jump was taken since its loop was entered, for `--unroll`.
    pub back_edges: Vec<BackEdge>,
    /// Set when a bound stopped the thread: it never runs again.
    pub cut: Option<CutKind>,
    /// Pure-iteration tracking (see [`SpinTrack`]).
    pub spin: SpinTrack,
    /// The thread faulted (a violation, already reported); when an engine explores on
    /// after a violation, the other threads go on so that their races are still seen.
    pub faulted: bool,
    /// The thread ended the process ([`Op::ExitProcess`]): it stands there for good.
    ///
    /// [`Op::ExitProcess`]: fencer_ir::Op::ExitProcess
    pub exited: bool,
    /// The barrier the thread arrived at and has not passed yet, and whether the last
    /// arrival of its generation has come (then [`Op::BarrierPass`] may run).
    ///
    /// [`Op::BarrierPass`]: fencer_ir::Op::BarrierPass
    pub barrier: Option<(Loc, bool)>,
}

/// A machine state: threads, memory, and every thread's store buffers.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub threads: Vec<ThreadState>,
    pub mem: Memory,
    pub bufs: Vec<Buffers<StoreTag>>,
    /// Most times a thread may take one backward jump (`--unroll`); `u32::MAX` for no bound.
    pub unroll: u32,
    /// Most visible events one thread may execute (`--max-depth`); `u32::MAX` for no bound.
    pub max_events: u32,
    /// Values [`Op::Nondet`] takes, per thread id, the next one last. Empty unless an
    /// engine that chooses inputs (the symbolic one) replays a trace: without a value an
    /// input is refused, since the explicit engines do not enumerate input values.
    ///
    /// [`Op::Nondet`]: fencer_ir::Op::Nondet
    pub inputs: Vec<Vec<Value>>,
    /// The inputs of an engine that enumerates them: its plan and what was read.
    pub choice: Choice,
    /// Whether an iteration of a rewritten spin loop that takes a mutex, only reads, and
    /// gives the mutex back counts as pure (GenMC's lock zero-net-effect loops: `while (1)
    /// { lock(m); if (done) break; unlock(m); }`), and so does one that gives back a mutex
    /// it holds and takes it again (`while (!ready) pthread_cond_wait(&c, &m);` with
    /// spurious wake-ups). Memory is as before the iteration; what another thread could
    /// have seen of it is the mutex in the other state, and that is judged by what the
    /// program does, not by what it could do: a `lock` of another thread waits (the same
    /// execution without the iteration has it not wait), but any other access to the
    /// mutex's cell by another thread between the two (a plain load of the word, a
    /// `memcpy` out of it, a compare-and-swap on it, a failed `trylock`, a store into it)
    /// saw or changed it, and then the pair is no pair ([`State::spoil_windows`]). Such an
    /// access conflicts with the lock and the unlock, so every equivalent execution has it
    /// in the same place.
    pub lock_pairs: bool,
    /// How many threads have a mutex window open (`SpinTrack::lock_open` or
    /// `unlock_open`): while none has, events need not look.
    pub(crate) windows: u32,
    /// How many threads watch cells they stored for reads ([`State::watch_stores`]):
    /// while none does, events need not look.
    pub(crate) watching: u32,
    /// Whether the run-time spin-loop check ([`SpinTrack`]) blocks a thread that comes
    /// back to a backward jump after an iteration that changed nothing. Off in the replay
    /// of a symbolic trace ([`State::initial_with_inputs`]): that engine runs every
    /// iteration, so its schedule goes on past a back edge the check would stop at, and
    /// a thread blocked there has no step the schedule could give it.
    pub spin_check: bool,
}

/// What a buffer entry remembers of the store that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoreTag {
    pub id: EventId,
    pub src: SrcLoc,
    pub func: FuncId,
}

// Clone by hand, for `clone_from`: the derived one allocates every vector anew, and DPOR
// clones a state into a scratch one for every sequence it simulates (see fencer-dpor's
// `Simulated`). Each `clone_from` names every field, so that a field added later cannot be
// forgotten.
impl Clone for Frame {
    fn clone(&self) -> Self {
        let Frame {
            func,
            pc,
            regs,
            ret,
            stack,
        } = self;
        let mut copy = new_regs(0);
        copy.extend_from_slice(regs);
        Frame {
            func: *func,
            pc: *pc,
            regs: copy,
            ret: *ret,
            stack: stack.clone(),
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let Frame {
            func,
            pc,
            regs,
            ret,
            stack,
        } = src;
        self.func = *func;
        self.pc = *pc;
        self.regs.clone_from(regs);
        self.ret = *ret;
        self.stack.clone_from(stack);
    }
}

impl Clone for ThreadState {
    fn clone(&self) -> Self {
        let ThreadState {
            frames,
            finished,
            events,
            func,
            back_edges,
            cut,
            spin,
            faulted,
            exited,
            barrier,
        } = self;
        ThreadState {
            frames: frames.clone(),
            finished: *finished,
            events: *events,
            func: *func,
            back_edges: back_edges.clone(),
            cut: *cut,
            spin: spin.clone(),
            faulted: *faulted,
            exited: *exited,
            barrier: *barrier,
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let ThreadState {
            frames,
            finished,
            events,
            func,
            back_edges,
            cut,
            spin,
            faulted,
            exited,
            barrier,
        } = src;
        // Frames past the source's go to the spare register files, and the source's
        // extra frames come from there.
        while self.frames.len() > frames.len() {
            if let Some(f) = self.frames.pop() {
                spare_regs(f.regs);
            }
        }
        self.frames.clone_from(frames);
        self.finished = *finished;
        self.events = *events;
        self.func = *func;
        self.back_edges.clone_from(back_edges);
        self.cut = *cut;
        self.spin.clone_from(spin);
        self.faulted = *faulted;
        self.exited = *exited;
        self.barrier = *barrier;
    }
}

impl Clone for State {
    fn clone(&self) -> Self {
        let State {
            threads,
            mem,
            bufs,
            unroll,
            max_events,
            inputs,
            choice,
            lock_pairs,
            windows,
            watching,
            spin_check,
        } = self;
        State {
            threads: threads.clone(),
            mem: mem.clone(),
            bufs: bufs.clone(),
            unroll: *unroll,
            max_events: *max_events,
            inputs: inputs.clone(),
            choice: choice.clone(),
            lock_pairs: *lock_pairs,
            windows: *windows,
            watching: *watching,
            spin_check: *spin_check,
        }
    }
    fn clone_from(&mut self, src: &Self) {
        let State {
            threads,
            mem,
            bufs,
            unroll,
            max_events,
            inputs,
            choice,
            lock_pairs,
            windows,
            watching,
            spin_check,
        } = src;
        self.threads.clone_from(threads);
        self.mem.clone_from(mem);
        self.bufs.clone_from(bufs);
        self.unroll = *unroll;
        self.max_events = *max_events;
        self.inputs.clone_from(inputs);
        self.choice.clone_from(choice);
        self.lock_pairs = *lock_pairs;
        self.windows = *windows;
        self.watching = *watching;
        self.spin_check = *spin_check;
    }
}

impl State {
    /// The initial state: memory initialised, every static thread at its first visible
    /// instruction. Faults in the threads' local prefixes are returned with the state.
    pub fn initial(prog: &Program) -> (State, Status) {
        Self::initial_bounded(prog, u32::MAX)
    }

    /// The initial state, with loops bounded to `unroll` iterations: an execution that
    /// would take one backward jump more often has that thread cut ([`ThreadState::cut`]).
    pub fn initial_bounded(prog: &Program, unroll: u32) -> (State, Status) {
        Self::initial_limited(prog, unroll, u32::MAX)
    }

    /// The initial state with loops bounded to `unroll` iterations and every thread to
    /// `max_events` visible events: a thread that reaches either bound is cut
    /// ([`ThreadState::cut`]) while the others go on.
    pub fn initial_limited(prog: &Program, unroll: u32, max_events: u32) -> (State, Status) {
        Self::initial_full(
            prog,
            unroll,
            max_events,
            Vec::new(),
            Choice::default(),
            true,
        )
    }

    /// The initial state of a run with inputs ([`crate::input`]): values from `plan`, or,
    /// for a plan that asks, from `queue` (per thread, the next one last).
    pub fn initial_planned(
        prog: &Program,
        unroll: u32,
        max_events: u32,
        plan: Arc<InputPlan>,
        queue: Vec<Vec<Value>>,
    ) -> (State, Status) {
        let choice = Choice {
            plan: PlanRef(Some(plan)),
            ..Choice::default()
        };
        Self::initial_full(prog, unroll, max_events, queue, choice, true)
    }

    /// The initial state of a replay with input values: `inputs[t]` are the values thread
    /// `t`'s inputs ([`Op::Nondet`]) take, in the order it reads them. The symbolic engine
    /// that chose them runs every iteration of a loop, so the run-time spin-loop check is
    /// off ([`State::spin_check`]): the replay runs the program as that engine did.
    ///
    /// [`Op::Nondet`]: fencer_ir::Op::Nondet
    pub fn initial_with_inputs(prog: &Program, inputs: Vec<Vec<Value>>) -> (State, Status) {
        let inputs = inputs
            .into_iter()
            .map(|mut v| {
                v.reverse();
                v
            })
            .collect();
        Self::initial_full(prog, u32::MAX, u32::MAX, inputs, Choice::default(), false)
    }

    fn initial_full(
        prog: &Program,
        unroll: u32,
        max_events: u32,
        inputs: Vec<Vec<Value>>,
        choice: Choice,
        spin_check: bool,
    ) -> (State, Status) {
        let mem = prog
            .objects
            .iter()
            .map(|o| {
                let mut m = ObjState::new(o.size, true, false);
                for &(k, value) in &o.init {
                    if k < o.size {
                        m.set(
                            k,
                            Cell {
                                value,
                                writer: None,
                                state: CellState::Valid,
                            },
                        );
                    }
                }
                m
            })
            .collect();
        let mut s = State {
            threads: Vec::new(),
            mem: Memory::new(mem),
            bufs: Vec::new(),
            unroll,
            max_events,
            inputs,
            choice,
            lock_pairs: true,
            windows: 0,
            watching: 0,
            spin_check,
        };
        let mut status = Status::Ok;
        for t in &prog.threads {
            let st = s.start_thread(prog, t.func, t.arg);
            if status == Status::Ok {
                status = st;
            } else if let Status::Fault(f) = st {
                // The first fault is the one reported; a thread that faults after it stops
                // there unreported (left at its faulting local instruction, it would be
                // taken as a visible one when exploring on after violations).
                s.threads[f.thread as usize].faulted = true;
            }
        }
        (s, status)
    }

    pub(crate) fn start_thread(&mut self, prog: &Program, func: FuncId, arg: Value) -> Status {
        let f = &prog.functions[func as usize];
        let mut regs = vec![0; f.num_regs()];
        if f.params > 0 {
            regs[0] = arg;
        }
        let tid = self.threads.len() as u32;
        self.threads.push(ThreadState {
            frames: vec![Frame {
                func,
                pc: 0,
                regs,
                ret: None,
                stack: Vec::new(),
            }],
            finished: false,
            events: 0,
            func,
            back_edges: Vec::new(),
            cut: None,
            spin: SpinTrack::default(),
            faulted: false,
            exited: false,
            barrier: None,
        });
        self.bufs.push(Buffers::default());
        match self.run_locals(prog, tid) {
            Local::Ready => Status::Ok,
            Local::Fault(f) => Status::Fault(f),
            Local::Cut(m) => {
                self.threads[tid as usize].cut = Some(m);
                Status::Ok
            }
        }
    }

    /// The bound that cut some thread of this execution, if one did.
    pub fn cut(&self) -> Option<CutKind> {
        self.threads.iter().find_map(|t| t.cut)
    }

    /// Name of a thread in reports: the declared name, or `func#id` for spawned threads.
    pub fn thread_name(&self, prog: &Program, t: u32) -> String {
        match prog.threads.get(t as usize) {
            Some(d) => d.name.clone(),
            None => format!(
                "{}#{}",
                prog.functions[self.threads[t as usize].func as usize].name, t
            ),
        }
    }

    pub fn reg_value(&self, thread: u32, reg: Reg) -> Value {
        self.threads[thread as usize].frames[0].regs[reg as usize]
    }

    pub fn cell_value(&self, loc: Loc) -> Value {
        self.mem[loc.obj].get(loc.index).value
    }

    pub fn current<'p>(&self, prog: &'p Program, t: u32) -> (&Frame, &'p fencer_ir::Instr) {
        let fr = self.threads[t as usize]
            .frames
            .last()
            .expect("running thread has a frame");
        (fr, &prog.functions[fr.func as usize].body[fr.pc as usize])
    }

    pub(crate) fn read(&self, loc: Loc) -> (Value, ReadFrom) {
        let c = self.mem[loc.obj].get(loc.index);
        (c.value, c.writer.map_or(ReadFrom::Init, ReadFrom::Store))
    }

    /// Whether the cell holds a value a program may read.
    pub fn cell_state(&self, loc: Loc) -> CellState {
        self.mem[loc.obj].get(loc.index).state
    }

    pub(crate) fn write(&mut self, loc: Loc, value: Value, id: EventId) {
        self.write_state(loc, value, id, CellState::Valid);
    }

    pub(crate) fn write_state(&mut self, loc: Loc, value: Value, id: EventId, state: CellState) {
        self.mem[loc.obj].set(
            loc.index,
            Cell {
                value,
                writer: Some(id),
                state,
            },
        );
    }

    pub(crate) fn set_reg(&mut self, t: u32, r: Reg, v: Value) {
        let th = &mut self.threads[t as usize];
        let depth = th.frames.len();
        let fr = th.frames.last_mut().expect("frame");
        write_reg(&mut fr.regs[r as usize], v, &mut th.spin, depth);
    }
}
