//! Reading a spool: [`Spool::open`] checks `spool.json`, [`Spool::launches`] lists the complete
//! launches in SEQ order (temporary files of a write under way or cut off are not launches), and
//! a launch's manifest, program record and buffers are loaded from there. [`copy_launches`]
//! makes a smaller spool of some of the launches (`CLRACE_SPOOL_FINDINGS`). The layer states of
//! the processes that wrote it ([`Spool::runs`]) are read as one ([`Spool::layer_state`]).
//!
//! It knows nothing of checking or reporting: it hands back the stored data.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde::Deserialize;

use super::blobs::{Blobs, write_atomically};
use super::format::{FORMAT, SpoolInfo, SpooledLaunch};
use super::program::ProgramSpec;
use super::writer::manifest_path;

/// A launch listed in a spool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchEntry {
    pub seq: u64,
    /// Its manifest, `DIR/launches/SEQ.json`.
    pub path: PathBuf,
    /// The kernel's name; empty when the manifest cannot be read (then [`Spool::load`] says why).
    pub kernel: String,
}

/// A spool opened for reading.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
    info: SpoolInfo,
    blobs: Blobs,
    /// Program records read, by blob hash.
    programs: Mutex<HashMap<String, Arc<ProgramSpec>>>,
}

impl Spool {
    /// Opens the spool `dir`: it must hold a `spool.json` of a format this clrace reads.
    pub fn open(dir: &Path) -> Result<Spool, String> {
        let info_path = dir.join("spool.json");
        let bytes = std::fs::read(&info_path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound if dir.is_dir() => {
                format!("{} is not a clrace spool (it has no spool.json)", dir.display())
            }
            std::io::ErrorKind::NotFound => format!("{} is not a clrace spool (no such directory)", dir.display()),
            _ => format!("cannot read {}: {e}", info_path.display()),
        })?;
        let info: SpoolInfo = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is not a clrace spool: its spool.json cannot be read ({e})", dir.display()))?;
        if info.format > FORMAT {
            return Err(format!(
                "{} is a spool of format {}, written by clrace {}; this clrace ({}) reads format {FORMAT}: check it with a newer clrace",
                dir.display(),
                info.format,
                info.clrace,
                env!("CARGO_PKG_VERSION")
            ));
        }
        if info.format == 0 {
            return Err(format!("{} is not a clrace spool: its spool.json has format 0", dir.display()));
        }
        Ok(Spool {
            dir: dir.to_path_buf(),
            info,
            blobs: Blobs::new(dir.join("blobs")),
            programs: Mutex::new(HashMap::new()),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its `spool.json`.
    pub fn info(&self) -> &SpoolInfo {
        &self.info
    }

    pub fn blobs(&self) -> &Blobs {
        &self.blobs
    }

    /// `DIR/launches/SEQ.json`.
    pub fn manifest_path(&self, seq: u64) -> PathBuf {
        manifest_path(&self.dir, seq)
    }

    /// The complete launches, in SEQ order: every `launches/N.json` (temporary files are not).
    pub fn launches(&self) -> Result<Vec<LaunchEntry>, String> {
        let dir = self.dir.join("launches");
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // A spool whose application launched nothing may not have made it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
        };
        #[derive(Deserialize)]
        struct Head {
            kernel: String,
        }
        let mut launches = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
            let name = entry.file_name();
            let Some(seq) = name.to_str().and_then(seq_of) else { continue };
            let path = entry.path();
            let kernel = std::fs::read(&path)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Head>(&bytes).ok())
                .map_or_else(String::new, |head| head.kernel);
            launches.push(LaunchEntry { seq, path, kernel });
        }
        launches.sort_by_key(|l| l.seq);
        Ok(launches)
    }

    /// The manifest of a listed launch.
    pub fn load(&self, entry: &LaunchEntry) -> Result<SpooledLaunch, String> {
        load_manifest(&entry.path)
    }

    /// The program record of a launch (read once per program).
    pub fn program(&self, launch: &SpooledLaunch) -> Result<Arc<ProgramSpec>, String> {
        if let Some(program) = self.programs.lock().get(&launch.program.hash) {
            return Ok(program.clone());
        }
        let bytes = self.blobs.get(&launch.program)?;
        let program: ProgramSpec = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the program record {} cannot be read: {e}", launch.program.hash))?;
        let program = Arc::new(program);
        self.programs.lock().insert(launch.program.hash.clone(), program.clone());
        Ok(program)
    }

    /// The contents of a launch's buffers, by index.
    pub fn buffers(&self, launch: &SpooledLaunch) -> Result<Vec<Vec<u8>>, String> {
        launch.buffers.iter().map(|blob| self.blobs.get(blob)).collect()
    }

    /// Every run of the spool (one per process that wrote it, see `writer.rs`), in order, with
    /// its `runs/R/layer.json` (the layer's state at exit): None when that process did not get
    /// there (it crashed) or the file cannot be read.
    pub fn runs(&self) -> Vec<(u64, Option<serde_json::Value>)> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("runs")) else { return Vec::new() };
        let mut runs: Vec<u64> =
            entries.flatten().filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok())).collect();
        runs.sort_unstable();
        runs.into_iter()
            .map(|run| {
                let path = self.dir.join("runs").join(run.to_string()).join("layer.json");
                (run, std::fs::read(path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()))
            })
            .collect()
    }

    /// The settings run `run` wrote when it began (`runs/R/settings.json`), if it did.
    pub fn run_settings(&self, run: u64) -> Option<serde_json::Value> {
        let bytes = std::fs::read(self.dir.join("runs").join(run.to_string()).join("settings.json")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The layer's state at exit, of every run together: the first run's fields (`config`...),
    /// with `kernels` the ledgers of all runs added up, and `runs_missing` listing the runs
    /// whose process left no state (it crashed). None when no run left one.
    pub fn layer_state(&self) -> Option<serde_json::Value> {
        let runs = self.runs();
        let mut merged: Option<serde_json::Value> = None;
        let mut ledger = crate::series::Ledger::default();
        let mut missing = Vec::new();
        for (run, state) in runs {
            let Some(state) = state else {
                missing.push(run);
                continue;
            };
            if let Ok(run_ledger) = crate::series::Ledger::from_json(&state["kernels"]) {
                ledger.absorb(&run_ledger);
            }
            merged.get_or_insert(state);
        }
        let mut merged = merged?;
        merged["kernels"] = ledger.to_json();
        if !missing.is_empty() {
            merged["runs_missing"] = missing.into();
        }
        Some(merged)
    }
}

/// The SEQ of a manifest's file name (`00000042.json`), None for anything else.
fn seq_of(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".json")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Reads one manifest.
pub fn load_manifest(path: &Path) -> Result<SpooledLaunch, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    #[derive(Deserialize)]
    struct Format {
        format: u32,
    }
    let format = serde_json::from_slice::<Format>(&bytes)
        .map_err(|e| format!("{} is not a spooled launch: {e}", path.display()))?
        .format;
    if format > FORMAT {
        return Err(format!(
            "{} is a spooled launch of format {format}; this clrace reads format {FORMAT}: check it with a newer clrace",
            path.display()
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not a spooled launch: {e}", path.display()))
}

/// Opens a single launch's manifest, `DIR/launches/N.json`, and the spool DIR it belongs to.
pub fn open_manifest(path: &Path) -> Result<(Spool, SpooledLaunch), String> {
    let dir = path
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "launches"))
        .and_then(Path::parent)
        .ok_or_else(|| format!("{} is not in the launches/ directory of a spool", path.display()))?;
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let spool = Spool::open(dir)?;
    let launch = load_manifest(path)?;
    Ok((spool, launch))
}

/// Makes `to` a spool of the launches of `from` numbered `seqs` and the blobs they need (copied
/// as they are stored), without the layer's ledger.
pub fn copy_launches(from: &Spool, seqs: &[u64], to: &Path) -> Result<(), String> {
    let writer = super::writer::SpoolWriter::create(to, u64::MAX)?;
    let target = Blobs::new(to.join("blobs"));
    for &seq in seqs {
        let source = from.manifest_path(seq);
        let launch = load_manifest(&source)?;
        for blob in std::iter::once(&launch.program).chain(&launch.buffers) {
            if target.contains(&blob.hash) {
                continue;
            }
            let stored = from.blobs.path(&blob.hash);
            let bytes = std::fs::read(&stored).map_err(|e| format!("cannot read {}: {e}", stored.display()))?;
            let path = target.path(&blob.hash);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
            }
            write_atomically(&path, &bytes)?;
        }
        let bytes = std::fs::read(&source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        write_atomically(&manifest_path(writer.dir(), seq), &bytes)?;
    }
    Ok(())
}
