//! Limits of one run: the wall-time deadline, cancellation, and the memory budget that the
//! emulator and the race detector charge their input-sized allocations against.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clrace::budget::MemoryBudget;
use clrace::detect::{self, Detector};
use clrace::exec::{ExecError, RunOptions, run_hooked, run_with};
use clrace::{ArgValue, Program};

mod common;

use common::launch_1d as launch;

fn build(source: &str) -> Program {
    common::build_program("limits.cl", source, "")
}

const ENDLESS: &str = r#"
kernel void endless(global int *out) {
    int i = 0;
    while (out[0] == 0) { i++; }
    out[1] = i;
}
"#;

#[test]
fn a_past_deadline_ends_the_run_with_a_timeout_naming_the_group() {
    let p = build(ENDLESS);
    let mut buffers = vec![vec![0; 8]];
    let options = RunOptions { deadline: Some(Instant::now()), threads: Some(1), ..RunOptions::default() };
    let err = run_with(&p, &launch("endless", 4, 4, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap_err();
    let ExecError::Timeout(message) = &err else { panic!("expected a timeout, got {err:?}") };
    assert!(message.starts_with("wall-time limit exceeded after "), "{message}");
    assert!(message.contains("work-group (0,0,0)"), "{message}");
}

#[test]
fn a_deadline_stops_an_endless_loop_inside_a_group() {
    let p = build(ENDLESS);
    let mut buffers = vec![vec![0; 8]];
    let deadline = Some(Instant::now() + Duration::from_millis(300));
    let options = RunOptions { deadline, threads: Some(2), ..RunOptions::default() };
    let err = run_with(&p, &launch("endless", 8, 4, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap_err();
    let ExecError::Timeout(message) = &err else { panic!("expected a timeout, got {err:?}") };
    // Stopped in the loop, by a work-item at the loop's line.
    assert!(message.contains("(work-item ("), "{message}");
    assert!(message.contains("limits.cl:4:"), "{message}");
}

#[test]
fn setting_the_cancel_flag_abandons_the_run() {
    let p = build(ENDLESS);
    let mut buffers = vec![vec![0; 8]];
    let cancel = Arc::new(AtomicBool::new(false));
    let options = RunOptions { cancel: Some(cancel.clone()), threads: Some(1), ..RunOptions::default() };
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let err = run_with(&p, &launch("endless", 1, 1, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap_err();
    setter.join().unwrap();
    let ExecError::Timeout(message) = &err else { panic!("expected a timeout, got {err:?}") };
    assert!(message.starts_with("run cancelled after "), "{message}");
}

const TOUCH_ALL: &str = r#"
kernel void touch(global int *data) {
    size_t i = get_global_id(0);
    data[i] = (int)i;
}
"#;

#[test]
fn the_detector_ends_the_run_when_its_shadow_passes_the_memory_budget() {
    let p = build(TOUCH_ALL);
    let n = 1u64 << 22; // 16 MiB of ints: the kernel-wide shadow keeps at least their 16 MiB of stored bytes
    let l = launch("touch", n, 256, vec![ArgValue::Buffer(0)]);
    let memory = MemoryBudget::new(4 << 20);
    let detector = Detector::with_memory(&p, &l, detect::Options::default(), Some(memory.clone()));
    let options = RunOptions { memory: Some(memory.clone()), threads: Some(2), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 4 * n as usize]];
    let err = run_hooked(&p, &l, &mut buffers, &options, &&detector).unwrap_err();
    let ExecError::Memory(message) = &err else { panic!("expected a memory error, got {err:?}") };
    assert!(message.contains("race detector's shadow memory would pass the limit of 4 MiB"), "{message}");
    assert!(err.to_string().starts_with("memory limit exceeded: "), "{err}");
    drop(detector);
    assert_eq!(memory.used(), 0, "everything charged is given back");
}

#[test]
fn the_detector_within_its_budget_runs_to_the_end_and_gives_its_memory_back() {
    let p = build(TOUCH_ALL);
    let l = launch("touch", 4096, 256, vec![ArgValue::Buffer(0)]);
    let memory = MemoryBudget::new(64 << 20);
    let detector = Detector::with_memory(&p, &l, detect::Options::default(), Some(memory.clone()));
    let options = RunOptions { memory: Some(memory.clone()), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 4 * 4096]];
    run_hooked(&p, &l, &mut buffers, &options, &&detector).unwrap();
    // The kernel-wide shadow keeps at least the 16 KiB of bytes the kernel stored.
    assert!(memory.used() > 4 * 4096, "the kernel-wide shadow is charged: {}", memory.used());
    assert!(detector.races().is_empty());
    assert_eq!(memory.used(), 0);
}

const BIG_LOCAL: &str = r#"
kernel void big_local(global int *out, local int *scratch) {
    scratch[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = scratch[0];
}
"#;

#[test]
fn a_work_group_past_the_memory_budget_is_refused_naming_it() {
    let p = build(BIG_LOCAL);
    // 64 MiB of __local memory per group, 16 MiB allowed.
    let l = launch("big_local", 8, 4, vec![ArgValue::Buffer(0), ArgValue::Local(64 << 20)]);
    let memory = MemoryBudget::new(16 << 20);
    let options = RunOptions { memory: Some(memory.clone()), threads: Some(1), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 32]];
    let err = run_with(&p, &l, &mut buffers, &options).unwrap_err();
    let ExecError::Memory(message) = &err else { panic!("expected a memory error, got {err:?}") };
    assert!(
        message.starts_with(
            "work-group (0,0,0) (4 work-items, 67108864 bytes of __local memory) would pass the limit of 16 MiB"
        ),
        "{message}"
    );
    assert_eq!(memory.used(), 0, "the worker gave its charge back");
}

/// Two kernels of one program, each with its own `__local` tile: 4 MiB and 256 bytes.
const TWO_TILES: &str = r#"
kernel void big_tile(global int *out) {
    local int tile[1 << 20];
    tile[get_local_id(0)] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[0];
}
kernel void small_tile(global int *out) {
    local int tile[64];
    tile[get_local_id(0)] = (int)get_global_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[3 - get_local_id(0)] + 1;
}
"#;

#[test]
fn a_group_holds_only_its_own_kernels_local_variables() {
    let p = build(TWO_TILES);
    // 1 MiB allowed: the small kernel's groups fit, although the program's other kernel
    // declares 4 MiB of `__local` memory.
    let memory = MemoryBudget::new(1 << 20);
    let options = RunOptions { memory: Some(memory.clone()), threads: Some(1), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 4 * 8]];
    run_with(&p, &launch("small_tile", 8, 4, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap();
    let out: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(out, [4, 3, 2, 1, 8, 7, 6, 5]);
    // The big kernel's groups are refused, with its own tile's bytes alone.
    let err = run_with(&p, &launch("big_tile", 8, 4, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap_err();
    let ExecError::Memory(message) = &err else { panic!("expected a memory error, got {err:?}") };
    assert!(message.starts_with("work-group (0,0,0) (4 work-items, 4194304 bytes of __local memory)"), "{message}");
    assert_eq!(memory.used(), 0);
}

#[test]
fn groups_within_the_budget_reuse_one_charge_per_worker() {
    let p = build(BIG_LOCAL);
    // 1 MiB of __local per group, 256 groups, 4 MiB allowed: fits only if finished groups' memory
    // is reused rather than kept.
    let l = launch("big_local", 1024, 4, vec![ArgValue::Buffer(0), ArgValue::Local(1 << 20)]);
    let memory = MemoryBudget::new(4 << 20);
    let options = RunOptions { memory: Some(memory.clone()), threads: Some(2), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 4096]];
    run_with(&p, &l, &mut buffers, &options).unwrap();
    assert!(buffers[0].chunks_exact(4).all(|c| c == [1, 0, 0, 0]));
    assert_eq!(memory.used(), 0);
}

#[test]
fn the_progress_counter_counts_every_finished_group() {
    let p = build(TOUCH_ALL);
    let done = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let options = RunOptions { progress: Some(done.clone()), threads: Some(2), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 4 * 1000]];
    run_with(&p, &launch("touch", 1000, 8, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap();
    assert_eq!(done.load(std::sync::atomic::Ordering::Relaxed), 125);
}

/// Two frames of 12 MiB each: either alone fits a work-item's 16 MiB (the lowering refuses one
/// variable over it), together they do not, which only the run can tell.
const BIG_PRIVATE: &str = r#"
int helper(int n) {
    int b[3 << 20];
    for (int i = 0; i < n; i++) b[i] = i;
    return b[n - 1];
}
kernel void big_private(global int *out, int n) {
    int big[3 << 20];
    for (int i = 0; i < n; i++) big[i] = i;
    out[get_global_id(0)] = big[n - 1] + helper(n);
}
"#;

#[test]
fn private_memory_past_16_mib_per_work_item_is_a_memory_error() {
    let p = build(BIG_PRIVATE);
    let l = launch("big_private", 2, 2, vec![ArgValue::Buffer(0), ArgValue::Value(4i32.to_le_bytes().to_vec())]);
    let mut buffers = vec![vec![0; 8]];
    let err = run_with(&p, &l, &mut buffers, &RunOptions::default()).unwrap_err();
    let ExecError::Memory(message) = &err else { panic!("expected a memory error, got {err:?}") };
    assert_eq!(message, "work-item [0, 0, 0] needs more than 16 MiB of private memory");
}

const LOOPED_PRIVATE: &str = r#"
kernel void looped_private(global int *out, int n) {
    int acc = 0;
    for (int k = 0; k < n; k++) {
        int block[65536];
        for (int i = 0; i < 65536; i += 4096) block[i] = k + i;
        // An index only known at run time: the array stays in private memory (with a constant
        // one, the optimiser unrolls the loop and keeps the elements in registers).
        acc += block[(n & 1) * 4096];
    }
    out[get_global_id(0)] = acc;
}
"#;

#[test]
fn work_items_private_memory_is_charged_as_the_group_runs() {
    // 64 work-items of 256 KiB private memory each: 16 MiB, over a 4 MiB budget.
    let p = build(LOOPED_PRIVATE);
    let args = vec![ArgValue::Buffer(0), ArgValue::Value(100_000i32.to_le_bytes().to_vec())];
    let l = launch("looped_private", 64, 64, args);
    let memory = MemoryBudget::new(4 << 20);
    let options = RunOptions { memory: Some(memory.clone()), threads: Some(1), ..RunOptions::default() };
    let mut buffers = vec![vec![0; 256]];
    let err = run_with(&p, &l, &mut buffers, &options).unwrap_err();
    let ExecError::Memory(message) = &err else { panic!("expected a memory error, got {err:?}") };
    assert!(message.contains("(its work-items' memory and printf output) would pass the limit of 4 MiB"), "{message}");
    assert_eq!(memory.used(), 0);
}
