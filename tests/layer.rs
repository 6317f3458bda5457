//! The layer end to end, on the real stack (the ocl-icd loader and the pocl driver): the example
//! applications run with and without the layer, print the same, and get exactly the expected
//! reports; a C host program does too, with the layer named in `OPENCL_LAYERS` directly. The
//! tests that name a driver run on each of [`drivers`] (pocl, and Mesa's rusticl where it is
//! installed), selected alone; the others run on the system's drivers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{Driver, artefacts, c_host, drivers, run_limited, text};

/// What an application printed, and what clrace reported, run both ways.
struct Checked {
    plain: Output,
    checked: Output,
    reports: Vec<Value>,
}

/// Runs `program` alone, then under `clrace run --format json`.
fn check(program: &Path, extra: &[&str]) -> Checked {
    check_on(None, program, extra)
}

/// [`check`] on `driver` alone, or on the system's drivers (`None`).
fn check_on(driver: Option<Driver>, program: &Path, extra: &[&str]) -> Checked {
    let limit = Duration::from_secs(if driver.is_some() { 60 } else { 120 });
    let select = |command: &mut Command| {
        if let Some(driver) = driver {
            driver.select(command);
        }
    };
    let mut plain = Command::new(program);
    select(&mut plain);
    let plain = run_limited(&mut plain, limit);
    assert!(plain.status.success(), "{} failed without the layer: {}", program.display(), text(&plain.stderr));
    let reports_file = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(artefacts().join("clrace"));
    select(&mut command);
    command.args(["run", "--format", "json", "--output"]).arg(reports_file.path()).args(extra).arg("--").arg(program);
    let checked = run_limited(&mut command, limit);
    let reports = std::fs::read_to_string(reports_file.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("report line is not JSON ({e}): {l}")))
        .collect();
    assert_eq!(text(&checked.stdout), text(&plain.stdout), "the application printed something else under the layer");
    Checked { plain, checked, reports }
}

impl Checked {
    fn races(&self) -> Vec<&Value> {
        self.reports.iter().filter(|r| r["kind"] == "race").collect()
    }

    fn summary(&self) -> &Value {
        self.reports.iter().find(|r| r["kind"] == "layer-summary").expect("the layer writes a summary at exit")
    }

    fn launches_checked(&self) -> u64 {
        self.summary()["launches_checked"].as_u64().unwrap()
    }
}

fn example(name: &str) -> PathBuf {
    artefacts().join("examples").join(name)
}

/// The source line (trimmed) of a race's access.
fn source_of(access: &Value) -> &str {
    access["source"].as_str().unwrap_or("")
}

#[test]
fn racy_reduction_is_reported_with_its_lines() {
    let run = check(&example("racy_reduction"), &[]);
    assert_racy_reduction(&run);
}

/// What every run of `racy_reduction` must report: its one race, with its lines.
fn assert_racy_reduction(run: &Checked) {
    assert_eq!(run.checked.status.code(), Some(1), "clrace run exits 1 when races were found: {:?}", run.reports);
    let races = run.races();
    assert_eq!(races.len(), 1, "{:?}", run.reports);
    let race = races[0];
    assert_eq!((race["kernel"].as_str(), race["buffer"].as_str()), (Some("racy_reduce"), Some("scratch")));
    assert_eq!(race["address_space"], "local");
    for access in race["accesses"].as_array().unwrap() {
        assert!(source_of(access).contains("scratch[lid + s]"), "{access}");
        assert!(access["file"].as_str().unwrap().ends_with(".cl") && access["line"].as_u64().unwrap() > 0);
    }
    assert_eq!(run.launches_checked(), 1);
    let _ = &run.plain;
}

/// The check of a launch that ends just before exit is not lost: on rusticl a finished launch
/// may still read as submitted when the exit handler first asks (it was missed in 13 of 20 runs).
#[test]
fn the_race_of_a_launch_just_before_exit_is_reported_every_time_on_each_driver() {
    for driver in drivers() {
        for attempt in 0..5 {
            let run = check_on(Some(driver), &example("racy_reduction"), &[]);
            let summary = run.summary();
            assert_eq!(run.races().len(), 1, "{} run {attempt}: {summary}", driver.name());
            assert_racy_reduction(&run);
        }
    }
}

/// `CLRACE_ORDER=before` on each driver: the launch waits for its report and then runs (it
/// hung on rusticl, whose queue held the unflushed snapshot reads back behind the gated launch).
#[test]
fn before_the_launch_the_application_runs_to_its_end_on_each_driver() {
    for driver in drivers() {
        // `run_limited` kills a hung run at 60 s, and the test fails rather than hangs.
        let run = check_on(Some(driver), &example("racy_reduction"), &["--before"]);
        assert_racy_reduction(&run);
        let (output, reports) = before_on(Some(driver), "report-first", &[]);
        assert_eq!(
            text(&output.stdout),
            "status complete; out = 7 7 7\n",
            "{}: {}",
            driver.name(),
            text(&output.stderr)
        );
        assert!(text(&output.stderr).contains("report before the host saw the launch end: yes"), "{}", driver.name());
        assert_eq!(reports.iter().filter(|r| r["kind"] == "race").count(), 1, "{}: {reports:?}", driver.name());
    }
}

#[test]
fn correct_programs_get_no_reports() {
    for driver in drivers() {
        for name in ["tiled_matmul", "histogram"] {
            let run = check_on(Some(driver), &example(name), &[]);
            assert_eq!(run.checked.status.code(), Some(0), "{driver:?} {name}: {}", text(&run.checked.stderr));
            assert!(run.races().is_empty(), "{driver:?} {name}: {:?}", run.reports);
            assert_eq!(run.launches_checked(), 1, "{driver:?} {name}");
        }
    }
}

#[test]
fn a_launch_gated_on_a_user_event_does_not_deadlock() {
    for driver in drivers() {
        let run = check_on(Some(driver), &example("user_event"), &[]);
        assert_eq!(run.checked.status.code(), Some(0), "{driver:?}: {}", text(&run.checked.stderr));
        assert!(run.races().is_empty(), "{driver:?}");
        assert_eq!(run.launches_checked(), 1, "{driver:?}");
    }
}

#[test]
fn two_threads_on_an_out_of_order_queue_report_the_racy_kernel_only() {
    let run = check(&example("two_threads"), &[]);
    assert_eq!(run.checked.status.code(), Some(1));
    let races = run.races();
    assert_eq!(races.len(), 1, "{:?}", run.reports);
    assert_eq!(races[0]["kernel"], "neighbour_sum_racy");
    assert_eq!(run.launches_checked(), 2);
}

#[test]
fn the_kernel_filter_and_no_fail_are_obeyed() {
    // Several times: the checked launch ends just before exit, and exit must wait for its
    // snapshot to be spooled (it once found it between the snapshot and the spool writer).
    for attempt in 0..4 {
        let run = check(&example("two_threads"), &["--kernels", "neighbour_sum", "--no-fail"]);
        assert_eq!(run.checked.status.code(), Some(0));
        assert!(run.races().is_empty(), "{:?}", run.reports);
        assert_eq!(run.launches_checked(), 1, "run {attempt}: only the named kernel is checked: {}", run.summary());
    }
}

#[test]
fn launches_behind_a_busy_checker_are_skipped_and_counted() {
    // One checker: when the two threads launch together, the second launch may find it busy
    // and go unchecked; either way every launch is counted, and the application is unaffected.
    let program = example("two_threads");
    let plain = run_limited(&mut Command::new(&program), Duration::from_secs(60));
    let reports = tempfile::NamedTempFile::new().unwrap();
    let layered = run_limited(
        Command::new(&program)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FORMAT", "json")
            .env("CLRACE_OUTPUT", reports.path())
            .env("CLRACE_CHECKERS", "1"),
        Duration::from_secs(60),
    );
    assert_eq!(text(&layered.stdout), text(&plain.stdout));
    assert_eq!(layered.status.code(), Some(0));
    let summary: Value = std::fs::read_to_string(reports.path())
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["kind"] == "layer-summary")
        .expect("a summary");
    let (checked, skipped) =
        (summary["launches_checked"].as_u64().unwrap(), summary["launches_skipped"].as_u64().unwrap());
    assert_eq!(checked + skipped, 2, "{summary}");
    assert!(checked >= 1, "{summary}");
}

#[test]
fn image_kernels_are_snapshotted_and_their_races_reported() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "image");
    let plain = run_limited(&mut Command::new(&host), Duration::from_secs(60));
    // Waiting for the checkers, so that the second launch is checked too.
    let layered = run_limited(
        Command::new(&host)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FORMAT", "text")
            .env("CLRACE_ON_BACKLOG", "wait"),
        Duration::from_secs(60),
    );
    assert_eq!((layered.status.code(), text(&layered.stdout)), (Some(0), text(&plain.stdout)));
    let report = text(&layered.stderr);
    // Work-items 2k and 2k+1 write the same pixel of the write-only image at line 8; each race
    // is printed for the first launch only, and counted for the second.
    assert_eq!(report.matches("Write-write data race in image 'half_width' at pixel (0, 0, 0)").count(), 1, "{report}");
    // The program is named after its kernel and a hash of its text.
    let name = report.lines().find_map(|l| l.trim().strip_prefix("At brighten-")).expect("a named program");
    assert!(name.len() > 8 && name[8..].starts_with(".cl:8:5"), "{report}");
    // The input image, which the host may not read, was copied faithfully: only the pixel
    // holding 15, at (3, 3), sends its work-item to sums[0].
    assert_eq!(report.matches("Write-write data race in global memory: 'sums' at byte offset 0").count(), 1);
    assert!(report.contains("store by Global(3,3,0)") && report.contains(".cl:10:"), "{report}");
    assert!(report.contains("2 launch(es) checked") && report.contains("0 launch(es) not checked"), "{report}");
    assert!(report.contains("2 launch(es), 2 checked; 2 finding(s) seen again in later launches"), "{report}");
}

#[test]
fn a_kernel_the_emulator_cannot_finish_is_named_once_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "image");
    let plain = run_limited(&mut Command::new(&host), Duration::from_secs(60));
    let layered = run_limited(
        Command::new(&host)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FORMAT", "text")
            .env("CLRACE_BUDGET", "3"),
        Duration::from_secs(60),
    );
    assert_eq!((layered.status.code(), text(&layered.stdout)), (Some(0), text(&plain.stdout)));
    let report = text(&layered.stderr);
    assert_eq!(report.matches("could not be checked").count(), 1, "once for two launches: {report}");
    assert!(report.contains("instruction budget exhausted"), "{report}");
    assert!(report.contains("0 launch(es) checked") && report.contains("2 launch(es) not checked"), "{report}");
}

#[test]
fn fail_on_race_turns_findings_into_an_exit_status() {
    let program = example("racy_reduction");
    let plain = run_limited(&mut Command::new(&program), Duration::from_secs(60));
    let layered = run_limited(
        Command::new(&program)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FAIL_ON_RACE", "1")
            .env("CLRACE_FAIL_STATUS", "42"),
        Duration::from_secs(60),
    );
    assert_eq!(layered.status.code(), Some(42), "{}", text(&layered.stderr));
    assert_eq!(text(&layered.stdout), text(&plain.stdout), "the application's output is flushed first");
    // A clean application keeps its own status.
    let clean = run_limited(
        Command::new(example("tiled_matmul"))
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FAIL_ON_RACE", "1"),
        Duration::from_secs(60),
    );
    assert_eq!(clean.status.code(), Some(0));
}

#[test]
fn separately_compiled_and_linked_programs_are_followed() {
    let dir = tempfile::tempdir().unwrap();
    let run = check(&c_host(dir.path(), "link"), &[]);
    let races = run.races();
    assert_eq!(races.len(), 1, "{:?}", run.reports);
    let race = races[0];
    assert_eq!((race["race_type"].as_str(), race["buffer"].as_str()), (Some("write-write"), Some("out")));
    for access in race["accesses"].as_array().unwrap() {
        // The helper, compiled on its own, has no kernel: it is named `program-HASH.cl`.
        let file = access["file"].as_str().unwrap();
        assert!(file.starts_with("program-") && file.len() == "program-".len() + 11, "{access}");
        assert_eq!(access["line"].as_u64(), Some(3), "{access}");
        assert_eq!(source_of(access), "out[i] = v;");
    }
}

#[test]
fn a_c_host_program_is_checked_through_opencl_layers() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "host");
    // The second run makes the input a buffer the host may not read: the layer copies it first.
    for (driver, args) in drivers().into_iter().flat_map(|d| [(d, &[][..]), (d, &["no-host-access"][..])]) {
        let plain = run_limited(driver.select(&mut Command::new(&host)).args(args), Duration::from_secs(60));
        let layered = run_limited(
            driver
                .select(&mut Command::new(&host))
                .args(args)
                .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
                .env("CLRACE_FORMAT", "text"),
            Duration::from_secs(60),
        );
        assert_eq!(layered.status.code(), Some(0), "the layer does not change the application's status");
        assert_eq!(text(&layered.stdout), text(&plain.stdout));
        let report = text(&layered.stderr);
        assert!(report.contains("Read-write data race in local memory: 'scratch'"), "{driver:?} {args:?}: {report}");
        assert!(report.contains("1 launch(es) checked: 1 race(s)"), "{driver:?} {args:?}: {report}");
    }
}

/// The C host `tests/layer/NAME.c`, built once per test process into a directory kept in `slot`.
fn built_once<'a>(slot: &'a OnceLock<(tempfile::TempDir, PathBuf)>, name: &str) -> &'a Path {
    let (_, host) = slot.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = c_host(dir.path(), name);
        (dir, host)
    });
    host
}

/// A run of the `hostile` C host without the layer and under it (JSON reports to a file), with
/// the wall time of each.
struct Hostile {
    plain: Output,
    layered: Output,
    plain_time: Duration,
    layered_time: Duration,
    reports: Vec<Value>,
}

impl Hostile {
    fn run(args: &[&str], env: &[(&str, &str)]) -> Hostile {
        static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
        let host = built_once(&HOST, "hostile");
        let limit = Duration::from_secs(120);
        // The reference run, without the layer. A driver may itself die of a signal now and then
        // when a host exits with launches still queued (CI once saw `busy-exit` killed without
        // the layer): such a run says nothing of ours, so it is run again (at most three times).
        let mut tries = 0;
        let (plain, plain_time) = loop {
            let started = std::time::Instant::now();
            let run = run_limited(Command::new(host).args(args), limit);
            tries += 1;
            if run.status.code().is_some() || tries == 3 {
                break (run, started.elapsed());
            }
        };
        let reports = tempfile::NamedTempFile::new().unwrap();
        let mut command = Command::new(host);
        command
            .args(args)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FORMAT", "json")
            .env("CLRACE_OUTPUT", reports.path())
            .env("RUST_BACKTRACE", "1");
        for (k, v) in env {
            command.env(k, v);
        }
        let started = std::time::Instant::now();
        let layered = run_limited(&mut command, limit);
        let layered_time = started.elapsed();
        let reports = std::fs::read_to_string(reports.path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("report line is not JSON ({e}): {l}")))
            .collect();
        let run = Hostile { plain, layered, plain_time, layered_time, reports };
        assert_eq!(text(&run.layered.stdout), text(&run.plain.stdout), "{args:?}: the application printed otherwise");
        assert_eq!(run.layered.status.code(), run.plain.status.code(), "{args:?}: {}", text(&run.layered.stderr));
        // Nothing of ours on the application's stderr when reports go to a file: every line there
        // is the host's own or pocl's (whose compiler's warning count depends on its cache).
        let plain_stderr = text(&run.plain.stderr);
        let layered_stderr = text(&run.layered.stderr);
        let ours: Vec<&str> = layered_stderr
            .lines()
            .filter(|l| !plain_stderr.contains(l) && !l.starts_with("maxrss_kb") && !l.ends_with(" generated."))
            .collect();
        assert!(ours.is_empty(), "{args:?}: the layer wrote on the application's stderr: {ours:?}");
        run
    }

    /// The closing summary; exactly one (a forked child writes none).
    fn summary(&self) -> &Value {
        let summaries: Vec<&Value> = self.reports.iter().filter(|r| r["kind"] == "layer-summary").collect();
        assert_eq!(summaries.len(), 1, "{:?}", self.reports);
        summaries[0]
    }

    /// The summary's entry for `kernel` (present when not every launch of it was checked).
    fn kernel(&self, kernel: &str) -> &Value {
        let kernels = self.summary()["kernels"].as_array().expect("kernels");
        kernels.iter().find(|k| k["kernel"] == kernel).unwrap_or_else(|| panic!("{kernel} in {}", self.summary()))
    }

    fn reasons(&self, kernel: &str, field: &str) -> String {
        self.kernel(kernel)[field].to_string()
    }

    fn count(&self, kind: &str) -> usize {
        self.reports.iter().filter(|r| r["kind"] == kind).count()
    }

    /// How much longer the application took under the layer.
    fn delay(&self) -> Duration {
        self.layered_time.saturating_sub(self.plain_time)
    }
}

#[test]
fn a_check_that_never_ends_is_abandoned_and_stalls_no_later_launch() {
    // The limit is 7 s of CPU time, which a loaded machine stretches in wall time: the exit wait
    // is made long enough for it to be reached, and it is that wait that bounds the application.
    let settings = [("CLRACE_CHECK_TIMEOUT", "7"), ("CLRACE_EXIT_WAIT_MS", "60000")];
    let run = Hostile::run(&["spin-then-many"], &settings);
    assert!(run.reasons("wait_flag", "failed").contains("CLRACE_CHECK_TIMEOUT=7s"), "{}", run.summary());
    // Past 5 s the layer says once that the check is under way, and how far it got.
    let notes: Vec<&Value> = run.reports.iter().filter(|r| r["kind"] == "note").collect();
    let slow = notes.iter().filter(|n| n["message"].as_str().unwrap().contains("takes a while")).count();
    assert_eq!(slow, 1, "{notes:?}");
    // The other checker takes the later launches: all of them, or some and the rest named.
    let checked = run.summary()["launches_checked"].as_u64().unwrap();
    assert!(checked >= 1, "{}", run.summary());
    let skipped = run.summary()["launches_skipped"].as_u64().unwrap();
    assert_eq!(checked + skipped, 40, "{}", run.summary());
    assert!(run.delay() < Duration::from_secs(60), "the application waited {:?}", run.delay());
}

#[test]
fn launches_gated_on_a_user_event_hold_no_checker_and_delay_nothing() {
    let run = Hostile::run(&["gated-many"], &[]);
    let summary = run.summary();
    assert!(summary["launches_checked"].as_u64().unwrap() >= 1, "{summary}");
    let checked = summary["launches_checked"].as_u64().unwrap();
    let skipped = summary["launches_skipped"].as_u64().unwrap();
    assert_eq!(checked + skipped, 20, "{summary}");
    assert!(run.delay() < Duration::from_secs(5), "the application waited {:?}", run.delay());
}

#[test]
fn exit_does_not_wait_for_a_snapshot_the_device_never_takes() {
    let run = Hostile::run(&["gated-exit"], &[]);
    assert_eq!(run.summary()["launches_unfinished"], 1, "{}", run.summary());
    assert!(run.delay() < Duration::from_secs(3), "exit waited {:?}", run.delay());
}

/// Every launch not checked is named with a reason, those abandoned at exit included (they were
/// listed with none, and the text line ended in "; ").
#[test]
fn a_launch_abandoned_at_exit_is_named_with_a_reason() {
    let run = Hostile::run(&["gated-exit"], &[]);
    let kernel = run.kernel("bump");
    let unfinished = kernel["unfinished"].to_string();
    assert!(unfinished.contains("still waiting for the device at exit"), "{kernel}");
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let host = built_once(&HOST, "hostile");
    let mut command = Command::new(host);
    command.arg("gated-exit").env("OPENCL_LAYERS", artefacts().join("libclrace.so")).env("CLRACE_FORMAT", "text");
    let output = run_limited(&mut command, Duration::from_secs(60));
    let stderr = text(&output.stderr);
    let line = stderr.lines().find(|l| l.contains("kernel 'bump'")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.ends_with("1 not checked: its snapshot was still waiting for the device at exit"), "{line}");
}

#[test]
fn a_forked_child_exits_at_once_and_writes_no_summary() {
    let run = Hostile::run(&["fork-exit"], &[]);
    assert_eq!(run.summary()["launches_checked"], 1);
    assert!(run.delay() < Duration::from_secs(3), "the fork took {:?} longer", run.delay());
}

#[test]
fn repeats_of_a_checked_kernel_are_skipped_when_checks_fall_behind_and_named() {
    let run = Hostile::run(&["many", "2000", "65536"], &[]);
    let bump = run.kernel("bump");
    assert!(bump["checked"].as_u64().unwrap() >= 1, "{bump}");
    assert!(run.reasons("bump", "skipped").contains("checks were behind"), "{bump}");
    assert_eq!(bump["launches"], 2000);
    assert!(run.delay() < Duration::from_secs(12), "the application waited {:?}", run.delay());
}

#[test]
fn a_kernel_without_buffer_arguments_is_checked() {
    let run = Hostile::run(&["no-buffers"], &[]);
    assert_eq!(run.summary()["launches_checked"], 1, "{:?}", run.reports);
    let races: Vec<&Value> = run.reports.iter().filter(|r| r["kind"] == "race").collect();
    assert_eq!(races.len(), 1, "{:?}", run.reports);
    assert_eq!((races[0]["address_space"].as_str(), races[0]["buffer"].as_str()), (Some("local"), Some("tmp")));
}

#[test]
fn a_launch_too_large_to_check_is_named_and_the_clean_exit_stays_clean() {
    for mode in ["huge-global", "huge-global-2d"] {
        let run = Hostile::run(&[mode], &[]);
        assert!(run.reasons("nothing", "skipped").contains("more than 2^32 work-items"), "{mode}: {}", run.summary());
        assert!(run.delay() < Duration::from_secs(5), "{mode}: exit took {:?} longer", run.delay());
    }
}

#[test]
fn a_race_seen_in_every_launch_is_reported_once_and_counted() {
    let run = Hostile::run(&["repeat", "300"], &[("CLRACE_ON_BACKLOG", "wait")]);
    assert_eq!(run.count("race"), 1, "{:?}", run.reports);
    let racy = run.kernel("racy");
    let checked = racy["checked"].as_u64().unwrap();
    assert!(checked > 1, "{racy}");
    assert_eq!(racy["repeated_findings"].as_u64().unwrap(), checked - 1, "{racy}");
}

#[test]
fn exit_with_launches_still_on_the_device_is_clean() {
    let run = Hostile::run(&["busy-exit"], &[]);
    assert_eq!(run.layered.status.code(), Some(0));
    assert!(run.delay() < Duration::from_secs(12), "exit took {:?} longer", run.delay());
}

#[test]
fn the_memory_limit_holds_for_snapshots_and_shadow_together() {
    let peak = |o: &Output| -> u64 {
        let line = text(&o.stderr).lines().find_map(|l| l.strip_prefix("maxrss_kb ").map(str::to_string));
        line.expect("the host prints its peak memory").trim().parse::<u64>().unwrap() >> 10
    };
    let run = Hostile::run(&["big", "256"], &[("CLRACE_MEMORY_MB", "400")]);
    // Every stored word differs: the detector must keep each stored byte (a run of one word
    // stored over and over is kept as that word once).
    let failed = run.reasons("number", "failed") + &run.reasons("number", "skipped");
    assert!(failed.contains("CLRACE_MEMORY_MB=400"), "{}", run.summary());
    let extra = peak(&run.layered).saturating_sub(peak(&run.plain));
    assert!(extra < 400 + 64, "the layer took {extra} MiB more than the application alone");
}

/// Runs the `before` C host in `mode` under `CLRACE_ORDER=before` with JSON reports to a file:
/// the host's output and the reports.
fn before(mode: &str, env: &[(&str, &str)]) -> (Output, Vec<Value>) {
    before_on(None, mode, env)
}

/// [`before`] on `driver` alone, or on the system's drivers (`None`).
fn before_on(driver: Option<Driver>, mode: &str, env: &[(&str, &str)]) -> (Output, Vec<Value>) {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let host = built_once(&HOST, "before");
    let reports = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(host);
    if let Some(driver) = driver {
        driver.select(&mut command);
    }
    command
        .arg(mode)
        .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
        .env("CLRACE_ORDER", "before")
        .env("CLRACE_FORMAT", "json")
        .env("CLRACE_OUTPUT", reports.path());
    for (k, v) in env {
        command.env(k, v);
    }
    let output = run_limited(&mut command, Duration::from_secs(60));
    let reports =
        std::fs::read_to_string(reports.path()).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (output, reports)
}

#[test]
fn before_the_launch_the_report_is_written_before_the_host_sees_the_launch_end() {
    for mode in ["report-first", "app-event", "two-queues", "out-of-order"] {
        let (run, reports) = before(mode, &[]);
        let expected = if mode == "report-first" || mode == "app-event" { "7 7 7" } else { "7 107 7" };
        assert_eq!(text(&run.stdout), format!("status complete; out = {expected}\n"), "{mode}: {}", text(&run.stderr));
        let stderr = text(&run.stderr);
        assert!(stderr.contains("report before the host saw the launch end: yes"), "{mode}: {stderr}");
        assert_eq!(reports.iter().filter(|r| r["kind"] == "race").count(), 1, "{mode}: {reports:?}");
        if mode == "report-first" {
            // The event is the driver's: its callback runs and its profiling times are ordered.
            assert!(stderr.contains("callback: complete") && stderr.contains("profiling: ordered"), "{stderr}");
        }
        if mode == "app-event" {
            assert!(stderr.contains("before the application's event: pending"), "{stderr}");
        }
    }
}

#[test]
fn before_the_launch_a_failed_or_endless_check_still_releases_the_launch() {
    let (run, reports) = before("spin", &[("CLRACE_CHECK_TIMEOUT", "2")]);
    assert_eq!(text(&run.stdout), "status complete; out = 7 -1 -1\n", "{}", text(&run.stderr));
    let summary = reports.iter().find(|r| r["kind"] == "layer-summary").expect("a summary");
    assert!(summary["kernels"].to_string().contains("CLRACE_CHECK_TIMEOUT=2s"), "{summary}");
    // The spinning kernel's loop spends the budget (a kernel without branches or calls spends none).
    let (run, reports) = before("spin", &[("CLRACE_BUDGET", "1000")]);
    assert_eq!(text(&run.stdout), "status complete; out = 7 -1 -1\n", "{}", text(&run.stderr));
    let summary = reports.iter().find(|r| r["kind"] == "layer-summary").expect("a summary");
    assert!(summary["kernels"].to_string().contains("CLRACE_BUDGET"), "{summary}");
}

#[test]
fn before_the_launch_a_racy_launch_can_be_held_back_or_end_the_process() {
    let (run, reports) = before("report-first", &[("CLRACE_ON_FINDING", "skip")]);
    assert_eq!(text(&run.stdout), "status error; out = -1 -1 -1\n", "the buffer keeps its contents");
    let note = reports.iter().find(|r| r["kind"] == "note").expect("a note");
    assert!(note["message"].as_str().unwrap().contains("was not run on the device"), "{note}");
    let summary = reports.iter().find(|r| r["kind"] == "layer-summary").expect("a summary");
    assert_eq!(summary["launches_held_back"], 1, "{summary}");
    let (run, reports) = before("report-first", &[("CLRACE_ON_FINDING", "abort"), ("CLRACE_FAIL_STATUS", "33")]);
    assert_eq!(run.status.code(), Some(33));
    assert_eq!(text(&run.stdout), "", "the host never saw the launch end");
    assert_eq!(reports.iter().filter(|r| r["kind"] == "race").count(), 1, "the report is written first");
}

#[test]
fn clrace_run_says_when_the_application_crashed_and_holds_racy_launches_back_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "hostile");
    let run = run_limited(
        Command::new(artefacts().join("clrace")).args(["run", "--"]).arg(&host).arg("crash"),
        Duration::from_secs(60),
    );
    assert_eq!(run.status.code(), Some(128 + 11));
    let said = text(&run.stderr);
    assert!(said.contains("the application crashed: killed by signal 11 (SIGSEGV)"), "{said}");
    assert!(!said.contains("made no OpenCL calls"), "{said}");
    let run = run_limited(
        Command::new(artefacts().join("clrace"))
            .args(["run", "--before", "--on-finding", "abort", "--"])
            .arg(example("racy_reduction")),
        Duration::from_secs(60),
    );
    assert_eq!(run.status.code(), Some(66), "{}", text(&run.stderr));
    let said = text(&run.stderr);
    assert!(said.contains("data race") && said.contains("CLRACE_ON_FINDING=abort"), "{said}");
}

#[test]
fn programs_are_named_by_the_file_of_the_source_directory_that_holds_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "hostile");
    let source = run_limited(Command::new(&host).arg("print-source"), Duration::from_secs(20));
    let kernels = dir.path().join("src/kernels");
    std::fs::create_dir_all(&kernels).unwrap();
    std::fs::write(kernels.join("hostile.cl"), &source.stdout).unwrap();
    let file = kernels.join("hostile.cl").canonicalize().unwrap();
    let run = Hostile::run(&["repeat", "2"], &[("CLRACE_SOURCE_DIR", dir.path().to_str().unwrap())]);
    let race = run.reports.iter().find(|r| r["kind"] == "race").expect("the race");
    for access in race["accesses"].as_array().unwrap() {
        assert_eq!(access["file"].as_str(), file.to_str(), "{access}");
        assert_eq!(source_of(access), "kernel void racy(global int *x) { x[0] = get_global_id(0); }");
    }
    // Without it, the name is the program's kernels and a hash of its text, the same every run.
    let names = |run: &Hostile| -> Vec<String> {
        let race = run.reports.iter().find(|r| r["kind"] == "race").unwrap();
        race["accesses"].as_array().unwrap().iter().map(|a| a["file"].as_str().unwrap().to_string()).collect()
    };
    let (first, second) = (names(&Hostile::run(&["repeat", "2"], &[])), names(&Hostile::run(&["repeat", "2"], &[])));
    assert_eq!(first, second);
    assert!(first[0].starts_with("wait_flag+bump+"), "{first:?}");
}

#[test]
fn an_out_of_bounds_write_by_every_work_item_is_one_report_with_its_count() {
    let run = Hostile::run(&["oob", "65536"], &[]);
    let oob: Vec<&Value> = run.reports.iter().filter(|r| r["kind"] == "out-of-bounds").collect();
    assert_eq!(oob.len(), 1, "{:?}", run.reports);
    assert_eq!(oob[0]["count"], 65536, "{}", oob[0]);
    assert_eq!(run.summary()["out_of_bounds"], 1, "one distinct finding: {}", run.summary());
}

#[test]
fn an_async_copy_never_waited_for_is_reported_by_the_layer() {
    let run = Hostile::run(&["async-unwaited"], &[]);
    let found: Vec<&Value> = run.reports.iter().filter(|r| r["kind"] == "async-copy").collect();
    assert_eq!(found.len(), 1, "{:?}", run.reports);
    assert_eq!((found[0]["problem"].as_str(), found[0]["kernel"].as_str()), (Some("unwaited"), Some("unwaited_copy")));
    assert_eq!(run.summary()["async_copies"], 1, "{}", run.summary());
}

#[test]
fn the_layer_explores_the_first_launch_of_each_kernel_with_the_options_of_check() {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let host = built_once(&HOST, "explore");
    // Repeats are checked only when checks keep up: wait for them instead.
    let with_env = |args: &[&str], env: &[(&str, &str)]| {
        let reports = tempfile::NamedTempFile::new().unwrap();
        let mut command = Command::new(artefacts().join("clrace"));
        command.args(["run", "--format", "json", "--output"]).arg(reports.path()).args(args).arg("--").arg(host);
        command.env("CLRACE_ON_BACKLOG", "wait");
        for (k, v) in env {
            command.env(k, v);
        }
        let out = run_limited(&mut command, Duration::from_secs(120));
        assert_eq!(text(&out.stdout), "sum = 56\n");
        let reports: Vec<Value> = std::fs::read_to_string(reports.path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out.status.code(), reports)
    };
    let explored = check(host, &["--explore", "--explore-bound", "1"]);
    assert_eq!(explored.checked.status.code(), Some(1), "{:?}", explored.reports);
    let results: Vec<&Value> = explored.reports.iter().filter(|r| r["kind"] == "schedule-dependent-result").collect();
    assert!(!results.is_empty(), "{:?}", explored.reports);
    assert!(results.iter().all(|r| r["kernel"] == "queue" && r["buffer"] == "out"), "{results:?}");
    assert_eq!(results[0]["delays"].as_array().unwrap().len(), 1);
    // Only the first launch is explored; both are checked.
    let (status, reports) = with_env(&["--explore", "--explore-bound", "1"], &[]);
    assert_eq!(status, Some(1));
    let launches: Vec<&Value> = reports.iter().filter(|r| r["kind"] == "summary").collect();
    assert_eq!(launches.len(), 2, "{launches:?}");
    assert!(launches[0]["schedules"].as_u64().unwrap() > 1, "{:?}", launches[0]);
    assert!(launches[1].get("schedules").is_none(), "{:?}", launches[1]);
    assert!(explored.summary()["other_findings"].as_u64().unwrap() >= 1, "{}", explored.summary());
    // As a multiset the queue is the same in every schedule.
    let multiset = check(host, &["--explore", "--explore-bound", "1", "--compare-multiset", "out"]);
    assert_eq!(multiset.checked.status.code(), Some(0), "{:?}", multiset.reports);
    assert!(multiset.reports.iter().all(|r| r["kind"] != "schedule-dependent-result"));
    // CLRACE_EXPLORE_LAUNCHES (here set by its variable): the second launch too, its findings
    // counted as repeats.
    let (_, reports) = with_env(&["--explore"], &[("CLRACE_EXPLORE_LAUNCHES", "2"), ("CLRACE_EXPLORE_BOUND", "1")]);
    let launches: Vec<&Value> = reports.iter().filter(|r| r["kind"] == "summary").collect();
    assert_eq!(launches.len(), 2, "{launches:?}");
    assert!(launches.iter().all(|s| s["schedules"].as_u64().unwrap() > 1), "{launches:?}");
    assert!(launches[1]["repeated_findings"].as_u64().unwrap() >= 1, "{:?}", launches[1]);
    // Without exploration the queue is clean: no race, and its order is not looked at.
    let plain = check(host, &[]);
    assert_eq!(plain.checked.status.code(), Some(0), "{:?}", plain.reports);
}
