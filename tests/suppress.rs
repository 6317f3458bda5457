//! Suppression files and the print limit, in `clrace check` and in the layer (`clrace run`):
//! what is silenced is counted in the summaries, never dropped; a malformed rule is an error
//! naming its line; `--print-suppressions` lists every rule with its matches.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{artefacts, run_limited, text};

fn races_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("races")
}

/// Writes a suppression file with these lines.
fn rules(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

/// Runs `clrace check` on a launch file of `tests/races`; returns status, stdout and stderr.
fn check(sim: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .arg("check")
        .args(args)
        .arg(sim)
        .current_dir(races_dir())
        .output()
        .expect("clrace runs");
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn json_lines(stderr: &str) -> Vec<Value> {
    stderr.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

fn of_kind<'a>(reports: &'a [Value], kind: &str) -> Vec<&'a Value> {
    reports.iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn a_suppressed_race_is_counted_and_the_check_passes() {
    let file = rules("# known, tracked elsewhere\nrace:uniform_*\n");
    let path = file.path().to_str().unwrap();
    let (status, stdout, stderr) = check("uniform_then_nonuniform.sim", &["--format", "json", "--suppressions", path]);
    assert_eq!(status, 0, "{stderr}");
    let reports = json_lines(&stderr);
    assert!(of_kind(&reports, "race").is_empty(), "{stderr}");
    let summary = of_kind(&reports, "summary")[0];
    assert_eq!((summary["races"].as_u64(), summary["suppressed"].as_u64()), (Some(0), Some(2)), "{summary}");
    assert!(!stdout.is_empty(), "the buffer dumps are still printed");
}

#[test]
fn a_file_line_rule_matches_either_access_of_a_race() {
    // double_buffer.cl races between the store at line 12 and the loads at lines 10 and 11.
    for (rule, left) in [
        ("race:double_buffer.cl:10", vec![vec![11, 12]]),
        ("race:double_buffer.cl:11", vec![vec![10, 12]]),
        ("race:double_buffer.cl:12", vec![]),
        ("race:*.cl:1?", vec![]),
        ("race:double_buffer.cl", vec![]),
    ] {
        let file = rules(&format!("{rule}\n"));
        let path = file.path().to_str().unwrap();
        let (status, _, stderr) = check("double_buffer.sim", &["--format", "json", "--suppressions", path]);
        let reports = json_lines(&stderr);
        let summary = of_kind(&reports, "summary")[0];
        let lines: Vec<Vec<u64>> = of_kind(&reports, "race")
            .iter()
            .map(|r| {
                // The two accesses' lines, whichever ran first.
                let mut pair: Vec<u64> =
                    r["accesses"].as_array().unwrap().iter().map(|a| a["line"].as_u64().unwrap()).collect();
                pair.sort_unstable();
                pair
            })
            .collect();
        assert_eq!(lines, left, "{rule}: the races left");
        assert_eq!(status, if left.is_empty() { 0 } else { 1 }, "{rule}: {stderr}");
        assert_eq!(summary["races"].as_u64(), Some(left.len() as u64), "{rule}");
        assert_eq!(summary["suppressed"].as_u64(), Some(2 - left.len() as u64), "{rule}");
    }
}

#[test]
fn rules_of_another_kind_or_name_suppress_nothing() {
    let file = rules("out-of-bounds:double_buffer\nrace:other_kernel\nrace:double_buffer.cl:13\n");
    let path = file.path().to_str().unwrap();
    let (status, _, stderr) = check("double_buffer.sim", &["--suppressions", path, "--print-suppressions"]);
    assert_eq!(status, 1);
    assert!(stderr.contains("2 race(s)") && stderr.contains("clrace: 3 suppression rule(s):"), "{stderr}");
    assert_eq!(stderr.matches("(matched nothing)").count(), 3, "{stderr}");
    assert!(!stderr.contains("suppressed;") && !stderr.contains("finding(s) suppressed"), "{stderr}");
}

#[test]
fn print_suppressions_lists_each_rule_with_its_matches() {
    let file = rules("race:double_buffer\nkernel:nothing_like_it\n");
    let path = file.path().to_str().unwrap();
    let (status, _, stderr) =
        check("double_buffer.sim", &["--format", "json", "--suppressions", path, "--print-suppressions"]);
    assert_eq!(status, 0);
    let reports = json_lines(&stderr);
    let listing = of_kind(&reports, "suppressions")[0];
    assert_eq!(
        listing["rules"],
        serde_json::json!([{"line": 1, "rule": "race:double_buffer", "matched": 2},
                           {"line": 2, "rule": "kernel:nothing_like_it", "matched": 0}])
    );
    let (_, _, text_report) = check("double_buffer.sim", &["--suppressions", path, "--print-suppressions"]);
    assert!(text_report.contains("nothing found but what was suppressed; 2 finding(s) suppressed"), "{text_report}");
    assert!(text_report.contains("2 race:double_buffer (line 1)\n"), "{text_report}");
    assert!(text_report.contains("0 kernel:nothing_like_it (line 2) (matched nothing)"), "{text_report}");
}

#[test]
fn a_kernel_rule_skips_the_run_and_says_so() {
    let file = rules("kernel:oob_*\n");
    let path = file.path().to_str().unwrap();
    let (status, stdout, stderr) = check("oob_loop.sim", &["--suppressions", path]);
    assert_eq!(status, 0);
    assert!(stdout.is_empty(), "nothing ran, nothing is dumped: {stdout}");
    assert_eq!(stderr, "clrace: kernel 'oob_loop' is not checked: suppressed by rule kernel:oob_* (line 1)\n");
}

#[test]
fn a_kernel_rule_with_sarif_writes_an_empty_log() {
    let file = rules("kernel:oob_loop\n");
    let (status, stdout, stderr) =
        check("oob_loop.sim", &["--format", "sarif", "--suppressions", file.path().to_str().unwrap()]);
    assert_eq!(status, 0);
    let log: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not a log ({e}): {stdout}"));
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    assert!(stderr.contains("kernel 'oob_loop' is not checked"), "{stderr}");
}

#[test]
fn a_malformed_rule_is_a_usage_error_naming_its_line() {
    for (text, error) in [
        ("race:a\n\nrace b\n", "line 3: 'race b' is not KIND:PATTERN"),
        ("# c\nrcae:oob_loop\n", "line 2: unknown kind 'rcae'"),
        ("out-of-bounds:\n", "line 1: rule 'out-of-bounds:' has no pattern"),
    ] {
        let file = rules(text);
        let path = file.path().to_str().unwrap();
        let (status, stdout, stderr) = check("oob_loop.sim", &["--suppressions", path]);
        assert_eq!(status, 2, "{text:?}");
        assert!(stdout.is_empty());
        assert!(stderr.starts_with(&format!("clrace: suppression file {path}: {error}")), "{stderr}");
    }
    let (status, _, stderr) = check("oob_loop.sim", &["--suppressions", "/nonexistent/rules.supp"]);
    assert_eq!(status, 2);
    assert!(stderr.contains("cannot read suppression file /nonexistent/rules.supp"), "{stderr}");
}

#[test]
fn the_print_limit_shows_the_first_findings_and_counts_the_rest() {
    let (status, _, stderr) = check("double_buffer.sim", &["--format", "json", "--print-limit", "1"]);
    assert_eq!(status, 1);
    let reports = json_lines(&stderr);
    assert_eq!(of_kind(&reports, "race").len(), 1);
    let summary = of_kind(&reports, "summary")[0];
    assert_eq!((summary["races"].as_u64(), summary["not_printed"].as_u64()), (Some(2), Some(1)), "{summary}");
    let (_, _, all) = check("double_buffer.sim", &["--format", "json", "--print-limit", "0"]);
    let reports = json_lines(&all);
    assert_eq!(of_kind(&reports, "race").len(), 2, "0 is no limit");
    assert!(of_kind(&reports, "summary")[0].get("not_printed").is_none());
    let (_, _, text_report) = check("double_buffer.sim", &["--print-limit", "1"]);
    assert_eq!(text_report.matches("data race").count(), 1, "{text_report}");
    assert!(text_report.contains("2 race(s)") && text_report.contains("; 1 finding(s) not printed (--print-limit 1)"));
}

/// `clrace run --format json` on the racy_reduction example with `args` and `env`; returns the
/// exit status and the reports.
fn run_layer(args: &[&str], env: &[(&str, &str)]) -> (i32, Vec<Value>) {
    let reports = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(artefacts().join("clrace"));
    command.args(["run", "--format", "json", "--output"]).arg(reports.path()).args(args).arg("--");
    command.arg(artefacts().join("examples").join("racy_reduction")).envs(env.iter().copied());
    let out = run_limited(&mut command, Duration::from_secs(120));
    let text = std::fs::read_to_string(reports.path()).unwrap();
    (out.status.code().unwrap_or(-1), json_lines(&text))
}

#[test]
fn the_layer_counts_suppressed_findings_and_lists_the_rules() {
    // The layer names a program after its kernels and a hash of its text: a relative file
    // pattern with a wildcard matches it by suffix, whatever the hash.
    let file = rules("race:racy_reduce-*.cl\nkernel:never_launched\n");
    let path = file.path().to_str().unwrap();
    let (status, reports) = run_layer(&["--suppressions", path, "--print-suppressions"], &[]);
    assert_eq!(status, 0, "nothing is left to fail on: {reports:?}");
    assert!(of_kind(&reports, "race").is_empty());
    let summary = of_kind(&reports, "layer-summary")[0];
    assert_eq!((summary["races"].as_u64(), summary["suppressed"].as_u64()), (Some(0), Some(1)), "{summary}");
    let listing = of_kind(&reports, "suppressions")[0];
    assert_eq!(listing["rules"][0]["matched"], 1);
    assert_eq!(listing["rules"][1]["matched"], 0);
}

#[test]
fn a_kernel_rule_leaves_the_kernel_unchecked_in_the_layer() {
    let file = rules("kernel:racy_*\n");
    let (status, reports) = run_layer(&["--suppressions", file.path().to_str().unwrap()], &[]);
    assert_eq!(status, 0);
    let summary = of_kind(&reports, "layer-summary")[0];
    assert_eq!(summary["launches_checked"], 0, "{summary}");
}

#[test]
fn a_malformed_rule_is_a_note_in_the_layer_and_a_usage_error_in_run() {
    let file = rules("race:ok\nbad rule\n");
    let path = file.path().to_str().unwrap();
    let (status, reports) = run_layer(&[], &[("CLRACE_SUPPRESSIONS", path)]);
    assert_eq!(status, 1, "nothing is suppressed, the race fails the run");
    let notes: Vec<&str> = of_kind(&reports, "note").iter().map(|n| n["message"].as_str().unwrap()).collect();
    let expected = format!(
        "CLRACE_SUPPRESSIONS: suppression file {path}: line 2: 'bad rule' is not KIND:PATTERN; nothing is suppressed"
    );
    assert!(notes.contains(&expected.as_str()), "{notes:?}");
    assert_eq!(of_kind(&reports, "race").len(), 1);
    let out =
        Command::new(artefacts().join("clrace")).args(["run", "--suppressions", path, "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("line 2: 'bad rule' is not KIND:PATTERN"), "{}", text(&out.stderr));
}

/// `clrace run --format json` on the `findings` C host (three races) with `args`; returns the
/// exit status and the reports.
fn run_findings(args: &[&str], env: &[(&str, &str)]) -> (i32, Vec<Value>) {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, host) = HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = common::c_host(dir.path(), "findings");
        (dir, host)
    });
    let reports = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(artefacts().join("clrace"));
    command.args(["run", "--format", "json", "--output"]).arg(reports.path()).args(args).arg("--").arg(host);
    command.envs(env.iter().copied());
    let out = run_limited(&mut command, Duration::from_secs(120));
    assert_eq!(text(&out.stdout), "out[3] = 7\n");
    let text = std::fs::read_to_string(reports.path()).unwrap();
    (out.status.code().unwrap_or(-1), json_lines(&text))
}

#[test]
fn the_layer_print_limit_counts_what_it_leaves_out() {
    let (status, reports) = run_findings(&["--print-limit", "1"], &[]);
    assert_eq!(status, 1);
    assert_eq!(of_kind(&reports, "race").len(), 1, "{reports:?}");
    let launch = of_kind(&reports, "summary")[0];
    assert_eq!((launch["races"].as_u64(), launch["not_printed"].as_u64()), (Some(3), Some(2)), "{launch}");
    let summary = of_kind(&reports, "layer-summary")[0];
    assert_eq!((summary["races"].as_u64(), summary["not_printed"].as_u64()), (Some(3), Some(2)), "{summary}");
    let (_, reports) = run_findings(&[], &[("CLRACE_PRINT_LIMIT", "2")]);
    assert_eq!(of_kind(&reports, "race").len(), 2);
    let (_, reports) = run_findings(&["--print-limit", "0"], &[]);
    assert_eq!(of_kind(&reports, "race").len(), 3, "0 is no limit");
    assert!(of_kind(&reports, "layer-summary")[0].get("not_printed").is_none());
}

#[test]
fn the_layer_suppresses_by_file_and_line() {
    let file = rules("race:three_races-*.cl:5\n");
    let (status, reports) = run_findings(&["--suppressions", file.path().to_str().unwrap()], &[]);
    assert_eq!(status, 1, "two races are left");
    let lines: Vec<u64> =
        of_kind(&reports, "race").iter().map(|r| r["accesses"][0]["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [4, 6]);
    let summary = of_kind(&reports, "layer-summary")[0];
    assert_eq!((summary["races"].as_u64(), summary["suppressed"].as_u64()), (Some(2), Some(1)), "{summary}");
}
