//! Every command that README.md and docs/guide/*.md show with its output runs here, and its
//! output must match (trycmd: ```console blocks, `$ fencer ...` then the output, `? N` for
//! the exit code, `[..]` and `...` for what depends on the machine or the clock).
//!
//! The commands run in a scratch directory whose `examples` links to the repository's, so
//! `examples/...` resolves as from the repository's root, and files the examples write
//! (`--write fixed.fen`, `--save-trace sb.trace`) land in the scratch directory, not in the
//! source tree. Pages run in parallel in that one directory, so a file a page writes needs
//! a name no other page uses. Blocks fenced as ```console,clang need clang-14 and the C
//! front-end: without either they are skipped (a copy of the page with those blocks marked
//! `ignore` is run) and the test says so. trycmd turns every backslash of the output into a
//! slash before it compares, so an expected output writes `[..]` for one (herd7's `/\`).
//!
//! After a deliberate change of output: `TRYCMD=overwrite cargo test -p fencer-cli --test
//! docs` rewrites the pages (it keeps the wildcards where it can; read the diff).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The info string of a block that needs clang-14.
const CLANG_FENCE: &str = "```console,clang";

fn on_path(program: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

/// The pages whose examples run: the README and every page of the guide.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![root.join("README.md")];
    let guide = root.join("docs/guide");
    let mut guide_pages: Vec<PathBuf> = std::fs::read_dir(&guide)
        .unwrap_or_else(|e| panic!("{}: {e}", guide.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    guide_pages.sort();
    pages.extend(guide_pages);
    pages
}

#[test]
fn docs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let fencer = PathBuf::from(env!("CARGO_BIN_EXE_fencer"));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(root.join("examples"), work.join("examples")).unwrap();

    // What docs/guide/parallel.md shows in a ```sh block (a redirection, which trycmd
    // cannot run) before it merges the parts.
    for i in 1..=2 {
        let out = Command::new(&fencer)
            .current_dir(&work)
            .args(["check", "examples/peterson_fenced.fen", "--model", "tso"])
            .args(["--shard", &format!("{i}/2"), "--json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "shard {i}/2 of peterson_fenced.fen"
        );
        std::fs::write(work.join(format!("part{i}.json")), out.stdout).unwrap();
    }

    let clang = cfg!(feature = "c") && on_path("clang-14").is_some();
    if !clang {
        eprintln!(
            "docs: skipping the C examples (```console,clang blocks): {}",
            if cfg!(feature = "c") {
                "clang-14 is not on PATH"
            } else {
                "fencer is built without the `c` feature"
            }
        );
    }
    // trycmd runs each case in the current directory when the case has no `.in` folder.
    std::env::set_current_dir(&work).unwrap();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("fencer", fencer)
        .timeout(std::time::Duration::from_secs(300));
    // views.md shows a trace file; trycmd skips a command whose program it does not know.
    cases.register_bin("cat", on_path("cat").expect("cat on PATH"));
    let skipped = work.join("without-clang");
    for page in pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap();
        if clang || !text.contains(CLANG_FENCE) {
            cases.case(&page);
        } else {
            // The same page with its C blocks ignored.
            let copy = skipped.join(page.strip_prefix(&root).unwrap());
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::write(&copy, text.replace(CLANG_FENCE, "```console,ignore")).unwrap();
            cases.case(&copy);
        }
    }
    cases.run();
}
