//! One self-contained HTML file: the verdict, the statistics, the source with the lines of
//! the execution marked, the timeline (the SVG of [`crate::svg`], inline), and a step
//! slider that shows the machine state after each step: every thread's registers (its
//! innermost frame), every store buffer, and the memory cells the execution touches. No
//! network, no external script or style: the state of every step is a JSON block in the
//! page, read by a small inline script. `report.html#step=N` opens it at step N.

use crate::{esc, svg, Execution};
use fencer_machine::loc_name;
use fencer_report::Report;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// Most memory cells and registers per thread the state panel lists.
const MAX_CELLS: usize = 64;
const MAX_REGS: usize = 64;

/// The machine state after each step, for the slider.
fn states_json(x: &Execution) -> Value {
    let locs = x.locations(MAX_CELLS);
    let names = x.thread_names();
    let chans = x.channels();
    let steps: Vec<Value> = x
        .states
        .iter()
        .enumerate()
        .map(|(i, st)| {
            let threads: Vec<Value> = st
                .threads
                .iter()
                .enumerate()
                .map(|(t, th)| {
                    let status = if th.finished {
                        "finished"
                    } else if th.faulted {
                        "faulted"
                    } else if th.cut.is_some() {
                        "cut by a bound"
                    } else if th.spin.dropped {
                        "blocked after an iteration that changed nothing"
                    } else if th.spin.blocked {
                        "blocked in a waiting loop"
                    } else if !x.can_move(st, t as u32) {
                        "waiting"
                    } else {
                        "running"
                    };
                    let fr = th.frames.last().expect("a thread has a frame");
                    let f = &x.prog.functions[fr.func as usize];
                    let at = f.body.get(fr.pc as usize).map(|ins| ins.loc.line);
                    let written = f.written_regs();
                    let regs: Vec<Value> = fr
                        .regs
                        .iter()
                        .enumerate()
                        .filter(|&(r, _)| written.get(r).copied().unwrap_or(true))
                        .map(|(r, v)| {
                            let n = f.reg_names.get(r).cloned().unwrap_or(format!("r{r}"));
                            (n, v)
                        })
                        // `%` names are the compiler's temporaries (LLVM's `%call1`, `%2`)
                        // and the litmus front-end's hidden flags: no source names them.
                        // A C program's variables live in memory, which the panel shows.
                        .filter(|(n, _)| !n.starts_with('%'))
                        .take(MAX_REGS)
                        .map(|(n, v)| json!([n, v]))
                        .collect();
                    json!({
                        "name": names.get(t).cloned().unwrap_or_else(|| st.thread_name(x.prog, t as u32)),
                        "status": status,
                        "function": f.name,
                        "line": if th.finished { None } else { at },
                        "regs": regs,
                    })
                })
                .collect();
            let bufs: Vec<Value> = chans
                .iter()
                .map(|&(t, c)| json!([x.channel_name(t, c), x.buffer_text(st, t, c)]))
                .collect();
            let mem: Vec<Value> = locs
                .iter()
                .map(|&l| json!([loc_name(x.prog, l), x.cell_text(st, l)]))
                .collect();
            let event = (i > 0).then(|| {
                let e = &x.events[i - 1];
                let line = x.last().describe(x.prog, e, i);
                json!({
                    "thread": line.thread,
                    "file": line.file,
                    "line": line.line,
                    "op": line.op,
                })
            });
            json!({ "event": event, "threads": threads, "bufs": bufs, "mem": mem })
        })
        .collect();
    json!(steps)
}

/// The source files of the execution's events, each with its text if it could be read:
/// `sources` maps a file name (as events name it) to its text.
fn source_section(x: &Execution, sources: &[(String, String)]) -> String {
    let mut s = String::new();
    let lines = x.lines();
    // The failing position, and where each blocked thread of a deadlock or hang waits.
    let mut fail: Vec<(String, u32)> = x
        .cex
        .as_ref()
        .and_then(|c| Some((c.file.clone()?, c.line?)))
        .into_iter()
        .collect();
    if x.fault.is_none() {
        let end = x.last();
        for t in x.marked_threads() {
            if let Some(fr) = end.threads[t as usize].frames.last() {
                if let Some(ins) = x.prog.functions[fr.func as usize].body.get(fr.pc as usize) {
                    fail.push((x.prog.file_name(ins.loc).to_string(), ins.loc.line));
                }
            }
        }
    }
    for (file, text) in sources {
        let used: Vec<u32> = lines
            .iter()
            .filter(|l| l.file == *file)
            .map(|l| l.line)
            .collect();
        let failing: Vec<u32> = fail
            .iter()
            .filter(|(f, _)| f == file)
            .map(|(_, l)| *l)
            .collect();
        if used.is_empty() && failing.is_empty() {
            continue;
        }
        let _ = writeln!(s, "<h3>{}</h3>\n<pre class=\"src\">", esc(file));
        for (i, l) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let mut cls = Vec::new();
            if used.contains(&n) {
                cls.push("hit");
            }
            if failing.contains(&n) {
                cls.push("fail");
            }
            let steps: Vec<String> = lines
                .iter()
                .filter(|l| l.file == *file && l.line == n)
                .map(|l| l.step.to_string())
                .collect();
            let _ = write!(
                s,
                "<span id=\"src-{}-{n}\" class=\"{}\"><span class=\"ln\">{n:>4}</span> {}{}</span>",
                esc(&file.replace(|c: char| !c.is_ascii_alphanumeric(), "_")),
                cls.join(" "),
                esc(l),
                if steps.is_empty() {
                    String::new()
                } else {
                    format!("  <span class=\"steps\">← step {}</span>", steps.join(", "))
                }
            );
        }
        s.push_str("</pre>\n");
    }
    s
}

/// The page. `report` gives the verdict and statistics of the run that found the
/// execution (absent for `fencer replay`).
pub fn render(x: &Execution, report: Option<&Report>, sources: &[(String, String)]) -> String {
    let mut s = String::new();
    let title = x.title();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>fencer: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    let bad = x.cex.is_some();
    let _ = writeln!(s, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        s,
        "<p class=\"verdict {}\" id=\"verdict\">{}</p>",
        if bad { "bad" } else { "ok" },
        esc(&x.verdict_text())
    );
    if let Some(r) = report {
        let st = &r.stats;
        let _ = writeln!(s, "<h2>Statistics</h2>\n<table class=\"stats\">");
        let mut rows = vec![
            ("verdict", format!("{:?}", r.verdict).to_lowercase()),
            (
                "engine",
                match &r.algo {
                    Some(a) => format!("{} ({a})", r.engine),
                    None => r.engine.clone(),
                },
            ),
            ("complete executions", st.executions.to_string()),
            ("blocked executions", st.blocked.to_string()),
            ("events", st.events.to_string()),
            ("time", format!("{} ms", st.elapsed_ms)),
        ];
        if let Some(k) = st.peak_rss_kib {
            rows.push(("peak memory", format!("{:.1} MiB", k as f64 / 1024.0)));
        }
        for (k, v) in rows {
            let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
        }
        s.push_str("</table>\n");
    }
    let _ = writeln!(
        s,
        "<h2>Timeline</h2>\n<div class=\"controls\"><label for=\"step\">step</label> \
         <input type=\"range\" id=\"step\" min=\"0\" max=\"{}\" value=\"{}\"> \
         <button id=\"prev\" type=\"button\">◀</button> <button id=\"next\" type=\"button\">▶</button> \
         <span id=\"stepinfo\"></span></div>",
        x.events.len(),
        x.events.len()
    );
    s.push_str("<div class=\"panes\">\n<div class=\"timeline\" id=\"timeline\">\n");
    s.push_str(&svg::render(x));
    s.push_str("</div>\n<div class=\"state\" id=\"state\"></div>\n</div>\n");
    let src = source_section(x, sources);
    if !src.is_empty() {
        let _ = writeln!(s, "<h2>Source</h2>\n{src}");
    }
    let data = states_json(x).to_string().replace("</", "<\\/");
    let _ = writeln!(
        s,
        "<script type=\"application/json\" id=\"states\">{data}</script>\n<script>{JS}</script>\n</body>\n</html>"
    );
    s
}

const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:20px;color:#222}
h1{font-size:20px;margin:0 0 8px}
h2{font-size:16px;margin:20px 0 8px}
h3{font-size:13px;margin:12px 0 4px;font-family:monospace}
.verdict{padding:8px 12px;border-radius:4px;font-weight:bold;display:inline-block}
.verdict.bad{background:#ffebee;border:1px solid #c62828}
.verdict.ok{background:#e8f5e9;border:1px solid #66bb6a}
table.stats{border-collapse:collapse;font-size:13px}
table.stats th{text-align:left;padding:2px 12px 2px 0;font-weight:normal;color:#555}
.controls{margin:8px 0;font-size:13px}
.controls input{width:320px;vertical-align:middle}
.panes{display:flex;gap:16px;align-items:flex-start}
.timeline{overflow:auto;max-height:80vh;border:1px solid #ddd;flex:0 1 auto}
.state{font-family:monospace;font-size:12px;min-width:260px;position:sticky;top:0}
.state table{border-collapse:collapse;margin-bottom:8px}
.state td,.state th{border:1px solid #ddd;padding:1px 6px;text-align:left}
.state th{background:#f3f3f3}
pre.src{font-size:12px;background:#fafafa;border:1px solid #ddd;padding:6px;overflow:auto}
pre.src>span{display:block}
pre.src .ln{color:#999}
pre.src .hit{background:#e3ecfa}
pre.src .fail{background:#ffcdd2}
pre.src .cur{outline:2px solid #f9a825}
pre.src .steps{color:#777}
"#;

const JS: &str = r#"
(function () {
  "use strict";
  var states = JSON.parse(document.getElementById("states").textContent);
  var slider = document.getElementById("step");
  var panel = document.getElementById("state");
  var info = document.getElementById("stepinfo");
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"}[c];
    });
  }
  function table(title, rows) {
    var h = "<table><tr><th colspan=\"2\">" + esc(title) + "</th></tr>";
    rows.forEach(function (r) { h += "<tr><td>" + esc(r[0]) + "</td><td>" + esc(r[1]) + "</td></tr>"; });
    return h + "</table>";
  }
  function show(i) {
    var st = states[i];
    document.querySelectorAll(".row.current").forEach(function (r) { r.classList.remove("current"); });
    document.querySelectorAll("pre.src .cur").forEach(function (r) { r.classList.remove("cur"); });
    var row = document.getElementById("row-" + i);
    if (row) { row.classList.add("current"); }
    if (st.event) {
      info.textContent = "step " + i + " of " + (states.length - 1) + ": " + st.event.thread + " " + st.event.file + ":" + st.event.line + " " + st.event.op;
      var id = "src-" + st.event.file.replace(/[^A-Za-z0-9]/g, "_") + "-" + st.event.line;
      var line = document.getElementById(id);
      if (line) { line.classList.add("cur"); }
    } else {
      info.textContent = "initial state";
    }
    var h = "";
    st.threads.forEach(function (t) {
      var head = t.name + " (" + t.status + (t.line ? ", at line " + t.line : "") + ") in " + t.function;
      h += table(head, t.regs);
    });
    if (st.bufs.length) { h += table("store buffers (oldest first)", st.bufs); }
    if (st.mem.length) { h += table("memory", st.mem); }
    panel.innerHTML = h;
  }
  function go(i) {
    slider.value = i;
    show(i);
    var row = document.getElementById("row-" + i);
    if (row && row.scrollIntoView) { row.scrollIntoView({block: "nearest", inline: "nearest"}); }
  }
  slider.addEventListener("input", function () { go(+slider.value); });
  document.getElementById("prev").addEventListener("click", function () {
    go(Math.max(0, +slider.value - 1));
  });
  document.getElementById("next").addEventListener("click", function () {
    go(Math.min(states.length - 1, +slider.value + 1));
  });
  // `report.html#step=N` opens the page at step N.
  var m = /^#step=(\d+)$/.exec(window.location.hash);
  if (m) { go(Math.min(states.length - 1, +m[1])); } else { show(+slider.value); }
})();
"#;
