//! Programs with inputs (`__VERIFIER_nondet_*`): one DPOR run per assignment of input
//! values, each run an ordinary exploration of a program whose inputs are fixed.
//!
//! An input is named by its slot, (thread, how many inputs the thread read before), and
//! takes, unless the run assigns it a value, its site's first representative value (the
//! default; `fencer_machine::input`). The runs are enumerated from the empty assignment:
//! each run notes every slot any of its executions read, and each such slot not assigned
//! yet gives one child per other value of the site that read it. Breadth first, so a run
//! comes after the runs of its smaller assignments.
//!
//! Every execution of the program, with whatever input values, is explored: order its
//! reads of non-default values r1..rm; by induction the run assigning r1..rj is
//! enumerated, since the execution's prefix up to r(j+1) is a prefix of that run's program,
//! whose exploration (DPOR reaches every reachable prefix, up to equivalence, and an
//! equivalent prefix makes the same reads) reads r(j+1)'s slot; so the run assigning all
//! of them is enumerated, and explores the execution. Each execution is counted (executions,
//! final states, blocked ones, faults) only in the run whose assignment is exactly its
//! reads of non-default values ([`fencer_machine::input::Choice::own`]): once in all.
//! The other runs explore it again, which is work, not a count.
//!
//! The runs share one collector, so limits (`--timeout`, `--max-executions`) apply to the
//! whole search, and the report is one report.

use crate::engine::Dpor;
use crate::options::Options;
use fencer_ir::{Program, Value};
use fencer_machine::collect::Collector;
use fencer_machine::input::{InputPlan, PlanSite};
use fencer_machine::Observer;
use fencer_memory::MemoryModel;
use fencer_report::Report;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

type Assignment = Vec<((u32, u32), Value)>;

pub(crate) fn explore<M: MemoryModel>(
    prog: &Program,
    opts: &Options,
    traces: bool,
    obs: &mut dyn Observer,
    sites: Vec<PlanSite>,
) -> (Report, Vec<u128>) {
    let mut queue: VecDeque<Assignment> = VecDeque::from([Vec::new()]);
    let mut known: HashSet<Assignment> = HashSet::from([Vec::new()]);
    // The totals, moved into each run's collector and back (see `carry`).
    let mut col = Collector::new(prog);
    let mut all_traces = Vec::new();
    let (mut sleep_blocked, mut races, mut reversed, mut runs) = (0, 0, 0, 0u64);
    let mut report = None;
    while let Some(assigned) = queue.pop_front() {
        let plan = Arc::new(InputPlan::new(
            sites.clone(),
            assigned.iter().copied().collect::<HashMap<_, _>>(),
        ));
        let o = Options {
            plan: Some(plan.clone()),
            ..opts.clone()
        };
        let mut d = Dpor::<M>::new(prog, &o, traces, &mut *obs);
        carry(&mut col, &mut d.col);
        d.explore(0);
        runs += 1;
        sleep_blocked += d.sleep_blocked;
        races += d.races;
        reversed += d.reversed;
        if let Some(t) = d.traces.take() {
            all_traces.extend(t);
        }
        let done = d.col.stopped.is_some() || (opts.stop_on_violation && d.col.cex.is_some());
        if !done {
            for (t, k, site) in plan.seen() {
                if assigned.iter().any(|&(s, _)| s == (t, k)) {
                    continue;
                }
                let Ok(values) = &sites[site as usize].values else {
                    continue;
                };
                for &v in &values[1..] {
                    let mut child = assigned.clone();
                    child.push(((t, k), v));
                    child.sort_unstable();
                    if known.insert(child.clone()) {
                        queue.push_back(child);
                    }
                }
            }
        }
        if done || queue.is_empty() {
            d.sleep_blocked = sleep_blocked;
            d.races = races;
            d.reversed = reversed;
            let (mut r, _) = d.finish();
            r.stats.input_runs = Some(runs);
            report = Some(r);
            break;
        }
        carry(&mut d.col, &mut col);
    }
    (report.expect("at least one run"), all_traces)
}

/// Moves what a collector has found, and its start, into another: the runs' collectors
/// borrow each its run's options, so the totals go from one to the next this way.
fn carry(from: &mut Collector<'_>, to: &mut Collector<'_>) {
    to.stats = std::mem::take(&mut from.stats);
    to.final_states = std::mem::take(&mut from.final_states);
    to.cex = from.cex.take();
    to.stopped = from.stopped.take();
    to.start = from.start;
}
