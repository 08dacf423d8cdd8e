//! Lexer and recursive-descent parser for DVE (DiVinE 2 and BEEM, with DiVinE 3's `input`
//! constants and process templates). Every error is a [`Diagnostic`] naming the file, line
//! and column and what was expected. Nesting is bounded, so no input overflows the stack.

use crate::ast::*;
use fencer_text::Diagnostic;

/// Deepest nesting of parentheses and unary operators accepted (BEEM nests a handful).
pub const MAX_NESTING: usize = 64;
/// Most binary operators in one expression (BEEM's longest guard has a few dozen). Every
/// later pass may then recurse over an expression without risking the stack.
pub const MAX_OPERATORS: usize = 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Num(i64),
    Str(String),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    span: Span,
}

const PUNCTS: &[&str] = &[
    "->", "..", "==", "!=", "<=", ">=", "<<", ">>", "&&", "||", "{", "}", "(", ")", "[", "]", ";",
    ",", ":", ".", "=", "<", ">", "+", "-", "*", "/", "%", "!", "~", "&", "|", "^", "?",
];

fn lex(file: &str, src: &str) -> Result<Vec<Token>, Diagnostic> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let err = |start: usize, end: usize, msg: String, label: &str| {
        Diagnostic::new(file, src, Span { start, end }, msg, label)
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b[i..].starts_with(b"/*") {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= b.len() {
                    return Err(err(
                        start,
                        start + 2,
                        "unterminated comment".into(),
                        "this `/*` is never closed",
                    ));
                }
                if b[i] == b'*' && b[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(src[start..i].to_string()),
                span: Span { start, end: i },
            });
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            let text = &src[start..i];
            let n = text
                .parse::<i64>()
                .ok()
                .filter(|n| *n <= i32::MAX as i64)
                .ok_or_else(|| {
                    err(
                        start,
                        i,
                        format!("`{text}` is not a number DVE can hold"),
                        "expected a decimal integer below 2^31",
                    )
                })?;
            out.push(Token {
                tok: Tok::Num(n),
                span: Span { start, end: i },
            });
            continue;
        }
        if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                i += 1;
            }
            if i >= b.len() || b[i] != b'"' {
                return Err(err(
                    start,
                    start + 1,
                    "unterminated string".into(),
                    "this `\"` is never closed on its line",
                ));
            }
            i += 1;
            out.push(Token {
                tok: Tok::Str(src[start + 1..i - 1].to_string()),
                span: Span { start, end: i },
            });
            continue;
        }
        let Some(p) = PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(err(
                start,
                start + ch.len_utf8(),
                format!("unexpected character `{ch}`"),
                "not part of DVE",
            ));
        };
        i += p.len();
        out.push(Token {
            tok: Tok::Punct(p),
            span: Span { start, end: i },
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span {
            start: src.len(),
            end: src.len(),
        },
    });
    Ok(out)
}

struct Parser<'a> {
    file: &'a str,
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
    /// Binary operators in the expression being parsed.
    ops: usize,
}

type R<T> = Result<T, Diagnostic>;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Num(n) => format!("`{n}`"),
        Tok::Str(s) => format!("the string \"{s}\""),
        Tok::Punct(p) => format!("`{p}`"),
        Tok::Eof => "the end of the file".into(),
    }
}

const KEYWORDS: &[&str] = &[
    "byte",
    "int",
    "const",
    "input",
    "channel",
    "process",
    "state",
    "init",
    "accept",
    "commit",
    "assert",
    "trans",
    "guard",
    "sync",
    "effect",
    "system",
    "async",
    "property",
    "true",
    "false",
    "and",
    "or",
    "not",
    "imply",
    "expression",
    "for",
];

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn error(&self, msg: String, label: &str) -> Diagnostic {
        Diagnostic::new(self.file, self.src, self.span(), msg, label)
    }
    fn expected(&self, what: &str) -> Diagnostic {
        self.error(
            format!("expected {what}, found {}", describe(self.peek())),
            &format!("expected {what}"),
        )
    }
    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == w)
    }
    fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_word(&mut self, w: &str) -> bool {
        if self.is_word(w) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, p: &str, ctx: &str) -> R<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{p}` {ctx}")))
        }
    }
    fn ident(&mut self, what: &str) -> R<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) if !KEYWORDS.contains(&name.as_str()) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.expected(what)),
        }
    }

    fn model(&mut self) -> R<Model> {
        let mut items = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Ident(w) if w == "system" => break,
                Tok::Ident(w) if matches!(w.as_str(), "byte" | "int" | "const" | "input") => {
                    items.extend(self.var_decls()?.into_iter().map(Item::Var));
                }
                Tok::Ident(w) if w == "channel" => {
                    items.extend(self.chan_decls()?.into_iter().map(Item::Chan));
                }
                Tok::Ident(w) if w == "process" => items.push(self.process(false)?),
                Tok::Ident(w) if w == "expression" => items.push(self.definition()?),
                Tok::Ident(w) if w == "for" => items.push(self.for_loop()?),
                Tok::Ident(w) if w == "property" => {
                    let start = self.bump().span.start;
                    if self.is_word("process") {
                        items.push(self.process(true)?);
                    } else if self.eat_word("ltl") {
                        let name = self.ident("the property's name")?;
                        let formula = match self.peek().clone() {
                            Tok::Str(f) => f,
                            _ => return Err(self.expected("the formula, as a string")),
                        };
                        let end = self.bump().span.end;
                        items.push(Item::Ltl(LtlProperty {
                            name,
                            formula,
                            span: Span { start, end },
                        }));
                    } else {
                        return Err(self.expected("`process` or `ltl` after `property`"));
                    }
                }
                Tok::Eof => {
                    return Err(
                        self.expected("`system async;` or `system sync;` at the end of the model")
                    )
                }
                _ => {
                    return Err(self.expected(
                        "a declaration (`byte`, `int`, `const`, `channel`, `process`) or `system`",
                    ))
                }
            }
        }
        self.bump();
        let synchronous = if self.eat_word("async") {
            false
        } else if self.eat_word("sync") {
            true
        } else {
            return Err(self.expected("`async` or `sync` after `system`"));
        };
        let property = if self.eat_word("property") {
            Some(self.ident("the name of the property process")?)
        } else {
            None
        };
        self.expect_punct(";", "after the system declaration")?;
        if !matches!(self.peek(), Tok::Eof) {
            return Err(self.expected("the end of the model after `system ...;`"));
        }
        Ok(Model {
            items,
            synchronous,
            property,
        })
    }

    fn ty(&mut self) -> R<Type> {
        if self.eat_word("byte") {
            Ok(Type::Byte)
        } else if self.eat_word("int") {
            Ok(Type::Int)
        } else {
            Err(self.expected("a type (`byte` or `int`)"))
        }
    }

    /// `[const|input] type a[=..], b[n][={..}];`
    fn var_decls(&mut self) -> R<Vec<VarDecl>> {
        let konst = self.eat_word("const");
        let input = !konst && self.eat_word("input");
        let ty = self.ty()?;
        let mut out = Vec::new();
        loop {
            let name = self.ident("a variable name")?;
            let size = if self.eat_punct("[") {
                let e = self.expr()?;
                self.expect_punct("]", "after the array size")?;
                Some(e)
            } else {
                None
            };
            let init = if self.eat_punct("=") {
                if self.is_punct("{") {
                    let start = self.bump().span.start;
                    let mut v = Vec::new();
                    if !self.is_punct("}") {
                        loop {
                            v.push(self.expr()?);
                            if !self.eat_punct(",") {
                                break;
                            }
                        }
                    }
                    let end = self.expect_punct("}", "to close the initialiser list")?.end;
                    Some(Init::List(v, Span { start, end }))
                } else {
                    Some(Init::Scalar(self.expr()?))
                }
            } else {
                None
            };
            out.push(VarDecl {
                ty,
                konst,
                input,
                name,
                size,
                init,
            });
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(";", "after a declaration")?;
        Ok(out)
    }

    fn chan_decls(&mut self) -> R<Vec<ChanDecl>> {
        self.bump();
        let mut types = Vec::new();
        if self.eat_punct("{") {
            loop {
                types.push(self.ty()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct("}", "to close the channel's item types")?;
        }
        let mut out = Vec::new();
        loop {
            let name = self.ident("a channel name")?;
            let size = if self.eat_punct("[") {
                let e = self.expr()?;
                self.expect_punct("]", "after the channel's buffer size")?;
                Some(e)
            } else {
                None
            };
            out.push(ChanDecl {
                name,
                types: types.clone(),
                size,
            });
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(";", "after a channel declaration")?;
        Ok(out)
    }

    fn names(&mut self, what: &str) -> R<Vec<Ident>> {
        let mut v = vec![self.ident(what)?];
        while self.eat_punct(",") {
            v.push(self.ident(what)?);
        }
        self.expect_punct(";", "after the list")?;
        Ok(v)
    }

    /// `for (x : lo .. hi) { process p(x); ... }`.
    fn for_loop(&mut self) -> R<Item> {
        self.bump();
        self.enter()?;
        self.expect_punct("(", "after `for`")?;
        let var = self.ident("the loop variable")?;
        self.expect_punct(":", "after the loop variable")?;
        let from = self.expr()?;
        self.expect_punct("..", "between the loop's bounds")?;
        let to = self.expr()?;
        self.expect_punct(")", "after the loop's bounds")?;
        self.expect_punct("{", "to open the loop's body")?;
        let mut body = Vec::new();
        while !self.eat_punct("}") {
            match self.peek().clone() {
                Tok::Ident(w) if w == "process" => body.push(self.process(false)?),
                Tok::Ident(w) if w == "for" => body.push(self.for_loop()?),
                _ => return Err(self.expected("a process instance, `for` or `}` in a loop")),
            }
        }
        self.depth -= 1;
        Ok(Item::For(ForLoop {
            var,
            from,
            to,
            body,
        }))
    }

    /// `expression name(params) { expr }`.
    fn definition(&mut self) -> R<Item> {
        self.bump();
        let name = self.ident("the expression's name")?;
        self.expect_punct("(", "after the expression's name")?;
        let mut params = Vec::new();
        if !self.is_punct(")") {
            loop {
                params.push(self.ident("a parameter name")?);
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(")", "after the parameters")?;
        self.expect_punct("{", "to open the expression's body")?;
        let body = self.expr()?;
        self.expect_punct("}", "to close the expression's body")?;
        Ok(Item::Definition(Definition { name, params, body }))
    }

    fn process(&mut self, property: bool) -> R<Item> {
        let start = self.bump().span.start;
        let name = self.ident("a process name")?;
        let mut params = None;
        if self.is_punct("(") {
            // Either a template's parameters `(key i)` or an instance `(1);`.
            let save = self.pos;
            self.bump();
            // A template's parameters are names (each perhaps after a qualifier such as
            // `key`); an instance's arguments are expressions, and is followed by `;`.
            let mut k = self.pos;
            let mut depth = 1;
            while depth > 0 && !matches!(self.toks[k].tok, Tok::Eof) {
                match self.toks[k].tok {
                    Tok::Punct("(") => depth += 1,
                    Tok::Punct(")") => depth -= 1,
                    _ => {}
                }
                k += 1;
            }
            let is_template = matches!(self.toks[k].tok, Tok::Punct("{"));
            if is_template {
                let mut ps = Vec::new();
                loop {
                    let first = self.ident("a parameter name")?;
                    if matches!(self.peek(), Tok::Ident(_)) {
                        ps.push((Some(first), self.ident("a parameter name")?));
                    } else {
                        ps.push((None, first));
                    }
                    if !self.eat_punct(",") {
                        break;
                    }
                }
                self.expect_punct(")", "after the parameters")?;
                params = Some(ps);
            } else {
                self.pos = save;
                self.bump();
                let mut args = Vec::new();
                if !self.is_punct(")") {
                    loop {
                        args.push(self.expr()?);
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                }
                self.expect_punct(")", "after the instance's arguments")?;
                let end = self.expect_punct(";", "after a process instance")?.end;
                return Ok(Item::Instance(Instance {
                    template: name,
                    args,
                    span: Span { start, end },
                }));
            }
        }
        self.expect_punct("{", "to open the process body")?;
        let mut p = Process {
            name,
            params,
            property,
            vars: Vec::new(),
            channels: Vec::new(),
            states: Vec::new(),
            init: None,
            accept: Vec::new(),
            commit: Vec::new(),
            asserts: Vec::new(),
            trans: Vec::new(),
            span: Span { start, end: start },
        };
        loop {
            match self.peek().clone() {
                Tok::Ident(w) if matches!(w.as_str(), "byte" | "int" | "const" | "input") => {
                    let v = self.var_decls()?;
                    p.vars.extend(v);
                }
                Tok::Ident(w) if w == "channel" => {
                    let c = self.chan_decls()?;
                    p.channels.extend(c);
                }
                Tok::Ident(w) if w == "state" => {
                    self.bump();
                    let s = self.names("a state name")?;
                    p.states.extend(s);
                }
                Tok::Ident(w) if w == "init" => {
                    self.bump();
                    p.init = Some(self.ident("the initial state")?);
                    self.expect_punct(";", "after the initial state")?;
                }
                Tok::Ident(w) if w == "accept" => {
                    self.bump();
                    let s = self.names("an accepting state")?;
                    p.accept.extend(s);
                }
                Tok::Ident(w) if w == "commit" => {
                    self.bump();
                    let s = self.names("a committed state")?;
                    p.commit.extend(s);
                }
                Tok::Ident(w) if w == "assert" => {
                    self.bump();
                    loop {
                        let st = self.ident("a state name")?;
                        self.expect_punct(":", "between the state and the assertion")?;
                        p.asserts.push((st, self.expr()?));
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    self.expect_punct(";", "after the assertions")?;
                }
                Tok::Ident(w) if w == "trans" => {
                    self.bump();
                    loop {
                        p.trans.push(self.transition()?);
                        if !self.eat_punct(",") {
                            break;
                        }
                    }
                    self.eat_punct(";");
                }
                Tok::Punct("}") => {
                    p.span.end = self.bump().span.end;
                    return Ok(Item::Process(p));
                }
                _ => {
                    return Err(self.expected(
                        "a declaration, `state`, `init`, `accept`, `commit`, `assert`, `trans` or `}` in a process",
                    ))
                }
            }
        }
    }

    fn transition(&mut self) -> R<Transition> {
        let from = self.ident("the state a transition leaves")?;
        self.expect_punct("->", "between a transition's states")?;
        let to = self.ident("the state a transition enters")?;
        self.expect_punct("{", "to open the transition")?;
        let mut t = Transition {
            span: Span {
                start: from.span.start,
                end: to.span.end,
            },
            from,
            to,
            guard: None,
            sync: None,
            effect: Vec::new(),
        };
        if self.eat_word("guard") {
            let mut g = self.expr()?;
            // DiVinE accepts `guard a, b;` as a conjunction.
            while self.eat_punct(",") {
                g = Expr::Binary(BinOp::And, Box::new(g), Box::new(self.expr()?));
            }
            self.expect_punct(";", "after the guard")?;
            t.guard = Some(g);
        }
        if self.is_word("sync") {
            let start = self.bump().span.start;
            let first = self.proc_ref("a channel name")?;
            let (owner, chan) = if self.eat_punct("->") {
                (Some(first), self.ident("a channel name after `->`")?)
            } else if first.args.is_none() {
                (None, first.name)
            } else {
                return Err(self.expected("`->` and a channel after a process instance"));
            };
            let send = if self.eat_punct("!") {
                true
            } else if self.eat_punct("?") {
                false
            } else {
                return Err(self.expected("`!` or `?` after the channel"));
            };
            let mut values = Vec::new();
            if self.eat_punct("{") {
                loop {
                    values.push(self.expr()?);
                    if !self.eat_punct(",") {
                        break;
                    }
                }
                self.expect_punct("}", "to close the message")?;
            } else if !self.is_punct(";") {
                values.push(self.expr()?);
            }
            let end = self.expect_punct(";", "after the synchronisation")?.end;
            t.sync = Some(Sync {
                owner,
                chan,
                send,
                values,
                span: Span { start, end },
            });
        }
        if self.eat_word("effect") {
            loop {
                let target = self.expr()?;
                self.expect_punct("=", "in an assignment")?;
                let value = self.expr()?;
                t.effect.push(Assign { target, value });
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect_punct(";", "after the effect")?;
        }
        if !self.is_punct("}") {
            return Err(
                self.expected("`guard`, `sync`, `effect` (in that order) or `}` in a transition")
            );
        }
        t.span.end = self.bump().span.end;
        Ok(t)
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        let op = match self.peek() {
            Tok::Ident(w) if w == "imply" => (BinOp::Imply, 1),
            Tok::Ident(w) if w == "or" => (BinOp::Or, 2),
            Tok::Ident(w) if w == "and" => (BinOp::And, 3),
            Tok::Punct(p) => match *p {
                "||" => (BinOp::Or, 2),
                "&&" => (BinOp::And, 3),
                "|" => (BinOp::BitOr, 4),
                "^" => (BinOp::BitXor, 5),
                "&" => (BinOp::BitAnd, 6),
                "==" => (BinOp::Eq, 7),
                "!=" => (BinOp::Ne, 7),
                "<" => (BinOp::Lt, 8),
                "<=" => (BinOp::Le, 8),
                ">" => (BinOp::Gt, 8),
                ">=" => (BinOp::Ge, 8),
                "<<" => (BinOp::Shl, 9),
                ">>" => (BinOp::Shr, 9),
                "+" => (BinOp::Add, 10),
                "-" => (BinOp::Sub, 10),
                "*" => (BinOp::Mul, 11),
                "/" => (BinOp::Div, 11),
                "%" => (BinOp::Rem, 11),
                _ => return None,
            },
            _ => return None,
        };
        Some(op)
    }

    /// Precedence climbing: left-associative levels, `imply` right-associative. The
    /// operands of one level are collected in a loop, so a long chain costs no stack.
    pub fn expr(&mut self) -> R<Expr> {
        let outer = self.depth == 0;
        if outer {
            self.ops = 0;
        }
        self.expr_above(0)
    }

    fn expr_above(&mut self, min: u8) -> R<Expr> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.binop() {
            if prec <= min {
                break;
            }
            self.ops += 1;
            if self.ops > MAX_OPERATORS {
                return Err(self.error(
                    format!("expression with more than {MAX_OPERATORS} operators"),
                    "too long: split it",
                ));
            }
            self.bump();
            let rhs = if op == BinOp::Imply {
                self.expr_above(prec - 1)?
            } else {
                self.expr_above(prec)?
            };
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> R<Expr> {
        let start = self.span().start;
        let op = if self.eat_punct("-") {
            Some(UnOp::Neg)
        } else if self.eat_punct("!") || self.eat_word("not") {
            Some(UnOp::Not)
        } else if self.eat_punct("~") {
            Some(UnOp::BitNot)
        } else {
            None
        };
        if let Some(op) = op {
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            let end = e.span().end;
            return Ok(Expr::Unary(op, Box::new(e), Span { start, end }));
        }
        self.primary()
    }

    /// A name, or a template instance `name(args)`.
    fn proc_ref(&mut self, what: &str) -> R<ProcRef> {
        let name = self.ident(what)?;
        if !self.is_punct("(") {
            return Ok(ProcRef { name, args: None });
        }
        self.enter()?;
        self.bump();
        let mut args = Vec::new();
        if !self.is_punct(")") {
            loop {
                args.push(self.expr()?);
                if !self.eat_punct(",") {
                    break;
                }
            }
        }
        self.expect_punct(")", "after the arguments")?;
        self.depth -= 1;
        Ok(ProcRef {
            name,
            args: Some(args),
        })
    }

    /// One more level of nesting; an error past [`MAX_NESTING`], before the stack is at
    /// risk.
    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(
                format!("expression nested deeper than {MAX_NESTING} levels"),
                "too deep",
            ));
        }
        Ok(())
    }

    fn index(&mut self) -> R<Option<Box<Expr>>> {
        if self.eat_punct("[") {
            self.enter()?;
            let e = self.expr()?;
            self.depth -= 1;
            self.expect_punct("]", "after the index")?;
            Ok(Some(Box::new(e)))
        } else {
            Ok(None)
        }
    }

    fn primary(&mut self) -> R<Expr> {
        match self.peek().clone() {
            Tok::Num(n) => Ok(Expr::Num(n, self.bump().span)),
            Tok::Ident(w) if w == "true" || w == "false" => {
                Ok(Expr::Bool(w == "true", self.bump().span))
            }
            Tok::Punct("(") => {
                self.enter()?;
                self.bump();
                let e = self.expr()?;
                self.expect_punct(")", "to close the parenthesis")?;
                self.depth -= 1;
                Ok(e)
            }
            Tok::Ident(_) => {
                let start = self.span().start;
                let p = self.proc_ref("an expression")?;
                if self.eat_punct(".") {
                    let st = self.ident("a state name after `.`")?;
                    return Ok(Expr::InState(p, st));
                }
                if self.eat_punct("->") {
                    let var = self.ident("a variable name after `->`")?;
                    let idx = self.index()?;
                    return Ok(Expr::Remote(p, var, idx));
                }
                if let Some(args) = p.args {
                    let end = self.toks[self.pos.saturating_sub(1)].span.end;
                    return Ok(Expr::Call(p.name, args, Span { start, end }));
                }
                let idx = self.index()?;
                Ok(Expr::Var(p.name, idx))
            }
            _ => Err(self.expected("an expression")),
        }
    }
}

/// Parses a DVE model. `file` names it in diagnostics.
pub fn parse(file: &str, src: &str) -> Result<Model, Diagnostic> {
    let toks = lex(file, src)?;
    let mut p = Parser {
        file,
        src,
        toks,
        pos: 0,
        depth: 0,
        ops: 0,
    };
    p.model()
}

/// Parses one expression (`--reach EXPR`, an atomic proposition). `file` names it in
/// diagnostics.
pub fn parse_expr(file: &str, src: &str) -> Result<Expr, Diagnostic> {
    let toks = lex(file, src)?;
    let mut p = Parser {
        file,
        src,
        toks,
        pos: 0,
        depth: 0,
        ops: 0,
    };
    let e = p.expr()?;
    if !matches!(p.peek(), Tok::Eof) {
        return Err(p.expected("the end of the expression"));
    }
    Ok(e)
}
