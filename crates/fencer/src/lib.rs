//! fencer: can this concurrent program go wrong under SC, x86-TSO or PSO?
//!
//! This crate is the one entry point to fencer's front-ends and engines, for the `fencer`
//! command and for any other program. An input is named by its file (or given as text
//! with [`Options::source`]); its extension picks the front-end: `.fen` (fencer's text
//! format), `.litmus` (herd7 X86 litmus tests), `.c`/`.i` (C with pthreads, through
//! clang-14; cargo feature `c`), `.ll`/`.bc` (LLVM 14 IR), `.dve` (DiVinE models) and
//! `.cub` (Cubicle models). Each front-end declares which options apply to it
//! ([`applies`]); [`check`] refuses an option given where it does not apply, so that no
//! answer is ever to a question nobody asked.
//!
//! ```
//! let sb = "shared x = 0, y = 0;
//!           thread p { x = 1; r1 = y; }
//!           thread q { y = 1; r2 = x; }
//!           exists (p.r1 == 0 && q.r2 == 0)";
//! let opts = fencer::Options::text("sb.fen", sb).model(fencer::Model::Tso);
//! let outcome = fencer::check(opts).unwrap();
//! assert_eq!(outcome.verdict, fencer::Verdict::Violation); // store buffering
//! assert!(outcome.output.contains("exists"));
//! ```
//!
//! Under SC the same question has no witness, and the report says how much was explored:
//!
//! ```
//! # let sb = "shared x = 0, y = 0; thread p { x = 1; r1 = y; } thread q { y = 1; r2 = x; } exists (p.r1 == 0 && q.r2 == 0)";
//! let outcome = fencer::check(fencer::Options::text("sb.fen", sb)).unwrap();
//! assert_eq!(outcome.verdict, fencer::Verdict::Safe);
//! assert_eq!(outcome.report.unwrap().executions, 3);
//! ```
//!
//! A C file is checked the same way (clang-14 compiles it; `-D`, `-I` and the other
//! compiler options are fields of [`Options`]):
//!
//! ```no_run
//! let mut opts = fencer::Options::file("prog.c").model(fencer::Model::Pso);
//! opts.define.push("N=3".into());
//! let outcome = fencer::check(opts)?;
//! println!("{}", outcome.output);
//! std::process::exit(outcome.exit_code().into());
//! # Ok::<(), fencer::Error>(())
//! ```
//!
//! An option that does not apply to the input is an error, not ignored (`reach` asks
//! about DVE models):
//!
//! ```
//! # let sb = "shared x = 0; thread p { x = 1; }";
//! let mut opts = fencer::Options::text("sb.fen", sb);
//! opts.reach = Some("x == 1".into());
//! let err = fencer::check(opts).unwrap_err();
//! assert!(err.message.contains("--reach"));
//! assert_eq!(err.exit_code(), 2);
//! ```

/// The README's Rust examples, compiled by `cargo test` so that they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;

pub mod applies;
mod auto;
pub mod cat;
pub mod cfront;
mod cub;
pub mod dve;
pub mod dve_relaxed;
pub mod dve_repair;
mod error;
pub mod inputs;
mod options;
mod program;
pub mod repair;
pub mod split;
mod symbolic;

pub use applies::Kind;
pub use error::Error;
pub use fencer_memory::ModelKind;
pub use fencer_report::{Report, Verdict};
pub use options::{program_model, Algo, Engine, Hangs, Model, Options, Por};
pub use program::{
    load, load_within, peak_rss_kib, stopped_while_loading, timeout_arg, unsupported, MAX_JOBS,
};
pub use symbolic::replay as replay_symbolic;

use std::path::Path;

/// What a check found.
#[derive(Debug)]
pub struct Outcome {
    /// Safe, violation, or stopped by a limit (incomplete).
    pub verdict: Verdict,
    /// What `fencer check` prints on standard output: the text, or with
    /// [`Options::json`] the JSON.
    pub output: String,
    /// Lines for standard error (e.g. that the timeout ran out while loading).
    pub messages: Vec<String>,
    /// Programs (any engine) and single-property DVE checks: the engine's report.
    pub report: Option<Report>,
    /// A split run (`jobs` > 1 or a shard): how the tree was split (the JSON's `split`).
    pub split: Option<serde_json::Value>,
    /// Programs checked by a concrete engine (dpor, reference): the program whose
    /// executions the report describes, for views and replay.
    pub shown: Option<Shown>,
}

impl Outcome {
    /// `fencer`'s exit code for it: 0 safe, 1 violation, 3 stopped by a limit.
    pub fn exit_code(&self) -> u8 {
        self.verdict.exit_code() as u8
    }
}

/// The program an outcome's report describes, as explored (spin loops rewritten, the
/// variant without spurious wake-ups when that is where the violation is).
#[derive(Debug)]
pub struct Shown {
    pub program: fencer_ir::Program,
    /// The options it was explored with.
    pub options: Options,
    pub model: ModelKind,
}

/// Checks the input `opts` names, as `fencer check` does: refuses options that do not
/// apply to it ([`validate`]), loads it with its front-end and explores it with the engine
/// the options ask for.
pub fn check(opts: Options) -> Result<Outcome, Error> {
    validate(&opts)?;
    let timeout = program::timeout_arg(opts.timeout)?;
    let shard = opts
        .shard
        .as_deref()
        .map(split::parse_shard)
        .transpose()
        .map_err(|m| Error::usage(&m, None))?;
    match kind_of(&opts.file)? {
        Kind::Cub => cub::check(&opts, timeout),
        _ if opts.engine == Engine::Abpress => {
            symbolic::check_with(&opts, timeout, opts.por.into())
        }
        Kind::Dve => dve::check(&opts, timeout),
        _ => program::check(opts, timeout, shard),
    }
}

/// The checks on the options alone, before anything is read: every given option applies
/// to the input and engine, and the limits are in range.
pub fn validate(opts: &Options) -> Result<(), Error> {
    if let Some(msg) = applies::refusal(opts) {
        return Err(Error::usage(&msg, None));
    }
    program::timeout_arg(opts.timeout)?;
    if let Some(s) = &opts.shard {
        split::parse_shard(s).map_err(|m| Error::usage(&m, None))?;
    }
    if let Some(r) = opts.ranks.as_ref().filter(|r| r.size() > 1) {
        ranks_apply(opts, r.size())?;
    }
    if opts.input_values == 0 {
        return Err(Error::usage(
            "error: --input-values expects at least 1 (a `_Bool` input has 2 values)",
            None,
        ));
    }
    if opts.jobs == Some(0) {
        return Err(Error::usage(
            "error: --jobs expects at least 1 worker",
            None,
        ));
    }
    if opts.jobs.is_some_and(|n| n > MAX_JOBS) {
        return Err(Error::usage(
            &format!("error: --jobs expects at most {MAX_JOBS} workers"),
            None,
        ));
    }
    Ok(())
}

/// The inputs fencer reads, in words, for messages.
pub const EXTENSIONS: &str = "`.fen` (fencer's text format), `.litmus` (herd7 X86 litmus tests), \
    `.c`/`.i` (C with pthreads), `.ll`/`.bc` (LLVM 14 IR), `.dve` (DiVinE models, with `check`), \
    `.cub` (Cubicle models, with `check`)";

/// The front-end for a file, by its extension.
pub fn kind_of(path: &Path) -> Result<Kind, Error> {
    Kind::of(path).ok_or_else(|| {
        Error::usage(
            &format!(
                "{}: error: fencer does not know this kind of file\n  help: fencer reads {EXTENSIONS}",
                path.display()
            ),
            None,
        )
    })
}

/// The input's text: [`Options::source`] when given, else the file's contents, which must
/// be UTF-8.
pub(crate) fn read_source(opts: &Options) -> Result<String, Error> {
    if let Some(s) = &opts.source {
        return Ok(s.clone());
    }
    let path = opts.file.display();
    match std::fs::read(&opts.file) {
        Ok(b) => String::from_utf8(b).map_err(|e| {
            Error::usage(
                &format!(
                    "{path}: error: the file is not UTF-8 text (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
                None,
            )
        }),
        Err(e) => Err(Error::usage(
            &format!("{path}: error: cannot read the file: {e}"),
            None,
        )),
    }
}

/// A run on several ranks (an MPI job) searches a DVE model's states across them; nothing
/// else is distributed, and each rank searches on one thread.
fn ranks_apply(opts: &Options, n: usize) -> Result<(), Error> {
    let max = fencer_explicit::dist::MAX_RANKS;
    if n > max {
        return Err(Error::usage(
            &format!("error: a distributed search runs on at most {max} ranks; this job has {n} (mpirun -np {max} or fewer)"),
            None,
        ));
    }
    if kind_of(&opts.file)? != Kind::Dve {
        return Err(Error::usage(
            &format!(
                "error: {} ranks search DVE models only, and {} is not one: run it without mpirun (a program's search splits across machines with --shard I/N and `fencer merge`)",
                n,
                opts.file.display()
            ),
            None,
        ));
    }
    if opts.set().contains("jobs") {
        return Err(Error::usage(
            &format!("error: --jobs does not apply to a distributed run: each of the {n} ranks searches on one thread; start more ranks instead (mpirun -np)"),
            None,
        ));
    }
    Ok(())
}
