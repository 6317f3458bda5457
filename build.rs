//! Build script: a fingerprint of the code that turns SPIR-V into a program, for the cache of
//! lowered programs (`src/program/cache.rs`). A module lowered and optimised by one build of
//! clrace is reused only by a build of the same sources (everything under `src/`) and the same
//! dependency versions (`Cargo.lock`): any change to the lowering, the passes or the IR makes a
//! new fingerprint, and the cached modules of other builds are never read.
//!
//! The fingerprint is a hash of those files' paths and contents, exported to the crate as the
//! environment variable `CLRACE_SOURCE_FINGERPRINT` at compile time.

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let mut files = Vec::new();
    collect(Path::new("src"), &mut files);
    files.sort();
    files.push(PathBuf::from("Cargo.lock"));
    // Two differently seeded 64-bit hashes: a 128-bit fingerprint.
    let mut hashers = [DefaultHasher::new(), DefaultHasher::new()];
    hashers[1].write(b"second");
    for file in &files {
        let contents = fs::read(file).unwrap_or_default();
        for hasher in &mut hashers {
            hasher.write(file.as_os_str().as_encoded_bytes());
            hasher.write_usize(contents.len());
            hasher.write(&contents);
        }
    }
    let [a, b] = hashers.map(|h| h.finish());
    println!("cargo:rustc-env=CLRACE_SOURCE_FINGERPRINT={a:016x}{b:016x}");
}

/// Every file under `dir`, recursively.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
