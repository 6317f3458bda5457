//! `clrace run` with its default spool, end to end on the real stack (the ocl-icd loader and
//! pocl): a racy kernel launched many times has its finding reported once, the summary counts
//! every launch as checked, and the exit status is 1; `clrace run --spool DIR` keeps the spool,
//! and `clrace check DIR` later reports the same.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{artefacts, c_host, run_limited, text};

/// Runs `clrace run --format json --output FILE ARGS -- HOST`: the exit status and the reports.
fn run(host: &Path, args: &[&str]) -> (Option<i32>, Vec<Value>) {
    let reports = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(artefacts().join("clrace"));
    command.args(["run", "--format", "json", "--output"]).arg(reports.path()).args(args).arg("--").arg(host);
    let out = run_limited(&mut command, Duration::from_secs(120));
    assert_eq!(text(&out.stdout), "x[15] = 39\n", "the application printed something else");
    let reports = std::fs::read_to_string(reports.path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (out.status.code(), reports)
}

fn findings(reports: &[Value]) -> Vec<&Value> {
    reports
        .iter()
        .filter(|r| !["summary", "layer-summary", "note"].contains(&r["kind"].as_str().unwrap_or("")))
        .collect()
}

#[test]
fn every_launch_is_spooled_and_checked_and_a_finding_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "launches");
    let (status, reports) = run(&host, &[]);
    assert_eq!(status, Some(1), "{reports:#?}");
    let found = findings(&reports);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!((found[0]["kind"].as_str(), found[0]["kernel"].as_str()), (Some("race"), Some("racy")));
    let summary = reports.last().unwrap();
    assert_eq!(summary["kind"], "layer-summary", "{summary}");
    assert_eq!(summary["launches_checked"], 50, "{summary}");
    assert_eq!(summary["launches_skipped"], 0, "{summary}");
    assert_eq!(summary["repeated_findings"], 24, "{summary}");
    // Each launch has its summary, in the order the application made them.
    let launches: Vec<u64> =
        reports.iter().filter(|r| r["kind"] == "summary").map(|r| r["spooled"].as_u64().unwrap()).collect();
    assert_eq!(launches.len(), 50);
    assert!(launches.windows(2).all(|w| w[0] < w[1]), "{launches:?}");
    // The temporary spool is gone; --no-spool checks inline as before.
    let spool = summary["spool"].as_str().unwrap();
    assert!(!Path::new(spool).exists(), "{spool} was left behind");
    // In text, a report of the temporary spool says how to keep its launches.
    let said =
        run_limited(Command::new(artefacts().join("clrace")).args(["run", "--"]).arg(&host), Duration::from_secs(120));
    assert_eq!(said.status.code(), Some(1));
    let said = text(&said.stderr);
    assert!(said.contains("`clrace run --spool DIR` keeps the launches to check alone"), "{said}");
    assert!(said.contains("clrace: 50 launch(es) checked: 1 race(s)"), "{said}");
    let (status, inline) = run(&host, &["--no-spool"]);
    assert_eq!(status, Some(1));
    assert_eq!(findings(&inline).len(), 1);
}

#[test]
fn a_kept_spool_checked_later_reports_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "launches");
    let spool = dir.path().join("spool");
    let (status, reports) = run(&host, &["--spool", spool.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(status, Some(1));
    assert!(spool.join("runs/0/layer.json").is_file() && spool.join("launches").is_dir());
    let later = Command::new(artefacts().join("clrace"))
        .args(["check", spool.to_str().unwrap(), "--format", "json", "--jobs", "1"])
        .output()
        .unwrap();
    assert_eq!(later.status.code(), Some(1), "{}", text(&later.stderr));
    let later: Vec<Value> = text(&later.stderr).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(later, reports);
    // A spool that holds launches already is not written again.
    let again = run_limited(
        Command::new(artefacts().join("clrace")).args(["run", "--spool", spool.to_str().unwrap(), "--"]).arg(&host),
        Duration::from_secs(60),
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again.stderr));
    assert!(text(&again.stderr).contains("holds a spool's launches already"));
    let both = Command::new(artefacts().join("clrace"))
        .args(["run", "--before", "--spool", spool.to_str().unwrap(), "--"])
        .arg(&host)
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "--before checks inline: it takes no spool");
}

/// An application that crashes after its launches: `clrace run` still checks what it spooled,
/// says it crashed, and leaves with the crash's status.
#[test]
fn the_spool_of_an_application_that_crashes_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "spool");
    let reports = dir.path().join("reports.json");
    let out = run_limited(
        Command::new(artefacts().join("clrace"))
            .args(["run", "--format", "json", "--output"])
            .arg(&reports)
            .arg("--")
            .arg(&host)
            .args(["abort", "20"]),
        Duration::from_secs(120),
    );
    assert_eq!(out.status.code(), Some(128 + 6), "killed by SIGABRT: {}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the application crashed: killed by signal 6 (SIGABRT)"),
        "{}",
        text(&out.stderr)
    );
    let reports: Vec<Value> =
        std::fs::read_to_string(&reports).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary = reports.iter().find(|r| r["kind"] == "layer-summary").expect("a closing summary");
    assert_eq!(summary["launches_checked"], 20, "every launch made before the crash: {summary}");
    let notes: Vec<&str> =
        reports.iter().filter(|r| r["kind"] == "note").filter_map(|r| r["message"].as_str()).collect();
    assert!(notes.iter().any(|n| n.contains("layer.json")), "the missing summary is named: {notes:?}");
}
