//! The printer (what `fencer transform` writes) against the parser: every model of
//! `../shared/dve` (BEEM, DIVINE's tests, the thesis's models) and the examples prints to
//! text that parses back to a model that prints the same, and compiles to a state vector
//! of the same shape. Skips `../shared` when a clone lacks it.

use std::path::{Path, PathBuf};

fn models(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            models(&p, out);
        } else if p.extension().is_some_and(|x| x == "dve") {
            out.push(p);
        }
    }
}

#[test]
fn printed_models_parse_back_to_themselves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    models(&root.join("examples/dve"), &mut files);
    let shared = root.join("../shared/dve");
    if shared.exists() {
        models(&shared, &mut files);
    } else {
        eprintln!("skipped ../shared/dve: not here (a clone without ../shared)");
    }
    let mut checked = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read");
        let name = f.display().to_string();
        let Ok(m) = fencer_dve::parse(&name, &src) else {
            continue; // DIVINE's tests include models that must be refused
        };
        let once = fencer_dve::print::model(&m);
        let again = fencer_dve::parse("printed", &once).unwrap_or_else(|d| {
            panic!(
                "{name}: the printed model does not parse:\n{}",
                d.render(&once)
            )
        });
        assert_eq!(once, fencer_dve::print::model(&again), "{name}");
        let none = Default::default();
        if let Ok(a) = fencer_dve::compile(&name, &src, &m, &none) {
            let b = fencer_dve::compile("printed", &once, &again, &none).unwrap_or_else(|d| {
                panic!("{name}: printed model does not compile: {}", d.message)
            });
            assert_eq!((a.width, &a.initial), (b.width, &b.initial), "{name}");
            assert_eq!(a.processes.len(), b.processes.len(), "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} models");
    eprintln!("{checked} models printed and read back");
}
