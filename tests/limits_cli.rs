//! `clrace check` under hostile launches: NDRanges too large to run are refused (exit 2) rather
//! than aborting or growing without bound, the wall-time and memory limits end a run with exit 4
//! and a message, and floods of findings come out as one report per instruction with a count,
//! the same for any number of threads.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/limits")
}

fn clrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clrace")).args(args).current_dir(dir()).output().unwrap()
}

/// `clrace` under `ulimit -v` (KiB of address space): an allocation beyond it aborts the process.
fn clrace_limited(kib: u64, args: &[&str]) -> Output {
    let script = format!("ulimit -v {kib} && exec \"$0\" \"$@\"");
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_clrace"))
        .args(args)
        .current_dir(dir())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    text(bytes).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

#[test]
fn ndranges_past_2_to_the_32_work_items_are_refused_with_exit_2() {
    for (sim, size) in [
        ("ndrange_max.sim", "[18446744073709551615, 1, 1]"),
        ("ndrange_negative.sim", "[18446744073709551600, 1, 1]"),
        ("global_2p40.sim", "[1099511627776, 1, 1]"),
        ("global_2p60.sim", "[1048576, 1048576, 1048576]"),
    ] {
        let out = clrace_limited(2_000_000, &["check", sim]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sim}: {err}");
        assert!(
            err.contains(&format!("invalid launch: global size {size} has more than 2^32 work-items")),
            "{sim}: {err}"
        );
    }
}

#[test]
fn work_groups_past_65536_work_items_are_refused_with_exit_2() {
    for (sim, size, items) in [
        ("huge_work_group.sim", "[512, 512, 512]", 134217728u64),
        ("one_group_2g.sim", "[2147483648, 1, 1]", 2147483648),
        ("one_group_16m.sim", "[16777216, 1, 1]", 16777216),
    ] {
        let out = clrace_limited(2_000_000, &["check", sim]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sim}: {err}");
        let expected = format!(
            "invalid launch: work-group size {size} has {items} work-items; clrace runs at most 65536 per work-group"
        );
        assert!(err.contains(&expected), "{sim}: {err}");
    }
}

#[test]
fn an_endless_loop_ends_at_the_wall_time_limit_with_exit_4() {
    let out = clrace(&["check", "--timeout", "1", "infinite_loop.sim"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("clrace: wall-time limit exceeded after 1."), "{err}");
    assert!(err.contains("in work-group (0,0,0) (work-item (0,0,0) at "), "{err}");
    assert!(err.contains("infinite_loop.cl:5:"), "{err}");
    assert!(err.contains("raise --timeout if it is just long"), "{err}");
    // stderr is not a terminal: no progress line, even past two seconds.
    assert!(!err.contains("work-group(s) done"), "{err}");
}

#[test]
fn the_wall_time_error_in_json_is_an_error_object_with_status_4() {
    let out = clrace(&["check", "--format", "json", "--timeout", "1", "infinite_loop.sim"]);
    let objects = json_lines(&out.stderr);
    assert_eq!(out.status.code(), Some(4));
    let error = objects.iter().find(|o| o["kind"] == "error").expect("an error object");
    assert_eq!(error["status"], 4);
    assert!(error["message"].as_str().unwrap().starts_with("wall-time limit exceeded after "), "{error}");
}

#[test]
fn a_barrier_loop_that_never_ends_is_a_divergence_reported_at_once_in_bounded_memory() {
    // Every release of the barrier is a divergence: they were kept one by one (4.6 GiB in 8 s),
    // and later the run went on to the wall-time limit. The group comes back to the barrier in
    // the same state, so the loop can only repeat: the divergence is reported at once.
    let out = clrace_limited(3_000_000, &["check", "--timeout", "30", "divergent_barrier_forever.sim"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("Barrier divergence in work-group (0,0,0)"), "{err}");
    assert!(!err.contains("wall-time limit"), "{err}");
}

#[test]
fn the_detector_past_the_memory_limit_ends_with_exit_4() {
    // The launch's kernel-wide shadow keeps the 16 MiB of bytes it stores: past 8 MiB.
    let out = clrace(&["check", "--memory-mb", "8", "touch_all.sim"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("clrace: memory limit exceeded: the race detector's shadow memory would pass the limit of 8 MiB"),
        "{err}"
    );
    assert!(err.contains("raise --memory-mb"), "{err}");
    // Without the detector the same launch fits easily.
    let out = clrace(&["check", "--memory-mb", "8", "--no-races", "touch_all.sim"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn the_memory_limit_holds_under_an_address_space_limit_instead_of_an_abort() {
    // The same launch with 2 GiB of address space: the memory error, not an allocation abort.
    let out = clrace_limited(2_000_000, &["check", "--memory-mb", "8", "touch_all.sim"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("memory limit exceeded"), "{err}");
}

#[test]
fn finished_groups_give_their_local_memory_back() {
    // 65536 groups with 16 KiB of __local each kept 1 GiB until the end; now one per worker.
    let out = clrace_limited(1_000_000, &["check", "--threads", "1", "--no-races", "bigl.sim"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = clrace(&["check", "--threads", "2", "--no-races", "--memory-mb", "32", "bigl.sim"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn out_of_bounds_reads_of_every_work_item_are_one_report_with_a_count() {
    let mut reports = Vec::new();
    for threads in ["1", "2", "3"] {
        let out = clrace(&["check", "--format", "json", "--threads", threads, "oob_many.sim"]);
        assert_eq!(out.status.code(), Some(1));
        reports.push(text(&out.stderr));
    }
    assert!(reports.iter().all(|r| *r == reports[0]), "reports differ across threads: {reports:?}");
    let objects = json_lines(reports[0].as_bytes());
    let oob: Vec<&Value> = objects.iter().filter(|o| o["kind"] == "out-of-bounds").collect();
    assert_eq!(oob.len(), 1, "{objects:?}");
    assert_eq!(oob[0]["count"], 65536);
    assert_eq!(oob[0]["global_id"], serde_json::json!([0, 0, 0]), "the first in NDRange order");
    let summary = objects.iter().find(|o| o["kind"] == "summary").unwrap();
    assert_eq!(summary["out_of_bounds"], 65536);
    assert!(summary.get("omitted").is_none());
    let out = clrace(&["check", "oob_many.sim"]);
    let err = text(&out.stderr);
    assert_eq!(err.matches("Invalid read of size 4").count(), 1, "{err}");
    assert!(err.contains("\tOccurrences: 65536 (the first in NDRange order is shown)"), "{err}");
    assert!(err.contains("65536 out-of-bounds access(es)"), "{err}");
}

#[test]
fn barrier_divergences_of_one_barrier_are_one_report_with_a_count() {
    let mut reports = Vec::new();
    for threads in ["1", "2", "3"] {
        let out = clrace(&["check", "--format", "json", "--threads", threads, "divergent_many.sim"]);
        assert_eq!(out.status.code(), Some(1));
        reports.push(text(&out.stderr));
    }
    assert!(reports.iter().all(|r| *r == reports[0]), "reports differ across threads: {reports:?}");
    let objects = json_lines(reports[0].as_bytes());
    let divergences: Vec<&Value> = objects.iter().filter(|o| o["kind"] == "barrier-divergence").collect();
    assert_eq!(divergences.len(), 1, "{objects:?}");
    // Each of the 4 groups of 32 releases its barrier 10 * 31 times, each time divergent.
    assert_eq!(divergences[0]["count"], 1240);
    assert_eq!(divergences[0]["group_id"], serde_json::json!([0, 0, 0]));
    let summary = objects.iter().find(|o| o["kind"] == "summary").unwrap();
    assert_eq!(summary["divergences"], 1240);
}

#[test]
fn past_1000_distinct_findings_the_rest_are_counted_not_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let loads: String = (0..1005).map(|k| format!("    s += in[16 + {k}];\n")).collect();
    let source = format!(
        "kernel void many(global const int *in, global int *out)\n{{\n    int s = 0;\n{loads}    out[0] = s;\n}}\n"
    );
    std::fs::write(tmp.path().join("many.cl"), source).unwrap();
    std::fs::write(tmp.path().join("many.sim"), "many.cl\nmany\n1 1 1\n1 1 1\n<size=64 fill=1>\n<size=4 fill=0>\n")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--format", "json", "--print-limit", "0", "many.sim"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let objects = json_lines(&out.stderr);
    assert_eq!(objects.iter().filter(|o| o["kind"] == "out-of-bounds").count(), 1000);
    let summary = objects.iter().find(|o| o["kind"] == "summary").unwrap();
    assert_eq!(summary["out_of_bounds"], 1000);
    assert_eq!(summary["omitted"], 5);
}

#[test]
fn a_terminal_gets_a_progress_line_that_is_erased_at_the_end() {
    // `script` gives clrace a terminal; the run lasts past the two quiet seconds.
    let command = format!("{} check --timeout 3 infinite_loop.sim", env!("CARGO_BIN_EXE_clrace"));
    let out = Command::new("script").args(["-qec", &command, "/dev/null"]).current_dir(dir()).output().unwrap();
    let seen = text(&out.stdout);
    assert!(seen.contains("clrace: 0 of 1 work-group(s) done, 2s ["), "{seen:?}");
    assert!(seen.contains("] 0/s"), "the rate: {seen:?}");
    // Erased before the error message.
    assert!(seen.contains("\r\x1b[2Kclrace: wall-time limit exceeded after 3."), "{seen:?}");
}
