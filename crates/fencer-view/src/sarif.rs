//! SARIF 2.1.0: one result per violation, at the failing source location, with the
//! execution as a `codeFlow` of one `threadFlow` per thread (store-buffer updates are the
//! auxiliary threads `upd(p)`), each location's `executionOrder` its step number so that
//! viewers can interleave them. Rule ids name the kind of violation.

use fencer_report::{Counterexample, TraceLine};
use serde_json::{json, Value};

/// The rules: id, short description.
pub const RULES: &[(&str, &str)] = &[
    ("assertion", "An assertion fails"),
    ("condition", "The final state satisfies the `exists` (or violates the `forall`) condition"),
    ("deadlock", "No thread can move, but some have not finished"),
    ("hang", "A thread waits in a loop that nothing can ever release"),
    ("memory-error", "Invalid memory access: out of bounds, null, use after free, double free, uninitialised read"),
    ("arithmetic", "Division by zero"),
    ("bad-join", "Joining something that is not a joinable thread"),
    ("bad-unlock", "Unlocking a mutex the thread does not hold"),
    ("bad-mutex", "Using a destroyed mutex, or destroying a held one"),
    ("sc-violation", "An execution under the weak memory model that is not sequentially consistent (robustness)"),
];

/// A file path as a SARIF URI reference: relative paths stay relative (to the directory
/// fencer ran in, `%SRCROOT%`), absolute ones become `file://` URIs.
pub fn uri(path: &str) -> String {
    let mut o = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                o.push(b as char)
            }
            _ => o.push_str(&format!("%{b:02X}")),
        }
    }
    if path.starts_with('/') {
        format!("file://{o}")
    } else {
        o
    }
}

fn physical(file: &str, line: u32, column: u32) -> Value {
    let mut region = json!({ "startLine": line.max(1) });
    if column > 0 {
        region["startColumn"] = json!(column);
    }
    let mut loc = json!({ "artifactLocation": { "uri": uri(file) }, "region": region });
    if !file.starts_with('/') {
        loc["artifactLocation"]["uriBaseId"] = json!("%SRCROOT%");
    }
    loc
}

fn flow_location(l: &TraceLine) -> Value {
    let mut loc = json!({
        "physicalLocation": physical(&l.file, l.line, l.column),
        "message": { "text": format!("{}: {}", l.thread, l.op) },
    });
    if let Some(f) = &l.function {
        loc["logicalLocations"] = json!([{ "name": f, "kind": "function" }]);
    }
    json!({
        "location": loc,
        "executionOrder": l.step,
        "nestingLevel": 0,
    })
}

/// One result: the violation at its location, the execution as thread flows.
pub fn result(c: &Counterexample) -> Value {
    let rule = RULES.iter().position(|(id, _)| *id == c.kind).unwrap_or(0);
    let mut threads: Vec<(String, Vec<Value>)> = Vec::new();
    for l in &c.events {
        match threads.iter_mut().find(|(t, _)| *t == l.thread) {
            Some((_, v)) => v.push(flow_location(l)),
            None => threads.push((l.thread.clone(), vec![flow_location(l)])),
        }
    }
    let flows: Vec<Value> = threads
        .into_iter()
        .map(|(t, locs)| {
            json!({
                "id": t,
                "message": { "text": format!("thread {t}") },
                "locations": locs,
            })
        })
        .collect();
    let mut r = json!({
        "ruleId": RULES[rule].0,
        "ruleIndex": rule,
        "level": "error",
        "kind": "fail",
        "message": { "text": c.message },
    });
    if let (Some(f), Some(line)) = (&c.file, c.line) {
        r["locations"] = json!([{ "physicalLocation": physical(f, line, c.column.unwrap_or(0)) }]);
    }
    if !flows.is_empty() {
        r["codeFlows"] = json!([{
            "message": { "text": format!("the execution, {} steps", c.events.len()) },
            "threadFlows": flows,
        }]);
    }
    if let Some(fs) = &c.final_state {
        let m: serde_json::Map<String, Value> =
            fs.iter().map(|(n, v)| (n.clone(), json!(v))).collect();
        r["properties"] = json!({ "finalState": m });
    }
    r
}

/// A SARIF log of one run: `model` (`sc`, `tso`, `pso`), the violations found.
pub fn render(program: &str, model: &str, violations: &[&Counterexample]) -> String {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|(id, d)| {
            json!({
                "id": id,
                "name": id,
                "shortDescription": { "text": d },
                "defaultConfiguration": { "level": "error" },
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "fencer",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "originalUriBaseIds": { "%SRCROOT%": { "description": { "text": "the directory fencer ran in" } } },
            "properties": { "program": program, "memoryModel": model },
            "results": violations.iter().map(|c| result(c)).collect::<Vec<_>>(),
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).expect("json");
    s.push('\n');
    s
}
