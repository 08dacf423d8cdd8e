//! Programs with inputs (`Op::Nondet`): DPOR's one run per assignment of input values held
//! to the reference explorer, which branches where each input is read. The same verdicts
//! and final states, and exactly the reference's executions, each once: an execution is
//! its Shasha-Snir trace with the values its inputs read.
//!
//! The programs are the oracle's random ones with some stored constants replaced by inputs
//! (1 or 2 bits wide), and some inputs inside spin loops' threads. `FENCER_CASES=N` sets
//! the number of programs per model (default 300); `FENCER_SEED=S` runs one.

use fencer_dpor::{explore_traces, Algo, Options};
use fencer_ir::{Expr, Instr, Op, Program};
use fencer_memory::ModelKind;
use fencer_report::Limit;
use fencer_testgen::{program, Rng, Shape};
use std::collections::HashSet;

fn cases() -> u64 {
    std::env::var("FENCER_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(300, |n: u64| (n / 3).max(1))
}

/// The program of `seed` with some stores of constants storing an input instead, and
/// some registers set by an input.
fn with_inputs(seed: u64, loops: bool) -> (String, Program) {
    // Smaller than the oracle's programs: each input multiplies what the reference
    // explores.
    let shape = Shape {
        faults: true,
        threads: (2, 3),
        total: 9,
        ..if loops {
            Shape::with_loops()
        } else {
            Shape::default()
        }
    };
    let src = program(seed, &shape);
    let mut prog = fencer_text::parse_program("gen.fen", &src).expect("generated programs parse");
    let mut r = Rng::new(seed ^ 0x1f2e_3d4c);
    let mut any = false;
    for f in &mut prog.functions {
        let mut body = Vec::with_capacity(f.body.len());
        // Inserting shifts every later instruction: jump targets are renumbered below.
        let mut shift = Vec::with_capacity(f.body.len() + 1);
        for ins in std::mem::take(&mut f.body) {
            shift.push(body.len() as u32);
            let store_const = matches!(
                &ins.op,
                Op::Store {
                    value: Expr::Const(_),
                    ..
                }
            );
            if store_const && r.chance(35) {
                let dst = f.reg_names.len() as u32;
                f.reg_names.push(format!("in{dst}"));
                let bits = if r.chance(70) { 1 } else { 2 };
                body.push(Instr {
                    op: Op::Nondet { dst, bits },
                    loc: ins.loc,
                });
                let Op::Store { addr, .. } = ins.op else {
                    unreachable!()
                };
                body.push(Instr {
                    op: Op::Store {
                        addr,
                        value: Expr::Reg(dst),
                    },
                    loc: ins.loc,
                });
                any = true;
            } else {
                body.push(ins);
            }
        }
        shift.push(body.len() as u32);
        for ins in &mut body {
            match &mut ins.op {
                Op::Jump(to) => *to = shift[*to as usize],
                Op::Branch {
                    then_to, else_to, ..
                } => {
                    *then_to = shift[*then_to as usize];
                    *else_to = shift[*else_to as usize];
                }
                _ => {}
            }
        }
        f.body = body;
    }
    if !any {
        // Every program reads one input at least: the first thread's first step.
        let f = &mut prog.functions[prog.threads[0].func as usize];
        let dst = f.reg_names.len() as u32;
        f.reg_names.push(format!("in{dst}"));
        let loc = f.body.first().map_or(fencer_ir::SrcLoc::NONE, |i| i.loc);
        f.body.insert(
            0,
            Instr {
                op: Op::Nondet { dst, bits: 1 },
                loc,
            },
        );
        for ins in &mut f.body[1..] {
            match &mut ins.op {
                Op::Jump(to) => *to += 1,
                Op::Branch {
                    then_to, else_to, ..
                } => {
                    *then_to += 1;
                    *else_to += 1;
                }
                _ => {}
            }
        }
    }
    (src, prog)
}

fn compare(seed: u64, model: ModelKind, algo: Algo, loops: bool) -> Result<(), String> {
    let (src, mut prog) = with_inputs(seed, loops);
    let unroll = loops.then_some(2);
    if loops && seed.is_multiple_of(2) {
        fencer_ir::spin::spin_assume(&mut prog);
    }
    let fail = |what: String| {
        Err(format!(
            "seed {seed}, {model}, {algo:?}, loops {loops}: {what}\n{src}\n{}",
            fencer_testgen::listing(&prog)
        ))
    };
    let reference = fencer_reference::explore(
        &prog,
        model,
        &fencer_reference::Options {
            unroll,
            ..Default::default()
        },
    );
    let r = reference.report;
    if r.stopped_by == Some(Limit::MaxStates) {
        return Ok(());
    }
    let opts = Options {
        algo,
        stop_on_violation: false,
        unroll,
        ..Options::default()
    };
    let (d, dtraces) = explore_traces(&prog, model, &opts);
    if d.verdict != r.verdict {
        return fail(format!(
            "verdict {:?} ({:?}), reference {:?} ({:?})",
            d.verdict,
            d.counterexample.as_ref().map(|c| &c.message),
            r.verdict,
            r.counterexample.as_ref().map(|c| &c.message)
        ));
    }
    if d.final_states != r.final_states {
        return fail(format!(
            "final states {:?}, reference {:?}",
            d.final_states, r.final_states
        ));
    }
    let set: HashSet<u128> = dtraces.iter().copied().collect();
    if set.len() != dtraces.len() {
        return fail(format!(
            "{} executions but {} distinct (trace, inputs)",
            dtraces.len(),
            set.len()
        ));
    }
    if set != reference.traces {
        return fail(format!(
            "{} executions, the reference has {} ({} missing, {} extra)",
            set.len(),
            reference.traces.len(),
            reference.traces.difference(&set).count(),
            set.difference(&reference.traces).count()
        ));
    }
    if d.executions != set.len() as u64 {
        return fail(format!(
            "{} executions counted, {} explored",
            d.executions,
            set.len()
        ));
    }
    Ok(())
}

fn run(model: ModelKind, algo: Algo, loops: bool) {
    let seeds: Vec<u64> = match std::env::var("FENCER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(s) => vec![s],
        None => (0..cases()).collect(),
    };
    let failures: Vec<String> = seeds
        .iter()
        .filter_map(|&s| compare(s, model, algo, loops).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} programs differ; the first:\n{}",
        failures.len(),
        seeds.len(),
        failures[0]
    );
}

#[test]
fn inputs_sc() {
    run(ModelKind::Sc, Algo::Optimal, false);
}

#[test]
fn inputs_tso() {
    run(ModelKind::Tso, Algo::Optimal, false);
}

#[test]
fn inputs_pso_source() {
    run(ModelKind::Pso, Algo::Source, false);
}

#[test]
fn inputs_with_loops() {
    run(ModelKind::Sc, Algo::Optimal, true);
    run(ModelKind::Tso, Algo::Optimal, true);
}
