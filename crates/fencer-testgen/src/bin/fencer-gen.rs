//! Prints the random program of a seed as the DPOR oracle test makes it: `fencer-gen SEED
//! [--loops]` (for reproducing a property-test failure with the CLI).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let loops = args.iter().any(|a| a == "--loops");
    let seed = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("usage: fencer-gen SEED [--loops]");
            std::process::exit(2)
        });
    print!(
        "{}",
        fencer_testgen::program(seed, &fencer_testgen::Shape::oracle(loops))
    );
}
