//! SARIF output: `clrace check --format sarif` and the layer's `CLRACE_FORMAT=sarif` log, against
//! golden logs in `tests/sarif/` (the tool's version and the directories of file URIs normalised
//! away; `CLRACE_BLESS=1 cargo test --test sarif` rewrites them), and through Microsoft's SARIF
//! validator (`@microsoft/sarif-multitool`, installed by `ci/setup`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{artefacts, run_limited, text};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The launch files the goldens are made from: (golden name, directory, launch file).
const CASES: [(&str, &str, &str); 7] = [
    ("read-write", "tests/races", "double_buffer.sim"),
    ("write-write", "tests/races", "uniform_then_nonuniform.sim"),
    ("out-of-bounds", "tests/races", "oob_loop.sim"),
    ("out-of-bounds-before", "tests/races", "oob_before_buffer.sim"),
    ("image-out-of-bounds", "examples", "image_edge.sim"),
    ("barrier-divergence", "tests/races", "barrier_divergence.sim"),
    ("clean", "tests/races", "barrier_divergence_ok.sim"),
];

/// Runs `clrace check --format sarif` in `dir`; returns the exit status, stdout and stderr.
fn check(dir: &str, sim: &str, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--format", "sarif"])
        .args(extra)
        .arg(sim)
        .current_dir(root().join(dir))
        .output()
        .expect("clrace runs");
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The log of one case, written with `--output`.
fn log_of(dir: &str, sim: &str) -> (i32, Value) {
    let file = tempfile::NamedTempFile::new().unwrap();
    let (status, stdout, stderr) = check(dir, sim, &["--output", file.path().to_str().unwrap()]);
    assert!(stdout.is_empty(), "{sim}: nothing on stdout with --output, got {stdout}");
    let log = std::fs::read_to_string(file.path()).unwrap();
    let value = serde_json::from_str(&log).unwrap_or_else(|e| panic!("{sim}: not JSON ({e}): {log}\n{stderr}"));
    (status, value)
}

/// The log with the tool's version and the directories of URIs normalised away.
fn normalise(mut log: Value) -> Value {
    for run in log["runs"].as_array_mut().into_iter().flatten() {
        run["tool"]["driver"]["version"] = "VERSION".into();
        run["tool"]["driver"]["semanticVersion"] = "VERSION".into();
        strip_dirs(run);
    }
    log
}

fn strip_dirs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key == "uri" => *s = s.rsplit('/').next().unwrap_or("").to_string(),
                    _ => strip_dirs(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_dirs),
        _ => {}
    }
}

/// Compares `log` with `tests/sarif/NAME.sarif`, or writes it with `CLRACE_BLESS=1`.
fn golden(name: &str, log: Value) {
    let path = root().join("tests/sarif").join(format!("{name}.sarif"));
    let got = serde_json::to_string_pretty(&normalise(log)).unwrap() + "\n";
    if std::env::var_os("CLRACE_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("golden {}: {e}", path.display()));
    assert_eq!(got, want, "{name}: the SARIF log differs from {} (CLRACE_BLESS=1 rewrites it)", path.display());
}

#[test]
fn each_finding_kind_matches_its_golden_log() {
    for (name, dir, sim) in CASES {
        let (status, log) = log_of(dir, sim);
        assert_eq!(status, if name == "clean" { 0 } else { 1 }, "{sim}: exit status");
        golden(name, log);
    }
}

#[test]
fn results_carry_rules_levels_locations_and_properties() {
    let (_, log) = log_of("tests/races", "uniform_then_nonuniform.sim");
    let run = &log["runs"][0];
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(run["tool"]["driver"]["name"], "clrace");
    let rules: Vec<&str> =
        run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        rules,
        ["race/read-write", "race/write-write", "out-of-bounds", "image-out-of-bounds", "barrier-divergence"]
    );
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let mut levels: Vec<(bool, &str)> =
        results.iter().map(|r| (r["properties"]["uniform"].as_bool().unwrap(), r["level"].as_str().unwrap())).collect();
    levels.sort_unstable();
    assert_eq!(levels, [(false, "error"), (true, "warning")], "the uniform write is a warning");
    for r in results {
        assert_eq!(r["ruleId"], "race/write-write");
        assert_eq!(r["ruleIndex"], 1);
        assert_eq!(r["locations"].as_array().unwrap().len(), 1);
        assert_eq!(r["relatedLocations"].as_array().unwrap().len(), 1);
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().unwrap() > 0 && region["snippet"]["text"].is_string(), "{region}");
        assert_eq!(r["properties"]["buffer"], "words");
        assert_eq!(r["properties"]["work_items"].as_array().unwrap().len(), 2);
        assert_eq!(r["partialFingerprints"]["clraceFinding/v1"].as_str().unwrap().len(), 64);
    }
}

#[test]
fn fingerprints_are_the_same_whatever_the_threads() {
    let fingerprints = |threads: &str| {
        let file = tempfile::NamedTempFile::new().unwrap();
        let out = file.path().to_str().unwrap();
        let (status, _, stderr) = check("tests/races", "double_buffer.sim", &["--threads", threads, "--output", out]);
        assert_eq!(status, 1, "{stderr}");
        let log: Value = serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
        let results = log["runs"][0]["results"].as_array().unwrap().clone();
        let mut prints: Vec<String> = results
            .iter()
            .map(|r| r["partialFingerprints"]["clraceFinding/v1"].as_str().unwrap().to_string())
            .collect();
        prints.sort();
        prints
    };
    let one = fingerprints("1");
    assert_eq!(one.len(), 2);
    assert_ne!(one[0], one[1], "two races at different lines");
    assert_eq!(one, fingerprints("3"));
}

#[test]
fn without_output_the_log_is_all_of_stdout() {
    let (status, stdout, stderr) = check("tests/races", "oob_loop.sim", &[]);
    assert_eq!(status, 1);
    let log: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not the log ({e}): {stdout}"));
    assert_eq!(log["runs"][0]["results"][0]["ruleId"], "out-of-bounds");
    assert!(stderr.contains("1 out-of-bounds access(es)"), "the summary for people stays on stderr: {stderr}");
}

#[test]
fn errors_are_text_on_stderr_and_no_log_is_written() {
    let (status, stdout, stderr) = check("tests/cli", "syntax_error.sim", &[]);
    assert_eq!(status, 3);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.starts_with("clrace: ") || stderr.contains("error:"), "{stderr}");
    assert!(!stderr.contains("\"kind\""), "no JSON on stderr with SARIF: {stderr}");
}

#[test]
fn output_takes_the_reports_of_every_format() {
    for format in ["text", "json"] {
        let file = tempfile::NamedTempFile::new().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
            .args(["check", "--format", format, "--output", file.path().to_str().unwrap(), "double_buffer.sim"])
            .current_dir(root().join("tests/races"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stderr.is_empty(), "{format}: {}", text(&out.stderr));
        assert!(!out.stdout.is_empty(), "{format}: the dumps stay on stdout");
        let reports = std::fs::read_to_string(file.path()).unwrap();
        assert!(reports.contains("2 race(s)") || reports.contains("\"races\":2"), "{reports}");
    }
}

/// The layer's log of one example application, run under `clrace run --format sarif`.
fn layer_log(example: &str) -> (i32, Value) {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(artefacts().join("clrace"));
    command.args(["run", "--format", "sarif", "--output"]).arg(file.path()).arg("--");
    command.arg(artefacts().join("examples").join(example));
    let out = run_limited(&mut command, Duration::from_secs(120));
    let log = std::fs::read_to_string(file.path()).unwrap();
    let value = serde_json::from_str(&log).unwrap_or_else(|e| panic!("not JSON ({e}): {log}\n{}", text(&out.stderr)));
    (out.status.code().unwrap_or(-1), value)
}

#[test]
fn the_layer_writes_one_log_at_exit() {
    let (status, log) = layer_log("racy_reduction");
    assert_eq!(status, 1, "clrace run fails on a finding");
    assert_eq!(log["runs"].as_array().unwrap().len(), 1);
    golden("layer-racy-reduction", log);
}

/// Runs Microsoft's validator on one log; returns the errors and warnings it printed.
fn validate(log: &Path) -> Vec<String> {
    let out = Command::new("npx")
        .args(["--no-install", "@microsoft/sarif-multitool", "validate"])
        .arg(log)
        .output()
        .unwrap_or_else(|e| panic!("cannot run npx ({e}): run ci/setup, which installs node and the SARIF validator"));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("files scanned"),
        "the SARIF validator did not run (run ci/setup, which installs @microsoft/sarif-multitool): {stdout}{}",
        text(&out.stderr)
    );
    stdout.lines().filter(|l| l.contains(": error ") || l.contains(": warning ")).map(str::to_string).collect()
}

#[test]
fn the_logs_pass_the_sarif_validator() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs = Vec::new();
    for (name, case_dir, sim) in CASES {
        let (_, log) = log_of(case_dir, sim);
        logs.push((name.to_string(), log));
    }
    logs.push(("layer".to_string(), layer_log("racy_reduction").1));
    for (name, log) in logs {
        let path = dir.path().join(format!("{name}.sarif"));
        std::fs::write(&path, serde_json::to_string_pretty(&log).unwrap()).unwrap();
        let problems = validate(&path);
        assert!(problems.is_empty(), "{name}: the validator found problems:\n{}", problems.join("\n"));
    }
    // The validator is not silent on a broken log (so the test above can fail).
    let broken = dir.path().join("broken.sarif");
    std::fs::write(&broken, r#"{"version":"2.1.0","runs":[{"tool":{"driver":{}},"results":[]}]}"#).unwrap();
    assert!(!validate(&broken).is_empty(), "the validator accepts a driver without a name");
}
