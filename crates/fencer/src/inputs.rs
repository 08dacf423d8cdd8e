//! `fencer check` on a C program with inputs (`__VERIFIER_nondet_*()`): which engine takes
//! it, and the options that do not apply to it.
//!
//! DPOR and the reference explorer try every representative value of each input
//! (`fencer_ir::inputs`, `fencer_machine::input`). An input with more values than
//! `--input-values` cannot be tried one by one: under SC, `--engine auto` hands the program
//! to the symbolic engine, which treats inputs as unknown values, and says so; anywhere
//! else the program is refused, naming the input and how to narrow it.

use crate::{Engine, Error, Options};
use fencer_memory::ModelKind;

/// The first input too wide to try value by value: `Ok(Some(why))` when `--engine auto`
/// under SC hands the program to abpress, an error (exit 2) where nothing can take it.
pub(crate) fn too_wide(
    args: &Options,
    prog: &fencer_ir::Program,
    model: ModelKind,
) -> Result<Option<String>, Error> {
    let sites = fencer_machine::input::plan_sites(prog, args.input_values);
    let Some(why) = sites.iter().find_map(|s| s.values.as_ref().err()) else {
        return Ok(None);
    };
    if args.engine == Engine::Auto && model == ModelKind::Sc {
        return Ok(Some(why.clone()));
    }
    let engine = match args.engine {
        Engine::Reference => "--engine reference",
        Engine::Dpor => "--engine dpor",
        // Under TSO and PSO only the explicit engines check programs.
        _ => "under TSO and PSO, inputs are tried value by value",
    };
    Err(Error::usage(
        &format!("{}: error: {engine}: {why}", args.file.display()),
        None,
    ))
}

/// Options whose runs split executions, which do not take a program's input
/// values yet: refused rather than ignored.
pub(crate) fn refuse_options(args: &Options, prog: &fencer_ir::Program) -> Result<(), Error> {
    let given: Vec<&str> = [
        (args.jobs.is_some_and(|j| j > 1), "--jobs"),
        (args.shard.is_some(), "--shard"),
        (args.replays.is_some(), args.replays.unwrap_or_default()),
    ]
    .into_iter()
    .filter_map(|(g, f)| g.then_some(f))
    .collect();
    if let Some(flag) = given.first() {
        return Err(Error::usage(
            &format!(
                "{}: error: {flag} does not apply to a program with inputs (`__VERIFIER_nondet_*()`, {}): \
                 its executions are explored one assignment of input values at a time, on one worker",
                args.file.display(),
                first_input(prog)
            ),
            None,
        ));
    }
    Ok(())
}

/// Where the program's first input is, for messages.
pub fn first_input(prog: &fencer_ir::Program) -> String {
    prog.functions
        .iter()
        .flat_map(|f| &f.body)
        .find(|i| matches!(i.op, fencer_ir::Op::Nondet { .. }))
        .map_or_else(String::new, |i| {
            format!(
                "the first at {}:{}:{}",
                prog.file_name(i.loc),
                i.loc.line,
                i.loc.col
            )
        })
}

/// For the commands that replay executions without input values (`robust`, `repair`,
/// the views): a program with inputs is refused, naming the first.
pub fn refuse_program(command: &str, prog: &fencer_ir::Program) -> Result<(), Error> {
    if !prog.has_inputs() {
        return Ok(());
    }
    Err(Error::usage(
        &format!(
            "error: `fencer {command}` does not take programs with inputs (`__VERIFIER_nondet_*()`, {}) yet; \
             `fencer check` does",
            first_input(prog)
        ),
        None,
    ))
}
