//! `clrace run`: starts an application with the clrace layer enabled, waits for it, and turns the
//! layer's closing summary into an exit status. By default the layer spools every launch
//! (`CLRACE_SPOOL`, into a temporary directory unless `--spool DIR`), and the spool is checked
//! here once the application exited, even after a crash, exactly as `clrace check DIR` would.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use clrace::report::Tally;
use clrace::spool::check::EarlyResults;
use clrace::spool::check::Overrides;
use clrace::spool::early::Early;

/// What `clrace run` was asked to do.
pub struct RunOptions {
    /// `CLRACE_FORMAT`: text, json or sarif.
    pub format: &'static str,
    pub output: Option<PathBuf>,
    /// `CLRACE_SUPPRESSIONS`, checked here first so that a malformed rule is a usage error.
    pub suppressions: Option<PathBuf>,
    /// `CLRACE_PRINT_SUPPRESSIONS=1`.
    pub print_suppressions: bool,
    /// `CLRACE_PRINT_LIMIT`.
    pub print_limit: Option<u64>,
    pub kernels: Option<String>,
    pub first_launches: Option<u64>,
    pub uniform_writes_benign: bool,
    pub fail_on_findings: bool,
    /// `CLRACE_ORDER=before`.
    pub before: bool,
    /// `CLRACE_ON_FINDING`.
    pub on_finding: Option<String>,
    /// `CLRACE_SUB_GROUP_LOCKSTEP`: a width, or `on` for the sub-group size.
    pub sub_group_lockstep: Option<String>,
    pub layer: Option<PathBuf>,
    /// `--explore`: `CLRACE_EXPLORE=1`, with these other `CLRACE_EXPLORE_*` settings.
    pub explore: Option<Vec<(&'static str, String)>>,
    /// Whether launches are spooled and checked after the application, and where.
    pub spool: SpoolMode,
    /// `CLRACE_SPOOL_MB`.
    pub spool_mb: Option<u64>,
    /// `--spool-findings` (else `CLRACE_SPOOL_FINDINGS`).
    pub spool_findings: Option<PathBuf>,
    /// Checks of the spool at once (default: one per core).
    pub jobs: Option<usize>,
    /// The memory of one check of the spool, in MiB.
    pub memory_mb: Option<u64>,
}

/// Where `clrace run` spools launches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpoolMode {
    /// No spool: the layer checks inline (`--no-spool`, `--before`, `--explore`).
    Off,
    /// A temporary directory, removed once checked (the default).
    Temporary,
    /// `--spool DIR`, kept.
    Keep(PathBuf),
}

/// The layer library: as given (`--layer`, else `CLRACE_LAYER`), else next to this executable
/// (a build tree), in `../lib/clrace` (the Debian package) or `../lib`.
fn find_layer(given: Option<&Path>) -> Result<PathBuf, String> {
    let given = given.map(Path::to_path_buf).or_else(|| std::env::var_os("CLRACE_LAYER").map(PathBuf::from));
    if let Some(path) = given {
        return path.canonicalize().map_err(|e| format!("layer {}: {e}", path.display()));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate clrace itself: {e}"))?;
    let dir = exe.parent().ok_or("cannot locate clrace's directory")?;
    let places = [
        dir.join("libclrace.so"),
        dir.join("../lib/clrace/libclrace.so"),
        dir.join("../lib/libclrace.so"),
        dir.join("../deps/libclrace.so"),
    ];
    places.iter().find(|p| p.is_file()).and_then(|p| p.canonicalize().ok()).ok_or_else(|| {
        format!(
            "the clrace layer (libclrace.so) is not next to {} nor in ../lib/clrace. \
             `cargo install` installs the command alone: build the layer with `cargo build --release` \
             in a clrace checkout and name it with --layer or CLRACE_LAYER, or install the Debian \
             package (ci/package builds it)",
            exe.display()
        )
    })
}

/// Whether an OpenCL platform could be found by the ocl-icd or Khronos loaders.
fn platform_installed() -> bool {
    if std::env::var_os("OCL_ICD_VENDORS").is_some() || std::env::var_os("OCL_ICD_FILENAMES").is_some() {
        return true;
    }
    std::fs::read_dir("/etc/OpenCL/vendors")
        .map(|dir| dir.flatten().any(|e| e.path().extension().is_some_and(|x| x == "icd")))
        .unwrap_or(false)
}

/// A `:`-separated list with `first` in front of what the variable already holds.
fn prepend(variable: &str, first: &Path) -> OsString {
    let mut value = OsString::from(first);
    if let Some(old) = std::env::var_os(variable).filter(|v| !v.is_empty()) {
        value.push(":");
        value.push(old);
    }
    value
}

/// Runs the application; returns the exit status to leave with.
pub fn run(command: &[OsString], options: &RunOptions) -> Result<u8, String> {
    let layer = find_layer(options.layer.as_deref())?;
    if !platform_installed() {
        return Err("no OpenCL platform is installed (no .icd file in /etc/OpenCL/vendors). \
                    To check kernels on the CPU, install pocl: apt-get install pocl-opencl-icd ocl-icd-libopencl1"
            .into());
    }
    let suppressions = match &options.suppressions {
        Some(path) => {
            clrace::suppress::Suppressions::load(path)?;
            Some(path.canonicalize().map_err(|e| format!("suppression file {}: {e}", path.display()))?)
        }
        None => None,
    };
    let spool = spool_dir(&options.spool)?;
    let summary = std::env::temp_dir().join(format!("clrace-summary-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&summary);
    let (program, args) = command.split_first().ok_or("no application to run")?;
    let mut child = Command::new(program);
    child
        .args(args)
        .env("OPENCL_LAYERS", prepend("OPENCL_LAYERS", &layer))
        .env("OCL_ICD_LAYERS", prepend("OCL_ICD_LAYERS", &layer))
        .env("CLRACE_SUMMARY_FILE", &summary)
        .env("CLRACE_FORMAT", options.format);
    if let Some(path) = &suppressions {
        child.env("CLRACE_SUPPRESSIONS", path);
    }
    if options.print_suppressions {
        child.env("CLRACE_PRINT_SUPPRESSIONS", "1");
    }
    if let Some(n) = options.print_limit {
        child.env("CLRACE_PRINT_LIMIT", n.to_string());
    }
    if let Some(output) = &options.output {
        child.env("CLRACE_OUTPUT", output);
    }
    if let Some(kernels) = &options.kernels {
        child.env("CLRACE_KERNELS", kernels);
    }
    if let Some(n) = options.first_launches {
        child.env("CLRACE_FIRST_LAUNCHES", n.to_string());
    }
    if options.uniform_writes_benign {
        child.env("CLRACE_UNIFORM_WRITES_BENIGN", "1");
    }
    if options.before {
        child.env("CLRACE_ORDER", "before");
    }
    if let Some(action) = &options.on_finding {
        child.env("CLRACE_ON_FINDING", action);
    }
    if let Some(settings) = &options.explore {
        child.env("CLRACE_EXPLORE", "1");
        child.envs(settings.iter().map(|(k, v)| (k, v)));
    }
    if let Some(width) = &options.sub_group_lockstep {
        child.env("CLRACE_SUB_GROUP_LOCKSTEP", width);
    }
    if let Some(dir) = &spool {
        child.env("CLRACE_SPOOL", dir).env("CLRACE_SPOOL_QUIET", "1");
        if let Some(mb) = options.spool_mb {
            child.env("CLRACE_SPOOL_MB", mb.to_string());
        }
    }
    // The launches are checked as they come, on the cores the application leaves idle.
    let jobs = options.jobs.unwrap_or_else(clrace::exec::default_threads);
    let early = spool.as_deref().map(|dir| Early::start(dir, &overrides(options, suppressions.as_deref()), jobs));
    let status = child.status().map_err(|e| format!("cannot run {}: {e}", program.to_string_lossy()));
    let early = early.map(Early::stop);
    let status = match status {
        Ok(status) => status,
        Err(e) => {
            remove_temporary(&options.spool, spool.as_deref());
            return Err(e);
        }
    };
    let signal = killed_by(&status);
    // Without a spool made (the layer could not use it, and checked inline; or the application
    // made no OpenCL calls), the layer's own summary says what was found.
    if let Some(dir) = spool.as_deref().filter(|dir| clrace::spool::check::is_spool(dir)) {
        let _ = std::fs::remove_file(&summary);
        let found = check_spool(dir, signal, options, suppressions.as_deref(), early);
        remove_temporary(&options.spool, Some(dir));
        return Ok(exit_status(&status, signal, found?, options));
    }
    remove_temporary(&options.spool, spool.as_deref());
    let found = match std::fs::read_to_string(&summary) {
        Ok(text) => {
            let _ = std::fs::remove_file(&summary);
            serde_json::from_str::<Tally>(&text).unwrap_or_default().errors() > 0
        }
        Err(_) if signal.is_some() => false,
        Err(_) => {
            eprintln!("clrace: the application made no OpenCL calls, or its OpenCL loader does not support layers");
            false
        }
    };
    if let Some(signal) = signal {
        eprintln!(
            "clrace: the application crashed: killed by signal {signal} ({}){}",
            signal_name(signal),
            if found { "" } else { "; the layer's summary covers what was checked before it" }
        );
    }
    Ok(exit_status(&status, signal, found, options))
}

/// The application's status, or 1 when it exited with 0 and something was found (unless
/// `--no-fail`).
fn exit_status(status: &std::process::ExitStatus, signal: Option<i32>, found: bool, options: &RunOptions) -> u8 {
    let app_status = match (status.code(), signal) {
        (Some(code), _) => code.clamp(0, 255) as u8,
        (None, Some(signal)) => 128 + signal.clamp(0, 127) as u8,
        (None, None) => 1,
    };
    if app_status == 0 && found && options.fail_on_findings { 1 } else { app_status }
}

/// The spool directory of this run, if it spools: `--spool DIR` must not hold launches yet (a
/// spool's SEQs start again with each run); the temporary one is made fresh.
fn spool_dir(mode: &SpoolMode) -> Result<Option<PathBuf>, String> {
    match mode {
        SpoolMode::Off => Ok(None),
        SpoolMode::Keep(dir) => {
            let launches = dir.join("launches");
            if std::fs::read_dir(&launches).is_ok_and(|mut entries| entries.next().is_some()) {
                return Err(format!(
                    "--spool {}: it holds a spool's launches already; name a new or empty directory",
                    dir.display()
                ));
            }
            std::fs::create_dir_all(dir).map_err(|e| format!("--spool {}: {e}", dir.display()))?;
            Ok(Some(dir.canonicalize().unwrap_or_else(|_| dir.clone())))
        }
        SpoolMode::Temporary => {
            let dir = std::env::temp_dir().join(format!("clrace-spool-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make a spool in {}: {e}", dir.display()))?;
            Ok(Some(dir))
        }
    }
}

/// Removes the temporary spool.
fn remove_temporary(mode: &SpoolMode, dir: Option<&Path>) {
    if let (SpoolMode::Temporary, Some(dir)) = (mode, dir) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Checks the spool the application left (also after a crash): whether something was found.
fn check_spool(
    dir: &Path,
    signal: Option<i32>,
    options: &RunOptions,
    suppressions: Option<&Path>,
    early: Option<EarlyResults>,
) -> Result<bool, String> {
    if let Some(signal) = signal {
        eprintln!(
            "clrace: the application crashed: killed by signal {signal} ({}); the launches it spooled are checked now",
            signal_name(signal)
        );
    }
    let given = overrides(options, suppressions);
    let outcome = crate::spooled::check(dir, &given, options.output.as_deref(), crate::spooled::Sink::Run, early)?;
    Ok(outcome.found)
}

/// The settings of the spool's check that `clrace run`'s options give.
fn overrides(options: &RunOptions, suppressions: Option<&Path>) -> Overrides {
    Overrides {
        format: Some(options.format.to_string()),
        suppressions: suppressions.map(Path::to_path_buf),
        print_suppressions: options.print_suppressions,
        print_limit: options.print_limit,
        uniform_writes_benign: options.uniform_writes_benign,
        sub_group_lockstep: options.sub_group_lockstep.as_deref().map(|w| w.parse().unwrap_or(0)),
        sub_group_size: None,
        check_uninitialized: false,
        budget: None,
        memory_mb: options.memory_mb,
        cpu_seconds: None,
        jobs: options.jobs,
        shard: None,
        findings_dir: options
            .spool_findings
            .clone()
            .or_else(|| std::env::var_os("CLRACE_SPOOL_FINDINGS").map(PathBuf::from)),
        temporary: options.spool == SpoolMode::Temporary,
    }
}

/// The signal that ended the process, if one did.
fn killed_by(status: &std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status.signal()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}

/// The usual name of a signal number.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTRAP => "SIGTRAP",
        _ => "a signal",
    }
}
