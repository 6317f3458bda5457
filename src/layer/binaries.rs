//! The layer's memory of program binaries. Applications cache what the driver built
//! (`CL_PROGRAM_BINARIES`) and from their second run create the program from those bytes, which
//! hold no source the emulator can read. So after each successful build of a program whose source
//! or SPIR-V we know, the bytes the driver returns are remembered, by their SHA-256, with that
//! source and the build options, in `binaries/` of clrace's cache directory; a program later
//! created from the same bytes is checked as its source.
//!
//! One small file per binary, written to a temporary name and renamed into place; at most
//! [`MAX_ENTRIES`] of them (the oldest go first). Every failure here only means a binary is not
//! remembered: nothing is returned to the application. It sees bytes and text, never a handle.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::state::ProgramSource;
use crate::compile::{make_room, write_atomically};

/// Binaries remembered at most; storing one more removes the oldest.
const MAX_ENTRIES: usize = 512;
/// A record (source text or module, and options) larger than this is not stored.
const MAX_RECORD_BYTES: usize = 16 << 20;
/// The first line of a record: the format, which changes if the record does.
const MAGIC: &str = "clrace-binary1\n";

/// Where binaries are remembered: `binaries/` of clrace's cache directory (`CLRACE_CACHE_DIR`,
/// else `$XDG_CACHE_HOME/clrace`, else `~/.cache/clrace`, as the compile cache).
pub fn directory() -> Option<PathBuf> {
    Some(crate::compile::default_cache_dir()?.join("binaries"))
}

fn key(binary: &[u8]) -> String {
    Sha256::digest(binary).iter().map(|b| format!("{b:02x}")).collect()
}

/// Remembers that `binary` was built from `source` with `options`. Programs of other kinds
/// (linked, unknown) are not remembered.
pub fn remember(dir: &Path, binary: &[u8], source: &ProgramSource, options: &str) {
    let body = match source {
        ProgramSource::Source(text) => json!({ "source": text, "options": options }),
        ProgramSource::Il(module) => {
            let hex: String = module.iter().map(|b| format!("{b:02x}")).collect();
            json!({ "il": hex, "options": options })
        }
        _ => return,
    };
    let record = format!("{MAGIC}{body}");
    if binary.is_empty() || record.len() > MAX_RECORD_BYTES || fs::create_dir_all(dir).is_err() {
        return;
    }
    let path = dir.join(key(binary));
    if fs::read(&path).is_ok_and(|old| old == record.as_bytes()) {
        return;
    }
    make_room(dir, MAX_ENTRIES);
    let _ = write_atomically(&path, record.as_bytes());
}

/// The source and build options `binary` was built from, if it was remembered.
pub fn recall(dir: &Path, binary: &[u8]) -> Option<(ProgramSource, String)> {
    let text = fs::read_to_string(dir.join(key(binary))).ok()?;
    let body: Value = serde_json::from_str(text.strip_prefix(MAGIC)?).ok()?;
    let options = body["options"].as_str()?.to_string();
    if let Some(source) = body["source"].as_str() {
        return Some((ProgramSource::Source(source.to_string()), options));
    }
    let hex = body["il"].as_str()?;
    let module: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| hex.get(i..i + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect();
    Some((ProgramSource::Il(module?), options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_binary_recalls_its_source_and_options() {
        let dir = tempfile::tempdir().unwrap();
        let source = ProgramSource::Source("kernel void k(global int *a) { a[0] = 1; }".into());
        remember(dir.path(), b"binary one", &source, "-DX=1");
        remember(dir.path(), b"binary two", &ProgramSource::Il(vec![3, 2, 0x23, 7]), "");
        let Some((ProgramSource::Source(text), options)) = recall(dir.path(), b"binary one") else { panic!() };
        assert_eq!((text.as_str(), options.as_str()), ("kernel void k(global int *a) { a[0] = 1; }", "-DX=1"));
        let Some((ProgramSource::Il(module), _)) = recall(dir.path(), b"binary two") else { panic!() };
        assert_eq!(module, [3, 2, 0x23, 7]);
        assert!(recall(dir.path(), b"never built").is_none());
        fs::write(dir.path().join(key(b"garbled")), "not a record").unwrap();
        assert!(recall(dir.path(), b"garbled").is_none());
    }

    #[test]
    fn the_directory_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let source = ProgramSource::Source("kernel void k(void) {}".into());
        for i in 0..MAX_ENTRIES + 3 {
            remember(dir.path(), format!("binary {i}").as_bytes(), &source, "");
        }
        assert!(fs::read_dir(dir.path()).unwrap().count() <= MAX_ENTRIES);
        assert!(recall(dir.path(), format!("binary {}", MAX_ENTRIES + 2).as_bytes()).is_some(), "the newest stays");
    }
}
