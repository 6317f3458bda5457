//! Runs the launch of a `.sim` launch file natively, on the first OpenCL device of the first
//! platform (pocl on our machines), and reports the best kernel time of several runs as the
//! device's profiling events measure it (`CL_PROFILING_COMMAND_START` to `END`): the native
//! column of `ci/bench`.
//!
//! The launch file is read by clrace's own reader (`clrace::launch`), against the kernel
//! signature that clrace's compiler pipeline reflects, so the arguments, sizes and initial
//! contents are exactly those `clrace check` runs. Every run starts from those contents (the
//! buffers are written again before each, untimed), so with `--dump` the dumps printed on
//! stdout are those of one run, in the format of `clrace check` and `oclgrind-kernel`, and can
//! be compared with theirs byte for byte.
//!
//! What it cannot see: anything the device does outside the kernel (buffer transfers, the
//! build) is not in the time. Image and sampler arguments are refused: the benchmark kernels
//! have none, and packing images is the differential tests' business.
//!
//! Usage: `native_sim [--reps N] [--dump] FILE.sim`; the time goes to stderr as
//! `native_sim: KERNEL on DEVICE: best_ms=T runs=N`.

mod common;
mod native;

use std::path::PathBuf;
use std::process::ExitCode;

use cl3::device;
use clrace::launch;

use common::{cl, first_device};
use native::Native;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("native_sim: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The command line.
struct Options {
    file: PathBuf,
    reps: u32,
    dump: bool,
}

fn parse_options() -> Result<Options, String> {
    const USAGE: &str = "usage: native_sim [--reps N] [--dump] FILE.sim";
    let mut args = std::env::args().skip(1);
    let (mut file, mut reps, mut dump) = (None, 3, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dump" => dump = true,
            "--reps" => {
                let value = args.next().ok_or(USAGE)?;
                reps = value.parse().ok().filter(|&n| n > 0).ok_or_else(|| format!("--reps {value}: not a count"))?;
            }
            _ if arg.starts_with('-') || file.is_some() => return Err(USAGE.into()),
            _ => file = Some(PathBuf::from(arg)),
        }
    }
    Ok(Options { file: file.ok_or(USAGE)?, reps, dump })
}

fn run() -> Result<(), String> {
    let options = parse_options()?;
    let file = &options.file;
    let text = launch::read_file(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let header = launch::parse_header(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let program_path = launch::resolve_program(&header.program, file)
        .ok_or_else(|| format!("{}: program file '{}' not found", file.display(), header.program))?;
    let source =
        launch::read_file(&program_path).map_err(|e| format!("cannot read {}: {e}", program_path.display()))?;
    let build_options = header.build_options.clone().unwrap_or_default();
    let reflected = clrace::Program::from_source(&source, &program_path, &build_options)
        .map_err(|e| format!("{}: {e}", program_path.display()))?;
    let info = reflected
        .kernel(&header.kernel)
        .ok_or_else(|| format!("no kernel named '{}' in {}", header.kernel, program_path.display()))?;
    let data = launch::parse_args(&text, &header, info, 1).map_err(|e| format!("{}: {e}", file.display()))?;

    let device = first_device()?;
    let device_name: String =
        device::get_device_info(device, device::CL_DEVICE_NAME).map_err(cl("clGetDeviceInfo"))?.into();
    let mut native = Native::new(device, &source, &build_options, &header.kernel)?;
    native.bind(&data)?;
    let mut best_ns = u64::MAX;
    for rep in 0..options.reps {
        if rep > 0 {
            native.restore(&data.buffers)?;
        }
        best_ns = best_ns.min(native.launch(&data)?);
    }
    if options.dump {
        let buffers = native.read_back(&data.buffers)?;
        print!("{}", launch::format_dumps(&data, &buffers));
    }
    eprintln!(
        "native_sim: {} on {device_name}: best_ms={:.4} runs={}",
        header.kernel,
        best_ns as f64 / 1e6,
        options.reps
    );
    Ok(())
}
