//! The DVE front-end as the engine's tests see it (the CLI has its own adapter: the engine
//! does not depend on front-ends).

use fencer_dve::run::Label;
use fencer_explicit::TransitionSystem;

/// A DVE model: alone, or (`product`) in step with its property process; with `fair`, its
/// processes are weak-fairness constraints.
pub struct Dve {
    pub sys: fencer_dve::System,
    pub product: bool,
    pub fair: bool,
}

#[allow(dead_code)]
pub fn plain(sys: fencer_dve::System) -> Dve {
    Dve {
        sys,
        product: false,
        fair: false,
    }
}

#[allow(dead_code)]
pub fn product(sys: fencer_dve::System) -> Dve {
    Dve {
        sys,
        product: true,
        fair: false,
    }
}

impl TransitionSystem for Dve {
    type Label = Label;
    fn width(&self) -> usize {
        self.sys.width as usize
    }
    fn initial(&self) -> Vec<u8> {
        self.sys.initial.clone()
    }
    fn successors(&self, s: &[u8], f: &mut dyn FnMut(Label, fencer_explicit::Next<'_>)) {
        let mut buf = Vec::new();
        let f = &mut |l, r: fencer_dve::run::Next<'_>| f(l, r.map_err(|e| e.message));
        if self.product {
            self.sys.product_successors(s, &mut buf, f);
        } else {
            self.sys.successors(s, &mut buf, f);
        }
    }
    fn accepting(&self, s: &[u8]) -> bool {
        self.product && self.sys.accepting(s)
    }
    fn byte_values(&self) -> Option<Vec<[u64; 4]>> {
        Some(self.sys.byte_values())
    }
    fn processes(&self) -> u32 {
        if self.fair {
            self.sys.processes.len() as u32
        } else {
            0
        }
    }
    fn moved(&self, l: Label, out: &mut Vec<u32>) {
        for (p, _) in std::iter::once(l.first).chain(l.second) {
            if !self.sys.processes[p as usize].property {
                out.push(p);
            }
        }
    }
}

/// A BEEM reachability property (`formula` and `ap_definitions` of a row of
/// `instances.tsv`) over `sys`'s states: the formula and its atoms compiled.
#[allow(dead_code)]
pub struct Property {
    pub ltl: fencer_ltl::Ltl,
    pub atoms: Vec<fencer_dve::sem::CExpr>,
}

#[allow(dead_code)]
impl Property {
    pub fn new(sys: &fencer_dve::System, formula: &str, definitions: &str) -> Property {
        let f = fencer_ltl::parse(formula).unwrap_or_else(|e| panic!("{formula}: {e}"));
        let defs: std::collections::HashMap<&str, &str> = definitions
            .split(';')
            .filter_map(|d| d.split_once(":="))
            .map(|(n, e)| (n.trim(), e.trim()))
            .collect();
        let atoms = f
            .atoms
            .iter()
            .map(|a| sys.expression(a, defs[a.as_str()]).unwrap())
            .collect();
        Property { ltl: f.ltl, atoms }
    }

    /// Whether the (propositional) formula holds in state `s`.
    pub fn holds(&self, sys: &fencer_dve::System, s: &[u8]) -> bool {
        eval(&self.ltl, &|a| {
            sys.eval(&self.atoms[a], s).is_ok_and(|v| v != 0)
        })
    }
}

/// A propositional formula (the goal of a reachability property) under `atom`.
fn eval(f: &fencer_ltl::Ltl, atom: &dyn Fn(usize) -> bool) -> bool {
    use fencer_ltl::Ltl;
    match f {
        Ltl::True => true,
        Ltl::False => false,
        Ltl::Atom(a) => atom(*a),
        Ltl::Not(a) => !eval(a, atom),
        Ltl::And(a, b) => eval(a, atom) && eval(b, atom),
        Ltl::Or(a, b) => eval(a, atom) || eval(b, atom),
        other => panic!("a temporal operator in a reachability goal: {other:?}"),
    }
}
