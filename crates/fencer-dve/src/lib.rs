//! The DVE front-end: DiVinE's modelling language as BEEM and DiVinE 2 use it (global and
//! local `byte`/`int` variables and arrays, constants, processes with states, `init`,
//! `accept`, `commit`, `assert`, transitions with `guard`/`sync`/`effect`, rendezvous and
//! buffered typed channels, `system async|sync [property P]`), plus DiVinE 3's `input`
//! constants and process templates.

pub mod ast;
pub mod parse;

pub use parse::parse;
