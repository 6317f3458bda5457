//! The on-disk build cache: length-prefixed keys hashed with BLAKE3, the record of the headers
//! a build read (key 1), the stored SPIR-V and log under key 2 (key 1 plus those headers' current
//! contents), and atomic writes. Every failure here is logged and otherwise ignored.
//!
//! It stores what a build made and never builds: what goes into key 1 is [`super::build`]'s.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::error::BuildError;
use super::tools::{Config, SPIRV_MAGIC, unique_suffix};

/// The outcome of running the tools.
pub(super) struct Built {
    pub(super) spirv: Vec<u8>,
    /// The tools' stderr (warnings), with temporary paths replaced by the user's.
    pub(super) log: String,
    /// Absolute paths of every file on disk the sources included.
    pub(super) headers: Vec<PathBuf>,
}

pub(super) type Key = [u8; 32];

/// Hashes length-prefixed fields, so that no two field lists give the same byte stream. BLAKE3
/// (vectorised) rather than SHA-256 (in software here): a key hashes the program's source and
/// every header it read, clang's `opencl-c.h` among them, at every build, and SHA-256 took half
/// the instructions of checking an empty kernel (1.6 of 3.1 M) and 7 M for CLBlast's GEMM
/// program.
pub(super) struct KeyHasher(blake3::Hasher);

impl KeyHasher {
    pub(super) fn new(domain: &str) -> KeyHasher {
        let mut hasher = KeyHasher(blake3::Hasher::new());
        hasher.field(domain.as_bytes());
        hasher
    }

    pub(super) fn field(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }

    pub(super) fn finish(self) -> Key {
        *self.0.finalize().as_bytes()
    }
}

/// Key 2: key 1 plus the current contents of the headers the last build read.
fn content_key(key1: &Key, headers: &[PathBuf]) -> Key {
    let mut hasher = KeyHasher::new("clrace-compile-content-v2");
    hasher.field(key1);
    for header in headers {
        hasher.field(header.as_os_str().as_encoded_bytes());
        match fs::read(header) {
            Ok(contents) => {
                hasher.field(b"present");
                hasher.field(&contents);
            }
            Err(_) => hasher.field(b"missing"),
        }
    }
    hasher.finish()
}

fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

struct CachedBuild {
    spirv: Vec<u8>,
    log: String,
}

const ENTRY_MAGIC: &[u8; 8] = b"clrace1\n";

/// The SPIR-V and the tools' log for `key1`: from the cache when it has them, else from
/// `build`, whose result is then stored.
pub(super) fn cached_or_built(
    config: &Config,
    key1: &Key,
    build: impl FnOnce() -> Result<Built, BuildError>,
) -> Result<(Vec<u8>, String), BuildError> {
    let cache = config.cache_dir.as_deref().map(|dir| Cache { dir });
    if let Some(entry) = cache.as_ref().and_then(|c| c.lookup(key1)) {
        return Ok((entry.spirv, entry.log));
    }
    let built = build()?;
    if let Some(cache) = &cache {
        cache.store(key1, &built);
    }
    Ok((built.spirv, built.log))
}

/// The cache directory. Every failure here is logged at debug level and otherwise ignored: a
/// cache problem never fails a build.
struct Cache<'a> {
    dir: &'a Path,
}

impl Cache<'_> {
    fn lookup(&self, key1: &Key) -> Option<CachedBuild> {
        let record = fs::read_to_string(self.record_path(key1)).ok()?;
        let headers: Vec<PathBuf> = record.lines().map(PathBuf::from).collect();
        let bytes = fs::read(self.entry_path(&content_key(key1, &headers))).ok()?;
        let entry = decode_entry(&bytes);
        if entry.is_none() {
            tracing::debug!("ignoring a malformed compile cache entry in {}", self.dir.display());
        }
        entry
    }

    fn store(&self, key1: &Key, built: &Built) {
        let Some(record) = encode_record(&built.headers) else {
            return; // A header path we cannot write one per line: skip caching.
        };
        let entry = encode_entry(&built.spirv, &built.log);
        let entry_path = self.entry_path(&content_key(key1, &built.headers));
        let result = fs::create_dir_all(self.dir)
            .and_then(|()| write_atomically(&entry_path, &entry))
            .and_then(|()| write_atomically(&self.record_path(key1), record.as_bytes()));
        if let Err(e) = result {
            tracing::debug!("not caching the build in {}: {e}", self.dir.display());
        }
    }

    fn record_path(&self, key1: &Key) -> PathBuf {
        self.dir.join(format!("{}.deps", hex(key1)))
    }

    fn entry_path(&self, key2: &Key) -> PathBuf {
        self.dir.join(format!("{}.spv", hex(key2)))
    }
}

fn encode_record(headers: &[PathBuf]) -> Option<String> {
    let mut record = String::new();
    for header in headers {
        let text = header.to_str().filter(|t| !t.contains(['\n', '\r']))?;
        record.push_str(text);
        record.push('\n');
    }
    Some(record)
}

/// Entry layout: magic, log length (u64 LE), log, SPIR-V.
fn encode_entry(spirv: &[u8], log: &str) -> Vec<u8> {
    let mut bytes = ENTRY_MAGIC.to_vec();
    bytes.extend((log.len() as u64).to_le_bytes());
    bytes.extend(log.as_bytes());
    bytes.extend(spirv);
    bytes
}

fn decode_entry(bytes: &[u8]) -> Option<CachedBuild> {
    let rest = bytes.strip_prefix(ENTRY_MAGIC)?;
    let (len, rest) = rest.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    if rest.len() < len {
        return None;
    }
    let (log, spirv) = rest.split_at(len);
    if !spirv.starts_with(&SPIRV_MAGIC) {
        return None;
    }
    Some(CachedBuild { spirv: spirv.to_vec(), log: String::from_utf8(log.to_vec()).ok()? })
}

/// Writes to a temporary file next to `path` and renames it into place, so readers see either
/// the old file or the whole new one.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".tmp-{}", unique_suffix()));
    let temp = PathBuf::from(temp);
    let result = fs::write(&temp, bytes).and_then(|()| fs::rename(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Removes the oldest files of `dir` (by modification time; temporary files, whose names start
/// with `.` or hold `.tmp-`, are left alone) while it holds `max` or more, making room for one
/// more.
pub(crate) fn make_room(dir: &Path, max: usize) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && !name.contains(".tmp-")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() < max {
        return;
    }
    files.sort();
    for (_, path) in &files[..=files.len() - max] {
        let _ = fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_entry_round_trips() {
        let spirv = [SPIRV_MAGIC.as_slice(), &[0u8; 16]].concat();
        let entry = decode_entry(&encode_entry(&spirv, "warning: x\n")).unwrap();
        assert_eq!((entry.spirv, entry.log.as_str()), (spirv, "warning: x\n"));
        assert!(decode_entry(b"clrace1\n\xff").is_none());
    }
}
