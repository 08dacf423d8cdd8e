//! Allocations of different threads commute: an object's identity is its thread and that
//! thread's allocation count, so no order between two threads' allocations is part of a
//! trace. The shrunk form of heap seed 537 (tests/oracle.rs), which the trace once ordered
//! through an allocator location: under TSO, `t0`'s store to `x` stays buffered while `t0`
//! allocates, `t1` allocates after it, stores to `x`, and its store reaches memory first.
//! With allocation order in happens-before that made a cycle (`x = 1` po `alloc` ->
//! `alloc` po `x = 2` co `x = 1`), though the same stores happen in the same order in
//! the SC execution that runs `t1` first: the exhaustive method and the oracle's
//! reference explorer called the program not robust, the monitor robust.

use fencer_ir::{Addr, Expr, Function, Instr, ObjKind, Object, Op, Program, SrcLoc, ThreadDecl};
use fencer_machine::{Event, Observer, State};
use fencer_memory::ModelKind;
use fencer_robust::trace::Graph;
use fencer_robust::{check, Method};

/// `t0`: `x = 1; p = alloc(1)`; `t1`: `q = alloc(1); x = 2` (lines 1-2 and 3-4).
fn allocs_around_stores() -> Program {
    let x = Addr::scalar(0);
    let alloc = Op::Alloc {
        dst: 0,
        size: Expr::Const(1),
        zeroed: true,
        stack: false,
    };
    let store = |v| Op::Store {
        addr: x.clone(),
        value: Expr::Const(v),
    };
    let thread = |name: &str, first: u32, ops: Vec<Op>| Function {
        name: name.into(),
        params: 0,
        reg_names: vec!["r0".into()],
        body: ops
            .into_iter()
            .enumerate()
            .map(|(i, op)| Instr {
                op,
                loc: SrcLoc::new(0, first + i as u32, 1),
            })
            .collect(),
        loc: SrcLoc::NONE,
    };
    Program::new(
        "allocs",
        vec![Object {
            name: "x".into(),
            kind: ObjKind::Shared,
            size: 1,
            init: Vec::new(),
            is_array: false,
            cell_names: Vec::new(),
            loc: SrcLoc::NONE,
        }],
        vec![
            thread("t0", 1, vec![store(1), alloc.clone()]),
            thread("t1", 3, vec![alloc, store(2)]),
        ],
        (0..2)
            .map(|t| ThreadDecl {
                name: format!("t{t}"),
                func: t,
                arg: 0,
            })
            .collect(),
    )
}

/// Whether some execution the reference explorer shows has a happens-before cycle.
struct Cyclic(bool);

impl Observer for Cyclic {
    fn execution(&mut self, _: &State, events: &[Event]) {
        self.0 |= Graph::new(events).cyclic();
    }
}

#[test]
fn allocations_of_different_threads_do_not_order_a_trace() {
    let prog = allocs_around_stores();
    let ropts = fencer_reference::Options::default();
    let sc = fencer_reference::explore(&prog, ModelKind::Sc, &ropts).traces;
    for model in [ModelKind::Tso, ModelKind::Pso] {
        // Robust by the definition, independently of `trace.rs`: every weak trace (the
        // explorer's Shasha-Snir fingerprints) is an SC trace.
        let weak = fencer_reference::explore(&prog, model, &ropts).traces;
        assert!(weak.is_subset(&sc), "{model:?}: a trace SC does not have");
        let mut r = Cyclic(false);
        fencer_reference::explore_observed(&prog, model, &ropts, &mut r);
        assert!(!r.0, "{model:?}: a happens-before cycle in an SC trace");
        let opts = fencer_dpor::Options::default();
        for method in [Method::Monitor, Method::Exhaustive] {
            let v = check(&prog, model, method, &opts).violations;
            assert!(
                v.is_empty(),
                "{model:?}, {}: {} pairs",
                method.name(),
                v.len()
            );
        }
    }
}
