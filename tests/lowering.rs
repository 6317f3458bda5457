//! Golden tests of the lowering: every OpenCL C file of `tests/lowering` is compiled, loaded
//! and lowered, and the textual IR ([`clrace::ir::Module::dump`]) must equal the file's golden
//! `NAME.ir` line for line. The kernels cover the lowering's families (arithmetic and vectors,
//! pointers, structs, control flow, calls, synchronisation, builtins, printf), so that a change
//! of the lowering or its peepholes shows as a reviewable diff of these files.
//!
//! `CLRACE_BLESS=1 cargo test --test lowering` rewrites the goldens; review the diff before
//! committing. A line `// clrace-build: OPTIONS` in a source gives its build options.

use std::path::{Path, PathBuf};

fn lowering_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("lowering")
}

/// The build options a source asks for in its `// clrace-build:` line.
fn build_options(source: &str) -> &str {
    source.lines().find_map(|l| l.trim().strip_prefix("// clrace-build:")).map_or("", str::trim)
}

/// Lowers one source file and compares its dump with the golden; returns what differs.
fn verify(source_path: &Path) -> Option<String> {
    let source = std::fs::read_to_string(source_path).expect("read the kernel");
    let program = clrace::Program::from_source(&source, source_path, build_options(&source))
        .unwrap_or_else(|e| panic!("{}: {e}", source_path.display()));
    let dump = program.module().dump();
    let golden = source_path.with_extension("ir");
    let name = golden.file_name().unwrap().to_string_lossy().into_owned();
    if std::env::var_os("CLRACE_BLESS").is_some() {
        std::fs::write(&golden, &dump).expect("write the golden dump");
        return None;
    }
    let Ok(want) = std::fs::read_to_string(&golden) else {
        return Some(format!("no golden dump {name} (bless with CLRACE_BLESS=1)"));
    };
    if want == dump {
        return None;
    }
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) = (want.lines().collect(), dump.lines().collect());
    let first =
        want_lines.iter().zip(&got_lines).position(|(a, b)| a != b).unwrap_or(want_lines.len().min(got_lines.len()));
    Some(format!(
        "{name} differs from line {}:\n--- expected\n{}\n--- got\n{}",
        first + 1,
        want_lines.get(first..).unwrap_or(&[]).iter().take(6).copied().collect::<Vec<_>>().join("\n"),
        got_lines.get(first..).unwrap_or(&[]).iter().take(6).copied().collect::<Vec<_>>().join("\n"),
    ))
}

#[test]
fn golden_ir_dumps() {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(lowering_dir())
        .expect("tests/lowering")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cl"))
        .collect();
    sources.sort();
    assert!(sources.len() >= 8, "the corpus lost kernels: {sources:?}");
    let problems: Vec<String> = sources.iter().filter_map(|p| verify(p)).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn every_golden_has_its_source() {
    for entry in std::fs::read_dir(lowering_dir()).expect("tests/lowering") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "ir") {
            assert!(path.with_extension("cl").is_file(), "{} has no source", path.display());
        }
    }
}

/// The hidden `clrace ir` subcommand prints the same dump, or one kernel with its callees.
#[test]
fn the_ir_subcommand_prints_the_dump() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_clrace"))
            .args(args)
            .current_dir(lowering_dir())
            .output()
            .unwrap()
    };
    let whole = run(&["ir", "calls.cl"]);
    assert!(whole.status.success(), "{}", String::from_utf8_lossy(&whole.stderr));
    let golden = std::fs::read_to_string(lowering_dir().join("calls.ir")).unwrap();
    assert_eq!(String::from_utf8_lossy(&whole.stdout), golden);
    let one = run(&["ir", "--kernel", "calls", "calls.cl"]);
    let text = String::from_utf8_lossy(&one.stdout);
    assert!(text.starts_with("kernel calls = function "), "{text}");
    // Its helpers (square, swap, accumulate, clamp_sum) are inlined into it (`opt::inline`):
    // their lines are in the kernel's code.
    for line in ["calls.cl:2:", "calls.cl:3:", "calls.cl:4:", "calls.cl:6:"] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    let missing = run(&["ir", "--kernel", "nope", "calls.cl"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no kernel named 'nope'"));
}
