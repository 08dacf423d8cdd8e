//! The litmus syntax: a line-oriented outer structure (header, init block, thread table,
//! condition) with a small tokenizer for the parts inside lines.

use fencer_text::ast::Span;
use fencer_text::Diagnostic;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Var {
    /// `0:EAX`
    Reg { thread: u32, name: String },
    /// `x` or `[x]`
    Loc(String),
}

#[derive(Clone, Debug)]
pub enum Cond {
    True,
    False,
    Eq(Var, i64, Span),
    Not(Box<Cond>),
    /// Conjuncts in order: a chain of thousands of `/\\` is one node, not a tree as deep as
    /// the chain is long that every pass would recurse down.
    And(Vec<Cond>),
    Or(Vec<Cond>),
}

/// Parentheses and `~` nested deeper than this are refused rather than risking the stack.
pub const MAX_NESTING: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quant {
    Exists,
    NotExists,
    Forall,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    Reg(String),
    Imm(i64),
    Mem(String),
    /// A jump target.
    Label(String),
}

/// One instruction as written; the lowering checks its operands.
#[derive(Clone, Debug)]
pub struct Instr {
    pub mnemonic: String,
    pub locked: bool,
    pub args: Vec<(Operand, Span)>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Cell {
    Label(String, Span),
    Instr(Instr),
}

#[derive(Clone, Debug)]
pub struct Test {
    pub name: String,
    pub doc: Option<String>,
    pub init: Vec<(Var, i64, Span)>,
    /// Per thread, its cells in order.
    pub threads: Vec<Vec<Cell>>,
    pub quant: Quant,
    pub cond: Cond,
    pub cond_span: Span,
    pub locations: Vec<(Var, Span)>,
    pub filter: Option<Cond>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Ident(String),
    Punct(&'static str),
}

struct Lexer<'a> {
    file: &'a str,
    src: &'a str,
    toks: Vec<(Tok, Span)>,
    pos: usize,
    /// Where the tokens end (for "found end of ..." messages).
    end: usize,
    /// Parentheses and `~` open in the condition being parsed.
    depth: u32,
    /// Register names are case-insensitive and shown in capitals (X86), or kept as
    /// written (C).
    upper: bool,
}

const PUNCTS: [&str; 14] = [
    "/\\", "\\/", "[", "]", "(", ")", ":", ";", "=", ",", "$", "|", "~", "+",
];

impl<'a> Lexer<'a> {
    fn new(file: &'a str, src: &'a str, start: usize, end: usize) -> Result<Self, Diagnostic> {
        let mut toks = Vec::new();
        let b = src.as_bytes();
        let mut i = start;
        while i < end {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if c == b'-' || c.is_ascii_digit() {
                let s = i;
                i += 1;
                while i < end && (b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                let text = &src[s..i];
                let v = parse_int(text).ok_or_else(|| {
                    Diagnostic::new(
                        file,
                        src,
                        Span { start: s, end: i },
                        format!("expected an integer, found `{text}`"),
                        "not an integer",
                    )
                })?;
                toks.push((Tok::Int(v), Span { start: s, end: i }));
                continue;
            }
            if c.is_ascii_alphabetic() || c == b'_' {
                let s = i;
                while i < end && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                    i += 1;
                }
                toks.push((Tok::Ident(src[s..i].to_string()), Span { start: s, end: i }));
                continue;
            }
            match PUNCTS.iter().find(|p| src[i..end].starts_with(**p)) {
                Some(p) => {
                    toks.push((
                        Tok::Punct(p),
                        Span {
                            start: i,
                            end: i + p.len(),
                        },
                    ));
                    i += p.len();
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
                        format!("unexpected character `{ch}`"),
                        "not part of the litmus syntax",
                    ));
                }
            }
        }
        Ok(Lexer {
            file,
            src,
            toks,
            pos: 0,
            end,
            depth: 0,
            upper: true,
        })
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(Span {
            start: self.end,
            end: self.end,
        })
    }

    fn found(&self) -> String {
        match self.toks.get(self.pos) {
            Some((Tok::Int(v), _)) => format!("`{v}`"),
            Some((Tok::Ident(s), _)) => format!("`{s}`"),
            Some((Tok::Punct(p), _)) => format!("`{p}`"),
            None => "the end".into(),
        }
    }

    fn err(&self, expected: &str) -> Diagnostic {
        Diagnostic::new(
            self.file,
            self.src,
            self.span(),
            format!("expected {expected}, found {}", self.found()),
            format!("expected {expected}"),
        )
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
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

    fn int(&mut self) -> Result<i64, Diagnostic> {
        match self.toks.get(self.pos) {
            Some((Tok::Int(v), _)) => {
                let v = *v;
                self.pos += 1;
                Ok(v)
            }
            _ => Err(self.err("an integer")),
        }
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// `0:EAX`, `[x]` or `x`.
    fn var(&mut self) -> Result<(Var, Span), Diagnostic> {
        let start = self.span();
        match self.peek() {
            Some(Tok::Int(t)) => {
                let t = *t;
                if t < 0 {
                    return Err(self.err("a thread number"));
                }
                self.pos += 1;
                self.expect(":")?;
                let (name, sp) = self.ident("a register name")?;
                Ok((
                    Var::Reg {
                        thread: t as u32,
                        name: if self.upper {
                            name.to_ascii_uppercase()
                        } else {
                            name
                        },
                    },
                    Span {
                        start: start.start,
                        end: sp.end,
                    },
                ))
            }
            Some(Tok::Punct("[")) => {
                self.pos += 1;
                let (name, _) = self.ident("a location name")?;
                let end = self.span();
                self.expect("]")?;
                Ok((
                    Var::Loc(name),
                    Span {
                        start: start.start,
                        end: end.end,
                    },
                ))
            }
            Some(Tok::Ident(_)) => {
                let (name, sp) = self.ident("a location")?;
                Ok((Var::Loc(name), sp))
            }
            _ => Err(self.err("a register (`0:EAX`) or a location (`x`, `[x]`)")),
        }
    }

    fn cond(&mut self) -> Result<Cond, Diagnostic> {
        let mut v = vec![self.cond_and()?];
        while self.eat("\\/") {
            v.push(self.cond_and()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Cond::Or(v)
        })
    }

    fn cond_and(&mut self) -> Result<Cond, Diagnostic> {
        let mut v = vec![self.cond_unary()?];
        while self.eat("/\\") {
            v.push(self.cond_unary()?);
        }
        Ok(if v.len() == 1 {
            v.pop().expect("one")
        } else {
            Cond::And(v)
        })
    }

    fn nest(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Diagnostic::new(
                self.file,
                self.src,
                self.span(),
                format!(
                    "condition nested too deeply: expected at most {MAX_NESTING} levels of parentheses and `~`"
                ),
                "too deep",
            ));
        }
        Ok(())
    }

    fn cond_unary(&mut self) -> Result<Cond, Diagnostic> {
        if self.eat("~") {
            self.nest()?;
            let c = Cond::Not(Box::new(self.cond_unary()?));
            self.depth -= 1;
            return Ok(c);
        }
        if self.eat("(") {
            self.nest()?;
            let c = self.cond()?;
            self.expect(")")?;
            self.depth -= 1;
            return Ok(c);
        }
        match self.peek() {
            Some(Tok::Ident(s)) if s == "true" => {
                self.pos += 1;
                return Ok(Cond::True);
            }
            Some(Tok::Ident(s)) if s == "false" => {
                self.pos += 1;
                return Ok(Cond::False);
            }
            _ => {}
        }
        let (v, sp) = self.var()?;
        self.expect("=")?;
        let k = self.int()?;
        Ok(Cond::Eq(v, k, sp))
    }
}

fn parse_int(t: &str) -> Option<i64> {
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => i64::from_str_radix(h, 16).ok()?,
        None => t.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// Byte ranges of the source's lines, without their newline.
fn lines(src: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = 0;
    for (i, c) in src.char_indices() {
        if c == '\n' {
            out.push((s, i));
            s = i + 1;
        }
    }
    if s < src.len() {
        out.push((s, src.len()));
    }
    out
}

/// Replaces `(* ... *)` comments by spaces (keeping offsets).
pub(crate) fn strip_comments(file: &str, src: &str) -> Result<String, Diagnostic> {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    let mut off = 0;
    while let Some(i) = rest.find("(*") {
        out.push_str(&rest[..i]);
        let Some(j) = rest[i + 2..].find("*)") else {
            return Err(Diagnostic::new(
                file,
                src,
                Span {
                    start: off + i,
                    end: off + i + 2,
                },
                "unterminated comment: expected `*)`",
                "comment starts here",
            ));
        };
        let body = &rest[i..i + 2 + j + 2];
        out.extend(body.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        // Keep byte offsets: replace multi-byte characters by as many spaces.
        let pad = body.len() - body.chars().count();
        out.extend(std::iter::repeat_n(' ', pad));
        off += i + 2 + j + 2;
        rest = &rest[i + 2 + j + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

pub fn parse(file: &str, original: &str) -> Result<Test, Diagnostic> {
    let text = strip_comments(file, original)?;
    let src = text.as_str();
    let diag = |s: usize, e: usize, msg: String, label: &str| {
        Diagnostic::new(file, original, Span { start: s, end: e }, msg, label)
    };
    let ls = lines(src);
    let mut li = 0;
    let blank = |(s, e): (usize, usize)| src[s..e].trim().is_empty();
    while li < ls.len() && blank(ls[li]) {
        li += 1;
    }
    if let Some(p) = src.find('#') {
        // herd7 rejects these; so do we, rather than guess what they mean.
        return Err(diag(p, p + 1, "`#` is not a litmus comment".into(), "here")
            .with_help("herd7's litmus format has `(* ... *)` comments only"));
    }
    // Header: `X86 NAME`.
    let Some(&(hs, he)) = ls.get(li) else {
        return Err(diag(
            0,
            0,
            "expected a header `X86 NAME`, found an empty file".into(),
            "empty",
        ));
    };
    let header = &src[hs..he];
    let mut words = header.split_whitespace();
    let arch = words.next().unwrap_or("");
    let arch_at = hs + header.find(arch).unwrap_or(0);
    if !arch.eq_ignore_ascii_case("X86") {
        return Err(diag(
            arch_at,
            arch_at + arch.len(),
            format!("expected the architecture `X86`, found `{arch}`"),
            "only X86 litmus tests are supported",
        ));
    }
    let name = match words.next() {
        Some(n) => n.to_string(),
        None => {
            return Err(diag(
                he,
                he,
                "expected the test's name after `X86`".into(),
                "name missing",
            ))
        }
    };
    li += 1;
    // Doc string and key=value lines, up to the init block.
    let mut doc = None;
    let init_start;
    loop {
        let Some(&(s, e)) = ls.get(li) else {
            return Err(diag(
                src.len(),
                src.len(),
                "expected the init block `{ ... }`, found the end of the file".into(),
                "init block missing",
            ));
        };
        let line = src[s..e].trim();
        if line.is_empty() {
            li += 1;
            continue;
        }
        if line.starts_with('{') {
            init_start = s + src[s..e].find('{').unwrap_or(0);
            break;
        }
        if line.starts_with('"') {
            // A doc string may span lines.
            let from = s + src[s..e].find('"').unwrap_or(0) + 1;
            let Some(close) = src[from..].find('"') else {
                return Err(diag(
                    from - 1,
                    from,
                    "unterminated doc string: expected `\"`".into(),
                    "starts here",
                ));
            };
            doc = Some(src[from..from + close].to_string());
            let end = from + close;
            while li < ls.len() && ls[li].1 < end {
                li += 1;
            }
            li += 1;
            continue;
        }
        if line.contains('=') {
            li += 1;
            continue;
        }
        let at = s + (src[s..e].len() - src[s..e].trim_start().len());
        return Err(diag(
            at,
            e,
            format!("expected `key=value`, a doc string or the init block `{{`, found `{line}`"),
            "unexpected line",
        ));
    }
    // Init block.
    let Some(close) = src[init_start..].find('}') else {
        return Err(diag(
            init_start,
            init_start + 1,
            "unterminated init block: expected `}`".into(),
            "opened here",
        ));
    };
    let init_end = init_start + close;
    let init = parse_init(file, src, init_start + 1, init_end)?;
    // Thread table: the header row `P0 | P1 ;`, then instruction rows.
    li = ls.partition_point(|&(s, _)| s <= init_end);
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let tail_start;
    loop {
        let Some(&(s, e)) = ls.get(li) else {
            tail_start = src.len();
            break;
        };
        let (s, e) = if s <= init_end {
            (init_end + 1, e)
        } else {
            (s, e)
        };
        let line = src[s..e].trim();
        let first = line
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '~')
            .next()
            .unwrap_or("");
        if matches!(line.chars().next(), Some('~'))
            || matches!(first, "exists" | "forall" | "locations" | "filter")
        {
            tail_start = s;
            break;
        }
        if !line.is_empty() {
            rows.push((s, e));
        }
        li += 1;
    }
    let Some(&(hs, he)) = rows.first() else {
        return Err(diag(
            init_end,
            init_end + 1,
            "expected the thread table (`P0 | P1 ;`) after the init block".into(),
            "threads missing",
        ));
    };
    let cells = |s: usize, e: usize| -> Result<Vec<(usize, usize)>, Diagnostic> {
        let line = &src[s..e];
        let trimmed_end = s + line.trim_end().len();
        if !src[s..trimmed_end].ends_with(';') {
            return Err(diag(
                trimmed_end,
                trimmed_end,
                "expected `;` at the end of a thread-table row".into(),
                "`;` missing",
            ));
        }
        let body_end = trimmed_end - 1;
        let mut out = Vec::new();
        let mut cs = s;
        for (i, c) in src[s..body_end].char_indices() {
            if c == '|' {
                out.push((cs, s + i));
                cs = s + i + 1;
            }
        }
        out.push((cs, body_end));
        Ok(out)
    };
    let head = cells(hs, he)?;
    for (k, &(cs, ce)) in head.iter().enumerate() {
        let t = src[cs..ce].trim();
        if t != format!("P{k}") {
            let at = cs + (src[cs..ce].len() - src[cs..ce].trim_start().len());
            return Err(diag(
                at,
                at + t.len().max(1),
                format!("expected the thread name `P{k}`, found `{t}`"),
                "threads are named P0, P1, ... in order",
            ));
        }
    }
    let n = head.len();
    let mut threads: Vec<Vec<Cell>> = vec![Vec::new(); n];
    for &(s, e) in &rows[1..] {
        let cs = cells(s, e)?;
        if cs.len() != n {
            return Err(diag(
                s,
                e,
                format!("expected {n} columns (one per thread), found {}", cs.len()),
                "wrong number of columns",
            ));
        }
        for (t, &(a, b)) in cs.iter().enumerate() {
            let mut lx = Lexer::new(file, src, a, b)?;
            // A label `L0:` may precede an instruction.
            if let (Some((Tok::Ident(l), sp)), Some((Tok::Punct(":"), _))) =
                (lx.toks.first().cloned(), lx.toks.get(1))
            {
                threads[t].push(Cell::Label(l, sp));
                lx.pos = 2;
            }
            if lx.at_end() {
                continue;
            }
            threads[t].push(Cell::Instr(instr(&mut lx)?));
        }
    }
    let (quant, cond, cond_span, locations, filter) =
        parse_tail(file, src, original, tail_start, true)?;
    Ok(Test {
        name,
        doc,
        init,
        threads,
        quant,
        cond,
        cond_span,
        locations,
        filter,
    })
}

/// The init block's inside: `x=0; 0:EAX=1;`, `[x] = 0;`, `int x = 0;`.
pub(crate) fn parse_init(
    file: &str,
    src: &str,
    start: usize,
    end: usize,
) -> Result<Vec<(Var, i64, Span)>, Diagnostic> {
    let mut lx = Lexer::new(file, src, start, end)?;
    let mut init = Vec::new();
    while !lx.at_end() {
        if lx.eat(";") {
            continue;
        }
        // herd7 accepts C-style types before a location (`int x = 0;`).
        if let Some(Tok::Ident(t)) = lx.peek() {
            if matches!(
                t.as_str(),
                "int" | "uint32_t" | "int32_t" | "uint64_t" | "int64_t"
            ) {
                if let Some((Tok::Ident(_), _)) = lx.toks.get(lx.pos + 1) {
                    lx.pos += 1;
                }
            }
        }
        let (v, sp) = lx.var()?;
        lx.expect("=")?;
        let k = lx.int()?;
        init.push((v, k, sp));
        if !lx.at_end() {
            lx.expect(";")?;
        }
    }
    Ok(init)
}

/// What a condition clause holds: quantifier, proposition and its span, `locations`,
/// `filter`.
pub(crate) type Tail = (Quant, Cond, Span, Vec<(Var, Span)>, Option<Cond>);

/// The clauses after the threads, from `start` to the end: `locations [...]`,
/// `filter (...)` and the condition. `upper`: register names are shown in capitals.
pub(crate) fn parse_tail(
    file: &str,
    src: &str,
    original: &str,
    start: usize,
    upper: bool,
) -> Result<Tail, Diagnostic> {
    let diag = |s: usize, e: usize, msg: String, label: &str| {
        Diagnostic::new(file, original, Span { start: s, end: e }, msg, label)
    };
    let mut lx = Lexer::new(file, src, start, src.len())?;
    lx.upper = upper;
    let mut locations = Vec::new();
    let mut filter = None;
    let mut cond = None;
    while !lx.at_end() {
        let sp = lx.span();
        if lx.eat("~") {
            match lx.ident("`exists` after `~`")? {
                (w, _) if w == "exists" => {}
                _ => return Err(diag(sp.start, sp.end, "expected `~exists`".into(), "here")),
            }
            let c = lx.cond()?;
            cond = Some((
                Quant::NotExists,
                c,
                Span {
                    start: sp.start,
                    end: lx.span().start,
                },
            ));
            continue;
        }
        let (w, wsp) = lx.ident("`exists`, `~exists`, `forall`, `locations` or `filter`")?;
        match w.as_str() {
            "exists" | "forall" => {
                let c = lx.cond()?;
                let q = if w == "exists" {
                    Quant::Exists
                } else {
                    Quant::Forall
                };
                cond = Some((
                    q,
                    c,
                    Span {
                        start: wsp.start,
                        end: lx.span().start,
                    },
                ));
            }
            "locations" => {
                lx.expect("[")?;
                while !lx.eat("]") {
                    let v = lx.var()?;
                    locations.push(v);
                    if !lx.eat(";") && !matches!(lx.peek(), Some(Tok::Punct("]"))) {
                        return Err(lx.err("`;` or `]`"));
                    }
                }
            }
            "filter" => filter = Some(lx.cond()?),
            _ => {
                return Err(diag(
                    wsp.start,
                    wsp.end,
                    format!(
                    "expected `exists`, `~exists`, `forall`, `locations` or `filter`, found `{w}`"
                ),
                    "unknown clause",
                ))
            }
        }
    }
    // herd7's C tests may leave the condition out: it is then `forall (true)`.
    let cond = match cond {
        None if !upper => Some((
            Quant::Forall,
            Cond::True,
            Span {
                start: src.len(),
                end: src.len(),
            },
        )),
        c => c,
    };
    let Some((quant, cond, cond_span)) = cond else {
        return Err(diag(
            src.len(),
            src.len(),
            "expected the final condition (`exists (...)`, `~exists (...)` or `forall (...)`)"
                .into(),
            "condition missing",
        ));
    };
    Ok((quant, cond, cond_span, locations, filter))
}

/// `[LOCK] MNEMONIC operand, operand`
fn instr(lx: &mut Lexer) -> Result<Instr, Diagnostic> {
    let start = lx.span();
    let (mut m, _) = lx.ident("an instruction")?;
    let mut locked = false;
    if m.eq_ignore_ascii_case("LOCK") {
        locked = true;
        m = lx.ident("an instruction after `LOCK`")?.0;
    }
    let mut args = Vec::new();
    while !lx.at_end() {
        let sp = lx.span();
        let op = if lx.eat("[") {
            let (name, _) = lx.ident("a location name")?;
            lx.expect("]")?;
            Operand::Mem(name)
        } else if lx.eat("$") {
            Operand::Imm(lx.int()?)
        } else {
            let (name, _) = lx.ident("an operand (`[x]`, `$1`, a register or a label)")?;
            if is_register(&name) {
                Operand::Reg(name.to_ascii_uppercase())
            } else {
                Operand::Label(name)
            }
        };
        let end = lx
            .toks
            .get(lx.pos.saturating_sub(1))
            .map(|t| t.1.end)
            .unwrap_or(sp.end);
        args.push((
            op,
            Span {
                start: sp.start,
                end,
            },
        ));
        if !lx.at_end() {
            lx.expect(",")?;
        }
    }
    let end = lx.toks.last().map(|t| t.1.end).unwrap_or(start.end);
    Ok(Instr {
        mnemonic: m.to_ascii_uppercase(),
        locked,
        args,
        span: Span {
            start: start.start,
            end,
        },
    })
}

pub fn is_register(name: &str) -> bool {
    matches!(
        name.to_ascii_uppercase().as_str(),
        "EAX"
            | "EBX"
            | "ECX"
            | "EDX"
            | "ESI"
            | "EDI"
            | "EBP"
            | "ESP"
            | "RAX"
            | "RBX"
            | "RCX"
            | "RDX"
            | "RSI"
            | "RDI"
            | "R8D"
            | "R9D"
            | "R10D"
            | "R11D"
            | "R12D"
            | "R13D"
            | "R14D"
            | "R15D"
    )
}
