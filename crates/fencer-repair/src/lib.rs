//! Fence repair: the fewest fences that make a program correct under TSO or PSO.
//!
//! Cost model: the number of fences first, then the number of full fences (a store-store
//! fence, PSO only, is cheaper: it never stalls the thread, while a full fence waits for
//! every pending store). A candidate is a position with a kind; a store-store fence is
//! proposed only where it kills the counterexample (a store overtaken by a later store),
//! never where a load overtook the store.
//!
//! Counterexample-guided: verify the program (with the fences chosen so far) with the DPOR
//! engine; from a failing execution compute the positions whose fence would kill it
//! ([`path`]); choose a minimum set of positions that kills every failing execution seen
//! so far ([`hitting`]); insert those fences ([`edit`]) and verify again, until the
//! engine finds nothing. Every counterexample is a real execution of the original program
//! (fences only remove executions), and any repair must contain one of the positions that
//! kill it, so the minimum hitting set of the counterexamples is a lower bound on every
//! repair; the last set is verified, so it is a repair; it is therefore a minimum one.
//!
//! This crate uses an engine; no engine depends on it.

pub mod edit;
pub mod hitting;
pub mod path;

use fencer_dpor::Observer;
pub use fencer_ir::FenceKind;
use fencer_ir::{FuncId, Op, Program};
use fencer_machine::{Event, EventKind, Fault, State};
use fencer_memory::{ModelKind, Pso, Sc, Tso};
use fencer_report::{Report, Verdict};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A place for a fence: before instruction `pc` of function `func` (`pc` may be the
/// function's length: at its end). Always in the original program's pcs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    pub func: FuncId,
    pub pc: u32,
}

/// A fence to insert: where, and of which kind. Ordered by position, a full fence before a
/// store-store one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fence {
    pub pos: Position,
    pub kind: FenceKind,
}

impl Fence {
    pub fn full(pos: Position) -> Fence {
        Fence {
            pos,
            kind: FenceKind::Full,
        }
    }
    pub fn store_store(pos: Position) -> Fence {
        Fence {
            pos,
            kind: FenceKind::StoreStore,
        }
    }
}

/// The cost of a set of fences, compared lexicographically: (fences, full fences).
pub fn cost(fences: &[Fence]) -> (usize, usize) {
    (
        fences.len(),
        fences.iter().filter(|f| f.kind == FenceKind::Full).count(),
    )
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The engine's options for every verification (its timeout is ignored: `timeout`
    /// bounds the whole repair).
    pub dpor: fencer_dpor::Options,
    pub timeout: Option<Duration>,
    /// Find and verify every minimum set, not only one.
    pub all_minimal: bool,
    /// The final condition is a question, not a requirement (litmus tests): the goal is
    /// that the model's answer equals SC's, and a condition SC already satisfies (or
    /// violates) has the same answer under the weaker model.
    pub condition_is_question: bool,
    /// Robustness instead of safety: every execution under the model must have a
    /// sequentially consistent trace (`fencer robust`'s sense). Counterexamples are then
    /// executions whose happens-before has a cycle.
    pub robustness: bool,
}

/// One failing execution the repair had to kill.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The fences in place when the engine found it.
    pub under: Vec<Fence>,
    /// The engine's counterexample (in the fenced program's terms).
    pub report: fencer_report::Counterexample,
    /// The fences that kill it: a full fence at each position that does, and a
    /// store-store fence where that is enough.
    pub kill: Vec<Fence>,
    /// Which store was overtaken by which later event of its thread, in words.
    pub reorderings: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Repair {
    /// The fences chosen (a minimum set under [`cost`]), sorted.
    pub fences: Vec<Fence>,
    /// With `all_minimal`: every minimum set, each verified.
    pub all: Vec<Vec<Fence>>,
    /// Verification runs of the engine (the first on the program as it is).
    pub rounds: usize,
    pub counterexamples: Vec<Counterexample>,
    /// Counterexamples that no single position kills two of: each needs a fence of its
    /// own, which is why fewer fences cannot do (when as many as the fences).
    pub disjoint: Vec<usize>,
    /// Whether every kill set was computed exactly (then the set is minimum).
    pub exact: bool,
    pub elapsed: Duration,
    /// The engine's report on the fenced program (incomplete when bounds cut executions:
    /// the repair then holds up to them).
    pub report: Report,
    pub fenced: Program,
}

#[derive(Debug)]
pub enum Outcome {
    /// Correct under the model as it is: no fence needed.
    NotNeeded {
        report: Report,
    },
    /// Wrong under SC: no fence can help.
    UnsafeUnderSc {
        report: Report,
    },
    /// A limit stopped the search (the report says which).
    Limit {
        report: Report,
        rounds: usize,
        counterexamples: usize,
    },
    /// A failing execution that no allowed position kills (its reorderings are in code
    /// fences may not go into).
    Unrepairable {
        report: Report,
        counterexample: Box<Counterexample>,
    },
    /// The program reaches something the front-end cannot model.
    Unsupported {
        report: Report,
    },
    Repaired(Box<Repair>),
}

/// Runs the engine and keeps the events of the last execution it showed: when it stops at
/// a violation, that is the failing one (the engine judges each execution right after
/// showing it, and stops at the first violation).
#[derive(Default)]
struct Last {
    events: Vec<Event>,
}

impl Observer for Last {
    fn execution(&mut self, _state: &State, events: &[Event]) {
        self.events.clear();
        self.events.extend_from_slice(events);
    }
    fn fault(&mut self, _state: &State, _fault: &Fault, events: &[Event]) {
        self.events.clear();
        self.events.extend_from_slice(events);
    }
}

struct Ctx<'a> {
    prog: &'a Program,
    model: ModelKind,
    opts: &'a Options,
    start: Instant,
    rounds: usize,
}

impl Ctx<'_> {
    fn remaining(&self) -> Option<Duration> {
        self.opts.timeout.map(|t| {
            t.saturating_sub(self.start.elapsed())
                .max(Duration::from_millis(1))
        })
    }

    fn run(&mut self, prog: &Program, model: ModelKind) -> (Report, Vec<Event>) {
        let mut o = self.opts.dpor.clone();
        o.timeout = self.remaining();
        if self.opts.robustness && model != ModelKind::Sc {
            return robustness_run(prog, model, &o);
        }
        o.stop_on_violation = true;
        let mut last = Last::default();
        let report = fencer_dpor::explore_observed(prog, model, &o, &mut last);
        (report, last.events)
    }

    fn kill(&self, fenced: &edit::Fenced, events: &[Event]) -> path::Kill {
        let o = &self.opts.dpor;
        match self.model {
            ModelKind::Sc => path::kill_set::<Sc>(&fenced.prog, o.unroll, o.max_depth, events),
            ModelKind::Tso => path::kill_set::<Tso>(&fenced.prog, o.unroll, o.max_depth, events),
            ModelKind::Pso => path::kill_set::<Pso>(&fenced.prog, o.unroll, o.max_depth, events),
        }
    }

    /// Fences go into the user's own source (file 0), where a person can put them: not
    /// into library code the front-end links in, nor where no source line is known.
    fn allowed(&self, p: Position) -> bool {
        let f = &self.prog.functions[p.func as usize];
        let loc = f.body.get(p.pc as usize).or(f.body.last()).map(|i| i.loc);
        loc.is_some_and(|l| l.file == 0 && l.line > 0)
    }
}

/// Keeps the first execution whose trace is not sequentially consistent.
#[derive(Default)]
struct FirstCycle {
    found: Option<(State, Vec<Event>)>,
}

impl Observer for FirstCycle {
    fn execution(&mut self, state: &State, events: &[Event]) {
        if self.found.is_none() && fencer_robust::trace::Graph::new(events).cyclic() {
            self.found = Some((state.clone(), events.to_vec()));
        }
    }
}

/// Explores every execution under `model` and reports the first whose happens-before
/// has a cycle as the violation (assertions do not count for robustness).
fn robustness_run(
    prog: &Program,
    model: ModelKind,
    o: &fencer_dpor::Options,
) -> (Report, Vec<Event>) {
    let mut o = o.clone();
    o.stop_on_violation = false;
    let mut obs = FirstCycle::default();
    let mut report = fencer_dpor::explore_observed(prog, model, &o, &mut obs);
    if is_unsupported(&report) {
        return (report, Vec::new());
    }
    match obs.found {
        Some((state, events)) => {
            let col = fencer_machine::collect::Collector::new(prog);
            report.verdict = Verdict::Violation;
            report.counterexample = Some(fencer_report::Counterexample {
                kind: "sc-violation".into(),
                message: "an execution whose trace is not sequentially consistent (its happens-before has a cycle)".into(),
                file: None,
                line: None,
                column: None,
                events: col.lines(&state, &events),
                final_state: None,
                schedule: Vec::new(),
            });
            (report, events)
        }
        None => {
            report.counterexample = None;
            if report.verdict == Verdict::Violation {
                report.verdict = if report.stopped_by.is_some() {
                    Verdict::Incomplete
                } else {
                    Verdict::Safe
                };
            }
            (report, Vec::new())
        }
    }
}

/// How well a position maps back to source: right after a store is best (a new statement
/// after the store's), right before a memory access next, anything else last.
pub fn rank(prog: &Program, p: Position) -> u32 {
    let body = &prog.functions[p.func as usize].body;
    let after_store = p.pc > 0 && matches!(body[p.pc as usize - 1].op, Op::Store { .. });
    let before_access = matches!(
        body.get(p.pc as usize).map(|i| &i.op),
        Some(Op::Load { .. } | Op::Store { .. } | Op::Rmw { .. })
    );
    if after_store {
        0
    } else if before_access {
        1
    } else {
        2
    }
}

/// Whether the engine stopped only because bounds cut some executions (`--unroll`,
/// `--max-depth`, ...): then the answer holds up to those bounds, and the repair goes on
/// within them, as `check` answers within them.
pub fn bounded(r: &Report) -> bool {
    use fencer_report::Limit;
    r.verdict == Verdict::Incomplete
        && matches!(
            r.stopped_by,
            Some(Limit::Depth | Limit::Unroll | Limit::Recursion | Limit::LocalLoop)
        )
}

fn is_unsupported(r: &Report) -> bool {
    r.counterexample
        .as_ref()
        .is_some_and(|c| c.kind == "unsupported")
}

/// Finds a minimum set of fences that makes `prog` correct under `model` (TSO or PSO).
pub fn repair(prog: &Program, model: ModelKind, opts: &Options) -> Outcome {
    let mut cx = Ctx {
        prog,
        model,
        opts,
        start: Instant::now(),
        rounds: 0,
    };
    let (sc, _) = cx.run(prog, ModelKind::Sc);
    if is_unsupported(&sc) {
        return Outcome::Unsupported { report: sc };
    }
    match sc.verdict {
        Verdict::Incomplete if !bounded(&sc) => {
            return Outcome::Limit {
                report: sc,
                rounds: 0,
                counterexamples: 0,
            }
        }
        // Robustness is about traces, not assertions: an SC failure does not stop it.
        Verdict::Violation if !opts.robustness => {
            let condition = sc
                .counterexample
                .as_ref()
                .is_some_and(|c| c.kind == "condition");
            // Every SC execution is one of the weaker model's, so the question has the
            // same answer under both.
            if condition && opts.condition_is_question {
                return Outcome::NotNeeded { report: sc };
            }
            return Outcome::UnsafeUnderSc { report: sc };
        }
        Verdict::Safe | Verdict::Incomplete | Verdict::Violation => {}
    }
    if model == ModelKind::Sc {
        return Outcome::NotNeeded { report: sc };
    }
    // Candidate fences get small ids, in the order they first appear.
    let mut ids: Vec<Fence> = Vec::new();
    let id_of = |ids: &mut Vec<Fence>, p: Fence| -> u32 {
        match ids.iter().position(|&q| q == p) {
            Some(i) => i as u32,
            None => {
                ids.push(p);
                (ids.len() - 1) as u32
            }
        }
    };
    let mut sets: Vec<Vec<u32>> = Vec::new();
    // The minimum so far: constraints only grow, so it never shrinks.
    let mut lower = (0, 0);
    let mut cexs: Vec<Counterexample> = Vec::new();
    let mut exact = true;
    let mut verified: Vec<(Vec<Fence>, Report, Program)> = Vec::new();
    let mut queue: Vec<Vec<Fence>> = vec![Vec::new()];
    while let Some(cand) = queue.pop() {
        let fenced = edit::insert_fences(prog, &cand);
        cx.rounds += 1;
        let (report, events) = cx.run(&fenced.prog, model);
        if is_unsupported(&report) {
            return Outcome::Unsupported { report };
        }
        match report.verdict {
            Verdict::Incomplete if !bounded(&report) => {
                return Outcome::Limit {
                    report,
                    rounds: cx.rounds,
                    counterexamples: cexs.len(),
                }
            }
            Verdict::Safe | Verdict::Incomplete => {
                if cand.is_empty() {
                    return Outcome::NotNeeded { report };
                }
                verified.push((cand, report, fenced.prog));
                if !opts.all_minimal {
                    break;
                }
                continue;
            }
            Verdict::Violation => {}
        }
        let kill = cx.kill(&fenced, &events);
        exact &= kill.exact;
        let mut positions: BTreeSet<Fence> = BTreeSet::new();
        for (set, kind) in [
            (&kill.positions, FenceKind::Full),
            (&kill.store_store, FenceKind::StoreStore),
        ] {
            for p in set {
                let q = fenced.original(p.func, p.pc);
                if cx.allowed(q) {
                    positions.insert(Fence { pos: q, kind });
                }
            }
        }
        let cex = Counterexample {
            under: cand.clone(),
            report: report.counterexample.clone().expect("a violation has one"),
            kill: positions.iter().copied().collect(),
            reorderings: kill
                .pairs
                .iter()
                .map(|&(s, o)| describe_pair(&fenced.prog, &events[s], &events[o]))
                .collect(),
        };
        if positions.is_empty() || positions.iter().any(|p| cand.contains(p)) {
            // Nothing allowed kills it; or a fence in place passed with a store pending,
            // which the machine forbids: the kill set is wrong, and so would the answer be.
            return Outcome::Unrepairable {
                report,
                counterexample: Box::new(cex),
            };
        }
        let set: Vec<u32> = positions.iter().map(|&p| id_of(&mut ids, p)).collect();
        sets.push(set);
        cexs.push(cex);
        // A new constraint: choose again, and re-verify what is still a minimum.
        let cap = if opts.all_minimal { 10_000 } else { 64 };
        let rk = |i: u32| fence_rank(prog, ids[i as usize]);
        let heavy = |i: u32| ids[i as usize].kind == FenceKind::Full;
        let Some(sols) = hitting::minimum(&sets, &rk, &heavy, cap, lower) else {
            unreachable!("no set is empty")
        };
        let sols: Vec<Vec<Fence>> = sols
            .into_iter()
            .map(|s| {
                let mut v: Vec<Fence> = s.into_iter().map(|i| ids[i as usize]).collect();
                v.sort();
                v
            })
            .collect();
        let best_cost = cost(&sols[0]);
        lower = best_cost;
        verified.retain(|(v, _, _)| cost(v) == best_cost && sets_hit(&sets, &ids, v));
        queue.clear();
        if opts.all_minimal {
            for s in sols.into_iter().rev() {
                if !verified.iter().any(|(v, _, _)| *v == s) {
                    queue.push(s);
                }
            }
            if queue.is_empty() {
                break;
            }
        } else {
            let best = sols
                .into_iter()
                .min_by_key(|s| (s.iter().map(|&f| rank(prog, f.pos)).sum::<u32>(), s.clone()))
                .expect("at least one");
            queue.push(best);
        }
    }
    let mut all: Vec<Vec<Fence>> = verified.iter().map(|(v, _, _)| v.clone()).collect();
    all.sort();
    // The set reported first: the one that maps best to source.
    let (chosen, report, fenced) = verified
        .into_iter()
        .min_by_key(|(v, _, _)| (v.iter().map(|&f| rank(prog, f.pos)).sum::<u32>(), v.clone()))
        .expect("the loop ends with a verified set");
    let disjoint = hitting::disjoint_packing(&sets, chosen.len());
    Outcome::Repaired(Box::new(Repair {
        fences: chosen,
        all: if opts.all_minimal { all } else { Vec::new() },
        rounds: cx.rounds,
        counterexamples: cexs,
        disjoint,
        exact,
        elapsed: cx.start.elapsed(),
        report,
        fenced,
    }))
}

/// The order candidates are tried in: by [`rank`], a store-store fence before a full one.
fn fence_rank(prog: &Program, f: Fence) -> u32 {
    2 * rank(prog, f.pos) + u32::from(f.kind == FenceKind::Full)
}

fn sets_hit(sets: &[Vec<u32>], ids: &[Fence], v: &[Fence]) -> bool {
    sets.iter()
        .all(|s| s.iter().any(|&i| v.contains(&ids[i as usize])))
}

fn thread_name(prog: &Program, e: &Event) -> String {
    match prog.threads.get(e.id.thread as usize) {
        // Threads started at run time (C) are best known by their code.
        Some(d) if prog.threads.len() > 1 => d.name.clone(),
        _ => format!("`{}`", prog.functions[e.func as usize].name),
    }
}

fn describe_event(prog: &Program, e: &Event) -> String {
    let name = |l| fencer_machine::loc_name(prog, l);
    let what = match &e.kind {
        EventKind::Load { loc, .. } => format!("load of {}", name(*loc)),
        EventKind::Store { loc, .. } => format!("store to {}", name(*loc)),
        EventKind::Rmw { loc, .. } => format!("read-modify-write of {}", name(*loc)),
        EventKind::Lock { loc, .. } => format!("lock of {}", name(*loc)),
        EventKind::Unlock { loc, .. } => format!("unlock of {}", name(*loc)),
        EventKind::Spawn { .. } => "thread creation".into(),
        EventKind::Join { .. } => "join".into(),
        EventKind::Alloc { .. } => "allocation".into(),
        EventKind::Free { .. } => "free".into(),
        EventKind::Assume => "assume".into(),
        _ => "step".into(),
    };
    format!("{what} (line {})", e.src.line)
}

fn describe_pair(prog: &Program, s: &Event, o: &Event) -> String {
    format!(
        "{}'s {} was overtaken by its {}",
        thread_name(prog, s),
        describe_event(prog, s),
        describe_event(prog, o)
    )
}
