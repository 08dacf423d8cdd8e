//! LTL for every front-end: formulas over named atomic propositions (what an atom means is
//! the front-end's business), their parser (`G`, `F`, `X`, `U`, `R`/`V`, `W`, Spin's `[]`
//! and `<>`, `!`, `&&`, `||`, `->`, `<->`, and the words `and`, `or`, `not`), and the
//! translation of a formula's negation to a Büchi automaton by the tableau construction of
//! Gerth, Peled, Vardi and Wolper ("Simple on-the-fly automatic verification of linear
//! temporal logic", 1995), degeneralised with a counter.
//!
//! The automaton reads one system state per transition: a run `q0 -s0-> q1 -s1-> ...`
//! accepts the path `s0 s1 ...`. Each transition's guard is a conjunction of literals.

use std::collections::BTreeSet;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ltl {
    True,
    False,
    /// An atomic proposition, by its index in the formula's atom list.
    Atom(usize),
    Not(Box<Ltl>),
    And(Box<Ltl>, Box<Ltl>),
    Or(Box<Ltl>, Box<Ltl>),
    Next(Box<Ltl>),
    Until(Box<Ltl>, Box<Ltl>),
    /// Release: `a R b` holds when `b` holds up to and including the first `a` (or always).
    Release(Box<Ltl>, Box<Ltl>),
}

/// A formula and the names of its atoms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    pub ltl: Ltl,
    pub atoms: Vec<String>,
}

/// A parse error: where (a byte offset into the formula) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "at offset {}: {}", self.offset, self.message)
    }
}

/// Deepest nesting a formula may have (parentheses and prefix operators).
pub const MAX_NESTING: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Id(String),
    Op(&'static str),
    End,
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, Error> {
    const OPS: &[&str] = &[
        "<->", "->", "[]", "<>", "&&", "||", "!", "(", ")", "&", "|", "/\\", "\\/",
    ];
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Id(src[s..i].to_string()), s));
            continue;
        }
        match OPS.iter().find(|o| b[i..].starts_with(o.as_bytes())) {
            Some(o) => {
                out.push((Tok::Op(o), i));
                i += o.len();
            }
            None => {
                return Err(Error {
                    offset: i,
                    message: format!(
                        "unexpected character `{}`",
                        src[i..].chars().next().unwrap_or('?')
                    ),
                })
            }
        }
    }
    out.push((Tok::End, src.len()));
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
    atoms: Vec<String>,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn offset(&self) -> usize {
        self.toks[self.pos].1
    }
    fn err(&self, what: &str) -> Error {
        let found = match self.peek() {
            Tok::Id(s) => format!("`{s}`"),
            Tok::Op(o) => format!("`{o}`"),
            Tok::End => "the end".into(),
        };
        Error {
            offset: self.offset(),
            message: format!("expected {what}, found {found}"),
        }
    }
    fn is(&self, ops: &[&str]) -> bool {
        match self.peek() {
            Tok::Op(o) => ops.contains(o),
            Tok::Id(w) => ops.contains(&w.as_str()),
            Tok::End => false,
        }
    }
    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error {
                offset: self.offset(),
                message: format!("formula nested deeper than {MAX_NESTING} levels"),
            });
        }
        Ok(())
    }

    // Precedence, lowest first: <->, ->, ||, &&, U R V W, prefix operators.
    fn iff(&mut self) -> Result<Ltl, Error> {
        let mut a = self.imp()?;
        while self.is(&["<->"]) {
            self.pos += 1;
            let b = self.imp()?;
            a = Ltl::Or(
                Box::new(Ltl::And(Box::new(a.clone()), Box::new(b.clone()))),
                Box::new(Ltl::And(
                    Box::new(Ltl::Not(Box::new(a))),
                    Box::new(Ltl::Not(Box::new(b))),
                )),
            );
        }
        Ok(a)
    }
    fn imp(&mut self) -> Result<Ltl, Error> {
        let a = self.or()?;
        if self.is(&["->"]) {
            self.pos += 1;
            self.enter()?;
            let b = self.imp()?;
            self.depth -= 1;
            return Ok(Ltl::Or(Box::new(Ltl::Not(Box::new(a))), Box::new(b)));
        }
        Ok(a)
    }
    fn or(&mut self) -> Result<Ltl, Error> {
        let mut a = self.and()?;
        while self.is(&["||", "|", "\\/", "or"]) {
            self.pos += 1;
            let b = self.and()?;
            a = Ltl::Or(Box::new(a), Box::new(b));
        }
        Ok(a)
    }
    fn and(&mut self) -> Result<Ltl, Error> {
        let mut a = self.until()?;
        while self.is(&["&&", "&", "/\\", "and"]) {
            self.pos += 1;
            let b = self.until()?;
            a = Ltl::And(Box::new(a), Box::new(b));
        }
        Ok(a)
    }
    fn until(&mut self) -> Result<Ltl, Error> {
        let a = self.prefix()?;
        if self.is(&["U", "R", "V", "W"]) {
            let op = match self.peek() {
                Tok::Id(w) => w.clone(),
                _ => unreachable!(),
            };
            self.pos += 1;
            self.enter()?;
            let b = self.until()?;
            self.depth -= 1;
            let (a, b) = (Box::new(a), Box::new(b));
            return Ok(match op.as_str() {
                "U" => Ltl::Until(a, b),
                "W" => Ltl::Or(
                    Box::new(Ltl::Until(a.clone(), b)),
                    Box::new(Ltl::Release(Box::new(Ltl::False), a)),
                ),
                _ => Ltl::Release(a, b),
            });
        }
        Ok(a)
    }
    fn prefix(&mut self) -> Result<Ltl, Error> {
        let op = match self.peek() {
            Tok::Op("!") => Some("!"),
            Tok::Op("[]") => Some("G"),
            Tok::Op("<>") => Some("F"),
            Tok::Id(w) if matches!(w.as_str(), "G" | "F" | "X" | "not") => Some(match w.as_str() {
                "G" => "G",
                "F" => "F",
                "X" => "X",
                _ => "!",
            }),
            // `GF p`, `FG p` written together.
            Tok::Id(w) if w.len() > 1 && w.chars().all(|c| matches!(c, 'G' | 'F' | 'X')) => {
                let w = w.clone();
                self.pos += 1;
                self.enter()?;
                let mut e = self.prefix()?;
                self.depth -= 1;
                for c in w.chars().rev() {
                    e = wrap(c, e);
                }
                return Ok(e);
            }
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            self.enter()?;
            let e = self.prefix()?;
            self.depth -= 1;
            return Ok(match op {
                "!" => Ltl::Not(Box::new(e)),
                o => wrap(o.chars().next().unwrap(), e),
            });
        }
        match self.peek().clone() {
            Tok::Op("(") => {
                self.pos += 1;
                self.enter()?;
                let e = self.iff()?;
                self.depth -= 1;
                if !self.is(&[")"]) {
                    return Err(self.err("`)`"));
                }
                self.pos += 1;
                Ok(e)
            }
            Tok::Id(w) if w == "true" => {
                self.pos += 1;
                Ok(Ltl::True)
            }
            Tok::Id(w) if w == "false" => {
                self.pos += 1;
                Ok(Ltl::False)
            }
            Tok::Id(w) if !matches!(w.as_str(), "U" | "R" | "V" | "W" | "and" | "or") => {
                self.pos += 1;
                let i = match self.atoms.iter().position(|a| *a == w) {
                    Some(i) => i,
                    None => {
                        self.atoms.push(w);
                        self.atoms.len() - 1
                    }
                };
                Ok(Ltl::Atom(i))
            }
            _ => Err(self.err("an atomic proposition, `(`, or a temporal operator")),
        }
    }
}

fn wrap(op: char, e: Ltl) -> Ltl {
    match op {
        'G' => Ltl::Release(Box::new(Ltl::False), Box::new(e)),
        'F' => Ltl::Until(Box::new(Ltl::True), Box::new(e)),
        _ => Ltl::Next(Box::new(e)),
    }
}

/// Parses a formula. Atoms are identifiers (their meaning is the caller's).
pub fn parse(src: &str) -> Result<Formula, Error> {
    let mut p = Parser {
        toks: lex(src)?,
        pos: 0,
        depth: 0,
        atoms: Vec::new(),
    };
    let ltl = p.iff()?;
    if !matches!(p.peek(), Tok::End) {
        return Err(p.err("the end of the formula"));
    }
    Ok(Formula {
        ltl,
        atoms: p.atoms,
    })
}

/// Parses a formula as DiVinE 2 reads its `.ltl` files (`divine/ltl2ba`'s parser), so that
/// formulas written without spaces mean what they mean there: `GFa` is `G F a`, and
/// `!p1U(p1&&co)` is `(!p1) U (p1 && co)`. Its lexer takes every `G`, `F`, `X`/`O`, `U`,
/// `W`, `R`/`V` as an operator and an atom as a lowercase letter or `_` followed by
/// lowercase letters, digits, `_` and `=` (no uppercase: `aB` is not one atom); `+`, `*`
/// and `^` are or, and and xor. Its grammar has no precedence among binary operators:
/// they group from the left (`a && b U c` is `(a && b) U c`, `a -> b -> c` is
/// `(a -> b) -> c`), and a prefix operator takes the atom or parenthesis after it.
pub fn parse_divine(src: &str) -> Result<Formula, Error> {
    let toks = lex_divine(src)?;
    let mut p = DivineParser {
        toks,
        pos: 0,
        depth: 0,
        atoms: Vec::new(),
    };
    let ltl = p.binary()?;
    if p.toks[p.pos].0 != DTok::End {
        return Err(p.err("a binary operator or the end of the formula"));
    }
    Ok(Formula {
        ltl,
        atoms: p.atoms,
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum DTok {
    Prefix(char),
    Binary(&'static str),
    Open,
    Close,
    Atom(String),
    End,
}

fn lex_divine(src: &str) -> Result<Vec<(DTok, usize)>, Error> {
    const TWO: &[(&str, DTok)] = &[
        ("[]", DTok::Prefix('G')),
        ("<>", DTok::Prefix('F')),
        ("->", DTok::Binary("->")),
        ("||", DTok::Binary("||")),
        ("&&", DTok::Binary("&&")),
    ];
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
            continue;
        }
        if src[i..].starts_with("<->") {
            out.push((DTok::Binary("<->"), i));
            i += 3;
            continue;
        }
        if let Some((t, tok)) = TWO.iter().find(|(t, _)| src[i..].starts_with(t)) {
            out.push((tok.clone(), i));
            i += t.len();
            continue;
        }
        let tok = match c {
            b'(' => DTok::Open,
            b')' => DTok::Close,
            b'!' => DTok::Prefix('!'),
            b'X' | b'O' => DTok::Prefix('X'),
            b'G' => DTok::Prefix('G'),
            b'F' => DTok::Prefix('F'),
            b'U' => DTok::Binary("U"),
            b'W' => DTok::Binary("W"),
            b'R' | b'V' => DTok::Binary("R"),
            b'+' => DTok::Binary("||"),
            b'*' => DTok::Binary("&&"),
            b'^' => DTok::Binary("^"),
            c if c.is_ascii_lowercase() || c == b'_' => {
                let s = i;
                while i < b.len()
                    && (b[i].is_ascii_lowercase()
                        || b[i].is_ascii_digit()
                        || b[i] == b'_'
                        || b[i] == b'=')
                {
                    i += 1;
                }
                out.push((DTok::Atom(src[s..i].to_string()), s));
                continue;
            }
            _ => {
                return Err(Error {
                    offset: i,
                    message: format!(
                        "unexpected character `{}` (DiVinE's LTL: operators are G F X U W R V ! && || -> <->, atoms start with a lowercase letter)",
                        src[i..].chars().next().unwrap_or('?')
                    ),
                })
            }
        };
        out.push((tok, i));
        i += 1;
    }
    out.push((DTok::End, src.len()));
    Ok(out)
}

struct DivineParser {
    toks: Vec<(DTok, usize)>,
    pos: usize,
    depth: usize,
    atoms: Vec<String>,
}

impl DivineParser {
    fn err(&self, what: &str) -> Error {
        let (t, offset) = &self.toks[self.pos];
        let found = match t {
            DTok::Prefix(c) => format!("`{c}`"),
            DTok::Binary(o) => format!("`{o}`"),
            DTok::Open => "`(`".into(),
            DTok::Close => "`)`".into(),
            DTok::Atom(a) => format!("`{a}`"),
            DTok::End => "the end".into(),
        };
        Error {
            offset: *offset,
            message: format!("expected {what}, found {found}"),
        }
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error {
                offset: self.toks[self.pos].1,
                message: format!("formula nested deeper than {MAX_NESTING} levels"),
            });
        }
        Ok(())
    }

    /// `S -> S bin_op A | A`: binary operators from the left, all of one precedence.
    fn binary(&mut self) -> Result<Ltl, Error> {
        let mut a = self.operand()?;
        while let DTok::Binary(op) = self.toks[self.pos].0 {
            self.pos += 1;
            let b = self.operand()?;
            let (x, y) = (Box::new(a), Box::new(b));
            a = match op {
                "U" => Ltl::Until(x, y),
                "R" => Ltl::Release(x, y),
                "W" => Ltl::Or(
                    Box::new(Ltl::Until(x.clone(), y)),
                    Box::new(Ltl::Release(Box::new(Ltl::False), x)),
                ),
                "&&" => Ltl::And(x, y),
                "||" => Ltl::Or(x, y),
                "->" => Ltl::Or(Box::new(Ltl::Not(x)), y),
                "^" => Ltl::Or(
                    Box::new(Ltl::And(x.clone(), Box::new(Ltl::Not(y.clone())))),
                    Box::new(Ltl::And(Box::new(Ltl::Not(x)), y)),
                ),
                _ => Ltl::Or(
                    Box::new(Ltl::And(x.clone(), y.clone())),
                    Box::new(Ltl::And(Box::new(Ltl::Not(x)), Box::new(Ltl::Not(y)))),
                ),
            };
        }
        Ok(a)
    }

    /// `A -> un_op A | ( S ) | atom`.
    fn operand(&mut self) -> Result<Ltl, Error> {
        let tok = self.toks[self.pos].0.clone();
        match tok {
            DTok::Prefix(c) => {
                self.pos += 1;
                self.enter()?;
                let e = self.operand()?;
                self.depth -= 1;
                Ok(if c == '!' {
                    Ltl::Not(Box::new(e))
                } else {
                    wrap(c, e)
                })
            }
            DTok::Open => {
                self.pos += 1;
                self.enter()?;
                let e = self.binary()?;
                self.depth -= 1;
                if self.toks[self.pos].0 != DTok::Close {
                    return Err(self.err("`)`"));
                }
                self.pos += 1;
                Ok(e)
            }
            DTok::Atom(a) => {
                self.pos += 1;
                Ok(match a.as_str() {
                    "true" => Ltl::True,
                    "false" => Ltl::False,
                    _ => {
                        let i = match self.atoms.iter().position(|x| *x == a) {
                            Some(i) => i,
                            None => {
                                self.atoms.push(a);
                                self.atoms.len() - 1
                            }
                        };
                        Ltl::Atom(i)
                    }
                })
            }
            _ => Err(self.err("an atomic proposition, `(`, or a prefix operator")),
        }
    }
}

/// Negation normal form: negations on atoms only.
fn nnf(f: &Ltl, neg: bool) -> Ltl {
    let b = |x: &Ltl, n| Box::new(nnf(x, n));
    match (f, neg) {
        (Ltl::True, false) | (Ltl::False, true) => Ltl::True,
        (Ltl::True, true) | (Ltl::False, false) => Ltl::False,
        (Ltl::Atom(i), false) => Ltl::Atom(*i),
        (Ltl::Atom(i), true) => Ltl::Not(Box::new(Ltl::Atom(*i))),
        (Ltl::Not(a), n) => nnf(a, !n),
        (Ltl::And(a, c), false) => Ltl::And(b(a, false), b(c, false)),
        (Ltl::And(a, c), true) => Ltl::Or(b(a, true), b(c, true)),
        (Ltl::Or(a, c), false) => Ltl::Or(b(a, false), b(c, false)),
        (Ltl::Or(a, c), true) => Ltl::And(b(a, true), b(c, true)),
        (Ltl::Next(a), n) => Ltl::Next(b(a, n)),
        (Ltl::Until(a, c), false) => Ltl::Until(b(a, false), b(c, false)),
        (Ltl::Until(a, c), true) => Ltl::Release(b(a, true), b(c, true)),
        (Ltl::Release(a, c), false) => Ltl::Release(b(a, false), b(c, false)),
        (Ltl::Release(a, c), true) => Ltl::Until(b(a, true), b(c, true)),
    }
}

/// A literal: atom `0` holds (`true`) or does not (`false`).
pub type Literal = (usize, bool);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub from: usize,
    pub to: usize,
    /// A conjunction; empty is `true`.
    pub guard: Vec<Literal>,
}

/// A Büchi automaton: state 0 is initial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buchi {
    pub states: usize,
    pub accepting: Vec<bool>,
    pub transitions: Vec<Transition>,
}

#[derive(Clone, Debug)]
struct Node {
    incoming: BTreeSet<usize>,
    old: BTreeSet<Ltl>,
    next: BTreeSet<Ltl>,
}

/// The tableau's nodes: `(incoming, old, next)`, the initial marker being `usize::MAX`.
fn expand(f: Ltl) -> Vec<Node> {
    const INIT: usize = usize::MAX;
    let mut done: Vec<Node> = Vec::new();
    // Work items: a node being built and the formulas still to process.
    let mut work: Vec<(Node, Vec<Ltl>)> = vec![(
        Node {
            incoming: [INIT].into(),
            old: BTreeSet::new(),
            next: BTreeSet::new(),
        },
        vec![f],
    )];
    while let Some((mut node, mut new)) = work.pop() {
        let Some(eta) = new.pop() else {
            // Fully expanded: merge with an equal node, or keep it and expand its future.
            if let Some(d) = done
                .iter_mut()
                .find(|d| d.old == node.old && d.next == node.next)
            {
                d.incoming.extend(node.incoming);
                continue;
            }
            let id = done.len();
            let next: Vec<Ltl> = node.next.iter().cloned().collect();
            done.push(node.clone());
            work.push((
                Node {
                    incoming: [id].into(),
                    old: BTreeSet::new(),
                    next: BTreeSet::new(),
                },
                next,
            ));
            continue;
        };
        if node.old.contains(&eta) {
            work.push((node, new));
            continue;
        }
        match &eta {
            Ltl::False => continue,
            Ltl::True => {
                work.push((node, new));
            }
            Ltl::Atom(_) | Ltl::Not(_) => {
                let contra = match &eta {
                    Ltl::Atom(i) => node.old.contains(&Ltl::Not(Box::new(Ltl::Atom(*i)))),
                    Ltl::Not(a) => node.old.contains(a),
                    _ => false,
                };
                if contra {
                    continue;
                }
                node.old.insert(eta);
                work.push((node, new));
            }
            Ltl::And(a, b) => {
                node.old.insert(eta.clone());
                new.push((**a).clone());
                new.push((**b).clone());
                work.push((node, new));
            }
            Ltl::Next(a) => {
                node.old.insert(eta.clone());
                node.next.insert((**a).clone());
                work.push((node, new));
            }
            Ltl::Or(a, b) | Ltl::Until(a, b) | Ltl::Release(a, b) => {
                // Split: (new1, next1) and (new2) as in the paper.
                let (n1, x1, n2): (Vec<Ltl>, Option<Ltl>, Vec<Ltl>) = match &eta {
                    Ltl::Or(..) => (vec![(**a).clone()], None, vec![(**b).clone()]),
                    Ltl::Until(..) => (vec![(**a).clone()], Some(eta.clone()), vec![(**b).clone()]),
                    _ => (
                        vec![(**b).clone()],
                        Some(eta.clone()),
                        vec![(**a).clone(), (**b).clone()],
                    ),
                };
                let mut left = node.clone();
                left.old.insert(eta.clone());
                if let Some(x) = x1 {
                    left.next.insert(x);
                }
                let mut lnew = new.clone();
                lnew.extend(n1);
                let mut right = node;
                right.old.insert(eta.clone());
                let mut rnew = new;
                rnew.extend(n2);
                work.push((left, lnew));
                work.push((right, rnew));
            }
        }
    }
    done
}

/// The Büchi automaton of `f` itself (negate first to search for counterexamples).
pub fn translate(f: &Ltl) -> Buchi {
    let f = nnf(f, false);
    let nodes = expand(f);
    // Acceptance sets: one per `a U b` subformula: nodes without it in `old`, or with `b`.
    let mut untils: BTreeSet<(Ltl, Ltl)> = BTreeSet::new();
    for n in &nodes {
        for g in n.old.iter().chain(&n.next) {
            collect_untils(g, &mut untils);
        }
    }
    let untils: Vec<(Ltl, Ltl)> = untils.into_iter().collect();
    let k = untils.len().max(1);
    let in_set = |n: &Node, i: usize| -> bool {
        if untils.is_empty() {
            return true;
        }
        let (a, b) = &untils[i];
        let u = Ltl::Until(Box::new(a.clone()), Box::new(b.clone()));
        !n.old.contains(&u) || n.old.contains(b)
    };
    let label = |n: &Node| -> Vec<Literal> {
        n.old
            .iter()
            .filter_map(|g| match g {
                Ltl::Atom(i) => Some((*i, true)),
                Ltl::Not(a) => match **a {
                    Ltl::Atom(i) => Some((i, false)),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    };
    // States: 0 the initial one, then (node, counter) as 1 + node * k + counter.
    let states = 1 + nodes.len() * k;
    let id = |n: usize, c: usize| 1 + n * k + c;
    let mut accepting = vec![false; states];
    for (n, node) in nodes.iter().enumerate() {
        if in_set(node, 0) {
            accepting[id(n, 0)] = true;
        }
    }
    let mut transitions = Vec::new();
    for (m, node) in nodes.iter().enumerate() {
        let guard = label(node);
        for &src in &node.incoming {
            if src == usize::MAX {
                transitions.push(Transition {
                    from: 0,
                    to: id(m, 0),
                    guard: guard.clone(),
                });
                continue;
            }
            for c in 0..k {
                // The counter moves on when the state left is in the set it waits for.
                let c2 = if in_set(&nodes[src], c) {
                    (c + 1) % k
                } else {
                    c
                };
                transitions.push(Transition {
                    from: id(src, c),
                    to: id(m, c2),
                    guard: guard.clone(),
                });
            }
        }
    }
    Buchi {
        states,
        accepting,
        transitions,
    }
}

fn collect_untils(f: &Ltl, out: &mut BTreeSet<(Ltl, Ltl)>) {
    match f {
        Ltl::Until(a, b) => {
            out.insert(((**a).clone(), (**b).clone()));
            collect_untils(a, out);
            collect_untils(b, out);
        }
        Ltl::And(a, b) | Ltl::Or(a, b) | Ltl::Release(a, b) => {
            collect_untils(a, out);
            collect_untils(b, out);
        }
        Ltl::Next(a) | Ltl::Not(a) => collect_untils(a, out),
        _ => {}
    }
}

/// The automaton of the negation of `f`: its accepting runs are `f`'s counterexamples.
pub fn negation(f: &Ltl) -> Buchi {
    translate(&Ltl::Not(Box::new(f.clone())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn divine_reads_formulas_written_without_spaces() {
        let d = |s: &str| parse_divine(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let std = |s: &str| parse(s).unwrap();
        // BEEM's elevator2 property, as DiVinE reads it.
        let f = d("G(r1->(!p1U(p1U(p1&&co))))");
        assert_eq!(f.atoms, vec!["r1", "p1", "co"]);
        assert_eq!(f.ltl, std("G (r1 -> ((!p1) U (p1 U (p1 && co))))").ltl);
        assert_eq!(d("GFa").ltl, std("G F a").ltl);
        assert_eq!(d("XXb").ltl, std("X X b").ltl);
        assert_eq!(d("[]<>a").ltl, std("G F a").ltl);
        // No precedence among binary operators: from the left.
        assert_eq!(d("a&&bUc").ltl, std("(a && b) U c").ltl);
        assert_eq!(d("a->b->c").ltl, std("(a -> b) -> c").ltl);
        assert_eq!(d("a+b*c").ltl, std("(a || b) && c").ltl);
        assert_eq!(d("!aRb").ltl, std("(!a) R b").ltl);
        assert_eq!(d("true U false").ltl, std("true U false").ltl);
        // An uppercase letter is an operator, never part of an atom.
        assert!(parse_divine("aB").is_err());
        assert!(parse_divine("Flag").is_ok());
        assert_eq!(d("Flag").atoms, vec!["lag"]);
        let e = parse_divine("G(a").unwrap_err();
        assert_eq!(e.offset, 3);
        assert!(parse_divine("a U").is_err());
        assert!(parse_divine("1a").is_err());
    }

    use super::*;

    /// Whether the automaton accepts the lasso `prefix (cycle)^ω` of letters (each letter
    /// the set of atoms that hold), by searching the product of the lasso and automaton.
    fn accepts(b: &Buchi, prefix: &[u32], cycle: &[u32]) -> bool {
        let word = |i: usize| -> u32 {
            if i < prefix.len() {
                prefix[i]
            } else {
                cycle[(i - prefix.len()) % cycle.len()]
            }
        };
        let pos_count = prefix.len() + cycle.len();
        let norm = |i: usize| {
            if i < pos_count {
                i
            } else {
                prefix.len() + (i - prefix.len()) % cycle.len()
            }
        };
        let ok = |g: &[Literal], l: u32| g.iter().all(|&(a, v)| ((l >> a) & 1 == 1) == v);
        // Nodes (state, position); edges read the letter at the position.
        let succ = |(q, i): (usize, usize)| -> Vec<(usize, usize)> {
            b.transitions
                .iter()
                .filter(|t| t.from == q && ok(&t.guard, word(i)))
                .map(|t| (t.to, norm(i + 1)))
                .collect()
        };
        // Reachable nodes, then an accepting node on a cycle within the cycle part.
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![(0usize, 0usize)];
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                stack.extend(succ(n));
            }
        }
        seen.iter().any(|&n| {
            b.accepting[n.0] && n.1 >= prefix.len() && {
                let mut s2 = std::collections::BTreeSet::new();
                let mut st = succ(n);
                let mut found = false;
                while let Some(m) = st.pop() {
                    if m == n {
                        found = true;
                        break;
                    }
                    if s2.insert(m) {
                        st.extend(succ(m));
                    }
                }
                found
            }
        })
    }

    /// Direct LTL semantics on a lasso (positions normalised into the lasso).
    fn holds(f: &Ltl, prefix: &[u32], cycle: &[u32], i: usize) -> bool {
        let n = prefix.len() + cycle.len();
        let norm = |i: usize| {
            if i < n {
                i
            } else {
                prefix.len() + (i - prefix.len()) % cycle.len()
            }
        };
        let letter = |i: usize| {
            if i < prefix.len() {
                prefix[i]
            } else {
                cycle[i - prefix.len()]
            }
        };
        let i = norm(i);
        match f {
            Ltl::True => true,
            Ltl::False => false,
            Ltl::Atom(a) => (letter(i) >> a) & 1 == 1,
            Ltl::Not(a) => !holds(a, prefix, cycle, i),
            Ltl::And(a, b) => holds(a, prefix, cycle, i) && holds(b, prefix, cycle, i),
            Ltl::Or(a, b) => holds(a, prefix, cycle, i) || holds(b, prefix, cycle, i),
            Ltl::Next(a) => holds(a, prefix, cycle, i + 1),
            Ltl::Until(a, b) => {
                let mut j = i;
                for _ in 0..2 * n + 2 {
                    if holds(b, prefix, cycle, j) {
                        return true;
                    }
                    if !holds(a, prefix, cycle, j) {
                        return false;
                    }
                    j = norm(j + 1);
                }
                false
            }
            Ltl::Release(a, b) => {
                let mut j = i;
                for _ in 0..2 * n + 2 {
                    if !holds(b, prefix, cycle, j) {
                        return false;
                    }
                    if holds(a, prefix, cycle, j) {
                        return true;
                    }
                    j = norm(j + 1);
                }
                true
            }
        }
    }

    const FORMULAS: &[&str] = &[
        "G (wait0 -> F (cs0) )",
        "G((!cs0) -> F cs0)",
        "GF eat0",
        "F elected",
        "G( dataout1 -> ( zero_time && ( ok_time U datain1) ) )",
        "!(!(u_get || u_reg) U ua_not) && G(u_unreg -> !(!(u_get || u_reg) U ua_not))",
        "G(cc_cdo -> F(cc_ci || cc_unco))",
        "p U q",
        "p R q",
        "p W q",
        "X p",
        "X X p",
        "FG p",
        "GF p -> GF q",
        "[]<> p",
        "<>[] p",
        "G(p -> X q)",
        "(p U q) U r",
        "p U (q U r)",
        "G !p",
        "F(p && X !p)",
        "!(p <-> q)",
        "G(p -> (q U r))",
        "F p && F !p",
        "G(p || q)",
        "(G F p) && (G F q)",
        "p && X(q U r)",
        "G(p -> F(q && F r))",
        "true U p",
        "false R p",
        "X(p R q) || F r",
        "G F (p && !q)",
        "p",
        "!p",
        "true",
        "false",
    ];

    #[test]
    fn automata_agree_with_the_semantics_on_random_lassos() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for src in FORMULAS {
            let f = parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
            let a = f.atoms.len();
            let pos = translate(&f.ltl);
            let neg = negation(&f.ltl);
            for _ in 0..300 {
                let pl = rnd(4) as usize;
                let cl = 1 + rnd(4) as usize;
                let prefix: Vec<u32> = (0..pl).map(|_| rnd(1 << a.max(1)) as u32).collect();
                let cycle: Vec<u32> = (0..cl).map(|_| rnd(1 << a.max(1)) as u32).collect();
                let h = holds(&f.ltl, &prefix, &cycle, 0);
                assert_eq!(
                    accepts(&pos, &prefix, &cycle),
                    h,
                    "{src} on {prefix:?} ({cycle:?})"
                );
                assert_eq!(
                    accepts(&neg, &prefix, &cycle),
                    !h,
                    "!({src}) on {prefix:?} ({cycle:?})"
                );
            }
        }
    }

    #[test]
    fn parse_errors_and_nesting() {
        assert!(parse("G (p").unwrap_err().message.contains("expected `)`"));
        assert!(parse("p $ q")
            .unwrap_err()
            .message
            .contains("unexpected character"));
        assert!(parse("p q")
            .unwrap_err()
            .message
            .contains("the end of the formula"));
        let deep = format!("{}p{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(parse(&deep).unwrap_err().message.contains("nested deeper"));
        let f = parse("GF eat0 && G(a -> F b)").unwrap();
        assert_eq!(f.atoms, ["eat0", "a", "b"]);
    }
}
