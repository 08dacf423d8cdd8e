//! `fencer-fuzz --frontend fen|litmus --count N --seed S`: a fuzzing campaign.
//!
//! A stack overflow aborts the process, and no `catch_unwind` sees it. So the campaign
//! runs in chunks, each in a child process (this binary with `--child`); when a child dies
//! without its summary, the chunk is split in halves, each rerun in a child, down to the
//! one input that kills it, which is reported (and saved with `--out DIR`) like any other
//! failure. `--print I` prints input `I`, to reproduce a failure from its seed and index.

use fencer_fuzz::{input, quiet_panics, run_on_small_stack, Corpus, Frontend};
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

struct Output {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

struct Args {
    frontend: Frontend,
    count: u64,
    seed: u64,
    start: u64,
    chunk: u64,
    child: bool,
    print: Option<u64>,
    out: Option<std::path::PathBuf>,
    corpus: Option<std::path::PathBuf>,
    check: Option<std::path::PathBuf>,
}

fn usage(msg: &str) -> ! {
    eprintln!("fencer-fuzz: {msg}");
    eprintln!(
        "usage: fencer-fuzz --frontend fen|litmus|c [--count N] [--seed S] [--start I] \
         [--chunk N] [--corpus DIR] [--out DIR] [--print I] [--check FILE]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        frontend: Frontend::Fen,
        count: 10_000,
        seed: 0,
        start: 0,
        chunk: 20_000,
        child: false,
        print: None,
        out: None,
        corpus: None,
        check: None,
    };
    let mut it = std::env::args().skip(1);
    let mut frontend = None;
    while let Some(k) = it.next() {
        let mut val = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{k} needs a value")))
        };
        let num = |v: String| -> u64 {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("expected a number, found `{v}`")))
        };
        match k.as_str() {
            "--frontend" => {
                let v = val();
                frontend = Some(
                    Frontend::parse(&v)
                        .unwrap_or_else(|| usage(&format!("unknown front-end `{v}`"))),
                )
            }
            "--count" => a.count = num(val()),
            "--seed" => a.seed = num(val()),
            "--start" => a.start = num(val()),
            "--chunk" => a.chunk = num(val()).max(1),
            "--print" => a.print = Some(num(val())),
            "--out" => a.out = Some(val().into()),
            "--corpus" => a.corpus = Some(val().into()),
            "--check" => a.check = Some(val().into()),
            "--child" => a.child = true,
            _ => usage(&format!("unknown argument `{k}`")),
        }
    }
    a.frontend = frontend.unwrap_or_else(|| usage("--frontend is required"));
    a
}

fn frontend_name(f: Frontend) -> &'static str {
    match f {
        Frontend::Fen => "fen",
        Frontend::Litmus => "litmus",
        #[cfg(feature = "c")]
        Frontend::C => "c",
    }
}

type Counts = (u64, u64, u64, Vec<(u64, String)>);

/// Runs `start..start + count` in a child: its counts and failures, or how it died (a
/// stack overflow, an abort).
fn child(a: &Args, start: u64, count: u64) -> Result<Counts, String> {
    // Output goes to files, not pipes: a child blocked on a full pipe would look hung.
    let dir = std::env::temp_dir();
    let tag = format!("fencer-fuzz-{}-{start}", std::process::id());
    let (out_path, err_path) = (
        dir.join(format!("{tag}.out")),
        dir.join(format!("{tag}.err")),
    );
    let mut proc = Command::new(std::env::current_exe().expect("own path"))
        .args([
            "--child",
            "--frontend",
            frontend_name(a.frontend),
            "--seed",
            &a.seed.to_string(),
            "--start",
            &start.to_string(),
            "--count",
            &count.to_string(),
        ])
        .args(
            a.corpus
                .iter()
                .flat_map(|c| [std::ffi::OsStr::new("--corpus"), c.as_os_str()]),
        )
        .stdout(std::fs::File::create(&out_path).expect("child output file"))
        .stderr(std::fs::File::create(&err_path).expect("child error file"))
        .spawn()
        .expect("run a child");
    // A hang is a failure too (LLVM loops forever on some debug information): 20 seconds,
    // and a tenth of a second per input, are far more than any input needs.
    let limit = Duration::from_secs(20) + Duration::from_millis(100 * count);
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = proc.try_wait().expect("wait for a child") {
            break Some(s);
        }
        if t0.elapsed() > limit {
            let _ = proc.kill();
            let _ = proc.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |p: &std::path::Path| std::fs::read(p).unwrap_or_default();
    let out = Output {
        stdout: read(&out_path),
        stderr: read(&err_path),
    };
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    let Some(status) = status else {
        return Err(format!("timed out after {} s", limit.as_secs()));
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fails = Vec::new();
    let mut summary = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("FAIL ") {
            let (i, m) = rest.split_once(' ').unwrap_or((rest, ""));
            fails.push((i.parse().unwrap_or(0), m.to_string()));
        } else if let Some(rest) = line.strip_prefix("DONE ") {
            let v: Vec<u64> = rest.split(' ').filter_map(|x| x.parse().ok()).collect();
            if v.len() == 3 {
                summary = Some((v[0], v[1], v[2]));
            }
        }
    }
    match summary.filter(|_| status.success()) {
        Some((inputs, ok, refused)) => Ok((inputs, ok, refused, fails)),
        None => {
            // What it said last: "has overflowed its stack", "LLVM ERROR: ...".
            let err = String::from_utf8_lossy(&out.stderr);
            let tail: String = err
                .trim_end()
                .lines()
                .last()
                .unwrap_or("")
                .chars()
                .take(200)
                .collect();
            Err(format!("the process died ({status}): {tail}"))
        }
    }
}

/// Runs a range in children, splitting the ranges whose child dies down to single inputs.
fn campaign_range(
    a: &Args,
    start: u64,
    count: u64,
    tot: &mut (u64, u64, u64),
    fails: &mut Vec<(u64, String)>,
) {
    match child(a, start, count) {
        Ok((i, o, r, f)) => {
            tot.0 += i;
            tot.1 += o;
            tot.2 += r;
            fails.extend(f);
        }
        Err(m) if count == 1 => {
            tot.0 += 1;
            fails.push((start, m));
        }
        Err(_) => {
            let half = count / 2;
            campaign_range(a, start, half, tot, fails);
            campaign_range(a, start + half, count - half, tot, fails);
        }
    }
}

fn ext(f: Frontend) -> &'static str {
    match f {
        Frontend::Fen => ".fen",
        Frontend::Litmus => ".litmus",
        #[cfg(feature = "c")]
        Frontend::C => ".ll",
    }
}

fn main() {
    let mut a = parse_args();
    if let Some(f) = &a.check {
        let src = std::fs::read(f).unwrap_or_else(|e| usage(&format!("{}: {e}", f.display())));
        let (f, src) = (a.frontend, String::from_utf8_lossy(&src).into_owned());
        let o = std::thread::Builder::new()
            .stack_size(fencer_fuzz::STACK)
            .spawn(move || fencer_fuzz::check(f, &src))
            .expect("spawn")
            .join()
            .expect("panics are caught");
        println!("{o:?}");
        std::process::exit(i32::from(matches!(o, fencer_fuzz::Outcome::Failed(_))));
    }
    let mut corpus = match &a.corpus {
        Some(d) => Corpus::load(std::slice::from_ref(d), ext(a.frontend)),
        None => Corpus::default_for(a.frontend),
    };
    // Children read the corpus from files: compiling the C one takes seconds.
    let made = a.corpus.is_none() && !a.child && a.print.is_none();
    if made {
        let dir = std::env::temp_dir().join(format!("fencer-fuzz-corpus-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        for (i, f) in corpus.files.iter().enumerate() {
            let _ = std::fs::write(dir.join(format!("{i:04}{}", ext(a.frontend))), f);
        }
        // Read back, so that the parent saves exactly the inputs its children ran.
        corpus = Corpus::load(std::slice::from_ref(&dir), ext(a.frontend));
        a.corpus = Some(dir);
    }
    if let Some(i) = a.print {
        print!("{}", input(a.frontend, &corpus, a.seed, i));
        return;
    }
    if a.child {
        quiet_panics();
        let st = run_on_small_stack(a.frontend, corpus, a.seed, a.start, a.count);
        let mut o = std::io::stdout().lock();
        for (i, m) in &st.failures {
            let _ = writeln!(o, "FAIL {i} {}", m.replace('\n', " | "));
        }
        let _ = writeln!(o, "DONE {} {} {}", st.inputs, st.ok, st.refused);
        return;
    }
    let t0 = Instant::now();
    eprintln!(
        "fencer-fuzz: front-end {}, seed {}, inputs {}..{}, corpus {} files",
        frontend_name(a.frontend),
        a.seed,
        a.start,
        a.start + a.count,
        corpus.files.len()
    );
    let mut tot = (0, 0, 0);
    let mut fails = Vec::new();
    let mut at = a.start;
    while at < a.start + a.count {
        let n = a.chunk.min(a.start + a.count - at);
        let before = fails.len();
        campaign_range(&a, at, n, &mut tot, &mut fails);
        for (i, m) in &fails[before..] {
            eprintln!("FAIL seed {} index {i}: {m}", a.seed);
            if let Some(dir) = &a.out {
                let _ = std::fs::create_dir_all(dir);
                let _ = std::fs::write(
                    dir.join(format!(
                        "{}-{}-{i}{}",
                        frontend_name(a.frontend),
                        a.seed,
                        ext(a.frontend)
                    )),
                    input(a.frontend, &corpus, a.seed, *i),
                );
            }
        }
        at += n;
        eprintln!(
            "fencer-fuzz: {} inputs ({} lowered, {} refused, {} failures), {:.0} s",
            tot.0,
            tot.1,
            tot.2,
            fails.len(),
            t0.elapsed().as_secs_f64()
        );
    }
    if made {
        let _ = std::fs::remove_dir_all(a.corpus.as_ref().expect("made above"));
    }
    println!(
        "front-end {} seed {}: {} inputs, {} lowered, {} refused with a diagnostic, {} failures, {:.1} s",
        frontend_name(a.frontend),
        a.seed,
        tot.0,
        tot.1,
        tot.2,
        fails.len(),
        t0.elapsed().as_secs_f64()
    );
    if !fails.is_empty() {
        std::process::exit(1);
    }
}
