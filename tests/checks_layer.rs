//! Check 10 through the layer on the real stack (the ocl-icd loader and pocl): a C host that
//! creates buffers `CL_MEM_READ_ONLY` / `CL_MEM_WRITE_ONLY` (and a read-only sub-buffer of a
//! read-write buffer) gets an `access-mode` finding for the kernel's store to, or load from,
//! them; its clean twin gets none; the application's output and status stay its own. Each test
//! runs on every driver of [`drivers`] (pocl, and rusticl where it is installed).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{Driver, artefacts, c_host, drivers, run_limited, text};

fn host() -> &'static Path {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, host) = HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = c_host(dir.path(), "access_modes");
        (dir, host)
    });
    host
}

/// The host run with `mode` under the layer (JSON reports to a file): its reports, after
/// checking that it printed and exited as it does alone.
fn reports(driver: Driver, mode: &str) -> Vec<Value> {
    let limit = Duration::from_secs(120);
    let plain = run_limited(driver.select(&mut Command::new(host())).arg(mode), limit);
    assert!(plain.status.success(), "{mode}: {}", text(&plain.stderr));
    let file = tempfile::NamedTempFile::new().unwrap();
    let layered = run_limited(
        driver
            .select(&mut Command::new(host()))
            .arg(mode)
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FORMAT", "json")
            .env("CLRACE_OUTPUT", file.path()),
        limit,
    );
    assert_eq!(layered.status.code(), Some(0), "{mode}: {}", text(&layered.stderr));
    assert_eq!(text(&layered.stdout), text(&plain.stdout), "{mode}: the application printed otherwise");
    let reports = std::fs::read_to_string(file.path()).unwrap();
    reports.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn access_modes(reports: &[Value]) -> Vec<&Value> {
    reports.iter().filter(|r| r["kind"] == "access-mode").collect()
}

fn layer_summary(reports: &[Value]) -> &Value {
    reports.iter().find(|r| r["kind"] == "layer-summary").expect("a closing summary")
}

#[test]
fn a_store_to_a_read_only_buffer_is_reported_by_the_layer() {
    for (driver, mode) in drivers().into_iter().flat_map(|d| [(d, "ro"), (d, "sub-ro")]) {
        let reports = reports(driver, mode);
        let found = access_modes(&reports);
        assert_eq!(found.len(), 1, "{driver:?} {mode}: {reports:?}");
        let f = found[0];
        let fields = ["buffer", "mode", "access", "line", "count"].map(|k| f[k].to_string());
        assert_eq!(fields, ["\"data\"", "\"read-only\"", "\"store\"", "4", "16"], "{mode}: {f}");
        assert_eq!(layer_summary(&reports)["access_modes"], 1, "{mode}");
    }
}

#[test]
fn a_load_from_a_write_only_buffer_is_reported_by_the_layer() {
    for driver in drivers() {
        let reports = reports(driver, "wo");
        let found = access_modes(&reports);
        assert_eq!(found.len(), 1, "{driver:?}: {reports:?}");
        let fields = ["buffer", "mode", "access", "line"].map(|k| found[0][k].to_string());
        assert_eq!(fields, ["\"result\"", "\"write-only\"", "\"load\"", "5"], "{driver:?}");
    }
}

#[test]
fn read_only_and_write_only_buffers_used_as_declared_report_nothing() {
    for driver in drivers() {
        let reports = reports(driver, "clean");
        let findings: Vec<&Value> = reports
            .iter()
            .filter(|r| !["summary", "layer-summary", "note"].contains(&r["kind"].as_str().unwrap_or("")))
            .collect();
        assert!(findings.is_empty(), "{driver:?}: {findings:?}");
        assert_eq!(layer_summary(&reports)["launches_checked"], 1, "{driver:?}");
    }
}
