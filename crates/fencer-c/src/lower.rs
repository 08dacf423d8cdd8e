//! LLVM IR to program IR.
//!
//! Values: integers narrower than 64 bits are held sign-extended (`i1` as 0 or 1), so every
//! arithmetic result is brought back to its width; unsigned operations look at the
//! zero-extended bits. Pointers are the IR's encoded pointers; memory is a row of byte cells
//! per object and a scalar lives in the cell of its first byte (accesses of different widths
//! that overlap at different offsets are not modelled: see ARCHITECTURE.md).
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

use crate::layout::{Layout, Leaf};
use crate::Error;
use fencer_ir::{
    Addr, BinOp, Expr, FenceKind, FuncId, Function, Instr, ObjId, ObjKind, Object, Op, Program,
    Ptr, Reg, RmwOp, SrcLoc, ThreadDecl, UnOp, Value,
};
use fencer_memory::ModelKind;
use llvm_ir::constant::Constant;
use llvm_ir::instruction::{Atomicity, MemoryOrdering, RMWBinOp};
use llvm_ir::terminator::Terminator;
use llvm_ir::types::Typed;
use llvm_ir::{DebugLoc, Instruction, IntPredicate, Module, Name, Operand, Type, TypeRef};
use std::collections::HashMap;

/// The external functions the lowering knows, for the error that lists them.
/// Largest global whose cells get field names in reports.
const NAMED_CELLS_MAX: u64 = 1 << 16;

const KNOWN: &str =
    "pthread_create/join/exit/self/detach/equal/once, pthread_mutex_init/lock/trylock/unlock/\
    destroy, pthread_cond_init/wait/signal/broadcast/destroy, pthread_rwlock_*, \
    pthread_barrier_*, pthread_key_*/getspecific/setspecific, sem_init/wait/trywait/post/\
    getvalue/destroy, malloc, calloc, free, assert, abort, exit, strlen, strnlen, strcpy, \
    strncpy, strcat, strncat, strcmp, strncmp, strchr, strrchr, memcmp, memchr, memcpy, \
    memmove, memset, abs, labs, llabs, __VERIFIER_error/assume/atomic_begin/atomic_end, \
    Nidhugg's __VERIFIER_load_await_*/xchg_await_*, \
    printf and puts (ignored)";

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
    /// wrappers that call them directly (see [`wrapper`]).
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

/// Where a condition variable keeps its state when waits return only when signalled
/// (`--no-spurious-wakeups`): at offset 0 how many waiters signals have released, at
/// offset 8 how many have started waiting. Waiter `t` (the `t`-th to start) waits until
/// more than `t` are released: a signal releases the longest-waiting one, a broadcast all.
const COND_RELEASED: i64 = 0;
const COND_WAITERS: i64 = 8;

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

/// What the LLVM C API does not tell reliably, read from the textual IR per function, in
/// order of appearance: inline-assembly strings (hidden by the API) and each fence's scope
/// and order (LLVM 14's `LLVMGetOrdering` and `LLVMIsAtomicSingleThread` read a fence as if
/// it were another kind of instruction, and return garbage).
#[derive(Default, Clone)]
struct TextFacts {
    asm: Vec<String>,
    fences: Vec<(bool, MemoryOrdering)>,
}

fn scan_text(text: &str) -> HashMap<String, TextFacts> {
    let mut out: HashMap<String, TextFacts> = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("define ") {
            current = rest.find('@').map(|i| {
                let name = &rest[i + 1..];
                let end = name.find('(').unwrap_or(name.len());
                name[..end].trim_matches('"').to_string()
            });
            continue;
        }
        let Some(f) = &current else { continue };
        let code = line.split(", !dbg").next().unwrap_or(line).trim_start();
        if code.starts_with("fence ") {
            let ord = if code.contains("seq_cst") {
                MemoryOrdering::SequentiallyConsistent
            } else if code.contains("acq_rel") {
                MemoryOrdering::AcquireRelease
            } else if code.contains("release") {
                MemoryOrdering::Release
            } else {
                MemoryOrdering::Acquire
            };
            out.entry(f.clone())
                .or_default()
                .fences
                .push((code.contains("syncscope(\"singlethread\")"), ord));
        }
        for marker in [" asm sideeffect ", " asm inteldialect ", " asm "] {
            if let Some(i) = line.find(marker) {
                let rest = &line[i + marker.len()..];
                let rest = rest.trim_start_matches(|c: char| c != '"');
                let body = rest.get(1..).unwrap_or("");
                let end = body.find('"').unwrap_or(body.len());
                out.entry(f.clone())
                    .or_default()
                    .asm
                    .push(unescape(&body[..end]));
                break;
            }
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 2 < b.len() + 1 {
            if let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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

/// Whether the program follows SV-COMP's conventions, one rule for every engine: it names
/// SV-COMP's error function (`reach_error`, or `__VERIFIER_error` in older tasks) or its
/// `assume_abort_if_not`. Then calling the error function is the violation, `abort()`
/// discards the execution (it is how `assume_abort_if_not` assumes), and a hang is no
/// violation (the property is reachability of the error call).
fn svcomp_conventions(m: &Module) -> bool {
    const NAMES: [&str; 3] = ["reach_error", "__VERIFIER_error", "assume_abort_if_not"];
    m.functions.iter().any(|f| NAMES.contains(&f.name.as_str()))
        || m.func_declarations
            .iter()
            .any(|f| NAMES.contains(&f.name.as_str()))
}

/// A function the program declares and does not define, reached through a pointer (a
/// callback such as `free`, a thread start): a function whose body calls it directly, so
/// that the library functions fencer knows work the same both ways, and the others are
/// refused when called.
fn wrapper(m: &Module, d: &llvm_ir::function::FunctionDeclaration) -> llvm_ir::Function {
    let mut f = llvm_ir::Function::new(d.name.clone());
    f.parameters = d.parameters.clone();
    f.return_type = d.return_type.clone();
    f.is_var_arg = d.is_var_arg;
    let ty = m.types.func_type(
        d.return_type.clone(),
        d.parameters.iter().map(|p| p.ty.clone()).collect(),
        d.is_var_arg,
    );
    let callee = Operand::ConstantOperand(llvm_ir::ConstantRef::new(Constant::GlobalReference {
        name: Name::from(d.name.clone()),
        ty,
    }));
    let dest = (!matches!(d.return_type.as_ref(), Type::VoidType))
        .then(|| Name::from("fencer.result".to_string()));
    let call = llvm_ir::instruction::Call {
        function: either::Either::Right(callee),
        arguments: d
            .parameters
            .iter()
            .map(|p| {
                let op = Operand::LocalOperand {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                };
                (op, Vec::new())
            })
            .collect(),
        return_attributes: Vec::new(),
        dest: dest.clone(),
        function_attributes: Vec::new(),
        is_tail_call: false,
        calling_convention: llvm_ir::function::CallingConvention::C,
        debugloc: None,
    };
    let mut bb = llvm_ir::BasicBlock::new(Name::from("entry".to_string()));
    bb.instrs.push(Instruction::Call(call));
    bb.term = Terminator::Ret(llvm_ir::terminator::Ret {
        return_operand: dest.map(|name| Operand::LocalOperand {
            name,
            ty: d.return_type.clone(),
        }),
        debugloc: None,
    });
    f.basic_blocks.push(bb);
    f
}

/// Whether some `pthread_join` is given a result pointer that is not a constant NULL.
fn joins_with_results(m: &Module) -> bool {
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

fn is_tls(g: &llvm_ir::module::GlobalVariable) -> bool {
    g.thread_local_mode != llvm_ir::module::ThreadLocalMode::NotThreadLocal
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

impl<'m> Ctx<'m> {
    fn file_index(&mut self, d: &DebugLoc) -> u16 {
        let name = match &d.directory {
            Some(dir) if dir == crate::RUNTIME_DIR => d.filename.clone(),
            Some(dir) if !d.filename.starts_with('/') && !dir.is_empty() => {
                // Relative to the compiler's directory: shown as written when it is the
                // file the user named.
                if self.main_file.ends_with(&d.filename) {
                    self.main_file.clone()
                } else {
                    format!("{dir}/{}", d.filename)
                }
            }
            _ => d.filename.clone(),
        };
        match self.files.iter().position(|f| *f == name) {
            Some(i) => i as u16,
            None => {
                self.files.push(name);
                (self.files.len() - 1) as u16
            }
        }
    }

    fn pointee(&self, ty: &Type) -> Result<TypeRef, String> {
        match ty {
            Type::PointerType { pointee_type, .. } => Ok(pointee_type.clone()),
            t => Err(format!("expected a pointer, found a value of type `{t}`")),
        }
    }

    /// The value of a constant (scalars, addresses of globals, constant expressions).
    fn const_value(&self, c: &Constant) -> Result<Value, String> {
        Ok(match c {
            Constant::Int { bits, value } => canon(*bits, *value),
            Constant::Null(_) | Constant::AggregateZero(_) => 0,
            Constant::Undef(_) | Constant::Poison(_) => 0,
            Constant::GlobalReference { name, ty } => {
                let n = name_str(name);
                let func = self.funcs.get(&n).or_else(|| self.stubs.get(&n));
                match self.globals.get(&n) {
                    Some(&obj) => Ptr { obj, offset: 0 }.encode(),
                    None if func.is_some() => fencer_ir::func_ptr(*func.expect("checked")),
                    None if matches!(ty.as_ref(), Type::FuncType { .. }) => {
                        return Err(format!(
                            "the address of function `{n}` is used as a value; fencer supports \
                             functions called directly and thread functions named in pthread_create"
                        ))
                    }
                    None => return Err(format!("unknown global `{n}`")),
                }
            }
            Constant::BitCast(b) => self.const_value(&b.operand)?,
            Constant::AddrSpaceCast(b) => self.const_value(&b.operand)?,
            Constant::PtrToInt(b) => self.const_value(&b.operand)?,
            Constant::IntToPtr(b) => self.const_value(&b.operand)?,
            Constant::GetElementPtr(g) => {
                let base = self.const_value(&g.address)?;
                let ty = g.address.get_type(&self.m.types);
                let mut off = 0i64;
                let mut cur = self.pointee(&ty)?;
                for (k, idx) in g.indices.iter().enumerate() {
                    let i = self.const_value(idx)?;
                    if k == 0 {
                        off += i * self.layout.size(&cur)? as i64;
                        continue;
                    }
                    if let Type::StructType { .. } | Type::NamedStructType { .. } =
                        self.resolve(&cur)
                    {
                        off += self.layout.field_offset(&cur, i as usize)? as i64;
                    } else {
                        let e = self.layout.element(&cur, 0)?;
                        off += i * self.layout.size(&e)? as i64;
                    }
                    cur = self.layout.element(&cur, i as usize)?;
                }
                base.wrapping_add(off)
            }
            Constant::Add(a) => self
                .const_value(&a.operand0)?
                .wrapping_add(self.const_value(&a.operand1)?),
            Constant::Sub(a) => self
                .const_value(&a.operand0)?
                .wrapping_sub(self.const_value(&a.operand1)?),
            Constant::Float(_) => return Err("floating point is not supported".into()),
            c => return Err(format!("the constant expression `{c}` is not supported")),
        })
    }

    /// The size of one copy, when the constant is an address inside a thread-local global.
    fn tls_stride(&self, c: &Constant) -> Option<u64> {
        match c {
            Constant::GlobalReference { name, .. } => self.tls.get(&name_str(name)).copied(),
            Constant::BitCast(b) => self.tls_stride(&b.operand),
            Constant::AddrSpaceCast(b) => self.tls_stride(&b.operand),
            Constant::PtrToInt(b) => self.tls_stride(&b.operand),
            Constant::IntToPtr(b) => self.tls_stride(&b.operand),
            Constant::GetElementPtr(g) => self.tls_stride(&g.address),
            Constant::Add(a) => self.tls_stride(&a.operand0),
            Constant::Sub(a) => self.tls_stride(&a.operand0),
            _ => None,
        }
    }

    fn resolve<'a>(&'a self, t: &'a TypeRef) -> &'a Type {
        match t.as_ref() {
            Type::NamedStructType { name } => match self.m.types.named_struct_def(name) {
                Some(llvm_ir::types::NamedStructDef::Defined(d)) => d.as_ref(),
                _ => t.as_ref(),
            },
            other => other,
        }
    }

    /// The scalars of a constant placed from byte `off`, as (byte, value); zeros (in
    /// particular `zeroinitializer`) produce nothing, so a large zeroed global costs nothing.
    fn init_const(
        &self,
        c: &Constant,
        off: u64,
        cells: &mut Vec<(u64, Value)>,
    ) -> Result<(), String> {
        match c {
            Constant::Struct { values, .. } => {
                let ty = c.get_type(&self.m.types);
                for (k, v) in values.iter().enumerate() {
                    let fo = self.layout.field_offset(&ty, k)?;
                    self.init_const(v, off + fo, cells)?;
                }
            }
            Constant::Array {
                element_type,
                elements,
            } => {
                let s = self.layout.size(element_type)?;
                for (i, v) in elements.iter().enumerate() {
                    self.init_const(v, off + i as u64 * s, cells)?;
                }
            }
            Constant::Vector(elements) => {
                for (i, v) in elements.iter().enumerate() {
                    let s = self.layout.size(&v.get_type(&self.m.types))?;
                    self.init_const(v, off + i as u64 * s, cells)?;
                }
            }
            Constant::AggregateZero(_)
            | Constant::Null(_)
            | Constant::Undef(_)
            | Constant::Poison(_) => {}
            c => {
                let v = self.const_value(c)?;
                if v != 0 {
                    cells.push((off, v));
                }
            }
        }
        Ok(())
    }

    /// The NUL-terminated string a constant pointer points at (assertion texts).
    fn c_string(&self, v: Value) -> Option<String> {
        let p = Ptr::decode(v)?;
        let o = self.objects.get(p.obj as usize)?;
        let bytes: Vec<u8> = (p.offset..o.size)
            .map(|k| o.init_value(k))
            .take_while(|&b| b != 0)
            .map(|b| b as u8)
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

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

    fn hidden_mutex(&mut self) -> ObjId {
        if let Some(o) = self.atomic_mutex {
            return o;
        }
        let id = self.objects.len() as ObjId;
        self.objects.push(Object {
            name: "__VERIFIER_atomic".into(),
            kind: ObjKind::Mutex,
            size: 1,
            init: Vec::new(),
            is_array: false,
            cell_names: Vec::new(),
            loc: SrcLoc::NONE,
        });
        self.atomic_mutex = Some(id);
        id
    }
}

fn too_many_results() -> String {
    format!(
        "pthread_join's result of a thread with id {TLS_THREADS} or more\n  help: fencer keeps \
         the results of the first {TLS_THREADS} threads; threads are numbered in creation order"
    )
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

impl<'a, 'm> FnLower<'a, 'm> {
    fn new(cx: &'a mut Ctx<'m>, f: &'m llvm_ir::Function) -> Self {
        let mut s = FnLower {
            cx,
            f,
            reg_names: Vec::new(),
            regs: HashMap::new(),
            promoted: HashMap::new(),
            stack: Vec::new(),
            defs: HashMap::new(),
            block_index: HashMap::new(),
            body: Vec::new(),
            fixups: Vec::new(),
            stubs: Vec::new(),
            cmpxchg: HashMap::new(),
            loc: SrcLoc::NONE,
            asm_next: 0,
            fence_next: 0,
            stub_count: 0,
            tid: None,
            fatal: false,
        };
        if let Some(d) = &f.debugloc {
            let file = s.cx.file_index(d);
            s.loc = SrcLoc::new(file, d.line, d.col.unwrap_or(0));
        }
        for p in &f.parameters {
            s.reg(&p.name);
        }
        if !s.cx.tls.is_empty() {
            s.tid = Some(s.new_reg("%tid.tls".into()));
        }
        s
    }

    fn err(&self, message: impl Into<String>) -> Error {
        Error {
            file: self.cx.files[self.loc.file as usize].clone(),
            line: self.loc.line,
            col: self.loc.col,
            message: format!("in function `{}`: {}", self.f.name, message.into()),
            help: None,
        }
    }

    fn new_reg(&mut self, name: String) -> Reg {
        self.reg_names.push(name);
        (self.reg_names.len() - 1) as Reg
    }

    fn reg(&mut self, n: &Name) -> Reg {
        if let Some(&r) = self.regs.get(n) {
            return r;
        }
        let r = self.new_reg(format!("%{}", name_str(n)));
        self.regs.insert(n.clone(), r);
        r
    }

    fn emit(&mut self, op: Op) {
        self.body.push(Instr { op, loc: self.loc });
    }

    fn set_loc(&mut self, d: &Option<DebugLoc>) {
        if let Some(d) = d {
            let file = self.cx.file_index(d);
            self.loc = SrcLoc::new(file, d.line, d.col.unwrap_or(0));
        }
    }

    fn ty(&self, op: &Operand) -> TypeRef {
        self.cx.m.type_of(op)
    }

    fn bits(&self, op: &Operand) -> u32 {
        match self.ty(op).as_ref() {
            Type::IntegerType { bits } => *bits,
            _ => 64,
        }
    }

    fn operand(&mut self, op: &Operand) -> Result<Expr, Error> {
        match op {
            Operand::LocalOperand { name, .. } => {
                if self.promoted.contains_key(name) {
                    return Err(self.err(format!(
                        "internal: the stack slot {name} is used as a value"
                    )));
                }
                Ok(Expr::Reg(self.reg(name)))
            }
            Operand::ConstantOperand(c) => {
                let v = self.cx.const_value(c).map_err(|e| self.err(e))?;
                match (self.cx.tls_stride(c), self.tid) {
                    (Some(size), Some(tid)) => {
                        Ok(add(Expr::Const(v), mul(Expr::Reg(tid), size as i64)))
                    }
                    _ => Ok(Expr::Const(v)),
                }
            }
            Operand::MetadataOperand => Err(self.err("metadata used as a value")),
        }
    }

    /// A function named by a call or by pthread_create.
    fn callee_name(op: &Operand) -> Option<String> {
        let Operand::ConstantOperand(c) = op else {
            return None;
        };
        let mut c: &Constant = c;
        loop {
            match c {
                Constant::GlobalReference { name, .. } => return Some(name_str(name)),
                Constant::BitCast(b) => c = &b.operand,
                _ => return None,
            }
        }
    }

    fn is_null(op: &Operand) -> bool {
        matches!(op, Operand::ConstantOperand(c) if matches!(c.as_ref(), Constant::Null(_))
            || matches!(c.as_ref(), Constant::Int { value: 0, .. }))
    }

    /// Every operand of the instructions the lowering accepts (for escape analysis).
    fn operands(i: &Instruction) -> Vec<&Operand> {
        use Instruction as I;
        match i {
            I::Add(x) => vec![&x.operand0, &x.operand1],
            I::Sub(x) => vec![&x.operand0, &x.operand1],
            I::Mul(x) => vec![&x.operand0, &x.operand1],
            I::UDiv(x) => vec![&x.operand0, &x.operand1],
            I::SDiv(x) => vec![&x.operand0, &x.operand1],
            I::URem(x) => vec![&x.operand0, &x.operand1],
            I::SRem(x) => vec![&x.operand0, &x.operand1],
            I::And(x) => vec![&x.operand0, &x.operand1],
            I::Or(x) => vec![&x.operand0, &x.operand1],
            I::Xor(x) => vec![&x.operand0, &x.operand1],
            I::Shl(x) => vec![&x.operand0, &x.operand1],
            I::LShr(x) => vec![&x.operand0, &x.operand1],
            I::AShr(x) => vec![&x.operand0, &x.operand1],
            I::ICmp(x) => vec![&x.operand0, &x.operand1],
            I::Load(x) => vec![&x.address],
            I::Store(x) => vec![&x.address, &x.value],
            I::CmpXchg(x) => vec![&x.address, &x.expected, &x.replacement],
            I::AtomicRMW(x) => vec![&x.address, &x.value],
            I::GetElementPtr(x) => {
                let mut v = vec![&x.address];
                v.extend(x.indices.iter());
                v
            }
            I::Trunc(x) => vec![&x.operand],
            I::ZExt(x) => vec![&x.operand],
            I::SExt(x) => vec![&x.operand],
            I::PtrToInt(x) => vec![&x.operand],
            I::IntToPtr(x) => vec![&x.operand],
            I::BitCast(x) => vec![&x.operand],
            I::AddrSpaceCast(x) => vec![&x.operand],
            I::Freeze(x) => vec![&x.operand],
            I::Select(x) => vec![&x.condition, &x.true_value, &x.false_value],
            I::Phi(x) => x.incoming_values.iter().map(|(o, _)| o).collect(),
            I::ExtractValue(x) => vec![&x.aggregate],
            I::Call(x) => x.arguments.iter().map(|(o, _)| o).collect(),
            _ => Vec::new(),
        }
    }

    /// Writes the thread's id to `tid`, and refuses (lazily, with `message`) a thread whose
    /// id has no copy in per-thread storage.
    fn thread_id_below_copies(&mut self, tid: Reg, message: String) {
        self.emit(Op::ThreadId { dst: tid });
        let pc = self.body.len() as u32;
        self.emit(Op::Branch {
            cond: Expr::bin(BinOp::Lt, Expr::Reg(tid), Expr::Const(TLS_THREADS as i64)),
            then_to: pc + 2,
            else_to: pc + 1,
        });
        self.emit(Op::Unsupported { message });
    }

    fn find_promotable(&mut self) {
        let mut candidates: HashMap<Name, TypeRef> = HashMap::new();
        for bb in &self.f.basic_blocks {
            for i in &bb.instrs {
                if let Instruction::Alloca(a) = i {
                    let one = matches!(&a.num_elements, Operand::ConstantOperand(c)
                        if matches!(c.as_ref(), Constant::Int { value: 1, .. }));
                    if one
                        && matches!(
                            a.allocated_type.as_ref(),
                            Type::IntegerType { bits: 1..=64 } | Type::PointerType { .. }
                        )
                    {
                        candidates.insert(a.dest.clone(), a.allocated_type.clone());
                    }
                }
            }
        }
        // Casts of a slot's address to a pointer to a value of the same width (clang's
        // `__atomic` builtins at -O0 reach their temporaries as `i64*`): loads and stores
        // through them are the slot's, and a cast of a cast is the same slot. Each maps to
        // the slot it names.
        let width = |t: &Type| match t {
            Type::IntegerType { bits } => Some(*bits),
            Type::PointerType { .. } => Some(64),
            _ => None,
        };
        let mut casts: HashMap<Name, Name> = HashMap::new();
        for bb in &self.f.basic_blocks {
            for i in &bb.instrs {
                let Instruction::BitCast(b) = i else { continue };
                let Operand::LocalOperand { name, .. } = &b.operand else {
                    continue;
                };
                let slot = casts.get(name).unwrap_or(name).clone();
                let Some(ty) = candidates.get(&slot) else {
                    continue;
                };
                let same = match b.to_type.as_ref() {
                    Type::PointerType { pointee_type, .. } => {
                        width(pointee_type).is_some() && width(pointee_type) == width(ty)
                    }
                    _ => false,
                };
                if same {
                    casts.insert(b.dest.clone(), slot);
                }
            }
        }
        let mut escaped = Vec::new();
        let mut check = |op: &Operand, ok: bool| {
            if let Operand::LocalOperand { name, .. } = op {
                let slot = casts.get(name).unwrap_or(name);
                if !ok && candidates.contains_key(slot) {
                    escaped.push(slot.clone());
                }
            }
        };
        for bb in &self.f.basic_blocks {
            for i in &bb.instrs {
                match i {
                    Instruction::BitCast(b) if casts.contains_key(&b.dest) => {}
                    Instruction::Load(l) => check(&l.address, true),
                    Instruction::Store(s) => {
                        check(&s.address, true);
                        check(&s.value, false);
                    }
                    Instruction::Call(c) => {
                        let name = c.function.as_ref().right().and_then(Self::callee_name);
                        for (k, (a, _)) in c.arguments.iter().enumerate() {
                            // pthread_create's thread-id out-parameter is an assignment.
                            check(a, k == 0 && name.as_deref() == Some("pthread_create"));
                        }
                    }
                    other => {
                        for op in Self::operands(other) {
                            check(op, false);
                        }
                    }
                }
            }
            if let Terminator::Ret(r) = &bb.term {
                if let Some(op) = &r.return_operand {
                    check(op, false);
                }
            }
            if let Terminator::CondBr(c) = &bb.term {
                check(&c.condition, false);
            }
            if let Terminator::Switch(s) = &bb.term {
                check(&s.operand, false);
            }
        }
        for e in escaped {
            candidates.remove(&e);
        }
        let mut names: Vec<(Name, TypeRef)> = candidates.into_iter().collect();
        names.sort_by_key(|(n, _)| n.to_string());
        for (n, _) in names {
            let s = name_str(&n);
            let var = s.strip_suffix(".addr").unwrap_or(&s).to_string();
            let r = self.new_reg(var);
            self.promoted.insert(n, r);
        }
        for (cast, slot) in casts {
            if let Some(&r) = self.promoted.get(&slot) {
                self.promoted.insert(cast, r);
            }
        }
    }

    fn run(mut self) -> Result<Function, Error> {
        let f = self.f;
        for (k, bb) in f.basic_blocks.iter().enumerate() {
            self.block_index.insert(bb.name.clone(), k);
            for i in &bb.instrs {
                if let Some(d) = i.try_get_result() {
                    self.defs.insert(d.clone(), i);
                }
            }
        }
        self.find_promotable();
        if let Some(tid) = self.tid {
            self.thread_id_below_copies(
                tid,
                format!(
                    "in function `{}`: thread-local storage in a thread with id {TLS_THREADS} \
                     or more\n  help: fencer keeps {TLS_THREADS} copies of each thread-local \
                     variable; threads are numbered in creation order",
                    f.name
                ),
            );
        }
        if self.cx.svcomp && f.name == "reach_error" {
            // Reached through a pointer (direct calls are the violation at their call site).
            self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: "reach_error() is not reached".into(),
            });
        }
        let mut starts = Vec::new();
        let mut stub_starts = Vec::new();
        for (k, bb) in f.basic_blocks.iter().enumerate() {
            starts.push(self.body.len());
            for i in &bb.instrs {
                self.set_loc(&llvm_ir::HasDebugLoc::get_debug_loc(i).clone());
                let mark = self.mark();
                if let Err(e) = self.instr(i) {
                    self.refuse_lazily(mark, e)?;
                }
            }
            self.set_loc(&llvm_ir::HasDebugLoc::get_debug_loc(&bb.term).clone());
            let mark = self.mark();
            if let Err(e) = self.terminator(k, &bb.term) {
                self.refuse_lazily(mark, e)?;
            }
            // Edge stubs (the phi copies of an edge, then a jump to its block) right after
            // their block, so that a jump backwards is a loop's back edge and nothing else:
            // loop bounds and spin pruning count back edges.
            let stubs = std::mem::take(&mut self.stubs);
            for (succ, copies) in stubs {
                stub_starts.push(self.body.len());
                self.emit_copies(copies);
                self.fixups
                    .push((self.body.len(), Slot::Jump, Target::Block(succ)));
                self.emit(Op::Jump(0));
            }
        }
        for (pc, slot, target) in std::mem::take(&mut self.fixups) {
            let to = match target {
                Target::Block(b) => starts[b],
                Target::Stub(s) => stub_starts[s],
            } as u32;
            match (&mut self.body[pc].op, slot) {
                (Op::Jump(t), Slot::Jump) => *t = to,
                (Op::Branch { then_to, .. }, Slot::Then) => *then_to = to,
                (Op::Branch { else_to, .. }, Slot::Else) => *else_to = to,
                _ => unreachable!("fixups name the slot they were made for"),
            }
        }
        Ok(Function {
            name: f.name.clone(),
            params: f.parameters.len() as u32,
            reg_names: self.reg_names,
            body: self.body,
            loc: f
                .debugloc
                .as_ref()
                .map(|d| SrcLoc::new(0, d.line, d.col.unwrap_or(0)))
                .unwrap_or(SrcLoc::NONE),
        })
    }

    fn mark(&self) -> (usize, usize, usize, usize) {
        (
            self.body.len(),
            self.fixups.len(),
            self.stubs.len(),
            self.stub_count,
        )
    }

    /// An instruction the lowering cannot model becomes [`Op::Unsupported`] with the error
    /// it would have given, so that the program is refused only by an execution that gets
    /// there; what the instruction had emitted so far is dropped.
    fn refuse_lazily(&mut self, mark: (usize, usize, usize, usize), e: Error) -> Result<(), Error> {
        if std::mem::take(&mut self.fatal) {
            return Err(e);
        }
        self.body.truncate(mark.0);
        self.fixups.truncate(mark.1);
        self.stubs.truncate(mark.2);
        self.stub_count = mark.3;
        let mut message = e.message;
        if let Some(h) = e.help {
            message = format!("{message}\n  help: {h}");
        }
        self.emit(Op::Unsupported { message });
        Ok(())
    }

    fn emit_copies(&mut self, copies: Vec<(Reg, Expr)>) {
        if copies.is_empty() {
            return;
        }
        if copies.len() == 1 {
            let (dst, e) = copies.into_iter().next().expect("one");
            self.emit(Op::Local { dst, expr: e });
            return;
        }
        // A parallel copy: a phi may read another phi of the same block.
        let tmps: Vec<Reg> = copies
            .iter()
            .map(|_| self.new_reg("%phi.tmp".into()))
            .collect();
        for (t, (_, e)) in tmps.iter().zip(&copies) {
            self.emit(Op::Local {
                dst: *t,
                expr: e.clone(),
            });
        }
        for (t, (dst, _)) in tmps.iter().zip(&copies) {
            self.emit(Op::Local {
                dst: *dst,
                expr: Expr::Reg(*t),
            });
        }
    }

    /// The target of an edge; a stub when the successor starts with phis.
    fn target(&mut self, from: usize, to: &Name) -> Result<Target, Error> {
        self.target_with(from, to, false)
    }

    /// A conditional edge: a backward one goes through a stub, so that every back edge is
    /// an unconditional jump (the shape the spin-loop passes recognise).
    fn cond_target(&mut self, from: usize, to: &Name) -> Result<Target, Error> {
        self.target_with(from, to, true)
    }

    fn target_with(&mut self, from: usize, to: &Name, conditional: bool) -> Result<Target, Error> {
        let Some(&succ) = self.block_index.get(to) else {
            return Err(self.err(format!("branch to unknown block {to}")));
        };
        let pred_name = &self.f.basic_blocks[from].name;
        let mut copies = Vec::new();
        for i in &self.f.basic_blocks[succ].instrs {
            let Instruction::Phi(p) = i else { break };
            let Some((v, _)) = p.incoming_values.iter().find(|(_, b)| b == pred_name) else {
                return Err(self.err(format!("phi {} has no value for its predecessor", p.dest)));
            };
            let e = self.operand(v)?;
            let dst = self.reg(&p.dest);
            copies.push((dst, e));
        }
        if copies.is_empty() && !(conditional && succ <= from) {
            return Ok(Target::Block(succ));
        }
        self.stubs.push((succ, copies));
        self.stub_count += 1;
        Ok(Target::Stub(self.stub_count - 1))
    }

    fn jump(&mut self, t: Target) {
        self.fixups.push((self.body.len(), Slot::Jump, t));
        self.emit(Op::Jump(0));
    }

    fn terminator(&mut self, k: usize, t: &Terminator) -> Result<(), Error> {
        match t {
            Terminator::Ret(r) => {
                let v = match &r.return_operand {
                    Some(o) => Some(self.operand(o)?),
                    None => None,
                };
                // Returning from `main` ends the process (the wrapper that called it
                // exits): its locals live on for the threads still running until then.
                if self.f.name != "main" {
                    for s in self.stack.clone().into_iter().rev() {
                        self.emit(Op::Free(Expr::Reg(s)));
                    }
                }
                self.emit(Op::Return(v));
            }
            Terminator::Br(b) => {
                let t = self.target(k, &b.dest)?;
                self.jump(t);
            }
            Terminator::CondBr(c) => {
                let cond = self.operand(&c.condition)?;
                let a = self.cond_target(k, &c.true_dest)?;
                let b = self.cond_target(k, &c.false_dest)?;
                let pc = self.body.len();
                self.fixups.push((pc, Slot::Then, a));
                self.fixups.push((pc, Slot::Else, b));
                self.emit(Op::Branch {
                    cond,
                    then_to: 0,
                    else_to: 0,
                });
            }
            Terminator::Switch(s) => {
                let v = self.operand(&s.operand)?;
                for (c, dest) in &s.dests {
                    let cv = self.cx.const_value(c).map_err(|e| self.err(e))?;
                    let t = self.cond_target(k, dest)?;
                    let pc = self.body.len();
                    self.fixups.push((pc, Slot::Then, t));
                    self.emit(Op::Branch {
                        cond: Expr::bin(BinOp::Eq, v.clone(), Expr::Const(cv)),
                        then_to: 0,
                        else_to: pc as u32 + 1,
                    });
                }
                let t = self.target(k, &s.default_dest)?;
                self.jump(t);
            }
            Terminator::Unreachable(_) => {
                // Reached only after calls that do not return (assert, abort, exit), whose
                // lowering already ends the thread; reaching it otherwise is undefined
                // behaviour, reported as a violation.
                self.emit(Op::Assert {
                    cond: Expr::Const(0),
                    text: "unreachable code is not reached".into(),
                });
            }
            other => return Err(self.err(format!("the terminator `{other}` is not supported"))),
        }
        Ok(())
    }

    fn addr(&mut self, op: &Operand) -> Result<Addr, Error> {
        Ok(Addr::Ptr(self.operand(op)?))
    }

    /// A full fence under PSO only (TSO's read-modify-writes drain the buffer anyway).
    fn pso_fence(&mut self) {
        if self.cx.model == ModelKind::Pso {
            self.emit(Op::Fence(FenceKind::Full));
        }
    }

    /// A store-store fence, which orders something under PSO only: TSO and SC keep store
    /// order, and an event that changes nothing would only cost exploration.
    fn store_fence(&mut self) {
        if self.cx.model == ModelKind::Pso {
            self.emit(Op::Fence(FenceKind::StoreStore));
        }
    }

    fn full_fence(&mut self) {
        if self.cx.model != ModelKind::Sc {
            self.emit(Op::Fence(FenceKind::Full));
        }
    }

    /// A fence before a read-modify-write of this order under PSO: a full one for seq_cst,
    /// a store-store one for release and acq_rel (TSO read-modify-writes drain the buffer
    /// by themselves).
    fn rmw_fence(&mut self, a: &Atomicity) {
        match a.mem_ordering {
            MemoryOrdering::SequentiallyConsistent => self.pso_fence(),
            MemoryOrdering::Release | MemoryOrdering::AcquireRelease => self.store_fence(),
            _ => {}
        }
    }

    fn local(&mut self, dest: &Name, expr: Expr) {
        let dst = self.reg(dest);
        self.emit(Op::Local { dst, expr });
    }

    fn binop(
        &mut self,
        dest: &Name,
        op: BinOp,
        a: &Operand,
        b: &Operand,
        how: Arith,
    ) -> Result<(), Error> {
        let bits = self.bits(a);
        let (x, y) = (self.operand(a)?, self.operand(b)?);
        let e = match how {
            Arith::Wrap => wrap(Expr::bin(op, x, y), bits),
            Arith::Exact => Expr::bin(op, x, y),
            Arith::Unsigned => wrap(Expr::bin(op, zext(x, bits), zext(y, bits)), bits),
        };
        self.local(dest, e);
        Ok(())
    }

    fn instr(&mut self, i: &'m Instruction) -> Result<(), Error> {
        use Instruction as I;
        match i {
            I::Add(x) => self.binop(&x.dest, BinOp::Add, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::Sub(x) => self.binop(&x.dest, BinOp::Sub, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::Mul(x) => self.binop(&x.dest, BinOp::Mul, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::SDiv(x) => self.binop(&x.dest, BinOp::Div, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::SRem(x) => self.binop(&x.dest, BinOp::Rem, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::UDiv(x) => self.binop(
                &x.dest,
                BinOp::UDiv,
                &x.operand0,
                &x.operand1,
                Arith::Unsigned,
            )?,
            I::URem(x) => self.binop(
                &x.dest,
                BinOp::URem,
                &x.operand0,
                &x.operand1,
                Arith::Unsigned,
            )?,
            I::Shl(x) => self.binop(&x.dest, BinOp::Shl, &x.operand0, &x.operand1, Arith::Wrap)?,
            I::AShr(x) => {
                self.binop(&x.dest, BinOp::Shr, &x.operand0, &x.operand1, Arith::Exact)?
            }
            I::LShr(x) => {
                let bits = self.bits(&x.operand0);
                let (a, b) = (self.operand(&x.operand0)?, self.operand(&x.operand1)?);
                let e = wrap(Expr::bin(BinOp::LShr, zext(a, bits), b), bits);
                self.local(&x.dest, e);
            }
            I::And(x) => self.binop(&x.dest, BinOp::And, &x.operand0, &x.operand1, Arith::Exact)?,
            I::Or(x) => self.binop(&x.dest, BinOp::Or, &x.operand0, &x.operand1, Arith::Exact)?,
            I::Xor(x) => self.binop(&x.dest, BinOp::Xor, &x.operand0, &x.operand1, Arith::Exact)?,
            I::ICmp(x) => {
                // Sign extension keeps both the signed and the unsigned order of N-bit values.
                let op = match x.predicate {
                    IntPredicate::EQ => BinOp::Eq,
                    IntPredicate::NE => BinOp::Ne,
                    IntPredicate::SLT => BinOp::Lt,
                    IntPredicate::SLE => BinOp::Le,
                    IntPredicate::SGT => BinOp::Gt,
                    IntPredicate::SGE => BinOp::Ge,
                    IntPredicate::ULT => BinOp::ULt,
                    IntPredicate::ULE => BinOp::ULe,
                    IntPredicate::UGT => BinOp::UGt,
                    IntPredicate::UGE => BinOp::UGe,
                };
                self.binop(&x.dest, op, &x.operand0, &x.operand1, Arith::Exact)?
            }
            I::Trunc(x) => {
                let bits = match x.to_type.as_ref() {
                    Type::IntegerType { bits } => *bits,
                    _ => 64,
                };
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, wrap(e, bits));
            }
            I::ZExt(x) => {
                let bits = self.bits(&x.operand);
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, zext(e, bits));
            }
            I::SExt(x) => {
                let bits = self.bits(&x.operand);
                let e = self.operand(&x.operand)?;
                let e = if bits == 1 {
                    Expr::Un(UnOp::Neg, Box::new(e))
                } else {
                    e
                };
                self.local(&x.dest, e);
            }
            I::PtrToInt(x) => {
                let e = self.operand(&x.operand)?;
                let bits = match x.to_type.as_ref() {
                    Type::IntegerType { bits } => *bits,
                    _ => 64,
                };
                // A pointer's low 32 bits are its offset, 0 at an object's start; folding
                // the object in keeps a non-null pointer non-zero when a program converts it
                // to `int` (SV-COMP's `assume_abort_if_not(p)`, written for 32-bit targets).
                let e = if bits < 64 {
                    Expr::bin(
                        BinOp::Xor,
                        e.clone(),
                        Expr::bin(
                            BinOp::Shl,
                            Expr::bin(BinOp::LShr, e, Expr::Const(32)),
                            Expr::Const(20),
                        ),
                    )
                } else {
                    e
                };
                self.local(&x.dest, wrap(e, bits));
            }
            I::IntToPtr(x) => {
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::BitCast(x) => {
                if self.promoted.contains_key(&x.dest) {
                    return Ok(());
                }
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::AddrSpaceCast(x) => {
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::Freeze(x) => {
                let e = self.operand(&x.operand)?;
                self.local(&x.dest, e);
            }
            I::Select(x) => {
                // b + c * (a - b), with c 0 or 1: one local expression for `c ? a : b`.
                let c = self.operand(&x.condition)?;
                let a = self.operand(&x.true_value)?;
                let b = self.operand(&x.false_value)?;
                let e = Expr::bin(
                    BinOp::Add,
                    b.clone(),
                    Expr::bin(BinOp::Mul, c, Expr::bin(BinOp::Sub, a, b)),
                );
                self.local(&x.dest, e);
            }
            I::Phi(_) => {}
            I::Alloca(a) => {
                if self.promoted.contains_key(&a.dest) {
                    return Ok(());
                }
                let size = self
                    .cx
                    .layout
                    .size(&a.allocated_type)
                    .map_err(|e| self.err(e))?;
                let n = self.operand(&a.num_elements)?;
                let dst = self.reg(&a.dest);
                self.emit(Op::Alloc {
                    dst,
                    size: mul(n, size.max(1) as i64),
                    zeroed: false,
                    stack: true,
                });
                self.stack.push(dst);
            }
            I::Load(l) => {
                let dst = self.reg(&l.dest);
                if let Operand::LocalOperand { name, .. } = &l.address {
                    if let Some(&p) = self.promoted.get(name) {
                        self.emit(Op::Local {
                            dst,
                            expr: Expr::Reg(p),
                        });
                        return Ok(());
                    }
                }
                let ty = self
                    .cx
                    .pointee(&self.ty(&l.address))
                    .map_err(|e| self.err(e))?;
                let bits = match ty.as_ref() {
                    Type::IntegerType { bits } => *bits,
                    Type::PointerType { .. } => 64,
                    t => {
                        return Err(
                            self.err(format!("loads of values of type `{t}` are not supported"))
                        )
                    }
                };
                let addr = self.addr(&l.address)?;
                self.emit(Op::Load {
                    dst,
                    addr,
                    copy: false,
                });
                if bits < 64 {
                    // A narrower load of a wider stored value reads its low bytes.
                    self.emit(Op::Local {
                        dst,
                        expr: wrap(Expr::Reg(dst), bits),
                    });
                }
            }
            I::Store(s) => {
                if let Operand::LocalOperand { name, .. } = &s.address {
                    if let Some(&p) = self.promoted.get(name) {
                        let v = self.operand(&s.value)?;
                        self.emit(Op::Local { dst: p, expr: v });
                        return Ok(());
                    }
                }
                match self.ty(&s.value).as_ref() {
                    Type::IntegerType { .. } | Type::PointerType { .. } => {}
                    t => {
                        return Err(
                            self.err(format!("stores of values of type `{t}` are not supported"))
                        )
                    }
                }
                let value = self.operand(&s.value)?;
                let addr = self.addr(&s.address)?;
                let ord = s.atomicity.as_ref().map(|a| a.mem_ordering);
                let release = matches!(
                    ord,
                    Some(MemoryOrdering::Release | MemoryOrdering::SequentiallyConsistent)
                );
                if ord == Some(MemoryOrdering::SequentiallyConsistent) {
                    self.pso_fence();
                } else if release {
                    self.store_fence();
                }
                self.emit(Op::Store { addr, value });
                if ord == Some(MemoryOrdering::SequentiallyConsistent) {
                    self.full_fence();
                }
            }
            I::Fence(_) => {
                let Some((single, ord)) = self
                    .cx
                    .facts
                    .get(&self.f.name)
                    .and_then(|f| f.fences.get(self.fence_next).copied())
                else {
                    return Err(self.err("a fence whose order cannot be read"));
                };
                self.fence_next += 1;
                if single {
                    // atomic_signal_fence: orders against signal handlers only.
                    return Ok(());
                }
                match ord {
                    MemoryOrdering::SequentiallyConsistent => self.full_fence(),
                    MemoryOrdering::Release | MemoryOrdering::AcquireRelease => self.store_fence(),
                    _ => {}
                }
            }
            I::CmpXchg(x) => {
                self.rmw_fence(&x.atomicity);
                let addr = self.addr(&x.address)?;
                let expected = self.operand(&x.expected)?;
                let new = self.operand(&x.replacement)?;
                let name = name_str(&x.dest);
                let old = self.new_reg(format!("%{name}.old"));
                let ok = self.new_reg(format!("%{name}.ok"));
                self.emit(Op::Rmw {
                    dst: old,
                    addr,
                    op: RmwOp::Cas {
                        expected: expected.clone(),
                        new,
                    },
                });
                self.emit(Op::Local {
                    dst: ok,
                    expr: Expr::bin(BinOp::Eq, Expr::Reg(old), expected),
                });
                self.cmpxchg.insert(x.dest.clone(), (old, ok));
            }
            I::AtomicRMW(x) => {
                self.rmw_fence(&x.atomicity);
                let bits = self.bits(&x.value);
                let addr = self.addr(&x.address)?;
                let value = self.operand(&x.value)?;
                let dst = self.reg(&x.dest);
                let fetch = |op| RmwOp::Fetch {
                    op,
                    value: value.clone(),
                    bits: bits as u8,
                };
                let op = match x.operation {
                    RMWBinOp::Xchg => RmwOp::Xchg(value.clone()),
                    RMWBinOp::Add if bits == 64 => RmwOp::FetchAdd(value.clone()),
                    RMWBinOp::Add => fetch(BinOp::Add),
                    RMWBinOp::Sub => fetch(BinOp::Sub),
                    RMWBinOp::And => fetch(BinOp::And),
                    RMWBinOp::Nand => fetch(BinOp::Nand),
                    RMWBinOp::Or => fetch(BinOp::Or),
                    RMWBinOp::Xor => fetch(BinOp::Xor),
                    RMWBinOp::Max => fetch(BinOp::Max),
                    RMWBinOp::Min => fetch(BinOp::Min),
                    RMWBinOp::UMax => fetch(BinOp::UMax),
                    RMWBinOp::UMin => fetch(BinOp::UMin),
                    other => {
                        return Err(
                            self.err(format!("the atomic operation `{other:?}` is not supported"))
                        )
                    }
                };
                self.emit(Op::Rmw { dst, addr, op });
            }
            I::ExtractValue(x) => {
                let src = match &x.aggregate {
                    Operand::LocalOperand { name, .. } => self.cmpxchg.get(name).copied(),
                    _ => None,
                };
                let Some((old, ok)) = src else {
                    return Err(self.err(
                        "aggregate values (structs passed by value) are not supported, except \
                         the result of a compare-and-swap",
                    ));
                };
                let r = if x.indices.first() == Some(&0) {
                    old
                } else {
                    ok
                };
                self.local(&x.dest, Expr::Reg(r));
            }
            I::GetElementPtr(g) => {
                let base = self.operand(&g.address)?;
                let mut cur = self
                    .cx
                    .pointee(&self.ty(&g.address))
                    .map_err(|e| self.err(e))?;
                let mut e = base;
                for (k, idx) in g.indices.iter().enumerate() {
                    let ix = self.operand(idx)?;
                    if k > 0 {
                        let is_struct = matches!(
                            self.cx.resolve(&cur),
                            Type::StructType { .. } | Type::NamedStructType { .. }
                        );
                        if is_struct {
                            let Expr::Const(fi) = ix else {
                                return Err(self.err("a struct field chosen at run time"));
                            };
                            let off = self
                                .cx
                                .layout
                                .field_offset(&cur, fi as usize)
                                .map_err(|m| self.err(m))?;
                            e = add(e, Expr::Const(off as i64));
                            cur = self
                                .cx
                                .layout
                                .element(&cur, fi as usize)
                                .map_err(|m| self.err(m))?;
                            continue;
                        }
                        cur = self.cx.layout.element(&cur, 0).map_err(|m| self.err(m))?;
                    }
                    let size = self.cx.layout.size(&cur).map_err(|m| self.err(m))?;
                    e = add(e, mul(ix, size as i64));
                }
                self.local(&g.dest, e);
            }
            I::Call(c) => self.call(c)?,
            other => {
                let what = match other {
                    I::FAdd(_)
                    | I::FSub(_)
                    | I::FMul(_)
                    | I::FDiv(_)
                    | I::FRem(_)
                    | I::FNeg(_)
                    | I::FCmp(_)
                    | I::FPToSI(_)
                    | I::FPToUI(_)
                    | I::SIToFP(_)
                    | I::UIToFP(_)
                    | I::FPExt(_)
                    | I::FPTrunc(_) => {
                        "floating point is not supported (fencer models integers and pointers)"
                            .to_string()
                    }
                    o => format!("the instruction `{o}` is not supported"),
                };
                return Err(self.err(what));
            }
        }
        Ok(())
    }

    fn arg(&mut self, c: &llvm_ir::instruction::Call, k: usize) -> Result<Expr, Error> {
        match c.arguments.get(k) {
            Some((o, _)) => self.operand(o),
            None => Err(self.err(format!("expected at least {} arguments", k + 1))),
        }
    }

    fn set_result(&mut self, c: &llvm_ir::instruction::Call, e: Expr) {
        if let Some(d) = &c.dest {
            self.local(d, e);
        }
    }

    /// Nidhugg's awaits (`nidhugg_await.h`): `__VERIFIER_load_await_T(p, cond, operand)`
    /// returns `*p` once `*p cond operand` holds, and `__VERIFIER_xchg_await_T(p, v, cond,
    /// operand)` also writes `v` in the same atomic step; until then the thread waits.
    /// `cond` is Nidhugg's bit set, constant: 8 signed, 4 less, 2 equal, 1 greater (`0b010`
    /// is `==`, `0b101` is `!=`, `0b1100` signed `<`). The wait is a loop whose iterations
    /// that find the condition false only read, so the spin-loop rewrite turns it into
    /// the blocking step the await is: one execution per value it can return, and a
    /// wait nothing ends is a hang. The exchange is a compare-and-swap of the value that
    /// satisfied the condition, so it writes only while that value is still there.
    fn await_call(&mut self, c: &'m llvm_ir::instruction::Call, name: &str) -> Result<(), Error> {
        let xchg = name.starts_with("__VERIFIER_xchg_await");
        let bits = match self.cx.m.type_of(c).as_ref() {
            Type::IntegerType { bits } => *bits,
            t => {
                return Err(self.err(format!(
                    "`{name}` returns `{t}`: an await reads an integer (Nidhugg's `_i8` to `_i64`)"
                )))
            }
        };
        let k = usize::from(xchg);
        if c.arguments.len() < k + 3 {
            return Err(self.err(format!(
                "`{name}` takes {} arguments (the address, {}the condition and its operand)",
                k + 3,
                if xchg { "the value to write, " } else { "" }
            )));
        }
        let addr = self.addr(&c.arguments[0].0)?;
        let new = if xchg { Some(self.arg(c, 1)?) } else { None };
        let cond = self.arg(c, k + 1)?;
        let operand = wrap(self.arg(c, k + 2)?, bits);
        let old = self.new_reg("%await".into());
        let rel = |op: BinOp| Expr::bin(op, Expr::Reg(old), operand.clone());
        let holds = match cond {
            // The usual case, and a readable condition in traces.
            Expr::Const(cond) => {
                let signed = cond & 0b1000 != 0;
                let rels: Vec<BinOp> = [
                    (0b0100, if signed { BinOp::Lt } else { BinOp::ULt }),
                    (0b0010, BinOp::Eq),
                    (0b0001, if signed { BinOp::Gt } else { BinOp::UGt }),
                ]
                .into_iter()
                .filter(|(bit, _)| cond & bit != 0)
                .map(|(_, op)| op)
                .collect();
                if rels.is_empty() || cond & !0b1111 != 0 {
                    return Err(self.err(format!(
                        "`{name}`: condition {cond:#b} is not one of Nidhugg's (bits 8 signed, 4 less, 2 equal, 1 greater, at least one of the last three)"
                    )));
                }
                rels.into_iter()
                    .map(rel)
                    .reduce(|a, b| Expr::bin(BinOp::LogOr, a, b))
                    .expect("a relation")
            }
            // A condition passed down at run time (Nidhugg's tests wrap the call).
            cond => {
                let bit = |b: i64| {
                    Expr::bin(
                        BinOp::Ne,
                        Expr::bin(BinOp::And, cond.clone(), Expr::Const(b)),
                        Expr::Const(0),
                    )
                };
                let either = |signed_op: BinOp, unsigned_op: BinOp| {
                    Expr::bin(
                        BinOp::LogOr,
                        Expr::bin(BinOp::LogAnd, bit(0b1000), rel(signed_op)),
                        Expr::bin(
                            BinOp::LogAnd,
                            Expr::bin(BinOp::Eq, bit(0b1000), Expr::Const(0)),
                            rel(unsigned_op),
                        ),
                    )
                };
                let less = Expr::bin(BinOp::LogAnd, bit(0b0100), either(BinOp::Lt, BinOp::ULt));
                let equal = Expr::bin(BinOp::LogAnd, bit(0b0010), rel(BinOp::Eq));
                let greater = Expr::bin(BinOp::LogAnd, bit(0b0001), either(BinOp::Gt, BinOp::UGt));
                Expr::bin(BinOp::LogOr, Expr::bin(BinOp::LogOr, less, equal), greater)
            }
        };
        let head = self.body.len() as u32;
        self.emit(Op::Load {
            dst: old,
            addr: addr.clone(),
            copy: false,
        });
        if bits < 64 {
            self.emit(Op::Local {
                dst: old,
                expr: wrap(Expr::Reg(old), bits),
            });
        }
        let at = self.body.len() as u32;
        self.emit(Op::Branch {
            cond: holds,
            then_to: at + 2,
            else_to: at + 1,
        });
        self.emit(Op::Jump(head));
        if let Some(new) = new {
            let got = self.new_reg("%await_xchg".into());
            self.emit(Op::Rmw {
                dst: got,
                addr,
                op: RmwOp::Cas {
                    expected: Expr::Reg(old),
                    new: wrap(new, bits),
                },
            });
            let at = self.body.len() as u32;
            self.emit(Op::Branch {
                cond: Expr::bin(BinOp::Eq, wrap(Expr::Reg(got), bits), Expr::Reg(old)),
                then_to: at + 2,
                else_to: at + 1,
            });
            self.emit(Op::Jump(head));
        }
        self.set_result(c, Expr::Reg(old));
        Ok(())
    }

    fn call(&mut self, c: &'m llvm_ir::instruction::Call) -> Result<(), Error> {
        let callee = match &c.function {
            either::Either::Left(_) => return self.inline_asm(),
            either::Either::Right(op) => Self::callee_name(op),
        };
        let Some(name) = callee else {
            let either::Either::Right(op) = &c.function else {
                unreachable!("inline assembly returned above")
            };
            let target = self.operand(op)?;
            let mut args = Vec::new();
            for k in 0..c.arguments.len() {
                args.push(self.arg(c, k)?);
            }
            let dst = c.dest.as_ref().map(|d| self.reg(d));
            self.emit(Op::CallIndirect { dst, target, args });
            return Ok(());
        };
        if self.cx.svcomp && name == "reach_error" {
            self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: "reach_error() is not reached".into(),
            });
            return Ok(());
        }
        if name.starts_with("llvm.dbg.")
            || name.starts_with("llvm.lifetime.")
            || name.starts_with("llvm.stacksave")
            || name.starts_with("llvm.stackrestore")
        {
            return Ok(());
        }
        if name.starts_with("llvm.expect.") {
            let e = self.arg(c, 0)?;
            self.set_result(c, e);
            return Ok(());
        }
        if name.starts_with("llvm.memcpy.") || name.starts_with("llvm.memmove.") {
            return self.memcpy(c);
        }
        if name.starts_with("llvm.memset.") {
            return self.memset(c);
        }
        if let Some(&fid) = self.cx.funcs.get(&name) {
            let callee = self
                .cx
                .m
                .functions
                .iter()
                .find(|f| f.name == name)
                .expect("defined");
            let varargs = callee.is_var_arg && callee.parameters.len() <= c.arguments.len();
            if callee.parameters.len() != c.arguments.len() && !varargs {
                return Err(self.err(format!(
                    "`{name}` takes {} arguments and is called with {}",
                    callee.parameters.len(),
                    c.arguments.len()
                )));
            }
            let mut args = Vec::new();
            for k in 0..callee.parameters.len() {
                args.push(self.arg(c, k)?);
            }
            let dst = c.dest.as_ref().map(|d| self.reg(d));
            let atomic = name.starts_with("__VERIFIER_atomic_");
            let m = atomic.then(|| self.cx.hidden_mutex());
            if let Some(m) = m {
                self.emit(Op::Lock(Addr::scalar(m)));
            }
            self.emit(Op::Call {
                dst,
                func: fid,
                args,
            });
            if let Some(m) = m {
                self.emit(Op::Unlock(Addr::scalar(m)));
            }
            return Ok(());
        }
        self.external(c, &name)
    }

    fn callee_str(&self, c: &llvm_ir::instruction::Call) -> String {
        c.function
            .as_ref()
            .right()
            .and_then(Self::callee_name)
            .unwrap_or_default()
    }

    fn inline_asm(&mut self) -> Result<(), Error> {
        let list = self
            .cx
            .facts
            .get(&self.f.name)
            .map(|f| f.asm.clone())
            .unwrap_or_default();
        let Some(text) = list.get(self.asm_next).cloned() else {
            return Err(self.err("inline assembly whose text cannot be read"));
        };
        self.asm_next += 1;
        let norm: String = text
            .to_ascii_lowercase()
            .split([';', '\n'])
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(";");
        match norm.as_str() {
            "" => {}
            "mfence"
            | "lock addl $0,0(%%rsp)"
            | "lock; addl $0,0(%%rsp)"
            | "lock orl $0,(%%rsp)" => self.full_fence(),
            "sfence" => self.store_fence(),
            "lfence" => {}
            _ => return Err(Error {
                help: Some(
                    "fencer understands `asm volatile(\"mfence\")`, `sfence`, `lfence` and empty \
                         compiler barriers `asm volatile(\"\" ::: \"memory\")`; use \
                         __sync_synchronize() or <stdatomic.h> for anything else"
                        .into(),
                ),
                ..self.err(format!("inline assembly `{text}` is not supported"))
            }),
        }
        Ok(())
    }

    /// The scalar leaves a pointer operand points at, when its type is known.
    fn pointed_leaves(&self, op: &Operand) -> Option<Vec<Leaf>> {
        let mut op = op;
        while let Operand::LocalOperand { name, .. } = op {
            match self.defs.get(name) {
                Some(Instruction::BitCast(b)) => op = &b.operand,
                _ => break,
            }
        }
        let ty = self.cx.pointee(&self.ty(op)).ok()?;
        if matches!(ty.as_ref(), Type::IntegerType { bits: 8 }) {
            return None;
        }
        let mut out = Vec::new();
        self.cx.layout.leaves(&ty, 0, "", &mut out).ok()?;
        Some(out)
    }

    fn const_len(&mut self, c: &llvm_ir::instruction::Call) -> Result<u64, Error> {
        match self.arg(c, 2)? {
            Expr::Const(n) if n >= 0 => Ok(n as u64),
            _ => {
                Err(self.err("memcpy/memset with a length known only at run time is not supported"))
            }
        }
    }

    /// A copy (or fill) whose length is known only at run time: a loop over the cells.
    /// Each cell is loaded and stored whole, so scalars of any width are copied as they are.
    /// `backward` copies from the last cell down (memmove onto a later address).
    fn cell_loop(&mut self, dst: &Expr, src: Option<&Expr>, fill: &Expr, n: &Expr, backward: bool) {
        let i = self.new_reg("%i".into());
        let tmp = self.new_reg("%cell".into());
        let start = if backward { n.clone() } else { Expr::Const(0) };
        self.emit(Op::Local {
            dst: i,
            expr: start,
        });
        let head = self.body.len() as u32;
        let cond = if backward {
            Expr::bin(BinOp::Ne, Expr::Reg(i), Expr::Const(0))
        } else {
            Expr::bin(BinOp::ULt, Expr::Reg(i), n.clone())
        };
        // The body: a step of `i`, the load when copying, the store, the back edge.
        let len = 3 + src.is_some() as u32;
        self.emit(Op::Branch {
            cond,
            then_to: head + 1,
            else_to: head + 1 + len,
        });
        if backward {
            self.emit(Op::Local {
                dst: i,
                expr: Expr::bin(BinOp::Sub, Expr::Reg(i), Expr::Const(1)),
            });
        }
        let value = match src {
            Some(src) => {
                // A copy, like memcpy's: it carries bytes nobody set without judging them.
                self.emit(Op::Load {
                    dst: tmp,
                    addr: Addr::Ptr(add(src.clone(), Expr::Reg(i))),
                    copy: true,
                });
                Expr::Reg(tmp)
            }
            None => fill.clone(),
        };
        self.emit(Op::Store {
            addr: Addr::Ptr(add(dst.clone(), Expr::Reg(i))),
            value,
        });
        if !backward {
            self.emit(Op::Local {
                dst: i,
                expr: Expr::bin(BinOp::Add, Expr::Reg(i), Expr::Const(1)),
            });
        }
        self.emit(Op::Jump(head));
        assert_eq!(self.body.len() as u32, head + 1 + len, "the loop's length");
    }

    fn memcpy(&mut self, c: &'m llvm_ir::instruction::Call) -> Result<(), Error> {
        let len = self.arg(c, 2)?;
        if !matches!(len, Expr::Const(_)) {
            let dst = self.arg(c, 0)?;
            let src = self.arg(c, 1)?;
            let name = self.callee_str(c);
            if name.starts_with("llvm.memmove.") {
                // Backward when the destination lies after the source (same object).
                let pc = self.body.len() as u32;
                let br = self.body.len();
                self.emit(Op::Branch {
                    cond: Expr::bin(BinOp::UGt, dst.clone(), src.clone()),
                    then_to: 0,
                    else_to: pc + 1,
                });
                self.cell_loop(&dst, Some(&src), &Expr::Const(0), &len, false);
                let jump = self.body.len();
                self.emit(Op::Jump(0));
                let back = self.body.len() as u32;
                self.cell_loop(&dst, Some(&src), &Expr::Const(0), &len, true);
                let end = self.body.len() as u32;
                if let Op::Branch { then_to, .. } = &mut self.body[br].op {
                    *then_to = back;
                }
                self.body[jump].op = Op::Jump(end);
            } else {
                self.cell_loop(&dst, Some(&src), &Expr::Const(0), &len, false);
            }
            return Ok(());
        }
        let n = self.const_len(c)?;
        let dst = self.arg(c, 0)?;
        let src = self.arg(c, 1)?;
        let leaves = self
            .pointed_leaves(&c.arguments[0].0)
            .or_else(|| self.pointed_leaves(&c.arguments[1].0));
        let offsets: Vec<u64> = match leaves {
            Some(ls) => ls.iter().map(|l| l.offset).filter(|&o| o < n).collect(),
            None => (0..n).collect(),
        };
        let tmp = self.new_reg("%memcpy".into());
        for o in offsets {
            // A copy carries padding and unset fields without reading them as values.
            self.emit(Op::Load {
                dst: tmp,
                addr: Addr::Ptr(add(src.clone(), Expr::Const(o as i64))),
                copy: true,
            });
            self.emit(Op::Store {
                addr: Addr::Ptr(add(dst.clone(), Expr::Const(o as i64))),
                value: Expr::Reg(tmp),
            });
        }
        Ok(())
    }

    fn memset(&mut self, c: &'m llvm_ir::instruction::Call) -> Result<(), Error> {
        let len = self.arg(c, 2)?;
        if !matches!(len, Expr::Const(_)) {
            // Byte stores: exact for 0 (the common case) and for arrays of char.
            let dst = self.arg(c, 0)?;
            let byte = wrap(self.arg(c, 1)?, 8);
            self.cell_loop(&dst, None, &byte, &len, false);
            return Ok(());
        }
        let n = self.const_len(c)?;
        let dst = self.arg(c, 0)?;
        let byte = self.arg(c, 1)?;
        let leaves: Vec<(u64, u64)> = match self.pointed_leaves(&c.arguments[0].0) {
            Some(ls) => ls
                .iter()
                .filter(|l| l.offset < n)
                .map(|l| (l.offset, l.size))
                .collect(),
            None => (0..n).map(|o| (o, 1)).collect(),
        };
        for (o, size) in leaves {
            let value = match &byte {
                Expr::Const(b) => {
                    let b = (*b as u64) & 0xff;
                    let mut v = 0u64;
                    for _ in 0..size {
                        v = (v << 8) | b;
                    }
                    Expr::Const(canon(size as u32 * 8, v))
                }
                e if size == 1 => wrap(e.clone(), 8),
                _ => {
                    return Err(
                        self.err("memset of a wide object with a value known only at run time")
                    )
                }
            };
            self.emit(Op::Store {
                addr: Addr::Ptr(add(dst.clone(), Expr::Const(o as i64))),
                value,
            });
        }
        Ok(())
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

    fn external(&mut self, c: &'m llvm_ir::instruction::Call, name: &str) -> Result<(), Error> {
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
            // SV-COMP: `abort()` is how `assume_abort_if_not` discards an execution, no
            // violation. The thread stops for good and the execution is discarded; what
            // other threads could do before it is explored in the executions where this
            // thread is slower.
            "abort" if self.cx.svcomp => self.emit(Op::Assume(Expr::Const(0))),
            "pthread_self" => {
                if let Some(d) = &c.dest {
                    let dst = self.reg(d);
                    self.emit(Op::ThreadId { dst });
                }
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
            | "sched_yield"
            | "usleep"
            | "sleep"
            | "printf"
            | "puts"
            | "putchar"
            | "fprintf"
            | "fflush" => self.set_result(c, Expr::Const(0)),
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
            "__assert_fail" | "__assert" | "__assert_rtn" => {
                let text = match self.arg(c, 0)? {
                    Expr::Const(p) => self.cx.c_string(p).unwrap_or_else(|| "assertion".into()),
                    _ => "assertion".into(),
                };
                self.emit(Op::Assert {
                    cond: Expr::Const(0),
                    text,
                });
            }
            "__VERIFIER_error" | "reach_error" => self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: format!("{name}() is not reached"),
            }),
            "abort" => self.emit(Op::Assert {
                cond: Expr::Const(0),
                text: "abort() is not called".into(),
            }),
            "__VERIFIER_assume" => {
                let e = self.arg(c, 0)?;
                self.emit(Op::Assume(Expr::bin(BinOp::Ne, e, Expr::Const(0))));
            }
            "__VERIFIER_atomic_begin" => {
                let m = self.cx.hidden_mutex();
                self.emit(Op::Lock(Addr::scalar(m)));
            }
            "__VERIFIER_atomic_end" => {
                let m = self.cx.hidden_mutex();
                self.emit(Op::Unlock(Addr::scalar(m)));
            }
            "malloc" => {
                let n = self.arg(c, 0)?;
                let dst = self.reg(c.dest.as_ref().expect("malloc returns a value"));
                self.emit(Op::Alloc {
                    dst,
                    size: n,
                    zeroed: false,
                    stack: false,
                });
            }
            "calloc" => {
                let n = self.arg(c, 0)?;
                let s = self.arg(c, 1)?;
                let dst = self.reg(c.dest.as_ref().expect("calloc returns a value"));
                self.emit(Op::Alloc {
                    dst,
                    size: Expr::bin(BinOp::Mul, n, s),
                    zeroed: true,
                    stack: false,
                });
            }
            "free" => {
                let p = self.arg(c, 0)?;
                self.emit(Op::Free(p));
            }
            n if n.starts_with("__VERIFIER_load_await")
                || n.starts_with("__VERIFIER_xchg_await") =>
            {
                self.await_call(c, n)?
            }
            n if n.starts_with("__VERIFIER_nondet") && self.cx.inputs => {
                if let Some(d) = &c.dest {
                    let bits = match self.cx.m.type_of(c).as_ref() {
                        Type::IntegerType { bits } => (*bits).min(64) as u8,
                        _ => {
                            return Err(self.err(format!(
                                "`{n}()` does not return an integer: only integer inputs are \
                                 supported"
                            )))
                        }
                    };
                    let dst = self.reg(d);
                    self.emit(Op::Nondet { dst, bits });
                }
            }
            n if n.starts_with("__VERIFIER_nondet") => {
                self.fatal = true;
                return Err(Error {
                    help: Some(
                        "use --engine abpress: the symbolic engine treats inputs as unknown \
                         values; the other engines explore schedules, not input values (or \
                         give the variable a fixed value, e.g. with -D)"
                            .into(),
                    ),
                    ..self.err(format!("nondeterministic input `{n}()` is not supported"))
                });
            }
            _ => {
                return Err(Error {
                    help: Some(format!("fencer knows these library functions: {KNOWN}")),
                    ..self.err(format!(
                    "call to `{name}`, which the program does not define and fencer does not know"
                ))
                })
            }
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Arith {
    /// The result is brought back to the operands' width.
    Wrap,
    /// The result already fits (bitwise operations, comparisons, arithmetic shift right).
    Exact,
    /// Unsigned: the operands are zero-extended first.
    Unsigned,
}
