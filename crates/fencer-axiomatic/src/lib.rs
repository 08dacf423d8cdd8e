//! Axiomatic checking, as herd7 does it: every candidate execution of a litmus-sized
//! program (one path per thread, a reads-from map, and the coherence orders the model
//! itself generates), each judged by a `.cat` model; the answer is every final state of
//! the consistent ones, with how many executions reach it and which flags they raise.
//!
//! The engine knows no input syntax (front-ends build a [`Program`]) and no memory model
//! (a [`fencer_cat::Model`] is data).

mod paths;
mod program;

pub use paths::{Kind, MAX_THREAD_EVENTS};
pub use program::{
    BinOp, Expr, Ins, LocId, Location, Observable, Program, Reg, Thread, UpdateOp, Val,
};

use fencer_cat::{EventSet, Execution, Model, Relation};
use paths::{Path, Tags};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The program does something the engine cannot run (a non-address dereferenced, a
    /// loop without end).
    Program(String),
    /// The model failed on an execution (an unbound name only some executions reach).
    Model(String),
    /// The program is too large for the engine's bounds.
    Limit(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Program(m) | Error::Model(m) | Error::Limit(m) => f.write_str(m),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// herd7's `-variant`: the names `if "..."` in the model tests.
    pub variants: BTreeSet<String>,
    /// Stops (with a partial answer) after this long.
    pub timeout: Option<Duration>,
}

/// One reachable final state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateInfo {
    /// Consistent executions that end in it.
    pub executions: u64,
    /// Flags those executions raise, each with how many raise it.
    pub flags: BTreeMap<String, u64>,
}

#[derive(Clone, Debug, Default)]
pub struct Answer {
    /// Final states over the program's observables.
    pub states: BTreeMap<Vec<Val>, StateInfo>,
    /// Candidate executions the model judged (each coherence order counts).
    pub candidates: u64,
    /// Of those, the consistent ones.
    pub consistent: u64,
    /// Flags raised by consistent executions, with how many raise each.
    pub flags: BTreeMap<String, u64>,
    /// Set when the timeout cut the enumeration short: the answer is partial.
    pub stopped: bool,
    /// Some candidate took a path a loop's unrolling bound cut ([`Ins::CutOff`]): it was
    /// not judged, and the answer holds only up to the bound (herd7 prints `Loop`).
    pub cut: bool,
    pub elapsed: Duration,
}

/// Every consistent execution of `p` under `model`.
pub fn check(p: &Program, model: &Model, opts: &Options) -> Result<Answer, Error> {
    let start = Instant::now();
    let mut tags = Tags::default();
    let threads = paths::all_paths(p, &mut tags)?;
    let init_tags: Vec<u16> = p.init_tags.iter().map(|t| tags.id(t)).collect();
    for name in &p.arch_sets {
        tags.id(name);
    }
    // Every combination of one path per thread, as an odometer over path indices.
    let mut combos: Vec<Vec<u32>> = Vec::new();
    if threads.iter().all(|ps| !ps.is_empty()) {
        let mut idx = vec![0u32; threads.len()];
        'odometer: loop {
            combos.push(idx.clone());
            for (k, ps) in threads.iter().enumerate() {
                idx[k] += 1;
                if (idx[k] as usize) < ps.len() {
                    continue 'odometer;
                }
                idx[k] = 0;
            }
            break;
        }
    }
    let deadline = opts.timeout.map(|t| start + t);
    let stop = AtomicBool::new(false);
    let ctx = Ctx {
        p,
        model,
        opts,
        threads: &threads,
        tags: &tags,
        init_tags: &init_tags,
        deadline,
        stop: &stop,
    };
    let partial =
        combos
            .par_iter()
            .map(|c| ctx.combo(c))
            .try_reduce(Answer::default, |mut a, b| {
                a.merge(b);
                Ok(a)
            })?;
    let mut ans = partial;
    ans.stopped = stop.load(Ordering::Relaxed);
    ans.elapsed = start.elapsed();
    Ok(ans)
}

impl Answer {
    fn merge(&mut self, b: Answer) {
        self.cut |= b.cut;
        self.candidates += b.candidates;
        self.consistent += b.consistent;
        for (k, v) in b.flags {
            *self.flags.entry(k).or_default() += v;
        }
        for (st, info) in b.states {
            let e = self.states.entry(st).or_default();
            e.executions += info.executions;
            for (k, v) in info.flags {
                *e.flags.entry(k).or_default() += v;
            }
        }
    }
}

struct Ctx<'a> {
    p: &'a Program,
    model: &'a Model,
    opts: &'a Options,
    threads: &'a [Vec<Path>],
    tags: &'a Tags,
    init_tags: &'a [u16],
    deadline: Option<Instant>,
    stop: &'a AtomicBool,
}

/// One event of a candidate execution.
struct Ev<'a> {
    thread: Option<usize>,
    /// Position in its thread's path.
    index: usize,
    kind: Kind,
    loc: Option<LocId>,
    read: Option<Val>,
    write: Option<Val>,
    tags: &'a [u16],
    instance: u32,
}

impl<'a> Ctx<'a> {
    /// Every reads-from choice for one path per thread.
    fn combo(&self, combo: &[u32]) -> Result<Answer, Error> {
        let mut ans = Answer::default();
        if self.stop.load(Ordering::Relaxed) {
            return Ok(ans);
        }
        let p = self.p;
        let mut evs: Vec<Ev> = Vec::new();
        for (l, loc) in p.locations.iter().enumerate() {
            evs.push(Ev {
                thread: None,
                index: 0,
                kind: Kind::Write,
                loc: Some(l as LocId),
                read: None,
                write: Some(loc.init),
                tags: self.init_tags,
                instance: 0,
            });
        }
        let mut first = Vec::new();
        for (t, &pi) in combo.iter().enumerate() {
            first.push(evs.len());
            for (i, e) in self.threads[t][pi as usize].events.iter().enumerate() {
                evs.push(Ev {
                    thread: Some(t),
                    index: i,
                    kind: e.kind,
                    loc: e.loc,
                    read: e.read,
                    write: e.write,
                    tags: &e.tags,
                    instance: e.instance,
                });
            }
        }
        let n = evs.len();
        // For every read, the writes it may read from: same location, the value it read,
        // and not a later write of its own instruction, which depends on it (herd7 drops
        // such candidates before the model: their values would have no solution).
        let reads: Vec<usize> = (0..n).filter(|&i| evs[i].read.is_some()).collect();
        let mut sources: Vec<Vec<usize>> = Vec::with_capacity(reads.len());
        for &r in &reads {
            let s: Vec<usize> = (0..n)
                .filter(|&w| {
                    w != r
                        && !(evs[w].thread == evs[r].thread
                            && evs[w].instance == evs[r].instance
                            && evs[w].index > evs[r].index)
                        && evs[w].write.is_some()
                        && evs[w].loc == evs[r].loc
                        && evs[w].write == evs[r].read
                })
                .collect();
            if s.is_empty() {
                return Ok(ans);
            }
            sources.push(s);
        }
        // herd7 notes a candidate whose path a loop bound cut, and does not judge it.
        if combo
            .iter()
            .enumerate()
            .any(|(t, &pi)| self.threads[t][pi as usize].cut)
        {
            ans.cut = true;
            return Ok(ans);
        }
        let mut exec = self.static_execution(&evs, combo, &first);
        exec.rels.insert("rf".to_string(), Relation::new(n));
        // The sources of the previous choice, whose pairs the next one removes.
        let mut last: Vec<usize> = Vec::with_capacity(reads.len());
        let mut choice = vec![0usize; reads.len()];
        loop {
            if let Some(d) = self.deadline {
                if Instant::now() >= d {
                    self.stop.store(true, Ordering::Relaxed);
                    return Ok(ans);
                }
            }
            // One `rf` for the whole combination, its pairs replaced per choice: nothing
            // is allocated per candidate.
            let rf = exec
                .rels
                .get_mut("rf")
                .expect("rf is set up with the execution");
            for (k, &r) in reads.iter().enumerate() {
                if let Some(&old) = last.get(k) {
                    rf.remove(old, r);
                }
                rf.insert(sources[k][choice[k]], r);
            }
            last.clear();
            last.extend(reads.iter().enumerate().map(|(k, _)| sources[k][choice[k]]));
            self.judge(&exec, &evs, combo, &mut ans)?;
            // Next reads-from choice.
            let mut k = 0;
            loop {
                if k == reads.len() {
                    return Ok(ans);
                }
                choice[k] += 1;
                if choice[k] < sources[k].len() {
                    break;
                }
                choice[k] = 0;
                k += 1;
            }
        }
    }

    /// Sets and relations that do not depend on `rf`.
    fn static_execution(&self, evs: &[Ev], combo: &[u32], first: &[usize]) -> Execution {
        let n = evs.len();
        let set = |f: &dyn Fn(&Ev) -> bool| {
            let mut s = EventSet::new(n);
            for (i, e) in evs.iter().enumerate() {
                if f(e) {
                    s.insert(i);
                }
            }
            s
        };
        let mut sets = BTreeMap::new();
        let is_r = |e: &Ev| matches!(e.kind, Kind::Read | Kind::Update);
        let is_w = |e: &Ev| matches!(e.kind, Kind::Write | Kind::Update);
        sets.insert("R".to_string(), set(&|e| is_r(e)));
        sets.insert("W".to_string(), set(&|e| is_w(e)));
        sets.insert("M".to_string(), set(&|e| e.loc.is_some()));
        sets.insert("Exp".to_string(), set(&|e| e.loc.is_some()));
        sets.insert("F".to_string(), set(&|e| e.kind == Kind::Fence));
        sets.insert("IW".to_string(), set(&|e| e.thread.is_none()));
        sets.insert("FW".to_string(), EventSet::new(n));
        for (t, name) in self.tags.names.iter().enumerate() {
            let t = t as u16;
            sets.insert(name.clone(), set(&|e| e.tags.contains(&t)));
        }
        let rel = |f: &dyn Fn(usize, &Ev, usize, &Ev) -> bool| {
            let mut r = Relation::new(n);
            for (i, a) in evs.iter().enumerate() {
                for (j, b) in evs.iter().enumerate() {
                    if f(i, a, j, b) {
                        r.insert(i, j);
                    }
                }
            }
            r
        };
        let mut rels = BTreeMap::new();
        rels.insert(
            "po".to_string(),
            rel(&|_, a, _, b| {
                a.thread.is_some()
                    && a.thread == b.thread
                    && a.index < b.index
                    && a.instance != b.instance
            }),
        );
        rels.insert(
            "loc".to_string(),
            rel(&|_, a, _, b| a.loc.is_some() && a.loc == b.loc),
        );
        rels.insert(
            "int".to_string(),
            rel(&|_, a, _, b| a.thread.is_some() && a.thread == b.thread),
        );
        // The initial writes belong to no thread: external to every thread's events, not
        // to each other (as in herd7).
        rels.insert("ext".to_string(), rel(&|_, a, _, b| a.thread != b.thread));
        rels.insert("id".to_string(), rel(&|i, _, j, _| i == j));
        rels.insert(
            "same-instance".to_string(),
            rel(&|_, a, _, b| {
                a.thread.is_some() && a.thread == b.thread && a.instance == b.instance
            }),
        );
        let dep = |which: fn(&paths::PathEvent) -> u128| {
            let mut r = Relation::new(n);
            for (t, &pi) in combo.iter().enumerate() {
                let path = &self.threads[t][pi as usize];
                for (j, e) in path.events.iter().enumerate() {
                    let mut bits = which(e);
                    while bits != 0 {
                        let i = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        r.insert(first[t] + i, first[t] + j);
                    }
                }
            }
            r
        };
        rels.insert("addr".to_string(), dep(|e| e.addr_deps));
        rels.insert("data".to_string(), dep(|e| e.data_deps));
        rels.insert("ctrl".to_string(), dep(|e| e.ctrl_deps));
        let locations = evs.iter().map(|e| e.loc).collect();
        let values = evs
            .iter()
            .map(|e| match e.write.or(e.read) {
                Some(Val::Int(v)) => Some(v),
                _ => None,
            })
            .collect();
        Execution {
            n,
            sets,
            rels,
            locations,
            location_names: self.p.locations.iter().map(|l| l.name.clone()).collect(),
            values,
            ..Execution::default()
        }
    }

    fn judge(
        &self,
        exec: &Execution,
        evs: &[Ev],
        combo: &[u32],
        ans: &mut Answer,
    ) -> Result<(), Error> {
        let p = self.p;
        let mut failure = None;
        self.model
            .run(exec, &self.opts.variants, &mut |o| {
                ans.candidates += 1;
                if !o.consistent() || failure.is_some() {
                    return;
                }
                let Some(co) = o.rel("co") else {
                    failure = Some(Error::Model(
                        "the model does not define `co`: final values of locations are unknown"
                            .into(),
                    ));
                    return;
                };
                ans.consistent += 1;
                let mut state = Vec::with_capacity(p.observables.len());
                for ob in &p.observables {
                    state.push(match *ob {
                        Observable::Reg { thread, reg } => {
                            self.threads[thread][combo[thread] as usize].regs[reg as usize]
                        }
                        Observable::Loc(l) => {
                            // The write to `l` no other write follows in `co`.
                            let ws: Vec<usize> = (0..evs.len())
                                .filter(|&w| evs[w].write.is_some() && evs[w].loc == Some(l))
                                .collect();
                            let last = ws
                                .iter()
                                .copied()
                                .find(|&w| ws.iter().all(|&x| x == w || !co.contains(w, x)))
                                .unwrap_or(l as usize);
                            evs[last].write.expect("a write")
                        }
                    });
                }
                let info = ans.states.entry(state).or_default();
                info.executions += 1;
                for f in o.flags() {
                    *info.flags.entry(f.clone()).or_default() += 1;
                    *ans.flags.entry(f.clone()).or_default() += 1;
                }
            })
            .map_err(|e| Error::Model(e.to_string()))?;
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
