//! The on-device checking prototype (issue 30's gate, `src/device`, `examples/on_device_gate`):
//! - the instrumenter gives read-only memory no shadow, memory only written a write record,
//!   memory read and written both records, and refuses what it does not cover by name;
//! - on each driver (pocl, and rusticl where installed), the instrumented kernels of the gate's
//!   race-free launches leave the buffers the application's own kernel leaves and find nothing;
//! - the racy kernels are found with the race kinds and line pairs `clrace check` reports.
//!
//! Speed is not tested here: the gate's numbers are in `docs/on-device.md`.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use clrace::device::{Extra, instrument};
use common::{Driver, drivers, run_limited, text};

const BLOCK_SUM: &str = include_str!("../bench/device/block_sum.cl");
const TILES: &str = include_str!("on_device/tiles.cl");
const SIBLINGS: &str = include_str!("on_device/siblings.cl");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn shadows_only_memory_the_kernel_writes() {
    let program = common::build_program("block_sum.cl", BLOCK_SUM, "");
    let checked = instrument(program.module(), "block_sum", true).unwrap();
    // `in` is only read, `out` only written; the __local tile (a kernel variable) is both.
    assert_eq!(checked.shadow_stride, vec![0, 1]);
    assert_eq!(checked.extras, vec![Extra::Shadow, Extra::Findings, Extra::Meta]);
    assert!(checked.source.contains("cr_write_g("), "{}", checked.source);
    assert!(checked.source.contains("cr_access_l("), "{}", checked.source);
    // Four loads and stores of the tile and their four index checks, one load of `in`, one
    // store of `out`.
    assert_eq!(checked.sites.len(), 10);
    let plan = checked.plan(&[1 << 20, 16384]);
    assert_eq!(plan.shadow_bytes, 16384 / 4 * 8);
    let plain = instrument(program.module(), "block_sum", false).unwrap();
    let kernel = plain.source.split("__kernel void").nth(1).unwrap();
    assert!(
        plain.extras.is_empty() && !kernel.contains("cr_access") && !kernel.contains("cr_report"),
        "{}",
        plain.source
    );
}

/// A `__local` read that no store of its barrier interval can meet has no hook (its bounds
/// check stays), and its memory then needs no read summary; a read that a store on the other
/// side of a branch of the same interval can meet keeps its hook.
#[test]
fn reads_no_write_of_their_interval_can_meet_go_unhooked() {
    let program = common::build_program("tiles.cl", TILES, "");
    let checked = instrument(program.module(), "tiles", true).unwrap();
    let kernel = checked.source.split("__kernel void").nth(1).unwrap();
    assert_eq!(kernel.matches("cr_write_l(").count(), 1, "{kernel}");
    assert!(!kernel.contains("cr_access_l("), "{kernel}");
    // Bounds still checked: the four accesses and the tile's two index checks.
    assert_eq!(kernel.matches("cr_report(cr_fx, CR_OOB").count(), 6, "{kernel}");
    let program = common::build_program("siblings.cl", SIBLINGS, "");
    let checked = instrument(program.module(), "siblings", true).unwrap();
    let kernel = checked.source.split("__kernel void").nth(1).unwrap();
    assert_eq!(kernel.matches("cr_access_l(").count(), 3, "{kernel}");
}

#[test]
fn refuses_what_it_does_not_cover_by_name() {
    let source = "kernel void count(global int *n) { atomic_inc(n); }\n";
    let program = common::build_program("count.cl", source, "");
    let refusal = instrument(program.module(), "count", true).unwrap_err().to_string();
    assert!(refusal.starts_with("cannot instrument: the instruction Atomic at "), "{refusal}");
    assert!(refusal.contains("count.cl:1:"), "{refusal}");
    let source = "kernel void copy(global float4 *a, global float4 *b) { a[0] = b[0]; }\n";
    let program = common::build_program("copy.cl", source, "");
    let refusal = instrument(program.module(), "copy", true).unwrap_err().to_string();
    assert!(refusal.contains("vector or aggregate"), "{refusal}");
}

/// Runs the gate on `sim` with `driver`: its exit status and stdout.
fn gate(driver: Driver, sim: &Path) -> (i32, String) {
    let mut command = Command::new(common::artefacts().join("examples").join("on_device_gate"));
    command.args(["--reps", "1"]).arg(sim.file_name().unwrap()).current_dir(sim.parent().unwrap());
    driver.select(&mut command);
    let out = run_limited(&mut command, Duration::from_secs(300));
    let stdout = text(&out.stdout);
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{} on {}: {}{stdout}",
        sim.display(),
        driver.name(),
        text(&out.stderr)
    );
    (out.status.code().unwrap(), stdout)
}

#[test]
fn race_free_kernels_keep_their_outputs_and_find_nothing() {
    let sims: Vec<PathBuf> = ["bench/small/matmul128.sim", "bench/small/reduce.sim", "bench/small/stencil.sim"]
        .iter()
        .map(|s| root().join(s))
        .chain([root().join("bench/device/block_sum.sim"), root().join("tests/on_device/tiles.sim")])
        .collect();
    for driver in drivers() {
        for sim in &sims {
            let (code, out) = gate(driver, sim);
            let what = format!("{} on {}: {out}", sim.display(), driver.name());
            assert_eq!(code, 0, "{what}");
            assert!(out.contains(" outputs=same "), "{what}");
            assert!(out.contains(" findings=0 dropped=0"), "{what}");
            assert!(!out.contains("finding: "), "{what}");
        }
    }
}

/// The races `clrace check` reports for `sim`: (kind, smaller line, larger line).
fn emulator_races(sim: &Path) -> BTreeSet<(String, u64, u64)> {
    let name = sim.file_name().unwrap().to_str().unwrap();
    let (code, values, _) = common::check_json(sim.parent().unwrap(), name, &[]);
    assert_eq!(code, 1, "{}: clrace check found nothing", sim.display());
    common::findings(&values)
        .iter()
        .map(|f| {
            assert_eq!(f["kind"], "race", "{}: {f}", sim.display());
            let lines: Vec<u64> =
                f["accesses"].as_array().unwrap().iter().map(|a| a["line"].as_u64().unwrap()).collect();
            (f["race_type"].as_str().unwrap().to_string(), lines[0].min(lines[1]), lines[0].max(lines[1]))
        })
        .collect()
}

/// The races the gate's instrumented run printed, in the same form.
fn device_races(out: &str) -> BTreeSet<(String, u64, u64)> {
    out.lines()
        .filter_map(|line| line.strip_prefix("finding: "))
        .map(|finding| {
            let kind = finding.split(" race on ").next().unwrap().to_string();
            let lines = finding.rsplit_once("[lines ").unwrap().1.trim_end_matches(']');
            let (a, b) = lines.split_once(' ').unwrap();
            (kind, a.parse().unwrap(), b.parse().unwrap())
        })
        .collect()
}

#[test]
fn racy_kernels_are_found_with_the_line_pairs_of_clrace_check() {
    // A kernel-declared __local tile (ours), a __local argument (the racy example), and a race
    // between the two sides of a branch.
    let sims = [
        root().join("bench/device/block_sum_racy.sim"),
        root().join("examples/racy_reduce.sim"),
        root().join("tests/on_device/siblings.sim"),
    ];
    for sim in &sims {
        let expected = emulator_races(sim);
        for driver in drivers() {
            let (code, out) = gate(driver, sim);
            let what = format!("{} on {}: {out}", sim.display(), driver.name());
            assert_eq!(code, 1, "{what}");
            assert_eq!(device_races(&out), expected, "{what}");
        }
    }
}

/// `--spirv FILE` (what `bench/device/bundle.sh` prepares for a GPU machine without clang-15):
/// the first run compiles and writes the file; a second run with no compiler at all reads it
/// and finds the same race on the same lines.
#[test]
fn a_kernel_prepared_as_spirv_runs_where_no_compiler_is() {
    let sim = root().join("examples/racy_reduce.sim");
    let dir = tempfile::tempdir().unwrap();
    let spv = dir.path().join("racy_reduce.spv");
    let run = |compiler: Option<&str>| {
        let mut command = Command::new(common::artefacts().join("examples").join("on_device_gate"));
        command.args(["--reps", "1", "--spirv"]).arg(&spv).arg("racy_reduce.sim").current_dir(sim.parent().unwrap());
        if let Some(tool) = compiler {
            command.env("CLRACE_CLANG", tool).env("CLRACE_LLVM_SPIRV", tool);
        }
        drivers()[0].select(&mut command);
        let out = run_limited(&mut command, Duration::from_secs(300));
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let (code, first, err) = run(None);
    assert_eq!(code, Some(1), "{first}{err}");
    assert!(spv.is_file(), "--spirv wrote nothing: {err}");
    let (code, second, err) = run(Some("/nonexistent/clang"));
    assert_eq!(code, Some(1), "without a compiler: {second}{err}");
    assert_eq!(device_races(&second), device_races(&first));
    assert!(!device_races(&second).is_empty());
    // Without the file, the same run needs the compiler, and says so.
    std::fs::remove_file(&spv).unwrap();
    let (code, _, err) = run(Some("/nonexistent/clang"));
    assert_eq!(code, Some(2));
    assert!(err.contains("CLRACE_CLANG"), "{err}");
}
