//! The model library herd ships: every file parses, the target models load.

use fencer_cat::{check_syntax, Model};
use std::path::{Path, PathBuf};

const LIBDIR: &str = "/work/shared/herd-libdir";

fn libdir() -> Option<PathBuf> {
    let p = PathBuf::from(LIBDIR);
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: {LIBDIR} is absent");
        None
    }
}

fn cat_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            cat_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "cat") {
            out.push(p);
        }
    }
}

#[test]
fn every_cat_file_parses() {
    let Some(dir) = libdir() else { return };
    let mut files = Vec::new();
    cat_files(&dir, &mut files);
    assert!(files.len() > 100, "{} cat files", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // The copy of the library may have flattened herd's symbolic links
        // (`aarch64/*/stdlib.cat`) into files holding the link target.
        if text.trim().ends_with(".cat") && !text.trim().contains(char::is_whitespace) {
            continue;
        }
        // herd's parser rejects this one too: `rf -1` is not `rf^-1`.
        if f.ends_with("uniproc-normw-cat.cat") {
            assert!(check_syntax(f).is_err());
            continue;
        }
        if let Err(e) = check_syntax(f) {
            failures.push(e.render());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn target_models_load() {
    let Some(dir) = libdir() else { return };
    for (file, name, arch, catdep) in [
        ("rc11.cat", "C RC11", Some("C"), false),
        ("x86tso.cat", "X86 TSO", Some("X86"), false),
        ("sc.cat", "SC", None, false),
        ("tso.cat", "TSO", None, false),
        ("aarch64.cat", "aarch64", None, true),
    ] {
        let m = Model::load(&dir.join(file), &dir).unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(m.name(), name);
        assert_eq!(m.arch(), arch);
        assert_eq!(m.catdep(), catdep, "{file}");
        assert!(m.warnings().is_empty(), "{file}: {:?}", m.warnings());
        assert!(m.free_names().contains(&"po"));
    }
}
