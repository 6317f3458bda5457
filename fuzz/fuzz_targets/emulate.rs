//! Fuzz target: `targets::emulate` on each input (see `tests/fuzz/targets.rs`).
#![no_main]

#[path = "../../tests/fuzz/targets.rs"]
mod targets;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = targets::emulate(data);
});
