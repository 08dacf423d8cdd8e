//! The DVE front-end: DiVinE's modelling language as BEEM and DiVinE 2 use it (global and
//! local `byte`/`int` variables and arrays, constants, processes with states, `init`,
//! `accept`, `commit`, `assert`, transitions with `guard`/`sync`/`effect`, rendezvous and
//! buffered typed channels, `system async|sync [property P]`), plus DiVinE 3's `input`
//! constants and process templates.

pub mod ast;
mod code;
pub mod parse;
pub mod print;
pub mod relaxed;
pub mod run;
pub mod sem;
mod values;

pub use parse::parse;
pub use sem::{compile, System};

/// Parses and compiles a model; `overrides` set `input` constants. An override that
/// names no `input` constant is an error (at the model's first line): a `-D` that set
/// nothing would check another model than the one asked about.
pub fn load(
    file: &str,
    src: &str,
    overrides: &std::collections::HashMap<String, i32>,
) -> Result<System, fencer_text::Diagnostic> {
    let m = parse(file, src)?;
    let inputs = input_names(&m.items);
    let mut unknown: Vec<&String> = overrides.keys().filter(|k| !inputs.contains(k)).collect();
    unknown.sort();
    if let Some(name) = unknown.first() {
        let have = if inputs.is_empty() {
            "the model declares no `input` constant".to_string()
        } else {
            let mut names: Vec<&str> = inputs.iter().map(String::as_str).collect();
            names.sort_unstable();
            names.dedup();
            format!("its `input` constants are {}", names.join(", "))
        };
        return Err(fencer_text::Diagnostic::new(
            file,
            src,
            ast::Span { start: 0, end: 0 },
            format!("-D {name}=...: the model has no `input` constant `{name}`; {have}"),
            "-D sets `input` constants only",
        ));
    }
    compile(file, src, &m, overrides)
}

/// The names of the model's `input` constants, global or local to a process.
fn input_names(items: &[ast::Item]) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        match item {
            ast::Item::Var(d) if d.input => out.push(d.name.name.clone()),
            ast::Item::For(f) => out.extend(input_names(&f.body)),
            ast::Item::Process(p) => out.extend(
                p.vars
                    .iter()
                    .filter(|d| d.input)
                    .map(|d| d.name.name.clone()),
            ),
            _ => {}
        }
    }
    out
}
