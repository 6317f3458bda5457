//! `clrace check` end to end: dumps identical to the reference tool's, exit statuses, messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn clrace(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clrace")).args(args).current_dir(dir).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The same launch file through `oclgrind-kernel` and `clrace check` prints identical dumps.
fn same_dumps_as_reference(dir: &Path, sim: &str) {
    let reference = Command::new("oclgrind-kernel")
        .arg(sim)
        .current_dir(dir)
        .output()
        .expect("oclgrind-kernel is installed by ci/setup");
    assert!(reference.status.success(), "oclgrind-kernel failed: {}", text(&reference.stderr));
    let ours = clrace(dir, &["check", sim]);
    assert!(ours.status.success(), "clrace failed: {}", text(&ours.stderr));
    assert!(!ours.stdout.is_empty());
    assert_eq!(text(&ours.stdout), text(&reference.stdout), "dumps of {sim} differ");
}

#[test]
fn demo_matches_the_reference_tool() {
    same_dumps_as_reference(&root().join("examples"), "reduce.sim");
}

#[test]
fn many_value_kinds_match_the_reference_tool() {
    same_dumps_as_reference(&root().join("tests/cli"), "mixed.sim");
}

#[test]
fn program_path_resolves_beside_the_launch_file() {
    let out = clrace(&root(), &["check", "examples/reduce.sim"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("partial[7] = 122816"));
}

#[test]
fn out_of_bounds_exits_1_with_the_line() {
    let out = clrace(&root().join("examples"), &["check", "out_of_bounds.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("Invalid read of size 4 at global memory: 'in' (32 bytes), offset 32"), "{err}");
    assert!(err.contains("Global(7,0,0)") && err.contains("out_of_bounds.cl:5:"), "{err}");
}

#[test]
fn an_access_before_a_buffer_names_it_with_a_negative_offset() {
    let out = clrace(&root().join("tests/races"), &["check", "oob_before_buffer.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("Invalid read of size 4 at global memory: 'in' (4096 bytes), offset -2044"), "{err}");
}

#[test]
fn image_reads_past_the_edge_are_reported_with_coordinates() {
    let out = clrace(&root().join("examples"), &["check", "image_edge.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // One report per instruction, at its first occurrence (row 0), counting both rows.
    assert!(err.contains("Invalid read of image 'in' (4x2) at coordinate (-1, 0)"), "{err}");
    assert!(
        err.contains("Invalid read of image 'in' (4x2) at coordinate (4, 0)") && err.contains("image_edge.cl:7:18")
    );
    assert!(!err.contains("at coordinate (-1, 1)"), "{err}");
    assert_eq!(err.matches("\tOccurrences: 2 (the first in NDRange order is shown)").count(), 2, "{err}");
    assert!(err.contains("4 out-of-bounds access(es)"), "{err}");
    // Outside reads give the border color (0, 0, 0, 1): the ends average two pixels over three.
    let dump = text(&out.stdout);
    assert!(dump.contains("out[0] = 0.333333") && dump.contains("out[7] = 4.33333"), "{dump}");
}

#[test]
fn launch_file_mistake_exits_2_naming_line_and_argument() {
    let out = clrace(&root().join("tests/cli"), &["check", "bad_arg.sim"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("Line 8") && err.contains("partial"), "{err}");
}

#[test]
fn build_error_exits_3_with_clang_diagnostics() {
    let out = clrace(&root().join("tests/cli"), &["check", "syntax_error.sim"]);
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(err.contains("syntax_error.cl:3:10: error: use of undeclared identifier 'undefined_variable'"), "{err}");
}

#[test]
fn endless_kernel_exits_4_at_the_budget() {
    let out = clrace(&root().join("tests/cli"), &["check", "--budget", "1000000", "spin.sim"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(text(&out.stderr).contains("budget"), "{}", text(&out.stderr));
}

#[test]
fn missing_file_and_bad_usage_exit_2() {
    assert_eq!(clrace(&root(), &["check", "no/such/file.sim"]).status.code(), Some(2));
    assert_eq!(clrace(&root(), &["frobnicate"]).status.code(), Some(2));
}

#[test]
fn unsupported_feature_exits_4_naming_it_and_the_line() {
    let out = clrace(&root().join("tests/cli"), &["check", "device_enqueue.sim"]);
    assert_eq!(out.status.code(), Some(4));
    let err = text(&out.stderr);
    assert!(err.contains("OpGetDefaultQueue at ") && err.contains("device_enqueue.cl:5:"), "{err}");
}

/// Runs `tests/corpus/ptr_to_uint.cl`, built for `target` (`spir`: 32-bit pointers, or
/// `spir64`) into SPIR-V, and returns the dump of its `out` buffer.
fn ptr_to_uint_dump(target: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (bc, spv) = (dir.path().join("k.bc"), dir.path().join("k.spv"));
    let clang = Command::new("clang-15")
        .args(["-x", "cl", "-cl-std=CL1.2", &format!("--target={target}"), "-O0", "-emit-llvm", "-c"])
        .arg(root().join("tests/corpus/ptr_to_uint.cl"))
        .arg("-o")
        .arg(&bc)
        .status()
        .unwrap();
    assert!(clang.success());
    assert!(Command::new("llvm-spirv-15").arg(&bc).arg("-o").arg(&spv).status().unwrap().success());
    let sim = "k.spv\nptr_to_uint\n1 1 1\n1 1 1\n\n<size=16 range=10:1:13>\n<size=28 fill=7 dump>\n";
    std::fs::write(dir.path().join("k.sim"), sim).unwrap();
    let out = clrace(dir.path(), &["check", "k.sim"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn a_converted_buffer_pointer_is_not_null_with_32_or_64_bit_pointers() {
    // out: A == NULL as integers, (uint)A == 0 twice, the integer step of A + 1, A == NULL,
    // an integer round trip of A + 2, a load through A converted, moved and converted back.
    for target in ["spir", "spir64"] {
        let dump = ptr_to_uint_dump(target);
        let values: Vec<&str> = dump.lines().filter_map(|l| l.split(" = ").nth(1)).collect();
        assert_eq!(values, ["0", "0", "1", "0", "0", "1", "13"], "{target}:\n{dump}");
    }
}

#[test]
fn spirv_program_runs_without_the_compiler() {
    let dir = tempfile::tempdir().unwrap();
    let cl = root().join("examples/reduce.cl");
    let bc = dir.path().join("reduce.bc");
    let spv = dir.path().join("reduce.spv");
    let clang = Command::new("clang-15")
        .args(["-x", "cl", "-cl-std=CL1.2", "--target=spir64", "-O0", "-emit-llvm", "-c", "-cl-kernel-arg-info"])
        .arg(&cl)
        .arg("-o")
        .arg(&bc)
        .status()
        .unwrap();
    assert!(clang.success());
    let translate = Command::new("llvm-spirv-15").arg(&bc).arg("-o").arg(&spv).status().unwrap();
    assert!(translate.success());
    let sim = std::fs::read_to_string(root().join("examples/reduce.sim")).unwrap().replace("reduce.cl", "reduce.spv");
    std::fs::write(dir.path().join("reduce.sim"), sim).unwrap();
    // No compiler on this run: a SPIR-V program must not need one.
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "reduce.sim"])
        .current_dir(dir.path())
        .env("CLRACE_CLANG", "/nonexistent/clang")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("partial[7] = 122816"), "{}", text(&out.stdout));
}

#[test]
fn missing_compiler_is_a_build_error_with_an_install_hint() {
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "reduce.sim"])
        .current_dir(root().join("examples"))
        .env("CLRACE_CLANG", "/nonexistent/clang")
        .env("CLRACE_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("ci/setup") || text(&out.stderr).contains("apt-get"), "{}", text(&out.stderr));
}

#[test]
fn a_kernel_that_can_never_finish_is_a_deadlock_finding_naming_the_spinning_line() {
    // Work-item 0 spins on a flag the others set only after a barrier it never reaches.
    let out = clrace(&root().join("tests/cli"), &["check", "hang.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("Deadlock in work-group (0,0,0)") && err.contains("hang.cl:6:"), "{err}");
    assert!(err.contains("Global(0,0,0) waits at an atomic") && err.contains("wait at a barrier"), "{err}");
}

#[test]
fn a_hang_clrace_cannot_prove_a_deadlock_exits_4_naming_the_spinning_line() {
    // One thread: group 0 waits for group 1, which has not started (and would set the flag).
    let out = clrace(&root().join("tests/explore"), &["check", "--threads", "1", "group_handshake.sim"]);
    assert_eq!(out.status.code(), Some(4));
    let err = text(&out.stderr);
    assert!(err.contains("forward-progress hang") && err.contains("group_handshake.cl:11:"), "{err}");
}

#[test]
fn uniform_writes_are_races_unless_declared_benign() {
    let dir = root().join("tests/races");
    let reported = clrace(&dir, &["check", "uniform_write.sim"]);
    assert_eq!(reported.status.code(), Some(1));
    assert!(text(&reported.stderr).contains("(uniform: both stored the same bytes)"), "{}", text(&reported.stderr));
    let benign = clrace(&dir, &["check", "--uniform-writes-benign", "uniform_write.sim"]);
    assert_eq!(benign.status.code(), Some(0), "{}", text(&benign.stderr));
}

#[test]
fn json_reports_errors_as_objects_and_clean_runs_with_a_summary() {
    let dir = root().join("tests/cli");
    let failed = clrace(&dir, &["check", "--format", "json", "syntax_error.sim"]);
    assert_eq!(failed.status.code(), Some(3));
    let lines: Vec<serde_json::Value> =
        text(&failed.stderr).lines().map(|l| serde_json::from_str(l).expect("every line is JSON")).collect();
    assert_eq!(lines.last().unwrap()["kind"], "error");
    assert!(!lines.iter().any(|l| l["kind"] == "summary"), "no summary for a kernel that did not run");

    let clean = clrace(&root().join("examples"), &["check", "--format", "json", "reduce.sim"]);
    assert_eq!(clean.status.code(), Some(0));
    let summary: serde_json::Value = serde_json::from_str(text(&clean.stderr).trim()).unwrap();
    assert_eq!(summary["kind"], "summary");
    assert_eq!((summary["races"].as_u64(), summary["work_items"].as_u64()), (Some(0), Some(1024)));
}

/// `--timings` adds one line on stderr with the three parts of the check, and changes nothing
/// else: the dumps on stdout are those of a check without it.
#[test]
fn timings_print_one_line_and_change_nothing_else() {
    let dir = root().join("examples");
    let plain = clrace(&dir, &["check", "reduce.sim"]);
    let timed = clrace(&dir, &["check", "--timings", "reduce.sim"]);
    assert!(timed.status.success(), "{}", text(&timed.stderr));
    assert_eq!(text(&timed.stdout), text(&plain.stdout));
    let err = text(&timed.stderr);
    let line = err.lines().find(|l| l.starts_with("clrace: timings: ")).unwrap_or_else(|| panic!("{err}"));
    let parts: Vec<&str> = line["clrace: timings: ".len()..].split(", ").collect();
    assert_eq!(parts.len(), 3, "{line}");
    for (part, name) in parts.iter().zip(["prepare", "kernel", "report"]) {
        let ms = part.strip_prefix(name).and_then(|r| r.strip_suffix(" ms")).map(str::trim);
        let ms: f64 = ms.and_then(|m| m.parse().ok()).unwrap_or_else(|| panic!("{line}"));
        assert!(ms >= 0.0, "{line}");
    }
    assert_eq!(err.replace(&format!("{line}\n"), ""), text(&plain.stderr));
}

/// A program built again reads what the lowering made of it from `lowered/` of the cache: the
/// second check reports what the first did, and so does a check after the entry was damaged
/// (read as a miss, lowered afresh and stored again).
#[test]
fn a_program_built_again_reads_its_lowered_module_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let check = || {
        let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
            .args(["check", "--format", "json", "racy_reduce.sim"])
            .current_dir(root().join("examples"))
            .env("CLRACE_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "races found: {}", text(&out.stderr));
        // The dumps on stdout, the findings on stderr.
        text(&out.stdout) + &text(&out.stderr)
    };
    let first = check();
    assert!(first.contains("\"race\""), "{first}");
    let lowered = cache.path().join("lowered");
    let entries = || std::fs::read_dir(&lowered).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>();
    let stored = entries();
    assert_eq!(stored.len(), 1, "one lowered module stored");
    let written = std::fs::metadata(&stored[0]).unwrap().modified().unwrap();
    assert_eq!(check(), first);
    assert_eq!(std::fs::metadata(&stored[0]).unwrap().modified().unwrap(), written, "read, not written again");
    std::fs::write(&stored[0], b"clrace-lowered1\n\x05\0\0\0\0\0\0\0garbage").unwrap();
    assert_eq!(check(), first);
    assert_eq!(entries().len(), 1);
    assert!(std::fs::read(&stored[0]).unwrap().len() > 40, "stored again whole");
}
