//! Litmus tests through herd7's own `.cat` models: `fencer litmus T.litmus --cat rc11.cat`.
//!
//! The model is data: [`fencer_cat`] reads it (and what it includes) from the test's
//! folder, the model's folder or a library folder like herd7's `-set-libdir`; the
//! axiomatic engine enumerates candidate executions and lets the model judge each.

use crate::Error;
use fencer_cat::Model;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where models are looked for when `--libdir` is not given: `FENCER_HERD_LIBDIR`.
pub const LIBDIR_ENV: &str = "FENCER_HERD_LIBDIR";

/// A loaded model and how to run it.
pub struct CatModel {
    pub model: Model,
    /// The file name as given (`rc11.cat`), for reports.
    pub name: String,
    pub variants: BTreeSet<String>,
}

/// Resolves `cat` (a path, or a name in the library folder) and loads it.
pub fn load(cat: &Path, libdir: Option<&Path>, variants: &[String]) -> Result<CatModel, Error> {
    let env = std::env::var_os(LIBDIR_ENV).map(PathBuf::from);
    let libdir = libdir.map(Path::to_path_buf).or(env);
    let path = if cat.exists() {
        cat.to_path_buf()
    } else {
        match &libdir {
            Some(d) if d.join(cat).exists() => d.join(cat),
            Some(d) => {
                return Err(Error::usage(
                    &format!(
                        "error: no model {}: not a file, and not in the library folder {}",
                        cat.display(),
                        d.display()
                    ),
                    None,
                ))
            }
            None => {
                return Err(Error::usage(
                    &format!(
                        "error: no model {}: not a file; name herd7's model library with \
                         --libdir DIR (or {LIBDIR_ENV}) to find models by name",
                        cat.display()
                    ),
                    None,
                ))
            }
        }
    };
    // herd7's stdlib.cat and the files models include live in the library folder; without
    // one, the model's own folder serves.
    let lib = libdir.unwrap_or_else(|| {
        path.parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    });
    let model = Model::load(&path, &lib).map_err(|e| Error::usage(&e.to_string(), None))?;
    Ok(CatModel {
        model,
        name: cat.display().to_string(),
        variants: variants.iter().cloned().collect(),
    })
}

/// The architecture a litmus test's header names (`X86`, `C`, `AArch64`, ...), after any
/// leading `(* ... *)` comments.
pub fn arch(src: &str) -> &str {
    let mut rest = src.trim_start();
    while let Some(r) = rest.strip_prefix("(*") {
        match r.find("*)") {
            Some(k) => rest = r[k + 2..].trim_start(),
            None => return "",
        }
    }
    rest.split_whitespace().next().unwrap_or("")
}

/// herd7's answer to one litmus test under a `.cat` model.
pub fn litmus(
    path: &str,
    src: &str,
    m: &CatModel,
    timeout: Option<Duration>,
) -> Result<fencer_litmus::Answer, Error> {
    let opts = fencer_axiomatic::Options {
        variants: m.variants.clone(),
        timeout,
    };
    let run = |p: &fencer_axiomatic::Program| {
        fencer_axiomatic::check(p, &m.model, &opts).map_err(|e| match e {
            fencer_axiomatic::Error::Limit(_) => {
                Error::limit(&format!("{path}: stopped by a limit: {e}"))
            }
            _ => Error::usage(&format!("{path}: error: {e}"), None),
        })
    };
    // A model whose title names an architecture (`C RC11`, `X86 TSO`) is for that
    // architecture's tests only, as in herd7.
    if let Some(a) = m.model.arch() {
        let t = arch(src);
        if !a.eq_ignore_ascii_case(t) {
            return Err(Error::usage(
                &format!(
                    "{path}: error: architecture mismatch between test and model ({t} vs. {a}): \
                     {} is a model of {a} tests",
                    m.name
                ),
                None,
            ));
        }
    }
    match arch(src) {
        "C" => {
            let lit =
                fencer_litmus::parse_c_litmus(path, src).map_err(|d| Error::diagnostic(&d, src))?;
            let a = run(&lit.program)?;
            lit.answer(&a, &m.name)
                .map_err(|e| Error::usage(&format!("{path}: error: {e}"), None))
        }
        "X86" | "x86" => {
            let lit =
                fencer_litmus::parse_litmus(path, src).map_err(|d| Error::diagnostic(&d, src))?;
            let p = lit
                .axiomatic()
                .map_err(|e| Error::usage(&format!("{path}: error: {e}"), None))?;
            let a = run(&p)?;
            Ok(lit.answer_axiomatic(&a, &m.name))
        }
        other => Err(Error::usage(
            &format!(
                "{path}: error: `{other}` litmus tests are not supported with --cat yet: \
                 fencer reads X86 and C (C11) litmus tests"
            ),
            None,
        )),
    }
}
