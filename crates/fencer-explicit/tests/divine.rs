//! DIVINE's own regression models (`../shared/dve/divine-tests/expected.tsv`): states,
//! transitions and deadlocks of the whole state space, the deadlock and assertion verdicts,
//! and the shapes of the `commit` tests (nodes and edges of DIVINE's drawing). Typed and
//! buffered channels, process-local channels, templates, `for` loops, `input` constants
//! (`-D i=7`), `commit` and `assert`. LTL rows are for the LTL checker. Needs `../shared`.

mod common;

use fencer_explicit::{reach, FoundKind, Options};
use std::collections::HashMap;
use std::path::Path;

#[test]
fn divine_regression_models() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/dve/divine-tests");
    let Ok(tsv) = std::fs::read_to_string(dir.join("expected.tsv")) else {
        eprintln!("skipped: ../shared/dve is not here");
        return;
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for line in tsv.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        let (file, property, options, expected) = (c[0], c[1], c[2], c[3]);
        if property == "LTL" {
            continue;
        }
        let mut overrides = HashMap::new();
        if let Some(d) = options.strip_prefix("-D ") {
            let (k, v) = d.split_once('=').unwrap();
            overrides.insert(k.to_string(), v.parse().unwrap());
        }
        let path = dir.join(file);
        let src = std::fs::read_to_string(&path).unwrap();
        let sys = match fencer_dve::load(file, &src, &overrides) {
            Ok(s) => s,
            Err(d) => {
                wrong.push(d.render(&src));
                continue;
            }
        };
        let sys = common::plain(sys);
        let all = reach(
            &sys,
            &Options {
                exhaustive: true,
                ..Default::default()
            },
            None,
        );
        let st = &all.stats;
        let num = |k: usize| c.get(k).and_then(|v| v.parse::<u64>().ok());
        for (what, want, got) in [
            ("states", num(4), st.states),
            ("transitions", num(5), st.transitions),
            ("deadlocks", num(7), st.deadlocks),
        ] {
            if want.is_some_and(|w| w != got) {
                wrong.push(format!(
                    "{file} {options}: {what} {got}, want {}",
                    want.unwrap()
                ));
            }
        }
        if let Some(shape) = c.get(8).filter(|s| !s.is_empty()) {
            let edges: Vec<(u32, u32)> = shape
                .split_whitespace()
                .map(|e| {
                    let (a, b) = e.split_once("->").unwrap();
                    (a.parse().unwrap(), b.parse().unwrap())
                })
                .collect();
            let nodes = edges.iter().flat_map(|&(a, b)| [a, b]).max().unwrap() as u64;
            if (st.states, st.transitions) != (nodes, edges.len() as u64) {
                wrong.push(format!(
                    "{file}: {} states and {} transitions, DIVINE drew {nodes} and {}",
                    st.states,
                    st.transitions,
                    edges.len()
                ));
            }
        }
        let verdict = match property {
            "deadlock" => {
                let r = reach(
                    &sys,
                    &Options {
                        deadlock: true,
                        ..Default::default()
                    },
                    None,
                );
                match r.found.map(|f| f.kind) {
                    Some(FoundKind::Deadlock) => "deadlock reachable",
                    _ => "no deadlock",
                }
            }
            "assert" => {
                let s = &sys.sys;
                let r = reach(
                    &sys,
                    &Options::default(),
                    Some(&|x: &[u8]| s.failed_assertion(x).map(|(_, t)| t)),
                );
                match r.found.map(|f| f.kind) {
                    Some(FoundKind::Goal(_)) => "assertion violation reachable",
                    _ => "no assertion violation",
                }
            }
            _ => "",
        };
        if !expected.is_empty() && expected != verdict {
            wrong.push(format!("{file}: {verdict}, want {expected}"));
        }
        checked += 1;
    }
    assert!(checked > 20, "{checked}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
