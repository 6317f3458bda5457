//! The fallback for loaders without layer support, end to end on the real stack: the ocl-icd
//! loader opens `libclrace_icd.so` as its only vendor (`OCL_ICD_VENDORS`, no `OPENCL_LAYERS`), it
//! opens pocl (the default `CLRACE_ICD_VENDOR`) and the clrace layer next to it, and the C host
//! program is checked exactly as through the layer; when something is missing, it says so in
//! one line and the application still gets what the driver gives.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

mod common;

use common::{artefacts, c_host, run_limited, text};

/// How long one run of a host program may take (a deadlock fails the test instead of hanging it).
const LIMIT: Duration = Duration::from_secs(60);

fn icd() -> PathBuf {
    artefacts().join("libclrace_icd.so")
}

/// The C host program of the layer tests, compiled once.
fn host() -> &'static Path {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, host) = HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = c_host(dir.path(), "host");
        (dir, host)
    });
    host
}

/// The host program, with none of the variables that choose layers or our libraries set
/// unless `env` sets them.
fn host_command(env: &[(&str, &Path)]) -> Command {
    let mut command = Command::new(host());
    for name in ["OPENCL_LAYERS", "OCL_ICD_LAYERS", "CLRACE_ICD_VENDOR", "CLRACE_ICD_LAYER", "CLRACE_FAIL_ON_RACE"] {
        command.env_remove(name);
    }
    command.env("CLRACE_FORMAT", "text");
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

/// What the host program prints through the system's own ICDs (pocl), without clrace.
fn plain_run() -> &'static Output {
    static PLAIN: OnceLock<Output> = OnceLock::new();
    PLAIN.get_or_init(|| {
        let plain = run_limited(&mut host_command(&[]), LIMIT);
        assert!(plain.status.success(), "the host program failed without clrace: {}", text(&plain.stderr));
        plain
    })
}

#[test]
fn a_c_host_program_is_checked_through_the_interposing_icd() {
    let plain = plain_run();
    let checked = run_limited(&mut host_command(&[("OCL_ICD_VENDORS", &icd())]), LIMIT);
    let report = text(&checked.stderr);
    assert_eq!(checked.status.code(), Some(0), "the ICD does not change the application's status: {report}");
    assert_eq!(text(&checked.stdout), text(&plain.stdout), "the application printed something else: {report}");
    assert!(report.contains("Read-write data race in local memory: 'scratch'"), "{report}");
    assert!(report.contains("1 launch(es) checked: 1 race(s)"), "{report}");
    assert!(!report.contains("clrace-icd:"), "{report}");
}

#[test]
fn without_the_layer_the_driver_runs_unchecked_and_says_so_once() {
    let plain = plain_run();
    let missing = Path::new("/nonexistent/libclrace.so");
    let run = run_limited(&mut host_command(&[("OCL_ICD_VENDORS", &icd()), ("CLRACE_ICD_LAYER", missing)]), LIMIT);
    let report = text(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{report}");
    assert_eq!(text(&run.stdout), text(&plain.stdout));
    let lines: Vec<&str> = report.lines().filter(|l| l.starts_with("clrace-icd: ")).collect();
    assert_eq!(lines.len(), 1, "{report}");
    assert!(lines[0].contains("/nonexistent/libclrace.so") && lines[0].contains("CLRACE_ICD_LAYER"), "{report}");
    assert!(!report.contains("launch(es) checked"), "nothing is checked without the layer: {report}");
}

#[test]
fn without_the_driver_there_is_no_platform_and_a_clear_line() {
    let missing = Path::new("libclrace-no-such-driver.so");
    let run = run_limited(&mut host_command(&[("OCL_ICD_VENDORS", &icd()), ("CLRACE_ICD_VENDOR", missing)]), LIMIT);
    let report = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "the host program finds no platform: {report}");
    let lines: Vec<&str> = report.lines().filter(|l| l.starts_with("clrace-icd: ")).collect();
    assert_eq!(lines.len(), 1, "{report}");
    assert!(lines[0].contains("libclrace-no-such-driver.so") && lines[0].contains("CLRACE_ICD_VENDOR"), "{report}");
    assert!(report.contains("clGetPlatformIDs failed"), "{report}");
}

#[test]
fn the_example_applications_are_checked_through_the_interposing_icd() {
    // (example, races expected)
    for (name, races) in [("racy_reduction", 1), ("two_threads", 1), ("user_event", 0), ("tiled_matmul", 0)] {
        let program = artefacts().join("examples").join(name);
        let clean_env = |command: &mut Command| {
            for variable in ["OPENCL_LAYERS", "OCL_ICD_LAYERS", "CLRACE_ICD_VENDOR", "CLRACE_ICD_LAYER"] {
                command.env_remove(variable);
            }
        };
        let mut plain = Command::new(&program);
        clean_env(&mut plain);
        let plain = run_limited(&mut plain, LIMIT);
        let mut checked = Command::new(&program);
        clean_env(&mut checked);
        checked.env("OCL_ICD_VENDORS", icd()).env("CLRACE_FORMAT", "text");
        let checked = run_limited(&mut checked, LIMIT);
        let report = text(&checked.stderr);
        assert_eq!(checked.status.code(), plain.status.code(), "{name}: {report}");
        assert_eq!(text(&checked.stdout), text(&plain.stdout), "{name}: {report}");
        assert!(report.contains(&format!(" checked: {races} race(s)")), "{name}: {report}");
    }
}
