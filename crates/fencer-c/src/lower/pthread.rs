//! Threads and POSIX synchronisation: `pthread_create`/`join`/`exit` (with the wrapper
//! threads start in when results are kept or TLS destructors run), mutexes, condition
//! variables (with or without spurious wake-ups), thread-local storage, `exit`.
//! Waiting at a barrier is two operations (`fencer_ir::barrier`); initialising and
//! destroying one, read-write locks, semaphores and keys are C code (`runtime/fencer_rt.c`).

use super::{add, mul, offset, Ctx, FnLower, TLS_THREADS};
use crate::Error;
use fencer_ir::{
    Addr, BinOp, Expr, FuncId, Function, Instr, ObjId, ObjKind, Object, Op, Reg, RmwOp, SrcLoc,
};
use llvm_ir::{Instruction, Module, Operand};

/// Where a condition variable keeps its state when waits return only when signalled
/// (`--no-spurious-wakeups`): at offset 0 how many waiters signals have released, at
/// offset 8 how many have started waiting. Waiter `t` (the `t`-th to start) waits until
/// more than `t` are released: a signal releases the longest-waiting one, a broadcast all.
const COND_RELEASED: i64 = 0;
const COND_WAITERS: i64 = 8;

pub(super) fn is_tls(g: &llvm_ir::module::GlobalVariable) -> bool {
    g.thread_local_mode != llvm_ir::module::ThreadLocalMode::NotThreadLocal
}

/// Whether some `pthread_join` is given a result pointer that is not a constant NULL.
pub(super) fn joins_with_results(m: &Module) -> bool {
    m.functions.iter().any(|f| {
        f.basic_blocks.iter().any(|bb| {
            bb.instrs.iter().any(|i| match i {
                Instruction::Call(c) => {
                    c.function.as_ref().right().and_then(FnLower::callee_name)
                        == Some("pthread_join".into())
                        && !c.arguments.get(1).is_some_and(|(o, _)| FnLower::is_null(o))
                }
                _ => false,
            })
        })
    })
}

impl<'m> Ctx<'m> {
    fn results_obj(&mut self) -> ObjId {
        if let Some(o) = self.results {
            return o;
        }
        let id = self.objects.len() as ObjId;
        let n = TLS_THREADS as usize * 8;
        let cell_names = (0..n)
            .map(|k| match k % 8 {
                0 => format!("result of thread {}", k / 8),
                _ => String::new(),
            })
            .collect();
        self.objects.push(Object {
            name: "pthread_join results".into(),
            kind: ObjKind::Shared,
            size: n as u32,
            init: Vec::new(),
            is_array: false,
            cell_names,
            loc: SrcLoc::NONE,
        });
        self.results = Some(id);
        id
    }

    /// Whether threads start in a wrapper ([`Ctx::thread_entry`]).
    fn wraps_threads(&self) -> bool {
        self.join_results || self.tls_exit.is_some()
    }

    /// The function a thread starts in when results are kept or TLS destructors run: it
    /// calls the thread function (`func`, or for `None` the function whose address the
    /// first cell of the argument holds, with the second cell as its argument), runs the
    /// destructors, and stores the result in the thread's slot. Named as the thread
    /// function, so that threads keep their names.
    fn thread_entry(&mut self, func: Option<FuncId>, name: &str, loc: SrcLoc) -> FuncId {
        if let Some(&f) = self.entries.get(&func) {
            return f;
        }
        let (arg, tid, result, target) = (0, 1, 2, 3);
        let mut body = Vec::new();
        let mut emit = |op| body.push(Instr { op, loc });
        match func {
            Some(f) => {
                // Through its address, which passes only the parameters it takes.
                emit(Op::CallIndirect {
                    dst: Some(result),
                    target: Expr::Const(fencer_ir::func_ptr(f)),
                    args: vec![Expr::Reg(arg)],
                });
            }
            None => {
                emit(Op::Load {
                    dst: target,
                    addr: Addr::Ptr(Expr::Reg(arg)),
                    copy: false,
                });
                emit(Op::Load {
                    dst: result,
                    addr: Addr::Ptr(add(Expr::Reg(arg), Expr::Const(8))),
                    copy: false,
                });
                emit(Op::Free(Expr::Reg(arg)));
                emit(Op::CallIndirect {
                    dst: Some(result),
                    target: Expr::Reg(target),
                    args: vec![Expr::Reg(result)],
                });
            }
        }
        if let Some(d) = self.tls_exit {
            emit(Op::Call {
                dst: None,
                func: d,
                args: Vec::new(),
            });
        }
        if self.join_results {
            let results = self.results_obj();
            emit(Op::ThreadId { dst: tid });
            let pc = body.len() as u32;
            body.push(Instr {
                op: Op::Branch {
                    cond: Expr::bin(BinOp::Lt, Expr::Reg(tid), Expr::Const(TLS_THREADS as i64)),
                    then_to: pc + 1,
                    else_to: pc + 3,
                },
                loc,
            });
            body.push(Instr {
                op: Op::Store {
                    addr: Addr::Global {
                        obj: results,
                        index: mul(Expr::Reg(tid), 8),
                    },
                    value: Expr::Reg(result),
                },
                loc,
            });
            body.push(Instr {
                op: Op::Return(None),
                loc,
            });
            body.push(Instr {
                op: Op::Unsupported {
                    message: too_many_results(),
                },
                loc,
            });
        } else {
            body.push(Instr {
                op: Op::Return(None),
                loc,
            });
        }
        let id = self.extra_base + self.extra.len() as FuncId;
        self.extra.push(Function {
            name: name.to_string(),
            params: 1,
            reg_names: vec![
                "arg".into(),
                "%tid".into(),
                "%result".into(),
                "%start".into(),
            ],
            body,
            loc,
        });
        self.entries.insert(func, id);
        id
    }
}

fn too_many_results() -> String {
    format!(
        "pthread_join's result of a thread with id {TLS_THREADS} or more\n  help: fencer keeps \
         the results of the first {TLS_THREADS} threads; threads are numbered in creation order"
    )
}

impl<'a, 'm> FnLower<'a, 'm> {
    /// Writes the thread's id to `tid`, and refuses (lazily, with `message`) a thread whose
    /// id has no copy in per-thread storage.
    pub(super) fn thread_id_below_copies(&mut self, tid: Reg, message: String) {
        self.emit(Op::ThreadId { dst: tid });
        let pc = self.body.len() as u32;
        self.emit(Op::Branch {
            cond: Expr::bin(BinOp::Lt, Expr::Reg(tid), Expr::Const(TLS_THREADS as i64)),
            then_to: pc + 2,
            else_to: pc + 1,
        });
        self.emit(Op::Unsupported { message });
    }

    /// Runs the TLS keys' destructors of the thread, when the program has keys (before
    /// `pthread_exit` ends the thread).
    fn tls_destructors(&mut self) {
        if let Some(d) = self.cx.tls_exit {
            self.emit(Op::Call {
                dst: None,
                func: d,
                args: Vec::new(),
            });
        }
    }

    /// Threads, mutexes, condition variables and `exit`; whether `name` is one of them.
    pub(super) fn external_pthread(
        &mut self,
        c: &'m llvm_ir::instruction::Call,
        name: &str,
    ) -> Result<bool, Error> {
        match name {
            "pthread_create" => {
                let named = c.arguments.get(2).and_then(|(o, _)| Self::callee_name(o));
                let arg = self.arg(c, 3)?;
                let tid = self.new_reg("%tid".into());
                match named.as_ref().and_then(|f| self.cx.funcs.get(f).copied()) {
                    Some(fid) if self.cx.wraps_threads() => {
                        let name = named.clone().unwrap_or_default();
                        let entry = self.cx.thread_entry(Some(fid), &name, self.loc);
                        self.emit(Op::Spawn {
                            dst: tid,
                            func: entry,
                            arg,
                        });
                    }
                    Some(fid) => self.emit(Op::Spawn {
                        dst: tid,
                        func: fid,
                        arg,
                    }),
                    None if self.cx.wraps_threads() => {
                        // The function and its argument travel in a heap pair.
                        let target = self.arg(c, 2)?;
                        let pair = self.new_reg("%start".into());
                        self.emit(Op::Alloc {
                            dst: pair,
                            size: Expr::Const(16),
                            zeroed: true,
                            stack: false,
                        });
                        self.emit(Op::Store {
                            addr: Addr::Ptr(Expr::Reg(pair)),
                            value: target,
                        });
                        self.emit(Op::Store {
                            addr: Addr::Ptr(add(Expr::Reg(pair), Expr::Const(8))),
                            value: arg,
                        });
                        let entry = self.cx.thread_entry(None, "thread", self.loc);
                        self.emit(Op::Spawn {
                            dst: tid,
                            func: entry,
                            arg: Expr::Reg(pair),
                        });
                    }
                    None => {
                        // A function pointer, or a function the program only declares (its
                        // stub refuses the program when the thread starts).
                        let target = self.arg(c, 2)?;
                        self.emit(Op::SpawnIndirect {
                            dst: tid,
                            target,
                            arg,
                        });
                    }
                }
                let out = &c.arguments[0].0;
                match out {
                    Operand::LocalOperand { name, .. } if self.promoted.contains_key(name) => {
                        let p = self.promoted[name];
                        self.emit(Op::Local {
                            dst: p,
                            expr: Expr::Reg(tid),
                        });
                    }
                    _ => {
                        let addr = self.addr(out)?;
                        self.emit(Op::Store {
                            addr,
                            value: Expr::Reg(tid),
                        });
                    }
                }
                self.set_result(c, Expr::Const(0));
            }
            "pthread_join" => {
                let t = self.arg(c, 0)?;
                self.emit(Op::Join(t.clone()));
                if !c.arguments.get(1).is_some_and(|(o, _)| Self::is_null(o)) {
                    // *res = the joined thread's slot, when res is not NULL at run time.
                    let res = self.arg(c, 1)?;
                    let results = self.cx.results_obj();
                    let v = self.new_reg("%result".into());
                    let pc = self.body.len() as u32;
                    self.emit(Op::Branch {
                        cond: Expr::bin(BinOp::Ne, res.clone(), Expr::Const(0)),
                        then_to: pc + 1,
                        else_to: pc + 5,
                    });
                    self.emit(Op::Branch {
                        cond: Expr::bin(BinOp::Lt, t.clone(), Expr::Const(TLS_THREADS as i64)),
                        then_to: pc + 3,
                        else_to: pc + 2,
                    });
                    self.emit(Op::Unsupported {
                        message: too_many_results(),
                    });
                    self.emit(Op::Load {
                        dst: v,
                        addr: Addr::Global {
                            obj: results,
                            index: mul(t, 8),
                        },
                        copy: false,
                    });
                    self.emit(Op::Store {
                        addr: Addr::Ptr(res),
                        value: Expr::Reg(v),
                    });
                }
                self.set_result(c, Expr::Const(0));
            }
            "pthread_exit" if self.cx.join_results => {
                let v = self.arg(c, 0)?;
                self.tls_destructors();
                let results = self.cx.results_obj();
                let tid = self.new_reg("%tid".into());
                self.thread_id_below_copies(tid, too_many_results());
                self.emit(Op::Store {
                    addr: Addr::Global {
                        obj: results,
                        index: mul(Expr::Reg(tid), 8),
                    },
                    value: v,
                });
                self.emit(Op::Exit);
            }
            "pthread_exit" => {
                self.tls_destructors();
                self.emit(Op::Exit);
            }
            "exit" | "_exit" => self.emit(Op::ExitProcess),
            "pthread_self" => {
                if let Some(d) = &c.dest {
                    let dst = self.reg(d);
                    self.emit(Op::ThreadId { dst });
                }
            }
            // An arrival and a pass (see `fencer_ir::barrier`): the engines then see which
            // arrivals' order matters. The serial thread gets
            // PTHREAD_BARRIER_SERIAL_THREAD (-1 in glibc), the others 0.
            "pthread_barrier_wait" => {
                let a = self.addr(&c.arguments[0].0)?;
                let serial = self.new_reg("%serial".into());
                self.emit(Op::BarrierArrive {
                    addr: a.clone(),
                    serial: Some(serial),
                });
                self.emit(Op::BarrierPass(a));
                self.set_result(c, Expr::bin(BinOp::Mul, Expr::Reg(serial), Expr::Const(-1)));
            }
            "pthread_mutex_lock" => {
                let a = self.addr(&c.arguments[0].0)?;
                self.emit(Op::Lock(a));
                self.set_result(c, Expr::Const(0));
            }
            "pthread_mutex_unlock" => {
                let a = self.addr(&c.arguments[0].0)?;
                self.emit(Op::Unlock(a));
                self.set_result(c, Expr::Const(0));
            }
            "pthread_mutex_trylock" => {
                // EBUSY (16) when the mutex is held. Its own operation rather than a
                // compare-and-swap, so that the engines see an acquisition (which races
                // with the other acquisitions) or a read of a held mutex.
                let a = self.addr(&c.arguments[0].0)?;
                let busy = self.new_reg("%trylock".into());
                self.emit(Op::TryLock { dst: busy, addr: a });
                self.set_result(c, Expr::bin(BinOp::Mul, Expr::Reg(busy), Expr::Const(16)));
            }
            // Initialising writes the mutex free (or the condition variable's signal count
            // 0): it is what makes a mutex in `malloc` memory, or a destroyed one, usable.
            "pthread_mutex_init" | "pthread_cond_init" => {
                let a = self.addr(&c.arguments[0].0)?;
                if name == "pthread_cond_init" && !self.cx.spurious_wakeups {
                    self.emit(Op::Store {
                        addr: offset(&a, COND_WAITERS),
                        value: Expr::Const(0),
                    });
                }
                self.emit(Op::Store {
                    addr: a,
                    value: Expr::Const(0),
                });
                self.set_result(c, Expr::Const(0));
            }
            "pthread_mutex_destroy" => {
                let a = self.addr(&c.arguments[0].0)?;
                self.emit(Op::MutexDestroy(a));
                self.set_result(c, Expr::Const(0));
            }
            "pthread_cond_destroy"
            | "pthread_mutexattr_init"
            | "pthread_mutexattr_destroy"
            | "pthread_attr_init"
            | "pthread_attr_destroy"
            | "sched_yield" => self.set_result(c, Expr::Const(0)),
            // With spurious wake-ups a waiter may return at any time, whether signalled or
            // not, so a signal changes nothing a waiter can tell; it still synchronises
            // memory, as POSIX requires of it.
            "pthread_cond_signal" | "pthread_cond_broadcast" if self.cx.spurious_wakeups => {
                self.full_fence();
                self.set_result(c, Expr::Const(0));
            }
            "pthread_cond_signal" | "pthread_cond_broadcast" => {
                // Release the longest-waiting waiter not yet released (a broadcast: every
                // one), by compare-and-swap: `if (released < waiters) released++`.
                let cv = self.addr(&c.arguments[0].0)?;
                let released = self.new_reg("%released".into());
                let waiters = self.new_reg("%waiters".into());
                let old = self.new_reg("%cas".into());
                self.full_fence();
                let head = self.body.len() as u32;
                self.emit(Op::Load {
                    dst: released,
                    addr: offset(&cv, COND_RELEASED),
                    copy: false,
                });
                self.emit(Op::Load {
                    dst: waiters,
                    addr: offset(&cv, COND_WAITERS),
                    copy: false,
                });
                // Nobody waiting: the signal is lost, as POSIX has it.
                self.emit(Op::Branch {
                    cond: Expr::bin(BinOp::Lt, Expr::Reg(released), Expr::Reg(waiters)),
                    then_to: head + 3,
                    else_to: head + 6,
                });
                let new = if name == "pthread_cond_signal" {
                    add(Expr::Reg(released), Expr::Const(1))
                } else {
                    Expr::Reg(waiters)
                };
                self.emit(Op::Rmw {
                    dst: old,
                    addr: offset(&cv, COND_RELEASED),
                    op: RmwOp::Cas {
                        expected: Expr::Reg(released),
                        new,
                    },
                });
                self.emit(Op::Branch {
                    cond: Expr::bin(BinOp::Eq, Expr::Reg(old), Expr::Reg(released)),
                    then_to: head + 6,
                    else_to: head + 5,
                });
                self.emit(Op::Jump(head));
                self.set_result(c, Expr::Const(0));
            }
            // POSIX lets the wait return without a signal, at any time: what a waiter can do
            // is give the mutex back and take it again, after any steps of the others. (A
            // signal only lets it go on sooner, which a scheduler could do anyway.) In the
            // usual `while (!ready) pthread_cond_wait(&c, &m);` the back-and-forth is a
            // spin-loop iteration that changes nothing unless another thread took the mutex
            // in between, and is dropped (see `fencer_machine::State::lock_pairs`); a
            // waiter that nothing can release is a hang.
            "pthread_cond_wait" if self.cx.spurious_wakeups => {
                self.cx.cond_waits_spurious = true;
                let m = self.addr(&c.arguments[1].0)?;
                self.emit(Op::Unlock(m.clone()));
                self.emit(Op::Lock(m));
                self.set_result(c, Expr::Const(0));
            }
            "pthread_cond_wait" => {
                self.cx.cond_waits_exact = true;
                let cv = self.addr(&c.arguments[0].0)?;
                let m = self.addr(&c.arguments[1].0)?;
                let ticket = self.new_reg("%ticket".into());
                let released = self.new_reg("%released".into());
                // The ticket is taken with the mutex held: a signal after the unlock
                // releases this waiter or an earlier one, never a later one.
                self.emit(Op::Rmw {
                    dst: ticket,
                    addr: offset(&cv, COND_WAITERS),
                    op: RmwOp::Fetch {
                        op: BinOp::Add,
                        value: Expr::Const(1),
                        bits: 32,
                    },
                });
                self.emit(Op::Unlock(m.clone()));
                // A waiting loop, so that a wait no signal ends is a hang (the spin-loop
                // rewrite drops the iterations that read the same count).
                let head = self.body.len() as u32;
                self.emit(Op::Load {
                    dst: released,
                    addr: offset(&cv, COND_RELEASED),
                    copy: false,
                });
                self.emit(Op::Branch {
                    cond: Expr::bin(BinOp::Gt, Expr::Reg(released), Expr::Reg(ticket)),
                    then_to: head + 3,
                    else_to: head + 2,
                });
                self.emit(Op::Jump(head));
                self.emit(Op::Lock(m));
                self.set_result(c, Expr::Const(0));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
