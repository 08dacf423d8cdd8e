//! Measures one `.cub` file: `cargo run --release -p fencer-cub --example cubstat --
//! FILE [sc|tso] [--brab N] [--forward-depth D] [--nodes M] [--timeout S]`; prints the
//! outcome, visited nodes and time.

use fencer_param::{check, Options, Outcome};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = &args[0];
    let mut mode = fencer_cub::Mode::Sc;
    let mut opts = Options {
        max_nodes: Some(100_000),
        timeout: Some(Duration::from_secs(60)),
        ..Default::default()
    };
    let mut i = 1;
    while i < args.len() {
        let next = |i: usize| args[i + 1].parse::<u64>().expect("a number");
        match args[i].as_str() {
            "tso" => mode = fencer_cub::Mode::Tso,
            "sc" => mode = fencer_cub::Mode::Sc,
            "--brab" => {
                opts.brab = Some(next(i) as u8);
                i += 1
            }
            "--forward-depth" => {
                opts.forward_depth = Some(next(i) as u32);
                i += 1
            }
            "--nodes" => {
                opts.max_nodes = Some(next(i));
                i += 1
            }
            "--timeout" => {
                opts.timeout = Some(Duration::from_secs(next(i)));
                i += 1
            }
            a => panic!("unknown argument {a}"),
        }
        i += 1;
    }
    let src = std::fs::read_to_string(file).expect("readable file");
    let sys = fencer_cub::load(file, &src, mode).unwrap_or_else(|d| panic!("{}", d.message));
    let r = check(&sys, &opts);
    let what = match &r.outcome {
        Outcome::Safe { .. } => "SAFE".to_string(),
        Outcome::Unsafe { trace, .. } => format!("UNSAFE ({} steps)", trace.len()),
        Outcome::Limit(w) => format!("LIMIT {w}"),
        Outcome::Spurious { why, .. } => format!("SPURIOUS {why}"),
    };
    println!(
        "{file}: {what} nodes {} subsumed {} generated {} restarts {} approx {} time {:.3}s",
        r.nodes,
        r.subsumed,
        r.generated,
        r.restarts,
        r.approximations,
        r.elapsed.as_secs_f64()
    );
}
