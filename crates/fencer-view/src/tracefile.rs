//! The trace file: the schedule of one execution, small enough to read and edit.
//!
//! ```text
//! fencer-trace 1
//! program examples/sb.fen
//! model tso
//! ir-hash 3f2a9c0d11e4b7a8
//! unroll none
//! max-depth 100000
//! spin-assume yes
//! violation condition examples/sb.fen:19:1
//! steps 6
//! t0            # p    sb.fen:10:5  store x = 1 (to store buffer)
//! t0            # p    sb.fen:11:5  load y -> 0 (initial value)
//! upd(t0)       # ...
//! ```
//!
//! Version 1. The header lines come first, in this order (optional: `ignore-condition yes`,
//! written by `fencer robust`, which drops the program's final condition;
//! `spurious-wakeups no`, a C program checked with `--no-spurious-wakeups`; `cflags`, the C
//! compiler flags `check` was given, separated by spaces; `violation`); then one step per
//! line:
//! `tN` (thread N runs its next visible instruction), `upd(tN)` (TSO: the oldest entry of
//! thread N's store buffer reaches memory) or `upd(tN,x)` (PSO: the oldest entry of its
//! buffer for cell `x`, named as counterexamples name it: `x`, `a[2]`, `heap#5[0]`).
//! Threads are numbered as the program declares them, spawned threads after, in spawn
//! order. `#` starts a comment; blank lines are ignored. `ir-hash` is
//! [`crate::program_hash`] of the program as explored (after the spin-loop rewrite), so
//! that `fencer replay` can tell when the program changed.

use crate::TraceStep;
use fencer_memory::ModelKind;

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    pub program: String,
    pub model: ModelKind,
    pub ir_hash: String,
    pub unroll: Option<u32>,
    pub max_depth: u32,
    pub spin_assume: bool,
    /// The program's final condition was dropped (`fencer robust` ignores it).
    pub ignore_condition: bool,
    /// C: `pthread_cond_wait` could return without a signal (the default).
    pub spurious_wakeups: bool,
    pub cflags: Vec<String>,
    /// `KIND FILE:LINE:COL` of the violation the execution ends in, if any (for people;
    /// replay judges anew).
    pub violation: Option<String>,
    pub steps: Vec<TraceStep>,
    /// A comment per step (what the step did when the trace was saved).
    pub comments: Vec<String>,
}

impl TraceFile {
    pub fn render(&self) -> String {
        let mut s = format!("fencer-trace {VERSION}\n");
        s += &format!("program {}\n", self.program);
        s += &format!("model {}\n", self.model.name());
        s += &format!("ir-hash {}\n", self.ir_hash);
        s += &format!(
            "unroll {}\n",
            self.unroll.map_or("none".to_string(), |u| u.to_string())
        );
        s += &format!("max-depth {}\n", self.max_depth);
        s += &format!(
            "spin-assume {}\n",
            if self.spin_assume { "yes" } else { "no" }
        );
        if self.ignore_condition {
            s += "ignore-condition yes\n";
        }
        if !self.spurious_wakeups {
            s += "spurious-wakeups no\n";
        }
        if !self.cflags.is_empty() {
            s += &format!("cflags {}\n", self.cflags.join(" "));
        }
        if let Some(v) = &self.violation {
            s += &format!("violation {v}\n");
        }
        s += &format!("steps {}\n", self.steps.len());
        for (i, st) in self.steps.iter().enumerate() {
            match self.comments.get(i).filter(|c| !c.is_empty()) {
                Some(c) => s += &format!("{:<14} # {}\n", st.to_string(), c.replace('\n', " ")),
                None => s += &format!("{st}\n"),
            }
        }
        s
    }

    /// Reads a trace file; the error names the line.
    pub fn parse(text: &str) -> Result<TraceFile, String> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, strip_comment(l).trim()))
            .filter(|(_, l)| !l.is_empty());
        let mut next = |key: &str, optional: bool| -> Result<Option<(usize, String)>, String> {
            let mut peek = lines.clone();
            match peek.next() {
                Some((n, l)) => {
                    let (k, v) = l.split_once(' ').unwrap_or((l, ""));
                    if k == key {
                        lines.next();
                        Ok(Some((n, v.trim().to_string())))
                    } else if optional {
                        Ok(None)
                    } else {
                        Err(format!("line {n}: expected `{key} ...`, found `{l}`"))
                    }
                }
                None if optional => Ok(None),
                None => Err(format!("the file ends before `{key}`")),
            }
        };
        let (n, v) = next("fencer-trace", false)?.expect("required");
        if v != VERSION.to_string() {
            return Err(format!(
                "line {n}: trace format version {v}; this fencer reads version {VERSION}"
            ));
        }
        let program = next("program", false)?.expect("required").1;
        let (n, m) = next("model", false)?.expect("required");
        let model: ModelKind = m.parse().map_err(|e| format!("line {n}: {e}"))?;
        let ir_hash = next("ir-hash", false)?.expect("required").1;
        let (n, u) = next("unroll", false)?.expect("required");
        let unroll = match u.as_str() {
            "none" => None,
            u => Some(
                u.parse()
                    .map_err(|_| format!("line {n}: unroll is `none` or a number"))?,
            ),
        };
        let (n, d) = next("max-depth", false)?.expect("required");
        let max_depth = d
            .parse()
            .map_err(|_| format!("line {n}: max-depth is a number"))?;
        let (n, sa) = next("spin-assume", false)?.expect("required");
        let spin_assume = match sa.as_str() {
            "yes" => true,
            "no" => false,
            _ => return Err(format!("line {n}: spin-assume is `yes` or `no`")),
        };
        let ignore_condition = next("ignore-condition", true)?.is_some_and(|(_, v)| v == "yes");
        let spurious_wakeups = match next("spurious-wakeups", true)? {
            None => true,
            Some((_, v)) if v == "yes" => true,
            Some((_, v)) if v == "no" => false,
            Some((n, _)) => return Err(format!("line {n}: spurious-wakeups is `yes` or `no`")),
        };
        let cflags = next("cflags", true)?
            .map(|(_, v)| v.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        let violation = next("violation", true)?.map(|(_, v)| v);
        let (n, c) = next("steps", false)?.expect("required");
        let count: usize = c
            .parse()
            .map_err(|_| format!("line {n}: steps is a number"))?;
        let mut steps = Vec::new();
        for (n, l) in lines {
            steps.push(parse_step(l).ok_or_else(|| {
                format!("line {n}: `{l}` is not a step (`t0`, `upd(t0)` or `upd(t0,x)`)")
            })?);
        }
        if steps.len() != count {
            return Err(format!(
                "the header says {count} steps but the file has {}",
                steps.len()
            ));
        }
        Ok(TraceFile {
            program,
            model,
            ir_hash,
            unroll,
            max_depth,
            spin_assume,
            ignore_condition,
            spurious_wakeups,
            cflags,
            violation,
            comments: vec![String::new(); steps.len()],
            steps,
        })
    }
}

/// A line without its comment: `#` at the start or after a blank (`heap#5[0]` is a name).
fn strip_comment(l: &str) -> &str {
    let b = l.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()) {
            return &l[..i];
        }
    }
    l
}

fn thread_no(s: &str) -> Option<u32> {
    let d = s.trim().strip_prefix('t')?;
    if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    d.parse().ok()
}

/// `t0`, `upd(t0)` or `upd(t0,x)`.
pub fn parse_step(s: &str) -> Option<TraceStep> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix("upd(").and_then(|r| r.strip_suffix(')')) {
        return match inner.split_once(',') {
            Some((t, l)) if !l.trim().is_empty() => {
                Some(TraceStep::Update(thread_no(t)?, Some(l.trim().to_string())))
            }
            Some(_) => None,
            None => Some(TraceStep::Update(thread_no(inner)?, None)),
        };
    }
    thread_no(s).map(TraceStep::Thread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_parse_and_print() {
        for s in [
            "t0",
            "t12",
            "upd(t1)",
            "upd(t0,x)",
            "upd(t2,a[3])",
            "upd(t0,pool[1].1)",
            "upd(t3,heap#5[0])",
            "upd(t10,long_name_of_a_flag)",
        ] {
            assert_eq!(parse_step(s).unwrap().to_string(), s);
        }
        for s in ["", "t", "x0", "upd(t0,)", "upd(x)", "t-1", "upd(t0"] {
            assert_eq!(parse_step(s), None, "{s}");
        }
    }

    #[test]
    fn files_round_trip() {
        let t = TraceFile {
            program: "examples/mp.fen".into(),
            model: ModelKind::Pso,
            ir_hash: "0123456789abcdef".into(),
            unroll: Some(3),
            max_depth: 100,
            spin_assume: false,
            ignore_condition: true,
            spurious_wakeups: false,
            cflags: vec!["-DN=2".into()],
            violation: Some("condition examples/mp.fen:20:1".into()),
            steps: vec![
                TraceStep::Thread(0),
                TraceStep::Update(0, Some("flag".into())),
                TraceStep::Update(0, Some("a_very_long_location".into())),
            ],
            comments: vec!["p store data".into(), String::new(), "upd".into()],
        };
        let back = TraceFile::parse(&t.render()).unwrap();
        assert_eq!(back.steps, t.steps);
        assert_eq!(back.cflags, t.cflags);
        assert!(back.ignore_condition);
        assert!(!back.spurious_wakeups);
        // Without the line, waits may wake spuriously (files written before it existed).
        let old = t.render().replace("spurious-wakeups no\n", "");
        assert!(TraceFile::parse(&old).unwrap().spurious_wakeups);
        assert_eq!(
            (back.unroll, back.max_depth, back.spin_assume),
            (Some(3), 100, false)
        );
        let bad = t.render().replace("fencer-trace 1", "fencer-trace 9");
        assert!(TraceFile::parse(&bad).unwrap_err().contains("version 9"));
        let bad = t.render().replace("steps 3", "steps 2");
        assert!(TraceFile::parse(&bad).unwrap_err().contains("2 steps"));
        let bad = t.render().replace("upd(t0,flag)", "bogus");
        assert!(TraceFile::parse(&bad)
            .unwrap_err()
            .contains("`bogus` is not a step"));
    }
}
