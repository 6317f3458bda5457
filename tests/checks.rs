//! Golden tests of the memory checks that are not races: access modes (check 10: `ro`/`wo`
//! buffers), misaligned accesses (check 12, with defect 8c's misaligned atomic) and array
//! indices (check 13). Every launch file of `tests/checks` runs through `clrace check --format
//! json` with 1 and 3 worker threads (the reports must be identical) and must match its golden
//! report `NAME.expected` (`CLRACE_BLESS=1 cargo test --test checks` rewrites them). A kernel
//! named `*_ok` is the correct twin of the one without the suffix and must report nothing.
//!
//! Also here: the cap on distinct race pairs (defect 2: every pair of instructions is reported up
//! to the print limit, the summary counts the rest), and the same launch files in the reference
//! tool's format through `ci/oclgrind-suite` (`tests/checks/oclgrind`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

use common::{check_json, findings, golden_reports};

fn checks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("checks")
}

/// Runs `clrace check` with `args` on a launch file of `dir`: exit status, stdout, stderr.
fn run(dir: &Path, sim: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .arg("check")
        .args(args)
        .arg(sim)
        .current_dir(dir)
        .output()
        .expect("clrace runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// The JSON report of one launch file of `tests/checks`, one object per line.
fn report(sim: &str, threads: usize) -> (i32, Vec<Value>) {
    let (status, values, _) = check_json(&checks_dir(), sim, &["--threads", &threads.to_string()]);
    (status, values)
}

#[test]
fn golden_reports_and_clean_twins() {
    golden_reports(&checks_dir(), &[], |_, _| None);
}

/// The first finding of `kind` in the report of `sim`, which must exit 1.
fn only(sim: &str, kind: &str) -> Value {
    let (status, values) = report(sim, 2);
    assert_eq!(status, 1, "{values:?}");
    let mut of_kind = findings(&values).into_iter().filter(|v| v["kind"] == kind).cloned();
    of_kind.next().unwrap_or_else(|| panic!("no {kind} finding: {values:?}"))
}

#[test]
fn a_store_to_a_read_only_buffer_is_named_and_still_performed() {
    let f = only("access_readonly.sim", "access-mode");
    assert_eq!(
        (f["buffer"].as_str(), f["mode"].as_str(), f["access"].as_str()),
        (Some("data"), Some("read-only"), Some("store"))
    );
    assert_eq!((f["line"].as_u64(), f["count"].as_u64()), (Some(6), Some(8)), "one finding per instruction, counted");
    // The store happened (as on a device): the output read back the doubled values.
    let (_, stdout, _) = run(&checks_dir(), "access_readonly.sim", &["--format", "json"]);
    assert!(stdout.contains("result[7] = 14"), "{stdout}");
}

#[test]
fn a_load_from_a_write_only_buffer_is_named() {
    let f = only("access_writeonly.sim", "access-mode");
    assert_eq!(
        (f["buffer"].as_str(), f["mode"].as_str(), f["access"].as_str()),
        (Some("out"), Some("write-only"), Some("load"))
    );
    let (_, values) = report("access_writeonly.sim", 1);
    let summary = values.last().unwrap();
    assert_eq!((summary["access_modes"].as_u64(), summary["out_of_bounds"].as_u64()), (Some(8), Some(0)));
}

#[test]
fn text_reports_name_each_check() {
    let text = |sim| run(&checks_dir(), sim, &[]).2;
    let ro = text("access_readonly.sim");
    assert!(ro.contains("Invalid write to read-only buffer 'data': 4 byte(s) at offset 0"), "{ro}");
    assert!(ro.contains("Occurrences: 8") && ro.contains("; 8 access-mode violation(s)"), "{ro}");
    let wo = text("access_writeonly.sim");
    assert!(wo.contains("Invalid read from write-only buffer 'out'"), "{wo}");
    let mis = text("misaligned_load.sim");
    assert!(
        mis.contains("Misaligned load of size 4 at global memory: 'bytes', offset 1 is not aligned to 4 bytes"),
        "{mis}"
    );
    assert!(mis.contains("; 4 misaligned access(es)"), "{mis}");
    let array = text("array_index.sim");
    assert!(array.contains("Index 2 exceeds the static array size (2) in private memory"), "{array}");
}

#[test]
fn a_misaligned_load_is_named_and_reads_the_bytes_there() {
    let f = only("misaligned_load.sim", "misaligned");
    let fields = ["address_space", "offset", "size", "alignment", "access"].map(|k| f[k].to_string());
    assert_eq!(fields, ["\"global\"", "1", "4", "4", "\"load\""]);
    let (_, stdout, _) = run(&checks_dir(), "misaligned_load.sim", &[]);
    // Bytes 1..5 are 1, 2, 3, 4: the int 0x04030201.
    assert!(stdout.contains("out[0] = 67305985"), "{stdout}");
}

#[test]
fn a_misaligned_atomic_is_named_performed_and_its_race_kept() {
    // Defect 8c: it was an out-of-bounds store inside the buffer, and the race was lost.
    let (status, values) = report("misaligned_atomic.sim", 1);
    assert_eq!(status, 1);
    let kinds: Vec<&str> = findings(&values).iter().filter_map(|v| v["kind"].as_str()).collect();
    assert_eq!(kinds, ["race", "misaligned"], "{values:?}");
    let race = &values[0];
    let lines: Vec<u64> = race["accesses"].as_array().unwrap().iter().filter_map(|a| a["line"].as_u64()).collect();
    assert_eq!(lines, [5, 7], "the plain store against the atomic");
    assert_eq!(race["accesses"][1]["access"], "atomic");
    assert_eq!((values[1]["access"].as_str(), values[1]["alignment"].as_u64()), (Some("atomic"), Some(4)));
    assert!(values.iter().all(|v| v["kind"] != "out-of-bounds"), "{values:?}");
}

#[test]
fn an_index_past_an_array_inside_its_allocation_is_out_of_bounds_of_the_array() {
    let f = only("array_index.sim", "out-of-bounds");
    assert_eq!(f["object"], "array");
    let fields = ["address_space", "index", "array_size", "line", "count"].map(|k| f[k].to_string());
    assert_eq!(fields, ["\"private\"", "2", "2", "8", "2"], "work-items 2 and 3 index b[2] and b[3]");
    let (_, values) = report("array_index_local.sim", 1);
    let arrays: Vec<&Value> = values.iter().filter(|v| v["object"] == "array").collect();
    assert_eq!(arrays.len(), 1);
    assert_eq!((arrays[0]["address_space"].as_str(), arrays[0]["count"].as_u64()), (Some("local"), Some(4)));
}

#[test]
fn every_distinct_racing_pair_is_counted_and_the_print_limit_caps_what_is_shown() {
    // 120 stores, each racing with itself across work-items: 120 distinct pairs of instructions.
    let dir = tempfile::tempdir().unwrap();
    let stores: String = (0..120).map(|k| format!("    out[{k}] = get_global_id(0);\n")).collect();
    std::fs::write(dir.path().join("many.cl"), format!("kernel void many(global int *out)\n{{\n{stores}}}\n")).unwrap();
    std::fs::write(dir.path().join("many.sim"), "many.cl\nmany\n4 1 1\n4 1 1\n<size=480 int fill=0>\n").unwrap();
    let (status, _, stderr) = run(dir.path(), "many.sim", &["--format", "json"]);
    assert_eq!(status, 1);
    let values: Vec<Value> = stderr.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let races = values.iter().filter(|v| v["kind"] == "race").count();
    let summary = values.last().unwrap();
    assert_eq!(races, 100, "the default print limit: 100 findings per kernel");
    assert_eq!((summary["races"].as_u64(), summary["not_printed"].as_u64()), (Some(120), Some(20)), "{summary}");
    let (_, _, stderr) = run(dir.path(), "many.sim", &["--format", "json", "--print-limit", "0"]);
    assert_eq!(stderr.lines().filter(|l| l.contains("\"kind\":\"race\"")).count(), 120);
}

#[test]
fn the_checks_in_the_reference_tools_format_pass_its_runner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("ci/oclgrind-suite"))
        .arg(checks_dir().join("oclgrind"))
        .args(["--clrace", env!("CARGO_BIN_EXE_clrace")])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("6 passed, 0 failed"), "{stdout}");
}
