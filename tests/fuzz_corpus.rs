//! Replays the committed fuzzing corpus (`tests/fuzz/<target>/`: seeds, and every input that
//! ever made a target panic) through the entry points the `cargo fuzz` targets drive, on
//! stable Rust. Each input must be accepted or refused with a message; a panic fails the test
//! and names the file.

#[path = "fuzz/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};

use targets::Outcome;

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Runs `entry` on every input of `target`; returns how many were accepted and refused.
fn replay(target: &str, entry: fn(&[u8]) -> Outcome) -> (usize, usize) {
    let (mut accepted, mut refused) = (0, 0);
    for path in inputs(target) {
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| entry(&data))
            .unwrap_or_else(|_| panic!("{target}: {} made the entry point panic", path.display()));
        match outcome {
            Outcome::Ok => accepted += 1,
            Outcome::Refused(_) => refused += 1,
        }
    }
    (accepted, refused)
}

/// Refuses one named input with a message containing `expected`.
fn refuses(target: &str, entry: fn(&[u8]) -> Outcome, file: &str, expected: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz").join(target).join(file);
    match entry(&std::fs::read(&path).unwrap()) {
        Outcome::Refused(message) => assert!(message.contains(expected), "{file}: {message}"),
        Outcome::Ok => panic!("{file} was accepted"),
    }
}

#[test]
fn spirv_corpus() {
    let (accepted, refused) = replay("spirv", targets::spirv);
    // The seeds are our own kernels: they must load.
    assert!(accepted >= 5, "only {accepted} of the SPIR-V inputs loaded");
    assert!(refused >= 1, "no malformed input in the SPIR-V corpus");
    refuses("spirv", targets::spirv, "crash-ext-inst-operands", "OpenCL.std");
}

#[test]
fn launch_file_corpus() {
    let (accepted, refused) = replay("launch_file", targets::launch_file);
    assert!(accepted >= 1 && refused >= 1, "{accepted} accepted, {refused} refused");
}

#[test]
fn emulator_corpus() {
    let (accepted, _) = replay("emulate", targets::emulate);
    assert!(accepted >= 5, "only {accepted} of the emulator's inputs ran");
}

/// Every word past the header of each SPIR-V seed, replaced in turn by each of a few boundary
/// values (and the instruction's operand count by its neighbours), through loading, lowering
/// and a run: the mutations byte-level fuzzing reaches rarely, because they change the module's
/// structure rather than its bytes.
#[test]
fn every_word_of_the_seeds_replaced() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/emulate");
    let mut runs = 0;
    for path in inputs("emulate") {
        let bytes = std::fs::read(&path).unwrap();
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        for at in 5..words.len() {
            for value in [0, 1, 3, 17, words[3], words[3] + 1, 0xffff, 0xffff_ffff, words[at] ^ (1 << 16)] {
                let mut mutated = words.clone();
                mutated[at] = value;
                let data: Vec<u8> = mutated.iter().flat_map(|w| w.to_le_bytes()).collect();
                let result = std::panic::catch_unwind(|| (targets::spirv(&data), targets::emulate(&data)));
                assert!(
                    result.is_ok(),
                    "{}: word {at} set to {value:#x} panics",
                    path.strip_prefix(&dir).unwrap().display()
                );
                runs += 1;
            }
        }
    }
    assert!(runs > 1000, "{runs}");
}
