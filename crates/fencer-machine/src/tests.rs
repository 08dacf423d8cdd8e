//! Unit tests of the machine: memory representation, faults, and the accesses that decide
//! dependence.

use crate::memory::{ALLOC_THREAD_BITS, CHUNK};
use crate::*;
use fencer_ir::{Addr, BinOp, Expr, Op, Program, Ptr, Reg, RmwOp, SrcLoc, Value};
use fencer_ir::{Function, Instr, ObjKind, Object, ThreadDecl};
use fencer_memory::{Chan, Loc, MemoryModel};
use fencer_memory::{Sc, Tso};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

fn ins(op: Op) -> Instr {
    Instr {
        op,
        loc: SrcLoc::new(0, 1, 1),
    }
}

/// One thread running `body` over registers r0..r3, and objects `objects`.
fn prog(objects: Vec<Object>, body: Vec<Op>) -> Program {
    Program {
        name: "t".into(),
        files: vec!["t".into()],
        objects,
        functions: vec![Function {
            name: "main".into(),
            params: 0,
            reg_names: (0..4).map(|i| format!("r{i}")).collect(),
            body: body.into_iter().map(ins).collect(),
            loc: SrcLoc::NONE,
        }],
        threads: vec![ThreadDecl {
            name: "main".into(),
            func: 0,
            arg: 0,
        }],
        cond: None,
        observe: Vec::new(),
        observe_explicit: false,
        source_trace: false,
        hang_is_violation: true,
        assumptions: Vec::new(),
        uninit_arbitrary: false,
        wait_variant: None,
    }
}

fn object(name: &str, kind: ObjKind, size: u32, init: Vec<(u32, Value)>) -> Object {
    Object {
        name: name.into(),
        kind,
        size,
        init,
        is_array: size > 1,
        cell_names: Vec::new(),
        loc: SrcLoc::NONE,
    }
}

/// Runs the only thread to the end (taking updates when it is blocked); the first
/// fault, if any.
fn run<M: MemoryModel>(p: &Program) -> (State, Option<Fault>) {
    let (mut s, st) = State::initial(p);
    if let Status::Fault(f) = st {
        return (s, Some(f));
    }
    loop {
        let mut en = Vec::new();
        s.enabled::<M>(p, &mut en);
        let Some(&step) = en.first() else {
            return (s, None);
        };
        if let (_, Status::Fault(f)) = s.step::<M>(p, step) {
            return (s, Some(f));
        }
    }
}

fn hash(s: &State) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

fn ptr(r: Reg, k: i64) -> Addr {
    Addr::Ptr(Expr::bin(BinOp::Add, Expr::Reg(r), Expr::Const(k)))
}

fn alloc(size: i64, zeroed: bool) -> Op {
    Op::Alloc {
        dst: 0,
        size: Expr::Const(size),
        zeroed,
        stack: false,
    }
}

fn store(addr: Addr, v: Value) -> Op {
    Op::Store {
        addr,
        value: Expr::Const(v),
    }
}

fn load(addr: Addr) -> Op {
    Op::Load {
        dst: 1,
        addr,
        copy: false,
    }
}

#[test]
fn a_huge_global_is_sparse_and_keeps_its_initial_values() {
    let big = object("big", ObjKind::Shared, 1 << 30, vec![(5, 7), (1 << 29, 9)]);
    let p = prog(
        vec![big],
        vec![
            Op::Load {
                dst: 1,
                addr: Addr::Global {
                    obj: 0,
                    index: Expr::Const(1 << 29),
                },
                copy: false,
            },
            store(
                Addr::Global {
                    obj: 0,
                    index: Expr::Const((1 << 30) - 1),
                },
                3,
            ),
        ],
    );
    let (s, f) = run::<Sc>(&p);
    assert_eq!(f, None);
    assert_eq!(s.reg_value(0, 1), 9);
    assert_eq!(s.cell_value(Loc { obj: 0, index: 5 }), 7);
    assert_eq!(s.cell_value(Loc { obj: 0, index: 6 }), 0);
    assert_eq!(
        s.cell_value(Loc {
            obj: 0,
            index: (1 << 30) - 1
        }),
        3
    );
}

#[test]
fn clone_from_copies_what_changed_on_either_side() {
    let cell = |value| Cell {
        value,
        writer: None,
        state: CellState::Valid,
    };
    let size = CHUNK as u32 * 3 + 5;
    let mut src = ObjState::new(size, true, false);
    src.set(1, cell(7));
    let mut dst = src.clone();
    assert_eq!(dst, src);
    // The copy changes in one run of cells, the source in another and in its flag.
    dst.set(CHUNK as u32 + 2, cell(8));
    src.set(size - 1, cell(9));
    src.alive = false;
    dst.clone_from(&src);
    assert_eq!(dst, src);
    assert_eq!(dst.get(CHUNK as u32 + 2).value, 0);
    assert_eq!(dst.get(size - 1).value, 9);
    assert!(!dst.alive);
    // A change through the memory is seen too.
    let mut a = Memory::new(vec![src.clone()]);
    let mut b = a.clone();
    b[0].alive = true;
    a.clone_from(&b);
    assert!(a[0].alive);
    a[0].set(3, cell(4));
    b.clone_from(&a);
    assert_eq!(b[0].get(3).value, 4);
    // Objects of different sizes at one index are copied whole, and so are small ones.
    let mut small = ObjState::new(3, false, true);
    small.clone_from(&src);
    assert_eq!(small, src);
    let mut tiny = ObjState::new(4, true, false);
    let mut copy = tiny.clone();
    copy.set(2, cell(5));
    tiny.set(0, cell(6));
    copy.clone_from(&tiny);
    assert_eq!(copy, tiny);
    assert_eq!((copy.get(0).value, copy.get(2).value), (6, 0));
}

#[test]
fn equal_contents_are_equal_states_whatever_the_order_of_writes() {
    let (a, b) = (1, DENSE_MAX + 100);
    let stores = |first: u32, second: u32| {
        prog(
            vec![],
            vec![
                alloc(DENSE_MAX as i64 * 2, true),
                store(ptr(0, first as i64), 1),
                store(ptr(0, second as i64), 1),
            ],
        )
    };
    let (s1, _) = run::<Sc>(&stores(a, b));
    let (s2, _) = run::<Sc>(&stores(b, a));
    // Same cells, different writers: the states differ (as they must)...
    assert_ne!(s1, s2);
    // ...but the representation holds written cells only, keyed by index.
    let mut o1 = s1.mem[0].clone();
    let mut o2 = s2.mem[0].clone();
    let c = Cell {
        value: 1,
        writer: None,
        state: CellState::Valid,
    };
    for o in [&mut o1, &mut o2] {
        o.set(a, c);
        o.set(b, c);
    }
    assert_eq!(o1, o2);
    // A cell set back to its blank state leaves no trace.
    let fresh = ObjState::new(DENSE_MAX * 2, true, true);
    o1.set(a, fresh.get(a));
    o1.set(b, fresh.get(b));
    assert_eq!(o1, fresh);
    let mut h1 = DefaultHasher::new();
    o1.hash(&mut h1);
    let mut h2 = DefaultHasher::new();
    fresh.hash(&mut h2);
    assert_eq!(h1.finish(), h2.finish());
    assert_eq!(hash(&s1), hash(&s1.clone()));
}

#[test]
fn allocations_up_to_the_offset_range_succeed() {
    for n in [2 << 20, MAX_ALLOC] {
        let p = prog(vec![], vec![alloc(n, false), store(ptr(0, n - 1), 1)]);
        let (s, f) = run::<Sc>(&p);
        assert_eq!(f, None, "{n}");
        assert_eq!(s.mem[0].size() as i64, n);
    }
    for n in [0, -1, MAX_ALLOC + 1] {
        let (_, f) = run::<Sc>(&prog(vec![], vec![alloc(n, false)]));
        let f = f.expect("a fault");
        assert_eq!(f.kind, FaultKind::MemoryError);
        assert!(
            f.message.contains(&format!("allocation of {n} cells")),
            "{}",
            f.message
        );
    }
}

#[test]
fn reading_a_cell_never_written_faults_unless_zeroed_or_copied() {
    for (zeroed, size) in [(false, 4), (false, DENSE_MAX as i64 + 4)] {
        let p = prog(vec![], vec![alloc(size, zeroed), load(ptr(0, 2))]);
        let f = run::<Sc>(&p).1.expect("a fault");
        assert_eq!(f.kind, FaultKind::MemoryError);
        assert_eq!(f.message, "read of uninitialised memory");
        let rmw = Op::Rmw {
            dst: 1,
            addr: ptr(0, 2),
            op: RmwOp::FetchAdd(Expr::Const(1)),
        };
        let f = run::<Sc>(&prog(vec![], vec![alloc(size, zeroed), rmw]));
        assert_eq!(
            f.1.expect("a fault").message,
            "read of uninitialised memory"
        );
    }
    let ok = [
        vec![alloc(4, true), load(ptr(0, 2))],
        vec![alloc(4, false), store(ptr(0, 2), 5), load(ptr(0, 2))],
        vec![
            alloc(4, false),
            Op::Load {
                dst: 1,
                addr: ptr(0, 2),
                copy: true,
            },
        ],
    ];
    for body in ok {
        assert_eq!(run::<Sc>(&prog(vec![], body.clone())).1, None, "{body:?}");
        assert_eq!(run::<Tso>(&prog(vec![], body)).1, None);
    }
}

#[test]
fn a_buffered_store_initialises_for_its_thread_at_once_and_for_memory_on_update() {
    let p = prog(
        vec![],
        vec![alloc(4, false), store(ptr(0, 1), 5), load(ptr(0, 1))],
    );
    let (mut s, _) = State::initial(&p);
    s.step::<Tso>(&p, Step::Thread(0));
    s.step::<Tso>(&p, Step::Thread(0));
    let loc = Loc { obj: 0, index: 1 };
    assert_eq!(s.cell_state(loc), CellState::Uninit);
    let (e, st) = s.step::<Tso>(&p, Step::Thread(0));
    assert_eq!(st, Status::Ok);
    assert!(matches!(
        e.kind,
        EventKind::Load {
            forwarded: true,
            value: 5,
            ..
        }
    ));
    s.step::<Tso>(&p, Step::Update(0, Chan::Thread));
    assert_eq!(s.cell_state(loc), CellState::Valid);
}

fn mutex_prog(after: Vec<Op>) -> Program {
    let m = object("m", ObjKind::Mutex, 1, Vec::new());
    let mut body = vec![
        Op::Lock(Addr::scalar(0)),
        Op::Unlock(Addr::scalar(0)),
        Op::MutexDestroy(Addr::scalar(0)),
    ];
    body.extend(after);
    prog(vec![m], body)
}

#[test]
fn a_destroyed_mutex_cannot_be_used_until_initialised_again() {
    let trylock = Op::Rmw {
        dst: 1,
        addr: Addr::scalar(0),
        op: RmwOp::Cas {
            expected: Expr::Const(0),
            new: Expr::Const(1),
        },
    };
    for op in [
        Op::Lock(Addr::scalar(0)),
        Op::Unlock(Addr::scalar(0)),
        Op::MutexDestroy(Addr::scalar(0)),
        trylock,
    ] {
        for model in ["sc", "tso"] {
            let p = mutex_prog(vec![op.clone()]);
            let f = if model == "sc" {
                run::<Sc>(&p).1
            } else {
                run::<Tso>(&p).1
            };
            let f = f.unwrap_or_else(|| panic!("{op:?} under {model}: no fault"));
            assert_eq!(f.kind, FaultKind::BadMutex, "{op:?}");
            assert_eq!(f.message, "use of a destroyed mutex");
        }
    }
    let again = mutex_prog(vec![
        store(Addr::scalar(0), 0),
        Op::Lock(Addr::scalar(0)),
        Op::Unlock(Addr::scalar(0)),
    ]);
    assert_eq!(run::<Sc>(&again).1, None);
    assert_eq!(run::<Tso>(&again).1, None);
}

#[test]
fn destroying_a_held_mutex_faults() {
    let m = object("m", ObjKind::Mutex, 1, Vec::new());
    let p = prog(
        vec![m],
        vec![Op::Lock(Addr::scalar(0)), Op::MutexDestroy(Addr::scalar(0))],
    );
    let f = run::<Sc>(&p).1.expect("a fault");
    assert_eq!(f.kind, FaultKind::BadMutex);
    assert_eq!(f.message, "destroy of a locked mutex");
}

/// A step that will fault has the access the DPOR clocks record for its fault (they
/// order it after the frees of its object and the writes of its cell, and nothing
/// else): sleep sets that saw more would wake a process with no edge to its event.
#[test]
fn a_faulting_step_depends_on_what_its_fault_depends_on() {
    let p = prog(
        Vec::new(),
        vec![
            alloc(2, true),
            Op::Free(Expr::Reg(0)),
            store(ptr(0, 1), 5),
            Op::Free(Expr::Reg(0)),
            Op::Free(Expr::Const(0)),
            // Thread 1's first object, which it has not allocated.
            Op::Local {
                dst: 1,
                expr: Expr::Const(Ptr { obj: 1, offset: 1 }.encode()),
            },
            store(ptr(2, 0), 5),
            store(ptr(1, 0), 5),
            Op::Free(Expr::Reg(1)),
            alloc(1, true),
        ],
    );
    let (mut s, _) = State::initial(&p);
    let t = Step::Thread(0);
    // Takes the step; a fault leaves the thread at its instruction: go past it.
    let next = |s: &mut State| {
        let a = s.next_access::<Tso>(&p, t);
        if let (_, Status::Fault(_)) = s.step::<Tso>(&p, t) {
            s.threads[0].frames.last_mut().expect("frame").pc += 1;
        }
        a
    };
    next(&mut s);
    let Access::Free(obj) = next(&mut s) else {
        panic!("a free of a live heap object")
    };
    let cell = Loc { obj, index: 1 };
    let life = Loc {
        obj,
        index: u32::MAX,
    };
    let writes = (
        Step::Update(1, fencer_memory::Chan::Thread),
        Access::Write(cell),
    );
    let frees = (Step::Thread(1), Access::Free(obj));
    let frees_other = (Step::Thread(1), Access::Free(obj + 1));
    // Use after free: the free and the cell's writers, as a load of the cell.
    let a = next(&mut s);
    assert_eq!(a, Access::Faulted(cell));
    assert!(dependent::<Tso>((t, a), frees));
    assert!(dependent::<Tso>((t, a), writes));
    assert!(!dependent::<Tso>((t, a), frees_other));
    // Double free: the frees of the object only.
    let a = next(&mut s);
    assert_eq!(a, Access::Faulted(life));
    assert!(dependent::<Tso>((t, a), frees));
    assert!(!dependent::<Tso>((t, a), writes));
    // `free(NULL)` does nothing; a null dereference depends on the registers alone.
    assert_eq!(next(&mut s), Access::Local);
    assert_eq!(next(&mut s), Access::Local);
    // Through a pointer to an object not allocated yet: the allocation that would
    // make it valid, as an access to a freed object on the free (the clocks see the
    // same: the allocation writes the object's life).
    let unborn = Loc { obj: 1, index: 1 };
    let allocates = (Step::Thread(1), Access::Alloc(1));
    let a = next(&mut s);
    assert_eq!(a, Access::Faulted(unborn));
    assert!(dependent::<Tso>((t, a), allocates));
    assert!(!dependent::<Tso>(
        (t, a),
        (Step::Thread(1), Access::Alloc(2))
    ));
    let a = next(&mut s);
    assert_eq!(
        a,
        Access::Faulted(Loc {
            obj: 1,
            index: u32::MAX
        })
    );
    assert!(dependent::<Tso>((t, a), allocates));
    // An allocation names the object it makes: thread 0's second one here.
    assert_eq!(next(&mut s), Access::Alloc(1 << ALLOC_THREAD_BITS));
}

/// Thread ids are taken in spawn order: a spawn names the id it gives, and depends on
/// another thread's spawn and on a join of that id; a join of an id no thread has yet
/// faults as a `FailedJoin`, which the spawn of that id races with.
#[test]
fn spawns_and_joins_depend_on_thread_ids() {
    let p = prog(
        Vec::new(),
        vec![
            Op::Join(Expr::Const(1)),
            Op::Join(Expr::Const(0)),
            Op::Join(Expr::Const(-1)),
            Op::Spawn {
                dst: 0,
                func: 0,
                arg: Expr::Const(0),
            },
            Op::Join(Expr::Reg(0)),
        ],
    );
    let (mut s, _) = State::initial(&p);
    let t = Step::Thread(0);
    let next = |s: &mut State| {
        let a = s.next_access::<Sc>(&p, t);
        let (e, st) = s.step::<Sc>(&p, t);
        if let Status::Fault(_) = st {
            s.threads[0].frames.last_mut().expect("frame").pc += 1;
        }
        (a, e.kind)
    };
    let other = |a: Access| (Step::Thread(7), a);
    // Thread 1 does not exist yet: the spawn that gives id 1 decides the fault.
    let (a, k) = next(&mut s);
    assert_eq!(
        (a, k),
        (Access::Join(1), EventKind::FailedJoin { child: 1 })
    );
    assert!(dependent::<Sc>((t, a), other(Access::Spawn(1))));
    assert!(!dependent::<Sc>((t, a), other(Access::Spawn(2))));
    // Its own id, or one no spawn gives: a fault wherever it runs.
    assert_eq!(next(&mut s), (Access::Local, EventKind::Failed));
    assert_eq!(next(&mut s), (Access::Local, EventKind::Failed));
    let (a, k) = next(&mut s);
    assert_eq!((a, k), (Access::Spawn(1), EventKind::Spawn { child: 1 }));
    assert!(dependent::<Sc>((t, a), other(Access::Spawn(1))));
    assert!(dependent::<Sc>((t, a), other(Access::Join(1))));
    assert!(!dependent::<Sc>((t, a), other(Access::Join(2))));
    // Joining the thread it made: its family is what it waits for.
    let a = s.next_access::<Sc>(&p, t);
    assert_eq!(a, Access::Join(1));
    assert!(dependent::<Sc>((t, a), (Step::Thread(1), Access::Local)));
}

/// A spawned thread whose first local instructions fault: the fault is the child's,
/// and the spawn is done all the same (the parent stood at its spawn, and spawned
/// again for ever when exploring on after violations).
#[test]
fn a_child_that_faults_at_its_start_leaves_the_spawn_done() {
    let mut p = prog(
        Vec::new(),
        vec![
            Op::Spawn {
                dst: 0,
                func: 1,
                arg: Expr::Const(0),
            },
            Op::Spawn {
                dst: 1,
                func: 1,
                arg: Expr::Const(0),
            },
        ],
    );
    p.functions.push(Function {
        name: "child".into(),
        params: 1,
        reg_names: vec!["v".into()],
        body: vec![ins(Op::Assert {
            cond: Expr::Reg(0),
            text: "v".into(),
        })],
        loc: SrcLoc::NONE,
    });
    let (mut s, _) = State::initial(&p);
    let (e, st) = s.step::<Sc>(&p, Step::Thread(0));
    assert_eq!(e.kind, EventKind::Spawn { child: 1 });
    let Status::Fault(f) = st else {
        panic!("the child's assertion fails")
    };
    assert_eq!((f.thread, f.kind), (1, FaultKind::Assertion));
    assert_eq!(s.threads[0].frames.last().expect("frame").pc, 1);
    assert!(!s.threads[0].faulted);
}

/// A mutex operation that faults reads the mutex (its state decides the fault), as the
/// clocks record it: dependent with the locks, unlocks and destroys of other threads,
/// not with their reads of it.
#[test]
fn a_faulting_mutex_operation_reads_the_mutex() {
    let m = Addr::Global {
        obj: 0,
        index: Expr::Const(0),
    };
    let p = prog(
        vec![object("m", ObjKind::Mutex, 1, Vec::new())],
        vec![
            Op::Unlock(m.clone()),
            Op::MutexDestroy(m.clone()),
            Op::Lock(m),
        ],
    );
    let l = Loc { obj: 0, index: 0 };
    let (mut s, _) = State::initial(&p);
    let t = Step::Thread(0);
    let other = |a: Access| (Step::Thread(1), a);
    // Unlock of a mutex the thread does not hold.
    let a = s.next_access::<Sc>(&p, t);
    assert_eq!(a, Access::MutexRead(l));
    assert!(dependent::<Sc>((t, a), other(Access::Mutex(l))));
    assert!(!dependent::<Sc>((t, a), other(Access::MutexRead(l))));
    let (e, st) = s.step::<Sc>(&p, t);
    assert!(matches!(st, Status::Fault(_)));
    assert_eq!(
        e.kind,
        EventKind::FaultedAccess {
            loc: l,
            lock: false
        }
    );
    s.threads[0].frames.last_mut().expect("frame").pc += 1;
    assert_eq!(s.next_access::<Sc>(&p, t), Access::Mutex(l));
    s.step::<Sc>(&p, t);
    // Lock of a destroyed mutex.
    assert_eq!(s.next_access::<Sc>(&p, t), Access::MutexRead(l));
    let (e, _) = s.step::<Sc>(&p, t);
    assert_eq!(e.kind, EventKind::FaultedAccess { loc: l, lock: true });
}
