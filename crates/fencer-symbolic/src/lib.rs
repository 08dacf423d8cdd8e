//! The symbolic engine (`--engine abpress`): lazy abstraction (Impact) over the tree of
//! interleavings under SC, after AbPress (Impara), for programs with inputs
//! (`Op::Nondet`) and loops without bounds.
//!
//! - A node of the abstract reachability tree is a state reached by a path: the threads'
//!   control, the memory's shape and its concrete values (the node's *key*), symbolic values
//!   over the path's inputs and the path condition ([`exec::St`]), and a *label*: a formula
//!   in CNF over the state's symbolic variables that holds in every state the node stands for
//!   (`true` until refinement strengthens it).
//! - An edge is one step of one thread, grouped as the concrete machine groups it (a
//!   visible instruction and the local ones after it), split where a symbolic branch goes
//!   both ways.
//! - A symbolic decision with an infeasible alternative prunes it, and the pruning is
//!   paid for at once: the weakest precondition of the alternative's path (to `false`) is
//!   conjoined to the labels from the node up to the first ancestor whose label already
//!   implies it ([`wlp`]; why not interpolants is said there). So the labels always justify
//!   every pruned alternative, which is what makes covers sound.
//! - A node is covered by an earlier, uncovered node with the same key, an implied label
//!   and a sleep set that is a subset of its own; a covered node (and its subtree) is not
//!   expanded. Strengthening a label uncovers what it covered.
//! - Partial-order reduction: sleep sets only (with steps that touch different cells, or
//!   only registers, independent). The paper's source sets with summaries (its
//!   Definitions 7-8) are not implemented: every enabled thread not asleep is expanded, so
//!   no backtracking set depends on the (cut) subtree of a covered node, and the sleep-set
//!   inclusion condition on covers is what keeps them sound (Godefroid's state matching
//!   with sleep sets).
//! - A violation found is a feasible path: its inputs come from a model of the path
//!   condition, checked to satisfy it; the caller replays it on the concrete machine.

pub mod exec;
pub mod wlp;

use exec::{independent, key_eq, key_hash, End, Exec, Fault, Kind, Micro, SVar, St, Stop};
use fencer_ir::{Program, Value};
use fencer_smt::cnf::Clause;
use fencer_smt::{Lit, Sort};
use rustc_hash::FxHashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Options {
    /// Most tree nodes before giving up (`incomplete`).
    pub max_nodes: usize,
    pub timeout: Option<Duration>,
    /// Theory checks one label implication may take before it counts as "not proved".
    pub cover_budget: u64,
    /// Resident memory (bytes) at which the search stops (`incomplete`), checked now and
    /// then: the tree keeps every node's state.
    pub max_memory: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_nodes: 2_000_000,
            timeout: None,
            cover_budget: 200,
            max_memory: 6 << 30,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub nodes: usize,
    /// Nodes covered when the search ended.
    pub covered: usize,
    /// Cover relations established over the search (some are undone by refinement).
    pub covers_made: usize,
    pub refinements: usize,
    pub solver_calls: u64,
    pub solver_time: Duration,
    pub elapsed: Duration,
}

/// A violation: the threads' steps in order (after the initial local prefixes), the values
/// each thread's inputs take in the order it reads them, and the fault at the end.
#[derive(Clone, Debug)]
pub struct Trace {
    pub schedule: Vec<u32>,
    pub inputs: Vec<Vec<Value>>,
    pub fault: Fault,
}

#[derive(Clone, Debug)]
pub enum Incomplete {
    Timeout,
    MaxNodes,
    Memory,
    /// The program does something the engine does not model; the answer would not be sound.
    Unsupported(String),
    /// The solver could not decide something the answer depends on.
    Unknown(String),
}

#[derive(Clone, Debug)]
pub enum Verdict {
    Safe,
    Unsafe(Trace),
    Incomplete(Incomplete),
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub verdict: Verdict,
    pub stats: Stats,
}

struct Node {
    parent: usize,
    /// The thread whose visible instruction the edge from the parent executed (`None` when
    /// it ran pending local instructions only: no step of the machine).
    thread: Option<u32>,
    ops: Vec<Micro>,
    st: Rc<St>,
    key: u64,
    label: Vec<Clause>,
    covered_by: Option<usize>,
    covers: Vec<usize>,
    children: Vec<usize>,
    expanded: bool,
    sleep: Vec<u32>,
}

enum Abort {
    Found(Trace),
    Stop(Incomplete),
}

struct Engine<'p> {
    prog: &'p Program,
    opts: Options,
    nodes: Vec<Node>,
    by_key: FxHashMap<u64, Vec<usize>>,
    svars: FxHashMap<SVar, u32>,
    work: Vec<usize>,
    stats: Stats,
    start: Instant,
    /// Why the answer cannot be "safe" even if the search completes.
    unsure: Option<String>,
}

fn int_sort(_: fencer_smt::Var) -> Sort {
    Sort::Int
}

/// Explores the program's interleavings and inputs.
pub fn check(prog: &Program, opts: &Options) -> Outcome {
    let mut e = Engine {
        prog,
        opts: opts.clone(),
        nodes: Vec::new(),
        by_key: FxHashMap::default(),
        svars: FxHashMap::default(),
        work: Vec::new(),
        stats: Stats::default(),
        start: Instant::now(),
        unsure: None,
    };
    let verdict = match e.run() {
        Ok(()) => match e.unsure.take() {
            None => Verdict::Safe,
            Some(why) => Verdict::Incomplete(Incomplete::Unknown(why)),
        },
        Err(Abort::Found(t)) => Verdict::Unsafe(t),
        Err(Abort::Stop(i)) => Verdict::Incomplete(i),
    };
    e.stats.nodes = e.nodes.len();
    e.stats.covered = e.nodes.iter().filter(|n| n.covered_by.is_some()).count();
    e.stats.elapsed = e.start.elapsed();
    Outcome {
        verdict,
        stats: e.stats,
    }
}

/// The initial state before any local instruction ran.
fn initial(prog: &Program) -> St {
    use exec::{Cell, Frame, Obj, Thread, V};
    let mem = prog
        .objects
        .iter()
        .map(|o| {
            let mut cells = vec![Cell::V(V::C(0)); o.size as usize];
            for &(k, v) in &o.init {
                if k < o.size {
                    cells[k as usize] = Cell::V(V::C(v));
                }
            }
            Obj {
                cells: Rc::new(cells),
                alive: true,
                heap: false,
            }
        })
        .collect();
    let threads = prog
        .threads
        .iter()
        .map(|t| {
            let f = &prog.functions[t.func as usize];
            let mut regs = vec![V::C(0); f.num_regs()];
            if f.params > 0 && !regs.is_empty() {
                regs[0] = V::C(t.arg);
            }
            Thread {
                frames: vec![Frame {
                    func: t.func,
                    pc: 0,
                    regs: Rc::new(regs),
                    ret: None,
                    stack: Vec::new(),
                }],
                finished: false,
            }
        })
        .collect();
    St {
        threads,
        mem,
        pc: Vec::new(),
        inputs: Vec::new(),
        pending: (0..prog.threads.len() as u32).collect(),
    }
}

/// Whether a model satisfies a conjunction exactly (the checker's integer reasoning may
/// be approximate; a counterexample must not be).
fn model_satisfies(lits: &[Lit], val: &dyn Fn(u32) -> i128) -> bool {
    lits.iter().all(|l| match l {
        Lit::Arith(lin, rel) => {
            let v = lin
                .terms
                .iter()
                .fold(lin.k as i128, |a, &(x, c)| a + c as i128 * val(x));
            match rel {
                fencer_smt::Rel::Eq => v == 0,
                fencer_smt::Rel::Ne => v != 0,
                fencer_smt::Rel::Le => v <= 0,
                fencer_smt::Rel::Lt => v < 0,
            }
        }
        _ => false,
    })
}

impl Engine<'_> {
    fn limits(&self) -> Result<(), Abort> {
        if self.nodes.len() >= self.opts.max_nodes {
            return Err(Abort::Stop(Incomplete::MaxNodes));
        }
        if let Some(t) = self.opts.timeout {
            if self.start.elapsed() >= t {
                return Err(Abort::Stop(Incomplete::Timeout));
            }
        }
        if self.nodes.len() & 4095 == 0 && rss_bytes().is_some_and(|m| m > self.opts.max_memory) {
            return Err(Abort::Stop(Incomplete::Memory));
        }
        Ok(())
    }

    fn sat(&mut self, lits: &[Lit]) -> Option<fencer_smt::Model> {
        let t = Instant::now();
        self.stats.solver_calls += 1;
        let r = fencer_smt::check(&int_sort, lits);
        self.stats.solver_time += t.elapsed();
        r
    }

    fn run(&mut self) -> Result<(), Abort> {
        let st = initial(self.prog);
        self.nodes.push(Node {
            parent: usize::MAX,
            thread: None,
            ops: Vec::new(),
            key: 0,
            st: Rc::new(st),
            label: Vec::new(),
            covered_by: None,
            covers: Vec::new(),
            children: Vec::new(),
            expanded: false,
            sleep: Vec::new(),
        });
        self.work.push(0);
        while let Some(v) = self.work.pop() {
            self.limits()?;
            if self.nodes[v].expanded || self.is_covered(v) {
                continue;
            }
            if self.try_cover(v) {
                continue;
            }
            self.expand(v)?;
        }
        Ok(())
    }

    fn is_covered(&self, mut v: usize) -> bool {
        while v != usize::MAX {
            if self.nodes[v].covered_by.is_some() {
                return true;
            }
            v = self.nodes[v].parent;
        }
        false
    }

    fn implies(&mut self, a: &[Clause], b: &[Clause]) -> bool {
        if b.iter().all(|c| a.contains(c)) {
            return true;
        }
        let t = Instant::now();
        let mut budget = self.opts.cover_budget;
        let r = fencer_smt::cnf::implies(&int_sort, &[], a, b, &mut budget);
        self.stats.solver_calls += self.opts.cover_budget - budget;
        self.stats.solver_time += t.elapsed();
        r == Some(true)
    }

    fn try_cover(&mut self, v: usize) -> bool {
        if v == 0 {
            return false;
        }
        let key = self.nodes[v].key;
        let Some(cands) = self.by_key.get(&key).cloned() else {
            return false;
        };
        for w in cands {
            if w >= v || self.is_covered(w) {
                continue;
            }
            if !self.nodes[w]
                .sleep
                .iter()
                .all(|s| self.nodes[v].sleep.contains(s))
            {
                continue;
            }
            if !key_eq(&self.nodes[v].st, &self.nodes[w].st) {
                continue;
            }
            let (lv, lw) = (self.nodes[v].label.clone(), self.nodes[w].label.clone());
            if self.implies(&lv, &lw) {
                self.cover(v, w);
                return true;
            }
        }
        false
    }

    fn subtree(&self, v: usize) -> Vec<usize> {
        let mut out = vec![v];
        let mut i = 0;
        while i < out.len() {
            out.extend(self.nodes[out[i]].children.iter().copied());
            i += 1;
        }
        out
    }

    fn cover(&mut self, v: usize, w: usize) {
        self.nodes[v].covered_by = Some(w);
        self.nodes[w].covers.push(v);
        self.stats.covers_made += 1;
        // Nodes covered by this subtree relied on a part of the tree that stops growing.
        for y in self.subtree(v) {
            for x in std::mem::take(&mut self.nodes[y].covers) {
                if x == v {
                    self.nodes[y].covers.push(x);
                    continue;
                }
                self.uncover(x);
            }
        }
    }

    fn uncover(&mut self, x: usize) {
        if let Some(w) = self.nodes[x].covered_by.take() {
            self.nodes[w].covers.retain(|&y| y != x);
        }
        for y in self.subtree(x) {
            if !self.nodes[y].expanded {
                self.work.push(y);
            }
        }
    }

    fn intern(svars: &mut FxHashMap<SVar, u32>, v: SVar) -> u32 {
        let n = svars.len() as u32;
        *svars.entry(v).or_insert(n)
    }

    fn expand(&mut self, u: usize) -> Result<(), Abort> {
        self.nodes[u].expanded = true;
        let st = self.nodes[u].st.clone();
        if !st.pending.is_empty() {
            // Pending local instructions commute with every other thread's steps: they
            // alone are explored, and the sleep set carries over.
            let sleep = self.nodes[u].sleep.clone();
            for (s2, ops) in self.explore_step(u, None)? {
                self.add_child(u, None, s2, ops, sleep.clone());
            }
            self.push_children(u);
            return Ok(());
        }
        let n = st.threads.len() as u32;
        let mut svars = std::mem::take(&mut self.svars);
        let mut intern = |v| Self::intern(&mut svars, v);
        let probe = Exec::new(self.prog, (*st).clone(), &[], &mut intern);
        let enabled: Vec<u32> = (0..n).filter(|&t| probe.enabled(t)).collect();
        drop(probe);
        let mut acc = FxHashMap::default();
        for t in 0..n {
            if st.threads[t as usize].finished {
                continue;
            }
            let mut probe = Exec::new(self.prog, (*st).clone(), &[], &mut intern);
            acc.insert(t, probe.access(t));
        }
        self.svars = svars;
        let sleep = self.nodes[u].sleep.clone();
        let mut done: Vec<u32> = Vec::new();
        for &t in &enabled {
            if sleep.contains(&t) {
                continue;
            }
            let at = acc[&t];
            let mut child_sleep: Vec<u32> = sleep
                .iter()
                .chain(done.iter())
                .copied()
                .filter(|s| acc.get(s).is_some_and(|&a| independent(a, at)))
                .collect();
            child_sleep.sort();
            child_sleep.dedup();
            for (s2, ops) in self.explore_step(u, Some(t))? {
                self.add_child(u, Some(t), s2, ops, child_sleep.clone());
            }
            done.push(t);
        }
        self.push_children(u);
        Ok(())
    }

    /// Once expanded, a node's path condition and inputs are needed no more (covers compare
    /// keys only, refinement reads labels and edges): dropping them keeps long paths from
    /// costing their length at every node.
    fn forget_path(&mut self, u: usize) {
        let st = &self.nodes[u].st;
        if st.pc.is_empty() && st.inputs.is_empty() {
            return;
        }
        let mut slim = (**st).clone();
        slim.pc = Vec::new();
        slim.inputs = Vec::new();
        self.nodes[u].st = Rc::new(slim);
    }

    fn push_children(&mut self, u: usize) {
        self.forget_path(u);
        for &c in self.nodes[u].children.iter().rev() {
            self.work.push(c);
        }
    }

    fn add_child(&mut self, u: usize, t: Option<u32>, st: St, ops: Vec<Micro>, sleep: Vec<u32>) {
        let key = key_hash(&st);
        let id = self.nodes.len();
        self.nodes.push(Node {
            parent: u,
            thread: t,
            ops,
            st: Rc::new(st),
            key,
            label: Vec::new(),
            covered_by: None,
            covers: Vec::new(),
            children: Vec::new(),
            expanded: false,
            sleep,
        });
        self.nodes[u].children.push(id);
        self.by_key.entry(key).or_default().push(id);
    }

    /// The successors of node `u` by thread `t`'s step, one per feasible combination of
    /// symbolic decisions; infeasible alternatives are refined away.
    fn explore_step(&mut self, u: usize, t: Option<u32>) -> Result<Vec<(St, Vec<Micro>)>, Abort> {
        let st = self.nodes[u].st.clone();
        let mut out = Vec::new();
        let mut stack: Vec<Vec<bool>> = vec![Vec::new()];
        while let Some(choices) = stack.pop() {
            self.limits()?;
            let mut svars = std::mem::take(&mut self.svars);
            let mut intern = |v| Self::intern(&mut svars, v);
            let ex = Exec::new(self.prog, (*st).clone(), &choices, &mut intern);
            let (end, ops, pc) = ex.run(t);
            self.svars = svars;
            match end {
                Ok(End::Done(s2)) => out.push((s2, ops)),
                Ok(End::Blocked) => {}
                Ok(End::Fault(s2, f)) => self.violation(u, t, &s2, f)?,
                Err(Stop::Decide { f, b, kind }) => {
                    for alt in [true, false] {
                        if kind == Kind::Assume && !alt {
                            continue;
                        }
                        let (lf, lb) = if alt {
                            (f.clone(), b.clone())
                        } else {
                            (f.negate(), b.negate())
                        };
                        let mut pc2 = pc.clone();
                        pc2.push(lf);
                        if self.sat(&pc2).is_none() {
                            let mut path = ops.clone();
                            path.push(Micro::Assume(lb));
                            self.refine(u, path)?;
                            continue;
                        }
                        if kind == Kind::Range && !alt {
                            if std::env::var_os("FENCER_SYMBOLIC_DEBUG").is_some() {
                                eprintln!("range: {pc2:?}");
                            }
                            let src = self.where_(&st, t);
                            return Err(Abort::Stop(Incomplete::Unsupported(format!(
                                "{src}: an arithmetic result may leave the range of its type \
                                 (wrap-around is not modelled: integers are mathematical)"
                            ))));
                        }
                        let mut c = choices.clone();
                        c.push(alt);
                        stack.push(c);
                    }
                }
                Err(Stop::Fault(f)) => self.violation(u, t, &pc_state(&st, pc), f)?,
                Err(Stop::Unsupported(m)) => {
                    return Err(Abort::Stop(Incomplete::Unsupported(m)));
                }
            }
        }
        Ok(out)
    }

    fn where_(&self, st: &St, t: Option<u32>) -> String {
        let t = t.unwrap_or(0) as usize;
        let Some(fr) = st.threads.get(t).and_then(|th| th.frames.last()) else {
            return self.prog.name.clone();
        };
        let f = &self.prog.functions[fr.func as usize];
        match f.body.get(fr.pc as usize) {
            Some(i) => format!(
                "{}:{} (in `{}`)",
                self.prog.file_name(i.loc),
                i.loc.line,
                f.name
            ),
            None => format!("`{}`", f.name),
        }
    }

    /// A fault on a path whose decisions were all found feasible: a counterexample if an
    /// exact model of its path condition exists.
    fn violation(&mut self, u: usize, t: Option<u32>, s2: &St, f: Fault) -> Result<(), Abort> {
        let Some(m) = self.sat(&s2.pc) else {
            // Only an approximate "satisfiable" led here.
            self.unsure = Some("the solver could not decide a path condition".into());
            return Ok(());
        };
        let val = |x: u32| m.int(x) as i128;
        if !model_satisfies(&s2.pc, &val) {
            self.unsure = Some(format!(
                "no integer model found for the path to `{}`",
                f.message
            ));
            return Ok(());
        }
        let mut schedule = Vec::new();
        let mut x = u;
        while x != usize::MAX {
            if let Some(t) = self.nodes[x].thread {
                schedule.push(t);
            }
            x = self.nodes[x].parent;
        }
        schedule.reverse();
        if let (Some(t), true) = (t, self.nodes[u].st.pending.is_empty()) {
            schedule.push(t);
        }
        let mut inputs: Vec<Vec<Value>> = vec![Vec::new(); s2.threads.len()];
        for (k, &(th, _)) in s2.inputs.iter().enumerate() {
            inputs[th as usize].push(m.int(k as u32));
        }
        Err(Abort::Found(Trace {
            schedule,
            inputs,
            fault: f,
        }))
    }

    /// Conjoins to the labels of `u` and its ancestors the weakest precondition of `path`
    /// (micro-operations from `u`) to `false`, up to the first label that already implies it.
    fn refine(&mut self, u: usize, path: Vec<Micro>) -> Result<(), Abort> {
        self.stats.refinements += 1;
        let mut q: Vec<Clause> = vec![Vec::new()];
        for m in path.iter().rev() {
            q = wlp::wlp(m, &q);
        }
        let mut chain: Vec<(usize, Vec<Clause>)> = Vec::new();
        let mut x = u;
        loop {
            if x == 0 {
                // The initial state is concrete: the precondition must be true there.
                if !q.is_empty() {
                    if std::env::var_os("FENCER_SYMBOLIC_DEBUG").is_some() {
                        eprintln!(
                            "refinement failed: path {path:?}\nprecondition at the root: {q:?}"
                        );
                    }
                    return Err(Abort::Stop(Incomplete::Unknown(
                        "refinement could not express why a path is infeasible (an input's \
                         precondition was approximated)"
                            .into(),
                    )));
                }
                break;
            }
            let label = self.nodes[x].label.clone();
            if self.implies(&label, &q) {
                break;
            }
            chain.push((x, q.clone()));
            for m in self.nodes[x].ops.iter().rev() {
                q = wlp::wlp(m, &q);
            }
            x = self.nodes[x].parent;
        }
        for &(x, ref qx) in chain.iter() {
            for c in qx {
                wlp::push_clause(&mut self.nodes[x].label, c.clone());
            }
            for y in std::mem::take(&mut self.nodes[x].covers) {
                if let Some(w) = self.nodes[y].covered_by.take() {
                    debug_assert_eq!(w, x);
                }
                for z in self.subtree(y) {
                    if !self.nodes[z].expanded {
                        self.work.push(z);
                    }
                }
            }
        }
        // Nodes whose labels grew may now be covered, which stops their subtrees (Impact's
        // "close" along the refined path, from the root down).
        for &(x, _) in chain.iter().rev() {
            if self.is_covered(x) {
                break;
            }
            if self.try_cover(x) {
                break;
            }
        }
        Ok(())
    }
}

/// The process's resident memory, where `/proc` says it.
fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = s.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

fn pc_state(st: &St, pc: Vec<Lit>) -> St {
    let mut s = st.clone();
    s.pc = pc;
    s
}
