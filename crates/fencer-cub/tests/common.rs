//! The corpus of `../shared/cubicle` (Cubicle's and Cubicle-W's examples with their
//! verdicts), found relative to the repository root; tests skip with a message without it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub fn corpus() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cubicle");
    d.join("VERDICTS.tsv").exists().then_some(d)
}

pub struct Row {
    pub file: String,
    pub safe: bool,
    pub mode: String,
    pub brab: bool,
    /// The `options` column (e.g. `-brab 2 -forward-depth 6`).
    pub options: String,
    pub nodes: String,
}

impl Row {
    /// The value following `flag` in the row's options.
    pub fn option(&self, flag: &str) -> Option<u32> {
        let mut it = self.options.split_whitespace();
        while let Some(w) = it.next() {
            if w == flag {
                return it.next().and_then(|v| v.parse().ok());
            }
        }
        None
    }
}

pub fn rows(dir: &Path) -> Vec<Row> {
    let tsv = std::fs::read_to_string(dir.join("VERDICTS.tsv")).unwrap();
    tsv.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Row {
                file: c[0].to_string(),
                safe: c[1] == "safe",
                mode: c[2].to_string(),
                brab: c[3] == "yes",
                options: c.get(4).unwrap_or(&"").to_string(),
                nodes: c.get(8).unwrap_or(&"").to_string(),
            }
        })
        .collect()
}

/// The slowest rows (CPU seconds in release builds: germanish4 about 0.2 s,
/// distrib_channels about 1.2 s, distrib_channels_int1 about 0.65 s): `verdicts.rs` checks
/// them in a test of their own, and the explicit cross-check leaves their mutants out.
pub const SLOW: &[&str] = &[
    "classic/germanish4.cub",
    "classic/distrib_channels.cub",
    "classic/distrib_channels_int1.cub",
];

/// Rows without BRAB that plain backward search does not finish yet (they stop at their
/// limit, never a wrong answer): none today.
pub const PLAIN_OPEN: &[&str] = &[];

/// BRAB rows (`-brab 2`) that give their verdict with `brab` set from the row's options
/// (every one today).
pub const BRAB_PASS: &[&str] = &[
    "classic/flash_nodata.cub",
    "classic/flash_buggy.cub",
    "classic/german.cub",
    "classic/german.ctc.cub",
    "classic/szymanski_at.cub",
    "classic/bakery_lamport_na.cub",
    "classic/ricart_abdulla_int.cub",
];

/// TSO rows left to `--ignored` runs (none today: the slowest, `arbiter_v2_N`, takes about
/// 2 s in a debug build).
pub const SLOW_TSO: &[&str] = &[];

/// TSO rows fencer refuses (exit 2), with the reason: none today.
pub const REFUSED_TSO: &[(&str, &str)] = &[];

pub fn is_slow(row: &Row) -> bool {
    SLOW.contains(&row.file.as_str())
        || (row.mode == "tso" && SLOW_TSO.contains(&row.file.as_str()))
}

pub fn load(dir: &Path, row: &Row) -> Result<fencer_param::System, String> {
    let path = dir.join(&row.file);
    let src = std::fs::read_to_string(&path).unwrap();
    let mode = if row.mode == "tso" {
        fencer_cub::Mode::Tso
    } else {
        fencer_cub::Mode::Sc
    };
    fencer_cub::load(&row.file, &src, mode).map_err(|d| d.message)
}
