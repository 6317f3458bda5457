//! The `clrace` command line: `clrace check FILE.sim` runs one kernel standalone in the emulator
//! with the race detector attached, and reports what it finds; `clrace check DIR/launches/N.json`
//! does the same for one launch of a spool, and `clrace check DIR` checks a whole spool (or a
//! shard of it, which `clrace merge` joins with the others).
//!
//! `clrace run -- APP ARGS` runs an unmodified OpenCL application with the clrace layer loaded,
//! by default spooling its launches and checking the spool once it exited.
//!
//! Exit status: 0 clean, 1 findings, 2 usage or launch-file error, 3 build error, 4 execution error.
//! `clrace run` exits with the application's status when that is not 0.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

mod progress;
mod run;
mod spooled;

use clap::{Parser, Subcommand, ValueEnum};
use clrace::budget::MemoryBudget;
use clrace::detect;
use clrace::exec::{ExecError, RunOptions};
use clrace::report::{self, Sources};
use clrace::suppress::Suppressions;
use clrace::{BuildError, Program, launch_file};

const EXIT_FINDINGS: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_BUILD: u8 = 3;
const EXIT_EXEC: u8 = 4;

/// The default of `--print-limit` (and `CLRACE_PRINT_LIMIT` in the layer).
const DEFAULT_PRINT_LIMIT: u64 = clrace::suppress::DEFAULT_PRINT_LIMIT;

/// The default of `check --timeout`.
const DEFAULT_TIMEOUT_SECONDS: u64 = 300;

/// The default of `check --memory-mb`: half the machine's memory (None if it cannot be read).
fn default_memory_mb() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024 / 2)
}

#[derive(Parser)]
#[command(name = "clrace", version, about = "A data-race detector for OpenCL kernels")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Text,
    Json,
    /// SARIF 2.1.0: one log for the whole invocation.
    Sarif,
}

/// `--specialise`: when the kernel's code is specialised to the launch's by-value arguments.
#[derive(Clone, Copy, ValueEnum)]
enum SpecialiseArg {
    /// Never: the code runs as built.
    Off,
    /// For launches of at least 256 work-items that repay it: 4 per instruction of the kernel's
    /// code, or a launch repeated with the same arguments.
    Large,
    /// For every launch.
    Always,
}

#[derive(Subcommand)]
enum Command {
    /// Run an OpenCL application with every kernel launch checked (through the clrace layer).
    Run {
        /// Report format: human text, JSON Lines, or a SARIF 2.1.0 log written at exit.
        #[arg(long, value_enum, default_value = "text")]
        format: FormatArg,
        /// Append reports to this file instead of stderr (the SARIF log replaces its contents).
        #[arg(long)]
        output: Option<PathBuf>,
        /// Suppression rules (CLRACE_SUPPRESSIONS): findings they match are counted, not shown.
        #[arg(long)]
        suppressions: Option<PathBuf>,
        /// List the suppression rules and how often each matched, at exit.
        #[arg(long)]
        print_suppressions: bool,
        /// Show at most this many findings per kernel; the rest are counted (0: no limit).
        #[arg(long)]
        print_limit: Option<u64>,
        /// Check only these kernels (comma-separated names).
        #[arg(long)]
        kernels: Option<String>,
        /// Check only the first N launches of each kernel.
        #[arg(long)]
        first_launches: Option<u64>,
        /// Do not report write-write races in which both sides stored the same bytes.
        #[arg(long)]
        uniform_writes_benign: bool,
        /// Exit with the application's status even when something was found.
        #[arg(long)]
        no_fail: bool,
        /// Hold each checked launch on the device until its report is written (CLRACE_ORDER=before).
        #[arg(long)]
        before: bool,
        /// With --before: what a launch whose check found something does (CLRACE_ON_FINDING).
        #[arg(long, value_parser = ["continue", "skip", "abort"], requires = "before")]
        on_finding: Option<String>,
        /// Run each sub-group of W work-items in lockstep and classify races by it
        /// (CLRACE_SUB_GROUP_LOCKSTEP; W defaults to the sub-group size, 1 to 64).
        #[arg(long, value_name = "W", num_args = 0..=1, default_missing_value = "on", require_equals = true)]
        sub_group_lockstep: Option<String>,
        /// The layer library (default: libclrace.so next to this program).
        #[arg(long)]
        layer: Option<PathBuf>,
        /// Explore the schedules of the first launch of each kernel after its check
        /// (CLRACE_EXPLORE=1), as `check --explore` does.
        #[arg(long)]
        explore: bool,
        /// With --explore: explore the first N launches of each kernel (CLRACE_EXPLORE_LAUNCHES).
        #[arg(long, requires = "explore")]
        explore_launches: Option<u64>,
        /// With --explore: delays per schedule at most (CLRACE_EXPLORE_BOUND).
        #[arg(long, requires = "explore")]
        explore_bound: Option<usize>,
        /// With --explore: schedules per launch at most (CLRACE_EXPLORE_SCHEDULES).
        #[arg(long, requires = "explore")]
        explore_schedules: Option<usize>,
        /// With --explore: wall time of one launch's exploration, in seconds (CLRACE_EXPLORE_SECONDS).
        #[arg(long, requires = "explore")]
        explore_seconds: Option<u64>,
        /// With --explore: buffer arguments compared as multisets (CLRACE_COMPARE_MULTISET).
        #[arg(long, requires = "explore")]
        compare_multiset: Option<String>,
        /// Spool every launch into DIR (CLRACE_SPOOL) and keep it; by default the spool is a
        /// temporary directory, checked once the application exits and then removed.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["no_spool", "before", "explore"])]
        spool: Option<PathBuf>,
        /// Check launches inline while the application runs, as far as 2 checkers keep up,
        /// instead of spooling them (implied by --before and --explore).
        #[arg(long)]
        no_spool: bool,
        /// The spool's disk budget in MiB (CLRACE_SPOOL_MB); launches past it are named, not checked.
        #[arg(long, value_name = "N")]
        spool_mb: Option<u64>,
        /// Copy the spooled launches that had new findings into this new spool
        /// (CLRACE_SPOOL_FINDINGS), for a bug report or a CI artifact.
        #[arg(long, value_name = "DIR")]
        spool_findings: Option<PathBuf>,
        /// Spooled launches checked at once after the application exits (default: one per core).
        #[arg(long, value_name = "J")]
        jobs: Option<usize>,
        /// The application and its arguments.
        #[arg(required = true, last = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Write the manual pages (clrace.1, clrace-run.1, clrace-check.1) into DIR; the Debian
    /// package installs them.
    #[command(hide = true)]
    Manpages { dir: PathBuf },
    /// Print the lowered IR of an OpenCL C (or .spv) program, for debugging the lowering.
    #[command(hide = true)]
    Ir {
        /// Only this kernel and the functions it calls.
        #[arg(long)]
        kernel: Option<String>,
        /// Build options for the program.
        #[arg(long, allow_hyphen_values = true, default_value = "")]
        build_options: String,
        file: PathBuf,
    },
    /// Run one kernel from a launch file (Oclgrind's .sim format) or one spooled launch
    /// (DIR/launches/N.json) in the emulator and check it, or check every launch of a spool DIR.
    Check {
        /// Build options for the program, added after those of the launch file's `# ARGS:` line.
        #[arg(long, allow_hyphen_values = true)]
        build_options: Option<String>,
        /// Stop the kernel after this many branches and calls (all work-items together; default
        /// 2^32, or a spool's CLRACE_BUDGET).
        #[arg(long)]
        budget: Option<u64>,
        /// Worker threads for work-groups (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Work-items per sub-group (default 32).
        #[arg(long)]
        sub_group_size: Option<u32>,
        /// Run each sub-group of W work-items in lockstep (one instruction for all its active
        /// work-items) and classify every race by it; W (1 to 64, default the sub-group size) is
        /// then the sub-group size.
        #[arg(long, value_name = "W", num_args = 0..=1, default_missing_value = "0", require_equals = true)]
        sub_group_lockstep: Option<u32>,
        /// Report format: human text or JSON Lines (on stderr), or a SARIF 2.1.0 log (on stdout,
        /// instead of the printf output and the buffer dumps); default text, or a spool's.
        #[arg(long, value_enum)]
        format: Option<FormatArg>,
        /// Write the reports (or the SARIF log) to this file instead.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Suppression rules: findings they match are counted in the summary, not shown.
        #[arg(long)]
        suppressions: Option<PathBuf>,
        /// List the suppression rules and how often each matched, after the summary.
        #[arg(long)]
        print_suppressions: bool,
        /// Show at most this many findings (per kernel for a spool); the rest are counted in the
        /// summary (0: no limit; default 100, or a spool's CLRACE_PRINT_LIMIT).
        #[arg(long)]
        print_limit: Option<u64>,
        /// Do not report write-write races in which both sides stored the same bytes.
        #[arg(long)]
        uniform_writes_benign: bool,
        /// Run without the race detector (out-of-bounds and barrier checks stay on).
        #[arg(long)]
        no_races: bool,
        /// Report uninitialised values (private, __local, or `noinit` buffers' bytes nothing
        /// wrote) used as addresses, branch conditions or values stored to global memory.
        #[arg(long)]
        check_uninitialized: bool,
        /// Stop the kernel after this many seconds of wall time (0: no limit; default 300); for a
        /// spool, the seconds of CPU time of one launch's check (default: the layer's
        /// CLRACE_CHECK_TIMEOUT, else 60).
        #[arg(long)]
        timeout: Option<u64>,
        /// Stop the kernel when the emulator and the race detector would hold more than this
        /// many MiB (default: half the machine's memory; 0: no limit).
        #[arg(long)]
        memory_mb: Option<u64>,
        /// After the check, re-run the kernel under other orders of its conflicting atomics and
        /// compare final states (schedule exploration).
        #[arg(long)]
        explore: bool,
        /// With --explore: delays per schedule at most.
        #[arg(long, default_value_t = clrace::explore::DEFAULT_BOUND, requires = "explore")]
        explore_bound: usize,
        /// With --explore: schedules to run at most, the canonical one included.
        #[arg(long, default_value_t = clrace::explore::DEFAULT_SCHEDULES, requires = "explore")]
        explore_schedules: usize,
        /// With --explore: wall time for the whole exploration, in seconds (0: no limit).
        #[arg(long, default_value_t = clrace::explore::DEFAULT_SECONDS, requires = "explore")]
        explore_seconds: u64,
        /// With --explore: compare these buffers (argument names, comma-separated) as multisets
        /// of 4-byte elements, whose order may vary.
        #[arg(long, value_delimiter = ',', requires = "explore")]
        compare_multiset: Vec<String>,
        /// With --explore: run only the I-th (from 0) of N interleaved slices of the schedule
        /// list, written I/N; the shards' JSON reports merge by union (their schedule counts add).
        #[arg(long, value_name = "I/N", value_parser = clrace::explore::parse_shard, requires = "explore")]
        explore_shard: Option<(usize, usize)>,
        /// Print on stderr how long the check took, in three parts: reading the launch and
        /// building its program and inputs, the kernel run with its checks, and reporting (for
        /// benchmarks: the kernel part compares with a driver's kernel time).
        #[arg(long)]
        timings: bool,
        /// Run code specialised to the launch's by-value arguments (each a constant of the
        /// kernel, what it decides folded): for launches of at least 256 work-items with 4 per
        /// instruction of the kernel's code, or repeated with the same arguments (default),
        /// always, or never. Reports are the same; only the time differs.
        #[arg(long, value_enum)]
        specialise: Option<SpecialiseArg>,
        /// A spool: check only the I-th (from 0) of N slices of its launches (positions p in
        /// SEQ order with p % N == I), without the print limit; `clrace merge` joins the shards.
        #[arg(long, value_name = "I/N", value_parser = clrace::spool::check::parse_shard)]
        shard: Option<(usize, usize)>,
        /// A spool: launches checked at once (default: one per core); the reports do not depend on it.
        #[arg(long, value_name = "J")]
        jobs: Option<usize>,
        /// A spool: copy the launches that had new findings into this new spool
        /// (CLRACE_SPOOL_FINDINGS), for a bug report or a CI artifact.
        #[arg(long, value_name = "DIR")]
        spool_findings: Option<PathBuf>,
        /// The launch file (.sim), a spool directory, or one spooled launch (DIR/launches/N.json).
        file: PathBuf,
    },
    /// Write one spooled launch (DIR/launches/N.json) as a launch file of Oclgrind's format,
    /// OUTDIR/NAME.sim beside its program OUTDIR/NAME.cl, every buffer's bytes inline.
    Export {
        /// The files' name (default: the program's name in the spool, as reports call it).
        #[arg(long)]
        name: Option<String>,
        /// Mark every buffer argument the kernel may write `dump` (printed after a check).
        #[arg(long)]
        dump: bool,
        /// Leave out the device's extension options, which OpenCL drivers reject, so that the
        /// file also runs natively (clrace then builds it with its default extensions).
        #[arg(long)]
        portable: bool,
        /// The spooled launch, DIR/launches/N.json.
        launch: PathBuf,
        /// Where to write NAME.sim and NAME.cl (made if needed).
        outdir: PathBuf,
    },
    /// Join the JSON Lines reports (or SARIF logs) of the shards of a spool's check
    /// (`clrace check DIR --shard I/N`) into the report of one unsharded check.
    Merge {
        /// The shards' format: json (JSON Lines) or sarif; text cannot be merged.
        #[arg(long, value_enum, default_value = "json")]
        format: FormatArg,
        /// Show at most this many findings per kernel (0: no limit; default: the shards' own,
        /// given to them or to the layer, else 100).
        #[arg(long)]
        print_limit: Option<u64>,
        /// Write the merged report here instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
        /// The shards' reports.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

/// A format's name, as `CLRACE_FORMAT` takes it.
fn format_name(format: FormatArg) -> &'static str {
    match format {
        FormatArg::Text => "text",
        FormatArg::Json => "json",
        FormatArg::Sarif => "sarif",
    }
}

/// A failure with the exit status it maps to.
struct Failure(u8, String);

/// What `check` was asked to do besides running.
struct CheckOptions<'a> {
    extra_build_options: Option<&'a str>,
    run: RunOptions,
    /// The wall-time limit of the kernel run (`--timeout`).
    timeout: Option<Duration>,
    memory: Option<Arc<MemoryBudget>>,
    format: report::Format,
    /// `--format sarif`: the reports are gathered into one SARIF log (`format` is then JSON).
    sarif: bool,
    output: Option<PathBuf>,
    suppressions: Option<PathBuf>,
    print_suppressions: bool,
    print_limit: u64,
    races: bool,
    detect: detect::Options,
    /// `--explore` and its limits.
    explore: Option<ExploreOptions>,
    /// `--timings`: print how long each part of the check took.
    timings: bool,
}

/// What `check --explore` was asked for.
struct ExploreOptions {
    bound: usize,
    schedules: usize,
    time: Option<Duration>,
    multiset: Vec<String>,
    shard: Option<(usize, usize)>,
}

/// The race detector's shadow grows by many small pages; glibc's default of growing the heap
/// 128 KiB at a time costs more in system calls and page-table locking between threads than the
/// checking itself (vecadd: 0.93 s -> 0.65 s). Grow it 1 MiB at a time instead, and no more: a
/// launch's buffer larger than the room left at the heap's top (from
/// [`clrace::big_bytes::HUGE_FROM`] up, never in that room) gets a mapping of its own, whose
/// pages the system zeroes when first touched, where one carved from that room is cleared byte
/// by byte by `calloc` (with 64 MiB of room, vecadd's three 16 MiB buffers took 30 ms to make
/// instead of 6; the kernel's time is the same either way).
fn tune_allocator() {
    const ROOM: usize = 1 << 20;
    const _: () = assert!(ROOM < clrace::big_bytes::HUGE_FROM);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a glibc tuning parameter; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, ROOM as libc::c_int);
    }
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    match cli.command {
        Command::Run {
            format,
            output,
            suppressions,
            print_suppressions,
            print_limit,
            kernels,
            first_launches,
            uniform_writes_benign,
            no_fail,
            before,
            on_finding,
            sub_group_lockstep,
            layer,
            explore,
            explore_launches,
            explore_bound,
            explore_schedules,
            explore_seconds,
            compare_multiset,
            spool,
            no_spool,
            spool_mb,
            spool_findings,
            jobs,
            command,
        } => {
            let spool = match spool {
                Some(dir) => run::SpoolMode::Keep(dir),
                None if no_spool || before || explore => run::SpoolMode::Off,
                None => run::SpoolMode::Temporary,
            };
            let options = run::RunOptions {
                format: format_name(format),
                output,
                suppressions,
                print_suppressions,
                print_limit,
                kernels,
                first_launches,
                uniform_writes_benign,
                fail_on_findings: !no_fail,
                before,
                on_finding,
                sub_group_lockstep,
                layer,
                explore: explore.then(|| {
                    let numbers = [
                        ("CLRACE_EXPLORE_LAUNCHES", explore_launches),
                        ("CLRACE_EXPLORE_BOUND", explore_bound.map(|n| n as u64)),
                        ("CLRACE_EXPLORE_SCHEDULES", explore_schedules.map(|n| n as u64)),
                        ("CLRACE_EXPLORE_SECONDS", explore_seconds),
                    ];
                    let mut settings: Vec<(&'static str, String)> =
                        numbers.into_iter().filter_map(|(k, v)| Some((k, v?.to_string()))).collect();
                    settings.extend(compare_multiset.map(|names| ("CLRACE_COMPARE_MULTISET", names)));
                    settings
                }),
                spool,
                spool_mb,
                spool_findings,
                jobs,
                memory_mb: default_memory_mb(),
            };
            match run::run(&command, &options) {
                Ok(code) => ExitCode::from(code),
                Err(message) => {
                    eprintln!("clrace: {message}");
                    ExitCode::from(EXIT_USAGE)
                }
            }
        }
        Command::Merge { format, print_limit, output, files } => {
            spooled::merge(format, print_limit, output.as_deref(), &files)
        }
        Command::Export { name, dump, portable, launch, outdir } => {
            let options = clrace::spool::export::Options { name, dump, portable };
            spooled::export(&launch, &outdir, &options)
        }
        Command::Manpages { dir } => {
            let command = <Cli as clap::CommandFactory>::command();
            match std::fs::create_dir_all(&dir).and_then(|()| clap_mangen::generate_to(command, &dir)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("clrace: cannot write the manual pages into {}: {e}", dir.display());
                    ExitCode::from(EXIT_USAGE)
                }
            }
        }
        Command::Ir { kernel, build_options, file } => {
            let dump = build(&file, &build_options).and_then(|(program, _)| match kernel {
                None => Ok(program.module().dump()),
                Some(name) => program
                    .module()
                    .dump_kernel(&name)
                    .ok_or_else(|| Failure(EXIT_USAGE, format!("{}: no kernel named '{name}'", file.display()))),
            });
            match dump {
                Ok(text) => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
                Err(Failure(code, message)) => {
                    eprintln!("clrace: {message}");
                    ExitCode::from(code)
                }
            }
        }
        Command::Check {
            build_options,
            budget,
            threads,
            sub_group_size,
            sub_group_lockstep,
            format,
            output,
            suppressions,
            print_suppressions,
            print_limit,
            uniform_writes_benign,
            no_races,
            check_uninitialized,
            timeout,
            memory_mb,
            explore,
            explore_bound,
            explore_schedules,
            explore_seconds,
            compare_multiset,
            explore_shard,
            shard,
            jobs,
            spool_findings,
            timings,
            specialise,
            file,
        } => {
            if clrace::spool::check::is_spool(&file) {
                let given = clrace::spool::check::Overrides {
                    format: format.map(|f| format_name(f).to_string()),
                    suppressions,
                    print_suppressions,
                    print_limit,
                    uniform_writes_benign,
                    sub_group_lockstep,
                    sub_group_size,
                    check_uninitialized,
                    budget,
                    memory_mb: memory_mb.or_else(default_memory_mb),
                    cpu_seconds: timeout,
                    jobs,
                    shard,
                    findings_dir: spool_findings
                        .or_else(|| std::env::var_os("CLRACE_SPOOL_FINDINGS").map(PathBuf::from)),
                    temporary: false,
                };
                let unfit = [
                    (build_options.is_some(), "--build-options"),
                    (threads.is_some(), "--threads"),
                    (no_races, "--no-races"),
                    (explore, "--explore"),
                    (timings, "--timings"),
                    (specialise.is_some(), "--specialise"),
                ];
                if let Some((_, option)) = unfit.iter().find(|(given, _)| *given) {
                    eprintln!(
                        "clrace: {option} is for one launch: check a spooled launch alone with it (clrace check {}/launches/N.json {option})",
                        file.display()
                    );
                    return ExitCode::from(EXIT_USAGE);
                }
                return ExitCode::from(spooled::check_spool(&file, &given, output.as_deref(), spooled::Sink::Check));
            }
            if shard.is_some() || jobs.is_some() || spool_findings.is_some() {
                eprintln!(
                    "clrace: --shard, --jobs and --spool-findings are for a spool directory, not {}",
                    file.display()
                );
                return ExitCode::from(EXIT_USAGE);
            }
            let format = format.unwrap_or(FormatArg::Text);
            let print_limit = print_limit.unwrap_or(DEFAULT_PRINT_LIMIT);
            let budget = budget.unwrap_or(clrace::exec::DEFAULT_BUDGET);
            let timeout = timeout.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
            let sarif = matches!(format, FormatArg::Sarif);
            let lockstep = match (sub_group_lockstep, sub_group_size) {
                (None, _) => None,
                (Some(0), size) => Some(size.unwrap_or(clrace::exec::DEFAULT_SUB_GROUP_SIZE)),
                (Some(w), Some(size)) if w != size => {
                    eprintln!(
                        "clrace: --sub-group-lockstep={w} makes the sub-group size {w}, not --sub-group-size {size}"
                    );
                    return ExitCode::from(EXIT_USAGE);
                }
                (Some(w), _) => Some(w),
            };
            if let Some(w) = lockstep.filter(|w| !(1..=64).contains(w)) {
                eprintln!("clrace: --sub-group-lockstep: a width of {w} is not from 1 to 64");
                return ExitCode::from(EXIT_USAGE);
            }
            let sub_group_size = lockstep.or(sub_group_size).unwrap_or(clrace::exec::DEFAULT_SUB_GROUP_SIZE);
            let policy = lockstep.map_or(clrace::exec::Policy::Lockstep, clrace::exec::Policy::SubGroups);
            let format = match format {
                FormatArg::Text => report::Format::Text,
                FormatArg::Json | FormatArg::Sarif => report::Format::Json,
            };
            let options = CheckOptions {
                extra_build_options: build_options.as_deref(),
                run: RunOptions {
                    budget,
                    threads,
                    sub_group_size,
                    policy,
                    check_uninitialized,
                    specialise: match specialise.unwrap_or(SpecialiseArg::Large) {
                        SpecialiseArg::Off => clrace::exec::Specialise::Off,
                        SpecialiseArg::Large => clrace::exec::Specialise::Large,
                        SpecialiseArg::Always => clrace::exec::Specialise::Always,
                    },
                    ..RunOptions::default()
                },
                timeout: (timeout > 0).then(|| Duration::from_secs(timeout)),
                memory: memory_mb.or_else(default_memory_mb).filter(|&mb| mb > 0).map(|mb| MemoryBudget::new(mb << 20)),
                format,
                sarif,
                output,
                suppressions,
                print_suppressions,
                print_limit,
                races: !no_races,
                detect: detect::Options { uniform_writes_benign, sub_group_lockstep: lockstep },
                explore: explore.then(|| ExploreOptions {
                    bound: explore_bound,
                    schedules: explore_schedules,
                    time: (explore_seconds > 0).then(|| Duration::from_secs(explore_seconds)),
                    multiset: compare_multiset,
                    shard: explore_shard,
                }),
                timings,
            };
            match check(&file, &options) {
                Ok(code) => ExitCode::from(code),
                Err(Failure(code, message)) => {
                    // With SARIF, stderr is for people: text, like the summary there.
                    match format {
                        _ if sarif => eprintln!("clrace: {message}"),
                        report::Format::Text => eprintln!("clrace: {message}"),
                        report::Format::Json => {
                            eprintln!("{}", serde_json::json!({"kind": "error", "status": code, "message": message}))
                        }
                    }
                    ExitCode::from(code)
                }
            }
        }
    }
}

fn check(file: &Path, options: &CheckOptions) -> Result<u8, Failure> {
    let started = Instant::now();
    // The worker threads start while the launch is read and its kernel built.
    if let Some(threads) = pool_threads(options) {
        clrace::exec::workers::start(threads);
    }
    let usage = |m: String| Failure(EXIT_USAGE, m);
    let suppressions = match &options.suppressions {
        Some(path) => Some(Suppressions::load(path).map_err(usage)?),
        None => None,
    };
    let input = if is_manifest(file) {
        let (spool, manifest) = clrace::spool::open_manifest(file).map_err(usage)?;
        Input::Spooled(spool, Box::new(manifest))
    } else {
        let text = launch_file::read_file(file).map_err(|e| usage(format!("cannot read {}: {e}", file.display())))?;
        let header = launch_file::parse_header(&text).map_err(|e| usage(format!("{}: {e}", file.display())))?;
        Input::Sim(text, header)
    };
    let kernel_name = match &input {
        Input::Sim(_, header) => header.kernel.clone(),
        Input::Spooled(_, manifest) => manifest.kernel.clone(),
    };
    if let Some(rule) = suppressions.as_ref().and_then(|s| s.skips_kernel(&kernel_name)) {
        let note = format!(
            "kernel '{}' is not checked: suppressed by rule {}:{} (line {})",
            kernel_name, rule.kind, rule.pattern, rule.line
        );
        let mut out = match options.format {
            report::Format::Json if !options.sarif => {
                format!("{}\n", serde_json::json!({"kind": "note", "message": note}))
            }
            _ => format!("clrace: {note}\n"),
        };
        if options.print_suppressions {
            out.push_str(
                &suppressions
                    .as_ref()
                    .map(|s| s.listing(!options.sarif && options.format == report::Format::Json))
                    .unwrap_or_default(),
            );
        }
        if options.sarif {
            eprint!("{out}");
            write_reports(options, &clrace::sarif::Log::new().render(), true)?;
        } else {
            write_reports(options, &out, false)?;
        }
        return Ok(0);
    }
    let prepared = match input {
        Input::Sim(text, header) => prepare_sim(file, &text, header, options)?,
        Input::Spooled(spool, manifest) => prepare_spooled(file, &spool, &manifest, options)?,
    };
    let Prepared { program, sources, mut data } = prepared;
    let kernel = program
        .kernel(&kernel_name)
        .ok_or_else(|| usage(format!("{}: no kernel named '{kernel_name}'", file.display())))?;
    let failed = |e: ExecError| {
        let hint = match e {
            ExecError::Timeout(_) => "; raise --timeout if it is just long",
            ExecError::Memory(_) => "; raise --memory-mb if the machine has the memory",
            _ => "",
        };
        Failure(if matches!(e, ExecError::Launch(_)) { EXIT_USAGE } else { EXIT_EXEC }, format!("{e}{hint}"))
    };
    let done = Arc::new(AtomicU64::new(0));
    let run = RunOptions {
        memory: options.memory.clone(),
        deadline: options.timeout.map(|t| Instant::now() + t),
        progress: Some(done.clone()),
        buffer_modes: data.modes.clone(),
        noinit: data.noinit.clone(),
        ..options.run.clone()
    };
    // Exploration re-runs from the launch's inputs, which the check overwrites.
    let inputs = options.explore.as_ref().map(|_| data.buffers.clone());
    let explore = match (&options.explore, &inputs) {
        (Some(explore), Some(inputs)) => {
            let mut explore = exploration_options(&data.launch, kernel, explore, options)?;
            // Explored schedules check uninitialised values as the run does.
            explore.run.noinit = data.noinit.clone();
            Some((inputs.as_slice(), explore))
        }
        _ => None,
    };
    let launch = &data.launch;
    // The progress bar is for people watching a terminal, not for tools reading JSON or SARIF.
    let total_groups =
        (0..3).map(|d| launch.global_size[d].div_ceil(launch.local_size[d].max(1))).fold(1u64, u64::saturating_mul);
    let progress = (options.format == report::Format::Text && !options.sarif)
        .then(|| progress::Progress::start(done, total_groups));
    let plan =
        clrace::check::Plan { races: options.races.then_some(options.detect), run, explore, release_buffers: false };
    let kernel_started = Instant::now();
    let result = clrace::check::check(&program, launch, &mut data.buffers, plan);
    let kernel_done = Instant::now();
    if let Some(progress) = progress {
        progress.finish();
    }
    let clrace::check::Checked { outcome, races, exploration } = result.map_err(failed)?;
    let exploration = exploration.transpose().map_err(|e| Failure(EXIT_EXEC, format!("schedule exploration: {e}")))?;
    if !options.sarif {
        print!("{}", outcome.printf);
    }
    let findings = report::LaunchFindings {
        kernel: &kernel_name,
        module: program.module(),
        sources: &sources,
        launch: &data.launch,
        races: &races,
        outcome: &outcome,
        exploration: exploration.as_ref(),
    };
    let report_options = report::Options {
        format: options.format,
        sarif: options.sarif,
        suppressions: suppressions.as_ref(),
        print_limit: options.print_limit,
        print_limit_name: "--print-limit ",
        lockstep: options.detect.sub_group_lockstep,
        explore_bound: options.explore.as_ref().map_or(0, |e| e.bound),
        occasion: report::Occasion::Alone,
        spooled: None,
    };
    let reported = report::report(&findings, &report_options, &mut report::Seen::default());
    let listing = match (&suppressions, options.print_suppressions) {
        (Some(s), true) => s.listing(!options.sarif && options.format == report::Format::Json),
        _ => String::new(),
    };
    if options.sarif {
        // The log is the whole of its destination; people still get the summary on stderr.
        if let Some(line) = &reported.closing {
            eprintln!("{line}");
        }
        eprint!("{listing}");
        let mut log = clrace::sarif::Log::new();
        for record in &reported.sarif {
            log.add(record);
        }
        write_reports(options, &log.render(), true)?;
    } else {
        write_reports(options, &(reported.text + &listing), false)?;
        print!("{}", launch_file::format_dumps(&data, &data.buffers));
    }
    if options.timings {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "clrace: timings: prepare {:.3} ms, kernel {:.3} ms, report {:.3} ms",
            ms(kernel_started - started),
            ms(kernel_done - kernel_started),
            ms(kernel_done.elapsed())
        );
    }
    Ok(if reported.found { EXIT_FINDINGS } else { 0 })
}

/// What `clrace check` checks: a launch file, or one launch of a spool.
enum Input {
    Sim(String, launch_file::SimHeader),
    Spooled(clrace::spool::Spool, Box<clrace::spool::SpooledLaunch>),
}

/// A launch ready to check: its program built, the program's text, and the launch's inputs.
struct Prepared {
    program: Program,
    sources: Sources,
    data: launch_file::LaunchFile,
}

/// Whether `file` is a spooled launch's manifest (`DIR/launches/N.json`).
fn is_manifest(file: &Path) -> bool {
    file.extension().is_some_and(|e| e == "json")
        && file.parent().and_then(Path::file_name).is_some_and(|n| n == "launches")
}

/// Writes a program's build log where the reports' notes go.
fn print_build_log(program: &Program, options: &CheckOptions) {
    if !program.build_log.trim().is_empty() {
        match options.format {
            _ if options.sarif => eprint!("{}", program.build_log),
            report::Format::Text => eprint!("{}", program.build_log),
            report::Format::Json => {
                eprintln!("{}", serde_json::json!({"kind": "build-log", "text": program.build_log}))
            }
        }
    }
}

/// Builds the program of a launch file and reads its arguments.
/// The threads a check's run takes from the calling thread's workers, which it may start and
/// prepare ahead of the run: None for an exploration, whose run and schedules go on one thread.
fn pool_threads(options: &CheckOptions) -> Option<usize> {
    options.explore.is_none().then(|| options.run.threads.unwrap_or_else(clrace::exec::default_threads))
}

fn prepare_sim(
    file: &Path,
    text: &str,
    mut header: launch_file::SimHeader,
    options: &CheckOptions,
) -> Result<Prepared, Failure> {
    let usage = |m: String| Failure(EXIT_USAGE, m);
    let program_path = launch_file::resolve_program(&header.program, file)
        .ok_or_else(|| usage(format!("{}: program file '{}' not found", file.display(), header.program)))?;
    let build_options = [header.build_options.as_deref(), options.extra_build_options].into_iter().flatten();
    let build_options = build_options.collect::<Vec<_>>().join(" ");
    header.build_options = Some(build_options.clone());
    let (program, source) = build(&program_path, &build_options)?;
    print_build_log(&program, options);
    let kernel = program.kernel(&header.kernel).ok_or_else(|| {
        usage(format!("{}: no kernel named '{}' in {}", file.display(), header.kernel, header.program))
    })?;
    let threads = options.run.threads.unwrap_or_else(clrace::exec::default_threads);
    // The workers fault in their register files while the buffers are made.
    if let Some(threads) = pool_threads(options) {
        clrace::exec::warm_workers(&program, &header.kernel, header.local_size, threads);
    }
    let data = launch_file::parse_args(text, &header, kernel, threads)
        .map_err(|e| usage(format!("{}: {e}", file.display())))?;
    let sources = Sources::new(source.map(|s| (program_path.clone(), s)).into_iter().collect());
    Ok(Prepared { program, sources, data })
}

/// Builds the program of a spooled launch (as the layer does) and loads its buffers.
fn prepare_spooled(
    file: &Path,
    spool: &clrace::spool::Spool,
    manifest: &clrace::spool::SpooledLaunch,
    options: &CheckOptions,
) -> Result<Prepared, Failure> {
    let usage = |m: String| Failure(EXIT_USAGE, m);
    if options.extra_build_options.is_some() {
        return Err(usage(format!(
            "{}: a spooled launch is built with its own options, not --build-options",
            file.display()
        )));
    }
    let spec = spool.program(manifest).map_err(usage)?;
    let program = spec.build().map_err(|e| Failure(EXIT_BUILD, format!("{}: {e}", spec.name)))?;
    print_build_log(&program, options);
    let kernel = program
        .kernel(&manifest.kernel)
        .ok_or_else(|| usage(format!("{}: no kernel named '{}' in {}", file.display(), manifest.kernel, spec.name)))?;
    let inputs = manifest.to_launch(kernel).map_err(|e| usage(format!("{}: {e}", file.display())))?;
    if let Some(assumed) = inputs.assumed_local {
        let note = clrace::spool::check::assumed_local_note(&manifest.kernel, assumed);
        match options.format {
            report::Format::Json if !options.sarif => {
                eprintln!("{}", serde_json::json!({"kind": "note", "message": note}))
            }
            _ => eprintln!("clrace: {note}"),
        }
    }
    // The workers fault in their register files while the buffers are read.
    if let Some(threads) = pool_threads(options) {
        clrace::exec::warm_workers(&program, &manifest.kernel, inputs.launch.local_size, threads);
    }
    let buffers = spool.buffers(manifest).map_err(usage)?;
    let data = launch_file::LaunchFile {
        launch: inputs.launch,
        buffers,
        dumps: Vec::new(),
        modes: inputs.modes,
        noinit: Vec::new(),
    };
    Ok(Prepared { program, sources: spec.sources(), data })
}

/// The options of `check --explore` for the launch.
fn exploration_options(
    launch: &clrace::Launch,
    kernel: &clrace::KernelInfo,
    explore: &ExploreOptions,
    options: &CheckOptions,
) -> Result<clrace::explore::Options, Failure> {
    use clrace::explore::compare::{Mode, writable_buffers};
    let mut compare = writable_buffers(launch, &kernel.args);
    for name in &explore.multiset {
        let Some(c) = compare.iter_mut().find(|c| c.name == *name) else {
            let names: Vec<&str> = compare.iter().map(|c| c.name.as_str()).collect();
            return Err(Failure(
                EXIT_USAGE,
                format!(
                    "--compare-multiset {name}: no writable buffer argument of that name (there are: {})",
                    names.join(", ")
                ),
            ));
        };
        c.mode = Mode::Multiset;
    }
    let run = RunOptions {
        memory: options.memory.clone(),
        deadline: options.timeout.map(|t| Instant::now() + t),
        ..options.run.clone()
    };
    Ok(clrace::explore::Options {
        bound: explore.bound,
        max_schedules: explore.schedules.max(1),
        time: explore.time,
        threads: options.run.threads,
        run,
        compare,
        races: options.races.then_some(options.detect),
        shard: explore.shard,
    })
}

/// Writes the reports to `--output` (replacing its contents), else to stderr, or, for the SARIF
/// log, to stdout.
fn write_reports(options: &CheckOptions, text: &str, sarif: bool) -> Result<(), Failure> {
    use std::io::Write;
    match &options.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| Failure(EXIT_USAGE, format!("cannot write --output {}: {e}", path.display()))),
        None if sarif => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            Ok(())
        }
        None => {
            let _ = std::io::stderr().write_all(text.as_bytes());
            Ok(())
        }
    }
}

/// Builds the program; returns its source text too when it is OpenCL C.
fn build(path: &Path, options: &str) -> Result<(Program, Option<String>), Failure> {
    let fail = |e: BuildError| Failure(EXIT_BUILD, format!("{}: {e}", path.display()));
    let is_spirv = path.extension().is_some_and(|e| e == "spv");
    if is_spirv {
        let bytes =
            std::fs::read(path).map_err(|e| Failure(EXIT_USAGE, format!("cannot read {}: {e}", path.display())))?;
        return Ok((Program::from_spirv(&bytes).map_err(fail)?, None));
    }
    let source = launch_file::read_file(path)
        .map_err(|e| Failure(EXIT_USAGE, format!("cannot read {}: {e}", path.display())))?;
    let program = Program::from_source(&source, path, options).map_err(fail)?;
    Ok((program, Some(source)))
}
