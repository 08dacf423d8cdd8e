//! Fence repair in the user's source: where each fence goes (an anchor next to a source
//! statement), the edit that writes it in the language's own syntax, the repaired text and
//! its diff. `fencer-repair` finds the fences on the IR; this is what maps them back.

use fencer_ir::{Program, SrcLoc};
use fencer_repair::{Fence, FenceKind, Position};
use std::path::Path;

/// The source languages repair writes fences into.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Text,
    Litmus,
    C,
}

/// The source language of a file, when repair can edit it.
pub fn input_kind(path: &Path) -> Option<Input> {
    match crate::Kind::of(path)? {
        crate::Kind::Fen => Some(Input::Text),
        crate::Kind::Litmus => Some(Input::Litmus),
        k if k.is_c() => Some(Input::C),
        _ => None,
    }
}

/// Where a fence goes in the source: as a statement right after the one at `loc` (a
/// store), or right before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Anchor {
    After(SrcLoc),
    Before(SrcLoc),
}

/// The source anchor of a fence position. After a store, the fence follows the store's
/// statement: clang at -O0 and the other front-ends keep statement order, so the new
/// statement compiles to a fence right after the store, on every path through it. Else it
/// goes before the statement of the instruction it precedes.
pub fn anchor(prog: &Program, p: Position) -> Option<(Anchor, String)> {
    let f = &prog.functions[p.func as usize];
    let body = &f.body;
    let a = if fencer_repair::rank(prog, p) == 0 {
        Anchor::After(body[p.pc as usize - 1].loc)
    } else if let Some(i) = body.get(p.pc as usize) {
        Anchor::Before(i.loc)
    } else {
        Anchor::After(body.last()?.loc)
    };
    let loc = match a {
        Anchor::After(l) | Anchor::Before(l) => l,
    };
    (loc.line > 0 && loc.file == 0).then(|| (a, f.name.clone()))
}

/// One edit of the source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// 1-based line it is anchored to.
    pub line: u32,
    /// Where it lands: a new line after (`true`) or before (`false`) the anchor line, or
    /// inline at a byte offset of it.
    pub how: How,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum How {
    LineAfter,
    LineBefore,
    Inline(usize),
}

pub fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Byte offset of 1-based column `col` (counted in characters) of `line`.
pub fn byte_at(line: &str, col: u32) -> usize {
    line.char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i)
}

/// The edit for a statement-language source (C, `.fen`): after the anchor's statement
/// (the first `;` from its column on), inline unless the line ends there; before it,
/// right after the statement before it on the line, else as a line of its own.
pub fn statement_edit(lines: &[&str], a: Anchor, text: &str) -> Option<Edit> {
    match a {
        Anchor::After(loc) => {
            let line = *lines.get(loc.line as usize - 1)?;
            let from = byte_at(line, loc.col);
            let semi = from + line[from..].find(';')?;
            let rest = line[semi + 1..].trim();
            if rest.is_empty() || rest.starts_with("//") {
                Some(Edit {
                    line: loc.line,
                    how: How::LineAfter,
                    text: text.to_string(),
                })
            } else {
                Some(Edit {
                    line: loc.line,
                    how: How::Inline(semi + 1),
                    text: format!(" {text}"),
                })
            }
        }
        Anchor::Before(loc) => {
            let line = *lines.get(loc.line as usize - 1)?;
            let upto = byte_at(line, loc.col);
            match line[..upto].rfind([';', '{', '}']) {
                Some(i) => Some(Edit {
                    line: loc.line,
                    how: How::Inline(i + 1),
                    text: format!(" {text}"),
                }),
                _ => Some(Edit {
                    line: loc.line,
                    how: How::LineBefore,
                    text: text.to_string(),
                }),
            }
        }
    }
}

/// The edit for a litmus test: a row of its own after (or before) the anchor's row, with
/// the fence (`MFENCE`, `SFENCE`) in the anchor's thread column and the other cells empty.
pub fn litmus_edit(lines: &[&str], a: Anchor, fence: &str) -> Option<Edit> {
    let (loc, how) = match a {
        Anchor::After(l) => (l, How::LineAfter),
        Anchor::Before(l) => (l, How::LineBefore),
    };
    let line = *lines.get(loc.line as usize - 1)?;
    let at = byte_at(line, loc.col);
    let body = line.trim_end().strip_suffix(';')?;
    let cells: Vec<&str> = body.split('|').collect();
    let mut start = 0;
    let mut column = None;
    for (i, c) in cells.iter().enumerate() {
        if at >= start && at <= start + c.len() {
            column = Some(i);
            break;
        }
        start += c.len() + 1;
    }
    let column = column?;
    let row: Vec<String> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let w = c.len();
            let cell = if i == column {
                format!(" {fence}")
            } else {
                String::new()
            };
            format!("{cell:<w$}")
        })
        .collect();
    Some(Edit {
        line: loc.line,
        how,
        text: format!("{};", row.join("|")),
    })
}

/// Two litmus rows with fences in different columns, as one.
pub fn merge_rows(a: &str, b: &str) -> String {
    let strip = |r: &str| r.trim_end().trim_end_matches(';').to_string();
    let (ra, rb) = (strip(a), strip(b));
    let cells: Vec<String> = ra
        .split('|')
        .zip(rb.split('|'))
        .map(|(x, y)| {
            if x.trim().is_empty() {
                y.to_string()
            } else {
                x.to_string()
            }
        })
        .collect();
    format!("{};", cells.join("|"))
}

/// Applies the edits to the source.
pub fn apply(src: &str, edits: &[Edit]) -> String {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    // Per line: the new lines before it and after it.
    let mut extra: Vec<(Vec<String>, Vec<String>)> = vec![(Vec::new(), Vec::new()); lines.len()];
    let mut inline: Vec<(usize, usize, &str)> = Vec::new();
    for e in edits {
        let i = e.line as usize - 1;
        if i >= lines.len() {
            continue;
        }
        match e.how {
            How::LineAfter | How::LineBefore => {
                let text = if e.text.contains('|') {
                    e.text.clone()
                } else {
                    format!("{}{}", indentation(&lines[i]), e.text)
                };
                if e.how == How::LineAfter {
                    extra[i].1.push(text);
                } else {
                    extra[i].0.push(text);
                }
            }
            How::Inline(at) => inline.push((i, at, &e.text)),
        }
    }
    // Right to left, so that earlier offsets stay valid.
    inline.sort_by_key(|&(i, at, _)| std::cmp::Reverse((i, at)));
    for (i, at, text) in inline {
        if at <= lines[i].len() && lines[i].is_char_boundary(at) {
            lines[i].insert_str(at, text);
        }
    }
    let mut outv = Vec::new();
    for (l, (before, after)) in lines.into_iter().zip(extra) {
        outv.extend(before);
        outv.push(l);
        outv.extend(after);
    }
    let mut s = outv.join("\n");
    if src.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// A unified diff of two texts (whole-file hunks of changed regions, 3 lines of context).
pub fn unified_diff(name: &str, a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    // Longest common subsequence: the sources are small.
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (' ' | '-' | '+', line of a, line of b, text).
    let mut ops: Vec<(char, usize, usize, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', i, j, a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i, j, a[i]));
            i += 1;
        } else {
            ops.push(('+', i, j, b[j]));
            j += 1;
        }
    }
    let mut outs = format!("--- {name}\n+++ {name} (repaired)\n");
    let ctx = 3;
    let mut k = 0;
    while k < ops.len() {
        if ops[k].0 == ' ' {
            k += 1;
            continue;
        }
        let start = k.saturating_sub(ctx);
        let mut end = k;
        // Extend the hunk while changes are within 2 * ctx of each other.
        let mut last_change = k;
        while end < ops.len() {
            if ops[end].0 != ' ' {
                last_change = end;
            } else if end - last_change > 2 * ctx {
                break;
            }
            end += 1;
        }
        let end = (last_change + ctx + 1).min(ops.len());
        let hunk = &ops[start..end];
        let a_start = hunk.iter().find(|o| o.0 != '+').map_or(hunk[0].1, |o| o.1);
        let b_start = hunk.iter().find(|o| o.0 != '-').map_or(hunk[0].2, |o| o.2);
        let a_len = hunk.iter().filter(|o| o.0 != '+').count();
        let b_len = hunk.iter().filter(|o| o.0 != '-').count();
        outs.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            a_start + 1,
            a_len,
            b_start + 1,
            b_len
        ));
        for o in hunk {
            outs.push_str(&format!("{}{}\n", o.0, o.3));
        }
        k = end;
    }
    outs
}

/// What to write for a fence of kind `k` in a source of this kind (`c11`: a C file that
/// includes `<stdatomic.h>`). A C11 release fence is what a store-store fence is on TSO
/// and PSO (loads are never delayed there, so its load-store half orders nothing more),
/// and fencer's C front-end reads it back as one; without `<stdatomic.h>` the GCC/clang
/// builtin says the same.
pub fn fence_text(kind: Input, c11: bool, k: FenceKind) -> &'static str {
    match (kind, c11, k) {
        (Input::C, true, FenceKind::Full) => "atomic_thread_fence(memory_order_seq_cst);",
        (Input::C, true, FenceKind::StoreStore) => "atomic_thread_fence(memory_order_release);",
        (Input::C, false, FenceKind::Full) => "__sync_synchronize();",
        (Input::C, false, FenceKind::StoreStore) => "__atomic_thread_fence(__ATOMIC_RELEASE);",
        (Input::Text, _, FenceKind::Full) => "fence;",
        (Input::Text, _, FenceKind::StoreStore) => "fence ss;",
        (Input::Litmus, _, FenceKind::Full) => "MFENCE",
        (Input::Litmus, _, FenceKind::StoreStore) => "SFENCE",
    }
}

/// The fences' anchors and edits, and the repaired source.
#[allow(clippy::type_complexity)]
pub fn place(
    kind: Input,
    lines: &[&str],
    prog: &Program,
    fences: &[Fence],
    fence_text: &dyn Fn(FenceKind) -> &'static str,
    alternate: bool,
    src: &str,
) -> (Vec<(Fence, Anchor, String, Edit)>, Vec<Fence>, String) {
    let mut placed = Vec::new();
    let mut unplaced = Vec::new();
    for &p in fences {
        let Some((mut a, func)) = anchor(prog, p.pos) else {
            unplaced.push(p);
            continue;
        };
        if alternate {
            if let Some(b) = other_anchor(prog, p.pos) {
                a = b;
            }
        }
        let e = match kind {
            Input::Litmus => litmus_edit(lines, a, fence_text(p.kind)),
            _ => statement_edit(lines, a, fence_text(p.kind)),
        };
        match e {
            Some(e) => placed.push((p, a, func, e)),
            None => unplaced.push(p),
        }
    }
    let mut edits: Vec<Edit> = Vec::new();
    for (_, _, _, e) in &placed {
        match edits
            .iter_mut()
            .find(|x| x.line == e.line && x.how == e.how)
        {
            // Two litmus fences on one row of instructions share one new row.
            Some(x) if kind == Input::Litmus => x.text = merge_rows(&x.text, &e.text),
            Some(x) if *x == *e => {}
            _ => edits.push(e.clone()),
        }
    }
    let new_src = apply(src, &edits);
    (placed, unplaced, new_src)
}

/// The anchor a fence position has when not the preferred one: before the access it
/// precedes when it follows a store, or after the instruction before it.
pub fn other_anchor(prog: &Program, p: Position) -> Option<Anchor> {
    let body = &prog.functions[p.func as usize].body;
    let a = if fencer_repair::rank(prog, p) == 0 {
        Anchor::Before(body.get(p.pc as usize)?.loc)
    } else {
        let prev = body.get((p.pc as usize).checked_sub(1)?)?;
        if matches!(
            prev.op,
            fencer_ir::Op::Jump(_)
                | fencer_ir::Op::Branch { .. }
                | fencer_ir::Op::Return(_)
                | fencer_ir::Op::SpinBack { .. }
        ) {
            return None;
        }
        Anchor::After(prev.loc)
    };
    let loc = match a {
        Anchor::After(l) | Anchor::Before(l) => l,
    };
    (loc.line > 0 && loc.file == 0).then_some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, col: u32) -> SrcLoc {
        SrcLoc::new(0, line, col)
    }

    #[test]
    fn statement_edits_go_after_the_statement_or_before_it() {
        let src = "void f() {\n  x = 1;\n  r = y;\n}\nvoid g() { y = 1; r = x; }\n";
        let lines: Vec<&str> = src.lines().collect();
        let f = "__sync_synchronize();";
        let e = statement_edit(&lines, Anchor::After(at(2, 5)), f).unwrap();
        assert_eq!(e.how, How::LineAfter);
        let e2 = statement_edit(&lines, Anchor::After(at(5, 14)), f).unwrap();
        assert_eq!(e2.how, How::Inline(17));
        let e3 = statement_edit(&lines, Anchor::Before(at(3, 3)), f).unwrap();
        assert_eq!(e3.how, How::LineBefore);
        let out = apply(src, &[e, e2, e3]);
        assert_eq!(
            out,
            "void f() {\n  x = 1;\n  __sync_synchronize();\n  __sync_synchronize();\n  r = y;\n}\n\
             void g() { y = 1; __sync_synchronize(); r = x; }\n"
        );
    }

    #[test]
    fn litmus_rows_get_mfence_in_the_right_column() {
        let src = " P0          | P1          ;\n MOV [x],$1  | MOV [y],$1  ;\n";
        let lines: Vec<&str> = src.lines().collect();
        let a = litmus_edit(&lines, Anchor::After(at(2, 2)), "MFENCE").unwrap();
        let b = litmus_edit(&lines, Anchor::After(at(2, 16)), "MFENCE").unwrap();
        assert_eq!(a.text, " MFENCE      |             ;");
        let row = merge_rows(&a.text, &b.text);
        assert_eq!(row, " MFENCE      | MFENCE      ;");
    }

    #[test]
    fn diff_shows_insertions_with_context() {
        let d = unified_diff("f", "a\nb\nc\n", "a\nb\nX\nc\n");
        assert_eq!(
            d,
            "--- f\n+++ f (repaired)\n@@ -1,3 +1,4 @@\n a\n b\n+X\n c\n"
        );
    }
}
