//! The `clrace` command line: `clrace check FILE.sim` runs one kernel standalone in the emulator.
//!
//! Exit status: 0 clean, 1 findings, 2 usage or launch-file error, 3 build error, 4 execution error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use clrace::exec::{ExecError, Finding, RunOptions};
use clrace::{BuildError, Program, launch};

const EXIT_FINDINGS: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_BUILD: u8 = 3;
const EXIT_EXEC: u8 = 4;

#[derive(Parser)]
#[command(name = "clrace", version, about = "A data-race detector for OpenCL kernels")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one kernel from a launch file (Oclgrind's .sim format) in the emulator.
    Check {
        /// Build options for the program, added after those of the launch file's `# ARGS:` line.
        #[arg(long, allow_hyphen_values = true)]
        build_options: Option<String>,
        /// Stop the kernel after this many branches and calls (all work-items together).
        #[arg(long, default_value_t = clrace::exec::DEFAULT_BUDGET)]
        budget: u64,
        /// Worker threads for work-groups (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// The launch file.
        file: PathBuf,
    },
}

/// A failure with the exit status it maps to.
struct Failure(u8, String);

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    match cli.command {
        Command::Check { build_options, budget, threads, file } => {
            match check(&file, build_options.as_deref(), RunOptions { budget, threads }) {
                Ok(code) => ExitCode::from(code),
                Err(Failure(code, message)) => {
                    eprintln!("clrace: {message}");
                    ExitCode::from(code)
                }
            }
        }
    }
}

fn check(file: &Path, extra_options: Option<&str>, run_options: RunOptions) -> Result<u8, Failure> {
    let usage = |m: String| Failure(EXIT_USAGE, m);
    let text = std::fs::read_to_string(file).map_err(|e| usage(format!("cannot read {}: {e}", file.display())))?;
    let mut header = launch::parse_header(&text).map_err(|e| usage(format!("{}: {e}", file.display())))?;
    let program_path = resolve_program(&header.program, file)
        .ok_or_else(|| usage(format!("{}: program file '{}' not found", file.display(), header.program)))?;
    let options = [header.build_options.as_deref(), extra_options].into_iter().flatten().collect::<Vec<_>>().join(" ");
    header.build_options = Some(options.clone());
    let program = build(&program_path, &options)?;
    if !program.build_log.trim().is_empty() {
        eprint!("{}", program.build_log);
    }
    let kernel = program.kernel(&header.kernel).ok_or_else(|| {
        usage(format!("{}: no kernel named '{}' in {}", file.display(), header.kernel, header.program))
    })?;
    let mut data = launch::parse_args(&text, &header, kernel).map_err(|e| usage(format!("{}: {e}", file.display())))?;
    let outcome = clrace::exec::run_with(&program, &data.launch, &mut data.buffers, &run_options)
        .map_err(|e| Failure(if matches!(e, ExecError::Launch(_)) { EXIT_USAGE } else { EXIT_EXEC }, e.to_string()))?;
    print!("{}", outcome.printf);
    for finding in &outcome.findings {
        eprintln!("\n{}", describe(finding, &header.kernel));
    }
    print!("{}", launch::format_dumps(&data, &data.buffers));
    Ok(if outcome.findings.is_empty() { 0 } else { EXIT_FINDINGS })
}

/// The program path as written, relative to the current directory first, then to the launch file.
fn resolve_program(program: &str, launch_file: &Path) -> Option<PathBuf> {
    let direct = PathBuf::from(program);
    if direct.is_file() {
        return Some(direct);
    }
    let beside = launch_file.parent()?.join(program);
    beside.is_file().then_some(beside)
}

fn build(path: &Path, options: &str) -> Result<Program, Failure> {
    let fail = |e: BuildError| Failure(EXIT_BUILD, format!("{}: {e}", path.display()));
    let is_spirv = path.extension().is_some_and(|e| e == "spv");
    if is_spirv {
        let bytes =
            std::fs::read(path).map_err(|e| Failure(EXIT_USAGE, format!("cannot read {}: {e}", path.display())))?;
        return Program::from_spirv(&bytes).map_err(fail);
    }
    let source = std::fs::read_to_string(path)
        .map_err(|e| Failure(EXIT_USAGE, format!("cannot read {}: {e}", path.display())))?;
    Program::from_source(&source, path, options).map_err(fail)
}

/// A finding as a person reads it.
fn describe(finding: &Finding, kernel: &str) -> String {
    match finding {
        Finding::OutOfBounds { store, space, allocation, offset, size, alloc_size, global_id, location } => {
            let access = if *store { "write" } else { "read" };
            let [x, y, z] = global_id;
            format!(
                "Invalid {access} of size {size} at {space} memory: '{allocation}' ({alloc_size} bytes), offset {offset}\n\
                 \tKernel: {kernel}\n\tWork-item: Global({x},{y},{z})\n\tAt {location}"
            )
        }
        Finding::BarrierDivergence { group, waiting, barrier, other, other_at } => {
            let ids = |v: &[u64; 3]| format!("({},{},{})", v[0], v[1], v[2]);
            format!(
                "Barrier divergence in work-group {}\n\tKernel: {kernel}\n\tWork-item: Local{} waits at the barrier at {barrier}\n\tWork-item: Local{} reached {other_at}",
                ids(group),
                ids(waiting),
                ids(other)
            )
        }
    }
}
