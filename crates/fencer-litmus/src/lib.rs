//! herd7's litmus format, X86 dialect: parsing, and lowering to the program IR.
//!
//! A test is a header (`X86 NAME`), an optional quoted doc string and `key=value` lines,
//! an init block `{ x=0; 0:EAX=1; }`, a table of thread columns (`P0 | P1 ;`, then one
//! instruction per row), and a final condition (`exists`, `~exists` or `forall`) with
//! optional `locations [...]` and `filter (...)` clauses. The lowering makes each location
//! a shared scalar, each `Pn` a thread with registers named as in the test, and the
//! condition a [`fencer_ir::FinalCond`]; [`Litmus::vars`] lists the variables herd7 prints
//! final states over, in its order.
//!
//! Diagnostics reuse the text front-end's [`Diagnostic`] (file, line, column, carets).

mod answer;
mod c11;
mod lower;
mod parse;
mod x86cat;

pub use answer::{Answer, UNDEF};
pub use c11::{parse_c_litmus, CLitmus};
pub use fencer_text::Diagnostic;
pub use parse::{Cond, Instr, Operand, Quant, Test};

use fencer_ir::{CondExpr, CondVar, Program};

/// A parsed and lowered litmus test.
pub struct Litmus {
    pub test: Test,
    pub program: Program,
    /// The variables final states are shown over: the condition's and `locations`'s, in
    /// herd7's order (registers by thread and name, then locations by name).
    pub vars: Vec<CondVar>,
    /// The `filter` clause: executions whose final state fails it are left out of the
    /// answer (its variables are reported too, then projected away).
    pub filter: Option<CondExpr>,
    /// The condition's proposition.
    pub prop: CondExpr,
}

/// Parses and lowers a litmus test. `file` names it in diagnostics.
pub fn parse_litmus(file: &str, src: &str) -> Result<Litmus, Diagnostic> {
    let test = parse::parse(file, src)?;
    lower::lower(file, src, test)
}

impl Litmus {
    /// How herd7 writes a variable: `0:EAX`, `[x]`.
    pub fn var_name(&self, v: &CondVar) -> String {
        match v {
            CondVar::Reg { thread, reg } => {
                let t = &self.program.threads[*thread as usize];
                let f = &self.program.functions[t.func as usize];
                format!("{}:{}", thread, f.reg_names[*reg as usize])
            }
            CondVar::Cell { obj, .. } => format!("[{}]", self.program.objects[*obj as usize].name),
        }
    }
}
