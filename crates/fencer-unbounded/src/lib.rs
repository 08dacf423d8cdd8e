//! A C program whose `main` creates threads without bound (`while (1) pthread_create(&t,
//! 0, f, 0);`, SV-COMP's pthread-ext family) as a parameterized system: every thread runs
//! `f`, and there are as many as the run wants, which is what an array-based system of
//! any number of processes is (Cubicle, `fencer-param`). Proving the system safe for
//! every number of processes proves the program; an unsafe state found comes with a
//! trace on a fixed number of threads.
//!
//! Why the translation is exact, not an approximation:
//!
//! - `main` does nothing but set up memory and then spawn `f(arg)` in a loop that never
//!   ends, never touching shared memory again ([`spawner`] runs it concretely and refuses
//!   anything else). So a thread may start at any moment, and a state with `n` threads
//!   started is a state of the system in which `n` processes have left `f`'s entry and the
//!   rest have not yet moved: the reachable states (restricted to started threads) are the
//!   same.
//! - Each thread's code is `f` with its calls inlined; a step other threads can see, with
//!   the local steps after it up to the next such step, is one transition per path
//!   (`blocks`). Registers are per-process arrays, global cells are global variables,
//!   address-taken locals per-process arrays, a mutex is its state and its holder.
//!   Computations nothing observable reads are removed first (`slice`). The C front-end's values are 64-bit integers in canonical form
//!   (sign-extended from their width); the engine's are mathematical integers. An interval
//!   analysis bounds every register and cell, and each operation whose result wraps
//!   (`Sext(32)` after an addition) becomes one case per wrap, guarded by the range it
//!   applies to; an operation whose range is unknown, or could leave 64 bits, is refused.
//! - The machine semantics kept: assertion failures and `unlock` of a mutex the thread
//!   does not hold are the unsafe states; `assume` blocks; a lock waits until the mutex
//!   is free. Deadlocks and hangs are not looked for (the caller names that).
//!
//! Only sequential consistency: weak memory would need Cubicle-W's weak variables.

use fencer_ir::{
    Addr, BinOp, Expr, FuncId, ObjKind, Op, Program, Ptr, Reg, RmwOp, SrcLoc, UnOp, Value,
};
use fencer_param::formula::{Formula, Lin, Lit, Rel, Term};
use fencer_param::{Atom, Global, ProcRef, Quantified, Rhs, Sort, System, Transition, Update};
use std::collections::HashMap;

/// Why a program is not translated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `main` does not create threads in a loop that never ends (or does more than that):
    /// the program is not of the family; other engines take it.
    NotUnbounded(String),
    /// It is of the family, but its threads do something the translation does not model.
    Unsupported(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotUnbounded(m) | Refusal::Unsupported(m) => f.write_str(m),
        }
    }
}

/// One transition's origin, for counterexamples.
#[derive(Clone, Debug)]
pub struct Site {
    pub loc: SrcLoc,
    pub function: String,
    /// What the step does, in words (`load value`, `assert(...) fails`).
    pub text: String,
    /// The cell whose value the step shows: what it read, or what it wrote.
    pub shows: Option<Shows>,
    /// The step reaches the unsafe state: the violation's message.
    pub violation: Option<String>,
}

/// A cell a step reads (its value before the step) or writes (after it).
#[derive(Clone, Copy, Debug)]
pub struct Shows {
    pub global: u32,
    /// A thread's own cell (an element of a process-indexed array).
    pub per_thread: bool,
    pub after: bool,
}

/// The program as a parameterized system.
#[derive(Clone, Debug)]
pub struct Translation {
    pub system: System,
    /// Per transition of `system`.
    pub sites: Vec<Site>,
    /// The function every created thread runs, and its argument.
    pub thread: String,
    pub arg: Value,
    /// Flat instructions of one thread (after inlining), for the statistics.
    pub instructions: usize,
}

/// What `main` does: memory as it is when the first thread starts, and what it spawns.
#[derive(Clone, Debug)]
pub struct Spawner {
    pub memory: HashMap<(u32, u32), Value>,
    pub func: FuncId,
    pub arg: Value,
}

const MAIN_STEPS: usize = 100_000;
const MAX_FLAT: usize = 20_000;
/// Cases an operation's wrap-around may split into.
const MAX_WRAPS: i128 = 4;
/// Values the translation keeps exact: 64-bit arithmetic never wraps within this.
const SAFE: i128 = 1 << 62;
const TOP: (i128, i128) = (i64::MIN as i128, i64::MAX as i128);

fn not_unbounded(m: impl Into<String>) -> Refusal {
    Refusal::NotUnbounded(m.into())
}

fn eval(e: &Expr, reg: &dyn Fn(Reg) -> Option<Value>) -> Option<Value> {
    match e {
        Expr::Const(c) => Some(*c),
        Expr::Reg(r) => reg(*r),
        Expr::AddrOf(o, i) => Some(
            Ptr {
                obj: *o,
                offset: u32::try_from(eval(i, reg)?).ok()?,
            }
            .encode(),
        ),
        Expr::Un(op, a) => Some(op.eval(eval(a, reg)?)),
        Expr::Bin(op, a, b) => op.eval(eval(a, reg)?, eval(b, reg)?),
    }
}

/// The cell an address names, if it is a constant one of a global object.
fn const_cell(prog: &Program, a: &Addr, reg: &dyn Fn(Reg) -> Option<Value>) -> Option<(u32, u32)> {
    let (obj, off) = match a {
        Addr::Global { obj, index } => (*obj, u32::try_from(eval(index, reg)?).ok()?),
        Addr::Ptr(e) => {
            let p = Ptr::decode(eval(e, reg)?)?;
            (p.obj, p.offset)
        }
    };
    let o = prog.objects.get(obj as usize)?;
    (off < o.size).then_some((obj, off))
}

/// Where `main` was (its call stack) and its registers, at a spawn.
type Visit = (Vec<(FuncId, usize)>, Vec<Option<Value>>);

struct Frame {
    func: FuncId,
    pc: usize,
    /// `None`: a thread id, which the loop may not look at.
    regs: Vec<Option<Value>>,
    ret: Option<Reg>,
}

/// Runs `main` until it is in the loop that spawns: the same call stack, at the same
/// spawn, with the same registers, after spawning since it was there last. Memory is then
/// as every thread sees it first, since the loop writes none.
pub fn spawner(prog: &Program) -> Result<Spawner, Refusal> {
    let [main] = prog.threads.as_slice() else {
        return Err(not_unbounded("the program does not start from one `main`"));
    };
    let mut stack = vec![Frame {
        func: main.func,
        pc: 0,
        regs: vec![Some(0); prog.functions[main.func as usize].num_regs()],
        ret: None,
    }];
    if let Some(r) = stack[0].regs.first_mut() {
        *r = Some(main.arg);
    }
    let mut memory: HashMap<(u32, u32), Value> = HashMap::new();
    let mut spawned: Option<(FuncId, Value)> = None;
    // The spawns seen, by call stack and registers: coming back to one is the loop.
    let mut seen: Vec<Visit> = Vec::new();
    for _ in 0..MAIN_STEPS {
        let fr = stack.last_mut().expect("a frame");
        let f = &prog.functions[fr.func as usize];
        let Some(ins) = f.body.get(fr.pc) else {
            return Err(not_unbounded("main runs off its code"));
        };
        let regs = fr.regs.clone();
        let get = |r: Reg| regs.get(r as usize).copied().flatten();
        let line = ins.loc.line;
        let threads_run = spawned.is_some();
        match &ins.op {
            Op::Local { dst, expr } => {
                let v = eval(expr, &get);
                if v.is_none() && !matches!(expr, Expr::Reg(_)) && threads_run {
                    return Err(not_unbounded(format!(
                        "main computes with a thread id (line {line})"
                    )));
                }
                fr.regs[*dst as usize] = v;
                fr.pc += 1;
            }
            Op::Jump(t) | Op::SpinBack { to: t, .. } => fr.pc = *t as usize,
            Op::LoopHead { .. } | Op::Fence(_) => fr.pc += 1,
            Op::Branch {
                cond,
                then_to,
                else_to,
            } => match eval(cond, &get) {
                Some(0) => fr.pc = *else_to as usize,
                Some(_) => fr.pc = *then_to as usize,
                None => {
                    return Err(not_unbounded(format!(
                        "main branches on a thread id (line {line})"
                    )))
                }
            },
            Op::Store { addr, value } if !threads_run => {
                match (const_cell(prog, addr, &get), eval(value, &get)) {
                    (Some(c), Some(v)) if prog.objects[c.0 as usize].kind == ObjKind::Shared => {
                        memory.insert(c, v);
                    }
                    _ => {
                        return Err(not_unbounded(format!(
                            "main writes memory the translation does not follow (line {line})"
                        )))
                    }
                }
                fr.pc += 1;
            }
            Op::Load { dst, addr, .. } if !threads_run => {
                let Some(c) = const_cell(prog, addr, &get) else {
                    return Err(not_unbounded(format!(
                        "main reads memory the translation does not follow (line {line})"
                    )));
                };
                let v = memory
                    .get(&c)
                    .copied()
                    .unwrap_or_else(|| prog.objects[c.0 as usize].init_value(c.1));
                fr.regs[*dst as usize] = Some(v);
                fr.pc += 1;
            }
            Op::Call { dst, func, args } => {
                let vals: Vec<Option<Value>> = args.iter().map(|a| eval(a, &get)).collect();
                let callee = &prog.functions[*func as usize];
                let mut regs = vec![Some(0); callee.num_regs()];
                for (i, v) in vals.into_iter().enumerate().take(callee.params as usize) {
                    regs[i] = v;
                }
                fr.pc += 1;
                let ret = *dst;
                stack.push(Frame {
                    func: *func,
                    pc: 0,
                    regs,
                    ret,
                });
            }
            Op::Return(e) => {
                let v = e.as_ref().and_then(|e| eval(e, &get));
                let done = stack.pop().expect("a frame");
                match stack.last_mut() {
                    Some(caller) => {
                        if let Some(d) = done.ret {
                            caller.regs[d as usize] = v;
                        }
                    }
                    None => return Err(not_unbounded("main returns: it creates finitely many threads")),
                }
            }
            Op::Spawn { dst, arg, .. } | Op::SpawnIndirect { dst, arg, .. } => {
                let func = match &ins.op {
                    Op::SpawnIndirect { target, .. } => eval(target, &get)
                        .and_then(|v| fencer_ir::func_of_ptr(v, prog.functions.len())),
                    Op::Spawn { func, .. } => Some(*func),
                    _ => None,
                };
                let (Some(func), Some(arg)) = (func, eval(arg, &get)) else {
                    return Err(not_unbounded(format!(
                        "main creates a thread whose function or argument is not a constant (line {line})"
                    )));
                };
                if Ptr::decode(arg).is_some() {
                    return Err(Refusal::Unsupported(format!(
                        "main passes its threads a pointer (line {line}): the translation takes constant arguments only"
                    )));
                }
                match spawned {
                    Some(s) if s != (func, arg) => {
                        return Err(Refusal::Unsupported(format!(
                            "main creates threads of more than one kind (line {line}): the translation takes one function and argument"
                        )))
                    }
                    _ => spawned = Some((func, arg)),
                }
                let key: Vec<(FuncId, usize)> = stack.iter().map(|f| (f.func, f.pc)).collect();
                let fr = stack.last_mut().expect("a frame");
                fr.regs[*dst as usize] = None;
                let regs = fr.regs.clone();
                if seen.iter().any(|(k, r)| *k == key && *r == regs) {
                    return Ok(Spawner {
                        memory,
                        func,
                        arg,
                    });
                }
                seen.push((key, regs));
                fr.pc += 1;
            }
            _ if threads_run => {
                return Err(not_unbounded(format!(
                    "main does more than create threads once they run (line {line})"
                )))
            }
            _ => {
                return Err(not_unbounded(format!(
                    "main does something before its threads start that the translation does not follow (line {line})"
                )))
            }
        }
    }
    Err(not_unbounded(
        "main does not come back to the same spawn in the same state: it creates threads in a loop that ends, or counts them",
    ))
}

/// One instruction of a thread, calls inlined, registers renumbered.
#[derive(Clone, Debug)]
enum F {
    Local {
        dst: Reg,
        expr: Expr,
    },
    Jump(usize),
    Branch {
        cond: Expr,
        then_to: usize,
        else_to: usize,
    },
    Load {
        dst: Reg,
        addr: Addr,
    },
    Store {
        addr: Addr,
        value: Expr,
    },
    Rmw {
        dst: Reg,
        addr: Addr,
        op: RmwOp,
    },
    Lock(Addr),
    Unlock(Addr),
    Assert {
        cond: Expr,
        text: String,
    },
    Assume(Expr),
    Nondet {
        dst: Reg,
        bits: u8,
    },
    /// A stack object of the thread (an address-taken local variable), [`LocalObj`] `id`.
    Alloc {
        dst: Reg,
        id: usize,
    },
    Free(Expr),
    Nop,
    Done,
}

struct Flat<'p> {
    prog: &'p Program,
    code: Vec<(F, SrcLoc, FuncId)>,
    nregs: u32,
    calling: Vec<FuncId>,
    locals: Vec<LocalObj>,
}

/// A local variable whose address is taken: per thread, cells of its own. Its address
/// is a constant of the translation ([`local_ptr`]) that may only be used as an address
/// within the code of the call that allocates it (`extent`, its callees included).
#[derive(Clone, Debug)]
struct LocalObj {
    size: u32,
    zeroed: bool,
    name: String,
    extent: (usize, usize),
}

/// Object numbers for locals, below fencer-ir's function pointers.
const LOCAL_BASE: u32 = 1 << 29;

fn local_ptr(id: usize) -> Value {
    Ptr {
        obj: LOCAL_BASE + id as u32,
        offset: 0,
    }
    .encode()
}

fn is_local_ptr(v: Value) -> bool {
    Ptr::decode(v).is_some_and(|p| (LOCAL_BASE..fencer_ir::FUNC_BASE).contains(&p.obj))
}

fn rename(e: &Expr, base: u32) -> Expr {
    match e {
        Expr::Const(_) => e.clone(),
        Expr::Reg(r) => Expr::Reg(r + base),
        Expr::AddrOf(o, i) => Expr::AddrOf(*o, Box::new(rename(i, base))),
        Expr::Un(op, a) => Expr::Un(*op, Box::new(rename(a, base))),
        Expr::Bin(op, a, b) => Expr::bin(*op, rename(a, base), rename(b, base)),
    }
}

fn rename_addr(a: &Addr, base: u32) -> Addr {
    match a {
        Addr::Global { obj, index } => Addr::Global {
            obj: *obj,
            index: rename(index, base),
        },
        Addr::Ptr(e) => Addr::Ptr(rename(e, base)),
    }
}

impl Flat<'_> {
    fn push(&mut self, op: F, loc: SrcLoc, func: FuncId) -> Result<usize, Refusal> {
        if self.code.len() >= MAX_FLAT {
            return Err(Refusal::Unsupported(format!(
                "a thread's code with its calls inlined is longer than {MAX_FLAT} instructions"
            )));
        }
        self.code.push((op, loc, func));
        Ok(self.code.len() - 1)
    }

    /// Emits `func` with registers from `base`; returns its entry and the jumps its
    /// returns leave to patch. `ret` receives the returned value.
    fn inline(
        &mut self,
        func: FuncId,
        base: u32,
        ret: Option<Reg>,
        root: bool,
    ) -> Result<(usize, Vec<usize>), Refusal> {
        if self.calling.contains(&func) {
            return Err(Refusal::Unsupported(format!(
                "`{}` is recursive: the translation inlines calls",
                self.prog.functions[func as usize].name
            )));
        }
        self.calling.push(func);
        let f = &self.prog.functions[func as usize];
        let mut map = Vec::with_capacity(f.body.len());
        let mut fix: Vec<(usize, u32)> = Vec::new();
        let mut returns = Vec::new();
        let mut mine = Vec::new();
        let entry = self.code.len();
        for (i, ins) in f.body.iter().enumerate() {
            map.push(self.code.len());
            let loc = ins.loc;
            let unsupported = |what: &str| {
                Refusal::Unsupported(format!(
                    "a created thread {what} ({}, line {}): the translation does not model it",
                    f.name, loc.line
                ))
            };
            match &ins.op {
                Op::Local { dst, expr } => {
                    self.push(
                        F::Local {
                            dst: dst + base,
                            expr: rename(expr, base),
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Jump(t) | Op::SpinBack { to: t, .. } => {
                    let k = self.push(F::Jump(0), loc, func)?;
                    fix.push((k, *t));
                }
                Op::Branch {
                    cond,
                    then_to,
                    else_to,
                } => {
                    let k = self.push(
                        F::Branch {
                            cond: rename(cond, base),
                            then_to: 0,
                            else_to: 0,
                        },
                        loc,
                        func,
                    )?;
                    fix.push((k, *then_to));
                    fix.push((k, *else_to | 1 << 31));
                }
                Op::Load { dst, addr, .. } => {
                    self.push(
                        F::Load {
                            dst: dst + base,
                            addr: rename_addr(addr, base),
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Store { addr, value } => {
                    self.push(
                        F::Store {
                            addr: rename_addr(addr, base),
                            value: rename(value, base),
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Rmw { dst, addr, op } => {
                    let op = match op {
                        RmwOp::Cas { expected, new } => RmwOp::Cas {
                            expected: rename(expected, base),
                            new: rename(new, base),
                        },
                        RmwOp::FetchAdd(e) => RmwOp::FetchAdd(rename(e, base)),
                        RmwOp::Xchg(e) => RmwOp::Xchg(rename(e, base)),
                        RmwOp::Fetch { op, value, bits } => RmwOp::Fetch {
                            op: *op,
                            value: rename(value, base),
                            bits: *bits,
                        },
                    };
                    self.push(
                        F::Rmw {
                            dst: dst + base,
                            addr: rename_addr(addr, base),
                            op,
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Lock(a) => {
                    self.push(F::Lock(rename_addr(a, base)), loc, func)?;
                }
                Op::Unlock(a) => {
                    self.push(F::Unlock(rename_addr(a, base)), loc, func)?;
                }
                Op::Assert { cond, text } => {
                    self.push(
                        F::Assert {
                            cond: rename(cond, base),
                            text: text.clone(),
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Assume(c) => {
                    self.push(F::Assume(rename(c, base)), loc, func)?;
                }
                Op::Nondet { dst, bits } => {
                    self.push(
                        F::Nondet {
                            dst: dst + base,
                            bits: *bits,
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Fence(_) | Op::LoopHead { .. } => {
                    self.push(F::Nop, loc, func)?;
                }
                Op::Exit => {
                    self.push(F::Done, loc, func)?;
                }
                Op::Return(e) => {
                    if root {
                        self.push(F::Done, loc, func)?;
                    } else {
                        if let (Some(d), Some(e)) = (ret, e) {
                            self.push(
                                F::Local {
                                    dst: d,
                                    expr: rename(e, base),
                                },
                                loc,
                                func,
                            )?;
                        }
                        returns.push(self.push(F::Jump(0), loc, func)?);
                    }
                }
                Op::Call { dst, func: g, args } => {
                    let callee = &self.prog.functions[*g as usize];
                    let cbase = self.nregs;
                    self.nregs += callee.num_regs() as u32;
                    for (k, a) in args.iter().enumerate().take(callee.params as usize) {
                        self.push(
                            F::Local {
                                dst: cbase + k as u32,
                                expr: rename(a, base),
                            },
                            loc,
                            func,
                        )?;
                    }
                    for k in args.len()..callee.params as usize {
                        self.push(
                            F::Local {
                                dst: cbase + k as u32,
                                expr: Expr::Const(0),
                            },
                            loc,
                            func,
                        )?;
                    }
                    let jump = self.push(F::Jump(0), loc, func)?;
                    let (centry, rets) = self.inline(*g, cbase, dst.map(|d| d + base), false)?;
                    self.code[jump].0 = F::Jump(centry);
                    for r in rets {
                        fix.push((r, i as u32 + 1));
                    }
                }
                Op::Spawn { .. } | Op::SpawnIndirect { .. } => {
                    return Err(unsupported("creates threads"))
                }
                Op::Join(_) => return Err(unsupported("joins a thread")),
                Op::Alloc {
                    dst,
                    size: Expr::Const(n),
                    stack: true,
                    zeroed,
                } if (1..=64).contains(n) => {
                    let id = self.locals.len();
                    self.locals.push(LocalObj {
                        size: *n as u32,
                        zeroed: *zeroed,
                        name: f
                            .reg_names
                            .get(*dst as usize)
                            .map(|n| n.trim_start_matches('%').to_string())
                            .unwrap_or_else(|| format!("local{id}")),
                        extent: (0, 0),
                    });
                    mine.push(id);
                    self.push(
                        F::Alloc {
                            dst: dst + base,
                            id,
                        },
                        loc,
                        func,
                    )?;
                }
                Op::Alloc { .. } => return Err(unsupported("allocates memory on the heap")),
                Op::Free(e) => {
                    self.push(F::Free(rename(e, base)), loc, func)?;
                }
                Op::ThreadId { .. } => return Err(unsupported("asks for its thread id")),
                Op::TryLock { .. } => return Err(unsupported("calls trylock")),
                Op::MutexDestroy(_) => return Err(unsupported("destroys a mutex")),
                Op::BarrierArrive { .. } | Op::BarrierPass(_) => {
                    return Err(unsupported("waits at a barrier"))
                }
                Op::CallIndirect { .. } => {
                    return Err(unsupported("calls through a function pointer"))
                }
                Op::ExitProcess => return Err(unsupported("ends the process")),
                Op::Unsupported { message } => {
                    return Err(unsupported(&format!(
                        "reaches something unsupported: {message}"
                    )))
                }
            }
        }
        for (k, t) in fix {
            let (t, else_side) = (t & !(1 << 31), t & (1 << 31) != 0);
            let Some(&target) = map.get(t as usize) else {
                return Err(Refusal::Unsupported(format!(
                    "`{}` jumps out of its code",
                    f.name
                )));
            };
            match &mut self.code[k].0 {
                F::Jump(j) => *j = target,
                F::Branch {
                    then_to, else_to, ..
                } => {
                    if else_side {
                        *else_to = target
                    } else {
                        *then_to = target
                    }
                }
                _ => unreachable!("only jumps are patched"),
            }
        }
        for id in mine {
            self.locals[id].extent = (entry, self.code.len());
        }
        self.calling.pop();
        Ok((entry, returns))
    }
}

type Range = (i128, i128);

/// A range that keeps growing, widened to the least bound of a C integer type that holds
/// it (a counter that wraps at 32 bits stops there), and to every value after that.
fn widen(r: Range, round: u32) -> Range {
    if round > 24 {
        return TOP;
    }
    // Values are sign-extended from their width (the C front-end's canonical form).
    for n in [1u8, 8, 16, 32] {
        for signed in [n > 1, n == 1] {
            let w = wrap_range(TOP, n, signed);
            if r.0 >= w.0 && r.1 <= w.1 {
                return w;
            }
        }
    }
    TOP
}

fn join(a: Option<Range>, b: Range) -> Range {
    match a {
        None => b,
        Some(a) => (a.0.min(b.0), a.1.max(b.1)),
    }
}

fn clamp(r: Range) -> Range {
    if r.0 < TOP.0 || r.1 > TOP.1 {
        TOP
    } else {
        r
    }
}

fn wrap_range(r: Range, bits: u8, signed: bool) -> Range {
    if bits >= 64 {
        return r;
    }
    let m = 1i128 << bits;
    let (lo, hi) = if signed {
        (-m / 2, m / 2 - 1)
    } else {
        (0, m - 1)
    };
    if r.0 >= lo && r.1 <= hi {
        r
    } else {
        (lo, hi)
    }
}

/// A piece of a piecewise-linear value: where it applies, and what it is there.
type Case = (Vec<Lit>, Lin);

struct Builder<'p> {
    prog: &'p Program,
    consts: Vec<Option<Value>>,
    reg_range: Vec<Option<Range>>,
    /// Global cells the threads use, by (object, index).
    cells: Vec<(u32, u32)>,
    cell_index: HashMap<(u32, u32), usize>,
    cell_range: Vec<Option<Range>>,
    mutexes: Vec<(u32, u32)>,
    mutex_index: HashMap<(u32, u32), usize>,
    memory: HashMap<(u32, u32), Value>,
    /// The system's global per register that needs one.
    reg_global: Vec<Option<u32>>,
    cell_global: Vec<u32>,
    /// Per mutex: its state (0 free, 1 held) and holder.
    mutex_global: Vec<(u32, u32)>,
    /// The register that stands for a read-modify-write's old value in its new value.
    old: Option<(Reg, Lin, Range)>,
    locals: Vec<LocalObj>,
    /// Within a block of local steps: the registers computed so far, as values of the
    /// state before the block.
    sigma: HashMap<Reg, Lin>,
}

const OLD: Reg = Reg::MAX;

fn lit(l: Lin, rel: Rel) -> Option<Option<Lit>> {
    // A literal without atoms is decided: `Some(None)` true, `None` false.
    if l.terms.is_empty() {
        let k = l.k;
        let holds = match rel {
            Rel::Eq => k == 0,
            Rel::Ne => k != 0,
            Rel::Le => k <= 0,
            Rel::Lt => k < 0,
        };
        return holds.then_some(None);
    }
    Some(Some(Lit::Arith(l, rel)))
}

fn guarded(g: &[Lit], extra: &[(Lin, Rel)]) -> Option<Vec<Lit>> {
    let mut out = g.to_vec();
    for (l, r) in extra {
        if let Some(x) = lit(l.clone(), *r)? {
            out.push(x);
        }
    }
    Some(out)
}

fn sub(a: &Lin, b: &Lin) -> Lin {
    a.add_scaled(b, -1)
}

fn scale(a: &Lin, f: i64) -> Lin {
    Lin::default().add_scaled(a, f)
}

fn constant(l: &Lin) -> Option<i64> {
    l.terms.is_empty().then_some(l.k)
}

impl Builder<'_> {
    fn reg_const(&self, r: Reg) -> Option<Value> {
        self.consts.get(r as usize).copied().flatten()
    }

    /// The cell an address names: a global's, or a local object's (`LOCAL_BASE + id`).
    fn cell_of(&self, a: &Addr) -> Option<(u32, u32)> {
        if let Addr::Ptr(e) = a {
            let p = Ptr::decode(eval(e, &|r| self.reg_const(r))?)?;
            if let Some(l) = p
                .obj
                .checked_sub(LOCAL_BASE)
                .and_then(|i| self.locals.get(i as usize))
            {
                return (p.offset < l.size).then_some((p.obj, p.offset));
            }
        }
        const_cell(self.prog, a, &|r| self.reg_const(r))
    }

    fn is_local(c: (u32, u32)) -> bool {
        c.0 >= LOCAL_BASE
    }

    /// The cell's value in the system: a global, or the running thread's element.
    fn cell_atom(&self, ci: usize) -> Lin {
        let idx = if Self::is_local(self.cells[ci]) {
            vec![ProcRef::Var(0)]
        } else {
            Vec::new()
        };
        Lin::atom(Atom::Cell(self.cell_global[ci], idx))
    }

    fn set_cell(&self, ci: usize, v: Rhs) -> Update {
        let g = self.cell_global[ci];
        if Self::is_local(self.cells[ci]) {
            Update {
                global: g,
                cases: vec![(
                    Formula::Lit(Lit::Eq(
                        Term::Proc(ProcRef::Var(1)),
                        Term::Proc(ProcRef::Var(0)),
                    )),
                    v,
                )],
                default: Rhs::Lin(Lin::atom(Atom::Cell(g, vec![ProcRef::Var(1)]))),
            }
        } else {
            Update {
                global: g,
                cases: Vec::new(),
                default: v,
            }
        }
    }

    fn range(&self, e: &Expr) -> Range {
        match e {
            Expr::Const(c) => (*c as i128, *c as i128),
            Expr::Reg(r) if *r == OLD => self.old.as_ref().map_or(TOP, |o| o.2),
            Expr::Reg(r) => match self.reg_const(*r) {
                Some(c) => (c as i128, c as i128),
                None => self.reg_range[*r as usize].unwrap_or((0, 0)),
            },
            Expr::AddrOf(..) => TOP,
            Expr::Un(op, a) => {
                let r = self.range(a);
                match op {
                    UnOp::Neg => clamp((-r.1, -r.0)),
                    UnOp::BitNot => clamp((-r.1 - 1, -r.0 - 1)),
                    UnOp::Not => (0, 1),
                    UnOp::Sext(n) => wrap_range(r, *n, true),
                    UnOp::Zext(n) => wrap_range(r, *n, false),
                }
            }
            Expr::Bin(op, a, b) => {
                let (x, y) = (self.range(a), self.range(b));
                use BinOp::*;
                match op {
                    Add => clamp((x.0 + y.0, x.1 + y.1)),
                    Sub => clamp((x.0 - y.1, x.1 - y.0)),
                    Mul | Shl => {
                        let y = if *op == Shl {
                            match constant_expr(b) {
                                Some(k) if (0..62).contains(&k) => (1i128 << k, 1i128 << k),
                                _ => return TOP,
                            }
                        } else {
                            y
                        };
                        if x.0 < -SAFE || x.1 > SAFE || y.0 < -SAFE || y.1 > SAFE {
                            return TOP;
                        }
                        let p = [x.0 * y.0, x.0 * y.1, x.1 * y.0, x.1 * y.1];
                        clamp((*p.iter().min().unwrap(), *p.iter().max().unwrap()))
                    }
                    Eq | Ne | Lt | Le | Gt | Ge | ULt | ULe | UGt | UGe | LogAnd | LogOr => (0, 1),
                    And | Or | Xor if x.0 >= 0 && x.1 <= 1 && y.0 >= 0 && y.1 <= 1 => (0, 1),
                    Min => (x.0.min(y.0), x.1.min(y.1)),
                    Max => (x.0.max(y.0), x.1.max(y.1)),
                    _ => TOP,
                }
            }
        }
    }

    fn atom_reg(&self, r: Reg) -> Result<Lin, Refusal> {
        if r == OLD {
            return Ok(self.old.as_ref().expect("an old value").1.clone());
        }
        if let Some(c) = self.reg_const(r) {
            return Ok(Lin::constant(c));
        }
        if let Some(l) = self.sigma.get(&r) {
            return Ok(l.clone());
        }
        match self.reg_global.get(r as usize).copied().flatten() {
            Some(g) => Ok(Lin::atom(Atom::Cell(g, vec![ProcRef::Var(0)]))),
            // Never written: registers start at 0.
            None => Ok(Lin::constant(0)),
        }
    }

    fn cases(&self, e: &Expr, at: SrcLoc) -> Result<Vec<Case>, Refusal> {
        let r = self.range(e);
        let refuse = |what: String| {
            Refusal::Unsupported(format!(
                "{what} (line {}): the translation keeps values exact and cannot here",
                at.line
            ))
        };
        let arith_ok = |r: Range| r.0 >= -SAFE && r.1 <= SAFE;
        let out: Vec<Case> = match e {
            Expr::Const(_) | Expr::Reg(_)
                if is_local_ptr(match e {
                    Expr::Const(c) => *c,
                    Expr::Reg(x) => self.reg_const(*x).unwrap_or(0),
                    _ => 0,
                }) =>
            {
                return Err(refuse(
                    "a thread uses the address of a local variable as a value".into(),
                ));
            }
            Expr::Const(c) => vec![(Vec::new(), Lin::constant(*c))],
            Expr::Reg(x) => vec![(Vec::new(), self.atom_reg(*x)?)],
            Expr::AddrOf(..) => {
                return Err(refuse(
                    "a thread computes with an address as a value".into(),
                ))
            }
            Expr::Un(op, a) => {
                let ca = self.cases(a, at)?;
                let ra = self.range(a);
                let mut out = Vec::new();
                for (g, l) in ca {
                    match op {
                        UnOp::Neg | UnOp::BitNot => {
                            if !arith_ok(r) {
                                return Err(refuse("a negation of an unbounded value".into()));
                            }
                            let k = if *op == UnOp::BitNot { -1 } else { 0 };
                            out.push((g, scale(&l, -1).add_scaled(&Lin::constant(k), 1)));
                        }
                        UnOp::Not => {
                            out.extend(
                                guarded(&g, &[(l.clone(), Rel::Eq)]).map(|g| (g, Lin::constant(1))),
                            );
                            out.extend(guarded(&g, &[(l, Rel::Ne)]).map(|g| (g, Lin::constant(0))));
                        }
                        UnOp::Sext(n) | UnOp::Zext(n) => {
                            let signed = matches!(op, UnOp::Sext(_));
                            if *n >= 64 || wrap_range(ra, *n, signed) == ra {
                                out.push((g, l));
                                continue;
                            }
                            if !arith_ok(ra) {
                                return Err(refuse(format!(
                                    "a {}-bit value whose range the translation does not know",
                                    n
                                )));
                            }
                            let m = 1i128 << n;
                            let off = if signed { m / 2 } else { 0 };
                            // x - k*m lands in range for k = floor((x + off) / m).
                            let kmin = (ra.0 + off).div_euclid(m);
                            let kmax = (ra.1 + off).div_euclid(m);
                            if kmax - kmin >= MAX_WRAPS {
                                return Err(refuse(format!(
                                    "a {n}-bit value that can wrap around more than {} times",
                                    MAX_WRAPS - 1
                                )));
                            }
                            for k in kmin..=kmax {
                                let lo = (k * m - off) as i64;
                                let hi = (k * m - off + m) as i64;
                                // lo <= x (lo - x <= 0) and x < hi (x - hi < 0).
                                let mut conds = Vec::new();
                                if ra.0 < lo as i128 {
                                    conds.push((sub(&Lin::constant(lo), &l), Rel::Le));
                                }
                                if ra.1 >= hi as i128 {
                                    conds.push((sub(&l, &Lin::constant(hi)), Rel::Lt));
                                }
                                if let Some(g2) = guarded(&g, &conds) {
                                    out.push((
                                        g2,
                                        l.add_scaled(&Lin::constant((k * m) as i64), -1),
                                    ));
                                }
                            }
                        }
                    }
                }
                out
            }
            Expr::Bin(op, a, b) => {
                let (ca, cb) = (self.cases(a, at)?, self.cases(b, at)?);
                let (ra, rb) = (self.range(a), self.range(b));
                let mut out = Vec::new();
                use BinOp::*;
                for (ga, la) in &ca {
                    for (gb, lb) in &cb {
                        let mut g = ga.clone();
                        g.extend(gb.iter().cloned());
                        let bool_of = |conds: &[(Lin, Rel)], v: i64, out: &mut Vec<Case>| {
                            if let Some(g2) = guarded(&g, conds) {
                                out.push((g2, Lin::constant(v)));
                            }
                        };
                        let cmp = |rel: Rel, flip: bool, neg: Rel, out: &mut Vec<Case>| {
                            // a rel b as `a - b rel 0` (or `b - a` flipped).
                            let d = if flip { sub(lb, la) } else { sub(la, lb) };
                            let nd = if flip { sub(la, lb) } else { sub(lb, la) };
                            bool_of(&[(d, rel)], 1, out);
                            bool_of(&[(nd, neg)], 0, out);
                        };
                        match op {
                            Add | Sub => {
                                if !arith_ok(r) {
                                    return Err(refuse(format!(
                                        "`{}` on values the translation cannot bound",
                                        op.symbol()
                                    )));
                                }
                                let f = if *op == Add { 1 } else { -1 };
                                out.push((g, la.add_scaled(lb, f)));
                            }
                            Mul | Shl => {
                                if !arith_ok(r) {
                                    return Err(refuse(format!(
                                        "`{}` on values the translation cannot bound",
                                        op.symbol()
                                    )));
                                }
                                let (x, k) = if *op == Shl {
                                    match constant(lb) {
                                        Some(k) if (0..62).contains(&k) => (la, 1i64 << k),
                                        _ => return Err(refuse("a shift by a variable".into())),
                                    }
                                } else {
                                    match (constant(la), constant(lb)) {
                                        (_, Some(k)) => (la, k),
                                        (Some(k), _) => (lb, k),
                                        _ => {
                                            return Err(refuse("a product of two variables".into()))
                                        }
                                    }
                                };
                                out.push((g, scale(x, k)));
                            }
                            Eq => {
                                bool_of(&[(sub(la, lb), Rel::Eq)], 1, &mut out);
                                bool_of(&[(sub(la, lb), Rel::Ne)], 0, &mut out);
                            }
                            Ne => {
                                bool_of(&[(sub(la, lb), Rel::Ne)], 1, &mut out);
                                bool_of(&[(sub(la, lb), Rel::Eq)], 0, &mut out);
                            }
                            Lt => cmp(Rel::Lt, false, Rel::Le, &mut out),
                            Le => cmp(Rel::Le, false, Rel::Lt, &mut out),
                            Gt => cmp(Rel::Lt, true, Rel::Le, &mut out),
                            Ge => cmp(Rel::Le, true, Rel::Lt, &mut out),
                            ULt | ULe | UGt | UGe => {
                                // As unsigned 64-bit numbers a negative value is above
                                // every non-negative one; with equal signs the order is
                                // the signed one.
                                let signs = |r: Range, l: &Lin| -> Vec<(Vec<(Lin, Rel)>, bool)> {
                                    if r.0 >= 0 {
                                        vec![(vec![], false)]
                                    } else if r.1 < 0 {
                                        vec![(vec![], true)]
                                    } else {
                                        vec![
                                            (vec![(l.clone(), Rel::Lt)], true),
                                            (vec![(scale(l, -1), Rel::Le)], false),
                                        ]
                                    }
                                };
                                for (ca2, na) in signs(ra, la) {
                                    for (cb2, nb) in signs(rb, lb) {
                                        let mut conds = ca2.clone();
                                        conds.extend(cb2.iter().cloned());
                                        if na != nb {
                                            // a <u b iff b is the negative one.
                                            let less = nb;
                                            let v = match op {
                                                ULt | ULe => less,
                                                _ => !less,
                                            };
                                            bool_of(&conds, v as i64, &mut out);
                                            continue;
                                        }
                                        let (rel, flip, neg) = match op {
                                            ULt => (Rel::Lt, false, Rel::Le),
                                            ULe => (Rel::Le, false, Rel::Lt),
                                            UGt => (Rel::Lt, true, Rel::Le),
                                            _ => (Rel::Le, true, Rel::Lt),
                                        };
                                        let d = if flip { sub(lb, la) } else { sub(la, lb) };
                                        let nd = if flip { sub(la, lb) } else { sub(lb, la) };
                                        let mut c1 = conds.clone();
                                        c1.push((d, rel));
                                        bool_of(&c1, 1, &mut out);
                                        let mut c0 = conds;
                                        c0.push((nd, neg));
                                        bool_of(&c0, 0, &mut out);
                                    }
                                }
                            }
                            LogAnd | LogOr | And | Or | Xor => {
                                let boolean = ra.0 >= 0 && ra.1 <= 1 && rb.0 >= 0 && rb.1 <= 1;
                                if matches!(op, And | Or | Xor) && !boolean {
                                    return Err(refuse(format!(
                                        "the bitwise `{}` of values that are not 0 or 1",
                                        op.symbol()
                                    )));
                                }
                                for (ta, ca2) in [(true, Rel::Ne), (false, Rel::Eq)] {
                                    for (tb, cb2) in [(true, Rel::Ne), (false, Rel::Eq)] {
                                        let v = match op {
                                            LogAnd | And => ta && tb,
                                            LogOr | Or => ta || tb,
                                            _ => ta != tb,
                                        };
                                        bool_of(
                                            &[(la.clone(), ca2), (lb.clone(), cb2)],
                                            v as i64,
                                            &mut out,
                                        );
                                    }
                                }
                            }
                            Min | Max => {
                                let (first, second) = if *op == Min { (la, lb) } else { (lb, la) };
                                // min: a where a <= b, else b.
                                if let Some(g2) = guarded(&g, &[(sub(la, lb), Rel::Le)]) {
                                    out.push((g2, first.clone()));
                                }
                                if let Some(g2) = guarded(&g, &[(sub(lb, la), Rel::Lt)]) {
                                    out.push((g2, second.clone()));
                                }
                            }
                            _ => return Err(refuse(format!("the operation `{}`", op.symbol()))),
                        }
                    }
                }
                out
            }
        };
        if out.len() > 64 {
            return Err(refuse("an expression with too many cases".into()));
        }
        Ok(out)
    }
}

fn succs(code: &[(F, SrcLoc, FuncId)], k: usize) -> Vec<usize> {
    let s = match &code[k].0 {
        F::Jump(t) => vec![*t],
        F::Branch {
            then_to, else_to, ..
        } => vec![*then_to, *else_to],
        F::Done => vec![],
        _ => vec![k + 1],
    };
    s.into_iter().filter(|&t| t < code.len()).collect()
}

/// Removes computations nothing observable depends on: a register is relevant when a
/// store, read-modify-write, assertion or assumption reads it, or a relevant branch, or
/// the computation of a relevant register; a branch is relevant unless the code between
/// it and where its two arms meet again is loop-free and only computes irrelevant
/// registers. Irrelevant branches become jumps to where the arms
/// meet, irrelevant computations no-ops. Exact: the removed code always ends and writes
/// nothing that is read again (GenMC's and SV-COMP's `delay *= 2` back-off loops), and
/// without it the engine would track every value such a register can take.
fn slice(code: &mut [(F, SrcLoc, FuncId)], nregs: usize) {
    let n = code.len();
    if n == 0 || n > 4000 {
        return;
    }
    // Where the arms of an irrelevant branch meet: walking forward from both arms
    // through irrelevant code only, every path stops at this one instruction.
    let meet = |k: usize, relevant: &[bool], branch_relevant: &[bool]| -> Option<usize> {
        let mut seen = vec![false; n];
        let mut stop = None;
        let mut work = succs(code, k);
        while let Some(x) = work.pop() {
            // A way back to the branch or before it: a loop, which may not end.
            if x <= k {
                return None;
            }
            if seen[x] {
                continue;
            }
            seen[x] = true;
            let pure = match &code[x].0 {
                F::Local { dst, .. } => !relevant[*dst as usize],
                F::Jump(_) | F::Nop => true,
                F::Branch { .. } => !branch_relevant[x],
                _ => false,
            };
            if pure {
                let next = succs(code, x);
                if next.is_empty() {
                    return None;
                }
                work.extend(next);
            } else if stop.is_some_and(|s| s != x) {
                return None;
            } else {
                stop = Some(x);
            }
        }
        stop
    };
    let mut relevant = vec![false; nregs];
    let mut branch_relevant = vec![false; n];
    loop {
        // Registers, from the observable uses and the relevant branches back.
        let mut grew = true;
        while grew {
            grew = false;
            let mut mark = |r: Reg, rel: &mut Vec<bool>| {
                if let Some(x) = rel.get_mut(r as usize) {
                    if !*x {
                        *x = true;
                        grew = true;
                    }
                }
            };
            for (k, (op, ..)) in code.iter().enumerate() {
                let used: Vec<Reg> = match op {
                    F::Branch { .. } if !branch_relevant[k] => Vec::new(),
                    F::Local { dst, .. } if !relevant[*dst as usize] => Vec::new(),
                    op => reads(op),
                };
                for r in used {
                    mark(r, &mut relevant);
                }
            }
        }
        let mut more = false;
        for k in 0..n {
            if branch_relevant[k] || !matches!(code[k].0, F::Branch { .. }) {
                continue;
            }
            if meet(k, &relevant, &branch_relevant).is_none() {
                branch_relevant[k] = true;
                more = true;
            }
        }
        if !more {
            break;
        }
    }
    let replaced: Vec<Option<F>> = (0..n)
        .map(|k| match &code[k].0 {
            F::Branch { .. } if !branch_relevant[k] => {
                meet(k, &relevant, &branch_relevant).map(F::Jump)
            }
            F::Local { dst, .. } if !relevant[*dst as usize] => Some(F::Nop),
            _ => None,
        })
        .collect();
    for (k, r) in replaced.into_iter().enumerate() {
        if let Some(op) = r {
            code[k].0 = op;
        }
    }
}

/// The registers an instruction reads.
fn reads(op: &F) -> Vec<Reg> {
    let mut v = Vec::new();
    match op {
        F::Local { expr, .. } => expr.regs(&mut v),
        F::Branch { cond, .. } | F::Assert { cond, .. } | F::Assume(cond) => cond.regs(&mut v),
        F::Store { addr, value } => {
            value.regs(&mut v);
            v.extend(addr_regs(addr));
        }
        F::Load { addr, .. } | F::Lock(addr) | F::Unlock(addr) => v.extend(addr_regs(addr)),
        F::Rmw { addr, op, .. } => {
            v.extend(addr_regs(addr));
            match op {
                RmwOp::Cas { expected, new } => {
                    expected.regs(&mut v);
                    new.regs(&mut v);
                }
                RmwOp::FetchAdd(e) | RmwOp::Xchg(e) | RmwOp::Fetch { value: e, .. } => {
                    e.regs(&mut v)
                }
            }
        }
        F::Free(e) => e.regs(&mut v),
        F::Nondet { .. } | F::Alloc { .. } | F::Jump(_) | F::Nop | F::Done => {}
    }
    v
}

/// The register an instruction writes.
fn writes(op: &F) -> Option<Reg> {
    match op {
        F::Local { dst, .. }
        | F::Load { dst, .. }
        | F::Rmw { dst, .. }
        | F::Nondet { dst, .. }
        | F::Alloc { dst, .. } => Some(*dst),
        _ => None,
    }
}

fn addr_regs(a: &Addr) -> Vec<Reg> {
    let mut v = Vec::new();
    match a {
        Addr::Global { index, .. } => index.regs(&mut v),
        Addr::Ptr(e) => e.regs(&mut v),
    }
    v
}

/// Every read of a thread's local variable comes after a write of it (or its allocation
/// zeroed it), on every path: then the system needs no state for "not yet written", and
/// a read never sees a value of the machine's uninitialised memory.
fn definitely_written(b: &Builder, code: &[(F, SrcLoc, FuncId)]) -> Result<(), Refusal> {
    let bit: HashMap<usize, usize> = (0..b.cells.len())
        .filter(|&c| Builder::is_local(b.cells[c]))
        .enumerate()
        .map(|(i, c)| (c, i))
        .collect();
    if bit.is_empty() || code.is_empty() {
        return Ok(());
    }
    let local = |a: &Addr| {
        b.cell_of(a)
            .and_then(|c| b.cell_index.get(&c))
            .and_then(|ci| bit.get(ci).copied())
    };
    let mut at: Vec<Option<Vec<bool>>> = vec![None; code.len()];
    at[0] = Some(vec![false; bit.len()]);
    let mut work = vec![0usize];
    while let Some(k) = work.pop() {
        let mut cur = at[k].clone().expect("visited");
        let (op, loc, func) = &code[k];
        if let F::Load { addr, .. } | F::Rmw { addr, .. } = op {
            if let Some(i) = local(addr) {
                if !cur[i] {
                    let c = b.cell_of(addr).expect("constant");
                    let l = &b.locals[(c.0 - LOCAL_BASE) as usize];
                    return Err(Refusal::Unsupported(format!(
                        "a created thread may read its local `{}` before writing it ({}, line {})",
                        l.name, b.prog.functions[*func as usize].name, loc.line
                    )));
                }
            }
        }
        match op {
            F::Store { addr, .. } | F::Rmw { addr, .. } => {
                if let Some(i) = local(addr) {
                    cur[i] = true;
                }
            }
            F::Alloc { id, .. } => {
                let obj = LOCAL_BASE + *id as u32;
                for (ci, i) in &bit {
                    if b.cells[*ci].0 == obj {
                        cur[*i] = b.locals[*id].zeroed;
                    }
                }
            }
            _ => {}
        }
        let succs: Vec<usize> = match op {
            F::Jump(t) => vec![*t],
            F::Branch {
                then_to, else_to, ..
            } => vec![*then_to, *else_to],
            F::Done => vec![],
            _ => vec![k + 1],
        };
        for s in succs.into_iter().filter(|&s| s < code.len()) {
            let new = match &at[s] {
                None => cur.clone(),
                Some(old) => old.iter().zip(&cur).map(|(x, y)| *x && *y).collect(),
            };
            if at[s].as_ref() != Some(&new) {
                at[s] = Some(new);
                work.push(s);
            }
        }
    }
    Ok(())
}

fn constant_expr(e: &Expr) -> Option<i128> {
    match e {
        Expr::Const(c) => Some(*c as i128),
        _ => None,
    }
}

fn op_text(prog: &Program, b: &Builder, op: &F) -> String {
    let cell = |a: &Addr| match b.cell_of(a) {
        Some((o, _)) if o >= LOCAL_BASE => b.locals[(o - LOCAL_BASE) as usize].name.clone(),
        Some((o, i)) => cell_name(prog, o, i),
        None => "?".into(),
    };
    match op {
        F::Load { addr, .. } => format!("load {}", cell(addr)),
        F::Store { addr, .. } => format!("store {}", cell(addr)),
        F::Rmw { addr, op, .. } => format!(
            "{} {}",
            match op {
                RmwOp::Cas { .. } => "cas",
                RmwOp::FetchAdd(_) => "fetch_add",
                RmwOp::Xchg(_) => "xchg",
                RmwOp::Fetch { .. } => "rmw",
            },
            cell(addr)
        ),
        F::Lock(a) => format!("lock {}", cell(a)),
        F::Unlock(a) => format!("unlock {}", cell(a)),
        F::Assert { text, .. } => format!("assert {text}"),
        F::Assume(_) => "assume".into(),
        F::Nondet { .. } => "input".into(),
        F::Alloc { id, .. } => format!("enter the scope of `{}`", b.locals[*id].name),
        F::Free(_) => "leave a local's scope".into(),
        F::Branch { .. } => "branch".into(),
        F::Local { .. } => "compute".into(),
        F::Jump(_) | F::Nop => "jump".into(),
        F::Done => "return".into(),
    }
}

/// The name of a global cell, as C writes it.
pub fn cell_name(prog: &Program, obj: u32, index: u32) -> String {
    let o = &prog.objects[obj as usize];
    match o.cell_names.get(index as usize) {
        Some(n) if !n.is_empty() => n.clone(),
        _ if o.size == 1 => o.name.clone(),
        _ => format!("{}[{index}]", o.name),
    }
}

/// The program as a parameterized system, if `main` creates threads without bound and
/// they do only what the translation models.
pub fn translate(prog: &Program) -> Result<Translation, Refusal> {
    let sp = spawner(prog)?;
    let froot = &prog.functions[sp.func as usize];
    let mut flat = Flat {
        prog,
        code: Vec::new(),
        nregs: froot.num_regs() as u32,
        calling: Vec::new(),
        locals: Vec::new(),
    };
    flat.inline(sp.func, 0, None, true)?;
    let nregs = flat.nregs as usize;
    let mut code = flat.code;
    slice(&mut code, nregs);
    let locals = flat.locals;
    let alloc_ptrs: Vec<Expr> = (0..locals.len())
        .map(|i| Expr::Const(local_ptr(i)))
        .collect();

    // Registers every definition of which is the same constant (pointers passed down to
    // inlined helpers): they are folded, so that addresses are constant cells.
    let mut defs: Vec<Vec<Option<&Expr>>> = vec![Vec::new(); nregs];
    let arg_expr = Expr::Const(sp.arg);
    if froot.params > 0 {
        defs[0].push(Some(&arg_expr));
    }
    for (op, ..) in &code {
        match op {
            F::Local { dst, expr } => defs[*dst as usize].push(Some(expr)),
            F::Alloc { dst, id } => defs[*dst as usize].push(Some(&alloc_ptrs[*id])),
            F::Load { dst, .. } | F::Rmw { dst, .. } | F::Nondet { dst, .. } => {
                defs[*dst as usize].push(None)
            }
            _ => {}
        }
    }
    let mut consts: Vec<Option<Value>> = vec![None; nregs];
    loop {
        let mut changed = false;
        for r in 0..nregs {
            if consts[r].is_some() || defs[r].is_empty() {
                continue;
            }
            let mut val = None;
            let mut ok = true;
            for d in &defs[r] {
                let v = d.and_then(|e| eval(e, &|x| consts.get(x as usize).copied().flatten()));
                match (v, val) {
                    (Some(v), None) => val = Some(v),
                    (Some(v), Some(w)) if v == w => {}
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok && val.is_some() {
                consts[r] = val;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }

    let mut b = Builder {
        prog,
        consts,
        reg_range: vec![None; nregs],
        cells: Vec::new(),
        cell_index: HashMap::new(),
        cell_range: Vec::new(),
        mutexes: Vec::new(),
        mutex_index: HashMap::new(),
        memory: sp.memory.clone(),
        reg_global: vec![None; nregs],
        cell_global: Vec::new(),
        mutex_global: Vec::new(),
        old: None,
        locals,
        sigma: HashMap::new(),
    };
    // Cells and mutexes, with every address constant.
    for (k, (op, loc, func)) in code.iter().enumerate() {
        let fname = &prog.functions[*func as usize].name;
        if let F::Free(e) = op {
            match eval(e, &|r| b.reg_const(r)) {
                Some(v) if is_local_ptr(v) => continue,
                _ => {
                    return Err(Refusal::Unsupported(format!(
                        "a created thread frees memory that is not its own local variable ({fname}, line {})",
                        loc.line
                    )))
                }
            }
        }
        let addr = match op {
            F::Load { addr, .. }
            | F::Store { addr, .. }
            | F::Rmw { addr, .. }
            | F::Lock(addr)
            | F::Unlock(addr) => addr,
            _ => continue,
        };
        let Some(c) = b.cell_of(addr) else {
            return Err(Refusal::Unsupported(format!(
                "a created thread accesses memory at an address that is not one global variable's ({fname}, line {}): the translation takes constant addresses only",
                loc.line
            )));
        };
        let is_lock = matches!(op, F::Lock(_) | F::Unlock(_));
        if Builder::is_local(c) {
            let l = &b.locals[(c.0 - LOCAL_BASE) as usize];
            if is_lock {
                return Err(Refusal::Unsupported(format!(
                    "a created thread locks a mutex on its stack ({fname}, line {})",
                    loc.line
                )));
            }
            // Outside the call that allocated it, the address is dangling (or another
            // call's object, which the constant cannot tell apart).
            if !(l.extent.0..l.extent.1).contains(&k) {
                return Err(Refusal::Unsupported(format!(
                    "a created thread uses the address of the local `{}` outside its function ({fname}, line {})",
                    l.name, loc.line
                )));
            }
        }
        if is_lock {
            if !b.mutex_index.contains_key(&c) {
                b.mutex_index.insert(c, b.mutexes.len());
                b.mutexes.push(c);
            }
        } else if !b.cell_index.contains_key(&c) {
            b.cell_index.insert(c, b.cells.len());
            b.cells.push(c);
        }
    }
    for m in &b.mutexes {
        if b.cell_index.contains_key(m) {
            return Err(Refusal::Unsupported(format!(
                "a created thread reads or writes the word of the mutex `{}`: the translation models a mutex as its lock state only",
                cell_name(prog, m.0, m.1)
            )));
        }
        let init = b
            .memory
            .get(m)
            .copied()
            .unwrap_or_else(|| prog.objects[m.0 as usize].init_value(m.1));
        if init != 0 {
            return Err(Refusal::Unsupported(format!(
                "the mutex `{}` is not free when the threads start",
                cell_name(prog, m.0, m.1)
            )));
        }
    }
    let init_of = |b: &Builder, c: (u32, u32)| {
        b.memory
            .get(&c)
            .copied()
            .unwrap_or_else(|| prog.objects[c.0 as usize].init_value(c.1))
    };
    b.cell_range = b
        .cells
        .iter()
        .map(|c| {
            if Builder::is_local(*c) {
                let l = &b.locals[(c.0 - LOCAL_BASE) as usize];
                return l.zeroed.then_some((0, 0));
            }
            let v = init_of(&b, *c) as i128;
            Some((v, v))
        })
        .collect();
    definitely_written(&b, &code)?;

    // Interval analysis, flow-insensitive: every register and cell holds values within
    // its range in every reachable state. After some rounds a growing range is widened
    // to all 64-bit values (then operations that need a bound are refused).
    for r in 0..nregs {
        if b.consts[r].is_none() {
            b.reg_range[r] = Some((0, 0));
        }
    }
    let mut round = 0;
    loop {
        round += 1;
        let mut changed = false;
        let before_regs = b.reg_range.clone();
        let before_cells = b.cell_range.clone();
        for (op, ..) in &code {
            match op {
                F::Local { dst, expr } => {
                    let r = b.range(expr);
                    b.reg_range[*dst as usize] = Some(join(b.reg_range[*dst as usize], r));
                }
                F::Load { dst, addr } => {
                    let c = b.cell_index[&b.cell_of(addr).expect("constant")];
                    // A local not yet written in this round: see the next.
                    let Some(r) = b.cell_range[c] else { continue };
                    b.reg_range[*dst as usize] = Some(join(b.reg_range[*dst as usize], r));
                }
                F::Store { addr, value } => {
                    let c = b.cell_index[&b.cell_of(addr).expect("constant")];
                    let r = b.range(value);
                    b.cell_range[c] = Some(join(b.cell_range[c], r));
                }
                F::Rmw { dst, addr, op } => {
                    let c = b.cell_index[&b.cell_of(addr).expect("constant")];
                    let Some(old) = b.cell_range[c] else { continue };
                    b.reg_range[*dst as usize] = Some(join(b.reg_range[*dst as usize], old));
                    let new = match op {
                        RmwOp::Cas { new, .. } => b.range(new),
                        RmwOp::Xchg(v) => b.range(v),
                        RmwOp::FetchAdd(v) => {
                            let v = b.range(v);
                            clamp((old.0 + v.0, old.1 + v.1))
                        }
                        RmwOp::Fetch { op, value, bits } => {
                            b.old = Some((OLD, Lin::constant(0), old));
                            let e = Expr::Un(
                                UnOp::Sext(*bits),
                                Box::new(Expr::bin(*op, Expr::Reg(OLD), value.clone())),
                            );
                            let r = b.range(&e);
                            b.old = None;
                            r
                        }
                    };
                    b.cell_range[c] = Some(join(b.cell_range[c], new));
                }
                F::Nondet { dst, bits } => {
                    let r = if *bits <= 1 {
                        (0, 1)
                    } else {
                        wrap_range(TOP, *bits, true)
                    };
                    b.reg_range[*dst as usize] = Some(join(b.reg_range[*dst as usize], r));
                }
                _ => {}
            }
        }
        for (now, before) in b.reg_range.iter_mut().zip(&before_regs) {
            if now != before {
                changed = true;
                if round > 8 {
                    *now = now.map(|x| widen(x, round));
                }
            }
        }
        for (now, before) in b.cell_range.iter_mut().zip(&before_cells) {
            if now != before {
                changed = true;
                if round > 8 {
                    *now = now.map(|x| widen(x, round));
                }
            }
        }
        if !changed {
            break;
        }
    }

    // The system's variables.
    let mut read = vec![false; nregs];
    for r in code.iter().flat_map(|(op, ..)| reads(op)) {
        if let Some(x) = read.get_mut(r as usize) {
            *x = true;
        }
    }
    let mut globals: Vec<Global> = Vec::new();
    let mut invariants: Vec<Quantified> = Vec::new();
    let mut types: Vec<(String, Vec<String>)> = Vec::new();
    let ends = ["done".to_string(), "error".to_string()];
    let mut locs: Vec<String> = (0..code.len()).map(|k| format!("pc{k}")).collect();
    locs.extend(ends.iter().cloned());
    // A location after each input, where its value is checked against its width.
    let mut inputs: HashMap<usize, u32> = HashMap::new();
    for (k, (op, ..)) in code.iter().enumerate() {
        if matches!(op, F::Nondet { .. }) {
            inputs.insert(k, locs.len() as u32);
            locs.push(format!("input{k}"));
        }
    }
    let done = code.len() as u32;
    let error = done + 1;
    types.push(("loc".into(), locs));
    globals.push(Global {
        name: "pc".into(),
        sort: Sort::Enum(0),
        arity: 1,
        weak: false,
    });
    let range_invariants = |g: u32, r: Range, arity: u8, inv: &mut Vec<Quantified>| {
        if r == TOP {
            return;
        }
        let idx = if arity == 1 {
            vec![ProcRef::Var(0)]
        } else {
            Vec::new()
        };
        let x = Lin::atom(Atom::Cell(g, idx));
        // x < lo: x - lo < 0; x > hi: hi - x < 0.
        for l in [
            x.add_scaled(&Lin::constant(r.0 as i64), -1),
            Lin::constant(r.1 as i64).add_scaled(&x, -1),
        ] {
            inv.push(Quantified {
                vars: arity,
                formula: Formula::Lit(Lit::Arith(l, Rel::Lt)),
            });
        }
    };
    for (r, &is_read) in read.iter().enumerate() {
        if b.consts[r].is_some() || !is_read {
            continue;
        }
        let g = globals.len() as u32;
        let f = &prog.functions[sp.func as usize];
        let name = f
            .reg_names
            .get(r)
            .cloned()
            .unwrap_or_else(|| format!("r{r}"));
        globals.push(Global {
            name: format!("{name}#{r}"),
            sort: Sort::Int,
            arity: 1,
            weak: false,
        });
        b.reg_global[r] = Some(g);
        range_invariants(g, b.reg_range[r].unwrap_or((0, 0)), 1, &mut invariants);
    }
    for (k, c) in b.cells.iter().enumerate() {
        let g = globals.len() as u32;
        let (name, arity) = if Builder::is_local(*c) {
            let l = &b.locals[(c.0 - LOCAL_BASE) as usize];
            (format!("{}#{}[{}]", l.name, c.0 - LOCAL_BASE, c.1), 1)
        } else {
            (cell_name(prog, c.0, c.1), 0)
        };
        globals.push(Global {
            name,
            sort: Sort::Int,
            arity,
            weak: false,
        });
        b.cell_global.push(g);
        range_invariants(g, b.cell_range[k].unwrap_or(TOP), arity, &mut invariants);
    }
    for m in &b.mutexes {
        let name = cell_name(prog, m.0, m.1);
        let g = globals.len() as u32;
        globals.push(Global {
            name: format!("{name}.held"),
            sort: Sort::Int,
            arity: 0,
            weak: false,
        });
        globals.push(Global {
            name: format!("{name}.holder"),
            sort: Sort::Proc,
            arity: 0,
            weak: false,
        });
        b.mutex_global.push((g, g + 1));
    }

    let live = liveness(&code, nregs);
    let mut cuts: Vec<bool> = vec![false; code.len() + 1];
    let (transitions, sites) = loop {
        match blocks(&mut b, &code, &live, &cuts, done, error, &inputs) {
            Ok(x) => break x,
            Err(Cut::Refused(r)) => return Err(r),
            // A loop of local steps only, or a block with too many paths: cut it there.
            Err(Cut::At(k)) => {
                if cuts[k] {
                    return Err(Refusal::Unsupported(
                        "a thread's local computation has too many paths".into(),
                    ));
                }
                cuts[k] = true;
            }
        }
    };

    let z = ProcRef::Var(0);
    let mut init = vec![Formula::Lit(Lit::Eq(
        Term::Atom(Atom::Cell(0, vec![z])),
        Term::Val(0),
    ))];
    for r in 0..nregs {
        if let Some(g) = b.reg_global[r] {
            init.push(Formula::Lit(Lit::Arith(
                Lin::atom(Atom::Cell(g, vec![z])),
                Rel::Eq,
            )));
        }
    }
    for (k, c) in b.cells.iter().enumerate() {
        // A local is never read before it is written: any start value will do.
        let (v, idx) = if Builder::is_local(*c) {
            (0, vec![z])
        } else {
            (init_of(&b, *c), Vec::new())
        };
        init.push(Formula::Lit(Lit::Arith(
            Lin::atom(Atom::Cell(b.cell_global[k], idx)).add_scaled(&Lin::constant(v), -1),
            Rel::Eq,
        )));
    }
    for (held, _) in &b.mutex_global {
        init.push(Formula::Lit(Lit::Arith(
            Lin::atom(Atom::Cell(*held, Vec::new())),
            Rel::Eq,
        )));
    }
    let system = System {
        types,
        globals,
        procs: None,
        init: Quantified {
            vars: 1,
            formula: Formula::And(init),
        },
        unsafe_: vec![Quantified {
            vars: 1,
            formula: Formula::Lit(Lit::Eq(
                Term::Atom(Atom::Cell(0, vec![z])),
                Term::Val(error),
            )),
        }],
        invariants,
        transitions,
        tso: false,
    };
    let instructions = code.len();
    Ok(Translation {
        system,
        sites,
        thread: froot.name.clone(),
        arg: sp.arg,
        instructions,
    })
}

/// Per instruction, the registers live before it (read before any write on some path).
fn liveness(code: &[(F, SrcLoc, FuncId)], nregs: usize) -> Vec<Vec<bool>> {
    let n = code.len();
    let ud: Vec<(Vec<Reg>, Option<Reg>)> = code
        .iter()
        .map(|(op, ..)| (reads(op), writes(op)))
        .collect();
    let mut live = vec![vec![false; nregs]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for k in (0..n).rev() {
            let mut out = vec![false; nregs];
            for s in succs(code, k) {
                for (o, x) in out.iter_mut().zip(&live[s]) {
                    *o |= *x;
                }
            }
            let (u, d) = &ud[k];
            if let Some(d) = d {
                if let Some(x) = out.get_mut(*d as usize) {
                    *x = false;
                }
            }
            for r in u {
                if let Some(x) = out.get_mut(*r as usize) {
                    *x = true;
                }
            }
            if out != live[k] {
                live[k] = out;
                changed = true;
            }
        }
    }
    live
}

/// What a block's first instruction does, before the local steps that follow it.
struct Head {
    guard: Vec<Lit>,
    updates: Vec<Update>,
    sigma: HashMap<Reg, Lin>,
    text: String,
    loc: SrcLoc,
    func: FuncId,
    shows: Option<Shows>,
    /// Where the block goes on: the local steps from here (`None`: it ends at once, at
    /// `to`).
    walk_from: Option<usize>,
    to: u32,
    violation: Option<String>,
}

/// A path through a block's local steps: its guard, the registers it computed, where
/// it is, and the steps it took (a step taken twice is a loop).
type Path = (Vec<Lit>, HashMap<Reg, Lin>, usize, Vec<usize>);

/// Why a block could not be built.
enum Cut {
    /// Instruction `.0` must become a location.
    At(usize),
    Refused(Refusal),
}

/// Paths one block may split into before it is cut in two.
const MAX_PATHS: usize = 64;

/// The transitions: one per path of each block. A block starts at a location (the
/// thread's entry, a step other threads can see, a cut) and runs that step, then every
/// local step after it (computations, branches, assumptions, assertions) up to the next
/// location, as one transition: other threads cannot tell the difference, and the
/// engine has a state per location instead of per instruction. `Err(k)`: instruction `k`
/// must become a location (a loop of local steps, or too many paths).
fn blocks(
    b: &mut Builder,
    code: &[(F, SrcLoc, FuncId)],
    live: &[Vec<bool>],
    cuts: &[bool],
    done: u32,
    error: u32,
    inputs: &HashMap<usize, u32>,
) -> Result<(Vec<Transition>, Vec<Site>), Cut> {
    let prog = b.prog;
    let n = code.len();
    let visible = |op: &F| match op {
        F::Alloc { id, .. } => b.locals[*id].zeroed,
        op => matches!(
            op,
            F::Load { .. }
                | F::Store { .. }
                | F::Rmw { .. }
                | F::Lock(_)
                | F::Unlock(_)
                | F::Nondet { .. }
        ),
    };
    let mut location = vec![false; n];
    if n > 0 {
        location[0] = true;
    }
    for k in 0..n {
        if visible(&code[k].0) || cuts[k] {
            location[k] = true;
        }
        // The input's value is the register's only after the step.
        if matches!(code[k].0, F::Nondet { .. }) && k + 1 < n {
            location[k + 1] = true;
        }
    }
    let me = ProcRef::Var(0);
    let other = ProcRef::Var(1);
    let pc_is = |v: u32| Lit::Eq(Term::Atom(Atom::Cell(0, vec![me])), Term::Val(v));
    let point = || Formula::Lit(Lit::Eq(Term::Proc(other), Term::Proc(me)));
    let set_pc = |v: u32| Update {
        global: 0,
        cases: vec![(point(), Rhs::Term(Term::Val(v)))],
        default: Rhs::Term(Term::Atom(Atom::Cell(0, vec![other]))),
    };
    let set_reg = |b: &Builder, r: Reg, v: Rhs| -> Option<Update> {
        let g = b.reg_global[r as usize]?;
        Some(Update {
            global: g,
            cases: vec![(point(), v)],
            default: Rhs::Lin(Lin::atom(Atom::Cell(g, vec![other]))),
        })
    };
    let set_global = |g: u32, v: Rhs| Update {
        global: g,
        cases: Vec::new(),
        default: v,
    };
    let refused = Cut::Refused;
    let mut transitions = Vec::new();
    let mut sites = Vec::new();
    for p in 0..n {
        if !location[p] {
            continue;
        }
        let (op, loc, func) = &code[p];
        let text = op_text(prog, b, op);
        let cell = |b: &Builder, a: &Addr| b.cell_index[&b.cell_of(a).expect("constant")];
        let shows = |b: &Builder, ci: usize, after: bool| {
            Some(Shows {
                global: b.cell_global[ci],
                per_thread: Builder::is_local(b.cells[ci]),
                after,
            })
        };
        let head = |guard: Vec<Lit>,
                    updates: Vec<Update>,
                    sigma: HashMap<Reg, Lin>,
                    shows: Option<Shows>| Head {
            guard,
            updates,
            sigma,
            text: text.clone(),
            loc: *loc,
            func: *func,
            shows,
            walk_from: Some(p + 1),
            to: 0,
            violation: None,
        };
        b.sigma.clear();
        let mut heads: Vec<Head> = Vec::new();
        match op {
            F::Load { dst, addr } => {
                let ci = cell(b, addr);
                let sigma = HashMap::from([(*dst, b.cell_atom(ci))]);
                heads.push(head(Vec::new(), Vec::new(), sigma, shows(b, ci, false)));
            }
            F::Store { addr, value } => {
                let ci = cell(b, addr);
                for (g, l) in b.cases(value, *loc).map_err(refused)? {
                    let u = vec![b.set_cell(ci, Rhs::Lin(l))];
                    heads.push(head(g, u, HashMap::new(), shows(b, ci, true)));
                }
            }
            F::Rmw { dst, addr, op } => {
                let ci = cell(b, addr);
                let now = b.cell_atom(ci);
                let sigma = HashMap::from([(*dst, now.clone())]);
                let sh = shows(b, ci, false);
                match op {
                    RmwOp::Cas { expected, new } => {
                        let ce = b.cases(expected, *loc).map_err(refused)?;
                        let cn = b.cases(new, *loc).map_err(refused)?;
                        for (ge, le) in &ce {
                            for (gn, ln) in &cn {
                                let mut g = ge.clone();
                                g.extend(gn.iter().cloned());
                                if let Some(g2) = guarded(&g, &[(sub(&now, le), Rel::Eq)]) {
                                    let u = vec![b.set_cell(ci, Rhs::Lin(ln.clone()))];
                                    heads.push(head(g2, u, sigma.clone(), sh));
                                }
                                if let Some(g2) = guarded(&g, &[(sub(&now, le), Rel::Ne)]) {
                                    heads.push(head(g2, Vec::new(), sigma.clone(), sh));
                                }
                            }
                        }
                    }
                    _ => {
                        let old = b.cell_range[ci].unwrap_or(TOP);
                        b.old = Some((OLD, now.clone(), old));
                        let e = match op {
                            RmwOp::Xchg(v) => v.clone(),
                            RmwOp::FetchAdd(v) => Expr::bin(BinOp::Add, Expr::Reg(OLD), v.clone()),
                            RmwOp::Fetch { op, value, bits } => Expr::Un(
                                UnOp::Sext(*bits),
                                Box::new(Expr::bin(*op, Expr::Reg(OLD), value.clone())),
                            ),
                            RmwOp::Cas { .. } => unreachable!("above"),
                        };
                        let cases = b.cases(&e, *loc);
                        b.old = None;
                        for (g, l) in cases.map_err(refused)? {
                            let u = vec![b.set_cell(ci, Rhs::Lin(l))];
                            heads.push(head(g, u, sigma.clone(), sh));
                        }
                    }
                }
            }
            F::Lock(a) => {
                let m = b.mutex_index[&b.cell_of(a).expect("constant")];
                let (held, holder) = b.mutex_global[m];
                let h = Lin::atom(Atom::Cell(held, Vec::new()));
                let u = vec![
                    set_global(held, Rhs::Lin(Lin::constant(1))),
                    set_global(holder, Rhs::Term(Term::Proc(me))),
                ];
                heads.push(head(vec![Lit::Arith(h, Rel::Eq)], u, HashMap::new(), None));
            }
            F::Unlock(a) => {
                let m = b.mutex_index[&b.cell_of(a).expect("constant")];
                let (held, holder) = b.mutex_global[m];
                let h = Lin::atom(Atom::Cell(held, Vec::new()));
                let by = Term::Atom(Atom::Cell(holder, Vec::new()));
                let u = vec![set_global(held, Rhs::Lin(Lin::constant(0)))];
                heads.push(head(
                    vec![
                        Lit::Arith(h.clone(), Rel::Ne),
                        Lit::Eq(by.clone(), Term::Proc(me)),
                    ],
                    u,
                    HashMap::new(),
                    None,
                ));
                for g in [
                    vec![Lit::Arith(h.clone(), Rel::Eq)],
                    vec![Lit::Arith(h, Rel::Ne), Lit::Ne(by.clone(), Term::Proc(me))],
                ] {
                    let mut x = head(g, Vec::new(), HashMap::new(), None);
                    x.walk_from = None;
                    x.to = error;
                    x.violation = Some("unlock of a mutex this thread does not hold".into());
                    heads.push(x);
                }
            }
            F::Nondet { dst, bits } => {
                let next = if p + 1 < n { (p + 1) as u32 } else { done };
                let reg = b.reg_global[*dst as usize];
                let mut x = head(Vec::new(), Vec::new(), HashMap::new(), None);
                x.walk_from = None;
                x.to = next;
                if let Some(g) = reg {
                    // The engine's value is any number: the thread goes on, from a location
                    // of its own, only with one the input's width holds (else it waits for
                    // ever, as a thread may), so that the system stays exact.
                    let aux = inputs[&p];
                    x.updates = set_reg(b, *dst, Rhs::Nondet).into_iter().collect();
                    x.to = aux;
                    let (lo, hi) = if *bits <= 1 {
                        (0, 1)
                    } else {
                        wrap_range(TOP, *bits, true)
                    };
                    let v = Lin::atom(Atom::Cell(g, vec![me]));
                    let guard = vec![
                        Formula::Lit(pc_is(aux)),
                        Formula::Lit(Lit::Arith(
                            Lin::constant(lo as i64).add_scaled(&v, -1),
                            Rel::Le,
                        )),
                        Formula::Lit(Lit::Arith(
                            v.add_scaled(&Lin::constant(hi as i64), -1),
                            Rel::Le,
                        )),
                    ];
                    let function = prog.functions[*func as usize].name.clone();
                    transitions.push(Transition {
                        name: format!("{function}:{} {text} in range", loc.line),
                        params: 1,
                        guard: Formula::And(guard),
                        forall_other: Vec::new(),
                        updates: vec![set_pc(next)],
                        line: loc.line,
                        thread: None,
                        fence: false,
                    });
                    sites.push(Site {
                        loc: *loc,
                        function,
                        text: format!("{text} in range"),
                        shows: None,
                        violation: None,
                    });
                }
                heads.push(x);
            }
            F::Alloc { id, .. } if b.locals[*id].zeroed => {
                let obj = LOCAL_BASE + *id as u32;
                let u = (0..b.cells.len())
                    .filter(|&ci| b.cells[ci].0 == obj)
                    .map(|ci| b.set_cell(ci, Rhs::Lin(Lin::constant(0))))
                    .collect();
                heads.push(head(Vec::new(), u, HashMap::new(), None));
            }
            // The entry or a cut: the block is local steps only, from here.
            _ => {
                let mut x = head(Vec::new(), Vec::new(), HashMap::new(), None);
                x.walk_from = Some(p);
                x.text = if p == 0 { "start" } else { "compute" }.into();
                heads.push(x);
            }
        }
        let mut from_here = 0usize;
        for h in heads {
            let site =
                |h: &Head, at: SrcLoc, func: FuncId, text: String, violation: Option<String>| {
                    Site {
                        loc: at,
                        function: prog.functions[func as usize].name.clone(),
                        text,
                        shows: h.shows,
                        violation,
                    }
                };
            let mut emit = |guard: &[Lit], extra: Vec<Update>, to: u32, s: Site| {
                let mut g = vec![Formula::Lit(pc_is(p as u32))];
                g.extend(guard.iter().cloned().map(Formula::Lit));
                let mut updates = h.updates.clone();
                updates.extend(extra);
                updates.push(set_pc(to));
                transitions.push(Transition {
                    name: format!("{}:{} {}", s.function, s.loc.line, s.text),
                    params: 1,
                    guard: Formula::And(g),
                    forall_other: Vec::new(),
                    updates,
                    line: s.loc.line,
                    thread: None,
                    fence: false,
                });
                sites.push(s);
            };
            let Some(start) = h.walk_from else {
                let s = site(&h, h.loc, h.func, h.text.clone(), h.violation.clone());
                emit(&h.guard, Vec::new(), h.to, s);
                continue;
            };
            // Depth-first over the paths of local steps: (guard, registers, at, seen).
            let mut paths: Vec<Path> = vec![(h.guard.clone(), h.sigma.clone(), start, Vec::new())];
            while let Some((guard, sigma, mut k, mut seen)) = paths.pop() {
                from_here += 1;
                if from_here > MAX_PATHS * 4 {
                    return Err(Cut::At(k.min(n - 1)));
                }
                let end = loop {
                    if k >= n {
                        break done;
                    }
                    let first = k == start && h.walk_from == Some(p);
                    if location[k] && !first {
                        break k as u32;
                    }
                    if seen.contains(&k) {
                        return Err(Cut::At(k));
                    }
                    seen.push(k);
                    let (op, at, func) = &code[k];
                    b.sigma = sigma.clone();
                    match op {
                        F::Jump(t) => k = *t,
                        F::Nop | F::Free(_) => k += 1,
                        F::Alloc { id, .. } if !b.locals[*id].zeroed => k += 1,
                        F::Done => break done,
                        F::Local { dst, expr } => {
                            if b.reg_global[*dst as usize].is_none() {
                                k += 1;
                                continue;
                            }
                            let cases = b.cases(expr, *at).map_err(refused)?;
                            let mut it = cases.into_iter();
                            // No case: the value exists nowhere (contradictory guards).
                            let Some((g0, l0)) = it.next() else {
                                break u32::MAX;
                            };
                            for (g, l) in it {
                                let mut s2 = sigma.clone();
                                s2.insert(*dst, l);
                                let mut g2 = guard.clone();
                                g2.extend(g);
                                paths.push((g2, s2, k + 1, seen.clone()));
                            }
                            let mut s2 = sigma.clone();
                            s2.insert(*dst, l0);
                            let mut g2 = guard.clone();
                            g2.extend(g0);
                            paths.push((g2, s2, k + 1, seen.clone()));
                            break u32::MAX;
                        }
                        F::Branch {
                            cond,
                            then_to,
                            else_to,
                        } => {
                            for (g, l) in b.cases(cond, *at).map_err(refused)? {
                                let mut g1 = guard.clone();
                                g1.extend(g);
                                if let Some(gt) = guarded(&g1, &[(l.clone(), Rel::Ne)]) {
                                    paths.push((gt, sigma.clone(), *then_to, seen.clone()));
                                }
                                if let Some(ge) = guarded(&g1, &[(l, Rel::Eq)]) {
                                    paths.push((ge, sigma.clone(), *else_to, seen.clone()));
                                }
                            }
                            break u32::MAX;
                        }
                        F::Assume(cond) => {
                            for (g, l) in b.cases(cond, *at).map_err(refused)? {
                                let mut g1 = guard.clone();
                                g1.extend(g);
                                if let Some(gt) = guarded(&g1, &[(l, Rel::Ne)]) {
                                    paths.push((gt, sigma.clone(), k + 1, seen.clone()));
                                }
                            }
                            break u32::MAX;
                        }
                        F::Assert { cond, text } => {
                            for (g, l) in b.cases(cond, *at).map_err(refused)? {
                                let mut g1 = guard.clone();
                                g1.extend(g);
                                if let Some(gt) = guarded(&g1, &[(l.clone(), Rel::Ne)]) {
                                    paths.push((gt, sigma.clone(), k + 1, seen.clone()));
                                }
                                if let Some(gf) = guarded(&g1, &[(l, Rel::Eq)]) {
                                    let s = site(
                                        &h,
                                        *at,
                                        *func,
                                        op_text(prog, b, op),
                                        Some(format!("assertion failed: {text}")),
                                    );
                                    emit(&gf, Vec::new(), error, s);
                                }
                            }
                            break u32::MAX;
                        }
                        // Visible steps and zeroed allocations are locations.
                        _ => break k as u32,
                    }
                };
                if end == u32::MAX {
                    continue;
                }
                // The registers the rest of the thread reads get the block's values.
                let live_at = |r: Reg| end != done && live[end as usize][r as usize];
                let mut writes: Vec<(Reg, Lin)> =
                    sigma.into_iter().filter(|(r, _)| live_at(*r)).collect();
                writes.sort_by_key(|w| w.0);
                let extra: Vec<Update> = writes
                    .into_iter()
                    .filter_map(|(r, l)| set_reg(b, r, Rhs::Lin(l)))
                    .collect();
                let s = site(&h, h.loc, h.func, h.text.clone(), None);
                emit(&guard, extra, end, s);
            }
        }
    }
    b.sigma.clear();
    Ok((transitions, sites))
}
