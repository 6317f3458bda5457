//! The entry points the fuzzers drive, shared by the `cargo fuzz` targets in `fuzz/` and by the
//! corpus replay in `tests/fuzz_corpus.rs` (both include this file by path).
//!
//! Each takes arbitrary bytes and goes through clrace's public API the way `clrace check` does:
//! it may fail with an error value, never panic. It cannot see inside the crate, so it checks
//! only what a caller can: that every outcome is `Ok` or an `Err` with a message.

// Each fuzz target binary uses one of the entry points.
#![allow(dead_code)]

use clrace::exec::{ArgValue, Launch, RunOptions};
use clrace::program::{AddressSpace, KernelArg, KernelInfo};
use clrace::{Program, launch};

/// What one input led to, for the replay test's assertions.
#[derive(Debug)]
pub enum Outcome {
    /// Accepted (and, for the emulator, run to the end or to a finding).
    Ok,
    /// Refused with this message.
    Refused(String),
}

fn refused(message: String) -> Outcome {
    assert!(!message.trim().is_empty(), "an error without a message");
    Outcome::Refused(message)
}

/// (a) Loads and lowers the bytes as a SPIR-V module.
pub fn spirv(data: &[u8]) -> Outcome {
    match Program::from_spirv(data) {
        Ok(_) => Outcome::Ok,
        Err(e) => refused(e.to_string()),
    }
}

/// The fixed kernel the launch-file target reads arguments for: one argument of each kind.
fn launch_kernel() -> KernelInfo {
    let arg = |name: &str, space, is_pointer, type_name: &str, size, pointee_size| KernelArg {
        name: name.into(),
        space,
        is_pointer,
        type_name: type_name.into(),
        size,
        pointee_size,
        handle: None,
    };
    KernelInfo {
        name: "k".into(),
        args: vec![
            arg("out", AddressSpace::Global, true, "int*", 8, 4),
            arg("n", AddressSpace::Private, false, "uint", 4, 0),
            arg("scratch", AddressSpace::Local, true, "float*", 8, 4),
            arg("table", AddressSpace::Constant, true, "float4*", 8, 16),
            arg("s", AddressSpace::Private, false, "S", 12, 0),
            arg("raw", AddressSpace::Global, true, "void*", 8, 1),
        ],
        required_local_size: None,
    }
}

/// The buffers the launch-file target still prints the dumps of.
const MAX_DUMPED_BYTES: usize = 1 << 16;

/// (b) Reads the bytes as a launch file (header, then arguments for [`launch_kernel`]).
pub fn launch_file(data: &[u8]) -> Outcome {
    let text = launch::decode(data);
    let header = match launch::parse_header(&text) {
        Ok(header) => header,
        Err(e) => return refused(e.to_string()),
    };
    match launch::parse_args(&text, &header, &launch_kernel(), 1) {
        Ok(data) => {
            // A dump's text grows with its buffer (about 20 bytes per byte in hex): printing a
            // large one is what the file asked for, not a fault, and would only time out here.
            if data.buffers.iter().map(Vec::len).sum::<usize>() <= MAX_DUMPED_BYTES {
                let _ = launch::format_dumps(&data, &data.buffers);
            }
            Outcome::Ok
        }
        Err(e) => refused(e.to_string()),
    }
}

/// Branches and calls the emulator target may take: enough for short loops, small enough that
/// one input runs in milliseconds.
const EMULATOR_BUDGET: u64 = 20_000;

/// (c) Lowers the bytes as SPIR-V and runs its first kernel on a small fixed launch: 4
/// work-items in groups of 2, 256-byte buffers holding 0, 1, 2, ..., zeros for values.
pub fn emulate(data: &[u8]) -> Outcome {
    let program = match Program::from_spirv(data) {
        Ok(p) => p,
        Err(e) => return refused(e.to_string()),
    };
    let Some(kernel) = program.kernels().next().cloned() else { return Outcome::Ok };
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    for arg in &kernel.args {
        let value = match (arg.handle, arg.space, arg.is_pointer) {
            (Some(_), ..) => return Outcome::Ok,
            (None, AddressSpace::Local, _) => ArgValue::Local(64),
            (None, _, true) => {
                buffers.push((0..=255u8).collect());
                ArgValue::Buffer(buffers.len() - 1)
            }
            (None, _, false) => ArgValue::Value(vec![0; arg.size.min(4096)]),
        };
        args.push(value);
    }
    let launch = Launch {
        kernel: kernel.name.clone(),
        work_dim: 1,
        global_offset: [0; 3],
        global_size: [4, 1, 1],
        local_size: [2, 1, 1],
        args,
    };
    let options = RunOptions { budget: EMULATOR_BUDGET, threads: Some(1), sub_group_size: 2, ..RunOptions::default() };
    match clrace::exec::run_with(&program, &launch, &mut buffers, &options) {
        Ok(_) => Outcome::Ok,
        Err(e) => refused(e.to_string()),
    }
}
