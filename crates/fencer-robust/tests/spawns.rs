//! Spawns of different threads do not commute: threads take ids in the order their spawns
//! run, and the id is part of the state. The trace must order them, or a cycle through
//! that order is missed and a program that is not robust is called robust.
//!
//! `T`: `x = 1; r0 = y`; `A`: `y = 1; spawn`; `B`: `spawn; r1 = x`. Under TSO, `T`'s
//! store stays buffered while `T` reads `y = 0`, `A` stores `y` and spawns (its spawn
//! drains its buffer), `B` spawns after it (its child gets the next id) and reads `x = 0`:
//! `x = 1` po `r0 = y` fr `y = 1` po `A`'s spawn -> `B`'s spawn po `r1 = x` fr `x = 1`, a
//! final state (ids and registers) no SC execution has.

use fencer_ir::{Addr, Expr, Function, Instr, ObjKind, Object, Op, Program, SrcLoc, ThreadDecl};
use fencer_memory::ModelKind;
use fencer_robust::{check, Method};

fn spawn_order_program() -> Program {
    let (x, y) = (Addr::scalar(0), Addr::scalar(1));
    let mut line = 0;
    let mut thread = |name: &str, ops: Vec<Op>| {
        let body = ops
            .into_iter()
            .map(|op| {
                line += 1;
                Instr {
                    op,
                    loc: SrcLoc::new(0, line, 1),
                }
            })
            .collect();
        Function {
            name: name.into(),
            params: 0,
            reg_names: vec!["r0".into(), "r1".into()],
            body,
            loc: SrcLoc::NONE,
        }
    };
    let store = |addr: &Addr| Op::Store {
        addr: addr.clone(),
        value: Expr::Const(1),
    };
    let load = |dst, addr: &Addr| Op::Load {
        dst,
        addr: addr.clone(),
        copy: false,
    };
    let spawn = || Op::Spawn {
        dst: 0,
        func: 0,
        arg: Expr::Const(0),
    };
    let functions = vec![
        thread("child", Vec::new()),
        thread("T", vec![store(&x), load(0, &y)]),
        thread("A", vec![store(&y), spawn()]),
        thread("B", vec![spawn(), load(1, &x)]),
    ];
    let object = |name: &str| Object {
        name: name.into(),
        kind: ObjKind::Shared,
        size: 1,
        init: Vec::new(),
        is_array: false,
        cell_names: Vec::new(),
        loc: SrcLoc::NONE,
    };
    Program::new(
        "spawns",
        vec![object("x"), object("y")],
        functions,
        ["T", "A", "B"]
            .iter()
            .zip(1..)
            .map(|(name, func)| ThreadDecl {
                name: name.to_string(),
                func,
                arg: 0,
            })
            .collect(),
    )
}

#[test]
fn a_cycle_through_spawn_order_is_a_violation() {
    let prog = spawn_order_program();
    // Not robust by the definition, independently of `trace.rs`: TSO has a trace (and a
    // final state) that SC does not.
    let ropts = fencer_reference::Options::default();
    let sc = fencer_reference::explore(&prog, ModelKind::Sc, &ropts);
    let tso = fencer_reference::explore(&prog, ModelKind::Tso, &ropts);
    assert!(!tso.traces.is_subset(&sc.traces));
    let opts = fencer_dpor::Options::default();
    for model in [ModelKind::Tso, ModelKind::Pso] {
        for method in [Method::Monitor, Method::Exhaustive] {
            let found = check(&prog, model, method, &opts).violations;
            assert!(
                found.values().all(|f| f.witness.is_some()),
                "{model:?}, {}: a witness did not replay",
                method.name()
            );
            let pairs: Vec<(u32, u32)> = found
                .keys()
                .map(|((_, s), (_, e))| (s.line, e.line))
                .collect();
            // `T`'s store (line 1) overtaken by `B`'s load (line 6).
            assert_eq!(pairs, [(1, 6)], "{model:?}, {}", method.name());
        }
    }
}
