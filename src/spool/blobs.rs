//! The spool's content-addressed blob store: `DIR/blobs/XX/HASH.zst`, HASH the blake3 hash (hex)
//! of the uncompressed bytes and XX its first two digits, compressed with zstd at level 1. A
//! blob that is there is not written again, so a buffer many launches share is stored once; a
//! blob is written to a temporary file and renamed, so one that is there is complete.
//!
//! It knows nothing of launches or programs: bytes in, a hash out, and back.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::format::BlobRef;

/// The zstd level: fast, and still shrinks the zero-filled buffers most snapshots hold.
const LEVEL: i32 = 1;

/// Blobs whose compressed file is at most this many bytes are read whole and decompressed in
/// one call by a decompressor each thread keeps; larger ones are decompressed as they are read
/// (no compressed copy held). A stream decoder allocates a window of up to a megabyte for
/// every blob, which a check of many small launches (a spooled BLAS run: three buffers of a
/// few kilobytes each) paid three times a launch, mapped and unmapped by the allocator.
const WHOLE: u64 = 4 << 20;

thread_local! {
    /// The decompressor of [`decompress_whole`], made on the thread's first blob and kept.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// The prefix of temporary files in a spool: readers ignore them.
pub const TEMP_PREFIX: &str = ".tmp-";

/// The blobs under one directory (`DIR/blobs`).
#[derive(Debug)]
pub struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    /// The blobs under `dir`, which need not exist yet ([`Blobs::put`] makes what it needs).
    pub fn new(dir: impl Into<PathBuf>) -> Blobs {
        Blobs { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the blob of `hash` is.
    pub fn path(&self, hash: &str) -> PathBuf {
        self.dir.join(hash.get(..2).unwrap_or("00")).join(format!("{hash}.zst"))
    }

    /// Whether the blob of `hash` is stored.
    pub fn contains(&self, hash: &str) -> bool {
        self.path(hash).is_file()
    }

    /// The reference `bytes` would have.
    pub fn reference(bytes: &[u8]) -> BlobRef {
        BlobRef { hash: blake3::hash(bytes).to_hex().to_string(), size: bytes.len() as u64 }
    }

    /// Stores `bytes` unless they are stored already. Returns their reference and the bytes
    /// written to disk (0 when they were there). Compresses as it writes: no compressed copy is
    /// held in memory.
    pub fn put(&self, bytes: &[u8]) -> Result<(BlobRef, u64), String> {
        let blob = Blobs::reference(bytes);
        let path = self.path(&blob.hash);
        if path.is_file() {
            return Ok((blob, 0));
        }
        let parent = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
        let written = write_atomically_with(&path, |file| {
            let mut encoder = zstd::stream::write::Encoder::new(std::io::BufWriter::new(file), LEVEL)?;
            encoder.write_all(bytes)?;
            encoder.finish()?.flush()
        })?;
        Ok((blob, written))
    }

    /// The bytes of `blob`, checked against its size and hash.
    pub fn get(&self, blob: &BlobRef) -> Result<Vec<u8>, String> {
        let path = self.path(&blob.hash);
        let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("blob {} is missing from the spool ({} not found)", blob.hash, path.display())
            }
            _ => format!("cannot read blob {}: {e}", path.display()),
        })?;
        let corrupt = |why: String| format!("blob {} is corrupt: {why}", path.display());
        let capacity =
            usize::try_from(blob.size).map_err(|_| corrupt(format!("its size {} is too large", blob.size)))?;
        let packed = file.metadata().map_or(u64::MAX, |m| m.len());
        let bytes = if packed <= WHOLE {
            let mut compressed = Vec::with_capacity(packed as usize);
            (&file).read_to_end(&mut compressed).map_err(|e| corrupt(e.to_string()))?;
            // A blob that does not decompress in one call is streamed, which says why.
            match decompress_whole(&compressed, capacity) {
                Some(bytes) => bytes,
                None => stream(&compressed[..], capacity).map_err(corrupt)?,
            }
        } else {
            stream(file, capacity).map_err(corrupt)?
        };
        if bytes.len() as u64 != blob.size {
            return Err(corrupt(format!("it holds other than the {} bytes stored", blob.size)));
        }
        if blake3::hash(&bytes).to_hex().as_str() != blob.hash {
            return Err(corrupt("its contents do not match its hash".into()));
        }
        Ok(bytes)
    }

    /// The size on disk of the blob of `hash`, if it is stored.
    pub fn stored_size(&self, hash: &str) -> Option<u64> {
        std::fs::metadata(self.path(hash)).ok().map(|m| m.len())
    }
}

/// `compressed` decompressed in one call, into a buffer of one byte more than `size` (a blob
/// that holds more then fails, or reads as more than stored); None when that fails.
fn decompress_whole(compressed: &[u8], size: usize) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size.checked_add(1)?).ok()?;
    DECOMPRESSOR.with(|decompressor| {
        let mut decompressor = decompressor.borrow_mut();
        let decompressor = match &mut *decompressor {
            Some(made) => made,
            None => decompressor.insert(zstd::bulk::Decompressor::new().ok()?),
        };
        decompressor.decompress_to_buffer(compressed, &mut bytes).ok()
    })?;
    Some(bytes)
}

/// The bytes of a blob of `size` bytes decompressed as `packed` is read, up to one byte more
/// than `size` (to see a blob that holds more without reading all of it).
fn stream(packed: impl Read, size: usize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::with_capacity(size);
    let decoder = zstd::stream::read::Decoder::new(packed).map_err(|e| e.to_string())?;
    decoder.take((size as u64).saturating_add(1)).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so that `path`
/// either does not exist or is complete. A failure leaves no temporary file behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_atomically_with(path, |mut file| file.write_all(bytes)).map(|_| ())
}

/// Writes `path` with `write` through a temporary file beside it and a rename. Returns the
/// bytes written. A failure leaves no temporary file behind.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(std::fs::File) -> std::io::Result<()>,
) -> Result<u64, String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!(
        "{TEMP_PREFIX}{}-{}-{name}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&temp)
        .and_then(write)
        .and_then(|()| std::fs::metadata(&temp))
        .and_then(|meta| std::fs::rename(&temp, path).map(|()| meta.len()));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        format!("cannot write {}: {e}", path.display())
    })
}
