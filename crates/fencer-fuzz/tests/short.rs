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
