//! Programs the layer could not see, end to end on each driver (pocl, and Mesa's rusticl where
//! it is installed): a program created from a binary the application cached is checked as the
//! source it was built from; `CLRACE_SOURCE_OUT` writes each program under the name reports
//! cite, and SARIF carries its text; a kernel declared through a macro names its program; a note
//! about a check that did not complete names the program.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

mod common;

use common::{Driver, artefacts, c_host, drivers, run_limited, text};

fn host() -> &'static Path {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, host) = HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = c_host(dir.path(), "binary");
        (dir, host)
    });
    host
}

/// Runs the `binary` host with `args` under the layer on `driver`, with reports to a file in
/// `format`, the working directory `cwd` and `env`; returns its output and the report file's text.
fn layered(driver: Driver, cwd: &Path, args: &[&str], format: &str, env: &[(&str, &str)]) -> (Output, String) {
    let reports = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(host());
    command
        .args(args)
        .current_dir(cwd)
        .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
        .env("CLRACE_FORMAT", format)
        .env("CLRACE_OUTPUT", reports.path());
    driver.select(&mut command);
    for (k, v) in env {
        command.env(k, v);
    }
    let output = run_limited(&mut command, Duration::from_secs(120));
    assert_eq!(output.status.code(), Some(0), "{} {args:?}: {}", driver.name(), text(&output.stderr));
    (output, std::fs::read_to_string(reports.path()).unwrap())
}

fn json_lines(reports: &str) -> Vec<Value> {
    reports.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect()
}

fn races(reports: &[Value]) -> Vec<&Value> {
    reports.iter().filter(|r| r["kind"] == "race").collect()
}

fn notes(reports: &[Value]) -> Vec<&str> {
    reports.iter().filter(|r| r["kind"] == "note").filter_map(|r| r["message"].as_str()).collect()
}

/// The file a race's first access cites.
fn cited_file(race: &Value) -> &str {
    race["accesses"][0]["file"].as_str().unwrap_or_default()
}

#[test]
fn a_program_from_a_cached_binary_is_checked_as_the_source_it_was_built_from() {
    for driver in drivers() {
        let work = tempfile::tempdir().unwrap();
        let cache = work.path().join("cache");
        let binary = work.path().join("racy.bin");
        let binary = binary.to_str().unwrap();
        let env = [("CLRACE_CACHE_DIR", cache.to_str().unwrap())];
        let (_, first) = layered(driver, work.path(), &["source", binary], "json", &env);
        let first = json_lines(&first);
        assert_eq!(races(&first).len(), 1, "{}: the first run, from source: {first:?}", driver.name());
        let (_, second) = layered(driver, work.path(), &["binary", binary], "json", &env);
        let second = json_lines(&second);
        let found = races(&second);
        assert_eq!(found.len(), 1, "{}: the second run, from the binary: {second:?}", driver.name());
        assert_eq!(cited_file(found[0]), cited_file(races(&first)[0]), "{}: the same program name", driver.name());
        assert!(found[0]["accesses"][0]["source"].as_str().unwrap_or("").contains("a[0] ="), "{}", found[0]);

        // A binary clrace never saw built is named, with what to do.
        let other = work.path().join("other-cache");
        let env = [("CLRACE_CACHE_DIR", other.to_str().unwrap())];
        let (_, unknown) = layered(driver, work.path(), &["binary", binary], "json", &env);
        let unknown = json_lines(&unknown);
        assert!(races(&unknown).is_empty(), "{}: {unknown:?}", driver.name());
        let said = notes(&unknown).join("\n");
        assert!(said.contains("device binary") && said.contains("PYOPENCL_NO_CACHE=1"), "{}: {said}", driver.name());
    }
}

#[test]
fn a_kernel_declared_through_a_macro_names_its_program() {
    for driver in drivers() {
        let work = tempfile::tempdir().unwrap();
        let env = [("CLRACE_CACHE_DIR", work.path().to_str().unwrap())];
        let (_, reports) = layered(driver, work.path(), &["macro"], "json", &env);
        let reports = json_lines(&reports);
        let found = races(&reports);
        assert_eq!(found.len(), 1, "{}: {reports:?}", driver.name());
        let file = cited_file(found[0]);
        assert!(file.starts_with("racy-") && file.ends_with(".cl"), "{}: {file}", driver.name());
    }
}

#[test]
fn source_out_writes_each_program_under_the_name_reports_cite() {
    for driver in drivers() {
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("programs");
        let env = [("CLRACE_CACHE_DIR", work.path().to_str().unwrap()), ("CLRACE_SOURCE_OUT", out.to_str().unwrap())];
        let (_, reports) = layered(driver, work.path(), &["macro"], "json", &env);
        let reports = json_lines(&reports);
        let found = races(&reports);
        assert_eq!(found.len(), 1, "{}: {reports:?}", driver.name());
        let access = &found[0]["accesses"][0];
        let written = std::fs::read_to_string(out.join(cited_file(found[0])))
            .unwrap_or_else(|e| panic!("{}: {} in {}: {e}", driver.name(), cited_file(found[0]), out.display()));
        let line = written.lines().nth(access["line"].as_u64().unwrap() as usize - 1).unwrap();
        assert_eq!(line.trim(), access["source"].as_str().unwrap(), "{}: the cited line is in the file", driver.name());
    }
}

#[test]
fn sarif_carries_the_text_of_the_programs_its_results_cite() {
    for driver in drivers() {
        let work = tempfile::tempdir().unwrap();
        let env = [("CLRACE_CACHE_DIR", work.path().to_str().unwrap())];
        let (_, log) = layered(driver, work.path(), &["macro"], "sarif", &env);
        let log: Value =
            serde_json::from_str(&log).unwrap_or_else(|e| panic!("{}: not JSON ({e}): {log}", driver.name()));
        let run = &log["runs"][0];
        let uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().unwrap();
        let artifacts = run["artifacts"].as_array().unwrap_or_else(|| panic!("{}: no artifacts: {run}", driver.name()));
        let artifact = artifacts
            .iter()
            .find(|a| a["location"]["uri"] == uri)
            .unwrap_or_else(|| panic!("{}: no artifact for {uri}: {artifacts:?}", driver.name()));
        let contents = artifact["contents"]["text"].as_str().unwrap();
        assert!(contents.contains("#define KERNEL __kernel") && contents.contains("a[0] ="), "{contents}");
    }
}

#[test]
fn a_note_about_a_check_that_did_not_complete_names_the_program() {
    for driver in drivers() {
        let work = tempfile::tempdir().unwrap();
        let env = [("CLRACE_CACHE_DIR", work.path().to_str().unwrap()), ("CLRACE_BUDGET", "50")];
        let (_, reports) = layered(driver, work.path(), &["loop"], "text", &env);
        let note = reports
            .lines()
            .find(|l| l.contains("kernel 'run'") && l.contains("could not be checked"))
            .unwrap_or_else(|| panic!("{}: no note: {reports}", driver.name()));
        assert!(
            note.contains("(run-") && note.contains(".cl)"),
            "{}: the note names the program: {note}",
            driver.name()
        );
        let cwd = work.path().canonicalize().unwrap();
        assert!(!reports.contains(cwd.to_str().unwrap()), "{}: a path that never existed: {reports}", driver.name());
    }
}
