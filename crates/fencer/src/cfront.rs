//! The C front-end, run as its own process: `fencer-llvm`, installed next to `fencer`.
//!
//! Reading LLVM IR needs libLLVM-14, and merely loading that library (mapping and
//! relocating it) cost every fencer run about 28 ms, whatever the input: more than the
//! whole answer to most litmus tests. So `fencer` does not link it; `fencer-llvm` does,
//! and is started only for C and LLVM IR files. It reads a [`Request`] as JSON on stdin
//! and writes a [`Response`]. Its own process also contains LLVM's failures: a module
//! LLVM aborts on, or loops on, kills the child, not fencer.

use crate::{Error, Options};
use fencer_ir::Program;
use fencer_memory::ModelKind;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `fencer-llvm`'s exit code when it panics: a bug in fencer, not in the input.
pub const INTERNAL: i32 = 4;

/// The executable's name.
pub const EXE: &str = "fencer-llvm";
/// Overrides where [`EXE`] is looked for.
pub const ENV: &str = "FENCER_LLVM";

/// What to compile and lower.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Request {
    pub file: PathBuf,
    pub model: ModelKind,
    /// clang to run (`--clang`), else the default.
    pub clang: Option<PathBuf>,
    /// clang's flags: `-D`, `-I`, `-std`, and those after `--`.
    pub flags: Vec<String>,
    pub no_spurious_wakeups: bool,
}

/// Why the C front-end refused a program: its position (line 0 when unknown) and text.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Refusal {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    pub help: Option<String>,
    /// The whole message as the front-end words it (`file:line:col: error: ...`).
    pub display: String,
}

#[derive(Serialize, Deserialize, Debug)]
pub enum Response {
    Program(Box<Program>),
    Refused(Refusal),
}

/// Where `fencer-llvm` is: `$FENCER_LLVM`, else beside this executable, else one folder
/// up (a test binary runs from `target/*/deps`).
pub fn locate() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(ENV) {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.join(EXE), dir.parent()?.join(EXE)]
        .into_iter()
        .find(|p| p.is_file())
}

/// clang's options from `-D`, `-I`, `--std`, the flags after `--` and `--clang`.
pub fn request(args: &Options, model: ModelKind) -> Request {
    let mut flags: Vec<String> = args.define.iter().map(|d| format!("-D{d}")).collect();
    flags.extend(args.include.iter().map(|i| format!("-I{}", i.display())));
    if let Some(std) = &args.std {
        flags.push(format!("-std={std}"));
    }
    flags.extend(args.cflags.iter().cloned());
    Request {
        file: args.file.clone(),
        model,
        clang: args.clang.clone(),
        flags,
        no_spurious_wakeups: args.no_spurious_wakeups,
    }
}

/// LLVM's verifier can loop for ever on malformed IR (a lexical block that is its own
/// scope): a user's `.ll` or `.bc` gets a minute, far more than reading any real module
/// takes. clang's own output is trusted.
const IR_LIMIT: Duration = Duration::from_secs(60);

/// Compiles and lowers a C program (or reads LLVM IR) in `fencer-llvm`.
pub fn load(args: &Options, model: ModelKind) -> Result<Program, Error> {
    let file = &args.file;
    let Some(exe) = locate() else {
        return Err(Error::usage(
            &format!(
                "{}: error: fencer's C front-end, `{EXE}`, is not installed next to fencer\n  \
                 help: `cargo install --path crates/fencer-cli` installs both (or set {ENV})",
                file.display()
            ),
            None,
        ));
    };
    let req = serde_json::to_vec(&request(args, model)).expect("a request is JSON");
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::usage(
                &format!(
                    "{}: error: cannot run {}: {e}",
                    file.display(),
                    exe.display()
                ),
                None,
            )
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that dies before reading says why on stderr; that is reported below.
        let _ = stdin.write_all(&req);
    }
    let mut out_pipe = child.stdout.take().expect("piped");
    let mut err_pipe = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = String::new();
        let _ = err_pipe.read_to_string(&mut buf);
        buf
    });
    let ir = matches!(file.extension().and_then(|e| e.to_str()), Some("ll" | "bc"));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if !ir || started.elapsed() < IR_LIMIT => {
                std::thread::sleep(Duration::from_millis(2))
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Err(e) => return Err(Error::internal(&format!("waiting for {EXE}: {e}"))),
        }
    };
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(Error::usage(
            &format!(
                "{}: error: LLVM did not finish reading this IR within {} s (malformed debug \
                 information can make its verifier loop)\n  help: fencer reads LLVM 14 IR as \
                 clang-14 writes it; check the file with `llvm-as-14 {} -o /dev/null`",
                file.display(),
                IR_LIMIT.as_secs(),
                file.display()
            ),
            None,
        ));
    };
    if status.success() {
        return match serde_json::from_slice::<Response>(&stdout) {
            Ok(Response::Program(p)) => Ok(*p),
            Ok(Response::Refused(r)) => Err(refusal(&r)),
            Err(e) => Err(Error::internal(&format!(
                "{EXE} answered something fencer cannot read: {e}"
            ))),
        };
    }
    Err(crashed(file, status.code(), &stderr))
}

/// LLVM died reading the file (a malformed datalayout or a module that fails verification
/// abort; some malformed debug information crashes): what it said, as an error.
fn crashed(file: &Path, code: Option<i32>, stderr: &str) -> Error {
    if code == Some(INTERNAL) {
        return Error::internal(&format!("{EXE} failed: {}", stderr.trim()));
    }
    let why: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            !l.trim().is_empty() && !l.contains("PLEASE submit") && !l.starts_with("Stack dump")
        })
        .take(4)
        .collect();
    let how = match code {
        Some(c) => format!("exit code {c}"),
        None => "a crash".into(),
    };
    Error::usage(
        &format!(
            "{}: error: LLVM cannot read this IR (it stopped with {how}){}\n  help: fencer \
             reads LLVM 14 IR as clang-14 writes it; check the file with `llvm-as-14 {} -o \
             /dev/null`",
            file.display(),
            if why.is_empty() {
                String::new()
            } else {
                format!(":\n  {}", why.join("\n  "))
            },
            file.display()
        ),
        None,
    )
}

/// A C program that does not load: the message with the offending source line and a
/// caret when the position is known, and the position in the JSON.
fn refusal(r: &Refusal) -> Error {
    let mut msg = r.display.clone();
    if r.line > 0 {
        if let Some(text) = std::fs::read_to_string(&r.file)
            .ok()
            .and_then(|s| s.lines().nth(r.line as usize - 1).map(str::to_string))
        {
            let caret = " ".repeat(r.col.saturating_sub(1) as usize);
            msg = format!("{}\n  | {text}\n  | {caret}^", msg);
        }
    }
    let d = fencer_text::Diagnostic {
        file: r.file.clone(),
        line: r.line,
        col: r.col,
        span: Default::default(),
        message: r.message.clone(),
        label: String::new(),
        help: r.help.clone(),
    };
    Error::usage(&msg, Some(&d))
}
