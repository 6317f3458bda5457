//! The benchmark kernels of `bench/`, which `ci/bench` times, kept honest without timing them:
//! - at its benchmark size, every kernel runs under `clrace check` with nothing found (the
//!   benchmark compares race-free runs; `ci/bench` also checks Oclgrind's verdict);
//! - every kernel has a small twin in `bench/small/` whose dumps under `clrace check` are the
//!   same bytes as natively on pocl through `examples/native_sim --dump`, so the native runner
//!   runs the launch that clrace runs, and the kernels compute what they should on both.
//!
//! This file cannot see speed: the numbers are `ci/bench`'s.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{launch_files, run_limited, text};

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

fn names(files: &[PathBuf]) -> Vec<String> {
    files.iter().map(|f| f.file_stem().unwrap().to_string_lossy().into_owned()).collect()
}

/// `clrace check` of one launch file, from the file's directory; returns its stdout after
/// asserting that it found nothing and said nothing.
fn check_clean(sim: &Path) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_clrace"));
    command.arg("check").arg(sim.file_name().unwrap()).current_dir(sim.parent().unwrap());
    let out = run_limited(&mut command, Duration::from_secs(120));
    let stderr = text(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "{}: {:?}\n{stderr}", sim.display(), out.status);
    text(&out.stdout)
}

#[test]
fn benchmark_kernels_are_race_free() {
    let files = launch_files(&bench_dir());
    for kernel in ["matmul128", "reduce", "histogram", "stencil", "vecadd", "mandelbrot", "bitonic"] {
        assert!(names(&files).iter().any(|n| n == kernel), "bench/{kernel}.sim is missing");
    }
    for sim in files.iter().chain([&bench_dir().join("floor").join("noop.sim")]) {
        check_clean(sim);
    }
}

#[test]
fn every_benchmark_kernel_has_a_small_twin() {
    let big = names(&launch_files(&bench_dir()));
    let small = names(&launch_files(&bench_dir().join("small")));
    assert_eq!(big, small, "bench/*.sim and bench/small/*.sim must name the same kernels");
}

#[test]
fn native_runs_print_the_dumps_of_clrace() {
    let native = common::artefacts().join("examples").join("native_sim");
    for sim in launch_files(&bench_dir().join("small")) {
        let ours = check_clean(&sim);
        assert!(ours.contains("Argument '"), "{}: the twin dumps nothing", sim.display());
        let mut command = Command::new(&native);
        command.args(["--dump", "--reps", "2"]).arg(sim.file_name().unwrap()).current_dir(sim.parent().unwrap());
        let theirs = run_limited(&mut command, Duration::from_secs(120));
        let stderr = text(&theirs.stderr);
        assert!(theirs.status.success(), "native_sim {}: {stderr}", sim.display());
        assert!(stderr.contains("best_ms="), "native_sim {} printed no time: {stderr}", sim.display());
        // Line by line first, so that a difference names its element.
        for (line, (a, b)) in ours.lines().zip(text(&theirs.stdout).lines()).enumerate() {
            assert_eq!(a, b, "{}: line {} differs (clrace, then pocl)", sim.display(), line + 1);
        }
        assert_eq!(ours, text(&theirs.stdout), "{}: clrace and pocl print different dumps", sim.display());
    }
}

/// The sort sorts: every 512-key tile of the small twin's output ascends, and the output holds
/// every scrambled input key once.
#[test]
fn bitonic_tiles_come_out_sorted() {
    let out = check_clean(&bench_dir().join("small").join("bitonic.sim"));
    let keys: Vec<u32> = out
        .lines()
        .filter_map(|line| line.split_once("] = 0x"))
        .map(|(_, hex)| u32::from_str_radix(hex.trim(), 16).unwrap())
        .collect();
    assert_eq!(keys.len(), 2048);
    for (t, tile) in keys.chunks(512).enumerate() {
        assert!(tile.is_sorted(), "tile {t} is not sorted");
    }
    let mut expected: Vec<u32> = (0..2048u32).map(|v| v.wrapping_mul(2_654_435_761) ^ (v >> 13)).collect();
    let mut got = keys.clone();
    expected.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, expected, "the output is not a permutation of the scrambled input");
}
