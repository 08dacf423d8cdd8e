//! The execution graph in Graphviz's DOT, as herd7 and GenMC users know it: the real
//! threads' events as nodes (one cluster per thread, initial writes on top), edges for
//! program order (black), reads-from (red), store order (brown) and from-reads (orange),
//! from `fencer_robust::trace::Graph`. Store-buffer updates are not events of their own
//! here: a buffered store is one write, placed in store order where it reached memory.

use crate::Execution;
use fencer_machine::{loc_name, EventKind, ReadFrom, Step};
use fencer_memory::Loc;
use fencer_robust::trace::{Edge, Graph, SPAWNS};

/// An edge of the order in which threads are spawned (the trace orders spawns through a
/// location of its own, since thread ids follow it): not memory the program touches, so
/// not drawn.
pub(crate) fn spawn_order(g: &Graph, v: usize, w: usize, e: Edge) -> bool {
    let on_spawns = |n: usize| g.acc[n].is_some_and(|a| a.loc == SPAWNS);
    e != Edge::Po && on_spawns(v) && on_spawns(w)
}
use std::collections::BTreeSet;
use std::fmt::Write as _;

fn q(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

/// herd7's letters: `W x=1`, `R y=0`, ...
fn node_label(x: &Execution, pos: usize) -> String {
    let e = &x.events[pos];
    let n = |l: Loc| loc_name(x.prog, l);
    let what = match &e.kind {
        EventKind::Load { loc, value, .. } => format!("R {}={}", n(*loc), value),
        EventKind::Store { loc, value, .. } => format!("W {}={}", n(*loc), value),
        EventKind::Rmw {
            loc, read, written, ..
        } => match written {
            Some(w) => format!("RMW {}={}→{}", n(*loc), read, w),
            None => format!("R {}={} (cas failed)", n(*loc), read),
        },
        _ => x.short(e),
    };
    format!(
        "{}: {}\n{}:{}",
        pos + 1,
        what,
        x.prog.file_name(e.src),
        e.src.line
    )
}

pub fn render(x: &Execution) -> String {
    let g = Graph::new(&x.events);
    let names = x.thread_names();
    let mut s = String::new();
    let _ = writeln!(s, "digraph execution {{");
    let _ = writeln!(
        s,
        "  label={};",
        q(&format!("{}: {}", x.title(), x.verdict_text()))
    );
    let _ = writeln!(s, "  labelloc=t; fontname=\"monospace\";");
    let _ = writeln!(
        s,
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e3ecfa\", fontname=\"monospace\", fontsize=10];"
    );
    let _ = writeln!(s, "  edge [fontname=\"monospace\", fontsize=9];");
    // Initial writes of the locations the execution reads or writes.
    let mut init_locs: BTreeSet<Loc> = BTreeSet::new();
    for n in 0..g.len() {
        if let Some(a) = g.acc[n] {
            if x.last().mem.get(a.loc.obj).is_some() {
                init_locs.insert(a.loc);
            }
        }
    }
    if !init_locs.is_empty() {
        let _ = writeln!(
            s,
            "  subgraph cluster_init {{ label=\"init\"; style=dashed;"
        );
        for l in &init_locs {
            let _ = writeln!(
                s,
                "    init_{}_{} [label={}, fillcolor=\"#eeeeee\"];",
                l.obj,
                l.index,
                q(&format!(
                    "W {}={}",
                    loc_name(x.prog, *l),
                    x.cell_text(&x.states[0], *l)
                ))
            );
        }
        let _ = writeln!(s, "  }}");
    }
    for (t, name) in names.iter().enumerate() {
        let nodes: Vec<usize> = (0..g.len())
            .filter(|&n| matches!(x.events[g.pos[n]].step, Step::Thread(u) if u as usize == t))
            .collect();
        if nodes.is_empty() {
            continue;
        }
        let _ = writeln!(s, "  subgraph cluster_t{t} {{ label={};", q(name));
        for n in nodes {
            let p = g.pos[n];
            let e = &x.events[p];
            let mut attrs = format!("label={}", q(&node_label(x, p)));
            if e.kind.faulted() {
                attrs += ", fillcolor=\"#ffcdd2\", color=\"#c62828\"";
            } else if x.highlight.contains(&p) {
                attrs += ", color=\"#c62828\", penwidth=2.5";
            }
            let _ = writeln!(s, "    e{p} [{attrs}];");
        }
        let _ = writeln!(s, "  }}");
    }
    let style = |e: Edge| match e {
        Edge::Po => "color=black",
        Edge::Rf => "color=red, fontcolor=red",
        Edge::Co => "color=brown, fontcolor=brown",
        Edge::Fr => "color=\"#ffa040\", fontcolor=\"#ffa040\"",
    };
    let mut has_co_pred = BTreeSet::new();
    for v in 0..g.len() {
        for &(w, e) in &g.succ[v] {
            if e == Edge::Co {
                has_co_pred.insert(w);
            }
        }
    }
    for v in 0..g.len() {
        for &(w, e) in &g.succ[v] {
            if spawn_order(&g, v, w, e) {
                continue;
            }
            let (a, b) = (g.pos[v], g.pos[w]);
            let bold = if x.highlight.contains(&a) && x.highlight.contains(&b) {
                ", penwidth=2.5"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "  e{a} -> e{b} [label=\"{}\", {}{bold}];",
                e.name(),
                style(e)
            );
        }
    }
    // Edges from the initial writes: reads of the initial value, the first write in store
    // order, and from-reads of the initial value are implied (init ->co first write).
    for v in 0..g.len() {
        let p = g.pos[v];
        let Some(a) = g.acc[v] else { continue };
        if !init_locs.contains(&a.loc) {
            continue;
        }
        let (o, i) = (a.loc.obj, a.loc.index);
        if matches!(x.events[p].kind.read_loc(), Some((_, ReadFrom::Init))) {
            let _ = writeln!(
                s,
                "  init_{o}_{i} -> e{p} [label=\"rf\", {}];",
                style(Edge::Rf)
            );
        }
        if a.write
            && !has_co_pred.contains(&v)
            && !matches!(x.events[p].kind, EventKind::Load { .. })
        {
            let _ = writeln!(
                s,
                "  init_{o}_{i} -> e{p} [label=\"co\", {}];",
                style(Edge::Co)
            );
        }
    }
    let _ = writeln!(s, "}}");
    s
}
