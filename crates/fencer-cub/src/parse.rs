//! The parser: declarations in any order after `number_procs`; formulas with `||` below
//! `&&` below `not`; terms with `+`, `-`, constant factors and `p @ X`.

use crate::ast::*;
use crate::lex::{lex, Tok};
use fencer_text::Diagnostic;

/// Nesting deeper than this is refused, so that no input exhausts the stack.
const MAX_DEPTH: u32 = 64;

struct P<'a> {
    path: &'a str,
    src: &'a str,
    toks: Vec<(Tok, Span)>,
    pos: usize,
    depth: u32,
}

type R<T> = Result<T, Diagnostic>;

pub fn parse(path: &str, src: &str) -> R<File> {
    let toks = lex(path, src)?;
    let mut p = P {
        path,
        src,
        toks,
        pos: 0,
        depth: 0,
    };
    p.file()
}

impl P<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].0
    }
    fn span(&self) -> Span {
        self.toks[self.pos].1
    }
    fn prev_end(&self) -> usize {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].1.end
        }
    }
    fn bump(&mut self) -> (Tok, Span) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn err(&self, expected: &str) -> Diagnostic {
        let found = self.peek().describe();
        Diagnostic::new(
            self.path,
            self.src,
            self.span(),
            format!("expected {expected}, found {found}"),
            format!("expected {expected}"),
        )
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    fn is_kw(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Lower(x) if x == s)
    }
    fn sym(&mut self, s: &str) -> R<Span> {
        if self.is_sym(s) {
            Ok(self.bump().1)
        } else {
            Err(self.err(&format!("`{s}`")))
        }
    }
    fn eat(&mut self, s: &str) -> bool {
        if self.is_sym(s) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn lower(&mut self, what: &str) -> R<(String, Span)> {
        match self.peek().clone() {
            Tok::Lower(s) if !KEYWORDS.contains(&s.as_str()) => Ok((s, self.bump().1)),
            _ => Err(self.err(what)),
        }
    }
    fn upper(&mut self, what: &str) -> R<(String, Span)> {
        match self.peek().clone() {
            Tok::Upper(s) => Ok((s, self.bump().1)),
            _ => Err(self.err(what)),
        }
    }
    fn from(&self, start: usize) -> Span {
        Span {
            start,
            end: self.prev_end().max(start),
        }
    }
    fn deeper(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::new(
                self.path,
                self.src,
                self.span(),
                format!("nesting deeper than {MAX_DEPTH} levels"),
                "too deep",
            ));
        }
        Ok(())
    }

    fn file(&mut self) -> R<File> {
        let mut f = File {
            number_procs: None,
            types: Vec::new(),
            globals: Vec::new(),
            inits: Vec::new(),
            invariants: Vec::new(),
            unsafes: Vec::new(),
            predicates: Vec::new(),
            transitions: Vec::new(),
        };
        if self.is_kw("number_procs") {
            self.bump();
            match *self.peek() {
                Tok::Int(n) if (1..=16).contains(&n) => {
                    let s = self.bump().1;
                    f.number_procs = Some((n as u32, s));
                }
                _ => return Err(self.err("a number of processes from 1 to 16")),
            }
        }
        loop {
            let start = self.span().start;
            let kw = match self.peek() {
                Tok::Eof => break,
                Tok::Lower(k) => k.clone(),
                _ => return Err(self.err(DECL)),
            };
            match kw.as_str() {
                "type" => {
                    self.bump();
                    let (name, _) = self.lower("a type name (lower case)")?;
                    let mut constructors = Vec::new();
                    if self.eat("=") {
                        self.eat("|");
                        loop {
                            constructors.push(self.upper("a constructor (capitalised)")?);
                            if !self.eat("|") {
                                break;
                            }
                        }
                    }
                    f.types.push(TypeDecl {
                        name,
                        constructors,
                        span: self.from(start),
                    });
                }
                "weak" | "var" | "array" | "const" => {
                    self.bump();
                    let weak = kw == "weak";
                    let kind_kw = if weak {
                        match self.peek().clone() {
                            Tok::Lower(k) if k == "var" || k == "array" => {
                                self.bump();
                                k
                            }
                            _ => return Err(self.err("`var` or `array` after `weak`")),
                        }
                    } else {
                        kw.clone()
                    };
                    let (name, _) = self.upper("a variable name (capitalised)")?;
                    let mut arity = 0u8;
                    if self.is_sym("[") {
                        if kind_kw == "var" {
                            return Err(self.err("`:` (a `var` has no index; declare an `array`)"));
                        }
                        self.bump();
                        loop {
                            match self.peek() {
                                Tok::Lower(s) if s == "proc" => {
                                    self.bump();
                                }
                                _ => {
                                    return Err(self.err("`proc` (arrays are indexed by processes)"))
                                }
                            }
                            arity += 1;
                            if arity > 4 {
                                return Err(self.err("`]` (at most 4 indices)"));
                            }
                            if !self.eat(",") {
                                break;
                            }
                        }
                        self.sym("]")?;
                    } else if kind_kw == "array" {
                        return Err(self.err("`[proc]` after an array's name"));
                    }
                    self.sym(":")?;
                    let sort =
                        self.lower("a type (`bool`, `int`, `real`, `proc` or a declared type)")?;
                    f.globals.push(GlobalDecl {
                        name,
                        kind: match kind_kw.as_str() {
                            "var" => GlobalKind::Var,
                            "array" => GlobalKind::Array,
                            _ => GlobalKind::Const,
                        },
                        weak,
                        arity,
                        sort,
                        span: self.from(start),
                    });
                }
                "init" | "invariant" | "unsafe" => {
                    self.bump();
                    let vars = self.var_list()?;
                    self.sym("{")?;
                    let body = self.formula()?;
                    self.sym("}")?;
                    let q = Quant {
                        vars,
                        body,
                        span: self.from(start),
                    };
                    match kw.as_str() {
                        "init" => f.inits.push(q),
                        "invariant" => f.invariants.push(q),
                        _ => f.unsafes.push(q),
                    }
                }
                "predicate" => {
                    self.bump();
                    let (name, _) = self.lower("a predicate name")?;
                    let params = self.var_list()?;
                    self.sym("{")?;
                    let body = self.formula()?;
                    self.sym("}")?;
                    f.predicates.push(Predicate {
                        name,
                        params,
                        body,
                        span: self.from(start),
                    });
                }
                "transition" => {
                    self.bump();
                    let (name, _) = self.lower("a transition name (lower case)")?;
                    self.sym("(")?;
                    let mut params = Vec::new();
                    while !self.is_sym(")") {
                        if self.eat("[") {
                            let (p, s) = self.lower("a process variable")?;
                            self.sym("]")?;
                            params.push((p, true, s));
                        } else {
                            let (p, s) = self.lower("a process variable or `)`")?;
                            params.push((p, false, s));
                        }
                        self.eat(",");
                    }
                    self.sym(")")?;
                    let requires = if self.is_kw("requires") {
                        self.bump();
                        self.sym("{")?;
                        let g = self.formula()?;
                        self.sym("}")?;
                        Some(g)
                    } else {
                        None
                    };
                    self.sym("{")?;
                    let mut actions = Vec::new();
                    while !self.is_sym("}") {
                        actions.push(self.action()?);
                        if !self.eat(";") && !self.is_sym("}") {
                            return Err(self.err("`;` or `}` after an assignment"));
                        }
                    }
                    self.sym("}")?;
                    f.transitions.push(TransitionDecl {
                        name,
                        params,
                        requires,
                        actions,
                        span: self.from(start),
                    });
                }
                "number_procs" => {
                    return Err(Diagnostic::new(
                        self.path,
                        self.src,
                        self.span(),
                        "`number_procs` must come first, before every declaration",
                        "too late",
                    ))
                }
                _ => return Err(self.err(DECL)),
            }
        }
        Ok(f)
    }

    fn var_list(&mut self) -> R<Vec<(String, Span)>> {
        self.sym("(")?;
        let mut vars = Vec::new();
        while !self.is_sym(")") {
            vars.push(self.lower("a process variable or `)`")?);
            self.eat(",");
        }
        self.sym(")")?;
        Ok(vars)
    }

    fn action(&mut self) -> R<Action> {
        let start = self.span().start;
        let (target, _) = self.upper("an assignment `X := ...` or `}`")?;
        let mut index = Vec::new();
        if self.eat("[") {
            loop {
                index.push(self.proc_arg()?);
                if !self.eat(",") {
                    break;
                }
            }
            self.sym("]")?;
        }
        self.sym(":=")?;
        let rhs = self.rhs()?;
        Ok(Action {
            target,
            index,
            rhs,
            span: self.from(start),
        })
    }

    fn rhs(&mut self) -> R<Rhs> {
        if self.is_sym(".") {
            return Ok(Rhs::Nondet(self.bump().1));
        }
        if self.is_kw("case") {
            self.bump();
            let mut branches = Vec::new();
            while self.eat("|") {
                let cond = if self.eat("_") {
                    None
                } else {
                    Some(self.formula()?)
                };
                self.sym(":")?;
                let v = if self.is_sym(".") {
                    Rhs::Nondet(self.bump().1)
                } else {
                    Rhs::Expr(self.term()?)
                };
                let last = cond.is_none();
                branches.push((cond, v));
                if last {
                    break;
                }
            }
            if branches.is_empty() {
                return Err(self.err("`|` starting a case branch"));
            }
            return Ok(Rhs::Case(branches));
        }
        Ok(Rhs::Expr(self.term()?))
    }

    fn proc_arg(&mut self) -> R<ProcArg> {
        match self.peek().clone() {
            Tok::ProcConst(k) => Ok(ProcArg::Const(k, self.bump().1)),
            _ => {
                let (v, s) = self.lower("a process variable or `#k`")?;
                Ok(ProcArg::Var(v, s))
            }
        }
    }

    pub fn formula(&mut self) -> R<Expr> {
        self.deeper()?;
        let start = self.span().start;
        let mut v = vec![self.conj()?];
        while self.eat("||") {
            v.push(self.conj()?);
        }
        self.depth -= 1;
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Expr::Or(v, self.from(start))
        })
    }

    fn conj(&mut self) -> R<Expr> {
        let start = self.span().start;
        let mut v = vec![self.unary()?];
        while self.eat("&&") {
            v.push(self.unary()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Expr::And(v, self.from(start))
        })
    }

    fn unary(&mut self) -> R<Expr> {
        let start = self.span().start;
        if self.is_kw("not") {
            self.bump();
            self.deeper()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e), self.from(start)));
        }
        if self.is_kw("forall_other") {
            self.bump();
            let (v, _) = self.lower("the other process's variable")?;
            self.sym(".")?;
            let body = self.formula()?;
            return Ok(Expr::ForallOther(v, Box::new(body), self.from(start)));
        }
        if self.is_kw("fence") {
            self.bump();
            self.sym("(")?;
            self.sym(")")?;
            return Ok(Expr::Fence(self.from(start)));
        }
        if self.is_sym("(") {
            self.bump();
            let f = self.formula()?;
            self.sym(")")?;
            return Ok(f);
        }
        if let (Tok::Lower(name), Tok::Sym("(")) = (self.peek().clone(), self.peek_at(1).clone()) {
            if !KEYWORDS.contains(&name.as_str()) {
                self.bump();
                self.bump();
                let mut args = Vec::new();
                while !self.is_sym(")") {
                    args.push(self.proc_arg()?);
                    self.eat(",");
                }
                self.sym(")")?;
                return Ok(Expr::Call(name, args, self.from(start)));
            }
        }
        let lhs = self.term()?;
        let op = match self.peek() {
            Tok::Sym("=") => CmpOp::Eq,
            Tok::Sym("<>") => CmpOp::Ne,
            Tok::Sym("<") => CmpOp::Lt,
            Tok::Sym("<=") => CmpOp::Le,
            Tok::Sym(">") => CmpOp::Gt,
            Tok::Sym(">=") => CmpOp::Ge,
            _ => {
                if let Expr::Upper(n, _) = &lhs {
                    if n == "True" || n == "False" {
                        return Ok(lhs);
                    }
                }
                return Err(self.err("a comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`)"));
            }
        };
        self.bump();
        let rhs = self.term()?;
        Ok(Expr::Cmp(
            Box::new(lhs),
            op,
            Box::new(rhs),
            self.from(start),
        ))
    }

    pub fn term(&mut self) -> R<Expr> {
        let start = self.span().start;
        let mut e = self.factor()?;
        loop {
            if self.eat("+") {
                let r = self.factor()?;
                e = Expr::Add(Box::new(e), Box::new(r), self.from(start));
            } else if self.eat("-") {
                let r = self.factor()?;
                e = Expr::Sub(Box::new(e), Box::new(r), self.from(start));
            } else {
                return Ok(e);
            }
        }
    }

    fn factor(&mut self) -> R<Expr> {
        let start = self.span().start;
        if self.eat("-") {
            self.deeper()?;
            let e = self.factor()?;
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(e), self.from(start)));
        }
        if let Tok::Int(n) = *self.peek() {
            self.bump();
            if self.eat("*") {
                self.deeper()?;
                let e = self.factor()?;
                self.depth -= 1;
                return Ok(Expr::Mul(n, Box::new(e), self.from(start)));
            }
            return Ok(Expr::Int(n, self.from(start)));
        }
        if let Tok::Real(n) = *self.peek() {
            self.bump();
            return Ok(Expr::Real(n, self.from(start)));
        }
        if self.is_sym("(") {
            self.bump();
            self.deeper()?;
            let e = self.term()?;
            self.depth -= 1;
            self.sym(")")?;
            return Ok(e);
        }
        match self.peek().clone() {
            Tok::ProcConst(k) => {
                let s = self.bump().1;
                if self.is_sym("@") {
                    return self.at(ProcArg::Const(k, s), start);
                }
                Ok(Expr::ProcConst(k, s))
            }
            Tok::Upper(name) => {
                self.bump();
                if self.eat("[") {
                    let mut idx = Vec::new();
                    loop {
                        idx.push(self.proc_arg()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.sym("]")?;
                    return Ok(Expr::Index(name, idx, self.from(start)));
                }
                Ok(Expr::Upper(name, self.from(start)))
            }
            Tok::Lower(name) if !KEYWORDS.contains(&name.as_str()) => {
                let s = self.bump().1;
                if self.is_sym("@") {
                    return self.at(ProcArg::Var(name, s), start);
                }
                Ok(Expr::Lower(name, s))
            }
            _ => Err(self.err("a term (a variable, a constructor, a number or a process)")),
        }
    }

    fn at(&mut self, p: ProcArg, start: usize) -> R<Expr> {
        self.sym("@")?;
        self.deeper()?;
        let e = self.factor()?;
        self.depth -= 1;
        Ok(Expr::At(p, Box::new(e), self.from(start)))
    }
}

const DECL: &str = "a declaration (`type`, `var`, `array`, `const`, `weak`, `init`, `invariant`, `unsafe`, `predicate` or `transition`)";

const KEYWORDS: &[&str] = &[
    "type",
    "var",
    "array",
    "const",
    "weak",
    "init",
    "invariant",
    "unsafe",
    "transition",
    "requires",
    "forall_other",
    "case",
    "predicate",
    "number_procs",
    "not",
    "fence",
];
