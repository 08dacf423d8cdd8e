//! Which values each byte of the state vector can hold: a flow-insensitive over-approximation
//! for the engine's bit-packed store. Most variables of real models, and every validity
//! flag and buffer slot of a store-buffer model, are only ever given constants or each
//! other's values: a flag then costs one bit, a control state of ten a nibble.
//!
//! A variable's set starts with its initial value and grows by every assignment to it: the
//! right-hand side is evaluated over sets (each operand any value of its set; comparisons
//! and logical operators give 0 and 1; `a + c * (b - a)` with `c` in {0, 1}, the
//! store-buffer models' conditional update, gives `a`'s values and `b`'s), and a set that
//! would grow too large, or keeps growing (a counter), becomes unknown. An assignment
//! through a variable index goes to every element. Process control states hold any of
//! their states, the error flag 0 and 1; channel buffers, received values and whatever
//! else the analysis does not follow are unknown. Values that do not fit a variable's
//! type never get stored (they are run-time errors), so they are dropped.

use crate::ast::{BinOp, Type, UnOp};
use crate::sem::{apply_binop, load, CExpr, Place, SyncOp, System, Var};
use std::collections::{BTreeSet, HashMap};

/// A set of values, `None` once it is unknown (or too large to be worth tracking).
type Set = Option<BTreeSet<i32>>;

/// Sets of more values than this are treated as unknown: a byte of 256 values packs to
/// eight bits anyway.
const MAX_VALUES: usize = 256;
/// Pairs of operand values one binary operator may combine.
const MAX_PAIRS: usize = 4096;
/// A cell whose set grew this many times is a counter or the like: unknown, so that the
/// iteration ends soon.
const MAX_GROWTH: u32 = 16;

fn cells(v: Var) -> impl Iterator<Item = u32> {
    (0..v.len.unwrap_or(1)).map(move |k| v.offset + k * v.ty.width())
}

/// The cells an assignment to `p` may write.
fn targets(p: &Place) -> Vec<u32> {
    match p {
        Place::Scalar(v) => vec![v.offset],
        Place::Element(v, CExpr::Const(k), _) => {
            if (0..v.len.unwrap_or(1) as i32).contains(k) {
                vec![v.offset + *k as u32 * v.ty.width()]
            } else {
                Vec::new()
            }
        }
        Place::Element(v, ..) => cells(*v).collect(),
    }
}

fn is_bool(op: BinOp) -> bool {
    use BinOp::*;
    matches!(op, Imply | Or | And | Eq | Ne | Lt | Le | Gt | Ge)
}

/// The same place read twice (for the conditional-update pattern).
fn same(a: &CExpr, b: &CExpr) -> bool {
    match (a, b) {
        (CExpr::Load(x), CExpr::Load(y)) => x == y,
        (CExpr::Index(x, i, _), CExpr::Index(y, j, _)) => x == y && same(i, j),
        (CExpr::Const(x), CExpr::Const(y)) => x == y,
        _ => false,
    }
}

struct Sets {
    set: HashMap<u32, Set>,
}

impl Sets {
    fn cell(&self, c: u32) -> Set {
        self.set.get(&c).cloned().flatten()
    }

    fn var(&self, v: Var, index: Option<&CExpr>) -> Set {
        let mut u = BTreeSet::new();
        match index {
            None => return self.cell(v.offset),
            Some(CExpr::Const(k)) => {
                if (0..v.len.unwrap_or(1) as i32).contains(k) {
                    return self.cell(v.offset + *k as u32 * v.ty.width());
                }
            }
            Some(_) => {
                for c in cells(v) {
                    u.extend(self.cell(c)?);
                }
            }
        }
        Some(u)
    }

    fn pairs(op: BinOp, x: &BTreeSet<i32>, y: &BTreeSet<i32>) -> Set {
        if x.len() * y.len() > MAX_PAIRS {
            return None;
        }
        let mut out = BTreeSet::new();
        for &a in x {
            for &b in y {
                // A division by zero is an error, not a value.
                out.extend(apply_binop(op, a, b));
            }
        }
        Some(out)
    }

    fn eval(&self, e: &CExpr) -> Set {
        let bools = || Some(BTreeSet::from([0, 1]));
        match e {
            CExpr::Const(c) => Some(BTreeSet::from([*c])),
            CExpr::Load(v) => self.var(*v, None),
            CExpr::Index(v, i, _) => self.var(*v, Some(i)),
            CExpr::InState { .. } => bools(),
            CExpr::VarConst(op, ..) | CExpr::VarVar(op, ..) | CExpr::Binary(op, ..)
                if is_bool(*op) =>
            {
                bools()
            }
            CExpr::Unary(UnOp::Not, _) => bools(),
            CExpr::Unary(op, a) => Some(
                self.eval(a)?
                    .into_iter()
                    .map(|x| match op {
                        UnOp::Neg => x.wrapping_neg(),
                        UnOp::BitNot => !x,
                        UnOp::Not => (x == 0) as i32,
                    })
                    .collect(),
            ),
            CExpr::VarConst(op, x, c) => {
                Self::pairs(*op, &self.var(*x, None)?, &BTreeSet::from([*c]))
            }
            CExpr::VarVar(op, x, y) => Self::pairs(*op, &self.var(*x, None)?, &self.var(*y, None)?),
            CExpr::Binary(BinOp::Add, a, m, _) => {
                // `a + c * (b - a)`, c in {0, 1}: a or b.
                if let CExpr::Binary(BinOp::Mul, c, d, _) = &**m {
                    // `b - a`, as written or fused into one node for two variables.
                    let diff = match &**d {
                        CExpr::Binary(BinOp::Sub, b, a2, _) => {
                            Some(((**b).clone(), (**a2).clone()))
                        }
                        CExpr::VarVar(BinOp::Sub, b, a2) => {
                            Some((CExpr::Load(*b), CExpr::Load(*a2)))
                        }
                        _ => None,
                    };
                    if let Some((b, _)) = diff.filter(|(_, a2)| same(a, a2)) {
                        if self
                            .eval(c)
                            .is_some_and(|c| c.iter().all(|&x| x == 0 || x == 1))
                        {
                            let mut u = self.eval(a)?;
                            u.extend(self.eval(&b)?);
                            return Some(u);
                        }
                    }
                }
                Self::pairs(BinOp::Add, &self.eval(a)?, &self.eval(m)?)
            }
            CExpr::Binary(op, a, b, _) => Self::pairs(*op, &self.eval(a)?, &self.eval(b)?),
        }
    }
}

impl System {
    /// Per byte of the state vector, a 256-bit set of the values it can hold in any
    /// reachable state (see the module comment).
    pub fn byte_values(&self) -> Vec<[u64; 4]> {
        let mut ty: HashMap<u32, Type> = HashMap::new();
        let mut sets = Sets {
            set: HashMap::new(),
        };
        let mut add_var = |v: Var, sets: &mut Sets| {
            for c in cells(v) {
                ty.insert(c, v.ty);
                let k = (c - v.offset) / v.ty.width();
                sets.set
                    .insert(c, Some(BTreeSet::from([load(&self.initial, v, k)])));
            }
        };
        for (_, v) in &self.globals {
            add_var(*v, &mut sets);
        }
        for pr in &self.processes {
            for (_, v) in &pr.locals {
                add_var(*v, &mut sets);
            }
            add_var(pr.state_var, &mut sets);
        }
        add_var(self.error_var, &mut sets);
        // (cells written, what is written); `None`: unknown.
        let mut edges: Vec<(Vec<u32>, Option<&CExpr>)> = Vec::new();
        let mut fixed: Vec<(u32, BTreeSet<i32>)> =
            vec![(self.error_var.offset, BTreeSet::from([0, 1]))];
        for pr in &self.processes {
            fixed.push((pr.state_var.offset, (0..pr.states.len() as i32).collect()));
            for tr in &pr.trans {
                for (p, e) in &tr.effect {
                    edges.push((targets(p), Some(e)));
                }
                if let Some((_, SyncOp::Recv(places))) = &tr.sync {
                    for p in places {
                        edges.push((targets(p), None));
                    }
                }
            }
        }
        for (c, vs) in fixed {
            if let Some(Some(s)) = sets.set.get_mut(&c) {
                s.extend(vs);
            }
        }
        let mut growth: HashMap<u32, u32> = HashMap::new();
        // Sets only grow, each a bounded number of times before it is unknown: the
        // iteration ends.
        let mut changed = true;
        while changed {
            changed = false;
            for (to, from) in &edges {
                let values = from.and_then(|e| sets.eval(e));
                for t in to {
                    let Some(Some(cur)) = sets.set.get_mut(t) else {
                        continue;
                    };
                    let grew = match &values {
                        None => true,
                        Some(vs) => {
                            let before = cur.len();
                            cur.extend(vs.iter().copied().filter(|v| ty[t].fits(*v)));
                            cur.len() != before
                        }
                    };
                    if !grew {
                        continue;
                    }
                    changed = true;
                    let g = growth.entry(*t).or_default();
                    *g += 1;
                    if values.is_none() || *g > MAX_GROWTH || cur.len() > MAX_VALUES {
                        sets.set.insert(*t, None);
                    }
                }
            }
        }
        let set = sets.set;
        let mut out = vec![[u64::MAX; 4]; self.width as usize];
        for (&c, s) in &set {
            let Some(s) = s else { continue };
            let width = ty[&c].width() as usize;
            let mut bytes = vec![[0u64; 4]; width];
            for &v in s {
                let le = (v as i16).to_le_bytes();
                for (k, b) in bytes.iter_mut().enumerate() {
                    let x = if width == 1 { v as u8 } else { le[k] };
                    b[x as usize / 64] |= 1 << (x % 64);
                }
            }
            for (k, b) in bytes.into_iter().enumerate() {
                out[c as usize + k] = b;
            }
        }
        out
    }
}
