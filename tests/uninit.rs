//! Check 9, uninitialised values: golden reports of `tests/checks/uninit` (each failing kernel
//! with a clean twin `*_ok`, at 1 and 3 worker threads, `CLRACE_BLESS=1` rewrites them), the
//! check off by default, the text, SARIF and suppression forms, the same kinds of kernels in
//! the reference tool's format (`tests/oclgrind-format/uninit*`, run by `tests/oclgrind_suite.rs`)
//! and the layer's report through pocl (`CLRACE_CHECK_UNINITIALIZED=1`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{artefacts, c_host, check_json, findings, golden_reports, run_limited, text};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/checks/uninit")
}

/// `clrace check ARGS SIM` in `tests/checks/uninit`: exit status, stdout, stderr.
fn run(sim: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .arg("check")
        .args(args)
        .arg(sim)
        .current_dir(dir())
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn json(sim: &str, args: &[&str]) -> (i32, Vec<Value>) {
    let (status, values, _) = check_json(&dir(), sim, args);
    (status, values)
}

#[test]
fn golden_reports_and_clean_twins() {
    golden_reports(&dir(), &["--check-uninitialized"], |name, found| {
        let other = !name.ends_with("_ok") && found.iter().any(|f| f["kind"] != "uninitialized");
        other.then(|| format!("{name}: findings of other kinds: {found:?}"))
    });
}

#[test]
fn each_use_is_named_with_where_the_value_was_read() {
    let one = |sim: &str| {
        let (_, values) = json(sim, &["--check-uninitialized"]);
        let found = findings(&values).into_iter().cloned().collect::<Vec<_>>();
        assert_eq!(found.len(), 1, "{sim}: {found:?}");
        found.into_iter().next().unwrap()
    };
    let fields = |f: &Value| ["use", "address_space", "buffer"].map(|k| f[k].as_str().unwrap_or("").to_string());
    assert_eq!(fields(&one("uninit_address.sim")), ["address", "private", "private memory"]);
    assert_eq!(fields(&one("uninit_branch.sim")), ["branch", "local", "uninit_branch.n"]);
    assert_eq!(fields(&one("uninit_store.sim")), ["store", "global", "in"]);
    assert_eq!(fields(&one("uninit_vector.sim")), ["store", "private", "undefined value"]);
    let copy = one("uninit_copy.sim");
    assert_eq!(fields(&copy), ["store", "local", "uninit_copy.src"]);
    // Work-items 8..15 store what nothing wrote: the first of them, and all eight counted.
    assert_eq!((copy["global_id"].clone(), copy["count"].clone()), (serde_json::json!([8, 0, 0]), 8.into()));
    assert_eq!(copy["line"], 15);
}

#[test]
fn the_check_is_off_unless_asked_for() {
    for sim in ["uninit_address.sim", "uninit_store.sim", "uninit_copy.sim"] {
        let (status, values) = json(sim, &[]);
        assert_eq!((status, findings(&values).len()), (0, 0), "{sim}: {values:?}");
    }
}

#[test]
fn text_sarif_and_suppressions() {
    let (status, _, stderr) = run("uninit_branch.sim", &["--check-uninitialized"]);
    assert_eq!(status, 1);
    assert!(
        stderr.contains("Uninitialized value in a branch condition (read from local memory 'uninit_branch.n'"),
        "{stderr}"
    );
    assert!(stderr.contains("uninit_branch.cl:9"), "{stderr}");
    assert!(stderr.contains("4 uninitialized value(s) used"), "{stderr}");
    let (_, stdout, _) = run("uninit_address.sim", &["--check-uninitialized", "--format", "sarif"]);
    let log: Value = serde_json::from_str(&stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{stdout}");
    assert_eq!(results[0]["ruleId"], "uninitialized");
    assert_eq!(results[0]["level"], "error");
    assert!(results[0]["message"]["text"].as_str().unwrap().contains("used as an address"), "{stdout}");
    let rules = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(rules.path(), "uninitialized:uninit_store.cl\n").unwrap();
    let rules = rules.path().to_str().unwrap();
    let (status, values) = json("uninit_store.sim", &["--check-uninitialized", "--suppressions", rules]);
    assert_eq!((status, findings(&values).len()), (0, 0), "{values:?}");
}

fn host() -> &'static Path {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, host) = HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = c_host(dir.path(), "uninit");
        (dir, host)
    });
    host
}

/// The host run with `mode` under the layer with the check on: its JSON reports, after checking
/// that it printed and exited as it does alone.
fn layer_reports(mode: &str) -> Vec<Value> {
    let limit = Duration::from_secs(120);
    let plain = run_limited(Command::new(host()).arg(mode), limit);
    assert!(plain.status.success(), "{mode}: {}", text(&plain.stderr));
    let file = tempfile::NamedTempFile::new().unwrap();
    let layered = run_limited(
        Command::new(host())
            .arg(mode)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_CHECK_UNINITIALIZED", "1")
            .env("CLRACE_FORMAT", "json")
            .env("CLRACE_OUTPUT", file.path()),
        limit,
    );
    assert_eq!(layered.status.code(), Some(0), "{mode}: {}", text(&layered.stderr));
    assert_eq!(text(&layered.stdout), text(&plain.stdout), "{mode}: the application printed otherwise");
    let reports = std::fs::read_to_string(file.path()).unwrap();
    reports.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn the_layer_reports_an_uninitialized_store_and_not_its_clean_twin() {
    let reports = layer_reports("uninit");
    let found: Vec<&Value> = reports.iter().filter(|r| r["kind"] == "uninitialized").collect();
    assert_eq!(found.len(), 1, "{reports:?}");
    let fields = ["use", "address_space", "line", "count"].map(|k| found[0][k].to_string());
    assert_eq!(fields, ["\"store\"", "\"local\"", "8", "16"], "{}", found[0]);
    let summary = reports.iter().find(|r| r["kind"] == "layer-summary").expect("a closing summary");
    assert_eq!(summary["uninitialized"], 1);
    let clean = layer_reports("clean");
    let other: Vec<&Value> = clean
        .iter()
        .filter(|r| !["summary", "layer-summary", "note"].contains(&r["kind"].as_str().unwrap_or("")))
        .collect();
    assert!(other.is_empty(), "{other:?}");
}
