//! The cache of lowered programs: for a SPIR-V module, the IR that the lowering and the passes
//! made of it, in `lowered/` of clrace's cache directory (`CLRACE_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/clrace`, else `~/.cache/clrace`), so that a program built again (the next
//! `clrace check` of a launch, an application's next run under the layer) skips both. Lowering
//! and optimising a large kernel (CLBlast's GEMM) costs several times its check.
//!
//! An entry is keyed by a hash of the module's bytes and of clrace's own sources (the build
//! script's fingerprint): a build of other sources never reads it. It holds a format line and
//! the module, serialised (postcard) and compressed (zstd); one file per module, written to a
//! temporary name and renamed into place, at most [`MAX_ENTRIES`] (the oldest go first).
//!
//! What it cannot see: whether a module is valid. The caller validates what it reads as it
//! validates what it lowers, and lowers afresh when an entry is unreadable or invalid. Every
//! failure here is logged at debug level and otherwise ignored: a cache never fails a build.

use std::fs;
use std::path::PathBuf;

use crate::compile::{default_cache_dir, make_room, write_atomically};
use crate::ir;

/// Modules kept at most; storing one more removes the oldest.
const MAX_ENTRIES: usize = 256;
/// The first bytes of an entry: the format, which changes if the entry's layout does.
const MAGIC: &[u8] = b"clrace-lowered1\n";
/// A hash of the sources this build of clrace was compiled from (see `build.rs`).
const FINGERPRINT: &str = env!("CLRACE_SOURCE_FINGERPRINT");
/// zstd's level for entries: fast to write, and reading does not depend on it.
const LEVEL: i32 = 1;

/// The entry of one SPIR-V module in the directory of lowered modules, its key hashed once for
/// both the look-up and, on a miss, the store.
pub(super) struct Lowered {
    dir: PathBuf,
    path: PathBuf,
}

impl Lowered {
    /// The entry of `spirv` in `lowered/` of clrace's cache directory; None when there is none.
    pub(super) fn open(spirv: &[u8]) -> Option<Lowered> {
        Some(Lowered::at(default_cache_dir()?.join("lowered"), spirv))
    }

    pub(super) fn at(dir: PathBuf, spirv: &[u8]) -> Lowered {
        let path = dir.join(key(spirv));
        Lowered { dir, path }
    }

    /// The module stored for the entry's SPIR-V, if any was and it reads back whole.
    pub(super) fn load(&self) -> Option<ir::Module> {
        let bytes = fs::read(&self.path).ok()?;
        let module = decode(&bytes);
        if module.is_none() {
            tracing::debug!("ignoring an unreadable lowered module {}", self.path.display());
        }
        module
    }

    /// Stores `module` as what the entry's SPIR-V lowers to.
    pub(super) fn store(&self, module: &ir::Module) {
        let Some(entry) = encode(module) else { return };
        let result = fs::create_dir_all(&self.dir).and_then(|()| {
            make_room(&self.dir, MAX_ENTRIES);
            write_atomically(&self.path, &entry)
        });
        if let Err(e) = result {
            tracing::debug!("not caching the lowered module in {}: {e}", self.dir.display());
        }
    }
}

/// The entry's name: a hash of the fingerprint and the module's bytes.
fn key(spirv: &[u8]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"clrace-lowered-v1");
    hasher.update(&(FINGERPRINT.len() as u64).to_le_bytes());
    hasher.update(FINGERPRINT.as_bytes());
    hasher.update(spirv);
    hasher.finalize().to_hex().to_string()
}

fn encode(module: &ir::Module) -> Option<Vec<u8>> {
    let plain = postcard::to_stdvec(module).ok()?;
    let packed = zstd::bulk::compress(&plain, LEVEL).ok()?;
    let mut entry = Vec::with_capacity(MAGIC.len() + 8 + packed.len());
    entry.extend_from_slice(MAGIC);
    entry.extend((plain.len() as u64).to_le_bytes());
    entry.extend(packed);
    Some(entry)
}

fn decode(entry: &[u8]) -> Option<ir::Module> {
    let rest = entry.strip_prefix(MAGIC)?;
    let (len, packed) = rest.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    // A length no module of ours reaches is a damaged entry, not an allocation to attempt.
    if len > 1 << 30 {
        return None;
    }
    let plain = zstd::bulk::decompress(packed, len).ok()?;
    let (module, rest) = postcard::take_from_bytes::<ir::Module>(&plain).ok()?;
    rest.is_empty().then_some(module)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::ir::validate;
    use crate::{compile, opt, spirv};

    /// Lowers `source` as [`crate::Program`] does, before validation.
    fn lowered(source: &str) -> (Vec<u8>, ir::Module) {
        let built = compile::compile(source, Path::new("cached.cl"), "").unwrap();
        let mut module = spirv::load_and_lower(&built.spirv).unwrap();
        opt::optimise(&mut module);
        ir::reconverge::annotate(&mut module);
        (built.spirv, module)
    }

    const SOURCES: &[&str] = &[
        include_str!("../../bench/matmul.cl"),
        include_str!("../../bench/reduce.cl"),
        include_str!("../../bench/histogram.cl"),
        include_str!("../../bench/mandelbrot.cl"),
        include_str!("../../bench/bitonic.cl"),
        include_str!("../../tests/corpus/image_blur.cl"),
        include_str!("../../tests/lowering/printf.cl"),
        include_str!("../../tests/corpus/math_trig.cl"),
    ];

    #[test]
    fn a_stored_module_reads_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let lowered_dir = dir.path().join("lowered");
        for source in SOURCES {
            let (spirv, module) = lowered(source);
            let cache = Lowered::at(lowered_dir.clone(), &spirv);
            assert!(cache.load().is_none(), "nothing stored yet");
            cache.store(&module);
            let read = cache.load().expect("the stored module");
            // Every field, instruction by instruction.
            assert_eq!(format!("{read:?}"), format!("{module:?}"));
            validate::check_module(&read).unwrap();
        }
        assert_eq!(fs::read_dir(&lowered_dir).unwrap().count(), SOURCES.len());
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let (spirv, module) = lowered(SOURCES[1]);
        let cache = Lowered::at(dir.path().to_path_buf(), &spirv);
        cache.store(&module);
        let path = &cache.path;
        let whole = fs::read(path).unwrap();
        for damaged in [&whole[..whole.len() / 2], &whole[..MAGIC.len() + 3], b"clrace-lowered1\nxxxxxxxxxxxxxxxx"] {
            fs::write(path, damaged).unwrap();
            assert!(cache.load().is_none());
        }
        // Another build's entry (another format line) is not read either.
        let mut other = whole.clone();
        other[..MAGIC.len()].copy_from_slice(b"clrace-lowered0\n");
        fs::write(path, other).unwrap();
        assert!(cache.load().is_none());
        // A module's bytes changed by one bit are another key.
        let mut flipped = spirv.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert_ne!(key(&flipped), key(&spirv));
    }
}
