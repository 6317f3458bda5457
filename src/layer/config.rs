//! The layer's settings, read once from `CLRACE_*` environment variables (the Khronos layers'
//! convention). Every option is listed in the README.

use std::path::PathBuf;
use std::sync::Arc;

use crate::report::Format;
use crate::suppress::{DEFAULT_PRINT_LIMIT, Suppressions};

/// What to do with a repeat of a kernel already checked when checks fall behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backlog {
    /// The launching thread waits for a checker, bounded per launch and in total.
    Wait,
    /// The launch is forwarded unchecked, counted and named (the default).
    Skip,
}

/// When the report of a launch is written relative to the device's run of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The launch goes to the device at once; the check follows behind (the default).
    After,
    /// The launch is enqueued at once but held on an event of ours until its check is written.
    Before,
}

/// What a launch checked before it runs does when its check found something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFinding {
    /// Run it as the application asked (the default).
    Continue,
    /// Do not run it: its event ends with an error status and the buffers keep their contents.
    Skip,
    /// Write the report and end the process with [`Config::fail_status`].
    Abort,
}

/// Schedule exploration of the first launches of each kernel (`CLRACE_EXPLORE=1`), with the
/// options of `clrace check --explore`.
#[derive(Debug, Clone, PartialEq)]
pub struct Explore {
    /// `CLRACE_EXPLORE_LAUNCHES`: the launches of each kernel explored (default 1: the first).
    pub launches: u64,
    /// `CLRACE_EXPLORE_BOUND`: delays per schedule at most.
    pub bound: usize,
    /// `CLRACE_EXPLORE_SCHEDULES`: schedules at most, the canonical one included.
    pub schedules: usize,
    /// `CLRACE_EXPLORE_SECONDS`: wall time of one exploration (0: only the check's timeout).
    pub seconds: u64,
    /// `CLRACE_COMPARE_MULTISET`: buffer arguments compared as multisets (comma-separated).
    pub multiset: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Config {
    /// `CLRACE_FORMAT`: `text` (default) or `json`; `sarif` makes this `text` (for the notes
    /// and the summary, then on stderr) and sets [`Config::sarif`].
    pub format: Format,
    /// `CLRACE_FORMAT=sarif`: the findings are written as one SARIF log at exit, to
    /// [`Config::sarif_file`] (else stderr).
    pub sarif: bool,
    /// `CLRACE_OUTPUT`: a file to append reports to (default: stderr). None with `sarif`.
    pub output: Option<PathBuf>,
    /// `CLRACE_SOURCE_DIR`: the application's source directory, whose files name programs.
    pub source_dir: Option<PathBuf>,
    /// `CLRACE_SOURCE_OUT`: a directory where each program the application builds is written
    /// under the name reports give it.
    pub source_out: Option<PathBuf>,
    /// Where the binaries of built programs are remembered (`binaries/` of `CLRACE_CACHE_DIR`,
    /// see `binaries.rs`); None without a cache directory.
    pub binaries: Option<PathBuf>,
    /// `CLRACE_OUTPUT` with `CLRACE_FORMAT=sarif`: the file the log replaces.
    pub sarif_file: Option<PathBuf>,
    /// `CLRACE_SUPPRESSIONS`: the rules of that file (None if unset or malformed).
    pub suppressions: Option<Arc<Suppressions>>,
    /// `CLRACE_SUPPRESSIONS`: the file's path as given (for the spool's `layer.json`).
    pub suppressions_path: Option<PathBuf>,
    /// `CLRACE_PRINT_SUPPRESSIONS=1`: list the rules and their matches at exit.
    pub print_suppressions: bool,
    /// `CLRACE_PRINT_LIMIT`: findings shown per kernel (default 100; 0: no limit).
    pub print_limit: u64,
    /// `CLRACE_KERNELS`: comma-separated kernel names to check (default: all).
    pub kernels: Option<Vec<String>>,
    /// `CLRACE_FIRST_LAUNCHES`: check only the first N launches of each kernel.
    pub first_launches: Option<u64>,
    /// `CLRACE_UNIFORM_WRITES_BENIGN=1`: do not report uniform write-write races.
    pub uniform_writes_benign: bool,
    /// `CLRACE_CHECK_UNINITIALIZED=1`: report uninitialised private and `__local` values used
    /// as addresses, branch conditions or stored to global memory (check 9).
    pub check_uninitialized: bool,
    /// `CLRACE_CHECKERS`: checks that may run at once (default 2).
    pub checkers: usize,
    /// `CLRACE_MEMORY_MB`: what the layer may hold at once for checks, in MiB: snapshots,
    /// emulator memory and detector shadow together (default 2048).
    pub memory_mb: u64,
    /// `CLRACE_ON_BACKLOG`: `skip` (default) or `wait`.
    pub backlog: Backlog,
    /// `CLRACE_WAIT_MS`: in `wait` mode, how long the application's threads may wait for
    /// checkers in all (default 10000).
    pub wait_ms: u64,
    /// `CLRACE_CHECK_TIMEOUT`: seconds of CPU time one check may use (its threads together)
    /// before it is abandoned (default 60). Its wall time is bounded too, only as a safety net
    /// for a check that sleeps (ten times as long).
    pub check_timeout_ms: u64,
    /// `CLRACE_ORDER`: `after` (default) or `before`.
    pub order: Order,
    /// `CLRACE_ON_FINDING`: `continue` (default), `skip` or `abort`; with `before` only.
    pub on_finding: OnFinding,
    /// `CLRACE_FAIL_ON_RACE=1`: exit with status [`Config::fail_status`] at process exit when
    /// something was found.
    pub fail_on_race: bool,
    /// `CLRACE_FAIL_STATUS`: that status (default 66).
    pub fail_status: i32,
    /// `CLRACE_EXIT_WAIT_MS`: how long checks queued or running may delay process exit
    /// (default 10000).
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
    /// `CLRACE_SUB_GROUP_LOCKSTEP=W` (a width from 1 to 64, or `on` for the sub-group size): run
    /// each sub-group of W work-items in lockstep and classify races by it (W is then also the
    /// sub-group size).
    pub sub_group_lockstep: Option<u32>,
    /// `CLRACE_LOG`: a `tracing` filter for the layer's own log (default `warn`).
    pub log: String,
    /// `CLRACE_DISABLE=1`: forward everything, check nothing.
    pub disabled: bool,
    /// `CLRACE_EXPLORE=1` and its options: None when off.
    pub explore: Option<Explore>,
    /// `CLRACE_SPOOL=DIR`: write every admitted launch to this spool instead of checking it
    /// inline (not with `CLRACE_ORDER=before`).
    pub spool: Option<PathBuf>,
    /// `CLRACE_SPOOL_MB`: the spool's disk budget in MiB (default 8192).
    pub spool_mb: u64,
    /// `CLRACE_SPOOL_QUIET=1`: no closing line at exit (`clrace run` reports instead).
    pub spool_quiet: bool,
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

/// A setting that takes one of a few words: `choices` pairs each word with its value, and the
/// first pair is the default (when the variable is unset, or holds another word, which is a
/// problem named once).
fn choice<T: Copy>(name: &str, value: Option<String>, choices: &[(&str, T)], problems: &mut Vec<String>) -> T {
    let default = choices[0];
    let Some(value) = value else { return default.1 };
    let value = value.trim();
    choices.iter().find(|(word, _)| *word == value).map(|c| c.1).unwrap_or_else(|| {
        let words: Vec<&str> = choices.iter().map(|c| c.0).collect();
        problems.push(format!("{name}={value} is not one of {}; using {}", words.join(", "), default.0));
        default.1
    })
}

/// The exploration options, defaults as `clrace check --explore`'s.
fn explore_from_env(problems: &mut Vec<String>) -> Explore {
    use crate::explore::{DEFAULT_BOUND, DEFAULT_SCHEDULES, DEFAULT_SECONDS};
    Explore {
        launches: number("CLRACE_EXPLORE_LAUNCHES", 1, problems),
        bound: number("CLRACE_EXPLORE_BOUND", DEFAULT_BOUND, problems),
        schedules: number("CLRACE_EXPLORE_SCHEDULES", DEFAULT_SCHEDULES, problems).max(1),
        seconds: number("CLRACE_EXPLORE_SECONDS", DEFAULT_SECONDS, problems),
        multiset: var("CLRACE_COMPARE_MULTISET")
            .map(|v| v.split(',').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect())
            .unwrap_or_default(),
    }
}

/// `CLRACE_SUB_GROUP_LOCKSTEP`: a width from 1 to 64, or a word that switches it on at the
/// sub-group size (`on`, `yes`, `true`) or off (`off`, `no`, `false`, `0`).
fn sub_group_lockstep(sub_group_size: u32, problems: &mut Vec<String>) -> Option<u32> {
    let value = var("CLRACE_SUB_GROUP_LOCKSTEP")?;
    let value = value.trim();
    let width = match value {
        "0" | "off" | "no" | "false" => return None,
        "on" | "yes" | "true" => sub_group_size,
        v => match v.parse::<u32>() {
            Ok(w) => w,
            Err(_) => {
                problems.push(format!("CLRACE_SUB_GROUP_LOCKSTEP={v} is not a width from 1 to 64; lockstep is off"));
                return None;
            }
        },
    };
    if !(1..=64).contains(&width) {
        problems.push(format!("CLRACE_SUB_GROUP_LOCKSTEP: a width of {width} is not from 1 to 64; lockstep is off"));
        return None;
    }
    Some(width)
}

impl Config {
    /// Reads the environment; returns the settings and the problems found (reported once).
    pub fn from_env() -> (Config, Vec<String>) {
        let mut problems = Vec::new();
        let sarif = var("CLRACE_FORMAT").is_some_and(|v| v.trim() == "sarif");
        let formats = [("text", Format::Text), ("json", Format::Json), ("sarif", Format::Text)];
        let format = choice("CLRACE_FORMAT", var("CLRACE_FORMAT"), &formats, &mut problems);
        let suppressions = var("CLRACE_SUPPRESSIONS").and_then(|path| match Suppressions::load(path.as_ref()) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                problems.push(format!("CLRACE_SUPPRESSIONS: {e}; nothing is suppressed"));
                None
            }
        });
        let output = var("CLRACE_OUTPUT").map(PathBuf::from);
        let backlog = choice(
            "CLRACE_ON_BACKLOG",
            var("CLRACE_ON_BACKLOG"),
            &[("skip", Backlog::Skip), ("wait", Backlog::Wait)],
            &mut problems,
        );
        let order = choice(
            "CLRACE_ORDER",
            var("CLRACE_ORDER"),
            &[("after", Order::After), ("before", Order::Before)],
            &mut problems,
        );
        let actions = [("continue", OnFinding::Continue), ("skip", OnFinding::Skip), ("abort", OnFinding::Abort)];
        let on_finding = choice("CLRACE_ON_FINDING", var("CLRACE_ON_FINDING"), &actions, &mut problems);
        if on_finding != OnFinding::Continue && order == Order::After {
            problems.push("CLRACE_ON_FINDING acts only with CLRACE_ORDER=before; launches run as usual".into());
        }
        let kernels = var("CLRACE_KERNELS")
            .map(|v| v.split(',').map(|k| k.trim().to_string()).filter(|k| !k.is_empty()).collect());
        let first_launches = var("CLRACE_FIRST_LAUNCHES").and(Some(number("CLRACE_FIRST_LAUNCHES", 0, &mut problems)));
        let threads = var("CLRACE_THREADS").and(Some(number("CLRACE_THREADS", 1, &mut problems)));
        let config = Config {
            format,
            source_dir: var("CLRACE_SOURCE_DIR").map(PathBuf::from),
            source_out: var("CLRACE_SOURCE_OUT").map(PathBuf::from),
            binaries: super::binaries::directory(),
            sarif,
            output: if sarif { None } else { output.clone() },
            sarif_file: if sarif { output } else { None },
            suppressions,
            suppressions_path: var("CLRACE_SUPPRESSIONS").map(PathBuf::from),
            print_suppressions: flag("CLRACE_PRINT_SUPPRESSIONS"),
            print_limit: number("CLRACE_PRINT_LIMIT", DEFAULT_PRINT_LIMIT, &mut problems),
            kernels,
            first_launches,
            uniform_writes_benign: flag("CLRACE_UNIFORM_WRITES_BENIGN"),
            check_uninitialized: flag("CLRACE_CHECK_UNINITIALIZED"),
            checkers: number("CLRACE_CHECKERS", 2usize, &mut problems).clamp(1, 64),
            memory_mb: number("CLRACE_MEMORY_MB", 2048u64, &mut problems).clamp(1, 1 << 40),
            backlog,
            wait_ms: number("CLRACE_WAIT_MS", 10_000u64, &mut problems),
            check_timeout_ms: number("CLRACE_CHECK_TIMEOUT", 60u64, &mut problems).clamp(1, 1 << 30) * 1000,
            order,
            on_finding: if order == Order::Before { on_finding } else { OnFinding::Continue },
            fail_on_race: flag("CLRACE_FAIL_ON_RACE"),
            fail_status: number("CLRACE_FAIL_STATUS", 66, &mut problems),
            exit_wait_ms: number("CLRACE_EXIT_WAIT_MS", 10_000, &mut problems),
            summary_file: var("CLRACE_SUMMARY_FILE").map(PathBuf::from),
            threads,
            budget: number("CLRACE_BUDGET", crate::exec::DEFAULT_BUDGET, &mut problems).max(1),
            sub_group_size: number("CLRACE_SUB_GROUP_SIZE", crate::exec::DEFAULT_SUB_GROUP_SIZE, &mut problems).max(1),
            sub_group_lockstep: None,
            log: var("CLRACE_LOG").unwrap_or_else(|| "warn".into()),
            disabled: flag("CLRACE_DISABLE"),
            explore: flag("CLRACE_EXPLORE").then(|| explore_from_env(&mut problems)),
            spool: var("CLRACE_SPOOL").map(PathBuf::from),
            spool_mb: number("CLRACE_SPOOL_MB", 8192u64, &mut problems).clamp(1, 1 << 40),
            spool_quiet: flag("CLRACE_SPOOL_QUIET"),
        };
        let mut config = config;
        if config.spool.is_some() && config.order == Order::Before {
            problems.push(
                "CLRACE_SPOOL is not used with CLRACE_ORDER=before, which needs each launch checked before it runs: launches are checked inline".into(),
            );
            config.spool = None;
        }
        config.sub_group_lockstep = sub_group_lockstep(config.sub_group_size, &mut problems);
        if let Some(w) = config.sub_group_lockstep {
            config.sub_group_size = w;
        }
        (config, problems)
    }

    /// Whether launches of `kernel` are checked at all (`kernel:` suppression rules count the
    /// launches they leave out).
    pub fn wants(&self, kernel: &str) -> bool {
        !self.disabled
            && self.kernels.as_ref().is_none_or(|names| names.iter().any(|n| n == kernel))
            && self.suppressions.as_ref().is_none_or(|s| s.skips_kernel(kernel).is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_setting_takes_its_words_and_names_any_other_once() {
        let mut problems = Vec::new();
        let words = [("after", Order::After), ("before", Order::Before)];
        assert_eq!(choice("CLRACE_ORDER", None, &words, &mut problems), Order::After);
        assert_eq!(choice("CLRACE_ORDER", Some(" before ".into()), &words, &mut problems), Order::Before);
        assert_eq!(choice("CLRACE_ORDER", Some("sideways".into()), &words, &mut problems), Order::After);
        assert_eq!(problems, ["CLRACE_ORDER=sideways is not one of after, before; using after"]);
    }
}
