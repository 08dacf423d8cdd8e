//! Fuzzing the C front-end's lowering: clang-14's LLVM IR of the C benchmarks, mutated
//! where the IR stays well formed often enough to reach the lowering (numbers, orderings,
//! operators, predicates, whole lines), and fed to `fencer_c::load_llvm_text` in-process.
//! Generating C and running clang per input would be a thousand times slower.

use crate::{mutate, shallow, Corpus, Frontend, Outcome, Rng};
use fencer_memory::ModelKind;
use std::path::{Path, PathBuf};

pub(crate) const SNIPPETS: &[&str] = &[
    "0",
    "-1",
    "9223372036854775807",
    " i64 ",
    " i8 ",
    "%1",
    "@x",
    "store i32 0, i32* @x, align 4\n",
    "fence seq_cst\n",
    "ret void\n",
    "}",
    "{",
    "(",
    ")",
    ", ",
    "\n",
];

/// The LLVM IR of every `.c` file under `dirs` (compiled once, at the start).
pub(crate) fn corpus(dirs: &[PathBuf]) -> Corpus {
    let mut files = Vec::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "c"))
        {
            if let Ok(t) = fencer_c::llvm_text(p, &fencer_c::CompileOptions::default()) {
                files.push(t);
            }
        }
    }
    Corpus { files }
}

const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "255",
    "2147483647",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "1000000000000",
];
const ORDERINGS: &[&str] = &[
    "unordered",
    "monotonic",
    "acquire",
    "release",
    "acq_rel",
    "seq_cst",
];
const BINOPS: &[&str] = &[
    "add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "shl", "lshr", "ashr", "and", "or", "xor",
];
const PREDICATES: &[&str] = &[
    "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
];

/// Replaces one whole-word occurrence of a word of `set` with another of `set`.
fn swap_word(
    r: &mut Rng,
    text: &str,
    set: &[&str],
    words: &mut Vec<(usize, usize)>,
) -> Option<String> {
    words.clear();
    let b = text.as_bytes();
    let boundary = |i: usize| i >= b.len() || !(b[i].is_ascii_alphanumeric() || b[i] == b'_');
    for w in set {
        for (i, _) in text.match_indices(&format!(" {w} ")) {
            if boundary(i + 1 + w.len()) {
                words.push((i + 1, i + 1 + w.len()));
            }
        }
    }
    if words.is_empty() {
        return None;
    }
    let (s, e) = *r.pick(words);
    Some(format!("{}{}{}", &text[..s], r.pick(set), &text[e..]))
}

/// Replaces one integer literal (not a name like `%5`, `i32` or `!12`) with an extreme one.
fn swap_int(r: &mut Rng, text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut spots = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && i > 0 && matches!(b[i - 1], b' ' | b'[' | b'(' | b'-') {
            let s = if b[i - 1] == b'-' { i - 1 } else { i };
            let mut e = i;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
            if s > 0 && matches!(b[s - 1], b' ' | b'[' | b'(') {
                spots.push((s, e));
            }
            i = e;
        } else {
            i += 1;
        }
    }
    if spots.is_empty() {
        return None;
    }
    let (s, e) = *r.pick(&spots);
    Some(format!("{}{}{}", &text[..s], r.pick(INTS), &text[e..]))
}

/// Deletes or duplicates one instruction line inside a function body.
fn line_edit(r: &mut Rng, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let body: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            lines[i].starts_with("  ") && !lines[i].contains("!dbg !")
                || lines[i].starts_with("  store")
                || lines[i].starts_with("  call")
        })
        .collect();
    if body.is_empty() {
        return None;
    }
    let i = *r.pick(&body);
    let mut out = String::with_capacity(text.len() + 200);
    for (k, l) in lines.iter().enumerate() {
        if k == i {
            if r.chance(50) {
                continue;
            }
            out.push_str(l);
        }
        out.push_str(l);
    }
    Some(out)
}

pub(crate) fn input(r: &mut Rng, corpus: &Corpus) -> String {
    if corpus.files.is_empty() {
        return String::new();
    }
    let mut text = r.pick(&corpus.files).clone();
    let mut words = Vec::new();
    let n = match r.below(10) {
        0 => 0,
        1..=6 => r.below(2) + 1,
        _ => r.below(6) + 1,
    };
    for _ in 0..n {
        let t = match r.below(12) {
            0..=2 => swap_int(r, &text),
            3 => swap_word(r, &text, ORDERINGS, &mut words),
            4 | 5 => swap_word(r, &text, BINOPS, &mut words),
            6 => swap_word(r, &text, PREDICATES, &mut words),
            7..=9 => line_edit(r, &text),
            // Bytes after the header only: a broken `target datalayout` is a known abort
            // (crates/fencer-cli/tests/llvm/c-bad-datalayout.ll) that would drown everything else.
            _ => {
                let at = text.find("\ndefine").unwrap_or(0);
                let mut b = text.as_bytes()[at..].to_vec();
                mutate(r, &mut b, Frontend::C);
                Some(format!("{}{}", &text[..at], String::from_utf8_lossy(&b)))
            }
        };
        if let Some(t) = t {
            text = t;
        }
    }
    // With the debug-info version flag, LLVM verifies the module and aborts on a broken
    // one (crates/fencer-cli/tests/llvm/c-verifier-abort.ll); without it, broken modules reach the
    // lowering, which is what is being fuzzed (at the cost of the source locations).
    if r.chance(50) {
        text = text.replace(
            "!\"Debug Info Version\", i32 3",
            "!\"Debug Info Version\", i32 0",
        );
    }
    // Which model to lower for rides on the text so that an input reproduces alone.
    let model = *r.pick(&["sc", "tso", "pso"]);
    format!("; fencer-fuzz model {model}\n{text}")
}

pub(crate) fn check(src: &str) -> Outcome {
    let model = match src.lines().next() {
        Some("; fencer-fuzz model sc") => ModelKind::Sc,
        Some("; fencer-fuzz model pso") => ModelKind::Pso,
        _ => ModelKind::Tso,
    };
    match fencer_c::load_llvm_text(Path::new("fuzz.ll"), src, model) {
        Ok(p) => shallow(&p, &[]),
        Err(_) => Outcome::Refused,
    }
}
