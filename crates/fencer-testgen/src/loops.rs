//! Random programs over the IR with waiting loops around a mutex, for the spin-loop rule
//! that drops an iteration which took a mutex and gave it back (GenMC's lock
//! zero-net-effect loops), or gave a held mutex back and took it again (a
//! `pthread_cond_wait` in a predicate loop, with spurious wake-ups). Other threads look at
//! the mutex's word in every way a C program can (a plain load, a copy, a compare-and-swap
//! that writes back what it read, a trylock), take the mutex themselves, set the flag the
//! loops wait for, and may end the process (`exit`, `main` returning) once they have set
//! it. What they read is in the final state, so a dropped iteration that someone looked
//! into shows as a final state missing against the reference explorer on the program as
//! written. The rule once ignored such reads (issue 45, item 1).

use crate::heap::{function, generated, object, Code};
use crate::Rng;
use fencer_ir::{Addr, BinOp, Expr, ObjKind, Op, Program, RmwOp};

const X: u32 = 0;
const M: u32 = 1;
const GO: u32 = 2;

/// `while (!go) { lock(m); [r = x;] unlock(m); }`: the poller.
fn poller(r: &mut Rng, c: &mut Code) {
    let g = c.reg("%g");
    let head = c.body.len() as u32;
    c.emit(Op::Load {
        dst: g,
        addr: Addr::scalar(GO),
        copy: false,
    });
    let br = c.emit(Op::Branch {
        cond: Expr::bin(BinOp::Ne, Expr::Reg(g), Expr::Const(0)),
        then_to: 0,
        else_to: 0,
    });
    c.emit(Op::Lock(Addr::scalar(M)));
    if r.chance(50) {
        let v = c.reg("%v");
        c.emit(Op::Load {
            dst: v,
            addr: Addr::scalar(X),
            copy: false,
        });
    }
    c.emit(Op::Unlock(Addr::scalar(M)));
    c.emit(Op::Jump(head));
    c.patch(br);
}

/// `lock(m); while (!go) { [x = k; | r = x;] unlock(m); lock(m); } unlock(m);`: a
/// condition wait with spurious wake-ups, as the C front-end lowers it; sometimes each
/// pass also writes `x` (then it changes something) or reads it into a register the final
/// state shows (then it may come back with other registers).
fn waiter(r: &mut Rng, c: &mut Code) {
    c.emit(Op::Lock(Addr::scalar(M)));
    let g = c.reg("%g");
    let head = c.body.len() as u32;
    c.emit(Op::Load {
        dst: g,
        addr: Addr::scalar(GO),
        copy: false,
    });
    let br = c.emit(Op::Branch {
        cond: Expr::bin(BinOp::Ne, Expr::Reg(g), Expr::Const(0)),
        then_to: 0,
        else_to: 0,
    });
    match r.range(0, 5) {
        0 => {
            c.emit(Op::Store {
                addr: Addr::scalar(X),
                value: Expr::Const(r.range(1, 2) as i64),
            });
        }
        1 => {
            let v = c.reg("v");
            c.emit(Op::Load {
                dst: v,
                addr: Addr::scalar(X),
                copy: false,
            });
        }
        _ => {}
    }
    c.emit(Op::Unlock(Addr::scalar(M)));
    c.emit(Op::Lock(Addr::scalar(M)));
    c.emit(Op::Jump(head));
    c.patch(br);
    c.emit(Op::Unlock(Addr::scalar(M)));
}

/// One statement of a thread that looks at the mutex, takes it, or writes.
fn statement(r: &mut Rng, c: &mut Code) {
    let m = Addr::scalar(M);
    match r.range(0, 7) {
        0 | 1 => {
            let w = c.reg("w");
            c.emit(Op::Load {
                dst: w,
                addr: m,
                copy: r.chance(30),
            });
        }
        // A compare-and-swap that never changes the word: a read, to the spin-loop rule.
        2 => {
            let w = c.reg("w");
            c.emit(Op::Rmw {
                dst: w,
                addr: m,
                op: RmwOp::Cas {
                    expected: Expr::Const(0),
                    new: Expr::Const(0),
                },
            });
        }
        3 => {
            let b = c.reg("b");
            c.emit(Op::TryLock {
                dst: b,
                addr: m.clone(),
            });
            let br = c.emit(Op::Branch {
                cond: Expr::bin(BinOp::Ne, Expr::Reg(b), Expr::Const(0)),
                then_to: 0,
                else_to: 0,
            });
            c.emit(Op::Unlock(m));
            c.patch(br);
        }
        // A critical section: it writes `x`, or only reads it.
        4 => {
            c.emit(Op::Lock(m.clone()));
            if r.chance(50) {
                c.emit(Op::Store {
                    addr: Addr::scalar(X),
                    value: Expr::Const(r.range(1, 2) as i64),
                });
            } else {
                let v = c.reg("v");
                c.emit(Op::Load {
                    dst: v,
                    addr: Addr::scalar(X),
                    copy: false,
                });
            }
            c.emit(Op::Unlock(m));
        }
        5 => {
            let v = c.reg("v");
            c.emit(Op::Load {
                dst: v,
                addr: Addr::scalar(X),
                copy: false,
            });
        }
        _ => {
            c.emit(Op::Store {
                addr: Addr::scalar(X),
                value: Expr::Const(r.range(1, 2) as i64),
            });
        }
    }
}

/// A random program for `seed`: one or two threads waiting in loops around the mutex, and
/// one or two that look at it; the last of these sets the flag the loops wait for, and may
/// then end the process. Run it with a loop bound on the reference side (3 is enough: an
/// iteration is kept only when someone looked into it, and there are two looks at most).
pub fn lock_loop_program(seed: u64) -> Program {
    let mut r = Rng::new(seed ^ 0x4c4f_4f50);
    let objects = vec![
        object("x", ObjKind::Shared, 1, false),
        object("m", ObjKind::Mutex, 1, false),
        object("go", ObjKind::Shared, 1, false),
    ];
    // Small enough for the reference explorer, which runs the loops as written.
    let loopers = if r.chance(40) { 2 } else { 1 };
    let lookers = if loopers == 2 {
        1
    } else {
        r.range(1, 2) as u32
    };
    // Function 0 is unused: threads are functions 1.. (see `generated`).
    let mut functions = vec![function("unused", 0, Vec::new(), Vec::new())];
    for t in 0..loopers {
        let mut c = Code::new(t + 1);
        if r.chance(40) {
            poller(&mut r, &mut c);
        } else {
            waiter(&mut r, &mut c);
        }
        functions.push(c.finish(&format!("t{t}"), 0));
    }
    for k in 0..lookers {
        let t = loopers + k;
        let mut c = Code::new(t + 1);
        let n = r.range(1, if loopers + lookers == 3 { 1 } else { 2 });
        for _ in 0..n {
            statement(&mut r, &mut c);
        }
        if k + 1 == lookers {
            c.emit(Op::Store {
                addr: Addr::scalar(GO),
                value: Expr::Const(1),
            });
            if r.chance(30) {
                if r.chance(50) {
                    statement(&mut r, &mut c);
                }
                c.emit(Op::ExitProcess);
            }
        } else if r.chance(30) {
            c.emit(Op::Store {
                addr: Addr::scalar(GO),
                value: Expr::Const(1),
            });
        }
        functions.push(c.finish(&format!("t{t}"), 0));
    }
    generated(format!("loops{seed}"), "gen-loops", objects, functions)
}
