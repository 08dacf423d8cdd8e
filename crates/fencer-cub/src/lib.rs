//! The `.cub` front-end: Cubicle's language (array-based parameterized systems) and
//! Cubicle-W's additions (weak variables, thread parameters, `fence()`, `p @ X` reads).
//! `parse` gives the syntax tree, `lower` the engine's [`fencer_param::System`].
//! Errors are [`fencer_text::Diagnostic`]s (file, line, column, the line, what was expected),
//! like the other front-ends'.

pub mod ast;
mod lex;
mod lower;
mod parse;

pub use lower::{lower, Mode};
pub use parse::parse;

use fencer_text::Diagnostic;

/// Parses and lowers a `.cub` file under `mode`.
pub fn load(path: &str, src: &str, mode: Mode) -> Result<fencer_param::System, Diagnostic> {
    let file = parse(path, src)?;
    lower(path, src, &file, mode)
}
