//! `ci/oclgrind-suite`, the runner for tests in the reference tool's format, on our own tests in
//! that format (`tests/oclgrind-format/`, which the reference tool's own runner passes too): they
//! pass, and a test whose expectation is wrong fails with the kind that differs.

use std::path::Path;
use std::process::Command;

fn suite(dir: &Path) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("ci/oclgrind-suite"))
        .arg(dir)
        .args(["--clrace", env!("CARGO_BIN_EXE_clrace")])
        .output()
        .expect("python3 runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn our_tests_in_the_reference_format_pass() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oclgrind-format");
    let tests =
        std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.path().extension() == Some("sim".as_ref())).count();
    let (ok, out) = suite(&dir);
    assert!(ok && out.contains(&format!("{tests} passed, 0 failed")), "{out}");
}

#[test]
fn a_wrong_expectation_fails_by_kind_and_by_dump() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oclgrind-format");
    for entry in std::fs::read_dir(&source).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    // The race expected as write-write, and a dumped value changed.
    let rw = std::fs::read_to_string(dir.path().join("rw_race.ref")).unwrap();
    std::fs::write(dir.path().join("rw_race.ref"), rw.replace("Read-write", "Write-write")).unwrap();
    let copy = std::fs::read_to_string(dir.path().join("clean_copy.ref")).unwrap();
    std::fs::write(dir.path().join("clean_copy.ref"), copy.replace("out[3] = 8", "out[3] = 9")).unwrap();
    let (ok, out) = suite(dir.path());
    assert!(!ok, "{out}");
    assert!(
        out.contains("FAIL rw_race  (kinds: missing ['race/write-write/global'], extra ['race/read-write/global'])"),
        "{out}"
    );
    assert!(out.contains("FAIL clean_copy") && out.contains("expected EXACT '  out[3] = 9'"), "{out}");
    assert!(out.contains(" passed, 2 failed"), "{out}");
}
