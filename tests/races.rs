//! Golden tests of the race detector: every launch file of `tests/races` runs through
//! `clrace check --format json`, and its report must match
//! - the `# expect:` lines written by hand in the launch file (the intent: which pairs of lines
//!   race, where, how), and
//! - the golden report `NAME.expected` (the whole normalised JSON Lines report: only the source
//!   file's directory is normalised away). `CLRACE_BLESS=1 cargo test --test races` rewrites the
//!   golden files; review the diff before committing.
//!
//! Each entry also runs with 1 and 3 worker threads, and the reports must be identical (only the
//! same races, for kernels marked `# clrace-test: order-dependent`, whose control flow depends on
//! the order of atomics across work-groups).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn races_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("races")
}

/// Runs `clrace check --format json` on one launch file; returns the exit status and stderr.
fn check(sim: &Path, threads: usize) -> (i32, String) {
    check_with(sim, threads, &[])
}

/// [`check`] with more options.
fn check_with(sim: &Path, threads: usize, options: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--format", "json", "--threads", &threads.to_string()])
        .args(options)
        .arg(sim)
        .current_dir(races_dir())
        .output()
        .expect("clrace runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The report with each `file` reduced to its name, one JSON object per line.
fn normalise(report: &str) -> String {
    let mut out = String::new();
    for line in report.lines() {
        let mut value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        strip_dirs(&mut value);
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

fn strip_dirs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "file"
                    && let Value::String(s) = v
                {
                    *s = Path::new(s.as_str()).file_name().map_or_else(String::new, |n| n.to_string_lossy().into());
                } else {
                    strip_dirs(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_dirs),
        _ => {}
    }
}

/// A report line reduced to what `# expect:` states.
fn expectation_of(object: &Value) -> Option<String> {
    let s = |k: &str| object[k].as_str().unwrap_or("?").to_string();
    match object["kind"].as_str()? {
        "race" => {
            let mut lines: Vec<u64> =
                object["accesses"].as_array()?.iter().filter_map(|a| a["line"].as_u64()).collect();
            lines.sort();
            let uniform = if object["uniform"].as_bool()? { " uniform" } else { "" };
            Some(format!(
                "race {} {} {} {} {} {}{uniform}",
                s("race_type"),
                s("address_space"),
                s("buffer"),
                lines[0],
                lines[1],
                s("scope")
            ))
        }
        "out-of-bounds" => Some(format!("out-of-bounds {} {}", s("buffer"), object["line"])),
        "barrier-divergence" => Some(format!("barrier-divergence {}", object["line"])),
        "deadlock" => Some(format!("deadlock {}", object["line"])),
        _ => None,
    }
}

/// Counts of expectation lines.
fn tally(lines: impl Iterator<Item = String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in lines {
        *counts.entry(line).or_insert(0) += 1;
    }
    counts
}

fn verify(name: &str) -> Vec<String> {
    let dir = races_dir();
    let sim = dir.join(format!("{name}.sim"));
    let text = std::fs::read_to_string(&sim).expect("launch file");
    let mut problems = Vec::new();

    let (status, report) = check(&sim, 1);
    let objects: Vec<Value> = report.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    if !objects.iter().any(|o| o["kind"] == "summary") {
        problems.push(format!("no summary line (status {status}):\n{report}"));
        return problems;
    }

    // 1. The hand-written expectations.
    let expected = tally(
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("# expect:"))
            .map(str::trim)
            .filter(|l| *l != "none")
            .map(String::from),
    );
    let got = tally(objects.iter().filter_map(expectation_of));
    // `any` in an expectation accepts either scope.
    let mut expected_resolved = BTreeMap::new();
    for (line, n) in expected {
        let resolved = match line.strip_suffix(" any").or_else(|| line.strip_suffix(" any uniform")) {
            Some(stem) => ["intra-group", "inter-group"]
                .iter()
                .map(|scope| format!("{stem} {scope}{}", if line.ends_with("uniform") { " uniform" } else { "" }))
                .find(|candidate| got.contains_key(candidate))
                .unwrap_or(line),
            None => line,
        };
        *expected_resolved.entry(resolved).or_insert(0) += n;
    }
    if expected_resolved != got {
        problems.push(format!("report differs from `# expect:`\n  expected {expected_resolved:?}\n  got      {got:?}"));
    }
    let want_status = if got.values().sum::<usize>() > 0 { 1 } else { 0 };

    if status != want_status {
        problems.push(format!("exit status {status}, expected {want_status}"));
    }

    // 2. The golden report.
    let normalised = normalise(&report);
    let golden = dir.join(format!("{name}.expected"));
    if std::env::var_os("CLRACE_BLESS").is_some() {
        std::fs::write(&golden, &normalised).expect("write golden report");
    } else {
        match std::fs::read_to_string(&golden) {
            Ok(want) if want == normalised => {}
            Ok(want) => {
                problems.push(format!("report differs from {name}.expected\n--- expected\n{want}--- got\n{normalised}"))
            }
            Err(_) => problems.push(format!("no golden report {name}.expected (bless with CLRACE_BLESS=1)")),
        }
    }

    // 3. The same report with several worker threads. Where the kernel's control flow depends on
    //    the order of atomics (`# clrace-test: order-dependent`), only the same races.
    let (_, parallel) = check(&sim, 3);
    if text.contains("# clrace-test: order-dependent") {
        let objects: Vec<Value> = parallel.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let again = tally(objects.iter().filter_map(expectation_of));
        if again != expected_resolved {
            problems.push(format!("with 3 threads the races differ: {again:?}"));
        }
    } else if normalise(&parallel) != normalised {
        problems.push(format!("report with 3 threads differs:\n{}", normalise(&parallel)));
    }

    // 4. The same report from code specialised to the launch's arguments, whatever its size
    //    (the corpus's launches are below the size that `--specialise large` takes).
    let (special_status, special) = check_with(&sim, 1, &["--specialise", "always"]);
    if special_status != status || normalise(&special) != normalised {
        problems.push(format!("report with --specialise always differs:\n{}", normalise(&special)));
    }
    problems
}

#[test]
fn golden_reports() {
    let mut names: Vec<String> = std::fs::read_dir(races_dir())
        .expect("tests/races")
        .filter_map(|e| {
            let path = e.ok()?.path();
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            (path.extension()? == "sim").then_some(stem)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 60, "the race corpus should hold at least 60 kernels, it has {}", names.len());
    let racy = names.iter().filter(|n| !n.ends_with("_ok")).count();
    assert!(racy >= 30, "at least 30 racy kernels, found {racy}");
    let failures: Vec<String> =
        names.iter().flat_map(|name| verify(name).into_iter().map(move |p| format!("{name}: {p}"))).collect();
    assert!(failures.is_empty(), "{} problem(s):\n\n{}", failures.len(), failures.join("\n\n"));
}
