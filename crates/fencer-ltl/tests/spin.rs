//! fencer's LTL-to-Büchi translation against Spin's (`spin -f`, Debian's `spin` 6.5.2): for
//! BEEM's formulas and a wide mix of others, both automata of the formula and both of its
//! negation must accept exactly the same random ultimately periodic words. Spin is a second,
//! independent implementation (its own parser, its own tableau, its own simplifications), so
//! agreement on thousands of lassos per formula is strong evidence that fencer's automata
//! mean what the formula says. Skipped, with a message, when `spin` is not on PATH (CI
//! installs it).
//!
//! Formulas are written in Spin's syntax, which fencer's parser reads as well. Spin gives
//! `&&`, `||`, `->` and `<->` one precedence (left to right) and makes `U`/`V` left
//! associative, where fencer follows C and makes `U` right associative: the formulas are
//! parenthesised wherever that would matter, and a disagreement would show it.

use fencer_ltl::{negation, parse, translate, Buchi};
use std::collections::HashMap;
use std::process::Command;

/// BEEM's LTL formulas (`../shared/dve/beem/instances.tsv`), in BEEM's own syntax: turned
/// into Spin's by `to_spin`.
const BEEM: &[&str] = &[
    "!(!(u_get || u_reg) U ua_not) && G(u_unreg -> !(!(u_get || u_reg) U ua_not))",
    "F elected",
    "G (loss3 -> F (nak3))",
    "G (one0 -> F eat0)",
    "G (wait0 -> F (cs0) )",
    "G( dataout1 -> ( zero_time && ( ok_time U datain1) ) )",
    "G((!cs0) -> F cs0)",
    "G(cc_cdo -> F(cc_ci || cc_unco))",
    "G(cc_co -> F(cc_cdo || cc_na))",
    "G(in_elevator0 ->(F out0))",
    "G(waiting0 ->(F in_elevator0))",
    "GF eat0",
    "GF someoneeats",
    "GF someoneincs",
];

/// More formulas, in Spin's syntax: every operator Spin knows (`X` is not compiled into
/// Debian's Spin), nested in each other, with up to four atoms.
const MORE: &[&str] = &[
    "true",
    "false",
    "p",
    "!p",
    "p U q",
    "p V q",
    "[] p",
    "<> p",
    "[]<> p",
    "<>[] p",
    "!(p U q)",
    "!(p V q)",
    "[](p -> <> q)",
    "(p U q) U r",
    "p U (q U r)",
    "(p V q) V r",
    "p V (q V r)",
    "(p U q) V r",
    "p V (q U r)",
    "[](p -> (q U r))",
    "<>(p && [] !p)",
    "([]<> p) -> ([]<> q)",
    "([]<> p) && ([]<> q)",
    "(<>[] p) || (<>[] q)",
    "[](p || q)",
    "(<> p) && (<> !p)",
    "[](p -> <>(q && <> r))",
    "(p U q) || ([] p)",
    "<>(p U q)",
    "[](p U q)",
    "p U ([] q)",
    "([] p) U q",
    "(<> p) U ([] q)",
    "[]<>(p && !q)",
    "<>[](p -> q)",
    "p <-> q",
    "[](p <-> <> q)",
    "[]((p && !q) -> (!q U r))",
    "[](p -> [] q)",
    "<>(p && <>(q && <> r))",
    "([](p -> <> q)) && ([](q -> <> r))",
    "(!([]<> p)) || ([]<> q)",
    "(p && q) U (r || !p)",
    "([]<> p) -> (<>(q V r))",
    "[] !(p && q)",
    "<>[] !(p || q)",
    "p U (q && ([] r))",
    "(p || q) V (!r && p)",
    "([](a -> <> b)) && ([](c -> <> d))",
    "((<> p) U q) V ([] r)",
    "!(<>(p && (!q U r)))",
    "([]<> a) && ([]<> b) && ([]<> c)",
    "[](a -> ((b U c) || ([] d)))",
];

/// A BEEM formula in Spin's syntax: `G`, `F` (also run together, `GF`) become `[]`, `<>`.
fn to_spin(f: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if !word.is_empty() && word.chars().all(|c| matches!(c, 'G' | 'F')) {
            for c in word.chars() {
                out.push_str(if c == 'G' { "[]" } else { "<>" });
            }
            out.push(' ');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in f.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A guard of a never claim: Spin prints `(p)`, `! ((p))`, `&&`, `||`, `1`, `true`,
/// `false`.
#[derive(Debug)]
enum Guard {
    Const(bool),
    Atom(usize),
    Not(Box<Guard>),
    And(Box<Guard>, Box<Guard>),
    Or(Box<Guard>, Box<Guard>),
}

impl Guard {
    fn eval(&self, letter: u32) -> bool {
        match self {
            Guard::Const(b) => *b,
            Guard::Atom(a) => (letter >> a) & 1 == 1,
            Guard::Not(g) => !g.eval(letter),
            Guard::And(a, b) => a.eval(letter) && b.eval(letter),
            Guard::Or(a, b) => a.eval(letter) || b.eval(letter),
        }
    }
}

struct GuardParser<'a> {
    toks: Vec<String>,
    pos: usize,
    atoms: &'a HashMap<String, usize>,
}

impl GuardParser<'_> {
    fn new<'a>(src: &str, atoms: &'a HashMap<String, usize>) -> GuardParser<'a> {
        let mut toks = Vec::new();
        let b = src.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if c.is_ascii_alphanumeric() || c == b'_' {
                let s = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                toks.push(src[s..i].to_string());
            } else if src[i..].starts_with("&&") || src[i..].starts_with("||") {
                toks.push(src[i..i + 2].to_string());
                i += 2;
            } else {
                toks.push((c as char).to_string());
                i += 1;
            }
        }
        GuardParser {
            toks,
            pos: 0,
            atoms,
        }
    }
    fn peek(&self) -> &str {
        self.toks.get(self.pos).map_or("", |s| s.as_str())
    }
    fn or(&mut self) -> Guard {
        let mut a = self.and();
        while self.peek() == "||" {
            self.pos += 1;
            a = Guard::Or(Box::new(a), Box::new(self.and()));
        }
        a
    }
    fn and(&mut self) -> Guard {
        let mut a = self.unary();
        while self.peek() == "&&" {
            self.pos += 1;
            a = Guard::And(Box::new(a), Box::new(self.unary()));
        }
        a
    }
    fn unary(&mut self) -> Guard {
        let t = self.peek().to_string();
        self.pos += 1;
        match t.as_str() {
            "!" => Guard::Not(Box::new(self.unary())),
            "(" => {
                let g = self.or();
                assert_eq!(self.peek(), ")", "a guard's parentheses: {:?}", self.toks);
                self.pos += 1;
                g
            }
            "1" | "true" => Guard::Const(true),
            "0" | "false" => Guard::Const(false),
            name => Guard::Atom(
                *self
                    .atoms
                    .get(name)
                    .unwrap_or_else(|| panic!("Spin's claim names an unknown atom `{name}`")),
            ),
        }
    }
}

/// An automaton as a table: `succ[q][letter]` lists the states `q` moves to reading
/// `letter` (a bit set of atoms); state 0 is initial.
struct Table {
    succ: Vec<Vec<Vec<usize>>>,
    accepting: Vec<bool>,
}

fn table_of_fencer(b: &Buchi, letters: u32) -> Table {
    let mut succ = vec![vec![Vec::new(); letters as usize]; b.states];
    for t in &b.transitions {
        for l in 0..letters {
            if t.guard.iter().all(|&(a, v)| ((l >> a) & 1 == 1) == v) {
                succ[t.from][l as usize].push(t.to);
            }
        }
    }
    Table {
        succ,
        accepting: b.accepting.clone(),
    }
}

/// Spin's never claim as a table. A claim's states are its labelled blocks (several labels
/// may name one block); `atomic { (g) -> assert(!(g)) }` and a block that is only `skip`
/// end the claim, which Spin counts as a match of every continuation: both lead to a final
/// state, accepting, that loops on every letter. A label starting with `accept` makes its
/// block accepting.
fn table_of_spin(claim: &str, atoms: &HashMap<String, usize>, letters: u32) -> Table {
    let body = claim
        .split_once('{')
        .expect("never {")
        .1
        .rsplit_once('}')
        .expect("}")
        .0;
    // Blocks: (labels, lines).
    let mut blocks: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for line in body.lines() {
        let line = match line.find("/*") {
            Some(k) => &line[..k],
            None => line,
        }
        .trim();
        if line.is_empty() {
            continue;
        }
        if let Some(label) = line.strip_suffix(':') {
            match blocks.last_mut() {
                Some((labels, lines)) if lines.is_empty() => labels.push(label.to_string()),
                _ => blocks.push((vec![label.to_string()], Vec::new())),
            }
        } else {
            blocks
                .last_mut()
                .expect("a statement before any label")
                .1
                .push(line.to_string());
        }
    }
    let end = blocks.len();
    let index: HashMap<&str, usize> = blocks
        .iter()
        .enumerate()
        .flat_map(|(i, (ls, _))| ls.iter().map(move |l| (l.as_str(), i)))
        .collect();
    let mut edges: Vec<Vec<(Guard, usize)>> = (0..=end).map(|_| Vec::new()).collect();
    edges[end].push((Guard::Const(true), end));
    let mut accepting = vec![false; end + 1];
    accepting[end] = true;
    for (i, (labels, lines)) in blocks.iter().enumerate() {
        accepting[i] = labels.iter().any(|l| l.starts_with("accept"));
        for line in lines {
            match line.as_str() {
                "do" | "if" | "od;" | "fi;" | "od" | "fi" | "false;" | "false" => {}
                "skip" | "skip;" => edges[i].push((Guard::Const(true), end)),
                _ => {
                    let opt = line
                        .strip_prefix("::")
                        .unwrap_or_else(|| panic!("unexpected line in a never claim: {line}"))
                        .trim();
                    if let Some(a) = opt.strip_prefix("atomic {") {
                        let g = a.split_once("-> assert").expect("atomic { g -> assert }").0;
                        edges[i].push((GuardParser::new(g, atoms).or(), end));
                    } else {
                        let (g, to) = opt.rsplit_once("-> goto").expect("g -> goto L");
                        let to = index[to.trim()];
                        edges[i].push((GuardParser::new(g, atoms).or(), to));
                    }
                }
            }
        }
    }
    // The initial block is the first (`T0_init` or `accept_init`).
    let succ = edges
        .iter()
        .map(|es| {
            (0..letters)
                .map(|l| {
                    es.iter()
                        .filter(|(g, _)| g.eval(l))
                        .map(|(_, t)| *t)
                        .collect()
                })
                .collect()
        })
        .collect();
    Table { succ, accepting }
}

/// Whether the automaton accepts `prefix (cycle)^ω`: some accepting node of the product of
/// the automaton with the lasso's positions lies on a cycle (Tarjan's components of the
/// reachable product, iteratively).
fn accepts(t: &Table, prefix: &[u32], cycle: &[u32]) -> bool {
    let n = prefix.len() + cycle.len();
    let letter = |i: usize| {
        if i < prefix.len() {
            prefix[i]
        } else {
            cycle[i - prefix.len()]
        }
    };
    let after = |i: usize| if i + 1 < n { i + 1 } else { prefix.len() };
    let id = |q: usize, i: usize| q * n + i;
    let succ = |v: usize| -> &[usize] { &t.succ[v / n][letter(v % n) as usize] };
    let total = t.succ.len() * n;
    let mut index = vec![u32::MAX; total];
    let mut low = vec![0u32; total];
    let mut on = vec![false; total];
    let mut stack = Vec::new();
    let mut next = 0u32;
    // Frames: (node, next successor); successors of node v at position i are at i's
    // successor position.
    let mut call: Vec<(usize, usize)> = Vec::new();
    let root = id(0, 0);
    index[root] = next;
    low[root] = next;
    next += 1;
    stack.push(root);
    on[root] = true;
    call.push((root, 0));
    while let Some(&mut (v, ref mut k)) = call.last_mut() {
        let i = v % n;
        let out = succ(v);
        if *k < out.len() {
            let w = id(out[*k], after(i));
            *k += 1;
            if index[w] == u32::MAX {
                index[w] = next;
                low[w] = next;
                next += 1;
                stack.push(w);
                on[w] = true;
                call.push((w, 0));
            } else if on[w] {
                low[v] = low[v].min(index[w]);
            }
            continue;
        }
        call.pop();
        if let Some(&(p, _)) = call.last() {
            low[p] = low[p].min(low[v]);
        }
        if low[v] == index[v] {
            let k = stack.iter().rposition(|&x| x == v).expect("on the stack");
            let comp = stack.split_off(k);
            for &x in &comp {
                on[x] = false;
            }
            let cyclic = comp.len() > 1 || succ(v).iter().any(|&r| id(r, after(i)) == v);
            if cyclic && comp.iter().any(|&x| t.accepting[x / n]) {
                return true;
            }
        }
    }
    false
}

fn spin_claim(formula: &str) -> String {
    let out = Command::new("spin")
        .arg("-f")
        .arg(formula)
        .output()
        .expect("spin runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && text.contains("never"),
        "spin -f '{formula}' failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

#[test]
fn translation_agrees_with_spin_on_random_lassos() {
    if Command::new("spin").arg("-V").output().is_err() {
        eprintln!("skipped: `spin` is not on PATH (apt-get install spin)");
        return;
    }
    let lassos: usize = std::env::var("FENCER_LASSOS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let formulas: Vec<String> = BEEM
        .iter()
        .map(|f| to_spin(f))
        .chain(MORE.iter().map(|f| f.to_string()))
        .collect();
    let mut wrong = Vec::new();
    let mut checked = 0usize;
    for src in &formulas {
        let f = parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let atoms: HashMap<String, usize> = f
            .atoms
            .iter()
            .enumerate()
            .map(|(i, a)| (a.clone(), i))
            .collect();
        let letters = 1u32 << f.atoms.len();
        let negated = format!("!({src})");
        let pairs = [
            (
                table_of_fencer(&translate(&f.ltl), letters),
                table_of_spin(&spin_claim(src), &atoms, letters),
                src.as_str(),
            ),
            (
                table_of_fencer(&negation(&f.ltl), letters),
                table_of_spin(&spin_claim(&negated), &atoms, letters),
                negated.as_str(),
            ),
        ];
        for _ in 0..lassos {
            let pl = rnd(5) as usize;
            let cl = 1 + rnd(4) as usize;
            let prefix: Vec<u32> = (0..pl).map(|_| rnd(letters as u64) as u32).collect();
            let cycle: Vec<u32> = (0..cl).map(|_| rnd(letters as u64) as u32).collect();
            let mut verdicts = [false; 2];
            for (k, (ours, spins, text)) in pairs.iter().enumerate() {
                let (a, b) = (
                    accepts(ours, &prefix, &cycle),
                    accepts(spins, &prefix, &cycle),
                );
                verdicts[k] = a;
                if a != b && wrong.len() < 20 {
                    wrong.push(format!(
                        "{text}: fencer {a}, spin {b} on {prefix:?} ({cycle:?})^ω (atoms {:?})",
                        f.atoms
                    ));
                }
            }
            // A word is in the language of the formula or of its negation, never both.
            if verdicts[0] == verdicts[1] && wrong.len() < 20 {
                wrong.push(format!(
                    "{src}: fencer's automata of it and of its negation both say {} on {prefix:?} ({cycle:?})^ω",
                    verdicts[0]
                ));
            }
            checked += 1;
        }
    }
    eprintln!(
        "{} formulas, {checked} lassos, each against the automata of the formula and its negation",
        formulas.len()
    );
    assert!(formulas.len() >= BEEM.len() + 30);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn never_claims_are_read_as_spin_means_them() {
    // Hand-checked readings of the claim shapes Spin prints, so that a misreading of the
    // claims cannot make the cross-check vacuous.
    if Command::new("spin").arg("-V").output().is_err() {
        eprintln!("skipped: `spin` is not on PATH (apt-get install spin)");
        return;
    }
    let atoms: HashMap<String, usize> = [("p".to_string(), 0), ("q".to_string(), 1)].into();
    let (p, q, none) = (1u32, 2u32, 0u32);
    let t = |f: &str| table_of_spin(&spin_claim(f), &atoms, 4);
    // `p U q` ends the claim (atomic/assert) on q.
    let until = t("p U q");
    assert!(accepts(&until, &[p, p, q], &[none]));
    assert!(!accepts(&until, &[p, none, q], &[q]));
    assert!(!accepts(&until, &[], &[p]));
    // `[]<> p`: accept labels and gotos.
    let gf = t("[]<> p");
    assert!(accepts(&gf, &[none], &[none, p]));
    assert!(!accepts(&gf, &[p, p], &[none]));
    // `false` and `true`.
    assert!(!accepts(&t("false"), &[], &[p | q]));
    assert!(accepts(&t("true"), &[], &[none]));
    // The BEEM conversion.
    assert_eq!(to_spin("GF eat0").replace(' ', ""), "[]<>eat0");
    assert_eq!(
        to_spin("G(a -> F b)").replace(' ', ""),
        "[](a-><>b)".to_string()
    );
}
