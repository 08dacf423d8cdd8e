//! herd7's C litmus dialect (`C NAME`): threads are C functions over pointers to the
//! test's locations, using C11 atomics. Lowered to the axiomatic engine's program, with
//! the events and annotations herd7's C semantics gives them: an atomic access carries
//! its memory order (`RLX`, `ACQ`, `REL`, `ACQ_REL`, `SC`, `CON`) and is in `A`; a plain
//! access, a fence and an initial write are in `NA`; a read-modify-write is one event,
//! both read and write, in `RMW` and `X`. Each statement is one instruction instance.

use crate::answer::Tally;
use crate::parse::{parse_init, parse_tail, Cond, Quant, Var};
use fencer_axiomatic::{self as ax, BinOp, Expr, Ins, Observable, UpdateOp, Val};
use fencer_text::ast::Span;
use fencer_text::Diagnostic;

/// A C litmus test, lowered.
pub struct CLitmus {
    pub name: String,
    pub program: ax::Program,
    pub quant: Quant,
    pub cond: Cond,
    pub filter: Option<Cond>,
    /// The variables final states are shown over, in herd7's order; the program's
    /// observables start with them (the filter's follow).
    pub vars: Vec<Var>,
    /// The condition as herd7 prints it: `exists ([x]=1 /\ 1:r1=0)`.
    pub condition: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Ident(String),
    Punct(&'static str),
}

const PUNCTS: [&str; 27] = [
    "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "(", ")", "{", "}", "[", "]", ";", ",", "*",
    "&", "=", "!", "<", ">", "+", "-", "/", "%", "^",
];

struct P<'a> {
    file: &'a str,
    src: &'a str,
    toks: Vec<(Tok, Span)>,
    pos: usize,
    /// Where the condition clauses start (lexing stops there, outside braces).
    tail: usize,
}

#[derive(Clone, Debug)]
enum E {
    Int(i64),
    Name(String, Span),
    Deref(Box<E>),
    AddrOf(Span),
    Not(Box<E>),
    Neg(Box<E>),
    Bin(BinOp, Box<E>, Box<E>),
    Call(String, Vec<E>, Span),
}

#[derive(Clone, Debug)]
enum S {
    Block(Vec<S>),
    If(E, Box<S>, Option<Box<S>>),
    While(E, Box<S>),
    /// `x = e;` or a declaration `int x = e;` (`None`: declared only).
    Assign(String, Option<E>),
    Store(E, E),
    Expr(E),
}

const TYPE_WORDS: [&str; 14] = [
    "int",
    "atomic_int",
    "volatile",
    "const",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "_Atomic",
    "intptr_t",
    "atomic_intptr_t",
    "int32_t",
    "int64_t",
];

impl<'a> P<'a> {
    fn lex(file: &'a str, src: &'a str, start: usize, end: usize) -> Result<Self, Diagnostic> {
        let b = src.as_bytes();
        let mut toks = Vec::new();
        let mut i = start;
        let mut depth = 0i32;
        let mut tail = end;
        while i < end {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if depth == 0 {
                let word_end = src[i..end]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                    .map_or(end, |k| i + k);
                if c == b'~'
                    || matches!(
                        &src[i..word_end],
                        "exists" | "forall" | "locations" | "filter"
                    )
                {
                    tail = i;
                    break;
                }
            }
            if src[i..end].starts_with("//") {
                while i < end && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            let s = i;
            if c.is_ascii_digit() {
                while i < end && b[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let t = &src[s..i];
                let v = if let Some(h) = t.strip_prefix("0x") {
                    i64::from_str_radix(h, 16).ok()
                } else {
                    t.parse().ok()
                };
                let Some(v) = v else {
                    return Err(Diagnostic::new(
                        file,
                        src,
                        Span { start: s, end: i },
                        format!("expected an integer, found `{t}`"),
                        "not an integer",
                    ));
                };
                toks.push((Tok::Int(v), Span { start: s, end: i }));
                continue;
            }
            if c.is_ascii_alphabetic() || c == b'_' {
                while i < end && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                toks.push((Tok::Ident(src[s..i].to_string()), Span { start: s, end: i }));
                continue;
            }
            match PUNCTS.iter().find(|p| src[i..end].starts_with(**p)) {
                Some(p) => {
                    i += p.len();
                    match *p {
                        "{" => depth += 1,
                        "}" => depth -= 1,
                        _ => {}
                    }
                    toks.push((Tok::Punct(p), Span { start: s, end: i }));
                }
                None => {
                    let ch = src[i..].chars().next().unwrap_or('?');
                    return Err(Diagnostic::new(
                        file,
                        src,
                        Span {
                            start: i,
                            end: i + ch.len_utf8(),
                        },
                        format!("unexpected character `{ch}` in C code"),
                        "not part of herd7's C subset",
                    ));
                }
            }
        }
        Ok(P {
            file,
            src,
            toks,
            pos: 0,
            tail,
        })
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or_else(|| {
            let e = self.toks.last().map(|t| t.1.end).unwrap_or(0);
            Span { start: e, end: e }
        })
    }

    fn err(&self, expected: &str) -> Diagnostic {
        let found = match self.toks.get(self.pos) {
            Some((Tok::Int(v), _)) => format!("`{v}`"),
            Some((Tok::Ident(s), _)) => format!("`{s}`"),
            Some((Tok::Punct(p), _)) => format!("`{p}`"),
            None => "the end of the thread".into(),
        };
        Diagnostic::new(
            self.file,
            self.src,
            self.span(),
            format!("expected {expected}, found {found}"),
            format!("expected {expected}"),
        )
    }

    fn peek_punct(&self, p: &str) -> bool {
        matches!(self.toks.get(self.pos), Some((Tok::Punct(q), _)) if *q == p)
    }

    fn peek_ident(&self) -> Option<&str> {
        match self.toks.get(self.pos) {
            Some((Tok::Ident(s), _)) => Some(s),
            _ => None,
        }
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.peek_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), Diagnostic> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(&format!("`{p}`")))
        }
    }

    fn ident(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match self.toks.get(self.pos) {
            Some((Tok::Ident(s), sp)) => {
                let r = (s.clone(), *sp);
                self.pos += 1;
                Ok(r)
            }
            _ => Err(self.err(what)),
        }
    }

    /// Skips a type (`volatile int*`, `atomic_int *`); whether one was there.
    fn ty(&mut self) -> bool {
        let mut any = false;
        while let Some(w) = self.peek_ident() {
            if TYPE_WORDS.contains(&w) {
                self.pos += 1;
                any = true;
            } else {
                break;
            }
        }
        if any {
            while self.eat("*") {}
        }
        any
    }

    fn stmt(&mut self) -> Result<S, Diagnostic> {
        if self.eat("{") {
            let mut v = Vec::new();
            while !self.eat("}") {
                if self.pos >= self.toks.len() {
                    return Err(self.err("`}`"));
                }
                v.push(self.stmt()?);
            }
            return Ok(S::Block(v));
        }
        if let Some(w) = self.peek_ident() {
            match w {
                "if" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    let t = self.stmt()?;
                    let e = if self.peek_ident() == Some("else") {
                        self.pos += 1;
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(S::If(c, Box::new(t), e));
                }
                "while" => {
                    self.pos += 1;
                    self.expect("(")?;
                    let c = self.expr()?;
                    self.expect(")")?;
                    let body = self.stmt()?;
                    return Ok(S::While(c, Box::new(body)));
                }
                "for" | "do" | "goto" | "return" | "switch" => {
                    let sp = self.span();
                    return Err(Diagnostic::new(
                        self.file,
                        self.src,
                        sp,
                        format!("`{w}` is not supported in C litmus tests"),
                        "not supported",
                    )
                    .with_help("loops are written `while (...) ...` in herd7's C"));
                }
                _ => {}
            }
        }
        if self.ty() {
            let (name, _) = self.ident("a variable name")?;
            let init = if self.eat("=") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect(";")?;
            return Ok(S::Assign(name, init));
        }
        if self.eat("*") {
            let target = self.unary()?;
            self.expect("=")?;
            let v = self.expr()?;
            self.expect(";")?;
            return Ok(S::Store(target, v));
        }
        if let (Some(Tok::Ident(_)), Some(Tok::Punct("="))) = (
            self.toks.get(self.pos).map(|t| &t.0),
            self.toks.get(self.pos + 1).map(|t| &t.0),
        ) {
            let (name, _) = self.ident("a variable")?;
            self.pos += 1;
            let v = self.expr()?;
            self.expect(";")?;
            return Ok(S::Assign(name, Some(v)));
        }
        let e = self.expr()?;
        self.expect(";")?;
        Ok(S::Expr(e))
    }

    fn expr(&mut self) -> Result<E, Diagnostic> {
        self.binary(0)
    }

    fn binary(&mut self, min: u8) -> Result<E, Diagnostic> {
        let mut lhs = self.unary()?;
        while let Some((Tok::Punct(p), _)) = self.toks.get(self.pos) {
            let (prec, op) = match *p {
                "||" => (1, BinOp::LOr),
                "&&" => (2, BinOp::LAnd),
                "|" => (3, BinOp::Or),
                "^" => (4, BinOp::Xor),
                "&" => (5, BinOp::And),
                "==" => (6, BinOp::Eq),
                "!=" => (6, BinOp::Ne),
                "<" => (7, BinOp::Lt),
                "<=" => (7, BinOp::Le),
                ">" => (7, BinOp::Gt),
                ">=" => (7, BinOp::Ge),
                "<<" => (8, BinOp::Shl),
                ">>" => (8, BinOp::Shr),
                "+" => (9, BinOp::Add),
                "-" => (9, BinOp::Sub),
                "*" => (10, BinOp::Mul),
                "/" => (10, BinOp::Div),
                "%" => (10, BinOp::Rem),
                _ => break,
            };
            if prec < min {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = E::Bin(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<E, Diagnostic> {
        let sp = self.span();
        if self.eat("*") {
            return Ok(E::Deref(Box::new(self.unary()?)));
        }
        if self.eat("&") {
            self.unary()?;
            return Ok(E::AddrOf(sp));
        }
        if self.eat("!") {
            return Ok(E::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(E::Neg(Box::new(self.unary()?)));
        }
        if self.eat("(") {
            // A cast `(int) e` or a parenthesised expression.
            if self.ty() {
                self.expect(")")?;
                return self.unary();
            }
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        match self.toks.get(self.pos).cloned() {
            Some((Tok::Int(v), _)) => {
                self.pos += 1;
                Ok(E::Int(v))
            }
            Some((Tok::Ident(name), sp)) => {
                self.pos += 1;
                if self.eat("(") {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.expr()?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    Ok(E::Call(name, args, sp))
                } else {
                    Ok(E::Name(name, sp))
                }
            }
            _ => Err(self.err("an expression")),
        }
    }
}

/// How many times herd7 runs a loop's body before it cuts the path (its `-unroll`
/// default).
const UNROLL: usize = 2;

/// Lowers one thread.
struct Lower<'a> {
    file: &'a str,
    src: &'a str,
    locs: &'a mut Vec<ax::Location>,
    regs: Vec<String>,
    code: Vec<Ins>,
    temps: u32,
}

fn mo_tag(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory_order_relaxed" => "RLX",
        "memory_order_acquire" => "ACQ",
        "memory_order_release" => "REL",
        "memory_order_acq_rel" => "ACQ_REL",
        "memory_order_seq_cst" => "SC",
        "memory_order_consume" => "CON",
        _ => return None,
    })
}

fn tags(ts: &[&str]) -> Vec<String> {
    ts.iter().map(|s| s.to_string()).collect()
}

impl Lower<'_> {
    fn err(&self, sp: Span, msg: String, label: &str) -> Diagnostic {
        Diagnostic::new(self.file, self.src, sp, msg, label)
    }

    fn reg(&mut self, name: &str) -> u32 {
        match self.regs.iter().position(|r| r == name) {
            Some(i) => i as u32,
            None => {
                self.regs.push(name.to_string());
                (self.regs.len() - 1) as u32
            }
        }
    }

    fn temp(&mut self) -> u32 {
        self.temps += 1;
        let n = format!("%t{}", self.temps);
        self.reg(&n)
    }

    fn mo(&self, e: &E) -> Result<&'static str, Diagnostic> {
        match e {
            E::Name(n, sp) => mo_tag(n).ok_or_else(|| {
                self.err(
                    *sp,
                    format!("expected a memory order (`memory_order_relaxed`, ...), found `{n}`"),
                    "not a memory order",
                )
            }),
            _ => Err(self.err(
                Span { start: 0, end: 0 },
                "expected a memory order".into(),
                "here",
            )),
        }
    }

    fn stmt(&mut self, s: &S) -> Result<(), Diagnostic> {
        match s {
            S::Block(v) => {
                for s in v {
                    self.stmt(s)?;
                }
            }
            S::If(c, t, e) => {
                self.code.push(Ins::Instance);
                let c = self.expr(c)?;
                let br = self.code.len();
                self.code.push(Ins::Branch {
                    cond: Expr::Not(Box::new(c)),
                    target: 0,
                });
                self.stmt(t)?;
                match e {
                    None => {
                        let end = self.code.len();
                        self.patch(br, end);
                    }
                    Some(e) => {
                        let j = self.code.len();
                        self.code.push(Ins::Jump(0));
                        let else_at = self.code.len();
                        self.patch(br, else_at);
                        self.stmt(e)?;
                        let end = self.code.len();
                        self.code[j] = Ins::Jump(end);
                    }
                }
            }
            S::While(c, body) => {
                // herd7's unrolling: the body runs at most `UNROLL` times; a condition still
                // true after that ends the path with a cut-off (`Loop` in the answer).
                let mut exits = Vec::new();
                for n in 0..=UNROLL {
                    self.code.push(Ins::Instance);
                    let c = self.expr(c)?;
                    exits.push(self.code.len());
                    self.code.push(Ins::Branch {
                        cond: Expr::Not(Box::new(c)),
                        target: 0,
                    });
                    if n == UNROLL {
                        self.code.push(Ins::CutOff);
                    } else {
                        self.stmt(body)?;
                    }
                }
                let end = self.code.len();
                for at in exits {
                    self.patch(at, end);
                }
            }
            S::Assign(name, init) => {
                let r = self.reg(name);
                if let Some(e) = init {
                    self.code.push(Ins::Instance);
                    let v = self.expr(e)?;
                    self.code.push(Ins::Set { dst: r, expr: v });
                }
            }
            S::Store(target, v) => {
                self.code.push(Ins::Instance);
                let a = self.expr(target)?;
                let v = self.expr(v)?;
                self.code.push(Ins::Write {
                    addr: a,
                    value: v,
                    tags: tags(&["NA"]),
                });
            }
            S::Expr(e) => {
                self.code.push(Ins::Instance);
                self.expr(e)?;
            }
        }
        Ok(())
    }

    fn patch(&mut self, at: usize, to: usize) {
        if let Ins::Branch { target, .. } = &mut self.code[at] {
            *target = to;
        }
    }

    fn read(&mut self, addr: Expr, t: Vec<String>) -> Expr {
        let r = self.temp();
        self.code.push(Ins::Read {
            dst: Some(r),
            addr,
            tags: t,
        });
        Expr::Reg(r)
    }

    fn expr(&mut self, e: &E) -> Result<Expr, Diagnostic> {
        Ok(match e {
            E::Int(v) => Expr::int(*v),
            E::Name(n, sp) => match self.regs.iter().position(|r| r == n) {
                Some(r) => Expr::Reg(r as u32),
                None => {
                    return Err(self.err(
                        *sp,
                        format!("`{n}` is not a parameter or a variable of this thread"),
                        "unknown name",
                    ))
                }
            },
            E::Deref(a) => {
                let a = self.expr(a)?;
                self.read(a, tags(&["NA"]))
            }
            E::AddrOf(sp) => {
                return Err(self.err(
                    *sp,
                    "`&` is not supported: pass locations as the thread's parameters".into(),
                    "not supported",
                ))
            }
            E::Not(a) => Expr::Not(Box::new(self.expr(a)?)),
            E::Neg(a) => Expr::Neg(Box::new(self.expr(a)?)),
            E::Bin(op, a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                Expr::bin(*op, a, b)
            }
            E::Call(f, args, sp) => self.call(f, args, *sp)?,
        })
    }

    fn arity(&self, f: &str, args: &[E], n: usize, sp: Span) -> Result<(), Diagnostic> {
        if args.len() != n {
            return Err(self.err(
                sp,
                format!("`{f}` takes {n} arguments, found {}", args.len()),
                "wrong number of arguments",
            ));
        }
        Ok(())
    }

    fn call(&mut self, f: &str, args: &[E], sp: Span) -> Result<Expr, Diagnostic> {
        let explicit = f.ends_with("_explicit");
        let base = f.trim_end_matches("_explicit");
        let fetch = |b: &str| -> Option<BinOp> {
            Some(match b {
                "atomic_fetch_add" => BinOp::Add,
                "atomic_fetch_sub" => BinOp::Sub,
                "atomic_fetch_and" => BinOp::And,
                "atomic_fetch_or" => BinOp::Or,
                "atomic_fetch_xor" => BinOp::Xor,
                _ => return None,
            })
        };
        // herd7's C has only the `_explicit` forms of these (and both forms of the
        // compare-exchanges): refuse the others as it does, saying what to write.
        if !explicit
            && (matches!(base, "atomic_load" | "atomic_store" | "atomic_exchange")
                || fetch(base).is_some())
        {
            return Err(self
                .err(
                    sp,
                    format!("`{f}` is not in herd7's C litmus language"),
                    "only the `_explicit` form is",
                )
                .with_help(format!(
                    "write `{f}_explicit(..., memory_order_seq_cst)`, which is what `{f}` means"
                )));
        }
        // The memory orders: the explicit forms name them, the compare-exchanges without
        // them are seq_cst.
        let nargs = |k: usize| if explicit { k } else { 0 };
        match base {
            "atomic_load" => {
                self.arity(f, args, 1 + nargs(1), sp)?;
                let mo = if explicit { self.mo(&args[1])? } else { "SC" };
                let a = self.expr(&args[0])?;
                Ok(self.read(a, tags(&[mo, "A"])))
            }
            "atomic_store" => {
                self.arity(f, args, 2 + nargs(1), sp)?;
                let mo = if explicit { self.mo(&args[2])? } else { "SC" };
                let a = self.expr(&args[0])?;
                let v = self.expr(&args[1])?;
                self.code.push(Ins::Write {
                    addr: a,
                    value: v.clone(),
                    tags: tags(&[mo, "A"]),
                });
                Ok(v)
            }
            "atomic_thread_fence" => {
                self.arity(f, args, 1, sp)?;
                let mo = self.mo(&args[0])?;
                self.code.push(Ins::Fence {
                    tags: tags(&[mo, "NA"]),
                });
                Ok(Expr::int(0))
            }
            "atomic_exchange" => {
                self.arity(f, args, 2 + nargs(1), sp)?;
                let mo = if explicit { self.mo(&args[2])? } else { "SC" };
                let a = self.expr(&args[0])?;
                let v = self.expr(&args[1])?;
                let r = self.temp();
                self.code.push(Ins::Update {
                    dst: Some(r),
                    addr: a,
                    expected: None,
                    op: UpdateOp::Set(v),
                    tags: tags(&[mo, "A", "X", "RMW"]),
                });
                Ok(Expr::Reg(r))
            }
            b if fetch(b).is_some() => {
                self.arity(f, args, 2 + nargs(1), sp)?;
                let mo = if explicit { self.mo(&args[2])? } else { "SC" };
                let a = self.expr(&args[0])?;
                let v = self.expr(&args[1])?;
                let r = self.temp();
                self.code.push(Ins::Update {
                    dst: Some(r),
                    addr: a,
                    expected: None,
                    op: UpdateOp::Apply(fetch(b).expect("a fetch"), v),
                    tags: tags(&[mo, "A", "X", "RMW"]),
                });
                Ok(Expr::Reg(r))
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                self.arity(f, args, 3 + nargs(2), sp)?;
                let strong = base.ends_with("strong");
                let (ok_mo, fail_mo) = if explicit {
                    (self.mo(&args[3])?, self.mo(&args[4])?)
                } else {
                    ("SC", "SC")
                };
                let obj = self.expr(&args[0])?;
                let exp = self.expr(&args[1])?;
                let des = self.expr(&args[2])?;
                // herd7: read `*expected` plainly; then either the update succeeds
                // (one RMW event that read that value), or the object is read with the
                // failure order and its value is written back to `*expected`.
                let expected = self.read(exp.clone(), tags(&["NA"]));
                let res = self.temp();
                let choice = self.code.len();
                self.code.push(Ins::Choice(0));
                self.code.push(Ins::Update {
                    dst: None,
                    addr: obj.clone(),
                    expected: Some(expected.clone()),
                    op: UpdateOp::Set(des),
                    tags: tags(&[ok_mo, "A", "X", "RMW"]),
                });
                self.code.push(Ins::Set {
                    dst: res,
                    expr: Expr::int(1),
                });
                let jump = self.code.len();
                self.code.push(Ins::Jump(0));
                let fail_at = self.code.len();
                self.code[choice] = Ins::Choice(fail_at);
                let seen = self.read(obj, tags(&[fail_mo, "A"]));
                if strong {
                    self.code
                        .push(Ins::Assume(Expr::bin(BinOp::Ne, seen.clone(), expected)));
                }
                self.code.push(Ins::Write {
                    addr: exp,
                    value: seen,
                    tags: tags(&["NA"]),
                });
                self.code.push(Ins::Set {
                    dst: res,
                    expr: Expr::int(0),
                });
                let end = self.code.len();
                self.code[jump] = Ins::Jump(end);
                Ok(Expr::Reg(res))
            }
            _ => Err(self
                .err(
                    sp,
                    format!("`{f}` is not supported in C litmus tests"),
                    "unknown function",
                )
                .with_help(
                    "supported: atomic_load_explicit, atomic_store_explicit, \
                     atomic_exchange_explicit, atomic_fetch_{add,sub,and,or,xor}_explicit, \
                     atomic_compare_exchange_{strong,weak}[_explicit], atomic_thread_fence",
                )),
        }
    }
}

fn loc_id(locs: &mut Vec<ax::Location>, name: &str) -> u32 {
    match locs.iter().position(|l| l.name == name) {
        Some(i) => i as u32,
        None => {
            locs.push(ax::Location {
                name: name.to_string(),
                init: Val::Int(0),
            });
            (locs.len() - 1) as u32
        }
    }
}

/// Parses and lowers a C litmus test.
pub fn parse_c_litmus(file: &str, original: &str) -> Result<CLitmus, Diagnostic> {
    // C's comments are `//` and `/* */` (the lexer skips them): `(*b)` is code here.
    let text = strip_c_comments(original);
    let src = text.as_str();
    let diag = |s: usize, e: usize, msg: String, label: &str| {
        Diagnostic::new(file, original, Span { start: s, end: e }, msg, label)
    };
    let hs = src.len() - src.trim_start().len();
    let he = hs + src[hs..].find('\n').unwrap_or(src.len() - hs);
    let mut words = src[hs..he].split_whitespace();
    if words.next() != Some("C") {
        return Err(diag(hs, he, "expected a header `C NAME`".into(), "header"));
    }
    let Some(name) = words.next().map(str::to_string) else {
        return Err(diag(
            he,
            he,
            "expected the test's name after `C`".into(),
            "name missing",
        ));
    };
    // The init block: the first `{` after the header (a doc string may come first).
    let mut at = he;
    let rest = &src[he..];
    if let Some(q) = rest.trim_start().strip_prefix('"') {
        let from = src.len() - q.len();
        match src[from..].find('"') {
            Some(c) => at = from + c + 1,
            None => {
                return Err(diag(
                    from - 1,
                    from,
                    "unterminated doc string".into(),
                    "here",
                ))
            }
        }
    }
    let Some(open) = src[at..].find('{').map(|i| at + i) else {
        return Err(diag(
            at,
            at,
            "expected the init block `{ ... }`".into(),
            "missing",
        ));
    };
    let Some(close) = src[open..].find('}').map(|i| open + i) else {
        return Err(diag(
            open,
            open + 1,
            "unterminated init block: expected `}`".into(),
            "here",
        ));
    };
    let init = parse_init(file, src, open + 1, close)?;
    let mut locs: Vec<ax::Location> = Vec::new();
    let mut reg_inits: Vec<(u32, String, i64, Span)> = Vec::new();
    for (v, k, sp) in &init {
        match v {
            Var::Loc(x) => {
                let l = loc_id(&mut locs, x);
                locs[l as usize].init = Val::Int(*k);
            }
            Var::Reg { thread, name } => reg_inits.push((*thread, name.clone(), *k, *sp)),
        }
    }
    // Threads: `Pn (params) { body }`, up to the condition clauses.
    let mut p = P::lex(file, src, close + 1, src.len())?;
    let tail_at = p.tail;
    let mut threads = Vec::new();
    while p.pos < p.toks.len() {
        let (tname, tsp) = p.ident("a thread `P0 (...) { ... }`")?;
        if tname != format!("P{}", threads.len()) {
            return Err(diag(
                tsp.start,
                tsp.end,
                format!(
                    "expected the thread name `P{}`, found `{tname}`",
                    threads.len()
                ),
                "threads are named P0, P1, ... in order",
            ));
        }
        p.expect("(")?;
        let mut params = Vec::new();
        if !p.eat(")") {
            loop {
                if !p.ty() {
                    return Err(p.err("a parameter type (`atomic_int*`, `int*`, ...)"));
                }
                params.push(p.ident("a parameter name")?);
                if p.eat(")") {
                    break;
                }
                p.expect(",")?;
            }
        }
        if !p.peek_punct("{") {
            return Err(p.err("`{`"));
        }
        let body = p.stmt()?;
        threads.push((tname, params, body));
    }
    if threads.is_empty() {
        return Err(diag(
            close,
            close + 1,
            "expected threads `P0 (...) { ... }`".into(),
            "none",
        ));
    }
    let (quant, cond, _, locations, filter) = parse_tail(file, src, original, tail_at, false)?;
    let mut ths = Vec::new();
    for (t, (tname, params, body)) in threads.iter().enumerate() {
        let mut lw = Lower {
            file,
            src: original,
            locs: &mut locs,
            regs: Vec::new(),
            code: Vec::new(),
            temps: 0,
        };
        let mut tinit = Vec::new();
        for (pname, _) in params {
            let r = lw.reg(pname);
            let l = loc_id(lw.locs, pname);
            tinit.push((r, Val::Loc(l)));
        }
        lw.stmt(body)?;
        for (th, rname, k, _) in &reg_inits {
            if *th as usize == t {
                let r = lw.reg(rname);
                tinit.push((r, Val::Int(*k)));
            }
        }
        ths.push(ax::Thread {
            name: tname.clone(),
            regs: lw.regs,
            init: tinit,
            code: lw.code,
        });
    }
    // What final states show: the condition's and `locations`'s variables, registers
    // first (by thread, then name), then locations by name, as herd7 prints them.
    let mut vars: Vec<(Var, Span)> = Vec::new();
    let push = |v: &Var, sp: Span, vars: &mut Vec<(Var, Span)>| {
        if !vars.iter().any(|(w, _)| w == v) {
            vars.push((v.clone(), sp));
        }
    };
    collect(&cond, &mut |v, sp| push(v, sp, &mut vars));
    for (v, sp) in &locations {
        push(v, *sp, &mut vars);
    }
    let key = |v: &Var| match v {
        Var::Reg { thread, name } => (0, *thread, name.clone()),
        Var::Loc(x) => (1, 0, x.clone()),
    };
    vars.sort_by_key(|(v, _)| key(v));
    let mut observe = vars.clone();
    if let Some(f) = &filter {
        collect(f, &mut |v, sp| push(v, sp, &mut observe));
    }
    let mut observables = Vec::new();
    for (v, sp) in &observe {
        observables.push(match v {
            Var::Loc(x) => Observable::Loc(loc_id(&mut locs, x)),
            Var::Reg { thread, name } => {
                let t = *thread as usize;
                let reg = ths
                    .get(t)
                    .and_then(|th| th.regs.iter().position(|r| r == name));
                match reg {
                    Some(r) => Observable::Reg {
                        thread: t,
                        reg: r as u32,
                    },
                    None => {
                        return Err(diag(
                            sp.start,
                            sp.end,
                            format!("`{t}:{name}`: thread {t} has no variable `{name}`"),
                            "unknown register",
                        ))
                    }
                }
            }
        });
    }
    let q = match quant {
        Quant::Exists => "exists",
        Quant::NotExists => "~exists",
        Quant::Forall => "forall",
    };
    let condition = format!("{q} ({})", crate::lower::show(&cond));
    Ok(CLitmus {
        name: name.clone(),
        program: ax::Program {
            name,
            locations: locs,
            threads: ths,
            init_tags: tags(&["NA"]),
            // herd7's C sets (CAction's `arch_sets`).
            arch_sets: tags(&[
                "X", "RMW", "LK", "LKR", "LKW", "LS", "LF", "UL", "RL", "RU", "ACQ", "SC", "REL",
                "ACQ_REL", "RLX", "CON", "A", "NA", "annot",
            ]),
            observables,
        },
        quant,
        cond,
        filter,
        vars: vars.into_iter().map(|(v, _)| v).collect(),
        condition,
    })
}

fn collect(c: &Cond, f: &mut dyn FnMut(&Var, Span)) {
    match c {
        Cond::True | Cond::False => {}
        Cond::Eq(v, _, sp) => f(v, *sp),
        Cond::Not(a) => collect(a, f),
        Cond::And(v) | Cond::Or(v) => v.iter().for_each(|c| collect(c, f)),
    }
}

/// The value of a condition over a final state (`value` gives a variable's).
fn holds(c: &Cond, value: &dyn Fn(&Var) -> Val) -> bool {
    match c {
        Cond::True => true,
        Cond::False => false,
        Cond::Eq(v, k, _) => value(v) == Val::Int(*k),
        Cond::Not(a) => !holds(a, value),
        Cond::And(v) => v.iter().all(|c| holds(c, value)),
        Cond::Or(v) => v.iter().any(|c| holds(c, value)),
    }
}

impl CLitmus {
    /// herd7's answer from the engine's: states, witnesses, flags, observation.
    pub fn answer(&self, a: &ax::Answer, model: &str) -> Result<crate::Answer, String> {
        let mut observe: Vec<Var> = self.vars.clone();
        if let Some(f) = &self.filter {
            collect(f, &mut |v, _| {
                if !observe.contains(v) {
                    observe.push(v.clone());
                }
            });
        }
        let mut states = std::collections::BTreeSet::new();
        let (mut positive, mut negative) = (0, 0);
        let mut flags = std::collections::BTreeSet::new();
        for (st, info) in &a.states {
            let value = |v: &Var| st[observe.iter().position(|w| w == v).expect("observed")];
            if let Some(f) = &self.filter {
                if !holds(f, &value) {
                    continue;
                }
            }
            let mut row = Vec::new();
            for v in &st[..self.vars.len()] {
                match v {
                    Val::Int(k) => row.push(*k),
                    Val::Loc(_) => {
                        return Err("final states that hold an address are not supported".into())
                    }
                }
            }
            states.insert(row);
            if holds(&self.cond, &value) {
                positive += info.executions;
            } else {
                negative += info.executions;
            }
            flags.extend(info.flags.keys().cloned());
        }
        Ok(crate::Answer::tally(
            &self.name,
            model,
            self.quant,
            self.vars
                .iter()
                .map(|v| match v {
                    Var::Reg { thread, name } => format!("{thread}:{name}"),
                    Var::Loc(x) => format!("[{x}]"),
                })
                .collect(),
            Tally {
                states,
                positive,
                negative,
                flags,
            },
            self.condition.clone(),
            a.consistent,
            a.elapsed.as_millis() as u64,
            a.stopped,
        ))
        .map(|mut answer| {
            answer.loop_cut = a.cut;
            answer
        })
    }
}

/// Replaces `/* ... */` and `// ...` comments by spaces, keeping offsets and newlines.
fn strip_c_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let end = if b[i..].starts_with(b"/*") {
            src[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2)
        } else if b[i..].starts_with(b"//") {
            src[i..].find('\n').map_or(b.len(), |k| i + k)
        } else {
            out.push(b[i]);
            i += 1;
            continue;
        };
        out.extend(
            b[i..end]
                .iter()
                .map(|&c| if c == b'\n' { b'\n' } else { b' ' }),
        );
        i = end;
    }
    // Only ASCII bytes were replaced, by ASCII: still UTF-8.
    String::from_utf8(out).expect("UTF-8")
}
