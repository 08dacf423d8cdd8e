//! Lexer and parser for cat files, following herd's `modelLexer.mll` and `modelParser.mly`.
//!
//! The grammar is herd's LR grammar with its precedence declarations; this is a
//! precedence-climbing parser that takes the same shift/reduce decisions, including the
//! syntax errors that `%nonassoc` gives (`a * b *`, `~a*`).

use crate::ast::*;

/// A parse error: where, what was expected, and a short label for the caret.
#[derive(Debug)]
pub(crate) struct SynErr {
    pub sp: Sp,
    pub msg: String,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Var(String),
    Tag(String),
    Str(String),
    Kw(&'static str),
    LPar,
    RPar,
    LAcc,
    RAcc,
    LBrac,
    RBrac,
    Underscore,
    Zero,
    Union,
    Alt,
    Inter,
    LAnd,
    Star,
    Comp,
    Plus,
    PlusPlus,
    Hat,
    Inv,
    Diff,
    Opt,
    Equal,
    Semi,
    Comma,
    Arrow,
    Eof,
}

const KEYWORDS: &[&str] = &[
    "let",
    "rec",
    "and",
    "when",
    "acyclic",
    "irreflexive",
    "show",
    "unshow",
    "empty",
    "subset",
    "as",
    "fun",
    "in",
    "undefined_unless",
    "flag",
    "assert",
    "include",
    "variant",
    "begin",
    "end",
    "procedure",
    "call",
    "enum",
    "debug",
    "match",
    "with",
    "forall",
    "from",
    "do",
    "try",
    "if",
    "then",
    "else",
    "catdep",
    "instructions",
    "default",
    "not",
];

fn describe(t: &Tok) -> String {
    match t {
        Tok::Var(x) => format!("identifier `{x}`"),
        Tok::Tag(x) => format!("tag `'{x}`"),
        Tok::Str(s) => format!("string \"{s}\""),
        Tok::Kw(k) => format!("`{k}`"),
        Tok::Eof => "end of file".to_string(),
        t => format!("`{}`", punct(t)),
    }
}

fn punct(t: &Tok) -> &'static str {
    match t {
        Tok::LPar => "(",
        Tok::RPar => ")",
        Tok::LAcc => "{",
        Tok::RAcc => "}",
        Tok::LBrac => "[",
        Tok::RBrac => "]",
        Tok::Underscore => "_",
        Tok::Zero => "0",
        Tok::Union => "|",
        Tok::Alt => "||",
        Tok::Inter => "&",
        Tok::LAnd => "&&",
        Tok::Star => "*",
        Tok::Comp => "~",
        Tok::Plus => "+",
        Tok::PlusPlus => "++",
        Tok::Hat => "^",
        Tok::Inv => "-1",
        Tok::Diff => "\\",
        Tok::Opt => "?",
        Tok::Equal => "=",
        Tok::Semi => ";",
        Tok::Comma => ",",
        Tok::Arrow => "->",
        _ => "?",
    }
}

struct Token {
    tok: Tok,
    start: u32,
    end: u32,
}

fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphabetic()
}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-'
}

/// The length of herd's `name` at `i`: `'_'? alpha (alpha|digit|'_'|'.'|'-')* '\''?`.
fn name_len(b: &[u8], i: usize) -> usize {
    let mut j = i;
    if j < b.len() && b[j] == b'_' {
        j += 1;
    }
    if j >= b.len() || !is_alpha(b[j]) {
        return 0;
    }
    j += 1;
    while j < b.len() && is_name_char(b[j]) {
        j += 1;
    }
    if j < b.len() && b[j] == b'\'' {
        j += 1;
    }
    j - i
}

fn lex(file: u32, src: &str) -> Result<Vec<Token>, SynErr> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let sp = |s: usize, e: usize| Sp {
        file,
        start: s as u32,
        end: e as u32,
    };
    while i < b.len() {
        let c = b[i];
        let start = i;
        let two = if i + 1 < b.len() { b[i + 1] } else { 0 };
        let tok = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if two == b'/' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'(' if two == b'*' => {
                // Comments nest, as in herd.
                let mut depth = 1;
                i += 2;
                while depth > 0 {
                    if i >= b.len() {
                        return Err(SynErr {
                            sp: sp(start, start + 2),
                            msg: "unterminated comment: expected `*)` before the end of file"
                                .into(),
                            label: "comment starts here".into(),
                        });
                    }
                    if b[i] == b'(' && i + 1 < b.len() && b[i + 1] == b'*' {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && i + 1 < b.len() && b[i + 1] == b')' {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += 1;
                }
                if j >= b.len() {
                    return Err(SynErr {
                        sp: sp(start, start + 1),
                        msg: "unterminated string: expected a closing `\"`".into(),
                        label: "string starts here".into(),
                    });
                }
                let s = src[i + 1..j].to_string();
                i = j + 1;
                Tok::Str(s)
            }
            b'\'' => {
                let l = name_len(b, i + 1);
                if l == 0 {
                    return Err(SynErr {
                        sp: sp(start, start + 1),
                        msg: "expected a tag name after `'`".into(),
                        label: "here".into(),
                    });
                }
                let s = src[i + 1..i + 1 + l].to_string();
                i += 1 + l;
                Tok::Tag(s)
            }
            _ if name_len(b, i) > 0 => {
                let l = name_len(b, i);
                let s = &src[i..i + l];
                i += l;
                match KEYWORDS.iter().find(|k| **k == s) {
                    Some(k) => Tok::Kw(k),
                    None => Tok::Var(s.to_string()),
                }
            }
            _ => {
                let (t, l) = match (c, two) {
                    (b'(', _) => (Tok::LPar, 1),
                    (b')', _) => (Tok::RPar, 1),
                    (b'{', _) => (Tok::LAcc, 1),
                    (b'}', _) => (Tok::RAcc, 1),
                    (b'[', _) => (Tok::LBrac, 1),
                    (b']', _) => (Tok::RBrac, 1),
                    (b'_', _) => (Tok::Underscore, 1),
                    (b'0', _) => (Tok::Zero, 1),
                    (b'|', b'|') => (Tok::Alt, 2),
                    (b'|', _) => (Tok::Union, 1),
                    (b'&', b'&') => (Tok::LAnd, 2),
                    (b'&', _) => (Tok::Inter, 1),
                    (b'*', _) => (Tok::Star, 1),
                    (b'~', _) => (Tok::Comp, 1),
                    (b'+', b'+') => (Tok::PlusPlus, 2),
                    (b'+', _) => (Tok::Plus, 1),
                    (b'^', _) => (Tok::Hat, 1),
                    (b'-', b'1') => (Tok::Inv, 2),
                    (b'-', b'>') => (Tok::Arrow, 2),
                    (b'\\', _) => (Tok::Diff, 1),
                    (b'?', _) => (Tok::Opt, 1),
                    (b'=', _) => (Tok::Equal, 1),
                    (b';', _) => (Tok::Semi, 1),
                    (b',', _) => (Tok::Comma, 1),
                    _ => {
                        let ch = src[i..].chars().next().unwrap_or('?');
                        return Err(SynErr {
                            sp: sp(start, start + ch.len_utf8()),
                            msg: format!("unexpected character `{ch}`: expected a cat token"),
                            label: "not a cat token".into(),
                        });
                    }
                };
                i += l;
                t
            }
        };
        out.push(Token {
            tok,
            start: start as u32,
            end: i as u32,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        start: b.len() as u32,
        end: b.len() as u32,
    });
    Ok(out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Assoc {
    Left,
    Right,
    Non,
}

pub(crate) struct Parser {
    file: u32,
    toks: Vec<Token>,
    pos: usize,
}

type R<T> = Result<T, SynErr>;

/// Whether two texts are the same cat tokens (whatever the blanks and comments).
pub(crate) fn same_tokens(a: &str, b: &str) -> bool {
    match (lex(0, a), lex(0, b)) {
        (Ok(x), Ok(y)) => x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| p.tok == q.tok),
        _ => false,
    }
}

/// Parses a whole cat file.
pub(crate) fn parse_file(file: u32, src: &str) -> R<File> {
    let toks = lex(file, src)?;
    let mut p = Parser { file, toks, pos: 0 };
    p.main()
}

fn starts_simple(t: &Tok) -> bool {
    matches!(
        t,
        Tok::Zero
            | Tok::Tag(_)
            | Tok::LAcc
            | Tok::Underscore
            | Tok::LPar
            | Tok::Kw("begin")
            | Tok::LBrac
    )
}

fn starts_arg(t: &Tok) -> bool {
    matches!(t, Tok::Var(_)) || starts_simple(t)
}

fn starts_ins(t: &Tok) -> bool {
    matches!(
        t,
        Tok::Comp
            | Tok::Kw(
                "let"
                    | "match"
                    | "acyclic"
                    | "irreflexive"
                    | "empty"
                    | "undefined_unless"
                    | "flag"
                    | "assert"
                    | "show"
                    | "unshow"
                    | "include"
                    | "procedure"
                    | "call"
                    | "debug"
                    | "forall"
                    | "with"
                    | "if"
                    | "instructions"
                    | "default"
            )
    )
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek2(&self) -> &Tok {
        &self.toks[(self.pos + 1).min(self.toks.len() - 1)].tok
    }

    fn sp_here(&self) -> Sp {
        let t = &self.toks[self.pos];
        Sp {
            file: self.file,
            start: t.start,
            end: t.end,
        }
    }

    /// The span from the token at `from` to the last consumed token.
    fn sp_from(&self, from: usize) -> Sp {
        let s = &self.toks[from];
        let e = &self.toks[self.pos.saturating_sub(1).max(from)];
        Sp {
            file: self.file,
            start: s.start,
            end: e.end.max(s.start),
        }
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].tok.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn err<T>(&self, expected: &str) -> R<T> {
        Err(SynErr {
            sp: self.sp_here(),
            msg: format!("expected {expected}, found {}", describe(self.peek())),
            label: format!("expected {expected}"),
        })
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &Tok) -> R<()> {
        if self.eat(t) {
            Ok(())
        } else {
            self.err(&describe(t))
        }
    }

    fn kw(&mut self, k: &'static str) -> bool {
        self.eat(&Tok::Kw(k))
    }

    fn expect_kw(&mut self, k: &'static str) -> R<()> {
        if self.kw(k) {
            Ok(())
        } else {
            self.err(&format!("`{k}`"))
        }
    }

    fn var(&mut self, what: &str) -> R<(String, Sp)> {
        let sp = self.sp_here();
        match self.peek().clone() {
            Tok::Var(x) => {
                self.bump();
                Ok((x, sp))
            }
            _ => self.err(what),
        }
    }

    fn main(&mut self) -> R<File> {
        let mut title = Vec::new();
        match self.peek().clone() {
            Tok::Var(x) => {
                self.bump();
                title.push(x);
                if let Tok::Var(y) | Tok::Str(y) = self.peek().clone() {
                    self.bump();
                    title.push(y);
                }
            }
            Tok::Str(s) => {
                self.bump();
                title.push(s);
            }
            _ => {}
        }
        let catdep = self.kw("catdep");
        let mut body = Vec::new();
        loop {
            match self.peek() {
                Tok::Eof => break,
                Tok::Kw("enum") => body.push(self.enum_decl()?),
                t if starts_ins(t) => body.push(self.ins()?),
                _ => return self.err("an instruction (`let`, `include`, a check, ...)"),
            }
        }
        Ok(File {
            title,
            catdep,
            body,
        })
    }

    fn enum_decl(&mut self) -> R<Ins> {
        self.expect_kw("enum")?;
        let (name, _) = self.var("an enumeration name")?;
        self.expect(&Tok::Equal)?;
        self.eat(&Tok::Alt);
        let mut tags = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Tag(t) => {
                    self.bump();
                    tags.push(t);
                }
                _ => return self.err("a tag"),
            }
            if !self.eat(&Tok::Alt) {
                break;
            }
        }
        Ok(Ins::Enum(name, tags))
    }

    fn ins_list(&mut self) -> R<Vec<Ins>> {
        let mut v = Vec::new();
        while starts_ins(self.peek()) {
            v.push(self.ins()?);
        }
        Ok(v)
    }

    fn ins(&mut self) -> R<Ins> {
        let from = self.pos;
        match self.peek().clone() {
            Tok::Kw("let") => {
                self.bump();
                if self.kw("rec") {
                    let bds = self.pat_bind_list()?;
                    let test = if self.kw("when") {
                        Some(self.app_test()?)
                    } else {
                        None
                    };
                    self.kw("in");
                    Ok(Ins::Rec(self.sp_from(from), bds, test))
                } else {
                    let bds = self.pat_bind_list()?;
                    self.kw("in");
                    Ok(Ins::Let(bds))
                }
            }
            Tok::Kw("match") => {
                self.bump();
                let e = self.exp()?;
                self.expect_kw("with")?;
                self.eat(&Tok::Alt);
                let mut cls = Vec::new();
                let mut default = None;
                loop {
                    match self.peek().clone() {
                        Tok::Tag(t) => {
                            self.bump();
                            self.expect(&Tok::Arrow)?;
                            cls.push((t, self.ins_list()?));
                        }
                        Tok::Underscore => {
                            self.bump();
                            self.expect(&Tok::Arrow)?;
                            default = Some(self.ins_list()?);
                            break;
                        }
                        _ => return self.err("a tag or `_`"),
                    }
                    if !self.eat(&Tok::Alt) {
                        break;
                    }
                }
                self.expect_kw("end")?;
                Ok(Ins::Match(self.sp_from(from), e, cls, default))
            }
            Tok::Kw("undefined_unless") => {
                self.bump();
                Ok(Ins::Test(self.app_test()?, TestType::UndefinedUnless))
            }
            Tok::Kw("flag") => {
                self.bump();
                Ok(Ins::Test(self.app_test()?, TestType::Flagged))
            }
            Tok::Kw("assert") => {
                self.bump();
                Ok(Ins::Test(self.app_test()?, TestType::Assert))
            }
            Tok::Kw("acyclic" | "irreflexive" | "empty") | Tok::Comp => {
                Ok(Ins::Test(self.app_test()?, TestType::Check))
            }
            Tok::Kw("show") => {
                self.bump();
                // `show e as x` or `show x, y`: try the first, as the LR parser would.
                let save = self.pos;
                if let Ok(_e) = self.base(0, Assoc::Non) {
                    if self.kw("as") {
                        self.var("a name")?;
                        return Ok(Ins::Show);
                    }
                }
                self.pos = save;
                self.var_list()?;
                Ok(Ins::Show)
            }
            Tok::Kw("unshow") => {
                self.bump();
                self.var_list()?;
                Ok(Ins::Show)
            }
            Tok::Kw("include") => {
                self.bump();
                match self.peek().clone() {
                    Tok::Str(s) => {
                        self.bump();
                        Ok(Ins::Include(self.sp_from(from), s))
                    }
                    _ => self.err("a file name string"),
                }
            }
            Tok::Kw("procedure") => {
                self.bump();
                let is_rec = self.kw("rec");
                let (name, _) = self.var("a procedure name")?;
                let params = if self.eat(&Tok::LPar) {
                    let f = self.formals()?;
                    self.expect(&Tok::RPar)?;
                    tuple_pat(f)
                } else {
                    Pat::Var(self.pat0()?)
                };
                self.expect(&Tok::Equal)?;
                let body = self.ins_list()?;
                self.expect_kw("end")?;
                Ok(Ins::Procedure {
                    name,
                    params,
                    body,
                    is_rec,
                })
            }
            Tok::Kw("call") => {
                self.bump();
                let (name, _) = self.var("a procedure name")?;
                let arg = self.simple()?;
                let tname = if self.kw("as") {
                    Some(self.var("a name")?.0)
                } else {
                    None
                };
                Ok(Ins::Call(self.sp_from(from), name, arg, tname))
            }
            Tok::Kw("debug") => {
                self.bump();
                self.exp()?;
                Ok(Ins::Show)
            }
            Tok::Kw("forall") => {
                self.bump();
                let x = self.var("a variable")?;
                self.expect_kw("in")?;
                let e = self.exp()?;
                self.expect_kw("do")?;
                let body = self.ins_list()?;
                self.expect_kw("end")?;
                Ok(Ins::Forall(x, e, body))
            }
            Tok::Kw("with") => {
                self.bump();
                let x = self.var("a variable")?;
                self.expect_kw("from")?;
                let e = self.exp()?;
                Ok(Ins::WithFrom(x, e))
            }
            Tok::Kw("if") => {
                self.bump();
                let v = self.variant()?;
                let a = self.ins_list()?;
                let b = if self.kw("else") {
                    self.ins_list()?
                } else {
                    Vec::new()
                };
                self.expect_kw("end")?;
                Ok(Ins::IfVariant(v, a, b))
            }
            Tok::Kw("instructions" | "default") => {
                self.bump();
                self.var("an event type")?;
                self.expect(&Tok::LBrac)?;
                self.args(&Tok::RBrac)?;
                self.expect(&Tok::RBrac)?;
                Ok(Ins::Events)
            }
            _ => self.err("an instruction"),
        }
    }

    fn var_list(&mut self) -> R<Vec<String>> {
        let mut v = vec![self.var("a name")?.0];
        while self.eat(&Tok::Comma) {
            v.push(self.var("a name")?.0);
        }
        Ok(v)
    }

    fn app_test(&mut self) -> R<AppTest> {
        let from = self.pos;
        let negated = self.eat(&Tok::Comp);
        let test = match self.peek() {
            Tok::Kw("acyclic") => DoTest::Acyclic,
            Tok::Kw("irreflexive") => DoTest::Irreflexive,
            Tok::Kw("empty") => DoTest::Empty,
            _ => return self.err("`acyclic`, `irreflexive` or `empty`"),
        };
        self.bump();
        let exp = self.exp()?;
        let sp = self.sp_from(from);
        let name = if self.kw("as") {
            Some(self.var("a check name")?.0)
        } else {
            None
        };
        Ok(AppTest {
            sp,
            negated,
            test,
            exp,
            name,
        })
    }

    fn pat0(&mut self) -> R<Pat0> {
        let sp = self.sp_here();
        match self.peek().clone() {
            Tok::Underscore => {
                self.bump();
                Ok(None)
            }
            Tok::Var(x) => {
                self.bump();
                Ok(Some((x, sp)))
            }
            _ => self.err("a variable or `_`"),
        }
    }

    fn formals(&mut self) -> R<Vec<Pat0>> {
        if matches!(self.peek(), Tok::RPar) {
            return Ok(Vec::new());
        }
        self.formals_n()
    }

    fn formals_n(&mut self) -> R<Vec<Pat0>> {
        let mut v = vec![self.pat0()?];
        while self.eat(&Tok::Comma) {
            v.push(self.pat0()?);
        }
        Ok(v)
    }

    fn pat_bind_list(&mut self) -> R<Vec<Binding>> {
        let mut v = vec![self.pat_bind()?];
        while self.kw("and") {
            v.push(self.pat_bind()?);
        }
        Ok(v)
    }

    fn pat_bind(&mut self) -> R<Binding> {
        let from = self.pos;
        match (self.peek().clone(), self.peek2().clone()) {
            (Tok::LPar, _) => {
                self.bump();
                let f = self.formals()?;
                self.expect(&Tok::RPar)?;
                self.expect(&Tok::Equal)?;
                let exp = self.exp()?;
                Ok(Binding {
                    sp: self.sp_from(from),
                    pat: tuple_pat(f),
                    exp,
                })
            }
            (Tok::Var(f), Tok::Var(_) | Tok::Underscore) => {
                self.bump();
                let x = self.pat0()?;
                self.expect(&Tok::Equal)?;
                let body = self.exp()?;
                let sp = self.sp_from(from);
                Ok(Binding {
                    sp,
                    pat: Pat::Var(Some((f.clone(), sp))),
                    exp: Exp::Fun(sp, Pat::Var(x), Box::new(body), f),
                })
            }
            (Tok::Var(f), Tok::LPar) => {
                self.bump();
                self.bump();
                let xs = self.formals()?;
                self.expect(&Tok::RPar)?;
                self.expect(&Tok::Equal)?;
                let body = self.exp()?;
                let sp = self.sp_from(from);
                Ok(Binding {
                    sp,
                    pat: Pat::Var(Some((f.clone(), sp))),
                    exp: Exp::Fun(sp, tuple_pat(xs), Box::new(body), f),
                })
            }
            (Tok::Var(_) | Tok::Underscore, _) => {
                let f = self.formals_n()?;
                self.expect(&Tok::Equal)?;
                let exp = self.exp()?;
                Ok(Binding {
                    sp: self.sp_from(from),
                    pat: tuple_pat(f),
                    exp,
                })
            }
            _ => self.err("a binding (`x = e`, `f(x) = e`, `(x, y) = e`)"),
        }
    }

    fn exp(&mut self) -> R<Exp> {
        let from = self.pos;
        match self.peek().clone() {
            Tok::Kw("let") => {
                self.bump();
                let is_rec = self.kw("rec");
                let bds = self.pat_bind_list()?;
                self.expect_kw("in")?;
                let body = self.exp()?;
                let sp = self.sp_from(from);
                Ok(if is_rec {
                    Exp::BindRec(sp, bds, Box::new(body))
                } else {
                    Exp::Bind(sp, bds, Box::new(body))
                })
            }
            Tok::Kw("fun") => {
                self.bump();
                let pat = if self.eat(&Tok::LPar) {
                    let f = self.formals()?;
                    self.expect(&Tok::RPar)?;
                    tuple_pat(f)
                } else {
                    Pat::Var(self.pat0()?)
                };
                self.expect(&Tok::Arrow)?;
                let body = self.exp()?;
                Ok(Exp::Fun(
                    self.sp_from(from),
                    pat,
                    Box::new(body),
                    "*fun*".to_string(),
                ))
            }
            Tok::Kw("try") => {
                self.bump();
                let a = self.exp()?;
                self.expect_kw("with")?;
                let b = self.exp()?;
                Ok(Exp::Try(self.sp_from(from), Box::new(a), Box::new(b)))
            }
            Tok::Kw("if") => {
                self.bump();
                let c = self.cond()?;
                self.expect_kw("then")?;
                let a = self.exp()?;
                self.expect_kw("else")?;
                let b = self.exp()?;
                Ok(Exp::If(
                    self.sp_from(from),
                    Box::new(c),
                    Box::new(a),
                    Box::new(b),
                ))
            }
            Tok::Kw("match") => self.match_exp(),
            _ => {
                let b = self.base(0, Assoc::Non)?;
                if matches!(self.peek(), Tok::Comma) {
                    let mut es = vec![b];
                    while self.eat(&Tok::Comma) {
                        es.push(self.base(0, Assoc::Non)?);
                    }
                    Ok(Exp::Op(self.sp_from(from), Op2::Tuple, es))
                } else {
                    Ok(b)
                }
            }
        }
    }

    fn match_exp(&mut self) -> R<Exp> {
        let from = self.pos;
        self.expect_kw("match")?;
        let e = self.exp()?;
        self.expect_kw("with")?;
        self.eat(&Tok::Alt);
        let is_tags = match (self.peek(), self.peek2()) {
            (Tok::Tag(_), _) => true,
            (Tok::Underscore, Tok::Arrow) => true,
            (Tok::LAcc, _) | (Tok::Var(_) | Tok::Underscore, _) => false,
            _ => return self.err("a match clause (`'tag ->`, `{} ->` or `x ++ s ->`)"),
        };
        if is_tags {
            let mut cls = Vec::new();
            let mut default = None;
            loop {
                match self.peek().clone() {
                    Tok::Tag(t) => {
                        self.bump();
                        self.expect(&Tok::Arrow)?;
                        cls.push((t, self.exp()?));
                    }
                    Tok::Underscore => {
                        self.bump();
                        self.expect(&Tok::Arrow)?;
                        default = Some(Box::new(self.exp()?));
                        break;
                    }
                    _ => return self.err("a tag or `_`"),
                }
                if !self.eat(&Tok::Alt) {
                    break;
                }
            }
            self.expect_kw("end")?;
            return Ok(Exp::Match(self.sp_from(from), Box::new(e), cls, default));
        }
        let (empty, clause) = if matches!(self.peek(), Tok::LAcc) {
            let empty = self.empty_clause()?;
            self.expect(&Tok::Alt)?;
            (empty, self.element_clause()?)
        } else {
            let clause = self.element_clause()?;
            self.expect(&Tok::Alt)?;
            (self.empty_clause()?, clause)
        };
        self.expect_kw("end")?;
        Ok(Exp::MatchSet(
            self.sp_from(from),
            Box::new(e),
            Box::new(empty),
            clause,
        ))
    }

    fn empty_clause(&mut self) -> R<Exp> {
        self.expect(&Tok::LAcc)?;
        self.expect(&Tok::RAcc)?;
        self.expect(&Tok::Arrow)?;
        self.exp()
    }

    fn element_clause(&mut self) -> R<SetClause> {
        let x = self.pat0()?;
        if self.eat(&Tok::Union) {
            let y = self.pat0()?;
            self.expect(&Tok::PlusPlus)?;
            let z = self.pat0()?;
            self.expect(&Tok::Arrow)?;
            let e = self.exp()?;
            return Ok(SetClause::PreEltPost(x, y, z, Box::new(e)));
        }
        self.expect(&Tok::PlusPlus)?;
        let y = self.pat0()?;
        self.expect(&Tok::Arrow)?;
        let e = self.exp()?;
        Ok(SetClause::EltRem(x, y, Box::new(e)))
    }

    fn cond(&mut self) -> R<Cond> {
        match self.peek() {
            Tok::Str(_) | Tok::Kw("variant" | "not") => return Ok(Cond::Variant(self.variant()?)),
            Tok::LPar => {
                // `(variant)` or `(exp) = ...`: herd's LR parser tells them apart by what
                // follows; try the variant first.
                let save = self.pos;
                if let Ok(v) = self.variant() {
                    if matches!(self.peek(), Tok::Kw("then")) {
                        return Ok(Cond::Variant(v));
                    }
                }
                self.pos = save;
            }
            _ => {}
        }
        let a = self.exp()?;
        let k = match self.peek() {
            Tok::Equal => 0,
            Tok::Kw("subset") => 1,
            Tok::Kw("in") => 2,
            _ => return self.err("`=`, `subset` or `in`"),
        };
        self.bump();
        let b = self.exp()?;
        Ok(match k {
            0 => Cond::Eq(a, b),
            1 => Cond::Subset(a, b),
            _ => Cond::In(a, b),
        })
    }

    fn variant(&mut self) -> R<VariantCond> {
        let mut l = self.variant_and()?;
        while self.eat(&Tok::Alt) {
            let r = self.variant_and()?;
            l = VariantCond::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn variant_and(&mut self) -> R<VariantCond> {
        let mut l = self.variant_atom()?;
        while self.eat(&Tok::LAnd) {
            let r = self.variant_atom()?;
            l = VariantCond::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn variant_atom(&mut self) -> R<VariantCond> {
        let sp = self.sp_here();
        match self.peek().clone() {
            Tok::Kw("variant") => {
                self.bump();
                let sp = self.sp_here();
                match self.peek().clone() {
                    Tok::Str(s) => {
                        self.bump();
                        Ok(VariantCond::Variant(s, sp))
                    }
                    _ => self.err("a variant name string"),
                }
            }
            Tok::Str(s) => {
                self.bump();
                Ok(VariantCond::Variant(s, sp))
            }
            Tok::Kw("not") => {
                self.bump();
                Ok(VariantCond::Not(Box::new(self.variant_atom()?)))
            }
            Tok::LPar => {
                self.bump();
                let v = self.variant()?;
                self.expect(&Tok::RPar)?;
                Ok(v)
            }
            _ => self.err("a variant (a string, `not`, `(`)"),
        }
    }

    fn args(&mut self, close: &Tok) -> R<Vec<Exp>> {
        let mut v = Vec::new();
        if self.peek() == close {
            return Ok(v);
        }
        v.push(self.base(0, Assoc::Non)?);
        while self.eat(&Tok::Comma) {
            v.push(self.base(0, Assoc::Non)?);
        }
        Ok(v)
    }

    fn simple(&mut self) -> R<Exp> {
        let from = self.pos;
        let sp = self.sp_here();
        match self.peek().clone() {
            Tok::Zero => {
                self.bump();
                Ok(Exp::EmptyRel(sp))
            }
            Tok::Tag(t) => {
                self.bump();
                Ok(Exp::Tag(sp, t))
            }
            Tok::Underscore => {
                self.bump();
                Ok(Exp::Universe(sp))
            }
            Tok::LAcc => {
                self.bump();
                let es = self.args(&Tok::RAcc)?;
                self.expect(&Tok::RAcc)?;
                Ok(Exp::ExplicitSet(self.sp_from(from), es))
            }
            Tok::LPar => {
                self.bump();
                if self.eat(&Tok::RPar) {
                    return Ok(Exp::Op(self.sp_from(from), Op2::Tuple, Vec::new()));
                }
                let e = self.exp()?;
                self.expect(&Tok::RPar)?;
                Ok(e)
            }
            Tok::Kw("begin") => {
                self.bump();
                let e = self.exp()?;
                self.expect_kw("end")?;
                Ok(e)
            }
            Tok::LBrac => {
                self.bump();
                let e = self.exp()?;
                self.expect(&Tok::RBrac)?;
                Ok(Exp::Op1(self.sp_from(from), Op1::ToId, Box::new(e)))
            }
            _ => self.err("an expression"),
        }
    }

    /// A `base` expression inside a rule of precedence `prec` and associativity `assoc`
    /// (precedence 0: no enclosing operator).
    fn base(&mut self, prec: u8, assoc: Assoc) -> R<Exp> {
        let from = self.pos;
        let mut lhs = match self.peek().clone() {
            Tok::Comp => {
                self.bump();
                let e = self.base(6, Assoc::Non)?;
                Exp::Op1(self.sp_from(from), Op1::Comp, Box::new(e))
            }
            Tok::Var(x) => {
                let sp = self.sp_here();
                self.bump();
                let mut e = Exp::Var(sp, x);
                while starts_arg(self.peek()) {
                    let arg = if let Tok::Var(y) = self.peek().clone() {
                        let sp = self.sp_here();
                        self.bump();
                        Exp::Var(sp, y)
                    } else {
                        self.simple()?
                    };
                    e = Exp::App(self.sp_from(from), Box::new(e), Box::new(arg));
                }
                e
            }
            _ => self.simple()?,
        };
        loop {
            let (p, a) = match self.peek() {
                Tok::Union => (1, Assoc::Right),
                Tok::PlusPlus => (2, Assoc::Right),
                Tok::Semi => (3, Assoc::Right),
                Tok::Diff => (4, Assoc::Left),
                Tok::Inter => (5, Assoc::Right),
                Tok::Star | Tok::Plus | Tok::Opt => (6, Assoc::Non),
                Tok::Hat => (7, Assoc::Non),
                _ => break,
            };
            if prec > 0 {
                if p < prec {
                    break;
                }
                if p == prec {
                    match assoc {
                        Assoc::Left => break,
                        Assoc::Right => {}
                        Assoc::Non => {
                            return self.err("an operator of another precedence (herd's grammar does not chain this one)");
                        }
                    }
                }
            }
            let op_tok = self.bump();
            lhs = match op_tok {
                Tok::Union | Tok::Semi => {
                    let rhs = self.base(p, a)?;
                    let op = if op_tok == Tok::Union {
                        Op2::Union
                    } else {
                        Op2::Seq
                    };
                    let mut es = as_op(op, lhs);
                    es.extend(as_op(op, rhs));
                    Exp::Op(self.sp_from(from), op, es)
                }
                Tok::PlusPlus | Tok::Diff | Tok::Inter => {
                    let rhs = self.base(p, a)?;
                    let op = match op_tok {
                        Tok::PlusPlus => Op2::Add,
                        Tok::Diff => Op2::Diff,
                        _ => Op2::Inter,
                    };
                    Exp::Op(self.sp_from(from), op, vec![lhs, rhs])
                }
                Tok::Star => {
                    if matches!(self.peek(), Tok::Var(_)) || starts_simple(self.peek()) {
                        let rhs = self.base(6, Assoc::Non)?;
                        Exp::Op(self.sp_from(from), Op2::Cartesian, vec![lhs, rhs])
                    } else if matches!(self.peek(), Tok::Comp) {
                        return self.err("an expression that does not start with `~` (herd's grammar rejects `* ~`)");
                    } else {
                        Exp::Op1(self.sp_from(from), Op1::Star, Box::new(lhs))
                    }
                }
                Tok::Plus => Exp::Op1(self.sp_from(from), Op1::Plus, Box::new(lhs)),
                Tok::Opt => Exp::Op1(self.sp_from(from), Op1::Opt, Box::new(lhs)),
                _ => {
                    self.expect(&Tok::Inv)?;
                    Exp::Op1(self.sp_from(from), Op1::Inv, Box::new(lhs))
                }
            };
        }
        Ok(lhs)
    }
}

fn as_op(op: Op2, e: Exp) -> Vec<Exp> {
    match e {
        Exp::Op(_, o, es) if o == op => es,
        e => vec![e],
    }
}

fn tuple_pat(mut ps: Vec<Pat0>) -> Pat {
    if ps.len() == 1 {
        Pat::Var(ps.pop().unwrap_or(None))
    } else {
        Pat::Tuple(ps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(e: &Exp) -> String {
        match e {
            Exp::EmptyRel(_) => "0".into(),
            Exp::Universe(_) => "_".into(),
            Exp::Tag(_, t) => format!("'{t}"),
            Exp::Var(_, x) => x.clone(),
            Exp::Op1(_, op, e) => format!("{op:?}({})", show(e)),
            Exp::Op(_, op, es) => format!(
                "{op:?}({})",
                es.iter().map(show).collect::<Vec<_>>().join(",")
            ),
            Exp::App(_, f, a) => format!("App({},{})", show(f), show(a)),
            _ => "?".into(),
        }
    }

    fn parse_exp(s: &str) -> String {
        let toks = lex(0, s).unwrap();
        let mut p = Parser {
            file: 0,
            toks,
            pos: 0,
        };
        let e = p.exp().unwrap();
        assert!(matches!(p.peek(), Tok::Eof), "trailing input in {s}");
        show(&e)
    }

    #[test]
    fn precedences() {
        assert_eq!(parse_exp("a | b ; c"), "Union(a,Seq(b,c))");
        assert_eq!(parse_exp("a ; b | c"), "Union(Seq(a,b),c)");
        assert_eq!(parse_exp("a \\ b \\ c"), "Diff(Diff(a,b),c)");
        assert_eq!(parse_exp("a & b & c"), "Inter(a,Inter(b,c))");
        assert_eq!(parse_exp("a * b ; c"), "Seq(Cartesian(a,b),c)");
        assert_eq!(parse_exp("r* ; s"), "Seq(Star(r),s)");
        assert_eq!(parse_exp("r^-1+"), "Plus(Inv(r))");
        assert_eq!(parse_exp("~a | b"), "Union(Comp(a),b)");
        assert_eq!(parse_exp("f x ++ g y"), "Add(App(f,x),App(g,y))");
        assert_eq!(parse_exp("[W]; po-loc; [R]"), "Seq(ToId(W),po-loc,ToId(R))");
        assert_eq!(parse_exp("po [W]"), "App(po,ToId(W))");
        assert_eq!(parse_exp("a ; (b ; c)"), "Seq(a,b,c)");
        assert_eq!(parse_exp("a * b^-1"), "Cartesian(a,Inv(b))");
        assert_eq!(parse_exp("0 | _"), "Union(0,_)");
    }

    #[test]
    fn nonassoc_errors() {
        for s in ["a * b * c", "~a*", "a * ~b"] {
            let toks = lex(0, s).unwrap();
            let mut p = Parser {
                file: 0,
                toks,
                pos: 0,
            };
            assert!(p.exp().is_err(), "{s} should not parse");
        }
    }

    #[test]
    fn lexer_names_and_comments() {
        let toks = lex(
            0,
            "po-loc DC.CVAU co' (* a (* nested *) c *) 'rlx // x\n# y\n r^-1",
        )
        .unwrap();
        let ts: Vec<Tok> = toks.into_iter().map(|t| t.tok).collect();
        assert_eq!(
            ts,
            vec![
                Tok::Var("po-loc".into()),
                Tok::Var("DC.CVAU".into()),
                Tok::Var("co'".into()),
                Tok::Tag("rlx".into()),
                Tok::Var("r".into()),
                Tok::Hat,
                Tok::Inv,
                Tok::Eof
            ]
        );
    }
}
