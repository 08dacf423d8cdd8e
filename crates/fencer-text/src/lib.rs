//! The text format: a small language for concurrent programs and litmus-style final
//! conditions. `docs/text-format.md` is the reference; this crate parses it, prints it back,
//! and lowers it to the program IR.

pub mod ast;
pub mod diag;
mod lower;
mod parser;
mod printer;

pub use diag::Diagnostic;
pub use printer::{print_ast, print_expr};

/// Parses source text into a syntax tree.
pub fn parse_ast(file: &str, src: &str) -> Result<ast::Ast, Diagnostic> {
    parser::Parser::new(file, src)?.program()
}

/// Parses and lowers source text into a program. `file` names the source in diagnostics and
/// in the program's source locations.
pub fn parse_program(file: &str, src: &str) -> Result<fencer_ir::Program, Diagnostic> {
    let ast = parse_ast(file, src)?;
    let name = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string());
    lower::Lowerer::new(file, src).lower(&name, &ast)
}
