//! The layer's settings, read once from `CLRACE_*` environment variables (the Khronos layers'
//! convention). Every option is listed in the README.

use std::path::PathBuf;

use crate::report::Format;

/// What to do when checks fall behind the application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backlog {
    /// The launching thread waits until a check slot frees up.
    Wait,
    /// The launch is forwarded unchecked and counted as skipped.
    Skip,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// `CLRACE_FORMAT`: `text` (default) or `json`.
    pub format: Format,
    /// `CLRACE_OUTPUT`: a file to append reports to (default: stderr).
    pub output: Option<PathBuf>,
    /// `CLRACE_KERNELS`: comma-separated kernel names to check (default: all).
    pub kernels: Option<Vec<String>>,
    /// `CLRACE_FIRST_LAUNCHES`: check only the first N launches of each kernel.
    pub first_launches: Option<u64>,
    /// `CLRACE_UNIFORM_WRITES_BENIGN=1`: do not report uniform write-write races.
    pub uniform_writes_benign: bool,
    /// `CLRACE_QUEUE`: checks pending at most (default 4).
    pub queue: usize,
    /// `CLRACE_MEMORY_MB`: snapshot bytes pending at most, in MiB (default 1024).
    pub memory_mb: u64,
    /// `CLRACE_ON_BACKLOG`: `wait` (default) or `skip`.
    pub backlog: Backlog,
    /// `CLRACE_FAIL_ON_RACE=1`: exit with status [`Config::fail_status`] at process exit when
    /// something was found.
    pub fail_on_race: bool,
    /// `CLRACE_FAIL_STATUS`: that status (default 66).
    pub fail_status: i32,
    /// `CLRACE_EXIT_WAIT_MS`: how long pending checks may delay process exit (default 30000).
    pub exit_wait_ms: u64,
    /// `CLRACE_SUMMARY_FILE`: where to write the closing summary as JSON (used by `clrace run`).
    pub summary_file: Option<PathBuf>,
    /// `CLRACE_THREADS`: worker threads per check (default: one per core).
    pub threads: Option<usize>,
    /// `CLRACE_BUDGET`: branches and calls one checked launch may take in the emulator before
    /// its check is abandoned (default: the emulator's).
    pub budget: u64,
    /// `CLRACE_SUB_GROUP_SIZE`: work-items per sub-group in the emulator (default 32).
    pub sub_group_size: u32,
    /// `CLRACE_LOG`: a `tracing` filter for the layer's own log (default `warn`).
    pub log: String,
    /// `CLRACE_DISABLE=1`: forward everything, check nothing.
    pub disabled: bool,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn flag(name: &str) -> bool {
    var(name).is_some_and(|v| !matches!(v.trim(), "0" | "false" | "no" | "off"))
}

fn number<T: std::str::FromStr>(name: &str, default: T, problems: &mut Vec<String>) -> T {
    match var(name) {
        None => default,
        Some(v) => v.trim().parse().unwrap_or_else(|_| {
            problems.push(format!("{name}={v} is not a number; using the default"));
            default
        }),
    }
}

impl Config {
    /// Reads the environment; returns the settings and the problems found (reported once).
    pub fn from_env() -> (Config, Vec<String>) {
        let mut problems = Vec::new();
        let format = match var("CLRACE_FORMAT").as_deref().map(str::trim) {
            None | Some("text") => Format::Text,
            Some("json") => Format::Json,
            Some(other) => {
                problems.push(format!("CLRACE_FORMAT={other} is neither text nor json; using text"));
                Format::Text
            }
        };
        let backlog = match var("CLRACE_ON_BACKLOG").as_deref().map(str::trim) {
            None | Some("wait") => Backlog::Wait,
            Some("skip") => Backlog::Skip,
            Some(other) => {
                problems.push(format!("CLRACE_ON_BACKLOG={other} is neither wait nor skip; waiting"));
                Backlog::Wait
            }
        };
        let kernels = var("CLRACE_KERNELS")
            .map(|v| v.split(',').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect());
        let first_launches = var("CLRACE_FIRST_LAUNCHES").and(Some(number("CLRACE_FIRST_LAUNCHES", 0, &mut problems)));
        let threads = var("CLRACE_THREADS").and(Some(number("CLRACE_THREADS", 1, &mut problems)));
        let config = Config {
            format,
            output: var("CLRACE_OUTPUT").map(PathBuf::from),
            kernels,
            first_launches,
            uniform_writes_benign: flag("CLRACE_UNIFORM_WRITES_BENIGN"),
            queue: number("CLRACE_QUEUE", 4usize, &mut problems).max(1),
            memory_mb: number("CLRACE_MEMORY_MB", 1024u64, &mut problems).max(1),
            backlog,
            fail_on_race: flag("CLRACE_FAIL_ON_RACE"),
            fail_status: number("CLRACE_FAIL_STATUS", 66, &mut problems),
            exit_wait_ms: number("CLRACE_EXIT_WAIT_MS", 30_000, &mut problems),
            summary_file: var("CLRACE_SUMMARY_FILE").map(PathBuf::from),
            threads,
            budget: number("CLRACE_BUDGET", crate::exec::DEFAULT_BUDGET, &mut problems).max(1),
            sub_group_size: number("CLRACE_SUB_GROUP_SIZE", crate::exec::DEFAULT_SUB_GROUP_SIZE, &mut problems).max(1),
            log: var("CLRACE_LOG").unwrap_or_else(|| "warn".into()),
            disabled: flag("CLRACE_DISABLE"),
        };
        (config, problems)
    }

    /// Whether launches of `kernel` are checked at all.
    pub fn wants(&self, kernel: &str) -> bool {
        !self.disabled && self.kernels.as_ref().is_none_or(|names| names.iter().any(|n| n == kernel))
    }
}
