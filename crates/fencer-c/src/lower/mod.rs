//! LLVM IR to program IR.
//!
//! Values: integers narrower than 64 bits are held sign-extended (`i1` as 0 or 1), so every
//! arithmetic result is brought back to its width; unsigned operations look at the
//! zero-extended bits. Pointers are the IR's encoded pointers; memory is a row of byte cells
//! per object and a scalar lives in the cell of its first byte (accesses of different widths
//! that overlap at different offsets are not modelled: see docs/design/c-front-end.md).
//!
//! Memory-model mapping (the standard C11 mappings to x86-TSO and to SPARC PSO):
//! - plain, volatile, relaxed, acquire and seq_cst loads: a load;
//! - plain, volatile and relaxed stores: a store (through the store buffers);
//! - release stores: PSO a store-store fence then the store (`membar #StoreStore`: stores
//!   may overtake stores, loads never overtake anything there), TSO a store;
//! - seq_cst stores: the store then a fence (TSO); a fence, the store, a fence (PSO; the
//!   first could be store-store, as the SPARC mapping has it: with the full fence right
//!   after the store, both allow the same executions);
//! - read-modify-writes (`cmpxchg`, `atomicrmw`, the `__sync_*` and `__atomic_*` builtins):
//!   one indivisible event on memory; it drains the thread's buffers under TSO (x86 locked
//!   instructions); under PSO a full fence comes first when its order is seq_cst (every
//!   `__sync_*` builtin is: GCC documents them as full barriers), a store-store fence when
//!   it is release or acq_rel;
//! - fences: seq_cst (`__sync_synchronize`, `atomic_thread_fence(seq_cst)`, `asm("mfence")`)
//!   a full fence; release and acq_rel (and `asm("sfence")`) a store-store fence under PSO
//!   only (they do not order a store with a later load: modelling them as full fences
//!   would hide executions the hardware has); acquire nothing;
//! - mutex lock/unlock, thread creation and exit drain the buffers (the machine's rules).
//!
//! Under SC every fence is left out: it changes nothing there and would cost an event.
//!
//! Beyond instructions: functions have addresses ([`fencer_ir::func_ptr`]) for calls and
//! thread starts through pointers; thread-local globals hold one copy per thread
//! ([`TLS_THREADS`]); a program that names `reach_error` follows SV-COMP's conventions
//! (calling it is the violation, `abort`/`exit` end the program quietly); `main(argc, argv)`
//! is called with one argument, its name; and an instruction the lowering cannot model
//! becomes [`Op::Unsupported`], refused only if an execution reaches it.

mod atomics;
mod calls;
mod constants;
mod function;
mod instr;
mod memory;
mod pthread;
mod svcomp;

use crate::layout::Layout;
use crate::Error;
use atomics::{scan_text, TextFacts};
use calls::wrapper;
use fencer_ir::{
    Addr, BinOp, Expr, FuncId, Function, Instr, ObjId, ObjKind, Object, Op, Program, Ptr, Reg,
    SrcLoc, ThreadDecl, UnOp, Value,
};
use fencer_memory::ModelKind;
use llvm_ir::{Instruction, Module, Name, Type};
use pthread::{is_tls, joins_with_results};
use std::collections::HashMap;
use svcomp::svcomp_conventions;

/// Largest global whose cells get field names in reports.
const NAMED_CELLS_MAX: u64 = 1 << 16;

struct Ctx<'m> {
    m: &'m Module,
    layout: Layout<'m>,
    model: ModelKind,
    main_file: String,
    files: Vec<String>,
    objects: Vec<Object>,
    globals: HashMap<String, ObjId>,
    funcs: HashMap<String, FuncId>,
    facts: HashMap<String, TextFacts>,
    /// The hidden mutex of `__VERIFIER_atomic_begin`/`end` and `__VERIFIER_atomic_*`.
    atomic_mutex: Option<ObjId>,
    /// Functions the program declares and does not define: their addresses are those of
    /// wrappers that call them directly (see [`calls::wrapper`]).
    stubs: HashMap<String, FuncId>,
    /// Thread-local globals: the size of one copy (see [`TLS_THREADS`]).
    tls: HashMap<String, u64>,
    /// The program follows SV-COMP's conventions (it defines or declares `reach_error`).
    svcomp: bool,
    /// `__VERIFIER_nondet_*()` becomes [`Op::Nondet`] (for the symbolic engine) instead of
    /// refusing the program.
    inputs: bool,
    /// `pthread_cond_wait` may return without a signal (see [`crate::Semantics`]).
    spurious_wakeups: bool,
    /// Some `pthread_cond_wait` was lowered without spurious wake-ups: the report says so.
    cond_waits_exact: bool,
    /// Some `pthread_cond_wait` was lowered with spurious wake-ups: the program then has a
    /// variant without them, for the waits no signal ends (`Program::wait_variant`).
    cond_waits_spurious: bool,
    /// Some `pthread_join` asks for the thread's result: threads then start in a wrapper
    /// that keeps what their function returns (see [`Ctx::thread_entry`]).
    join_results: bool,
    /// The library's `__fencer_tls_exit`, linked in when the program creates TLS keys:
    /// threads then start in a wrapper that runs the keys' destructors when the thread
    /// function returns, and `pthread_exit` runs them first.
    tls_exit: Option<FuncId>,
    /// The results of threads, one pointer-sized slot per thread id.
    results: Option<ObjId>,
    /// Functions the lowering makes (thread wrappers), numbered from `extra_base`.
    extra: Vec<Function>,
    extra_base: FuncId,
    entries: HashMap<Option<FuncId>, FuncId>,
}

/// What a report says when `pthread_cond_wait` was lowered without spurious wake-ups.
pub const NO_SPURIOUS_WAKEUPS: &str =
    "pthread_cond_wait returns only when signalled, and a signal releases the longest-waiting \
     thread: spurious wake-ups, and signals that release another waiter or several, which \
     POSIX allows, are not explored (--no-spurious-wakeups)";

/// Thread-local storage: a `__thread`/`_Thread_local` global is an object holding one copy
/// per thread, copy `t` for the thread with id `t` at offset `t * size`, each initialised
/// with the global's initialiser; a reference to the global in a function is the address
/// of copy 0 plus `tid * size`, the thread id read once at function entry. Threads are
/// numbered in creation order across an execution, so a program that starts more threads
/// than this and reaches thread-local storage in one of them is refused.
pub const TLS_THREADS: u64 = 32;

fn name_str(n: &Name) -> String {
    match n {
        Name::Name(s) => s.to_string(),
        Name::Number(k) => k.to_string(),
    }
}

/// Brings a 64-bit result back to a `bits`-wide integer.
fn wrap(e: Expr, bits: u32) -> Expr {
    match bits {
        64.. => e,
        1 => Expr::Un(UnOp::Zext(1), Box::new(e)),
        b => Expr::Un(UnOp::Sext(b as u8), Box::new(e)),
    }
}

fn zext(e: Expr, bits: u32) -> Expr {
    if bits >= 64 || bits == 1 {
        e
    } else {
        Expr::Un(UnOp::Zext(bits as u8), Box::new(e))
    }
}

fn canon(bits: u32, value: u64) -> Value {
    match bits {
        1 => (value & 1) as Value,
        b if b >= 64 => value as Value,
        b => UnOp::Sext(b as u8).eval(value as Value),
    }
}

/// The address `bytes` past `a`.
fn offset(a: &Addr, bytes: i64) -> Addr {
    match a {
        Addr::Global { obj, index } => Addr::Global {
            obj: *obj,
            index: add(index.clone(), Expr::Const(bytes)),
        },
        Addr::Ptr(p) => Addr::Ptr(add(p.clone(), Expr::Const(bytes))),
    }
}

fn add(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Const(x), Expr::Const(y)) => Expr::Const(x.wrapping_add(*y)),
        (_, Expr::Const(0)) => a,
        (Expr::Const(0), _) => b,
        _ => Expr::bin(BinOp::Add, a, b),
    }
}

fn mul(a: Expr, k: i64) -> Expr {
    match a {
        Expr::Const(x) => Expr::Const(x.wrapping_mul(k)),
        _ if k == 1 => a,
        _ => Expr::bin(BinOp::Mul, a, Expr::Const(k)),
    }
}

pub fn lower(m: &Module, text: &str, file: &str, model: ModelKind) -> Result<Program, Error> {
    lower_with(m, text, file, model, crate::Semantics::default())
}

/// [`lower`], with the given [`crate::Semantics`]. With spurious wake-ups, a program
/// that waits on a condition variable comes with its variant without them
/// ([`Program::wait_variant`]), where a wait no signal ends can be seen.
pub fn lower_with(
    m: &Module,
    text: &str,
    file: &str,
    model: ModelKind,
    semantics: crate::Semantics,
) -> Result<Program, Error> {
    let (mut prog, spurious_waits) = lower_once(m, text, file, model, semantics)?;
    if spurious_waits {
        let exact = crate::Semantics {
            spurious_wakeups: false,
            ..semantics
        };
        prog.wait_variant = Some(Box::new(lower_once(m, text, file, model, exact)?.0));
    }
    Ok(prog)
}

/// One lowering; also whether some `pthread_cond_wait` was lowered with spurious wake-ups.
fn lower_once(
    m: &Module,
    text: &str,
    file: &str,
    model: ModelKind,
    semantics: crate::Semantics,
) -> Result<(Program, bool), Error> {
    let inputs = semantics.inputs;
    let wrappers: Vec<llvm_ir::Function> = m
        .func_declarations
        .iter()
        .filter(|d| !d.name.starts_with("llvm.") && !d.name.starts_with("__VERIFIER_nondet"))
        .map(|d| wrapper(m, d))
        .collect();
    let mut cx = Ctx {
        m,
        layout: Layout { types: &m.types },
        model,
        main_file: file.to_string(),
        files: vec![file.to_string()],
        objects: Vec::new(),
        globals: HashMap::new(),
        funcs: HashMap::new(),
        facts: scan_text(text),
        atomic_mutex: None,
        stubs: HashMap::new(),
        tls: HashMap::new(),
        svcomp: svcomp_conventions(m),
        inputs,
        spurious_wakeups: semantics.spurious_wakeups,
        cond_waits_exact: false,
        cond_waits_spurious: false,
        join_results: joins_with_results(m),
        tls_exit: None,
        results: None,
        extra: Vec::new(),
        extra_base: 0,
        entries: HashMap::new(),
    };
    let gerr = |name: &str, msg: String| Error {
        file: file.to_string(),
        line: 0,
        col: 0,
        message: format!("global `{name}`: {msg}"),
        help: None,
    };
    // Objects first (initialisers may point at any global), then their initial values.
    for g in &m.global_vars {
        let name = name_str(&g.name);
        let Type::PointerType { pointee_type, .. } = g.ty.as_ref() else {
            return Err(gerr(&name, "not a pointer-typed global".into()));
        };
        let one = cx
            .layout
            .size(pointee_type)
            .map_err(|e| gerr(&name, e))?
            .max(1);
        let copies = if is_tls(g) {
            cx.tls.insert(name.clone(), one);
            TLS_THREADS
        } else {
            1
        };
        let size = one * copies;
        if size > fencer_ir::MAX_CELLS as u64 {
            return Err(gerr(
                &name,
                format!(
                    "{size} bytes is larger than fencer's largest object ({} bytes: offsets \
                     within an object are 32 bits)",
                    fencer_ir::MAX_CELLS
                ),
            ));
        }
        // Field names for reports, except in objects too large to name cell by cell (they
        // are named `big+20`): naming costs memory per declared byte, not per touched one.
        let mut cell_names = Vec::new();
        if size <= NAMED_CELLS_MAX {
            let mut leaves = Vec::new();
            cx.layout
                .leaves(pointee_type, 0, "", &mut leaves)
                .map_err(|e| gerr(&name, e))?;
            cell_names = vec![String::new(); size as usize];
            for k in 0..copies {
                let copy = if copies > 1 {
                    format!(" (thread {k})")
                } else {
                    String::new()
                };
                for l in &leaves {
                    if let Some(c) = cell_names.get_mut((k * one + l.offset) as usize) {
                        *c = format!("{name}{}{copy}", l.path);
                    }
                }
            }
        }
        cx.globals.insert(name.clone(), cx.objects.len() as ObjId);
        cx.objects.push(Object {
            name,
            kind: ObjKind::Shared,
            size: size as u32,
            init: Vec::new(),
            is_array: false,
            cell_names,
            loc: SrcLoc::NONE,
        });
    }
    // Function ids before initial values: tables of function pointers hold their addresses.
    let defined: Vec<&llvm_ir::Function> = m
        .functions
        .iter()
        .filter(|f| !f.basic_blocks.is_empty())
        .collect();
    for (i, f) in defined.iter().enumerate() {
        cx.funcs.insert(f.name.clone(), i as FuncId);
    }
    cx.tls_exit = cx.funcs.get("__fencer_tls_exit").copied();
    for (k, w) in wrappers.iter().enumerate() {
        cx.stubs
            .insert(w.name.clone(), (defined.len() + k) as FuncId);
    }
    cx.extra_base = (defined.len() + wrappers.len()) as FuncId;
    for (i, g) in m.global_vars.iter().enumerate() {
        if let Some(c) = &g.initializer {
            let one = cx.tls.get(&name_str(&g.name)).copied();
            let mut cells = Vec::new();
            // A thread-local global has one copy per thread, each with the initial value.
            for k in 0..one.map_or(1, |_| TLS_THREADS) {
                cx.init_const(c, k * one.unwrap_or(0), &mut cells)
                    .map_err(|e| gerr(&name_str(&g.name), e))?;
            }
            let o = &mut cx.objects[i];
            for (k, v) in cells {
                if k < o.size as u64 {
                    o.set_init(k as u32, v);
                }
            }
        }
    }
    let mut functions = Vec::new();
    for f in &defined {
        functions.push(FnLower::new(&mut cx, f).run()?);
    }
    for w in &wrappers {
        functions.push(FnLower::new(&mut cx, w).run()?);
    }
    let Some(&main_fn) = cx.funcs.get("main") else {
        return Err(Error {
            file: file.to_string(),
            line: 0,
            col: 0,
            message: "the program has no `main` function".into(),
            help: Some(
                "fencer runs `main` as the first thread; it creates the others with pthread_create"
                    .into(),
            ),
        });
    };
    functions.append(&mut cx.extra);
    let main = start_main(&mut cx, &mut functions, main_fn, file);
    // Final states show the scalar globals the program declares.
    let mut observe = Vec::new();
    for (i, g) in m.global_vars.iter().enumerate() {
        let name = name_str(&g.name);
        if g.is_constant
            || is_tls(g)
            || name.starts_with('.')
            || name.starts_with("__")
            || name.contains('.')
        {
            continue;
        }
        if let Type::PointerType { pointee_type, .. } = g.ty.as_ref() {
            if matches!(
                pointee_type.as_ref(),
                Type::IntegerType { .. } | Type::PointerType { .. }
            ) {
                observe.push(fencer_ir::CondVar::Cell {
                    obj: i as ObjId,
                    index: 0,
                });
            }
        }
    }
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or(file)
        .to_string();
    let spurious_waits = cx.cond_waits_spurious;
    let prog = Program {
        name: stem,
        files: cx.files,
        objects: cx.objects,
        functions,
        threads: vec![ThreadDecl {
            name: "main".into(),
            func: main,
            arg: 0,
        }],
        cond: None,
        observe,
        observe_explicit: true,
        source_trace: true,
        hang_is_violation: !cx.svcomp,
        assumptions: if cx.cond_waits_exact {
            vec![NO_SPURIOUS_WAKEUPS.into()]
        } else {
            Vec::new()
        },
        uninit_arbitrary: cx.svcomp,
        wait_variant: None,
    };
    Ok((prog, spurious_waits))
}

/// `main` runs as a program started with no arguments: `argc` 1, `argv[0]` the program's
/// name, `argv[1]` NULL. The first thread is a wrapper that calls it so and then ends the
/// process, as returning from `main` does in C; the returned id is that wrapper.
fn start_main(cx: &mut Ctx, functions: &mut Vec<Function>, main: FuncId, file: &str) -> FuncId {
    let params = functions[main as usize].params;
    let args = if params == 0 {
        Vec::new()
    } else {
        main_args(cx, params, file)
    };
    let loc = functions[main as usize].loc;
    functions.push(Function {
        name: "main".into(),
        params: 0,
        reg_names: vec!["%unused".into()],
        body: vec![
            Instr {
                op: Op::Call {
                    dst: None,
                    func: main,
                    args,
                },
                loc,
            },
            // C: returning from `main` calls `exit`.
            Instr {
                op: Op::ExitProcess,
                loc,
            },
        ],
        loc,
    });
    (functions.len() - 1) as FuncId
}

/// `main`'s arguments: `argc` 1, `argv` pointing at the program's name and a NULL, as
/// many of them as `main` takes.
fn main_args(cx: &mut Ctx, params: u32, file: &str) -> Vec<Expr> {
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("program");
    let mut bytes: Vec<Value> = stem.bytes().map(|b| b as Value).collect();
    bytes.push(0);
    let name_obj = cx.objects.len() as ObjId;
    cx.objects.push(Object {
        name: "argv[0]".into(),
        kind: ObjKind::Shared,
        size: bytes.len() as u32,
        init: bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b != 0)
            .map(|(k, &b)| (k as u32, b))
            .collect(),
        is_array: false,
        cell_names: Vec::new(),
        loc: SrcLoc::NONE,
    });
    let argv_obj = cx.objects.len() as ObjId;
    let init = vec![(
        0,
        Ptr {
            obj: name_obj,
            offset: 0,
        }
        .encode(),
    )];
    let mut cell_names = vec![String::new(); 16];
    cell_names[0] = "argv[0]".into();
    cell_names[8] = "argv[1]".into();
    cx.objects.push(Object {
        name: "argv".into(),
        kind: ObjKind::Shared,
        size: 16,
        init,
        is_array: false,
        cell_names,
        loc: SrcLoc::NONE,
    });
    let mut args = vec![
        Expr::Const(1),
        Expr::Const(
            Ptr {
                obj: argv_obj,
                offset: 0,
            }
            .encode(),
        ),
    ];
    args.resize(params.max(2) as usize, Expr::Const(0));
    args.truncate(params as usize);
    args
}

/// A jump target before the layout is known.
#[derive(Clone, Copy)]
enum Target {
    Block(usize),
    Stub(usize),
}

#[derive(Clone, Copy)]
enum Slot {
    Jump,
    Then,
    Else,
}

struct FnLower<'a, 'm> {
    cx: &'a mut Ctx<'m>,
    f: &'m llvm_ir::Function,
    reg_names: Vec<String>,
    regs: HashMap<Name, Reg>,
    /// Stack slots whose address never escapes: held in a register.
    promoted: HashMap<Name, Reg>,
    /// Registers holding the stack objects to free on return.
    stack: Vec<Reg>,
    defs: HashMap<Name, &'m Instruction>,
    block_index: HashMap<Name, usize>,
    body: Vec<Instr>,
    fixups: Vec<(usize, Slot, Target)>,
    /// Phi copies of each edge that needs them: (pred block, succ block, copies).
    stubs: Vec<(usize, Vec<(Reg, Expr)>)>,
    /// For each `cmpxchg`: the registers of the old value and of success.
    cmpxchg: HashMap<Name, (Reg, Reg)>,
    loc: SrcLoc,
    asm_next: usize,
    fence_next: usize,
    stub_count: usize,
    /// The thread id, read at entry, when the program has thread-local globals.
    tid: Option<Reg>,
    /// The error being returned must refuse the program at once, even if never reached.
    fatal: bool,
}
