//! The CI part of fuzzing: a few thousand inputs per front-end, in-process.

use fencer_fuzz::{quiet_panics, run_on_small_stack, Corpus, Frontend};

fn campaign(f: Frontend, count: u64) {
    quiet_panics();
    let corpus = Corpus::default_for(f);
    assert!(!corpus.files.is_empty(), "no corpus for {f:?}");
    let seed = std::env::var("FENCER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let st = run_on_small_stack(f, corpus, seed, 0, count);
    assert!(st.ok > 0 && st.refused > 0, "{st:?}");
    assert!(
        st.failures.is_empty(),
        "seed {seed}: {:?}\nreproduce with `cargo run -p fencer-fuzz -- --frontend {} --seed {seed} --print INDEX`",
        st.failures,
        format!("{f:?}").to_lowercase()
    );
}

#[test]
fn fen_inputs() {
    campaign(Frontend::Fen, 3000);
}

#[test]
fn litmus_inputs() {
    campaign(Frontend::Litmus, 3000);
}

/// Inputs the campaigns found, named `FRONTEND-SEED-INDEX` (saved by `--out`; the
/// generator has changed since, so the file is the reproducer, not the numbers). Each
/// crashed or built an IR too deep before its fix: an `else if` chain of 1640 arms
/// (stack overflow), a chain of 1347 `>` (IR 1347 deep), 400 `~` and 1368 `/\`
/// in litmus conditions.
#[test]
fn regressions() {
    quiet_panics();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let f = match path.extension().and_then(|x| x.to_str()) {
            Some("fen") => Frontend::Fen,
            Some("litmus") => Frontend::Litmus,
            _ => continue,
        };
        let src = std::fs::read_to_string(&path).unwrap();
        let o = std::thread::Builder::new()
            .stack_size(fencer_fuzz::STACK)
            .spawn(move || fencer_fuzz::check(f, &src))
            .unwrap()
            .join()
            .unwrap();
        assert!(
            !matches!(o, fencer_fuzz::Outcome::Failed(_)),
            "{}: {o:?}",
            path.display()
        );
        n += 1;
    }
    assert!(n >= 4);
}
