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

/// Parses and compiles a model; `overrides` set `input` constants.
pub fn load(
    file: &str,
    src: &str,
    overrides: &std::collections::HashMap<String, i32>,
) -> Result<System, fencer_text::Diagnostic> {
    let m = parse(file, src)?;
    compile(file, src, &m, overrides)
}
