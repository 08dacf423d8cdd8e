//! Prints the random program of a seed: `fencer-gen SEED` (for reproducing a property-test
//! failure with the CLI).
fn main() {
    let seed = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("usage: fencer-gen SEED");
            std::process::exit(2)
        });
    print!(
        "{}",
        fencer_testgen::program(seed, &fencer_testgen::Shape::default())
    );
}
