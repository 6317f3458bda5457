//! The interpreter's two compiled copies (`clrace::exec::cpu`: baseline x86-64 and x86-64-v3)
//! agree: every launch file of the golden race corpus (`tests/races`), the differential corpus
//! (`tests/corpus`) and the benchmark's small twins (`bench/small`) gives the same exit status,
//! stdout (printf output and buffer dumps) and JSON report under `CLRACE_CPU=baseline` as with the
//! copy this CPU picks. The baseline copy is the reference: the other may only be faster.
//!
//! On a CPU without x86-64-v3 both runs take the baseline copy and agree trivially; the test
//! says so on stderr.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::{launch_files, run_limited, text};

/// Exit status, stdout and stderr of `clrace check --format json --threads 1 SIM`, with
/// `CLRACE_CPU` set to `cpu` (or left out).
fn check(sim: &Path, cpu: Option<&str>) -> (Option<i32>, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clrace"));
    command
        .args(["check", "--format", "json", "--threads", "1"])
        .arg(sim.file_name().unwrap())
        .current_dir(sim.parent().unwrap())
        .env_remove("CLRACE_CPU");
    if let Some(cpu) = cpu {
        command.env("CLRACE_CPU", cpu);
    }
    let out = run_limited(&mut command, Duration::from_secs(180));
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn baseline_and_wide_copies_give_the_same_results() {
    if !clrace::exec::cpu::wide() {
        eprintln!("this CPU runs only the baseline copy: both runs below take it");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<PathBuf> =
        ["tests/races", "tests/corpus", "bench/small"].iter().flat_map(|dir| launch_files(&root.join(dir))).collect();
    assert!(files.len() > 150, "the corpora lost launch files: {}", files.len());
    let next = Mutex::new(files.iter());
    let differences = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let Some(sim) = next.lock().unwrap().next() else { break };
                    let wide = check(sim, None);
                    let baseline = check(sim, Some("baseline"));
                    if wide != baseline {
                        differences
                            .lock()
                            .unwrap()
                            .push(format!("{}:\n  picked copy: {wide:?}\n  baseline:    {baseline:?}", sim.display()));
                    }
                }
            });
        }
    });
    let differences = differences.into_inner().unwrap();
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
