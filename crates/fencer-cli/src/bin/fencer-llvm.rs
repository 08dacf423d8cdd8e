//! `fencer-llvm`: fencer's C front-end as a process of its own (see `fencer::cfront`).
//! Reads a `Request` as JSON on stdin, compiles the file with clang-14 (or reads its LLVM
//! IR), lowers it, and writes a `Response` as JSON on stdout. Exit code 0 with a response,
//! 4 when it panics (a bug in fencer); LLVM aborting or crashing on a malformed module ends
//! it otherwise, which `fencer` reports as the input's fault.

use fencer::cfront::{Refusal, Request, Response, INTERNAL};
use std::io::{Read, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("fencer-llvm: internal error: {info}");
        std::process::exit(INTERNAL);
    }));
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("fencer-llvm: cannot read the request: {e}");
        return ExitCode::from(INTERNAL as u8);
    }
    let req: Request = match serde_json::from_slice(&input) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fencer-llvm: the request is not one fencer writes: {e}");
            return ExitCode::from(INTERNAL as u8);
        }
    };
    let opts = fencer_c::CompileOptions {
        clang: req.clang,
        flags: req.flags,
        no_spurious_wakeups: req.no_spurious_wakeups,
    };
    let response = match fencer_c::load_with_inputs(&req.file, &opts, req.model) {
        Ok(p) => Response::Program(Box::new(p)),
        Err(e) => Response::Refused(Refusal {
            display: e.to_string(),
            file: e.file,
            line: e.line,
            col: e.col,
            message: e.message,
            help: e.help,
        }),
    };
    let out = serde_json::to_vec(&response).expect("a program is JSON");
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(&out).and_then(|_| stdout.flush()).is_err() {
        return ExitCode::from(INTERNAL as u8);
    }
    ExitCode::SUCCESS
}
