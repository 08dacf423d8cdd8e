//! The concrete semantics of one instance (a fixed number of processes): states are the
//! values of every cell, transitions fire with their guards evaluated over all processes.
//! It confirms the engine's traces by running them forward, and it is the reference the
//! tests compare the parameterized verdicts with (explicit exploration of small instances).

use crate::formula::{Formula, Lin, Lit, Rel, Term};
use crate::search::{instantiate_all, Step};
use crate::{Atom, ProcRef, Rhs, Sort, System, Transition};
use rustc_hash::FxHashSet;
use std::collections::VecDeque;

/// Values of all cells: enumeration constructors by index, processes by number, numbers.
pub type State = Vec<i64>;

pub struct Instance<'a> {
    pub sys: &'a System,
    pub procs: u8,
    base: Vec<usize>,
    pub width: usize,
    /// Nondeterministic assignments of numbers and abstract values choose among 0, 1 and
    /// 2 only (BRAB's forward exploration: fewer states, all of them reachable).
    pub small: bool,
    /// The system orders process cells (`Turn < i`): see [`Instance::proc_range`].
    ordered_cells: bool,
    /// The argument tuples of a transition by its number of parameters: BRAB's
    /// exploration asks for every state's successors (flash: 69 transitions, 18,000 states).
    args: Vec<Vec<Vec<u8>>>,
}

impl<'a> Instance<'a> {
    pub fn new(sys: &'a System, procs: u8) -> Instance<'a> {
        let mut base = Vec::new();
        let mut w = 0;
        for g in &sys.globals {
            base.push(w);
            w += (procs as usize).pow(g.arity as u32);
        }
        let params = sys.transitions.iter().map(|t| t.params).max().unwrap_or(0);
        Instance {
            sys,
            procs,
            base,
            width: w,
            small: false,
            ordered_cells: sys.procs.is_none() && orders_proc_cells(sys),
            args: (0..=params).map(|k| placements(k, procs)).collect(),
        }
    }

    /// The cells of abstract sort.
    fn abstract_cells(&self) -> impl Iterator<Item = usize> + '_ {
        self.sys
            .globals
            .iter()
            .enumerate()
            .filter(|(_, g)| g.sort == Sort::Abstract)
            .flat_map(move |(g, glob)| {
                let n = (self.procs as usize).pow(glob.arity as u32);
                self.base[g]..self.base[g] + n
            })
    }

    /// Renumbers the abstract values of a state by first occurrence. Abstract values are
    /// only compared with each other (no constants, no arithmetic), so a bijection of them
    /// maps reachable states to reachable states and changes no literal's truth: one state
    /// per class is enough for BRAB's oracle, which then reaches deeper within its bound.
    pub fn canon_abstract(&self, s: &mut State) {
        let mut seen: Vec<i64> = Vec::new();
        for c in self.abstract_cells().collect::<Vec<_>>() {
            let v = s[c];
            s[c] = match seen.iter().position(|&x| x == v) {
                Some(k) => k as i64,
                None => {
                    seen.push(v);
                    seen.len() as i64 - 1
                }
            };
        }
    }

    /// How many values a process cell of the instance can hold: its processes and one
    /// identifier of no process (`procs`). The backward search's process sort is
    /// infinite, so `init` may ask a cell to differ from every process (flash's
    /// `Home <> p`); the oracle's exploration, the initial states a trace is replayed
    /// from and the explicit exploration all use this one domain, so that they agree on
    /// which states exist. One such identifier only: an `init` that needs two distinct
    /// ones is not met, and a trace from it does not run (never a wrong answer). Under
    /// `number_procs` the sort is those processes (the search's solver says so too): no
    /// other identifier, or a trace could run through a state the system does not have.
    pub fn proc_values(&self) -> u8 {
        if self.sys.procs.is_some() {
            self.procs
        } else {
            self.procs + 1
        }
    }

    /// The values a process cell can hold: the processes `0..procs` (whose identifiers,
    /// as `i < j` and `Turn < i` order them, are those numbers), the identifier of no
    /// process `procs` above them (see [`Instance::proc_values`]) and, when the system
    /// orders process cells, another one below them, `-1`: the search's identifiers are
    /// any integers, and a trace may need a cell that holds no process and is smaller
    /// than every process (MCMT's sentinel identifiers). Identifiers of no process
    /// between two processes are not represented: a trace that needs one does not run
    /// (never a wrong answer).
    pub fn proc_range(&self) -> std::ops::RangeInclusive<i64> {
        let lo = if self.ordered_cells { -1 } else { 0 };
        lo..=self.proc_values() as i64 - 1
    }

    pub fn cell(&self, g: u32, idx: &[u8]) -> usize {
        let mut o = 0;
        for &i in idx {
            o = o * self.procs as usize + i as usize;
        }
        self.base[g as usize] + o
    }

    fn proc(env: &[u8], p: ProcRef) -> u8 {
        match p {
            ProcRef::Var(i) => env[i as usize],
            ProcRef::Const(c) => c,
        }
    }

    fn atom(&self, s: &State, env: &[u8], a: &Atom) -> i64 {
        match a {
            // The offset computed in place (as `cell` does): BRAB's oracle evaluates
            // candidates over thousands of states, and a vector per access dominated.
            Atom::Cell(g, idx) => {
                let o = idx.iter().fold(0usize, |o, p| {
                    o * self.procs as usize + Self::proc(env, *p) as usize
                });
                s[self.base[*g as usize] + o]
            }
            Atom::Pid(p) => Self::proc(env, *p) as i64,
            // A TSO state (see `tso`) holds each thread's view of memory after memory.
            Atom::Read(g, idx, p, _) => {
                let idx: Vec<u8> = idx.iter().map(|q| Self::proc(env, *q)).collect();
                let cell = self.cell(*g, &idx);
                let view = self.width * (1 + Self::proc(env, *p) as usize) + cell;
                s.get(view).copied().unwrap_or(s[cell])
            }
            Atom::Fresh(..) => {
                unreachable!("transitions and cubes given to run have no fresh atoms")
            }
        }
    }

    /// A term under `env` as the offset of the cell it reads (`Ok`) or its value (`Err`),
    /// when it is one of those.
    fn resolve(&self, env: &[u8], t: &Term) -> Option<Result<usize, i64>> {
        match t {
            Term::Proc(p) | Term::Atom(Atom::Pid(p)) => Some(Err(Self::proc(env, *p) as i64)),
            Term::Val(v) => Some(Err(*v as i64)),
            Term::Atom(Atom::Cell(g, idx)) => {
                let idx: Vec<u8> = idx.iter().map(|p| Self::proc(env, *p)).collect();
                Some(Ok(self.cell(*g, &idx)))
            }
            Term::Atom(_) => None,
        }
    }

    fn term(&self, s: &State, env: &[u8], t: &Term) -> i64 {
        match t {
            Term::Proc(p) => Self::proc(env, *p) as i64,
            Term::Val(v) => *v as i64,
            Term::Atom(a) => self.atom(s, env, a),
        }
    }

    fn lin(&self, s: &State, env: &[u8], l: &Lin) -> i64 {
        l.terms
            .iter()
            .map(|(a, c)| c * self.atom(s, env, a))
            .sum::<i64>()
            + l.k
    }

    pub fn lit(&self, s: &State, env: &[u8], l: &Lit) -> bool {
        match l {
            Lit::Eq(a, b) => self.term(s, env, a) == self.term(s, env, b),
            Lit::Ne(a, b) => self.term(s, env, a) != self.term(s, env, b),
            Lit::Arith(l, r) => {
                let v = self.lin(s, env, l);
                match r {
                    Rel::Eq => v == 0,
                    Rel::Ne => v != 0,
                    Rel::Le => v <= 0,
                    Rel::Lt => v < 0,
                }
            }
        }
    }

    pub fn formula(&self, s: &State, env: &[u8], f: &Formula) -> bool {
        match f {
            Formula::True => true,
            Formula::False => false,
            Formula::Lit(l) => self.lit(s, env, l),
            Formula::And(v) => v.iter().all(|x| self.formula(s, env, x)),
            Formula::Or(v) => v.iter().any(|x| self.formula(s, env, x)),
        }
    }

    /// Whether `t` may fire with these (distinct) arguments.
    pub fn enabled(&self, s: &State, t: &Transition, args: &[u8]) -> bool {
        if !self.formula(s, args, &t.guard) {
            return false;
        }
        if t.forall_other.is_empty() {
            return true;
        }
        let mut env = args.to_vec();
        env.push(0);
        for q in 0..self.procs {
            if args.contains(&q) {
                continue;
            }
            env[args.len()] = q;
            if !t.forall_other.iter().all(|f| self.formula(s, &env, f)) {
                return false;
            }
        }
        true
    }

    /// Values a nondeterministic assignment of a cell of sort `sort` is tried with: all of a
    /// finite sort (a process cell: [`Instance::proc_values`], as the search's fresh value
    /// of the infinite sort may be no process); for numbers and abstract values, those of
    /// the state, their neighbours and a new one.
    fn choices(&self, s: &State, sort: Sort) -> Vec<i64> {
        match sort {
            Sort::Enum(t) => (0..self.sys.types[t as usize].1.len() as i64).collect(),
            Sort::Proc => self.proc_range().collect(),
            // States of BRAB's exploration number their abstract values by first occurrence
            // (see `canon_abstract`): the values in use and one new one are every choice
            // up to renaming.
            Sort::Abstract if self.small => {
                let used = self.abstract_cells().map(|c| s[c]).max().unwrap_or(-1);
                (0..=used + 1).collect()
            }
            Sort::Int | Sort::Real if self.small => vec![0, 1, 2],
            Sort::Abstract | Sort::Int | Sort::Real => {
                let mut v: Vec<i64> = vec![0];
                for (g, glob) in self.sys.globals.iter().enumerate() {
                    if glob.sort == sort {
                        let n = (self.procs as usize).pow(glob.arity as u32);
                        for i in 0..n {
                            let x = s[self.base[g] + i];
                            v.extend([x - 1, x, x + 1]);
                        }
                    }
                }
                v.push(v.iter().copied().max().unwrap_or(0) + 1);
                v.sort();
                v.dedup();
                v
            }
        }
    }

    /// Every state `t` with these arguments leads to (one per choice of nondeterministic
    /// values), assuming it is enabled.
    pub fn fire(&self, s: &State, t: &Transition, args: &[u8]) -> Vec<State> {
        let mut outs = vec![s.clone()];
        for u in &t.updates {
            let g = &self.sys.globals[u.global as usize];
            let n = (self.procs as usize).pow(g.arity as u32);
            for flat in 0..n {
                let mut idx = vec![0u8; g.arity as usize];
                let mut r = flat;
                for d in (0..g.arity as usize).rev() {
                    idx[d] = (r % self.procs as usize) as u8;
                    r /= self.procs as usize;
                }
                let mut env = args.to_vec();
                env.extend(&idx);
                let rhs = u
                    .cases
                    .iter()
                    .find(|(c, _)| self.formula(s, &env, c))
                    .map(|(_, r)| r)
                    .unwrap_or(&u.default);
                let cell = self.cell(u.global, &idx);
                let vals = match rhs {
                    Rhs::Term(tm) => vec![self.term(s, &env, tm)],
                    Rhs::Lin(l) => vec![self.lin(s, &env, l)],
                    Rhs::Nondet => self.choices(s, g.sort),
                };
                let mut next = Vec::with_capacity(outs.len() * vals.len());
                for o in &outs {
                    for &v in &vals {
                        let mut o = o.clone();
                        o[cell] = v;
                        next.push(o);
                    }
                }
                outs = next;
            }
        }
        outs.sort();
        outs.dedup();
        outs
    }

    /// Whether some `unsafe` formula holds for distinct processes of the state.
    pub fn is_unsafe(&self, s: &State) -> bool {
        self.sys.unsafe_.iter().any(|u| {
            let mut maps = Vec::new();
            crate::search::const_maps(u.vars as usize, self.procs, &mut maps, &mut Vec::new());
            maps.iter().any(|m| {
                let env: Vec<u8> = m
                    .iter()
                    .map(|p| match p {
                        ProcRef::Const(c) => *c,
                        ProcRef::Var(v) => *v,
                    })
                    .collect();
                self.formula(s, &env, &u.formula)
            })
        })
    }

    pub fn is_initial(&self, s: &State) -> bool {
        let procs: Vec<ProcRef> = (0..self.procs).map(ProcRef::Const).collect();
        self.formula(s, &[], &instantiate_all(&self.sys.init, &procs))
    }

    /// All transition instances enabled in `s` and where they lead.
    pub fn successors(&self, s: &State, f: &mut dyn FnMut(Step, State)) {
        for (ti, t) in self.sys.transitions.iter().enumerate() {
            for args in &self.args[t.params as usize] {
                if self.enabled(s, t, args) {
                    for n in self.fire(s, t, args) {
                        f(
                            Step {
                                transition: ti,
                                args: args.clone(),
                            },
                            n,
                        );
                    }
                }
            }
        }
    }
}

/// An initial state of the instance satisfying `lits` (over constant processes), from a
/// model of `init` and `lits`; cells nothing constrains hold 0.
pub fn initial_state(inst: &Instance, lits: &[Lit]) -> Option<State> {
    let sys = inst.sys;
    let procs: Vec<ProcRef> = (0..inst.procs).map(ProcRef::Const).collect();
    let init = instantiate_all(&sys.init, &procs);
    let mut given = Vec::new();
    for l in lits {
        match crate::formula::normalize(sys, l) {
            crate::formula::Norm::True => {}
            crate::formula::Norm::False => return None,
            crate::formula::Norm::Lit(l) => given.push(l),
        }
    }
    for mut conj in init.dnf(sys) {
        conj.extend(given.iter().cloned());
        let range = inst.proc_range();
        let bounds = (*range.start(), *range.end());
        let Some((e, m)) = crate::pre::model_within(sys, Some(inst.proc_values()), bounds, &conj)
        else {
            continue;
        };
        let mut s = vec![0; inst.width];
        for (v, a) in e.atoms.iter().enumerate() {
            if let Atom::Cell(g, idx) = a {
                let idx: Vec<u8> = idx
                    .iter()
                    .map(|p| match p {
                        ProcRef::Const(c) | ProcRef::Var(c) => *c,
                    })
                    .collect();
                let value = e.value(sys, &m, v as u32);
                s[inst.cell(*g, &idx)] = value;
            }
        }
        if inst.is_initial(&s) && lits.iter().all(|l| inst.lit(&s, &[], l)) {
            return Some(s);
        }
    }
    None
}

/// Runs `trace` forward on `procs` processes from an initial state satisfying `lits`,
/// searching over the values of nondeterministic assignments; the last state must be
/// unsafe. The states of the run, or why it fails.
/// Under TSO (`sys.tso`) the trace is run on the store-buffer machine ([`crate::tso`]) and
/// the steps returned include its buffer flushes; `readers` are the processes whose
/// `p @ X` reads the unsafe cube has.
pub fn replay(
    sys: &System,
    procs: u8,
    lits: &[Lit],
    trace: &[Step],
    readers: &[u8],
) -> Result<(Vec<Step>, Vec<State>), String> {
    let inst = Instance::new(sys, procs);
    // Ordered processes (`i < j`): the backward search does not say which concrete
    // process each variable is, so every numbering is tried (instances are small).
    if sys.procs.is_none() && procs <= 6 {
        let mut perms = Vec::new();
        crate::search::const_maps(procs as usize, procs, &mut perms, &mut Vec::new());
        for perm in perms {
            let pi = |c: u8| match perm[c as usize] {
                ProcRef::Const(x) | ProcRef::Var(x) => x,
            };
            let lits2: Vec<Lit> = lits
                .iter()
                .map(|l| {
                    l.map_procs(&|p| match p {
                        ProcRef::Const(c) => ProcRef::Const(pi(c)),
                        v => v,
                    })
                })
                .collect();
            let trace2: Vec<Step> = trace
                .iter()
                .map(|s| Step {
                    transition: s.transition,
                    args: s.args.iter().map(|&a| pi(a)).collect(),
                })
                .collect();
            let readers2: Vec<u8> = readers.iter().map(|&r| pi(r)).collect();
            if let Some(p) = run_from_some_initial(&inst, &lits2, &trace2, &readers2) {
                return Ok(p);
            }
            if !uses_order(sys) {
                break;
            }
        }
        return Err("the trace does not run forward to an unsafe state".into());
    }
    run_from_some_initial(&inst, lits, trace, readers)
        .ok_or_else(|| "the trace does not run forward to an unsafe state".to_string())
}

/// The run of `trace` from the solver's initial state for `lits`, or else from any initial
/// state satisfying them (when the instance's initial states are few enough to list).
fn run_from_some_initial(
    inst: &Instance,
    lits: &[Lit],
    trace: &[Step],
    readers: &[u8],
) -> Option<(Vec<Step>, Vec<State>)> {
    let run = |s0: State| -> Option<(Vec<Step>, Vec<State>)> {
        if inst.sys.tso {
            return crate::tso::replay(inst, &s0, trace, readers, 200_000);
        }
        let mut path = vec![s0];
        run(inst, trace, &mut path).then(|| (trace.to_vec(), path))
    };
    if let Some(s0) = initial_state(inst, lits) {
        if let Some(r) = run(s0) {
            return Some(r);
        }
    }
    let all = initial_states(inst, 4096).ok()?;
    let given = plain_lits(inst, lits);
    for s0 in all {
        if !given.iter().all(|l| inst.lit(&s0, &[], l)) {
            continue;
        }
        if let Some(r) = run(s0) {
            return Some(r);
        }
    }
    None
}

fn run(inst: &Instance, trace: &[Step], path: &mut Vec<State>) -> bool {
    run_to(inst, trace, path, &|s| inst.is_unsafe(s))
}

/// Runs `trace` from the last state of `path` (nondeterministic values searched) to a
/// state satisfying `goal`, the states appended to `path`.
fn run_to(
    inst: &Instance,
    trace: &[Step],
    path: &mut Vec<State>,
    goal: &dyn Fn(&State) -> bool,
) -> bool {
    let s = path.last().expect("a state").clone();
    let Some((step, rest)) = trace.split_first() else {
        return goal(&s);
    };
    let t = &inst.sys.transitions[step.transition];
    if !inst.enabled(&s, t, &step.args) {
        return false;
    }
    for n in inst.fire(&s, t, &step.args) {
        path.push(n);
        if run_to(inst, rest, path, goal) {
            return true;
        }
        path.pop();
    }
    false
}

/// The states of a run of `trace` (SC) on `inst` from an initial state satisfying `lits`
/// to one where `goal` holds, if one is found (the solver's initial state, then the
/// listed initial states when they are few).
pub fn replay_to(
    inst: &Instance,
    lits: &[Lit],
    trace: &[Step],
    goal: &dyn Fn(&State) -> bool,
) -> Option<Vec<State>> {
    let go = |s0: State| {
        let mut path = vec![s0];
        run_to(inst, trace, &mut path, goal).then_some(path)
    };
    if let Some(p) = initial_state(inst, lits).and_then(go) {
        return Some(p);
    }
    let given = plain_lits(inst, lits);
    initial_states(inst, 4096)
        .ok()?
        .into_iter()
        .filter(|s0| given.iter().all(|l| inst.lit(s0, &[], l)))
        .find_map(go)
}

/// Every placement of process variables `#1..#k` on distinct processes of an instance with
/// `procs` processes, as the process each variable stands for.
pub fn placements(k: u8, procs: u8) -> Vec<Vec<u8>> {
    let mut maps = Vec::new();
    crate::search::const_maps(k as usize, procs, &mut maps, &mut Vec::new());
    maps.iter()
        .map(|m| {
            m.iter()
                .map(|p| match p {
                    ProcRef::Const(x) | ProcRef::Var(x) => *x,
                })
                .collect()
        })
        .collect()
}

/// The literals among `lits` that normalize to a single literal (the others constrain
/// nothing a state can be checked against directly).
fn plain_lits(inst: &Instance, lits: &[Lit]) -> Vec<Lit> {
    lits.iter()
        .filter_map(|l| match crate::formula::normalize(inst.sys, l) {
            crate::formula::Norm::Lit(l) => Some(l),
            _ => None,
        })
        .collect()
}

/// Whether some state satisfies the literals (over process variables `#1..#k`) for some
/// placement of the variables on distinct processes of the instance.
pub fn satisfied_in(inst: &Instance, states: &[State], k: u8, lits: &[Lit]) -> bool {
    let m = Matcher::new(inst, k, lits);
    states.iter().any(|s| m.matches(s))
}

/// A cell's values, each with the states (bits by position) where the cell holds it.
type Values = Vec<(i64, Vec<u64>)>;

/// For each cell, the states (bits by position) where it holds each of its values; cells
/// with many values are not indexed (arithmetic), [`Matcher::first`] checks them per state.
pub struct StateIndex {
    /// Per cell: its values, each with its bit set, or `None`.
    cells: Vec<Option<Values>>,
    /// Every state.
    all: Vec<u64>,
    none: Vec<u64>,
}

impl StateIndex {
    /// Cells with more distinct values than this are left out of the index.
    const MAX_VALUES: usize = 16;

    pub fn new(width: usize, states: &[State]) -> StateIndex {
        let words = states.len().div_ceil(64);
        let mut cells: Vec<Option<Values>> = vec![Some(Vec::new()); width];
        for (i, s) in states.iter().enumerate() {
            for (c, slot) in cells.iter_mut().enumerate() {
                let Some(vals) = slot else { continue };
                let k = match vals.iter().position(|(v, _)| *v == s[c]) {
                    Some(k) => k,
                    None if vals.len() == Self::MAX_VALUES => {
                        *slot = None;
                        continue;
                    }
                    None => {
                        vals.push((s[c], vec![0; words]));
                        vals.len() - 1
                    }
                };
                vals[k].1[i / 64] |= 1 << (i % 64);
            }
        }
        let mut all = vec![!0u64; words];
        if !states.len().is_multiple_of(64) {
            all[words - 1] = (1u64 << (states.len() % 64)) - 1;
        }
        StateIndex {
            cells,
            all,
            none: vec![0; words],
        }
    }

    /// The states where indexed cell `c` holds `v`.
    fn bits(&self, c: usize, v: i64) -> &[u64] {
        let vals = self.cells[c].as_ref().expect("an indexed cell");
        vals.iter()
            .find(|(x, _)| *x == v)
            .map_or(&self.none, |(_, b)| b)
    }
}

/// One literal with its process variables placed: a comparison of a cell with a value
/// or with another cell reads the state directly.
enum Check<'l> {
    Val(usize, i64, bool),
    Cells(usize, usize, bool),
    Lit(&'l Lit),
}

/// Literals over `#1..#k`, evaluated over states for every placement of the variables on
/// distinct processes, each literal resolved to cell offsets once: BRAB's oracle tests
/// every candidate against thousands of states, and reading cells through `Instance::lit`
/// was a fifth of flash_buggy's time.
pub struct Matcher<'a, 'l> {
    inst: &'a Instance<'a>,
    /// Per placement that no literal makes false by itself: its checks and the placement.
    envs: Vec<(Vec<Check<'l>>, Vec<u8>)>,
}

impl<'a, 'l> Matcher<'a, 'l> {
    pub fn new(inst: &'a Instance<'a>, k: u8, lits: &'l [Lit]) -> Matcher<'a, 'l> {
        let mut envs = Vec::new();
        if k <= inst.procs {
            'env: for env in placements(k, inst.procs) {
                let mut checks = Vec::new();
                for l in lits {
                    let (a, b, eq) = match l {
                        Lit::Eq(a, b) => (a, b, true),
                        Lit::Ne(a, b) => (a, b, false),
                        Lit::Arith(..) => {
                            checks.push(Check::Lit(l));
                            continue;
                        }
                    };
                    match (inst.resolve(&env, a), inst.resolve(&env, b)) {
                        (Some(Ok(c)), Some(Err(v))) | (Some(Err(v)), Some(Ok(c))) => {
                            checks.push(Check::Val(c, v, eq))
                        }
                        (Some(Ok(c)), Some(Ok(d))) => checks.push(Check::Cells(c, d, eq)),
                        (Some(Err(x)), Some(Err(y))) if (x == y) != eq => continue 'env,
                        (Some(Err(_)), Some(Err(_))) => {}
                        _ => checks.push(Check::Lit(l)),
                    }
                }
                envs.push((checks, env));
            }
        }
        Matcher { inst, envs }
    }

    /// The first of `states` the literals hold in, `index` being built from `states`:
    /// comparisons of an indexed cell with a value select candidates by bit sets, and only
    /// those are checked in full. Same answer as the first `matches` in order.
    pub fn first(&self, index: &StateIndex, states: &[State]) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (checks, env) in &self.envs {
            let mut sel: Option<Vec<u64>> = None;
            let mut rest = Vec::new();
            for c in checks {
                match *c {
                    Check::Val(cell, v, eq) if index.cells[cell].is_some() => {
                        let bits = index.bits(cell, v);
                        let sel = sel.get_or_insert_with(|| index.all.clone());
                        for (w, b) in sel.iter_mut().zip(bits) {
                            *w &= if eq { *b } else { !*b };
                        }
                    }
                    _ => rest.push(c),
                }
            }
            let sel = sel.unwrap_or_else(|| index.all.clone());
            let limit = best.unwrap_or(states.len());
            'words: for (wi, &w) in sel.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    let i = wi * 64 + w.trailing_zeros() as usize;
                    w &= w - 1;
                    if i >= limit {
                        break 'words;
                    }
                    let s = &states[i];
                    if rest.iter().all(|c| match **c {
                        Check::Val(c, v, eq) => (s[c] == v) == eq,
                        Check::Cells(c, d, eq) => (s[c] == s[d]) == eq,
                        Check::Lit(l) => self.inst.lit(s, env, l),
                    }) {
                        best = Some(i);
                        break 'words;
                    }
                }
            }
        }
        best
    }

    pub fn matches(&self, s: &State) -> bool {
        self.envs.iter().any(|(checks, env)| {
            checks.iter().all(|c| match *c {
                Check::Val(c, v, eq) => (s[c] == v) == eq,
                Check::Cells(c, d, eq) => (s[c] == s[d]) == eq,
                Check::Lit(l) => self.inst.lit(s, env, l),
            })
        })
    }
}

/// What an explicit exploration of one instance found.
#[derive(Debug)]
pub enum Explicit {
    Safe {
        states: usize,
    },
    Unsafe {
        trace: Vec<Step>,
    },
    /// More states than the bound, or an initial condition it cannot enumerate.
    Unknown(String),
}

/// Breadth-first exploration of the instance from every initial state (cells `init` leaves
/// free range over their sort, which must be finite).
pub fn explore(sys: &System, procs: u8, max_states: usize) -> Explicit {
    let inst = Instance::new(sys, procs);
    let inits = match initial_states(&inst, max_states) {
        Ok(v) => v,
        Err(e) => return Explicit::Unknown(e),
    };
    let mut seen: FxHashSet<State> = FxHashSet::default();
    let mut parent: Vec<(usize, Option<Step>)> = Vec::new();
    let mut states: Vec<State> = Vec::new();
    let mut queue = VecDeque::new();
    for mut s in inits {
        inst.canon_abstract(&mut s);
        if seen.insert(s.clone()) {
            states.push(s);
            parent.push((usize::MAX, None));
            queue.push_back(states.len() - 1);
        }
    }
    while let Some(i) = queue.pop_front() {
        let s = states[i].clone();
        if inst.is_unsafe(&s) {
            let mut trace = Vec::new();
            let mut at = i;
            while let (p, Some(step)) = &parent[at] {
                trace.push(step.clone());
                at = *p;
            }
            trace.reverse();
            return Explicit::Unsafe { trace };
        }
        let mut new = Vec::new();
        inst.successors(&s, &mut |step, n| new.push((step, n)));
        for (step, n) in new {
            if seen.insert(n.clone()) {
                if states.len() >= max_states {
                    return Explicit::Unknown(format!("more than {max_states} states"));
                }
                states.push(n);
                parent.push((i, Some(step)));
                queue.push_back(states.len() - 1);
            }
        }
    }
    Explicit::Safe {
        states: states.len(),
    }
}

/// Every initial state: cells fixed by `init` take their value, the others every value of
/// their (finite) sort (a process cell: [`Instance::proc_values`]).
pub fn initial_states(inst: &Instance, max: usize) -> Result<Vec<State>, String> {
    initial_states_sampled(inst, max, false)
}

/// [`initial_states`]; with `sample`, a cell `init` leaves free whose sort is infinite
/// takes the values 0, 1 and 2 only, or fewer when there would be more than `max`
/// candidates (some of the initial states, for BRAB's oracle).
pub fn initial_states_sampled(
    inst: &Instance,
    max: usize,
    sample: bool,
) -> Result<Vec<State>, String> {
    if sample {
        // Fewer sampled values until the candidates fit.
        for k in (1..=3).rev() {
            if let Ok(v) = initial_states_with(inst, max, Some(k)) {
                return Ok(v);
            }
        }
    }
    initial_states_with(inst, max, None)
}

fn initial_states_with(
    inst: &Instance,
    max: usize,
    sample: Option<i64>,
) -> Result<Vec<State>, String> {
    let sys = inst.sys;
    let procs: Vec<ProcRef> = (0..inst.procs).map(ProcRef::Const).collect();
    let init = instantiate_all(&sys.init, &procs);
    let mut out = Vec::new();
    for conj in init.dnf(sys) {
        let mut fixed: Vec<Option<i64>> = vec![None; inst.width];
        for l in &conj {
            match l {
                Lit::Eq(Term::Atom(Atom::Cell(g, idx)), v)
                | Lit::Eq(v, Term::Atom(Atom::Cell(g, idx)))
                    if matches!(v, Term::Val(_) | Term::Proc(_)) =>
                {
                    let idx: Vec<u8> = idx.iter().map(|p| Instance::proc(&[], *p)).collect();
                    fixed[inst.cell(*g, &idx)] = Some(inst.term(&vec![0; inst.width], &[], v));
                }
                Lit::Arith(lin, Rel::Eq) if lin.terms.len() == 1 && lin.terms[0].1.abs() == 1 => {
                    if let Atom::Cell(g, idx) = &lin.terms[0].0 {
                        let idx: Vec<u8> = idx.iter().map(|p| Instance::proc(&[], *p)).collect();
                        fixed[inst.cell(*g, &idx)] = Some(-lin.k * lin.terms[0].1);
                    }
                }
                _ => {}
            }
        }
        let mut domains: Vec<Vec<i64>> = Vec::new();
        for (g, glob) in sys.globals.iter().enumerate() {
            let n = (inst.procs as usize).pow(glob.arity as u32);
            for i in 0..n {
                let c = inst.base[g] + i;
                domains.push(match fixed[c] {
                    Some(v) => vec![v],
                    None if glob.sort == Sort::Proc => inst.proc_range().collect(),
                    None => match crate::pre::finite_values(sys, glob.sort, Some(inst.procs)) {
                        Some(k) => (0..k as i64).collect(),
                        None if sample.is_some() => (0..sample.unwrap_or(1)).collect(),
                        None => {
                            return Err(format!(
                                "`init` leaves {} free and its sort is infinite",
                                glob.name
                            ))
                        }
                    },
                });
            }
        }
        let total: usize = domains
            .iter()
            .map(|d| d.len())
            .try_fold(1usize, |a, b| a.checked_mul(b))
            .unwrap_or(usize::MAX);
        if total > max {
            return Err(format!("{total} candidate initial states"));
        }
        let mut cur = vec![0i64; inst.width];
        let mut idx = vec![0usize; inst.width];
        loop {
            for c in 0..inst.width {
                cur[c] = domains[c][idx[c]];
            }
            if inst.is_initial(&cur) {
                out.push(cur.clone());
            }
            let mut c = 0;
            loop {
                if c == inst.width {
                    break;
                }
                idx[c] += 1;
                if idx[c] < domains[c].len() {
                    break;
                }
                idx[c] = 0;
                c += 1;
            }
            if c == inst.width {
                break;
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Whether the system compares process identifiers by order (`i < j`, `Turn < i`,
/// `A[i] <= B`).
pub fn uses_order(sys: &System) -> bool {
    order_use(sys, true)
}

/// Whether the system orders process cells (`Turn < i`, `A[i] <= B`).
pub fn orders_proc_cells(sys: &System) -> bool {
    order_use(sys, false)
}

/// Whether an order literal of the system compares process cells, or (`ids`) process
/// identifiers too.
fn order_use(sys: &System, ids: bool) -> bool {
    let mut found = false;
    let mut visit = |f: &Formula| {
        fn walk(sys: &System, ids: bool, f: &Formula, found: &mut bool) {
            match f {
                Formula::Lit(Lit::Arith(l, _))
                    if l.terms.iter().any(|t| match t.0 {
                        Atom::Pid(_) => ids,
                        ref a => sys.sort_of(a) == Sort::Proc,
                    }) =>
                {
                    *found = true;
                }
                Formula::And(v) | Formula::Or(v) => v.iter().for_each(|x| walk(sys, ids, x, found)),
                _ => {}
            }
        }
        walk(sys, ids, f, &mut found)
    };
    visit(&sys.init.formula);
    for u in &sys.unsafe_ {
        visit(&u.formula);
    }
    for t in &sys.transitions {
        visit(&t.guard);
        t.forall_other.iter().for_each(&mut visit);
        for u in &t.updates {
            for (c, _) in &u.cases {
                visit(c);
            }
        }
    }
    found
}

/// The states of the instance reachable within `max_depth` steps (every step when `None`),
/// breadth-first from every initial state (or some of them: see
/// [`initial_states_sampled`]; nondeterministic numbers are chosen among 0, 1 and 2,
/// abstract values among those in use and one new one, states being kept up to a
/// renaming of abstract values), at most `max_states` of them: an
/// under-approximation of the reachable states when a bound stops it (BRAB's oracle only
/// needs states that are reachable, not all of them). Empty when the initial states cannot
/// be listed.
pub fn reachable(sys: &System, procs: u8, max_depth: Option<u32>, max_states: usize) -> Vec<State> {
    let mut inst = Instance::new(sys, procs);
    inst.small = true;
    // Initial states that differ only in the values `init` leaves free are many (german.ctc:
    // 1,536 from ten free data cells) and a breadth-first search spends its bound on them,
    // stopping after two steps: the candidates it validates are then wrong and the search
    // restarts without end. Without a depth bound the few initial states of fewer sampled
    // values (a 64th of the bound) leave the room to go deep (german.ctc: 22 steps, no
    // restart); with `--forward-depth` the depth is the user's and the bound goes to breadth.
    let init_max = if max_depth.is_some() {
        max_states
    } else {
        max_states / 64
    };
    let inits = match initial_states_sampled(&inst, init_max, true) {
        Ok(v) => v,
        // Too many to list: one, from a model of `init`.
        Err(_) => initial_state(&inst, &[]).into_iter().collect(),
    };
    let mut seen: FxHashSet<State> = FxHashSet::default();
    let mut states: Vec<State> = Vec::new();
    let mut frontier: Vec<usize> = Vec::new();
    for mut s in inits {
        inst.canon_abstract(&mut s);
        if seen.insert(s.clone()) {
            states.push(s);
            frontier.push(states.len() - 1);
        }
    }
    let mut depth = 0;
    while !frontier.is_empty() && max_depth.is_none_or(|d| depth < d) {
        if std::env::var_os("FENCER_BRAB_DEBUG").is_some() {
            eprintln!("forward depth {depth}: {} states", states.len());
        }
        let mut next = Vec::new();
        for i in frontier {
            let s = states[i].clone();
            let mut new = Vec::new();
            inst.successors(&s, &mut |_, n| new.push(n));
            for mut n in new {
                inst.canon_abstract(&mut n);
                if seen.contains(&n) {
                    continue;
                }
                if states.len() >= max_states {
                    return states;
                }
                seen.insert(n.clone());
                states.push(n);
                next.push(states.len() - 1);
            }
        }
        frontier = next;
        depth += 1;
    }
    states
}
