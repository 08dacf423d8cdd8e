//! Tokens of a `.cub` file. Comments `(* ... *)` nest.

use crate::ast::Span;
use fencer_text::Diagnostic;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Lower(String),
    Upper(String),
    Int(i64),
    /// `#k`.
    ProcConst(u32),
    /// A decimal constant with no fractional part (`1.0`): a real number.
    Real(i64),
    Sym(&'static str),
    Eof,
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Lower(s) | Tok::Upper(s) => format!("`{s}`"),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Real(n) => format!("`{n}.0`"),
            Tok::ProcConst(k) => format!("`#{k}`"),
            Tok::Sym(s) => format!("`{s}`"),
            Tok::Eof => "the end of the file".into(),
        }
    }
}

const SYMS: &[&str] = &[
    ":=", "<>", "<=", ">=", "&&", "||", "(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "<", ">",
    "+", "-", "*", ".", "|", "_", "@",
];

pub fn lex(path: &str, src: &str) -> Result<Vec<(Tok, Span)>, Diagnostic> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err = |at: usize, len: usize, msg: String, label: &str| {
        Diagnostic::new(
            path,
            src,
            Span {
                start: at,
                end: (at + len).min(src.len()),
            },
            msg,
            label,
        )
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"(*") {
            let start = i;
            let mut depth = 0;
            loop {
                if i >= b.len() {
                    return Err(err(
                        start,
                        2,
                        "unterminated comment: expected `*)`".into(),
                        "this comment is never closed",
                    ));
                }
                if b[i..].starts_with(b"(*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*)") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            continue;
        }
        let start = i;
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'';
        if c.is_ascii_alphabetic()
            || (c == b'_' && i + 1 < b.len() && b[i + 1].is_ascii_alphanumeric())
        {
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let s = src[start..i].to_string();
            let t = if c.is_ascii_uppercase() {
                Tok::Upper(s)
            } else {
                Tok::Lower(s)
            };
            out.push((t, Span { start, end: i }));
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let n = src[start..i].parse::<i64>().map_err(|_| {
                err(
                    start,
                    i - start,
                    "this number is too large".into(),
                    "at most 2^63 - 1",
                )
            })?;
            if i < b.len() && b[i] == b'.' && i + 1 < b.len() && b[i + 1].is_ascii_digit() {
                let f = i + 1;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if src[f..i].bytes().any(|d| d != b'0') {
                    return Err(err(
                        start,
                        i - start,
                        "only whole real constants (`2.0`) are supported".into(),
                        "a fractional constant",
                    ));
                }
                out.push((Tok::Real(n), Span { start, end: i }));
                continue;
            }
            out.push((Tok::Int(n), Span { start, end: i }));
            continue;
        }
        if c == b'#' {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let k = src[start + 1..i]
                .parse::<u32>()
                .ok()
                .filter(|k| *k >= 1 && *k <= 64);
            match k {
                Some(k) => out.push((Tok::ProcConst(k), Span { start, end: i })),
                None => {
                    return Err(err(
                        start,
                        (i - start).max(1),
                        "expected a process constant `#1` ... `#64`".into(),
                        "not a process constant",
                    ))
                }
            }
            continue;
        }
        match SYMS.iter().find(|s| b[i..].starts_with(s.as_bytes())) {
            Some(s) => {
                i += s.len();
                out.push((Tok::Sym(s), Span { start, end: i }));
            }
            None => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(err(
                    start,
                    ch.len_utf8(),
                    format!("unexpected character `{ch}`"),
                    "not part of Cubicle's syntax",
                ));
            }
        }
    }
    out.push((
        Tok::Eof,
        Span {
            start: src.len(),
            end: src.len(),
        },
    ));
    Ok(out)
}
