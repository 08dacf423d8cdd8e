//! Lexer and recursive-descent parser for the text format. Every error names what was
//! expected and what was found, at a span.

use crate::ast::*;
use crate::diag::Diagnostic;
use fencer_ir::{BinOp, UnOp};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Int(i64),
    Punct(&'static str),
    Eof,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(v) => format!("`{v}`"),
            Tok::Punct(p) => format!("`{p}`"),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

const KEYWORDS: &[&str] = &[
    "shared",
    "mutex",
    "thread",
    "fn",
    "fence",
    "assume",
    "assert",
    "lock",
    "unlock",
    "if",
    "else",
    "while",
    "join",
    "return",
    "cas",
    "fetch_add",
    "xchg",
    "spawn",
    "exists",
    "forall",
    "true",
    "false",
];

/// Longest first, so that `<<` is not read as `<` `<`.
const PUNCTS: &[&str] = &[
    "<<", ">>", "==", "!=", "<=", ">=", "&&", "||", "{", "}", "(", ")", "[", "]", ";", ",", "=",
    "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", ".",
];

struct Lexer<'a> {
    file: &'a str,
    src: &'a str,
}

impl<'a> Lexer<'a> {
    fn err(&self, span: Span, msg: impl Into<String>, label: &str) -> Diagnostic {
        Diagnostic::new(self.file, self.src, span, msg, label)
    }

    fn tokens(&self) -> Result<Vec<(Tok, Span)>, Diagnostic> {
        let b = self.src.as_bytes();
        let mut i = 0;
        let mut out = Vec::new();
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if b[i..].starts_with(b"//") {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            } else if b[i..].starts_with(b"/*") {
                let start = i;
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err(self.err(
                            Span::new(start, start + 2),
                            "unterminated block comment: expected `*/` before the end of the file",
                            "comment starts here",
                        ));
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            } else if c.is_ascii_alphabetic() || c == b'_' {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                out.push((
                    Tok::Ident(self.src[start..i].to_string()),
                    Span::new(start, i),
                ));
            } else if c.is_ascii_digit() {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let text = &self.src[start..i];
                let span = Span::new(start, i);
                let v = if let Some(hex) = text.strip_prefix("0x") {
                    i64::from_str_radix(hex, 16)
                } else {
                    text.parse::<i64>()
                };
                let v = v.map_err(|_| {
                    if text.chars().all(|c| c.is_ascii_digit())
                        || text
                            .strip_prefix("0x")
                            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
                    {
                        self.err(
                            span,
                            format!("integer literal `{text}` does not fit in 64 bits"),
                            "too large",
                        )
                    } else {
                        self.err(
                            span,
                            format!("malformed number `{text}`: expected decimal digits or 0x and hex digits"),
                            "not a number",
                        )
                    }
                })?;
                out.push((Tok::Int(v), span));
            } else {
                let Some(p) = PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) else {
                    let ch = self.src[i..].chars().next().unwrap_or('?');
                    return Err(self.err(
                        Span::new(i, i + ch.len_utf8()),
                        format!("unexpected character `{ch}`"),
                        "not part of the language",
                    ));
                };
                out.push((Tok::Punct(p), Span::new(i, i + p.len())));
                i += p.len();
            }
        }
        out.push((Tok::Eof, Span::new(b.len(), b.len())));
        Ok(out)
    }
}

pub struct Parser<'a> {
    file: &'a str,
    src: &'a str,
    toks: Vec<(Tok, Span)>,
    pos: usize,
    depth: u32,
}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: u32 = 100;

type PResult<T> = Result<T, Diagnostic>;

impl<'a> Parser<'a> {
    pub fn new(file: &'a str, src: &'a str) -> PResult<Parser<'a>> {
        let toks = Lexer { file, src }.tokens()?;
        Ok(Parser {
            file,
            src,
            toks,
            pos: 0,
            depth: 0,
        })
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.pos].0
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].0
    }
    fn span(&self) -> Span {
        self.toks[self.pos].1
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].1
    }
    fn bump(&mut self) -> (Tok, Span) {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn error(&self, expected: &str) -> Diagnostic {
        let found = self.peek().describe();
        Diagnostic::new(
            self.file,
            self.src,
            self.span(),
            format!("expected {expected}, found {found}"),
            format!("expected {expected}"),
        )
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == k)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, p: &str, context: &str) -> PResult<Span> {
        if self.is_punct(p) {
            Ok(self.bump().1)
        } else {
            Err(self.error(&format!("`{p}` {context}")))
        }
    }

    fn ident(&mut self, what: &str) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) if !KEYWORDS.contains(&name.as_str()) => {
                let span = self.bump().1;
                Ok(Ident { name, span })
            }
            Tok::Ident(name) => Err(Diagnostic::new(
                self.file,
                self.src,
                self.span(),
                format!("expected {what}, found the keyword `{name}`"),
                "a keyword cannot be a name",
            )),
            _ => Err(self.error(what)),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::new(
                self.file,
                self.src,
                self.span(),
                format!(
                    "nesting deeper than {MAX_DEPTH} levels: expected at most {MAX_DEPTH} nested blocks, parentheses and unary operators"
                ),
                "too deep",
            )
            .with_help("split the expression or the block with intermediate registers or functions"));
        }
        Ok(())
    }

    pub fn program(&mut self) -> PResult<Ast> {
        let mut items = Vec::new();
        let mut cond = None;
        loop {
            match self.peek().clone() {
                Tok::Eof => break,
                Tok::Ident(k) if k == "shared" => {
                    self.bump();
                    let mut decls = vec![self.shared_decl()?];
                    while self.eat_punct(",") {
                        decls.push(self.shared_decl()?);
                    }
                    self.expect_punct(";", "after a `shared` declaration")?;
                    items.push(Item::Shared(decls));
                }
                Tok::Ident(k) if k == "mutex" => {
                    self.bump();
                    let mut names = vec![self.ident("a mutex name")?];
                    while self.eat_punct(",") {
                        names.push(self.ident("a mutex name")?);
                    }
                    self.expect_punct(";", "after a `mutex` declaration")?;
                    items.push(Item::Mutex(names));
                }
                Tok::Ident(k) if k == "thread" => {
                    self.bump();
                    let name = self.ident("a thread name")?;
                    let body = self.block()?;
                    items.push(Item::Thread { name, body });
                }
                Tok::Ident(k) if k == "fn" => {
                    self.bump();
                    let name = self.ident("a function name")?;
                    self.expect_punct("(", "before the parameters")?;
                    let mut params = Vec::new();
                    if !self.is_punct(")") {
                        params.push(self.ident("a parameter name")?);
                        while self.eat_punct(",") {
                            params.push(self.ident("a parameter name")?);
                        }
                    }
                    self.expect_punct(")", "after the parameters")?;
                    let body = self.block()?;
                    items.push(Item::Func { name, params, body });
                }
                Tok::Ident(k) if k == "exists" || k == "forall" => {
                    let start = self.bump().1;
                    let quant = if k == "exists" {
                        CondQuant::Exists
                    } else {
                        CondQuant::Forall
                    };
                    self.expect_punct("(", &format!("after `{k}`"))?;
                    let expr = self.expr()?;
                    let end = self.expect_punct(")", "to close the condition")?;
                    self.eat_punct(";");
                    cond = Some(Cond {
                        quant,
                        expr,
                        span: start.to(end),
                    });
                    if !matches!(self.peek(), Tok::Eof) {
                        return Err(
                            self.error("the end of the file (the final condition comes last)")
                        );
                    }
                }
                _ => {
                    return Err(
                        self.error("`shared`, `mutex`, `thread`, `fn`, `exists` or `forall`")
                    )
                }
            }
        }
        Ok(Ast { items, cond })
    }

    fn int_literal(&mut self, what: &str) -> PResult<i64> {
        let neg = self.eat_punct("-");
        match *self.peek() {
            Tok::Int(v) => {
                self.bump();
                Ok(if neg { v.wrapping_neg() } else { v })
            }
            _ => Err(self.error(what)),
        }
    }

    fn shared_decl(&mut self) -> PResult<SharedDecl> {
        let name = self.ident("a shared location name")?;
        let mut size = None;
        if self.eat_punct("[") {
            let sp = self.span();
            let n = self.int_literal("an array size")?;
            if !(1..=1_000_000).contains(&n) {
                return Err(Diagnostic::new(
                    self.file,
                    self.src,
                    sp,
                    format!("array size {n} out of range: expected 1 to 1000000"),
                    "bad size",
                ));
            }
            size = Some(n as u32);
            self.expect_punct("]", "after the array size")?;
        }
        let init = if self.eat_punct("=") {
            if self.eat_punct("{") {
                let lspan = self.prev_span();
                let mut vs = vec![self.int_literal("an integer")?];
                while self.eat_punct(",") {
                    vs.push(self.int_literal("an integer")?);
                }
                let end = self.expect_punct("}", "to close the initialiser list")?;
                match size {
                    None => {
                        return Err(Diagnostic::new(
                            self.file,
                            self.src,
                            lspan.to(end),
                            format!("`{}` is a scalar but has a list initialiser", name.name),
                            "a list needs an array",
                        )
                        .with_help(format!(
                            "declare it as an array: `{}[{}]`",
                            name.name,
                            vs.len()
                        )))
                    }
                    Some(n) if n as usize != vs.len() => {
                        return Err(Diagnostic::new(
                            self.file,
                            self.src,
                            lspan.to(end),
                            format!(
                                "array `{}` has {} cells but its initialiser lists {} values",
                                name.name,
                                n,
                                vs.len()
                            ),
                            "wrong number of values",
                        ))
                    }
                    _ => {}
                }
                Init::List(vs)
            } else {
                Init::Scalar(self.int_literal("an integer initial value")?)
            }
        } else {
            Init::Zero
        };
        Ok(SharedDecl { name, size, init })
    }

    fn block(&mut self) -> PResult<Vec<Stmt>> {
        self.enter()?;
        self.expect_punct("{", "to open a block")?;
        let mut out = Vec::new();
        while !self.is_punct("}") {
            if matches!(self.peek(), Tok::Eof) {
                return Err(self.error("`}` to close the block"));
            }
            out.push(self.stmt()?);
        }
        self.bump();
        self.depth -= 1;
        Ok(out)
    }

    fn paren_expr(&mut self, after: &str) -> PResult<Expr> {
        self.expect_punct("(", &format!("after `{after}`"))?;
        let e = self.expr()?;
        self.expect_punct(")", &format!("to close `{after}(...)`"))?;
        Ok(e)
    }

    fn end_stmt(&mut self, start: Span) -> PResult<Span> {
        let end = self.expect_punct(";", "after a statement")?;
        Ok(start.to(end))
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let kw = match self.peek() {
            Tok::Ident(s) => s.clone(),
            _ => return Err(self.error("a statement")),
        };
        let kind = match kw.as_str() {
            "fence" => {
                self.bump();
                if matches!(self.peek(), Tok::Ident(k) if k == "ss") {
                    self.bump();
                    StmtKind::Fence(fencer_ir::FenceKind::StoreStore)
                } else {
                    StmtKind::Fence(fencer_ir::FenceKind::Full)
                }
            }
            "assume" | "assert" => {
                self.bump();
                let e = self.paren_expr(&kw)?;
                if kw == "assume" {
                    StmtKind::Assume(e)
                } else {
                    StmtKind::Assert(e)
                }
            }
            "lock" | "unlock" => {
                self.bump();
                self.expect_punct("(", &format!("after `{kw}`"))?;
                let m = self.ident("a mutex name")?;
                self.expect_punct(")", "after the mutex name")?;
                if kw == "lock" {
                    StmtKind::Lock(m)
                } else {
                    StmtKind::Unlock(m)
                }
            }
            "join" => {
                self.bump();
                StmtKind::Join(self.paren_expr("join")?)
            }
            "return" => {
                self.bump();
                let e = if self.is_punct(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                StmtKind::Return(e)
            }
            "if" => {
                self.bump();
                let cond = self.paren_expr("if")?;
                let mut arms = vec![(cond, self.block()?)];
                let mut els = None;
                // A loop, not recursion: `else if` chains may be thousands of arms long.
                while self.is_kw("else") {
                    self.bump();
                    if self.is_kw("if") {
                        self.bump();
                        let cond = self.paren_expr("if")?;
                        arms.push((cond, self.block()?));
                    } else {
                        els = Some(self.block()?);
                        break;
                    }
                }
                let span = start.to(self.prev_span());
                return Ok(Stmt {
                    kind: StmtKind::If { arms, els },
                    span,
                });
            }
            "while" => {
                self.bump();
                let cond = self.paren_expr("while")?;
                let body = self.block()?;
                let span = start.to(self.prev_span());
                return Ok(Stmt {
                    kind: StmtKind::While { cond, body },
                    span,
                });
            }
            _ if KEYWORDS.contains(&kw.as_str()) => {
                return Err(Diagnostic::new(
                    self.file,
                    self.src,
                    start,
                    format!("expected a statement, found the keyword `{kw}`"),
                    "cannot start a statement",
                ))
            }
            _ => {
                if matches!(self.peek_at(1), Tok::Punct("(")) {
                    let func = self.ident("a function name")?;
                    let args = self.args()?;
                    StmtKind::Call { func, args }
                } else {
                    let lhs = self.place()?;
                    if !self.is_punct("=") {
                        return Err(self.error("`=` (an assignment) or `(` (a call)"));
                    }
                    self.bump();
                    let rhs = self.rhs()?;
                    StmtKind::Assign { lhs, rhs }
                }
            }
        };
        let span = self.end_stmt(start)?;
        Ok(Stmt { kind, span })
    }

    fn args(&mut self) -> PResult<Vec<Expr>> {
        self.expect_punct("(", "before the arguments")?;
        let mut args = Vec::new();
        if !self.is_punct(")") {
            args.push(self.expr()?);
            while self.eat_punct(",") {
                args.push(self.expr()?);
            }
        }
        self.expect_punct(")", "after the arguments")?;
        Ok(args)
    }

    fn place(&mut self) -> PResult<Place> {
        let name = self.ident("a register or shared location name")?;
        let index = if self.eat_punct("[") {
            let e = self.expr()?;
            self.expect_punct("]", "after the index")?;
            Some(Box::new(e))
        } else {
            None
        };
        Ok(Place { name, index })
    }

    fn rhs(&mut self) -> PResult<Rhs> {
        if self.is_kw("spawn") {
            self.bump();
            let func = self.ident("the name of the function to spawn")?;
            let mut args = self.args()?;
            if args.len() > 1 {
                return Err(Diagnostic::new(
                    self.file,
                    self.src,
                    args[1].span,
                    "expected at most one argument to a spawned function",
                    "extra argument",
                ));
            }
            return Ok(Rhs::Spawn {
                func,
                arg: args.pop(),
            });
        }
        let is_call = matches!(self.peek_at(1), Tok::Punct("("));
        let kw = match self.peek() {
            Tok::Ident(s) if is_call => s.clone(),
            _ => return Ok(Rhs::Expr(self.expr()?)),
        };
        match kw.as_str() {
            "cas" | "fetch_add" | "xchg" => {
                self.bump();
                self.bump();
                let place = self.place()?;
                self.expect_punct(",", &format!("after the location in `{kw}`"))?;
                let a = self.expr()?;
                let rhs = if kw == "cas" {
                    self.expect_punct(",", "between the expected and the new value of `cas`")?;
                    let b = self.expr()?;
                    Rhs::Cas {
                        place,
                        expected: a,
                        new: b,
                    }
                } else if kw == "fetch_add" {
                    Rhs::FetchAdd { place, value: a }
                } else {
                    Rhs::Xchg { place, value: a }
                };
                self.expect_punct(")", &format!("to close `{kw}(...)`"))?;
                Ok(rhs)
            }
            _ if KEYWORDS.contains(&kw.as_str()) => Ok(Rhs::Expr(self.expr()?)),
            _ => {
                let func = self.ident("a function name")?;
                let args = self.args()?;
                Ok(Rhs::Call { func, args })
            }
        }
    }

    pub fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let e = self.binary(0);
        self.depth -= 1;
        e
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = match self.peek() {
            Tok::Punct(p) => binop(p),
            _ => None,
        } {
            if prec < min_prec {
                break;
            }
            self.bump();
            self.enter()?;
            let rhs = self.binary(prec + 1)?;
            self.depth -= 1;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Bin(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let op = match self.peek() {
            Tok::Punct("-") => Some(UnOp::Neg),
            Tok::Punct("!") => Some(UnOp::Not),
            Tok::Punct("~") => Some(UnOp::BitNot),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            let span = start.to(e.span);
            return Ok(Expr {
                kind: ExprKind::Un(op, Box::new(e)),
                span,
            });
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Int(v),
                    span: start,
                })
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect_punct(")", "to close the parenthesis")?;
                Ok(e)
            }
            Tok::Ident(k) if k == "true" || k == "false" => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Bool(k == "true"),
                    span: start,
                })
            }
            Tok::Ident(k) if ["cas", "fetch_add", "xchg", "spawn"].contains(&k.as_str()) => {
                Err(Diagnostic::new(
                    self.file,
                    self.src,
                    start,
                    format!("`{k}` can only be the whole right-hand side of an assignment"),
                    "not inside an expression",
                )
                .with_help(format!("write `r = {k}(...);` and use `r`")))
            }
            Tok::Ident(_) => {
                if matches!(self.peek_at(1), Tok::Punct(".")) {
                    let thread = self.ident("a thread name")?;
                    self.bump();
                    let reg = self.ident("a register name after `.`")?;
                    let span = thread.span.to(reg.span);
                    return Ok(Expr {
                        kind: ExprKind::ThreadReg(thread, reg),
                        span,
                    });
                }
                if matches!(self.peek_at(1), Tok::Punct("(")) {
                    let found = self.peek().describe();
                    return Err(Diagnostic::new(
                        self.file,
                        self.src,
                        start,
                        format!("expected an expression, found a call of {found} (calls are statements)"),
                        "calls are statements",
                    )
                    .with_help("call it on its own line: `r = f(...);`, then use `r`"));
                }
                let place = self.place()?;
                let span = start.to(self.prev_span());
                Ok(Expr {
                    kind: ExprKind::Place(place),
                    span,
                })
            }
            _ => Err(self.error("an expression")),
        }
    }
}

/// Binary operators with C's precedence (higher binds tighter); all left-associative.
fn binop(p: &str) -> Option<(BinOp, u8)> {
    use BinOp::*;
    Some(match p {
        "||" => (LogOr, 1),
        "&&" => (LogAnd, 2),
        "|" => (Or, 3),
        "^" => (Xor, 4),
        "&" => (And, 5),
        "==" => (Eq, 6),
        "!=" => (Ne, 6),
        "<" => (Lt, 7),
        "<=" => (Le, 7),
        ">" => (Gt, 7),
        ">=" => (Ge, 7),
        "<<" => (Shl, 8),
        ">>" => (Shr, 8),
        "+" => (Add, 9),
        "-" => (Sub, 9),
        "*" => (Mul, 10),
        "/" => (Div, 10),
        "%" => (Rem, 10),
        _ => return None,
    })
}

pub(crate) fn precedence(op: BinOp) -> u8 {
    binop(op.symbol())
        .expect("every operator has a precedence")
        .1
}
