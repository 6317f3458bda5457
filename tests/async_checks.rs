//! Check 11, async copies and events: every kernel of `tests/async_checks/` runs through
//! `clrace check --format json`. Each misuse (a copy or wait not reached by every work-item of
//! the group or with arguments that differ, a copy never waited for, a wait on an event not in
//! flight) gives exactly its `async-copy` findings, one per instruction, and each correct twin
//! (`*_ok`) gives none. The copy a non-uniform call makes is that of the lowest work-item, and
//! reports do not depend on the thread count, the sub-group size or schedule exploration.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("async_checks")
}

struct Run {
    status: i32,
    reports: Vec<Value>,
    stdout: String,
}

fn check(name: &str, extra: &[&str]) -> Run {
    let (status, reports, stdout) = common::check_json(&dir(), &format!("{name}.sim"), extra);
    Run { status, reports, stdout }
}

impl Run {
    fn findings(&self) -> Vec<&Value> {
        self.reports.iter().filter(|r| r["kind"] != "summary").collect()
    }

    /// The async-copy findings as (problem, function, line, argument or null).
    fn async_copies(&self) -> Vec<(String, String, u64, Value)> {
        self.reports
            .iter()
            .filter(|r| r["kind"] == "async-copy")
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or("?").to_string();
                (s("problem"), s("function"), r["line"].as_u64().unwrap(), r["argument"].clone())
            })
            .collect()
    }

    fn summary(&self) -> &Value {
        self.reports.iter().find(|r| r["kind"] == "summary").expect("a summary line")
    }

    /// The dumped values of `out`.
    fn out(&self) -> Vec<i64> {
        self.stdout.lines().filter_map(|l| l.split(" = ").nth(1)).map(|v| v.trim().parse().unwrap()).collect()
    }
}

fn copy(problem: &str, line: u64, argument: Option<&str>) -> (String, String, u64, Value) {
    (problem.into(), "async_work_group_copy".into(), line, argument.map_or(Value::Null, |a| a.into()))
}

fn wait(problem: &str, line: u64, argument: Option<&str>) -> (String, String, u64, Value) {
    (problem.into(), "wait_group_events".into(), line, argument.map_or(Value::Null, |a| a.into()))
}

#[test]
fn correct_twins_report_nothing() {
    for name in
        ["copy_count_ok", "copy_reach_ok", "strided_ok", "wait_events_ok", "unwaited_ok", "chained_ok", "copy_out_ok"]
    {
        let run = check(name, &[]);
        assert_eq!((run.status, run.findings().len()), (0, 0), "{name}: {:?}", run.reports);
        assert!(run.summary().get("async_copies").is_none(), "{name}: {}", run.summary());
    }
}

#[test]
fn correct_twins_compute_what_a_device_computes() {
    let ids: Vec<i64> = (0..16).collect();
    assert_eq!(check("copy_count_ok", &[]).out(), ids);
    assert_eq!(check("chained_ok", &[]).out(), [(0..8).collect::<Vec<i64>>(), (0..8).collect()].concat());
    let evens: Vec<i64> = (0..8).map(|i| 2 * i).collect();
    assert_eq!(check("strided_ok", &[]).out(), [evens.clone(), evens].concat());
    assert_eq!(check("copy_out_ok", &[]).out(), ids.iter().map(|i| 2 * i).collect::<Vec<_>>());
}

#[test]
fn a_copy_with_differing_arguments_is_made_once_with_the_lowest_work_items() {
    let run = check("copy_count", &[]);
    assert_eq!(run.status, 1);
    assert_eq!(run.async_copies(), vec![copy("non-uniform", 11, Some("num_gentypes"))], "{:?}", run.reports);
    let f = run.reports.iter().find(|r| r["kind"] == "async-copy").unwrap();
    assert_eq!(
        (f["first_local_id"].clone(), f["other_local_id"].clone()),
        (serde_json::json!([0, 0, 0]), serde_json::json!([7, 0, 0]))
    );
    assert_eq!(f["count"], 2, "one finding, in both work-groups: {f}");
    assert_eq!(run.summary()["async_copies"], 2, "{}", run.summary());
    // Work-item 0 asked for all eight elements: every work-item sees its own.
    assert_eq!(run.out(), (0..16).collect::<Vec<i64>>());

    let run = check("copy_src", &[]);
    assert_eq!(run.async_copies(), vec![copy("non-uniform", 28, Some("src"))], "{:?}", run.reports);
    assert_eq!(run.out(), [(0..8).collect::<Vec<i64>>(), (0..8).collect()].concat(), "work-item 0's source");

    let run = check("strided", &[]);
    assert_eq!(run.async_copies(), vec![copy("non-uniform", 59, Some("stride"))], "{:?}", run.reports);
    let evens: Vec<i64> = (0..8).map(|i| 2 * i).collect();
    assert_eq!(run.out(), [evens.clone(), evens].concat(), "work-item 0's stride");

    let run = check("chained_loop", &[]);
    assert_eq!(run.async_copies(), vec![copy("non-uniform", 152, Some("dst"))], "{:?}", run.reports);
    assert_eq!(run.out(), [(0..8).collect::<Vec<i64>>(), (0..8).collect()].concat());
}

#[test]
fn a_copy_only_some_work_items_reach_is_reported_with_how_many() {
    let run = check("copy_reach", &[]);
    assert_eq!(
        run.async_copies(),
        vec![copy("non-uniform", 39, None), wait("non-uniform", 40, Some("event_list"))],
        "the wait names event 0 in the work-items that skipped the copy: {:?}",
        run.reports
    );
    let f = run.reports.iter().find(|r| r["kind"] == "async-copy").unwrap();
    assert_eq!((f["reached"].as_u64(), f["work_group_size"].as_u64()), (Some(4), Some(8)), "{f}");
    assert_eq!(run.findings().len(), 2, "no barrier divergence besides: {:?}", run.reports);
}

#[test]
fn a_wait_with_other_events_or_not_reached_by_all_is_non_uniform() {
    let run = check("wait_events", &[]);
    let found = run.async_copies();
    assert_eq!(
        found,
        vec![wait("non-uniform", 79, Some("event_list")), copy("unwaited", 78, None)],
        "work-item 0's events are waited for, the second copy's never: {:?}",
        run.reports
    );
    // The copy nobody waited for is still in flight when the work-items read what it writes.
    assert!(run.reports.iter().any(|r| r["kind"] == "race" && r["buffer"] == "tile"), "{:?}", run.reports);

    let run = check("wait_reach", &[]);
    assert_eq!(run.async_copies(), vec![wait("non-uniform", 99, None)], "{:?}", run.reports);
    assert_eq!(run.findings().len(), 1, "the barrier the wait implies is not reported again: {:?}", run.reports);
}

#[test]
fn a_copy_never_waited_for_and_a_wait_on_no_copy_are_reported() {
    let run = check("unwaited", &[]);
    assert_eq!(run.async_copies(), vec![copy("unwaited", 106, None)], "{:?}", run.reports);
    let f = run.reports.iter().find(|r| r["kind"] == "async-copy").unwrap();
    assert_eq!((f["event"].as_u64(), f["count"].as_u64()), (Some(1), Some(2)), "{f}");

    let run = check("invalid_event", &[]);
    assert_eq!(run.async_copies(), vec![wait("invalid-event", 120, None)], "{:?}", run.reports);
    let f = run.reports.iter().find(|r| r["kind"] == "async-copy").unwrap();
    assert_eq!(f["event"], 0, "{f}");
    assert_eq!(run.out(), (0..16).collect::<Vec<i64>>(), "the run goes on");

    let run = check("wait_twice", &[]);
    assert_eq!(
        run.async_copies(),
        vec![wait("invalid-event", 131, None)],
        "the first wait completed it: {:?}",
        run.reports
    );
}

#[test]
fn reports_do_not_depend_on_threads_sub_groups_or_exploration() {
    for name in ["copy_count", "copy_reach", "wait_events", "wait_reach", "unwaited", "invalid_event", "chained_loop"] {
        let one = check(name, &["--threads", "1"]).reports;
        assert_eq!(one, check(name, &["--threads", "3"]).reports, "{name}");
        let sub = check(name, &["--sub-group-size", "2"]).reports;
        assert_eq!(one, sub, "{name}: sub-groups of 2");
    }
    for name in ["copy_count_ok", "wait_events_ok", "chained_ok"] {
        let run = check(name, &["--explore", "--explore-bound", "1"]);
        assert_eq!((run.status, run.findings().len()), (0, 0), "{name}: {:?}", run.reports);
    }
    let run = check("copy_count", &["--explore", "--explore-bound", "1"]);
    assert_eq!(run.async_copies(), vec![copy("non-uniform", 11, Some("num_gentypes"))], "{:?}", run.reports);
}

#[test]
fn the_text_report_says_what_the_copy_did() {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "copy_count.sim"])
        .current_dir(dir())
        .output()
        .expect("clrace runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains(
            "Non-uniform async_work_group_copy in work-group (0,0,0): Local(7,0,0) passes a different num_gentypes than Local(0,0,0)"
        ),
        "{text}"
    );
    assert!(text.contains("The copy was made once, with the arguments of Local(0,0,0)"), "{text}");
    assert!(text.contains("Occurrences: 2"), "{text}");
    assert!(text.contains("; 2 async-copy finding(s)"), "{text}");
}

#[test]
fn findings_go_through_sarif_and_suppressions() {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--format", "sarif", "unwaited.sim"])
        .current_dir(dir())
        .output()
        .expect("clrace runs");
    assert_eq!(out.status.code(), Some(1));
    let log: Value = serde_json::from_slice(&out.stdout).expect("a SARIF log");
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "async-copy", "{result}");
    let text = result["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("Never waited for: async_work_group_copy in work-group (0,0,0)"), "{text}");
    assert_eq!(result["locations"][0]["physicalLocation"]["region"]["startLine"], 106, "{result}");

    let rules = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(rules.path(), "async-copy:unwaited\n").unwrap();
    let run = check("unwaited", &["--suppressions", rules.path().to_str().unwrap()]);
    assert_eq!((run.status, run.findings().len()), (0, 0), "{:?}", run.reports);
    assert_eq!(run.summary()["suppressed"], 2, "{}", run.summary());
}
