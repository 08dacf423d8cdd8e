//! The timeline: one column per thread, per store buffer and per memory cell, one row per
//! step. Each event sits in its thread's column with its source line (an update in its
//! buffer's column); buffer columns show what each buffer holds after every step, memory
//! columns the value of each cell (bold where the step changed it). Arrows: reads-from
//! (green), store order (blue), from-reads (orange, dashed), computed by
//! `fencer_robust::trace::Graph`. The failing thread, the blocked threads of a deadlock,
//! and a robustness cycle are drawn in red; the last row says what went wrong.
//!
//! Plain SVG 1.1 written by hand: columns and rows need no graph layout.

use crate::{esc, Execution};
use fencer_machine::{EventKind, Step};
use fencer_memory::Chan;
use fencer_robust::trace::{Edge, Graph};
use std::fmt::Write as _;

pub const ROW: f64 = 26.0;
const GUTTER: f64 = 44.0;
const MARGIN: f64 = 12.0;
const CHAR: f64 = 6.7;
/// Most memory columns drawn.
pub const MAX_CELLS: usize = 16;

/// Where things are, for the SVG and the HTML report (which highlights rows).
pub struct Layout {
    pub width: f64,
    pub height: f64,
    /// y of the top of step 1's row.
    pub top: f64,
    /// Columns: x, width, header.
    pub cols: Vec<(f64, f64, String)>,
    /// Column of each event.
    pub event_col: Vec<usize>,
    pub threads: usize,
    pub chans: Vec<(u32, Chan)>,
    pub locs: Vec<fencer_memory::Loc>,
    /// The verdict's text, as lines that fit the width.
    pub verdict: Vec<String>,
}

/// Splits `text` into lines of at most the characters `w` pixels hold (at most 4 lines).
fn wrap(text: &str, w: f64) -> Vec<String> {
    let max = ((w - 16.0) / CHAR).floor().max(10.0) as usize;
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    lines.push(cur);
    if lines.len() > 4 {
        lines.truncate(4);
        lines[3].push_str(" …");
    }
    lines.into_iter().map(|l| fit(&l, w)).collect()
}

fn width_for(chars: usize) -> f64 {
    (chars as f64 * CHAR + 18.0).clamp(84.0, 330.0)
}

fn fit(s: &str, w: f64) -> String {
    let max = ((w - 12.0) / CHAR).floor().max(3.0) as usize;
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// The label of event `i`: `L11 store x=1`.
pub fn label(x: &Execution, i: usize) -> String {
    let e = &x.events[i];
    format!("L{} {}", e.src.line, x.short(e))
}

pub fn layout(x: &Execution) -> Layout {
    let names = x.thread_names();
    let chans = x.channels();
    let locs = x.locations(MAX_CELLS);
    let ncols = names.len() + chans.len() + locs.len();
    let mut widest = vec![0usize; ncols];
    let mut event_col = Vec::with_capacity(x.events.len());
    for (i, e) in x.events.iter().enumerate() {
        let c = match e.step {
            Step::Thread(t) => t as usize,
            Step::Update(t, c) => {
                names.len()
                    + chans
                        .iter()
                        .position(|&k| k == (t, c))
                        .expect("an update's channel held something")
            }
        };
        event_col.push(c);
        widest[c] = widest[c].max(label(x, i).chars().count());
    }
    for (k, s) in x.states.iter().enumerate() {
        let _ = k;
        for (j, &(t, c)) in chans.iter().enumerate() {
            let col = names.len() + j;
            widest[col] = widest[col].max(x.buffer_text(s, t, c).chars().count());
        }
    }
    let mut cols = Vec::new();
    let mut cx = MARGIN + GUTTER;
    let headers = names
        .iter()
        .cloned()
        .chain(chans.iter().map(|&(t, c)| x.channel_name(t, c)))
        .chain(locs.iter().map(|&l| fencer_machine::loc_name(x.prog, l)));
    for (c, h) in headers.enumerate() {
        let w = if c >= names.len() + chans.len() {
            width_for(h.chars().count().max(4)).min(110.0)
        } else {
            width_for(widest[c].max(h.chars().count()).max(12))
        };
        cols.push((cx, w, h));
        cx += w;
    }
    let top = MARGIN + 22.0 + 18.0 + 26.0 + ROW;
    let rows = x.events.len() as f64 + 1.0;
    let width = (cx + MARGIN + 60.0).max(520.0);
    let verdict = wrap(&x.verdict_text(), width - 2.0 * MARGIN);
    Layout {
        width,
        height: top + rows * ROW + 18.0 + 16.0 * verdict.len() as f64 + MARGIN,
        verdict,
        top,
        cols,
        event_col,
        threads: names.len(),
        chans,
        locs,
    }
}

/// Arrows between events: (from position, to position, relation).
pub fn arrows(x: &Execution) -> Vec<(usize, usize, Edge)> {
    let g = Graph::new(&x.events);
    // Where a buffered store reached memory.
    let update_of = |store_pos: usize| -> Option<usize> {
        let id = x.events[store_pos].id;
        x.events
            .iter()
            .position(|e| matches!(e.kind, EventKind::Update { store, .. } if store == id))
    };
    let buffered = |p: usize| matches!(x.events[p].kind, EventKind::Store { buffered: true, .. });
    let in_memory = |p: usize| {
        if buffered(p) {
            update_of(p).unwrap_or(p)
        } else {
            p
        }
    };
    let mut out = Vec::new();
    for v in 0..g.len() {
        for &(w, e) in &g.succ[v] {
            if crate::dot::spawn_order(&g, v, w, e) {
                continue;
            }
            let (a, b) = (g.pos[v], g.pos[w]);
            match e {
                Edge::Po => {}
                Edge::Rf => {
                    let forwarded = matches!(
                        x.events[b].kind,
                        EventKind::Load {
                            forwarded: true,
                            ..
                        }
                    );
                    let a = if forwarded { a } else { in_memory(a) };
                    out.push((a, b, e));
                }
                Edge::Co => out.push((in_memory(a), in_memory(b), e)),
                Edge::Fr => out.push((a, in_memory(b), e)),
            }
        }
    }
    out.sort_by_key(|&(a, b, e)| (a, b, e.name()));
    out.dedup_by_key(|k| (k.0, k.1, k.2.name()));
    // A read-modify-write reads the write just before it in store order: one arrow (rf)
    // says both.
    let rf: Vec<(usize, usize)> = out
        .iter()
        .filter(|k| k.2 == Edge::Rf)
        .map(|k| (k.0, k.1))
        .collect();
    out.retain(|k| k.2 != Edge::Co || !rf.contains(&(k.0, k.1)));
    out
}

pub fn render(x: &Execution) -> String {
    let l = layout(x);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{:.0}" viewBox="0 0 {:.0} {:.0}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">"#,
        l.width, l.height, l.width, l.height
    );
    s.push_str(STYLE);
    let _ = writeln!(
        s,
        r#"<rect class="bg" x="0" y="0" width="{:.0}" height="{:.0}"/>"#,
        l.width, l.height
    );
    // Title and legend.
    let _ = writeln!(
        s,
        r#"<text class="title" x="{MARGIN}" y="{:.0}">{}</text>"#,
        MARGIN + 14.0,
        esc(&x.title())
    );
    let ly = MARGIN + 34.0;
    let mut lx = MARGIN;
    for (cls, name) in [
        ("rf", "reads-from"),
        ("co", "store order"),
        ("fr", "from-read"),
    ] {
        let _ = writeln!(
            s,
            r#"<path class="arrow {cls}" d="M{lx:.0} {ly:.0} h26"/><text class="legend" x="{:.0}" y="{:.0}">{name}</text>"#,
            lx + 30.0,
            ly + 4.0
        );
        lx += 40.0 + name.len() as f64 * CHAR + 14.0;
    }
    let _ = writeln!(
        s,
        r#"<rect class="ev buf" x="{lx:.0}" y="{:.0}" width="14" height="10"/><text class="legend" x="{:.0}" y="{:.0}">store buffer</text>"#,
        ly - 5.0,
        lx + 18.0,
        ly + 4.0
    );
    // Column headers and separators.
    let hy = MARGIN + 22.0 + 18.0;
    for (c, (cx, w, h)) in l.cols.iter().enumerate() {
        let kind = if c < l.threads {
            "thread"
        } else if c < l.threads + l.chans.len() {
            "bufcol"
        } else {
            "memcol"
        };
        let _ = writeln!(
            s,
            r#"<rect class="col {kind}" x="{cx:.1}" y="{hy:.0}" width="{w:.1}" height="{:.0}"/>"#,
            l.top + (x.events.len() as f64 + 1.0) * ROW - hy
        );
        let _ = writeln!(
            s,
            r#"<text class="head" x="{:.1}" y="{:.0}" text-anchor="middle">{}</text>"#,
            cx + w / 2.0,
            hy + 17.0,
            esc(&fit(h, *w))
        );
    }
    // The initial row: initial memory.
    let iy = l.top - ROW;
    let _ = writeln!(
        s,
        r#"<text class="stepno" x="{:.0}" y="{:.0}" text-anchor="end">init</text>"#,
        MARGIN + GUTTER - 8.0,
        iy + 17.0
    );
    let mem0 = l.threads + l.chans.len();
    for (j, &loc) in l.locs.iter().enumerate() {
        let (cx, w, _) = &l.cols[mem0 + j];
        let _ = writeln!(
            s,
            r#"<text class="mem" x="{:.1}" y="{:.0}" text-anchor="middle">{}</text>"#,
            cx + w / 2.0,
            iy + 17.0,
            esc(&x.cell_text(&x.states[0], loc))
        );
    }
    // Rows.
    for (i, e) in x.events.iter().enumerate() {
        let y = l.top + i as f64 * ROW;
        let _ = writeln!(s, r#"<g class="row" id="row-{}">"#, i + 1);
        let _ = writeln!(
            s,
            r#"<rect class="rowbg" x="{MARGIN}" y="{y:.0}" width="{:.0}" height="{ROW}"/>"#,
            l.width - 2.0 * MARGIN
        );
        let _ = writeln!(
            s,
            r#"<text class="stepno" x="{:.0}" y="{:.0}" text-anchor="end">{}</text>"#,
            MARGIN + GUTTER - 8.0,
            y + 17.0,
            i + 1
        );
        let after = &x.states[i + 1];
        for (j, &(t, c)) in l.chans.iter().enumerate() {
            let col = l.threads + j;
            if l.event_col[i] == col {
                continue;
            }
            let text = x.buffer_text(after, t, c);
            if !text.is_empty() {
                let (cx, w, _) = &l.cols[col];
                let _ = writeln!(
                    s,
                    r#"<text class="bufc" x="{:.1}" y="{:.0}">{}</text>"#,
                    cx + 8.0,
                    y + 17.0,
                    esc(&fit(&text, *w))
                );
            }
        }
        for (j, &loc) in l.locs.iter().enumerate() {
            let (cx, w, _) = &l.cols[mem0 + j];
            let now = x.cell_text(after, loc);
            let changed = now != x.cell_text(&x.states[i], loc);
            let _ = writeln!(
                s,
                r#"<text class="mem{}" x="{:.1}" y="{:.0}" text-anchor="middle">{}</text>"#,
                if changed { " changed" } else { "" },
                cx + w / 2.0,
                y + 17.0,
                esc(&now)
            );
        }
        let (cx, w, _) = &l.cols[l.event_col[i]];
        let mut cls = match e.step {
            Step::Update(..) => "ev upd".to_string(),
            _ if matches!(e.kind, EventKind::Store { buffered: true, .. }) => "ev buf".into(),
            _ => "ev".into(),
        };
        if e.kind.faulted() {
            cls += " bad";
        }
        if x.highlight.contains(&i) {
            cls += " cycle";
        }
        let line = x.last().describe(x.prog, e, i + 1);
        let _ = writeln!(
            s,
            r#"<rect class="{cls}" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.0}" rx="4"><title>{}</title></rect>"#,
            cx + 4.0,
            y + 3.0,
            w - 8.0,
            ROW - 6.0,
            esc(&format!(
                "step {}: {} {}:{}:{} {}",
                i + 1,
                line.thread,
                line.file,
                line.line,
                line.column,
                line.op
            ))
        );
        let _ = writeln!(
            s,
            r#"<text class="evt" x="{:.1}" y="{:.0}">{}</text>"#,
            cx + 9.0,
            y + 17.0,
            esc(&fit(&label(x, i), *w))
        );
        s.push_str("</g>\n");
    }
    // Arrows, above the rows.
    let mut bulge = 0.0;
    for (a, b, e) in arrows(x) {
        let (ca, cb) = (l.event_col[a], l.event_col[b]);
        let ya = l.top + a as f64 * ROW + ROW / 2.0;
        let yb = l.top + b as f64 * ROW + ROW / 2.0;
        let (xa, wa, _) = l.cols[ca];
        let (xb, wb, _) = l.cols[cb];
        let cyc = if x.highlight.contains(&a) && x.highlight.contains(&b) {
            " cyc"
        } else {
            ""
        };
        let d = if ca == cb {
            bulge = (bulge + 8.0) % 32.0;
            let xr = xa + wa - 4.0;
            let k = 18.0 + bulge;
            format!(
                "M{xr:.1} {ya:.1} C{:.1} {ya:.1} {:.1} {yb:.1} {xr:.1} {yb:.1}",
                xr + k,
                xr + k
            )
        } else if ca < cb {
            let (x1, x2) = (xa + wa - 4.0, xb + 4.0);
            let k = ((x2 - x1) / 2.0).max(20.0);
            format!(
                "M{x1:.1} {ya:.1} C{:.1} {ya:.1} {:.1} {yb:.1} {x2:.1} {yb:.1}",
                x1 + k,
                x2 - k
            )
        } else {
            let (x1, x2) = (xa + 4.0, xb + wb - 4.0);
            let k = ((x1 - x2) / 2.0).max(20.0);
            format!(
                "M{x1:.1} {ya:.1} C{:.1} {ya:.1} {:.1} {yb:.1} {x2:.1} {yb:.1}",
                x1 - k,
                x2 + k
            )
        };
        let _ = writeln!(
            s,
            r#"<path class="arrow {}{cyc}" d="{d}"><title>{} from step {} to step {}</title></path>"#,
            e.name(),
            e.name(),
            a + 1,
            b + 1
        );
    }
    // The verdict row.
    let vy = l.top + x.events.len() as f64 * ROW;
    let s_end = x.last();
    for t in x.marked_threads() {
        let (cx, w, _) = &l.cols[t as usize];
        let what = match (&x.fault, x.cex.as_ref().map(|c| c.kind.as_str())) {
            (Some(f), _) => format!("✗ fails L{}", f.src.line),
            (None, Some("hang")) => "✗ waits forever".to_string(),
            _ => {
                let th = &s_end.threads[t as usize];
                let line = th
                    .frames
                    .last()
                    .map(|fr| {
                        x.prog.functions[fr.func as usize].body[fr.pc as usize]
                            .loc
                            .line
                    })
                    .unwrap_or(0);
                format!("✗ blocked L{line}")
            }
        };
        let _ = writeln!(
            s,
            r#"<rect class="ev bad" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.0}" rx="4"/><text class="evt" x="{:.1}" y="{:.0}">{}</text>"#,
            cx + 4.0,
            vy + 3.0,
            w - 8.0,
            ROW - 6.0,
            cx + 9.0,
            vy + 17.0,
            esc(&fit(&what, *w))
        );
    }
    let bad = x.cex.is_some();
    let by = vy + ROW + 4.0;
    let _ = writeln!(
        s,
        r#"<rect class="{}" x="{MARGIN}" y="{by:.0}" width="{:.0}" height="{:.0}" rx="4"/>"#,
        if bad { "verdict bad" } else { "verdict" },
        l.width - 2.0 * MARGIN,
        10.0 + 16.0 * l.verdict.len() as f64
    );
    for (k, line) in l.verdict.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<text class="verdict-text" x="{:.0}" y="{:.0}">{}</text>"#,
            MARGIN + 8.0,
            by + 17.0 + 16.0 * k as f64,
            esc(line)
        );
    }
    s.push_str("</svg>\n");
    s
}

const STYLE: &str = r##"<defs>
<marker id="h-rf" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10z" fill="#2e7d32"/></marker>
<marker id="h-co" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10z" fill="#1565c0"/></marker>
<marker id="h-fr" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0 0L10 5L0 10z" fill="#ef6c00"/></marker>
</defs>
<style>
.bg{fill:#ffffff}
.title{font-size:14px;font-weight:bold;fill:#222}
.legend{fill:#444}
.head{font-weight:bold;fill:#222}
.col.thread{fill:#f7f9fc;stroke:#d8dee8}
.col.bufcol{fill:#fff8e1;stroke:#ecdcb0}
.col.memcol{fill:#f3f3f3;stroke:#dddddd}
.rowbg{fill:transparent}
.row.current .rowbg{fill:#fff59d;fill-opacity:0.6}
.stepno{fill:#777}
.ev{fill:#e3ecfa;stroke:#7a95c2}
.ev.buf{fill:#ffe9b3;stroke:#c9a03f}
.ev.upd{fill:#ffd180;stroke:#b8860b}
.ev.bad{fill:#ffcdd2;stroke:#c62828;stroke-width:2}
.ev.cycle{stroke:#c62828;stroke-width:2.5}
.evt{fill:#111}
.bufc{fill:#8d6e00}
.mem{fill:#999}
.mem.changed{fill:#111;font-weight:bold}
.arrow{fill:none;stroke-width:1.4}
.arrow.rf{stroke:#2e7d32;marker-end:url(#h-rf)}
.arrow.co{stroke:#1565c0;marker-end:url(#h-co)}
.arrow.fr{stroke:#ef6c00;stroke-dasharray:5 3;marker-end:url(#h-fr)}
.arrow.cyc{stroke-width:3}
.verdict{fill:#e8f5e9;stroke:#66bb6a}
.verdict.bad{fill:#ffebee;stroke:#c62828}
.verdict-text{font-weight:bold;fill:#222}
</style>
"##;
