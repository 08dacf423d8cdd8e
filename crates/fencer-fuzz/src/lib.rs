//! A fuzzer for the front-ends: random inputs that look like programs (long operator
//! chains, deep nesting, huge numbers, many threads and registers, unicode, truncated
//! files) and random byte mutations of real ones, fed to parsing and lowering. Bad input
//! must end in a diagnostic, never a panic, and the IR must stay shallow, since the
//! machine recurses over expressions.
//!
//! Input `i` of a campaign with seed `s` depends on `(s, i)` only, so that one failing
//! input is regenerated from its two numbers (`fencer-fuzz --print I`).

use fencer_ir::{CondExpr, Expr, Op, Program};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[cfg(feature = "c")]
mod c;

/// No expression or condition of a lowered program may be deeper than this. The
/// front-ends promise less (64 for `.fen` code, balanced trees elsewhere); this is the
/// line past which a recursive pass over the IR is at risk.
pub const MAX_IR_DEPTH: u32 = 256;

/// Generated programs stop growing at about this many bytes (mutations may add more).
const MAX_LEN: usize = 2 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frontend {
    Fen,
    Litmus,
    /// Textual LLVM 14 IR, as clang-14 writes it for C (cargo feature `c`).
    #[cfg(feature = "c")]
    C,
}

impl Frontend {
    pub fn parse(s: &str) -> Option<Frontend> {
        match s {
            "fen" => Some(Frontend::Fen),
            "litmus" => Some(Frontend::Litmus),
            #[cfg(feature = "c")]
            "c" => Some(Frontend::C),
            _ => None,
        }
    }
}

pub use fencer_testgen::Rng;

/// What the fuzzer asks of the generator's random numbers beyond what tests need.
pub trait Sizes {
    /// A size: usually small, sometimes large, rarely huge (the inputs that overflowed).
    fn size(&mut self, small: u64, large: u64, huge: u64) -> u64;
}

impl Sizes for Rng {
    fn size(&mut self, small: u64, large: u64, huge: u64) -> u64 {
        match self.below(1000) {
            0 | 1 => self.below(huge) + 1,
            2..=29 => self.below(large) + 1,
            _ => self.below(small) + 1,
        }
    }
}

/// Real inputs to mutate, read once per campaign.
#[derive(Default)]
pub struct Corpus {
    pub files: Vec<String>,
}

impl Corpus {
    /// Every file under `dirs` (recursively) whose name ends in `ext`.
    pub fn load(dirs: &[std::path::PathBuf], ext: &str) -> Corpus {
        let mut files = Vec::new();
        let mut stack: Vec<std::path::PathBuf> = dirs.to_vec();
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths {
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().ends_with(ext) {
                    if let Ok(s) = std::fs::read_to_string(&p) {
                        files.push(s);
                    }
                }
            }
        }
        Corpus { files }
    }

    /// The corpus the repository ships: `examples/*.fen` and `bench/fen`, or
    /// `../shared/litmus/x86`, relative to the workspace root.
    pub fn default_for(frontend: Frontend) -> Corpus {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        match frontend {
            Frontend::Fen => Corpus::load(&[root.join("examples"), root.join("bench/fen")], ".fen"),
            Frontend::Litmus => Corpus::load(&[root.join("../shared/litmus/x86")], ".litmus"),
            #[cfg(feature = "c")]
            Frontend::C => c::corpus(&[root.join("../shared/bench/c"), root.join("examples/c")]),
        }
    }
}

/// Input `index` of the campaign with `seed`.
pub fn input(frontend: Frontend, corpus: &Corpus, seed: u64, index: u64) -> String {
    let mut r = Rng::new(seed ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03));
    r.next_u64();
    #[cfg(feature = "c")]
    if frontend == Frontend::C {
        return c::input(&mut r, corpus);
    }
    let base = match (r.below(10), corpus.files.is_empty()) {
        (0..=4, false) => r.pick(&corpus.files).clone(),
        _ => match frontend {
            Frontend::Fen if r.chance(30) => {
                fencer_testgen::program(r.next_u64(), &fencer_testgen::Shape::default())
            }
            Frontend::Fen => gen_fen(&mut r),
            Frontend::Litmus => gen_litmus(&mut r),
            #[cfg(feature = "c")]
            Frontend::C => unreachable!("handled above"),
        },
    };
    let mutations = match r.below(10) {
        0..=3 => 0,
        4..=7 => r.below(3) + 1,
        _ => r.below(20) + 1,
    };
    let mut bytes = base.into_bytes();
    for _ in 0..mutations {
        mutate(&mut r, &mut bytes, frontend);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Snippets that make interesting programs when spliced in anywhere.
const FEN_SNIPPETS: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&&",
    "||",
    "!",
    "~",
    "<<",
    ">>",
    "==",
    "<",
    "=",
    " else if (r == 1) { x = 1; }",
    " else ",
    "if (",
    "while (",
    "assert(",
    "assume(",
    "fence;",
    "r = ",
    "x",
    "r",
    "p.r",
    "9223372036854775807",
    "9223372036854775808",
    "0x7fffffffffffffff",
    "0xffffffffffffffffff",
    "-9223372036854775808",
    "é",
    "∀",
    "\u{0}",
    "\t",
    "\n",
    "/*",
    "*/",
    "//",
    "thread q { r = 1; }",
    "fn f(a) { return a; }",
    "spawn f(1)",
    "join(",
    "cas(x, 0, 1)",
    "fetch_add(x, 1)",
    "xchg(x, 2)",
    "lock(m);",
    "exists (",
    "forall (",
    "shared y[3] = {1, 2, 3};",
    "mutex m;",
    "0",
    "1",
];

const LITMUS_SNIPPETS: &[&str] = &[
    "(",
    ")",
    "/\\",
    "\\/",
    "~",
    "[x]",
    "0:EAX",
    "1:EBX=1",
    "=",
    ";",
    "|",
    "{",
    "}",
    "$1",
    "MOV [x],$1",
    "MOV EAX,[y]",
    "MFENCE",
    "XCHG [x],EAX",
    "LOCK ADD [x],$1",
    "CMP EAX,$0",
    "JNE LC00",
    "LC00:",
    "exists",
    "~exists",
    "forall",
    "locations [x;y;]",
    "filter (",
    "true",
    "false",
    "9223372036854775807",
    "-9223372036854775808",
    "0x",
    "99999999999999999999",
    "é",
    "∀",
    "\u{0}",
    "\n",
    "(*",
    "*)",
    "#",
    "P0",
    " | P7 ;",
    "X86 T\n",
    "\"",
    "int x=0;",
];

pub(crate) fn mutate(r: &mut Rng, b: &mut Vec<u8>, frontend: Frontend) {
    let snippets = match frontend {
        Frontend::Fen => FEN_SNIPPETS,
        Frontend::Litmus => LITMUS_SNIPPETS,
        #[cfg(feature = "c")]
        Frontend::C => c::SNIPPETS,
    };
    let n = b.len() as u64;
    let at = r.below(n + 1) as usize;
    // Past a few MiB only shrink: big inputs are slow and no more interesting.
    let kind = if b.len() > 4 * MAX_LEN {
        r.below(3)
    } else {
        r.below(9)
    };
    match kind {
        // Flip a byte.
        0 if n > 0 => {
            let i = r.below(n) as usize;
            b[i] ^= 1 << r.below(8);
        }
        // Delete a range.
        1 if n > 0 => {
            let len = r.size(8, 200, 5000) as usize;
            let end = (at + len).min(b.len());
            b.drain(at..end);
        }
        // Truncate.
        2 => b.truncate(at),
        // Repeat a range: turns one `(` or `+ x` into thousands.
        3 if n > 0 => {
            let len = (r.size(4, 30, 200) as usize).min(b.len() - at.min(b.len()));
            let piece: Vec<u8> = b[at..at + len].to_vec();
            let times = (r.size(4, 500, 60000) as usize).min(MAX_LEN / len.max(1));
            let mut rep = Vec::with_capacity(piece.len() * times);
            for _ in 0..times {
                rep.extend_from_slice(&piece);
            }
            b.splice(at..at, rep);
        }
        // A random byte.
        4 => b.insert(at, r.next_u64() as u8),
        // Deepen or lengthen where the result still parses, often enough.
        5 | 6 => structured(r, b, frontend),
        // Snippets, sometimes many times over.
        _ => {
            let s = r.pick(snippets).as_bytes();
            let times = r.size(2, 100, 60000) as usize;
            let mut rep = Vec::with_capacity(s.len() * times);
            for _ in 0..times {
                rep.extend_from_slice(s);
            }
            b.splice(at..at, rep);
        }
    }
}

/// A literal: mostly small, sometimes extreme, rarely too large for 64 bits (which the
/// lexer refuses, so that a program with one is never parsed further).
/// Positions just after each occurrence of `pat`.
fn after_each(b: &[u8], pat: &[u8]) -> Vec<usize> {
    b.windows(pat.len())
        .enumerate()
        .filter(|(_, w)| *w == pat)
        .map(|(i, _)| i + pat.len())
        .collect()
}

fn repeat(piece: &str, times: u64) -> Vec<u8> {
    piece.repeat(times as usize).into_bytes()
}

/// Edits that keep a program well formed most of the time while making it long or deep:
/// an operator chain before a `;`, an `else if` chain after a `}`, parentheses around
/// what follows a `(`; in litmus conditions, conjuncts, parentheses and `~`.
fn structured(r: &mut Rng, b: &mut Vec<u8>, frontend: Frontend) {
    let n = r.size(8, 2000, 60000);
    match frontend {
        Frontend::Fen => match r.below(3) {
            0 => {
                let spots = after_each(b, b";");
                if let Some(&p) = spots.get(r.below(spots.len() as u64) as usize) {
                    let op = r.pick(FEN_BINOPS);
                    let term = r.pick(&["1", "0", "x", "r0", "(1)", "x0", "r1 * 2"]);
                    b.splice(p - 1..p - 1, repeat(&format!(" {op} {term}"), n));
                }
            }
            1 => {
                let spots = after_each(b, b"}");
                if let Some(&p) = spots.get(r.below(spots.len() as u64) as usize) {
                    let cond = r.pick(&["r0 == 1", "x", "1", "r1 < 2 && x0"]);
                    b.splice(p..p, repeat(&format!(" else if ({cond}) {{ r0 = 1; }}"), n));
                }
            }
            _ => parens(r, b, b"(", n.min(400)),
        },
        Frontend::Litmus => {
            let Some(&c) = after_each(b, b"exists")
                .last()
                .or(after_each(b, b"forall").last())
            else {
                return;
            };
            let Some(open) = b[c..].iter().position(|&x| x == b'(').map(|k| c + k + 1) else {
                return;
            };
            match r.below(3) {
                0 => {
                    let atom = r.pick(&["0:EAX=0 /\\ ", "x=1 \\/ ", "[y]=0 /\\ ", "true /\\ "]);
                    b.splice(open..open, repeat(atom, n));
                }
                1 => {
                    let close = b.iter().rposition(|&x| x == b')').unwrap_or(b.len());
                    let k = n.min(400) as usize;
                    b.splice(close..close, repeat(")", k as u64));
                    b.splice(open..open, repeat("(", k as u64));
                }
                _ => b.splice(open..open, repeat("~", n.min(400))).for_each(drop),
            }
        }
        #[cfg(feature = "c")]
        Frontend::C => {}
    }
}

/// `k` more parentheses around the text after a random `(`, closed after the next `)`.
fn parens(r: &mut Rng, b: &mut Vec<u8>, open: &[u8], k: u64) {
    let spots = after_each(b, open);
    let Some(&p) = spots.get(r.below(spots.len() as u64) as usize) else {
        return;
    };
    let Some(q) = b[p..].iter().position(|&x| x == b')').map(|k| p + k + 1) else {
        return;
    };
    b.splice(q..q, repeat(")", k));
    b.splice(p..p, repeat("(", k));
}

fn number(r: &mut Rng) -> String {
    match r.below(1000) {
        0 => "9223372036854775808".into(),
        1 => format!("0x{:x}{:x}", r.next_u64(), r.next_u64()),
        2..=30 => i64::MAX.to_string(),
        31..=60 => format!("0x{:x}", r.next_u64() >> 1),
        61..=90 => (r.next_u64() >> 1).to_string(),
        91..=200 => "0".into(),
        _ => r.below(5).to_string(),
    }
}

const FEN_BINOPS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&",
    "||",
];

/// An expression over `names`, with long chains and deep nesting now and then.
fn fen_expr(r: &mut Rng, names: &[String], depth: u32, out: &mut String) {
    let atom = |r: &mut Rng, out: &mut String| {
        if r.chance(50) && !names.is_empty() {
            out.push_str(r.pick(names).as_str());
        } else {
            out.push_str(&number(r));
        }
    };
    match r.below(10) {
        _ if depth > 150 || out.len() > MAX_LEN => atom(r, out),
        0 => {
            let n = r.size(3, 40, 400) as usize;
            for _ in 0..n {
                out.push('(');
            }
            fen_expr(r, names, depth + n as u32, out);
            for _ in 0..n {
                out.push(')');
            }
        }
        1 => {
            out.push_str(r.pick::<&str>(&["-", "!", "~"]));
            fen_expr(r, names, depth + 1, out);
        }
        2..=4 => {
            // A chain: one operator, or a mix.
            let n = r.size(4, 200, 100_000);
            let one = r.chance(50).then(|| *r.pick(FEN_BINOPS));
            fen_expr(r, names, depth + 1, out);
            for _ in 0..n {
                out.push(' ');
                out.push_str(one.unwrap_or_else(|| *r.pick(FEN_BINOPS)));
                out.push(' ');
                if r.chance(90) || out.len() > MAX_LEN {
                    atom(r, out);
                } else {
                    out.push('(');
                    fen_expr(r, names, depth + 1, out);
                    out.push(')');
                }
            }
        }
        _ => atom(r, out),
    }
}

fn gen_fen(r: &mut Rng) -> String {
    let mut s = String::new();
    let nshared = r.size(4, 50, 2000);
    let mut shared = Vec::new();
    for i in 0..nshared {
        if r.chance(20) {
            let n = r.size(4, 100, 1_000_001);
            s.push_str(&format!("shared a{i}[{n}] = {};\n", number(r)));
        } else {
            s.push_str(&format!("shared x{i} = {};\n", number(r)));
            shared.push(format!("x{i}"));
        }
    }
    s.push_str("mutex m;\nfn f(a) { return a + 1; }\n");
    let nthreads = r.size(3, 40, 500);
    let mut regs_of = Vec::new();
    for t in 0..nthreads {
        let mut names = shared.clone();
        let nregs = r.size(4, 50, 3000);
        s.push_str(&format!("thread p{t} {{\n"));
        for k in 0..nregs {
            s.push_str(&format!("  r{k} = {};\n", number(r)));
            names.push(format!("r{k}"));
        }
        let nstmts = r.size(6, 60, 1000);
        for _ in 0..nstmts {
            if s.len() > MAX_LEN {
                break;
            }
            fen_stmt(r, &names, &shared, &mut s, 0);
        }
        s.push_str("}\n");
        regs_of.push(nregs);
    }
    if r.chance(60) {
        let mut names = shared.clone();
        for (t, n) in regs_of.iter().enumerate().take(20) {
            names.push(format!("p{t}.r{}", r.below(*n + 1)));
        }
        s.push_str(if r.chance(50) { "exists (" } else { "forall (" });
        fen_expr(r, &names, 0, &mut s);
        s.push_str(")\n");
    }
    s
}

fn fen_stmt(r: &mut Rng, names: &[String], shared: &[String], s: &mut String, depth: u32) {
    let lhs = |r: &mut Rng| -> String {
        if r.chance(30) && !shared.is_empty() {
            r.pick(shared).clone()
        } else {
            format!("r{}", r.below(8))
        }
    };
    match r.below(14) {
        0 | 1 if depth < 120 => {
            let arms = r.size(2, 100, 40000);
            for i in 0..arms {
                if s.len() > MAX_LEN {
                    break;
                }
                s.push_str(if i == 0 { "if (" } else { " else if (" });
                fen_expr(r, names, 0, s);
                s.push_str(") {\n");
                if r.chance(30) {
                    fen_stmt(r, names, shared, s, depth + 1);
                }
                s.push('}');
            }
            if r.chance(50) {
                s.push_str(" else { fence; }");
            }
            s.push('\n');
        }
        2 if depth < 120 => {
            s.push_str("while (");
            fen_expr(r, names, 0, s);
            s.push_str(") {\n");
            fen_stmt(r, names, shared, s, depth + 1);
            s.push_str("}\n");
        }
        3 => {
            s.push_str(r.pick::<&str>(&["assert(", "assume("]));
            fen_expr(r, names, 0, s);
            s.push_str(");\n");
        }
        4 => s.push_str("fence;\n"),
        5 => s.push_str("lock(m);\nunlock(m);\n"),
        6 if !shared.is_empty() => {
            let x = r.pick(shared).clone();
            let op = match r.below(3) {
                0 => format!("cas({x}, 0, 1)"),
                1 => format!("fetch_add({x}, {})", number(r)),
                _ => format!("xchg({x}, 2)"),
            };
            s.push_str(&format!("{} = {op};\n", lhs(r)));
        }
        7 => s.push_str("t = spawn f(1);\njoin(t);\n"),
        8 => {
            s.push_str("c = f(");
            fen_expr(r, names, 0, s);
            s.push_str(");\n");
        }
        _ => {
            s.push_str(&format!("{} = ", lhs(r)));
            fen_expr(r, names, 0, s);
            s.push_str(";\n");
        }
    }
}

const X86_REGS: &[&str] = &["EAX", "EBX", "ECX", "EDX", "ESI", "EDI"];

fn gen_litmus(r: &mut Rng) -> String {
    let nthreads = r.size(3, 30, 400) as usize;
    let nlocs = r.size(3, 30, 1000);
    let loc = |r: &mut Rng| format!("x{}", r.below(nlocs));
    let mut s = format!("X86 T{}\n\"fuzz\"\n{{\n", r.below(1000));
    for i in 0..r.size(3, 50, 2000) {
        if r.chance(50) {
            s.push_str(&format!("x{i}={};", number(r)));
        } else {
            let reg = *r.pick(X86_REGS);
            s.push_str(&format!(
                "{}:{reg}={};",
                r.below(nthreads as u64),
                number(r)
            ));
        }
    }
    s.push_str("\n}\n");
    let header: Vec<String> = (0..nthreads).map(|t| format!("P{t}")).collect();
    s.push_str(&format!(" {} ;\n", header.join(" | ")));
    let rows = r.size(4, 40, 3000);
    for row in 0..rows {
        if s.len() > MAX_LEN {
            break;
        }
        let cells: Vec<String> = (0..nthreads)
            .map(|_| {
                let reg = *r.pick(X86_REGS);
                let x = loc(r);
                match r.below(16) {
                    0 => format!("MOV [{x}],${}", number(r)),
                    1 => format!("MOV {reg},[{x}]"),
                    2 => "MFENCE".into(),
                    3 => format!("XCHG [{x}],{reg}"),
                    4 => format!("LOCK ADD [{x}],${}", number(r)),
                    5 => format!("LOCK XADD [{x}],{reg}"),
                    6 => format!("LOCK CMPXCHG [{x}],{reg}"),
                    7 => format!("CMP {reg},${}", number(r)),
                    8 => format!("JNE LC{}", r.below(rows)),
                    9 => format!("LC{row}:"),
                    10 => format!("INC {reg}"),
                    11 => format!("ADD [{x}],${}", number(r)),
                    12 => format!("MOV {reg},${}", number(r)),
                    13 => format!("JMP LC{}", r.below(rows)),
                    _ => String::new(),
                }
            })
            .collect();
        s.push_str(&format!(" {} ;\n", cells.join(" | ")));
    }
    s.push_str(r.pick::<&str>(&["exists ", "~exists ", "forall "]));
    let mut c = String::new();
    litmus_cond(r, nthreads as u64, nlocs, 0, &mut c);
    s.push_str(&c);
    s.push('\n');
    if r.chance(20) {
        s.push_str("locations [x0;x1;0:EAX;]\n");
    }
    if r.chance(10) {
        s.push_str("filter (");
        litmus_cond(r, nthreads as u64, nlocs, 0, &mut s);
        s.push_str(")\n");
    }
    s
}

fn litmus_cond(r: &mut Rng, threads: u64, locs: u64, depth: u32, out: &mut String) {
    let atom = |r: &mut Rng, out: &mut String| match r.below(8) {
        0 => out.push_str(r.pick::<&str>(&["true", "false"])),
        1..=3 => out.push_str(&format!("x{}={}", r.below(locs), number(r))),
        4 => out.push_str(&format!("[x{}]={}", r.below(locs), number(r))),
        _ => out.push_str(&format!(
            "{}:{}={}",
            r.below(threads),
            r.pick(X86_REGS),
            number(r)
        )),
    };
    match r.below(8) {
        _ if depth > 80 || out.len() > MAX_LEN => atom(r, out),
        0 => {
            let n = r.size(3, 40, 20000) as usize;
            out.push_str(&"(".repeat(n));
            litmus_cond(r, threads, locs, depth + n as u32, out);
            out.push_str(&")".repeat(n));
        }
        1 => {
            out.push('~');
            litmus_cond(r, threads, locs, depth + 1, out);
        }
        2..=4 => {
            let n = r.size(4, 300, 40000);
            let one = r.chance(50).then(|| *r.pick(&[" /\\ ", " \\/ "]));
            out.push('(');
            litmus_cond(r, threads, locs, depth + 1, out);
            for _ in 0..n {
                out.push_str(one.unwrap_or_else(|| *r.pick(&[" /\\ ", " \\/ "])));
                if r.chance(90) || out.len() > MAX_LEN {
                    atom(r, out);
                } else {
                    litmus_cond(r, threads, locs, depth + 1, out);
                }
            }
            out.push(')');
        }
        _ => {
            out.push('(');
            atom(r, out);
            out.push(')');
        }
    }
}

/// What happened to one input.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Parsed and lowered.
    Ok,
    /// Refused with a diagnostic.
    Refused,
    /// A bug: a panic, a bad diagnostic or IR too deep, with what went wrong.
    Failed(String),
}

/// Runs one input through a front-end, catching panics.
pub fn check(frontend: Frontend, src: &str) -> Outcome {
    let r = catch_unwind(AssertUnwindSafe(|| match frontend {
        Frontend::Fen => check_fen(src),
        Frontend::Litmus => check_litmus(src),
        #[cfg(feature = "c")]
        Frontend::C => c::check(src),
    }));
    match r {
        Ok(o) => o,
        Err(e) => {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Outcome::Failed(format!("panic: {msg}"))
        }
    }
}

fn diagnostic(d: &fencer_text::Diagnostic, src: &str) -> Outcome {
    let r = d.render(src);
    let lines = src.split('\n').count() as u32;
    if d.line < 1 || d.col < 1 || d.line > lines || !r.contains('^') {
        return Outcome::Failed(format!("bad diagnostic position: {r}"));
    }
    Outcome::Refused
}

fn check_fen(src: &str) -> Outcome {
    // The printer must print what parses back to the same text.
    if let Ok(ast) = fencer_text::parse_ast("fuzz.fen", src) {
        let text = fencer_text::print_ast(&ast);
        match fencer_text::parse_ast("printed.fen", &text) {
            Ok(back) if fencer_text::print_ast(&back) == text => {}
            Ok(_) => return Outcome::Failed("printing is not stable".into()),
            Err(d) => {
                return Outcome::Failed(format!(
                    "printed program does not parse: {}",
                    d.render(&text)
                ))
            }
        }
    }
    match fencer_text::parse_program("fuzz.fen", src) {
        Ok(p) => shallow(&p, &[]),
        Err(d) => diagnostic(&d, src),
    }
}

fn check_litmus(src: &str) -> Outcome {
    match fencer_litmus::parse_litmus("fuzz.litmus", src) {
        Ok(l) => {
            let mut conds = vec![&l.prop];
            conds.extend(l.filter.as_ref());
            shallow(&l.program, &conds)
        }
        Err(d) => diagnostic(&d, src),
    }
}

/// Depth, giving up past [`MAX_IR_DEPTH`] so that measuring cannot overflow either.
fn expr_depth(e: &Expr, budget: u32) -> u32 {
    if budget == 0 {
        return 1;
    }
    match e {
        Expr::Const(_) | Expr::Reg(_) => 1,
        Expr::AddrOf(_, a) | Expr::Un(_, a) => expr_depth(a, budget - 1) + 1,
        Expr::Bin(_, a, b) => expr_depth(a, budget - 1).max(expr_depth(b, budget - 1)) + 1,
    }
}

fn cond_depth(e: &CondExpr, budget: u32) -> u32 {
    if budget == 0 {
        return 1;
    }
    match e {
        CondExpr::Const(_) | CondExpr::Var(_) => 1,
        CondExpr::Un(_, a) => cond_depth(a, budget - 1) + 1,
        CondExpr::Bin(_, a, b) => cond_depth(a, budget - 1).max(cond_depth(b, budget - 1)) + 1,
    }
}

/// Whether every expression of the program is within [`MAX_IR_DEPTH`].
pub(crate) fn shallow(p: &Program, extra: &[&CondExpr]) -> Outcome {
    let b = MAX_IR_DEPTH + 1;
    let mut deepest = 0;
    for f in &p.functions {
        for i in &f.body {
            let mut es: Vec<&Expr> = Vec::new();
            let addr = |a: &'_ fencer_ir::Addr| -> Expr {
                match a {
                    fencer_ir::Addr::Global { index, .. } => index.clone(),
                    fencer_ir::Addr::Ptr(e) => e.clone(),
                }
            };
            let mut owned = Vec::new();
            match &i.op {
                Op::Local { expr, .. } => es.push(expr),
                Op::Assert { cond, .. } | Op::Assume(cond) | Op::Branch { cond, .. } => {
                    es.push(cond)
                }
                Op::Load { addr: a, .. } => owned.push(addr(a)),
                Op::Store { addr: a, value } => {
                    owned.push(addr(a));
                    es.push(value);
                }
                Op::Join(e) => es.push(e),
                Op::Return(Some(e)) => es.push(e),
                Op::Call { args, .. } => es.extend(args),
                Op::Spawn { arg, .. } => es.push(arg),
                _ => {}
            }
            for e in es.into_iter().chain(owned.iter()) {
                deepest = deepest.max(expr_depth(e, b));
            }
        }
    }
    if let Some(c) = &p.cond {
        deepest = deepest.max(cond_depth(&c.expr, b));
    }
    for c in extra {
        deepest = deepest.max(cond_depth(c, b));
    }
    if deepest > MAX_IR_DEPTH {
        return Outcome::Failed(format!("an IR expression deeper than {MAX_IR_DEPTH}"));
    }
    Outcome::Ok
}

/// Counts of a run.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub inputs: u64,
    pub ok: u64,
    pub refused: u64,
    /// `(index, what went wrong)`.
    pub failures: Vec<(u64, String)>,
}

/// The stack inputs are checked on: cargo's test threads have 2 MiB, the CLI's main
/// thread 8; checking on the smaller finds deep recursion with a margin.
pub const STACK: usize = 2 << 20;

/// [`run`] on a thread with a [`STACK`]-byte stack.
pub fn run_on_small_stack(
    frontend: Frontend,
    corpus: Corpus,
    seed: u64,
    start: u64,
    count: u64,
) -> Stats {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || run(frontend, &corpus, seed, start, count, &mut |_| {}))
        .expect("spawn the fuzzing thread")
        .join()
        .expect("panics are caught per input")
}

/// Inputs `start..start + count` of the campaign with `seed`. `progress` is called before
/// each input, so that a caller can leave a trace of the index that a stack overflow
/// (which no `catch_unwind` sees) killed.
pub fn run(
    frontend: Frontend,
    corpus: &Corpus,
    seed: u64,
    start: u64,
    count: u64,
    progress: &mut dyn FnMut(u64),
) -> Stats {
    let mut st = Stats::default();
    for i in start..start + count {
        progress(i);
        let src = input(frontend, corpus, seed, i);
        st.inputs += 1;
        match check(frontend, &src) {
            Outcome::Ok => st.ok += 1,
            Outcome::Refused => st.refused += 1,
            Outcome::Failed(m) => st.failures.push((i, m)),
        }
    }
    st
}

/// Silences the default panic message: panics are caught and counted.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|_| {}));
}
