//! The C front-end: C files are compiled by clang-14 to LLVM IR, which is lowered to the
//! program IR. Like Nidhugg and GenMC, fencer reuses a mature C semantics (clang's) instead of
//! writing its own; what it adds is the memory model of every access.
//!
//! Compilation: `clang-14 -O0 -g -S -emit-llvm`. `-O0` because every optimisation level
//! above it may merge, hoist or delete accesses to non-volatile shared variables, and the
//! verdicts must be about the accesses the source makes. The price of `-O0`, a stack slot
//! for every local variable, is paid back by the lowering: a stack slot whose address never
//! escapes (every use is a load or store of it) becomes a register, so it costs no event.
//! The functions of fencer's own C library (`runtime/fencer_rt.c`: semaphores, read-write
//! locks, barriers, `pthread_once`, keys, strings) that the program calls and does not
//! define are linked in with `llvm-link-14 --only-needed`, so they are modelled like the
//! program's own code under every memory model.
//! `.ll` files are read as they are; `.bc` files are disassembled with `llvm-dis-14`. The
//! textual IR is what is read because the LLVM C API hides inline-assembly strings, which
//! the lowering needs to recognise fences.
//!
//! See [`lower`] for what each construct becomes and the memory-model mapping.

mod layout;
pub mod lower;

use fencer_ir::Program;
use fencer_memory::ModelKind;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to compile a C file.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The clang to run; by default `$FENCER_CLANG`, else `clang-14`, else
    /// `/usr/lib/llvm-14/bin/clang`.
    pub clang: Option<PathBuf>,
    /// Extra compiler flags (`-DN=3`, `-Iinclude`, `-std=c11`, ...), passed as they are.
    pub flags: Vec<String>,
    /// `pthread_cond_wait` returns only after a signal or broadcast. POSIX allows it to
    /// return without one (a spurious wake-up), and by default fencer explores that too;
    /// this narrows the semantics, and a report says so.
    pub no_spurious_wakeups: bool,
}

/// What the lowering models beyond the instructions (see [`lower::lower_with`]).
#[derive(Clone, Copy, Debug)]
pub struct Semantics {
    /// `__VERIFIER_nondet_*()` calls become inputs ([`fencer_ir::Op::Nondet`]) instead of
    /// refusing the program (for the symbolic engine).
    pub inputs: bool,
    /// `pthread_cond_wait` may return without a signal, as POSIX allows.
    pub spurious_wakeups: bool,
}

impl Default for Semantics {
    fn default() -> Self {
        Semantics {
            inputs: false,
            spurious_wakeups: true,
        }
    }
}

impl CompileOptions {
    /// The semantics these options ask for, with or without inputs.
    pub fn semantics(&self, inputs: bool) -> Semantics {
        Semantics {
            inputs,
            spurious_wakeups: !self.no_spurious_wakeups,
        }
    }
}

/// Why a C program could not be loaded. `line` is 0 when no source position is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    pub help: Option<String>,
}

impl Error {
    fn plain(file: &str, message: impl Into<String>, help: Option<String>) -> Error {
        Error {
            file: file.to_string(),
            line: 0,
            col: 0,
            message: message.into(),
            help,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.col) {
            (0, _) => write!(f, "{}: error: {}", self.file, self.message)?,
            (l, 0) => write!(f, "{}:{l}: error: {}", self.file, self.message)?,
            (l, c) => write!(f, "{}:{l}:{c}: error: {}", self.file, self.message)?,
        }
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// Whether the path names a file this front-end reads (`.c`, `.i`, `.ll`, `.bc`).
pub fn handles(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("c" | "i" | "h" | "ll" | "bc")
    )
}

const INSTALL_HELP: &str = "install clang 14 (Debian/Ubuntu: `apt-get install clang-14`), or \
    name a clang 14 with FENCER_CLANG=/path/to/clang; fencer reads LLVM 14 IR, so other clang \
    versions are not used";

fn find_tool(explicit: Option<&Path>, env: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    for n in names {
        let p = Path::new(n);
        if p.is_absolute() {
            if p.exists() {
                return Some(p.to_path_buf());
            }
            continue;
        }
        if let Some(paths) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&paths) {
                let c = dir.join(n);
                if c.is_file() {
                    return Some(c);
                }
            }
        }
    }
    None
}

/// The textual LLVM IR of a source file, compiled or disassembled as its extension says.
pub fn llvm_text(path: &Path, opts: &CompileOptions) -> Result<String, Error> {
    let file = path.display().to_string();
    if !path.exists() {
        return Err(Error::plain(
            &file,
            "cannot read the file: it does not exist",
            None,
        ));
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let output = match ext {
        "ll" => {
            return std::fs::read_to_string(path)
                .map_err(|e| Error::plain(&file, format!("cannot read the file: {e}"), None))
        }
        "bc" => {
            let dis = find_tool(
                None,
                "FENCER_LLVM_DIS",
                &["llvm-dis-14", "/usr/lib/llvm-14/bin/llvm-dis"],
            )
            .ok_or_else(|| {
                Error::plain(
                    &file,
                    "llvm-dis-14 is needed to read LLVM bitcode and was not found",
                    Some(
                        "install it with `apt-get install llvm-14`, or pass the .c or .ll file"
                            .into(),
                    ),
                )
            })?;
            Command::new(dis).arg(path).arg("-o").arg("-").output()
        }
        _ => {
            let clang = find_tool(
                opts.clang.as_deref(),
                "FENCER_CLANG",
                &["clang-14", "/usr/lib/llvm-14/bin/clang"],
            )
            .ok_or_else(|| {
                Error::plain(
                    &file,
                    "clang 14 is needed to compile C and was not found",
                    Some(INSTALL_HELP.into()),
                )
            })?;
            // fencer's own headers come after every other directory, so that a program's
            // own `genmc.h` (or the system's) is the one used when there is one.
            let headers = TempDir::new(&file)?;
            std::fs::write(headers.0.join("genmc.h"), GENMC_HEADER).map_err(|e| {
                Error::plain(&file, format!("cannot write fencer's genmc.h: {e}"), None)
            })?;
            // gnu89 inline: a plain `inline` function gets its out-of-line definition, which
            // a call at -O0 needs (SV-COMP programs rely on this, as gcc's verifiers do).
            Command::new(&clang)
                .args(["-O0", "-g", "-S", "-emit-llvm", "-fno-discard-value-names"])
                .args(["-D__FENCER__=1", "-Wno-everything", "-fgnu89-inline"])
                .args(&opts.flags)
                .arg("-idirafter")
                .arg(&headers.0)
                .arg(path)
                .args(["-o", "-"])
                .output()
                .map_err(|e| {
                    std::io::Error::new(e.kind(), format!("cannot run {}: {e}", clang.display()))
                })
        }
    };
    let output =
        output.map_err(|e| Error::plain(&file, e.to_string(), Some(INSTALL_HELP.into())))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(Error::plain(
            &file,
            format!(
                "the C compiler rejected the program:\n{}",
                stderr.trim_end()
            ),
            None,
        ));
    }
    String::from_utf8(output.stdout)
        .map_err(|_| Error::plain(&file, "the compiler's output is not UTF-8 text", None))
}

/// Compiles (or reads) a C program and lowers it for the given memory model. The model
/// matters because C11 atomics map to different fences on x86-TSO and on PSO. The
/// functions of fencer's C library ([`RUNTIME_SOURCE`]) that the program calls and does not
/// define are linked in first.
pub fn load(path: &Path, opts: &CompileOptions, model: ModelKind) -> Result<Program, Error> {
    let text = llvm_text(path, opts)?;
    let text = link_runtime(path, &text, opts)?;
    load_llvm_text_with(path, &text, model, opts.semantics(false))
}

/// [`load`] for the symbolic engine: `__VERIFIER_nondet_*()` calls become inputs
/// ([`fencer_ir::Op::Nondet`]) instead of refusing the program.
pub fn load_with_inputs(
    path: &Path,
    opts: &CompileOptions,
    model: ModelKind,
) -> Result<Program, Error> {
    let text = llvm_text(path, opts)?;
    let text = link_runtime(path, &text, opts)?;
    load_llvm_text_with(path, &text, model, opts.semantics(true))
}

/// fencer's C library: POSIX synchronisation (semaphores, read-write locks, barriers,
/// `pthread_once`, thread-specific data) and string functions, written in the C the
/// front-end models. Counterexamples name it `fencer_rt.c`.
pub const RUNTIME_SOURCE: &str = include_str!("../runtime/fencer_rt.c");

/// The functions [`RUNTIME_SOURCE`] defines: a program that declares none of them is not
/// linked with it, which spares a compilation (a test holds the list to the source).
pub const RUNTIME_FUNCTIONS: &[&str] = &[
    "__errno_location",
    "sem_init",
    "sem_wait",
    "sem_trywait",
    "sem_post",
    "sem_getvalue",
    "sem_destroy",
    "pthread_rwlock_init",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_tryrdlock",
    "pthread_rwlock_wrlock",
    "pthread_rwlock_trywrlock",
    "pthread_rwlock_unlock",
    "pthread_rwlock_destroy",
    "pthread_barrier_init",
    "pthread_barrier_destroy",
    "pthread_once",
    "pthread_detach",
    "pthread_equal",
    "pthread_key_create",
    "pthread_key_delete",
    "pthread_getspecific",
    "pthread_setspecific",
    // Not for programs to call: the front-end calls it at thread exit when keys exist.
    "__fencer_tls_exit",
    "strlen",
    "strnlen",
    "strcpy",
    "strncpy",
    "strcat",
    "strncat",
    "strcmp",
    "strncmp",
    "strchr",
    "strrchr",
    "memcmp",
    "memchr",
    "memcpy",
    "memmove",
    "memset",
    "abs",
    "labs",
    "llabs",
];

/// `genmc.h` for programs written for GenMC (its test suite, its users' harnesses): its
/// annotations are hints to GenMC's own reductions and become plain C here. See
/// docs/c.md.
pub const GENMC_HEADER: &str = include_str!("../runtime/genmc.h");

/// The name counterexamples give the C library's source.
pub const RUNTIME_FILE: &str = "fencer_rt.c";
/// The compilation directory the library's debug information names (see `lower`).
pub(crate) const RUNTIME_DIR: &str = "<fencer>";

/// A private temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(file: &str) -> Result<TempDir, Error> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "fencer-c-{}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| {
            Error::plain(file, format!("cannot create a temporary folder: {e}"), None)
        })?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The library compiled to LLVM IR, once per process; `None` when clang 14 is not there
/// (programs then load without it, and a call to a library function is refused when an
/// execution reaches it).
pub fn runtime_text(opts: &CompileOptions) -> Option<&'static str> {
    static TEXT: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        let clang = find_tool(
            opts.clang.as_deref(),
            "FENCER_CLANG",
            &["clang-14", "/usr/lib/llvm-14/bin/clang"],
        )?;
        let cached = runtime_cache_file(&clang);
        if let Some(text) = cached
            .as_ref()
            .and_then(|f| std::fs::read_to_string(f).ok())
        {
            return Some(text);
        }
        let text = compile_runtime(&clang)?;
        if let Some(f) = cached {
            store_in_cache(&f, &text);
        }
        Some(text)
    })
    .as_deref()
}

/// Where the compiled library is kept between runs: compiling it is 70 ms of the 160 ms
/// a small program that uses it takes from start to verdict. Named by a hash of the
/// source, of fencer's version and of the compiler (its path, size and modification
/// time), so that a changed library or compiler is compiled afresh. `None` (compile every
/// time) with `FENCER_NO_CACHE` set, or without a cache directory (`$XDG_CACHE_HOME`,
/// else `~/.cache`).
fn runtime_cache_file(clang: &Path) -> Option<PathBuf> {
    if std::env::var_os("FENCER_NO_CACHE").is_some() {
        return None;
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    cache_file_in(&base, clang)
}

/// [`runtime_cache_file`] under the cache directory `base`.
fn cache_file_in(base: &Path, clang: &Path) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    let meta = std::fs::metadata(clang).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    RUNTIME_SOURCE.hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    clang.hash(&mut h);
    meta.len().hash(&mut h);
    meta.modified().ok().hash(&mut h);
    Some(
        base.join("fencer")
            .join(format!("fencer_rt-{:016x}.ll", h.finish())),
    )
}

/// Writes the compiled library to the cache, whole or not at all (a temporary file
/// renamed into place: two runs at once each write their own); a failure only means the
/// next run compiles it again.
fn store_in_cache(file: &Path, text: &str) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        ".{}.{}",
        file.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Compiles fencer's C library to textual LLVM IR.
fn compile_runtime(clang: &Path) -> Option<String> {
    let dir = TempDir::new("fencer_rt.c").ok()?;
    std::fs::write(dir.0.join(RUNTIME_FILE), RUNTIME_SOURCE).ok()?;
    let out = Command::new(clang)
        .current_dir(&dir.0)
        .args(["-O0", "-g", "-S", "-emit-llvm", "-fno-discard-value-names"])
        .args(["-fno-builtin", "-Wno-everything"])
        .arg(format!(
            "-fdebug-prefix-map={}={RUNTIME_DIR}",
            dir.0.display()
        ))
        .args([RUNTIME_FILE, "-o", "-"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

/// Links the library's functions that the program calls and does not define
/// (`llvm-link --only-needed`); the program as it is when the tools are missing.
fn link_runtime(path: &Path, text: &str, opts: &CompileOptions) -> Result<String, Error> {
    let file = path.display().to_string();
    let declared = |l: &str| {
        l.starts_with("declare ")
            && RUNTIME_FUNCTIONS
                .iter()
                .any(|f| l.contains(&format!("@{f}(")))
    };
    if !text.lines().any(declared) {
        return Ok(text.to_string());
    }
    let Some(rt) = runtime_text(opts) else {
        return Ok(text.to_string());
    };
    let Some(link) = find_tool(
        None,
        "FENCER_LLVM_LINK",
        &["llvm-link-14", "/usr/lib/llvm-14/bin/llvm-link"],
    ) else {
        return Ok(text.to_string());
    };
    let dir = TempDir::new(&file)?;
    let user = dir.0.join(temp_name(path));
    let lib = dir.0.join("fencer_rt.ll");
    std::fs::write(&user, text)
        .and_then(|_| std::fs::write(&lib, rt))
        .map_err(|e| Error::plain(&file, format!("cannot write a temporary file: {e}"), None))?;
    let out = Command::new(&link)
        .args(["--only-needed", "-S"])
        .arg(&user)
        .arg(&lib)
        .args(["-o", "-"])
        .output()
        .map_err(|e| Error::plain(&file, format!("cannot run llvm-link: {e}"), None))?;
    if !out.status.success() {
        // The parser's message, about the user's file under its own name, without the
        // tool's name and its closing "error loading file" line.
        let stderr = String::from_utf8_lossy(&out.stderr)
            .replace(&user.display().to_string(), &file)
            .replace(&format!("{}: ", link.display()), "");
        let stderr: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.contains("loading file"))
            .collect();
        let stderr = stderr.join("\n");
        let stderr = stderr.trim_end();
        return Err(Error::plain(
            &file,
            format!("cannot read the LLVM IR: {stderr}"),
            Some("fencer reads LLVM 14 IR (typed pointers), as clang-14 writes it".into()),
        ));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| Error::plain(&file, "llvm-link's output is not UTF-8 text", None))
}

/// The temporary copy's name: the user's file name, so that tools' messages that name it
/// can be mapped back.
fn temp_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
        .unwrap_or("program");
    format!("{stem}.ll")
}

/// Lowers textual LLVM 14 IR; `path` names the program in reports and errors.
pub fn load_llvm_text(path: &Path, text: &str, model: ModelKind) -> Result<Program, Error> {
    load_llvm_text_with(path, text, model, Semantics::default())
}

/// [`load_llvm_text`] with the given [`Semantics`].
pub fn load_llvm_text_with(
    path: &Path,
    text: &str,
    model: ModelKind,
    semantics: Semantics,
) -> Result<Program, Error> {
    let file = path.display().to_string();
    // llvm-ir reads from a file; a private temporary one keeps concurrent runs apart.
    let dir = TempDir::new(&file)?;
    let ll = dir.0.join(temp_name(path));
    let module = std::fs::write(&ll, text)
        .map_err(|e| e.to_string())
        .and_then(|_| llvm_ir::Module::from_ir_path(&ll));
    drop(dir);
    let module = module.map_err(|e| {
        // The temporary copy is the user's file (or its disassembly): name the user's.
        let e = e.replace(&ll.display().to_string(), &file);
        Error::plain(
            &file,
            format!("cannot read the LLVM IR: {}", e.trim_end()),
            Some("fencer reads LLVM 14 IR (typed pointers), as clang-14 writes it".into()),
        )
    })?;
    let mut prog = lower::lower_with(&module, text, &file, model, semantics)?;
    // `-O0` code computes through chains of temporaries that every execution would
    // interpret again (see `fencer_ir::simplify`).
    fencer_ir::simplify::forward_substitute(&mut prog);
    fencer_ir::barrier::drop_unused_serials(&mut prog);
    // The variant is the program a `--no-spurious-wakeups` run loads: the same passes, so
    // that its traces replay under that option.
    if let Some(v) = prog.wait_variant.as_deref_mut() {
        fencer_ir::simplify::forward_substitute(v);
        fencer_ir::barrier::drop_unused_serials(v);
    }
    Ok(prog)
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    /// The compiled library is named by the compiler as well as the source: another
    /// compiler (or the same one changed) does not reuse it; and what is stored is read
    /// back whole.
    #[test]
    fn the_library_cache_is_keyed_by_the_compiler_and_keeps_what_it_stores() {
        let dir = TempDir::new("cache-test").unwrap();
        let (a, b) = (dir.0.join("clang-a"), dir.0.join("clang-b"));
        std::fs::write(&a, "one compiler").unwrap();
        std::fs::write(&b, "another compiler").unwrap();
        let base = dir.0.join("cache");
        let fa = cache_file_in(&base, &a).unwrap();
        assert_ne!(fa, cache_file_in(&base, &b).unwrap());
        assert_eq!(fa, cache_file_in(&base, &a).unwrap());
        std::fs::write(&a, "the same compiler, rebuilt").unwrap();
        assert_ne!(fa, cache_file_in(&base, &a).unwrap());
        assert!(cache_file_in(&base, &dir.0.join("no-such-clang")).is_none());
        store_in_cache(&fa, "; the library");
        assert_eq!(std::fs::read_to_string(&fa).unwrap(), "; the library");
        assert_eq!(std::fs::read_dir(fa.parent().unwrap()).unwrap().count(), 1);
    }
}
