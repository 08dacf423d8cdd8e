//! Cubicle-W's weak-memory layer (x86-TSO), in our own formulation.
//!
//! A transition of thread `p` that accesses weak memory is one *event group*: its weak
//! reads and writes happen at one point of the global-happens-before order (ghb), as the
//! paper's "ghb-equal" events do; a transition that both reads and writes weak memory is an
//! atomic read-modify-write, which also drains `p`'s buffer (a locked instruction).
//!
//! Going backward, a cube remembers the groups that still matter: those holding *pending*
//! reads (reads no later write has been chosen to satisfy; their values are the atoms
//! [`Atom::Read`]) and those ghb-before one. A new (earlier) group:
//! - its writes MUST satisfy the pending reads of the same cell by the same thread (the
//!   thread sees its own last write, from its buffer or from memory) and MAY satisfy those
//!   of other threads (then rfe: new → reader), else the reader read an older value (fr:
//!   reader → new);
//! - co is the issue order (a new write is co-before every later write to its cell);
//! - ppo is TSO's: program order minus write→read, unless a fence or an atomic RMW
//!   separates them.
//!
//! A cube whose ghb is cyclic is dropped. A group that is not ghb-before any pending read
//! can never close a cycle (every edge from an old group to a new one starts at a pending
//! read), so dropping it is exact. At the initial state every pending read sees the
//! initial value of its cell.

use crate::concrete::{Instance, State};
use crate::formula::{normalize, Formula, Lin, Lit, Norm, Term};
use crate::pre::Cube;
use crate::search::Step;
use crate::{Atom, ProcRef, Rhs, System, Transition, Update};
use rustc_hash::{FxHashMap, FxHashSet};

/// A cube would hold more events than the engine represents: the search stops (a limit,
/// never a verdict).
#[derive(Debug)]
pub struct TooManyEvents;

/// The ordinal of a read made by the transition being applied (renumbered in the cube).
pub const NEW: u8 = u8::MAX;

/// Most groups one cube keeps (the ghb closure is a bit set per group).
pub const MAX_GROUPS: usize = 64;

/// The transition index of a buffer flush in a concrete TSO trace; its one argument is
/// the thread whose oldest buffered write group reaches memory.
pub const FLUSH: usize = usize::MAX;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Events {
    pub groups: Vec<Group>,
    /// `reach[i]` bit `j`: group `i` is ghb-before group `j` (transitively closed).
    pub reach: Vec<u64>,
    /// The groups of `unsafe`'s reads, one per thread, which happen at one point of ghb
    /// (the paper's ghb-equal): a group ghb-before one of them is before all, and they
    /// share their successors. Never in `reach` of each other.
    pub sync: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    pub thread: ProcRef,
    /// Pending reads: cell and ordinal, as in [`Atom::Read`].
    pub reads: Vec<(u32, Vec<ProcRef>, u8)>,
    pub writes: Vec<(u32, Vec<ProcRef>)>,
    /// The thread's earlier writes are ghb-before this group (a fence before it, or an
    /// atomic read-modify-write).
    pub fence: bool,
    /// The group is ghb-before every later group of its thread (it reads, satisfied reads
    /// included, or it is a lone fence).
    pub before_all: bool,
}

/// A cell: a global and its indices.
type Cell = (u32, Vec<ProcRef>);

/// A pending read: thread, cell and rank.
pub type ReadKey = (ProcRef, u32, Vec<ProcRef>, u8);

/// The literal with the ranks of its reads mapped (reads not in `ord` keep theirs).
pub fn rename_ranks(l: &Lit, ord: &FxHashMap<ReadKey, u8>) -> Lit {
    let mut atoms = Vec::new();
    l.atoms(&mut atoms);
    let ren: FxHashMap<Atom, Atom> = atoms
        .into_iter()
        .filter_map(|a| match &a {
            Atom::Read(g, idx, p, k) => ord
                .get(&(*p, *g, idx.clone(), *k))
                .filter(|k2| *k2 != k)
                .map(|k2| (a.clone(), Atom::Read(*g, idx.clone(), *p, *k2))),
            _ => None,
        })
        .collect();
    if ren.is_empty() {
        l.clone()
    } else {
        rename_lit(l, &ren)
    }
}

impl Events {
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    pub fn has_reads(&self) -> bool {
        self.groups.iter().any(|g| !g.reads.is_empty())
    }

    pub fn map_procs(&self, f: &dyn Fn(ProcRef) -> ProcRef) -> Events {
        Events {
            groups: self
                .groups
                .iter()
                .map(|g| Group {
                    thread: f(g.thread),
                    reads: g
                        .reads
                        .iter()
                        .map(|(x, idx, k)| (*x, idx.iter().map(|p| f(*p)).collect(), *k))
                        .collect(),
                    writes: g
                        .writes
                        .iter()
                        .map(|(x, idx)| (*x, idx.iter().map(|p| f(*p)).collect()))
                        .collect(),
                    fence: g.fence,
                    before_all: g.before_all,
                })
                .collect(),
            reach: self.reach.clone(),
            sync: self.sync,
        }
    }

    pub fn procs(&self, out: &mut Vec<ProcRef>) {
        for g in &self.groups {
            out.push(g.thread);
            for r in &g.reads {
                out.extend(r.1.iter().copied());
            }
            for w in &g.writes {
                out.extend(w.1.iter().copied());
            }
        }
    }
}

/// The cell and value of a weak point update: a global (`X := v`) or one cell at given
/// processes (`X[p] := v`). `None` for any other shape (an update over every cell, or a
/// `case` on a global), which writes every cell.
pub fn weak_write<'a>(
    sys: &System,
    t: &Transition,
    u: &'a Update,
) -> Option<(Vec<ProcRef>, &'a Rhs)> {
    let g = &sys.globals[u.global as usize];
    if g.arity == 0 {
        return u.cases.is_empty().then_some((Vec::new(), &u.default));
    }
    let [(Formula::And(conds), rhs)] = u.cases.as_slice() else {
        return None;
    };
    let k = t.params;
    let mut idx = vec![None; g.arity as usize];
    for c in conds {
        match c {
            Formula::Lit(Lit::Eq(Term::Proc(ProcRef::Var(s)), Term::Proc(x)))
                if *s >= k && ((*s - k) as usize) < idx.len() =>
            {
                if matches!(x, ProcRef::Var(v) if *v >= k) {
                    return None;
                }
                idx[(*s - k) as usize] = Some(*x);
            }
            _ => return None,
        }
    }
    let same = Atom::Cell(
        u.global,
        (0..g.arity).map(|i| ProcRef::Var(k + i)).collect(),
    );
    let keeps = match &u.default {
        Rhs::Term(Term::Atom(a)) => a == &same,
        Rhs::Lin(l) => l.k == 0 && l.terms.len() == 1 && l.terms[0] == (same, 1),
        _ => false,
    };
    if !keeps {
        return None;
    }
    Some((idx.into_iter().collect::<Option<Vec<_>>>()?, rhs))
}

fn walk_atoms_formula(f: &Formula, out: &mut Vec<Atom>) {
    match f {
        Formula::Lit(l) => l.atoms(out),
        Formula::And(v) | Formula::Or(v) => v.iter().for_each(|x| walk_atoms_formula(x, out)),
        _ => {}
    }
}

fn rhs_atoms(r: &Rhs, out: &mut Vec<Atom>) {
    match r {
        Rhs::Term(Term::Atom(a)) => out.push(a.clone()),
        Rhs::Lin(l) => out.extend(l.terms.iter().map(|t| t.0.clone())),
        _ => {}
    }
}

/// Whether the transition reads weak memory (its guard, universal guards or updates
/// mention a read).
pub fn reads_weak(t: &Transition) -> bool {
    let mut atoms = Vec::new();
    walk_atoms_formula(&t.guard, &mut atoms);
    for f in &t.forall_other {
        walk_atoms_formula(f, &mut atoms);
    }
    for u in &t.updates {
        for (c, r) in &u.cases {
            walk_atoms_formula(c, &mut atoms);
            rhs_atoms(r, &mut atoms);
        }
        rhs_atoms(&u.default, &mut atoms);
    }
    atoms.iter().any(|a| matches!(a, Atom::Read(..)))
}

pub fn writes_weak(sys: &System, t: &Transition) -> bool {
    t.updates
        .iter()
        .any(|u| sys.globals[u.global as usize].weak)
}

/// An atomic read-modify-write: it reads and writes weak memory. An update over every
/// cell counts as one: the cells it leaves as they are are written back with the value
/// it read there, at the same point of ghb, which only a locked instruction gives.
pub fn is_rmw(sys: &System, t: &Transition) -> bool {
    let over_every_cell = t
        .updates
        .iter()
        .any(|u| sys.globals[u.global as usize].weak && weak_write(sys, t, u).is_none());
    writes_weak(sys, t) && (reads_weak(t) || over_every_cell)
}

/// A literal with some atoms replaced by values (terms or linear expressions).
fn subst_lit(sys: &System, l: &Lit, sub: &FxHashMap<Atom, Rhs>) -> Norm {
    let term = |t: &Term| match t {
        Term::Atom(a) => match sub.get(a) {
            Some(Rhs::Term(x)) => x.clone(),
            _ => t.clone(),
        },
        _ => t.clone(),
    };
    let l2 = match l {
        Lit::Eq(a, b) => Lit::Eq(term(a), term(b)),
        Lit::Ne(a, b) => Lit::Ne(term(a), term(b)),
        Lit::Arith(lin, rel) => {
            let mut out = Lin::constant(lin.k);
            for (a, c) in &lin.terms {
                match sub.get(a) {
                    Some(Rhs::Lin(x)) => out = out.add_scaled(x, *c),
                    // A process value ordered: the identifier it is.
                    Some(Rhs::Term(x)) => out = out.add_scaled(&crate::formula::proc_lin(x), *c),
                    _ => out = out.add_scaled(&Lin::atom(a.clone()), *c),
                }
            }
            Lit::Arith(out, *rel)
        }
    };
    normalize(sys, &l2)
}

fn rename_lit(l: &Lit, ren: &FxHashMap<Atom, Atom>) -> Lit {
    let term = |t: &Term| match t {
        Term::Atom(a) => Term::Atom(ren.get(a).cloned().unwrap_or_else(|| a.clone())),
        _ => t.clone(),
    };
    match l {
        Lit::Eq(a, b) => Lit::Eq(term(a), term(b)),
        Lit::Ne(a, b) => Lit::Ne(term(a), term(b)),
        Lit::Arith(lin, rel) => {
            let mut out = Lin::constant(lin.k);
            for (a, c) in &lin.terms {
                let a2 = ren.get(a).cloned().unwrap_or_else(|| a.clone());
                out = out.add_scaled(&Lin::atom(a2), *c);
            }
            Lit::Arith(out, *rel)
        }
    }
}

/// The events of a root cube (`unsafe`): one group per thread with its `p @ X` reads.
pub fn root_events(lits: &[Lit]) -> Events {
    let mut atoms = Vec::new();
    for l in lits {
        l.atoms(&mut atoms);
    }
    let mut groups: Vec<Group> = Vec::new();
    for a in atoms {
        if let Atom::Read(g, idx, p, k) = a {
            let i = match groups.iter().position(|x| x.thread == p) {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        thread: p,
                        reads: Vec::new(),
                        writes: Vec::new(),
                        fence: false,
                        before_all: true,
                    });
                    groups.len() - 1
                }
            };
            let r = (g, idx, k);
            if !groups[i].reads.contains(&r) {
                groups[i].reads.push(r);
            }
        }
    }
    for g in &mut groups {
        g.reads.sort();
    }
    let reach = vec![0; groups.len()];
    let sync = if groups.len() >= 2 {
        (1u64 << groups.len()) - 1
    } else {
        0
    };
    Events {
        groups,
        reach,
        sync,
    }
}

/// The cube's literals with each pending read replaced by its cell: at the initial state
/// every read sees the initial value.
pub fn at_init(lits: &[Lit]) -> Vec<Lit> {
    let mut atoms = Vec::new();
    for l in lits {
        l.atoms(&mut atoms);
    }
    let ren: FxHashMap<Atom, Atom> = atoms
        .into_iter()
        .filter_map(|a| match &a {
            Atom::Read(g, idx, _, _) => Some((a.clone(), Atom::Cell(*g, idx.clone()))),
            _ => None,
        })
        .collect();
    lits.iter().map(|l| rename_lit(l, &ren)).collect()
}

/// The pre-images of a cube under TSO by one transition instance: the SC pre-image of its
/// non-weak part (`conjs`, from [`crate::pre::pre_image`]) completed with the choice of
/// which pending reads the instance's writes satisfy. Each result is a conjunction (with
/// fresh atoms still in) and the events of the new cube; cyclic choices are left out.
/// `Err` when a cube would keep more groups than [`MAX_GROUPS`], or a write could satisfy
/// too many reads to enumerate the choices.
pub fn complete(
    sys: &System,
    t: &Transition,
    cube: &Cube,
    sigma: &[ProcRef],
    all: &[ProcRef],
    conjs: Vec<Vec<Lit>>,
    fresh: &mut u32,
) -> Result<Vec<(Vec<Lit>, Events)>, TooManyEvents> {
    let k = t.params as usize;
    let env = |p: ProcRef| match p {
        ProcRef::Var(i) if (i as usize) < k => sigma[i as usize],
        c => c,
    };
    let Some(slot) = t.thread else {
        // No weak access (lowering refuses weak accesses without a thread).
        return Ok(conjs.into_iter().map(|c| (c, cube.ev.clone())).collect());
    };
    let p = sigma[slot as usize];
    // The instance's writes: cell, and the value as alternatives with their conditions,
    // in the pre-state. A point update writes one cell; an update over every cell
    // (`A[j] := case ...`) writes each cell of the processes the cube knows (what it
    // writes to the others no cube mentions).
    let mut writes: Vec<(Cell, Vec<(Formula, Rhs)>)> = Vec::new();
    for u in &t.updates {
        let glob = &sys.globals[u.global as usize];
        if !glob.weak {
            continue;
        }
        if let Some((idx, rhs)) = weak_write(sys, t, u) {
            let idx: Vec<ProcRef> = idx.iter().map(|q| env(*q)).collect();
            let v = match rhs {
                Rhs::Term(x) => Rhs::Term(crate::formula::map_term(x, &env)),
                Rhs::Lin(l) => Rhs::Lin(crate::formula::map_lin(l, &env)),
                Rhs::Nondet => {
                    *fresh += 1;
                    let a = Atom::Fresh(u.global, *fresh);
                    if glob.sort.arith() {
                        Rhs::Lin(Lin::atom(a))
                    } else {
                        Rhs::Term(Term::Atom(a))
                    }
                }
            };
            writes.push(((u.global, idx), vec![(Formula::True, v)]));
            continue;
        }
        let mut idxs: Vec<Vec<ProcRef>> = vec![Vec::new()];
        for _ in 0..glob.arity {
            idxs = idxs
                .into_iter()
                .flat_map(|i| {
                    all.iter().map(move |q| {
                        let mut j = i.clone();
                        j.push(*q);
                        j
                    })
                })
                .collect();
        }
        // A cell the `case` leaves as it is gets the value the thread reads there.
        let as_read = |a: &Atom| match a {
            Atom::Cell(g, idx) if sys.globals[*g as usize].weak => {
                Atom::Read(*g, idx.clone(), p, NEW)
            }
            _ => a.clone(),
        };
        for idx in idxs {
            let cell = Atom::Cell(u.global, idx.clone());
            let alts = crate::pre::cell_after(sys, t, &cell, sigma, fresh)
                .into_iter()
                .map(|(c, v)| {
                    let r = match v {
                        crate::pre::Val::T(Term::Atom(a)) => Rhs::Term(Term::Atom(as_read(&a))),
                        crate::pre::Val::T(x) => Rhs::Term(x),
                        crate::pre::Val::L(l) => {
                            let mut out = Lin::constant(l.k);
                            for (a, k) in &l.terms {
                                out = out.add_scaled(&Lin::atom(as_read(a)), *k);
                            }
                            Rhs::Lin(out)
                        }
                    };
                    (c, r)
                })
                .collect();
            writes.push(((u.global, idx), alts));
        }
    }
    let rmw = is_rmw(sys, t);
    // Pending reads the writes must or may satisfy: (group, read index, write index).
    let mut must = Vec::new();
    let mut may = Vec::new();
    for (gi, g) in cube.ev.groups.iter().enumerate() {
        for (ri, r) in g.reads.iter().enumerate() {
            if let Some(wi) = writes.iter().position(|w| w.0 .0 == r.0 && w.0 .1 == r.1) {
                if g.thread == p {
                    must.push((gi, ri, wi));
                } else {
                    may.push((gi, ri, wi));
                }
            }
        }
    }
    if may.len() > 16 {
        return Err(TooManyEvents);
    }
    let mut out = Vec::new();
    for conj in &conjs {
        for mask in 0u32..(1 << may.len()) {
            let chosen: Vec<(usize, usize, usize)> = must
                .iter()
                .copied()
                .chain(
                    may.iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, x)| *x),
                )
                .collect();
            // Satisfied reads take the written values: one alternative of each write's
            // value, with its condition.
            let mut alt = vec![0usize; chosen.len()];
            let mut variants: Vec<Vec<Lit>> = Vec::new();
            'alt: loop {
                let mut sub: FxHashMap<Atom, Rhs> = FxHashMap::default();
                let mut conds = Vec::new();
                for (ci, &(gi, ri, wi)) in chosen.iter().enumerate() {
                    let g = &cube.ev.groups[gi];
                    let r = &g.reads[ri];
                    let (c, v) = &writes[wi].1[alt[ci]];
                    sub.insert(Atom::Read(r.0, r.1.clone(), g.thread, r.2), v.clone());
                    conds.push(c.clone());
                }
                let mut base = Vec::with_capacity(conj.len());
                let mut ok = true;
                for l in conj {
                    match subst_lit(sys, l, &sub) {
                        Norm::True => {}
                        Norm::False => {
                            ok = false;
                            break;
                        }
                        Norm::Lit(l) => base.push(l),
                    }
                }
                if ok {
                    for d in Formula::And(conds).dnf(sys) {
                        let mut v = base.clone();
                        v.extend(d);
                        variants.push(v);
                    }
                }
                let mut i = 0;
                loop {
                    if i == alt.len() {
                        break 'alt;
                    }
                    alt[i] += 1;
                    if alt[i] < writes[chosen[i].2].1.len() {
                        break;
                    }
                    alt[i] = 0;
                    i += 1;
                }
            }
            'variant: for lits in variants {
                // The new group's reads: those its guard and values still mention.
                let mut atoms = Vec::new();
                for l in &lits {
                    l.atoms(&mut atoms);
                }
                let mut new_reads: Vec<(u32, Vec<ProcRef>)> = atoms
                    .iter()
                    .filter_map(|a| match a {
                        Atom::Read(g, idx, _, NEW) => Some((*g, idx.clone())),
                        _ => None,
                    })
                    .collect();
                new_reads.sort();
                new_reads.dedup();
                let satisfied: FxHashSet<(usize, usize)> =
                    chosen.iter().map(|&(g, r, _)| (g, r)).collect();
                let n_old = cube.ev.groups.len();
                // Old groups with their satisfied reads removed, and the new one last.
                let mut groups: Vec<Group> = cube
                    .ev
                    .groups
                    .iter()
                    .enumerate()
                    .map(|(gi, g)| Group {
                        thread: g.thread,
                        reads: g
                            .reads
                            .iter()
                            .enumerate()
                            .filter(|(ri, _)| !satisfied.contains(&(gi, *ri)))
                            .map(|(_, r)| r.clone())
                            .collect(),
                        writes: g.writes.clone(),
                        fence: g.fence,
                        before_all: g.before_all,
                    })
                    .collect();
                let new = Group {
                    thread: p,
                    reads: new_reads
                        .iter()
                        .map(|(g, i)| (*g, i.clone(), NEW))
                        .collect(),
                    writes: writes.iter().map(|w| w.0.clone()).collect(),
                    fence: t.fence || rmw,
                    // A read-modify-write writes memory at once (locked), even when this
                    // instance reads nothing (a `forall_other` over no other process).
                    before_all: !new_reads.is_empty() || rmw || (t.fence && writes.is_empty()),
                };
                let mut reach = cube.ev.reach.clone();
                let active = !new.reads.is_empty() || !new.writes.is_empty() || new.fence;
                if active {
                    if n_old >= MAX_GROUPS {
                        return Err(TooManyEvents);
                    }
                    // Direct edges of the new group.
                    let mut succ = 0u64;
                    let mut pred = 0u64;
                    let has_writes = !new.writes.is_empty();
                    for (hi, h) in cube.ev.groups.iter().enumerate() {
                        let bit = 1u64 << hi;
                        if h.thread == p {
                            let ordered =
                                new.before_all || (has_writes && (!h.writes.is_empty() || h.fence));
                            if ordered {
                                succ |= bit;
                            }
                            continue;
                        }
                        if h.writes.iter().any(|c| new.writes.contains(c)) {
                            succ |= bit; // co
                        }
                        // fr: a new read sees a value older than every later write.
                        if h.writes
                            .iter()
                            .any(|c| new.reads.iter().any(|r| r.0 == c.0 && r.1 == c.1))
                        {
                            succ |= bit;
                        }
                        for (ri, r) in h.reads.iter().enumerate() {
                            if !writes.iter().any(|w| w.0 .0 == r.0 && w.0 .1 == r.1) {
                                continue;
                            }
                            if satisfied.contains(&(hi, ri)) {
                                succ |= bit; // rfe
                            } else {
                                pred |= bit; // fr
                            }
                        }
                    }
                    let sync = cube.ev.sync;
                    let sync_reach = reach
                        .iter()
                        .enumerate()
                        .filter(|(hi, _)| sync & (1 << hi) != 0)
                        .fold(0, |m, (_, r)| m | r);
                    let mut out_set = succ;
                    for (hi, r) in reach.iter().enumerate() {
                        if succ & (1 << hi) != 0 {
                            out_set |= r;
                        }
                    }
                    if out_set & sync != 0 {
                        out_set |= sync | sync_reach;
                    }
                    if pred & sync != 0 {
                        pred |= sync;
                    }
                    let mut in_set = pred;
                    for (hi, r) in reach.iter().enumerate() {
                        if r & pred != 0 {
                            in_set |= 1 << hi;
                        }
                    }
                    if in_set & out_set != 0 {
                        continue 'variant;
                    }
                    let me = 1u64 << n_old;
                    for (hi, r) in reach.iter_mut().enumerate() {
                        if in_set & (1 << hi) != 0 {
                            *r |= me | out_set;
                        }
                    }
                    reach.push(out_set);
                    groups.push(new);
                }
                // Keep the groups with pending reads, and of those ghb-before one the entry
                // points: the groups a new (earlier) group can have an edge to, whose reach
                // covers that of the others (groups are stored latest first). For each cell
                // its earliest writer (co and fr go to every later write, and the earliest
                // is co-before the rest); for each thread its earliest group ordered before
                // all later ones and its earliest group with writes or a fence (ppo).
                let pending: u64 = groups
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| !g.reads.is_empty())
                    .fold(0, |m, (i, _)| m | 1 << i);
                let mut entry = vec![false; groups.len()];
                let mut first_all: FxHashSet<ProcRef> = FxHashSet::default();
                let mut first_write: FxHashSet<ProcRef> = FxHashSet::default();
                let mut first_cell: FxHashSet<&(u32, Vec<ProcRef>)> = FxHashSet::default();
                for (i, g) in groups.iter().enumerate().rev() {
                    if g.before_all && first_all.insert(g.thread) {
                        entry[i] = true;
                    }
                    if (!g.writes.is_empty() || g.fence) && first_write.insert(g.thread) {
                        entry[i] = true;
                    }
                    for c in &g.writes {
                        if first_cell.insert(c) {
                            entry[i] = true;
                        }
                    }
                }
                // The reads of `unsafe` are one point: while one is pending, every
                // reader's group stands for where its thread was at that point.
                let sync = cube.ev.sync;
                let pending = if pending & sync != 0 {
                    pending | sync
                } else {
                    pending
                };
                let keep: Vec<usize> = (0..groups.len())
                    .filter(|&i| pending & (1 << i) != 0 || (entry[i] && reach[i] & pending != 0))
                    .collect();
                let mut kept_groups = Vec::with_capacity(keep.len());
                let mut kept_reach = Vec::with_capacity(keep.len());
                let mut kept_sync = 0u64;
                for (j, &i) in keep.iter().enumerate() {
                    if cube.ev.sync & (1 << i) != 0 {
                        kept_sync |= 1 << j;
                    }
                }
                for &i in &keep {
                    let mut r = 0u64;
                    for (j, &kj) in keep.iter().enumerate() {
                        if reach[i] & (1 << kj) != 0 {
                            r |= 1 << j;
                        }
                    }
                    kept_groups.push(groups[i].clone());
                    kept_reach.push(r);
                }
                // Ordinals renumbered: per thread and cell, from the latest read (the new
                // group's reads are the earliest).
                let mut ren: FxHashMap<Atom, Atom> = FxHashMap::default();
                let mut count: FxHashMap<(ProcRef, u32, Vec<ProcRef>), u8> = FxHashMap::default();
                let mut order: Vec<(ProcRef, u32, Vec<ProcRef>, u8, usize, usize)> = Vec::new();
                for (gi, g) in kept_groups.iter().enumerate() {
                    for (ri, r) in g.reads.iter().enumerate() {
                        order.push((g.thread, r.0, r.1.clone(), r.2, gi, ri));
                    }
                }
                order.sort_by(|a, b| (&a.0, a.1, &a.2, a.3).cmp(&(&b.0, b.1, &b.2, b.3)));
                for (th, g, idx, k_old, gi, ri) in order {
                    let c = count.entry((th, g, idx.clone())).or_insert(0);
                    let k_new = *c;
                    *c += 1;
                    if k_new != k_old {
                        ren.insert(
                            Atom::Read(g, idx.clone(), th, k_old),
                            Atom::Read(g, idx, th, k_new),
                        );
                        kept_groups[gi].reads[ri].2 = k_new;
                    }
                }
                for g in &mut kept_groups {
                    g.reads.sort();
                }
                let lits: Vec<Lit> = if ren.is_empty() {
                    lits
                } else {
                    lits.iter().map(|l| rename_lit(l, &ren)).collect()
                };
                out.push((
                    lits,
                    Events {
                        groups: kept_groups,
                        reach: kept_reach,
                        sync: if kept_sync.count_ones() >= 2 {
                            kept_sync
                        } else {
                            0
                        },
                    },
                ));
            }
        }
    }
    Ok(out)
}

/// Whether the events of a visited cube `a`, its processes renamed by `f` and the ranks of
/// its reads by `ord`, are implied by those of `b`: an injective map of `a`'s groups to
/// `b`'s with the same thread, at least the same pending reads, writes and fence, and every ghb pair of `a`
/// also one of `b`. Then every run that satisfies `b`'s constraints satisfies `a`'s.
pub fn covers(
    a: &Events,
    b: &Events,
    f: &dyn Fn(ProcRef) -> ProcRef,
    ord: &FxHashMap<ReadKey, u8>,
) -> bool {
    if a.groups.is_empty() {
        return true;
    }
    if a.groups.len() > b.groups.len() {
        return false;
    }
    let mut ar = a.map_procs(f);
    for g in &mut ar.groups {
        let th = g.thread;
        for r in &mut g.reads {
            if let Some(k) = ord.get(&(th, r.0, r.1.clone(), r.2)) {
                r.2 = *k;
            }
        }
    }
    let cand: Vec<Vec<usize>> = ar
        .groups
        .iter()
        .map(|g| {
            (0..b.groups.len())
                .filter(|&j| {
                    let h = &b.groups[j];
                    h.thread == g.thread
                        && (!g.fence || h.fence)
                        && g.reads.iter().all(|r| h.reads.contains(r))
                        && g.writes.iter().all(|w| h.writes.contains(w))
                })
                .collect()
        })
        .collect();
    if cand.iter().any(|c| c.is_empty()) {
        return false;
    }
    fn go(i: usize, ar: &Events, b: &Events, cand: &[Vec<usize>], m: &mut Vec<usize>) -> bool {
        if i == cand.len() {
            return true;
        }
        for &j in &cand[i] {
            if m.contains(&j) {
                continue;
            }
            if ar.sync & (1 << i) != 0 && b.sync & (1 << j) == 0 {
                continue;
            }
            // Pairs with the groups mapped so far.
            let ok = m.iter().enumerate().all(|(x, &mx)| {
                let ab = ar.reach[x] & (1 << i) != 0;
                let ba = ar.reach[i] & (1 << x) != 0;
                (!ab || b.reach[mx] & (1 << j) != 0) && (!ba || b.reach[j] & (1 << mx) != 0)
            });
            if !ok {
                continue;
            }
            m.push(j);
            if go(i + 1, ar, b, cand, m) {
                return true;
            }
            m.pop();
        }
        false
    }
    go(0, &ar, b, &cand, &mut Vec::new())
}

/// A concrete TSO state: memory, and each thread's FIFO buffer of write groups.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Machine {
    pub mem: State,
    pub bufs: Vec<Vec<Vec<(usize, i64)>>>,
    /// The view each thread had when it performed the reads of `unsafe`, once it has.
    pub seen: Vec<Option<State>>,
}

impl Machine {
    /// Thread `p`'s view: memory overlaid with its buffer, newest entry last.
    pub fn view(&self, p: usize) -> State {
        let mut v = self.mem.clone();
        for entry in &self.bufs[p] {
            for &(c, x) in entry {
                v[c] = x;
            }
        }
        v
    }

    /// Memory followed by every thread's view (the one it read `unsafe` with, if it has):
    /// how [`Instance`] evaluates [`Atom::Read`].
    pub fn ext(&self, inst: &Instance) -> State {
        let mut s = self.mem.clone();
        for p in 0..self.bufs.len() {
            match &self.seen[p] {
                Some(v) => s.extend(v.iter().copied()),
                None => s.extend(self.view(p)),
            }
        }
        debug_assert_eq!(s.len(), inst.width * (1 + self.bufs.len()));
        s
    }
}

/// The weak cells an instance writes.
fn written_cells(inst: &Instance, t: &Transition, args: &[u8]) -> Vec<usize> {
    let sys = inst.sys;
    let mut out = Vec::new();
    for u in &t.updates {
        if !sys.globals[u.global as usize].weak {
            continue;
        }
        if let Some((idx, _)) = weak_write(sys, t, u) {
            let idx: Vec<u8> = idx
                .iter()
                .map(|p| match p {
                    ProcRef::Var(i) => args[*i as usize],
                    ProcRef::Const(c) => *c,
                })
                .collect();
            out.push(inst.cell(u.global, &idx));
        } else {
            // An update over every cell writes each of them.
            let n = (inst.procs as usize).pow(sys.globals[u.global as usize].arity as u32);
            let base = inst.cell(
                u.global,
                &vec![0; sys.globals[u.global as usize].arity as usize],
            );
            out.extend(base..base + n);
        }
    }
    out
}

/// The successors of a TSO state by one transition instance (empty if it cannot run): it
/// reads its thread's view; its weak writes go to the thread's buffer as one group, or to
/// memory for an atomic read-modify-write; `fence()` and read-modify-writes wait for an
/// empty buffer.
pub fn fire(inst: &Instance, m: &Machine, t: &Transition, args: &[u8]) -> Vec<Machine> {
    let sys = inst.sys;
    let thread = t.thread.map(|s| args[s as usize] as usize);
    let rmw = is_rmw(sys, t);
    if let Some(p) = thread {
        if (t.fence || rmw) && !m.bufs[p].is_empty() {
            return Vec::new();
        }
    }
    // The transition sees memory through its thread's view (a weak cell an update over
    // every cell leaves as it is gets the value the thread sees).
    let mut ext = m.ext(inst);
    if let Some(p) = thread {
        ext[..inst.width].copy_from_slice(&m.view(p));
    }
    if !inst.enabled(&ext, t, args) {
        return Vec::new();
    }
    let cells = written_cells(inst, t, args);
    let mut weak = vec![false; inst.width];
    for (g, glob) in sys.globals.iter().enumerate() {
        if glob.weak {
            let base = inst.cell(g as u32, &vec![0; glob.arity as usize]);
            let n = (inst.procs as usize).pow(glob.arity as u32);
            weak[base..base + n].iter_mut().for_each(|w| *w = true);
        }
    }
    let mut out = Vec::new();
    for s in inst.fire(&ext, t, args) {
        let mut n = m.clone();
        for (c, w) in weak.iter().enumerate() {
            if !w {
                n.mem[c] = s[c];
            }
        }
        match thread {
            Some(p) if !cells.is_empty() && !rmw => {
                n.bufs[p].push(cells.iter().map(|&c| (c, s[c])).collect());
            }
            _ => {
                for &c in &cells {
                    n.mem[c] = s[c];
                }
            }
        }
        out.push(n);
    }
    out
}

/// The oldest buffered group of thread `p` written to memory.
pub fn flush(m: &Machine, p: usize) -> Option<Machine> {
    if m.bufs[p].is_empty() {
        return None;
    }
    let mut n = m.clone();
    let entry = n.bufs[p].remove(0);
    for (c, x) in entry {
        n.mem[c] = x;
    }
    Some(n)
}

/// The step of a concrete TSO trace where the threads that are its arguments perform the
/// reads of `unsafe` (`p @ X`), at one instant, each after its last transition.
pub const READ: usize = usize::MAX - 1;

/// Runs the backward search's trace on the TSO machine from `s0` (breadth-first, at most
/// `max` states): the steps, buffer flushes included, and the memory after each, up to a
/// state satisfying `unsafe`. Each thread runs its own transitions of the trace in their
/// order, but the threads interleave freely: the axiomatic model orders events only by
/// ghb, so the order the backward search issued them in need not be a TSO schedule (a
/// read may have to run before another thread's earlier-issued one).
///
/// The `p @ X` reads of `unsafe` are events as in Cubicle-W: the readers perform them at
/// one instant after their last transitions (a [`READ`] step), not necessarily at the very
/// end (other threads may still run); the other conditions hold at the end.
pub fn replay(
    inst: &Instance,
    s0: &State,
    trace: &[Step],
    readers: &[u8],
    max: usize,
) -> Option<(Vec<Step>, Vec<State>)> {
    let n = inst.procs as usize;
    let readers: Vec<bool> = (0..n as u8).map(|p| readers.contains(&p)).collect();
    // The steps of each thread in order; transitions without a thread form one more.
    let mut own: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for (i, s) in trace.iter().enumerate() {
        let th = inst
            .sys
            .transitions
            .get(s.transition)
            .and_then(|t| t.thread)
            .and_then(|k| s.args.get(k as usize))
            .map_or(n, |&p| p as usize);
        own[th].push(i);
    }
    let start = Machine {
        mem: s0.clone(),
        bufs: vec![Vec::new(); n],
        seen: vec![None; n],
    };
    type Key = (Vec<usize>, Machine);
    type Node = (Vec<usize>, Machine, Option<(usize, Step)>);
    let mut nodes: Vec<Node> = vec![(vec![0; n + 1], start.clone(), None)];
    let mut seen: FxHashSet<Key> = FxHashSet::default();
    seen.insert((vec![0; n + 1], start));
    let mut head = 0;
    while head < nodes.len() {
        let (pos, m, _) = nodes[head].clone();
        let finished = (0..=n).all(|t| pos[t] == own[t].len());
        let done = (0..n).all(|p| !readers[p] || m.seen[p].is_some());
        if finished && done && inst.is_unsafe(&m.ext(inst)) {
            let mut steps = Vec::new();
            let mut states = vec![m.mem.clone()];
            let mut at = head;
            while let Some((parent, step)) = nodes[at].2.clone() {
                steps.push(step);
                at = parent;
                states.push(nodes[at].1.mem.clone());
            }
            steps.reverse();
            states.reverse();
            return Some((steps, states));
        }
        let mut next: Vec<(Vec<usize>, Machine, Step)> = Vec::new();
        for p in 0..n {
            if let Some(f) = flush(&m, p) {
                next.push((
                    pos.clone(),
                    f,
                    Step {
                        transition: FLUSH,
                        args: vec![p as u8],
                    },
                ));
            }
        }
        // The reads of `unsafe` happen at one instant, once every reader is done.
        let all_done = (0..n).all(|p| !readers[p] || pos[p] == own[p].len());
        if all_done && (0..n).any(|p| readers[p] && m.seen[p].is_none()) {
            let mut r = m.clone();
            let mut who = Vec::new();
            for (p, _) in readers.iter().enumerate().filter(|x| *x.1) {
                r.seen[p] = Some(m.view(p));
                who.push(p as u8);
            }
            next.push((
                pos.clone(),
                r,
                Step {
                    transition: READ,
                    args: who,
                },
            ));
        }
        for th in 0..=n {
            let Some(&i) = own[th].get(pos[th]) else {
                continue;
            };
            let step = &trace[i];
            let t = &inst.sys.transitions[step.transition];
            for f in fire(inst, &m, t, &step.args) {
                let mut p2 = pos.clone();
                p2[th] += 1;
                next.push((p2, f, step.clone()));
            }
        }
        for (pos2, m2, step) in next {
            if seen.insert((pos2.clone(), m2.clone())) {
                if nodes.len() >= max {
                    return None;
                }
                nodes.push((pos2, m2, Some((head, step))));
            }
        }
        head += 1;
    }
    None
}

/// Every state of the TSO instance reachable from `inits` with at most `max_buf` groups
/// in each buffer: `Ok(None)` if none is unsafe, `Ok(Some(trace))` if one is, `Err` past
/// `max_states`. Bounding the buffers under-approximates: an unsafe state found here is
/// reachable on the real machine.
pub fn explore(
    inst: &Instance,
    inits: Vec<State>,
    max_buf: usize,
    max_states: usize,
) -> Result<Option<Vec<Step>>, String> {
    let n = inst.procs as usize;
    let mut nodes: Vec<(Machine, Option<(usize, Step)>)> = Vec::new();
    let mut seen: FxHashSet<Machine> = FxHashSet::default();
    for s in inits {
        let m = Machine {
            mem: s,
            bufs: vec![Vec::new(); n],
            seen: vec![None; n],
        };
        if seen.insert(m.clone()) {
            nodes.push((m, None));
        }
    }
    let mut head = 0;
    while head < nodes.len() {
        let m = nodes[head].0.clone();
        if inst.is_unsafe(&m.ext(inst)) {
            let mut steps = Vec::new();
            let mut at = head;
            while let Some((parent, step)) = nodes[at].1.clone() {
                steps.push(step);
                at = parent;
            }
            steps.reverse();
            return Ok(Some(steps));
        }
        let mut next = Vec::new();
        for p in 0..n {
            if let Some(f) = flush(&m, p) {
                next.push((
                    f,
                    Step {
                        transition: FLUSH,
                        args: vec![p as u8],
                    },
                ));
            }
        }
        for (ti, t) in inst.sys.transitions.iter().enumerate() {
            let mut maps = Vec::new();
            crate::search::const_maps(t.params as usize, inst.procs, &mut maps, &mut Vec::new());
            for a in maps {
                let args: Vec<u8> = a
                    .iter()
                    .map(|p| match p {
                        ProcRef::Const(c) | ProcRef::Var(c) => *c,
                    })
                    .collect();
                for f in fire(inst, &m, t, &args) {
                    if f.bufs.iter().any(|b| b.len() > max_buf) {
                        continue;
                    }
                    next.push((
                        f,
                        Step {
                            transition: ti,
                            args: args.clone(),
                        },
                    ));
                }
            }
        }
        for (m2, step) in next {
            if seen.insert(m2.clone()) {
                if nodes.len() >= max_states {
                    return Err(format!("more than {max_states} states"));
                }
                nodes.push((m2, Some((head, step))));
            }
        }
        head += 1;
    }
    Ok(None)
}
