//! The scheduler's guarantees: spin-waiting work-items let the others run, kernels that can never
//! finish are reported as hangs (quickly, with the spinning line), barrier divergence is found,
//! and the instruction budget bounds the whole launch.

use std::time::{Duration, Instant};

use clrace::exec::{Chooser, ExecError, Finding, InOrder, Policy, Replay, RunOptions, run_stepped, run_with};
use clrace::{ArgValue, Program};

mod common;

use common::launch_1d as launch;

fn build(source: &str, options: &str) -> Program {
    common::build_program("sched.cl", source, options)
}

fn ints(bytes: &[u8]) -> Vec<i32> {
    bytes.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn options(threads: usize) -> RunOptions {
    RunOptions { threads: Some(threads), ..RunOptions::default() }
}

const PRODUCER_CONSUMER: &str = r#"
// Work-item 0 consumes what the last work-item of its group produces, through a flag.
kernel void handoff(global int *data, global atomic_int *flags, global int *out) {
    int l = get_local_id(0), g = get_group_id(0), last = get_local_size(0) - 1;
    if (l == 0) {
        while (atomic_load_explicit(&flags[g], memory_order_acquire, memory_scope_device) == 0)
            ;
        out[g] = data[g];
    } else if (l == last) {
        data[g] = 100 + g;
        atomic_store_explicit(&flags[g], 1, memory_order_release, memory_scope_device);
    }
}
"#;

#[test]
fn producer_and_consumer_in_one_group_finish() {
    let p = build(PRODUCER_CONSUMER, "-cl-std=CL3.0");
    for threads in [1, 2] {
        let mut buffers = vec![vec![0; 16], vec![0; 16], vec![0; 16]];
        let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
        let out = run_with(&p, &launch("handoff", 256, 64, args), &mut buffers, &options(threads)).unwrap();
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        assert_eq!(ints(&buffers[2]), vec![100, 101, 102, 103]);
    }
}

const TICKET_LOCK: &str = r#"
// A ticket lock served in a scrambled order: each work-item waits for its turn, then appends
// its id to a log under the lock.
kernel void tickets(global atomic_int *serving, global int *count, global int *log) {
    int l = get_local_id(0), n = get_local_size(0);
    int ticket = (l * 7) % n;
    while (atomic_load(serving) != ticket)
        ;
    int at = *count;
    log[at] = l;
    *count = at + 1;
    atomic_fetch_add(serving, 1);
}
"#;

#[test]
fn ticket_lock_serves_every_work_item_in_ticket_order() {
    let p = build(TICKET_LOCK, "-cl-std=CL3.0");
    let mut buffers = vec![vec![0; 4], vec![0; 4], vec![0; 64 * 4]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
    let out = run_with(&p, &launch("tickets", 64, 64, args), &mut buffers, &options(1)).unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    assert_eq!(ints(&buffers[0]), vec![64]);
    assert_eq!(ints(&buffers[1]), vec![64]);
    // Ticket t belongs to the work-item l with l*7 = t (mod 64), i.e. l = t*55 (mod 64).
    let expected: Vec<i32> = (0..64).map(|t| (t * 55) % 64).collect();
    assert_eq!(ints(&buffers[2]), expected);
}

fn expect_hang(source: &str, kernel: &str, global: u64, local: u64, line: u32, threads: usize) -> String {
    let p = build(source, "-cl-std=CL3.0");
    let mut buffers = vec![vec![0; 64]];
    let started = Instant::now();
    let err = run_with(&p, &launch(kernel, global, local, vec![ArgValue::Buffer(0)]), &mut buffers, &options(threads))
        .expect_err("the kernel cannot finish");
    assert!(started.elapsed() < Duration::from_secs(10), "hang took {:?} to report", started.elapsed());
    let ExecError::Hang(message) = err else { panic!("expected a hang, got {err}") };
    assert!(message.contains(&format!("sched.cl:{line}:")), "no spinning line {line} in: {message}");
    message
}

/// Runs a kernel that can never finish: a deadlock finding (spinning work-items, at a barrier),
/// found quickly, not an execution error.
fn expect_deadlock(source: &str, kernel: &str, global: u64, local: u64, line: u32) -> (usize, usize) {
    let p = build(source, "-cl-std=CL3.0");
    let mut buffers = vec![vec![0; 64]];
    let started = Instant::now();
    let out = run_with(&p, &launch(kernel, global, local, vec![ArgValue::Buffer(0)]), &mut buffers, &options(1))
        .expect("a deadlock is a finding, not an execution error");
    assert!(started.elapsed() < Duration::from_secs(10), "deadlock took {:?} to report", started.elapsed());
    let [Finding::Deadlock { waiting, spinning, at_barrier, .. }] = &out.findings[..] else {
        panic!("expected one deadlock, got {:?}", out.findings);
    };
    assert!(waiting.iter().all(|w| p.module().location(w.1).contains(&format!("sched.cl:{line}:"))), "{waiting:?}");
    (*spinning, *at_barrier)
}

#[test]
fn waiting_for_a_value_nobody_writes_is_a_deadlock() {
    let source = "kernel void never(global atomic_int *flag) {\n    while (atomic_load(flag) == 0)\n        ;\n}\n";
    assert_eq!(expect_deadlock(source, "never", 8, 8, 2), (8, 0));
}

#[test]
fn waiting_for_a_value_written_after_a_barrier_is_a_deadlock() {
    let source = "kernel void deadlock(global atomic_int *flag) {\n    if (get_local_id(0) == 0) {\n        while (atomic_load(flag) == 0)\n            ;\n    }\n    barrier(CLK_GLOBAL_MEM_FENCE);\n    atomic_store(flag, 1);\n}\n";
    assert_eq!(expect_deadlock(source, "deadlock", 4, 4, 3), (1, 3));
}

#[test]
fn a_wait_that_counts_its_tries_in_a_register_is_a_hang_not_a_deadlock() {
    // The state changes from round to round (the counter): clrace cannot prove it never ends.
    let source = "kernel void counted(global atomic_int *flag) {\n    for (int i = 0; i < 100000000; i++)\n        if (atomic_load(flag) != 0) break;\n    atomic_store(flag, 2);\n}\n";
    let p = build(source, "-cl-std=CL3.0");
    let mut buffers = vec![vec![0; 64]];
    let err = run_with(&p, &launch("counted", 1, 1, vec![ArgValue::Buffer(0)]), &mut buffers, &options(1))
        .expect_err("reported as a hang");
    assert!(matches!(err, ExecError::Hang(_)), "{err}");
}

#[test]
fn waiting_for_a_later_work_group_is_a_hang_not_an_endless_run() {
    // Group 0 waits for group 1; OpenCL does not promise that group 1 ever runs alongside.
    let source = "kernel void later(global atomic_int *flag) {\n    if (get_group_id(0) == 0) {\n        while (atomic_load(flag) == 0)\n            ;\n    } else {\n        atomic_store(flag, 1);\n    }\n}\n";
    expect_hang(source, "later", 2, 1, 3, 1);
}

const CAS_LOCK: &str = r#"
kernel void locked(global int *lock, global int *sum) {
    while (atomic_cmpxchg(lock, 0, 1) != 0)
        ;
    *sum += get_global_id(0);
    atomic_xchg(lock, 0);
}
"#;

#[test]
fn a_compare_exchange_spin_lock_completes() {
    let p = build(CAS_LOCK, "");
    let mut buffers = vec![vec![0; 4], vec![0; 4]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1)];
    run_with(&p, &launch("locked", 32, 32, args), &mut buffers, &options(1)).unwrap();
    assert_eq!(ints(&buffers[1]), vec![(0..32).sum::<i32>()]);
}

#[test]
fn work_items_at_different_barriers_are_reported() {
    let source = "kernel void diverge(global int *out) {\n    int l = get_local_id(0);\n    if (l < 2)\n        barrier(CLK_LOCAL_MEM_FENCE);\n    out[l] = l;\n}\n";
    let p = build(source, "");
    let mut buffers = vec![vec![0; 16]];
    let out = run_with(&p, &launch("diverge", 4, 4, vec![ArgValue::Buffer(0)]), &mut buffers, &options(1)).unwrap();
    assert_eq!(ints(&buffers[0]), vec![0, 1, 2, 3], "the run goes on after the report");
    assert_eq!(out.findings.len(), 1, "{:?}", out.findings);
    let Finding::BarrierDivergence { group, waiting, barrier, other, other_barrier } = &out.findings[0] else {
        panic!("expected barrier divergence, got {:?}", out.findings[0]);
    };
    assert_eq!((*group, *waiting, *other), ([0, 0, 0], [0, 0, 0], [2, 0, 0]));
    let barrier = p.module().location(*barrier);
    assert!(barrier.contains("sched.cl:4:"), "{barrier}");
    assert_eq!(*other_barrier, None, "the other work-item reached the end of the kernel");
}

#[test]
fn the_budget_bounds_the_whole_launch() {
    // Each of the 64 groups takes about 2000 branches: far below a budget of 20000 alone, far
    // above it together.
    let source = "kernel void busy(global int *out) {\n    int s = 0;\n    for (int i = 0; i < 1000; i++)\n        s += i;\n    out[get_global_id(0)] = s;\n}\n";
    let p = build(source, "");
    let run = |budget: u64| {
        let mut buffers = vec![vec![0; 64 * 4]];
        let options = RunOptions { budget, threads: Some(2), ..RunOptions::default() };
        run_with(&p, &launch("busy", 64, 1, vec![ArgValue::Buffer(0)]), &mut buffers, &options)
    };
    let err = run(20_000).expect_err("over budget");
    let ExecError::Budget(message) = err else { panic!("expected a budget error, got {err}") };
    assert!(message.contains("within 20000 branches"), "{message}");
    assert!(message.contains("sched.cl:"), "{message}");
    run(1_000_000).expect("within budget");
}

#[test]
fn the_error_is_the_first_failing_group_in_ndrange_order_whatever_ran_first() {
    // Workers take several groups at a time. Group 40 is slow, so another worker reaches the
    // failing groups from 60 on before group 41, the first that fails, has started.
    let source = "kernel void k(global int *out) {
    int g = get_group_id(0);
    if (g == 40)
        for (int i = 0; i < 200000; i++)
            out[get_global_id(0)] += i;
    if (g == 41)
        __builtin_unreachable();
    if (g >= 60)
        __builtin_unreachable();
    out[get_global_id(0)] = g;
}
";
    let p = build(source, "");
    for threads in [1, 2, 3] {
        let mut buffers = vec![vec![0; 4096 * 4]];
        let err = run_with(&p, &launch("k", 4096, 16, vec![ArgValue::Buffer(0)]), &mut buffers, &options(threads))
            .expect_err("groups fail");
        let ExecError::Fault(message) = err else { panic!("expected a fault, got {err}") };
        assert!(message.ends_with("sched.cl:7:9"), "{threads} threads: {message}");
    }
}

const POLICIES: [Policy; 4] = [Policy::Lockstep, Policy::SubGroups(8), Policy::SubGroups(1), Policy::WorkItems];

fn with_policy(policy: Policy, threads: usize) -> RunOptions {
    RunOptions { policy, threads: Some(threads), ..RunOptions::default() }
}

#[test]
fn every_policy_lets_spinning_work_items_wait_for_the_others() {
    // The hand-off, the ticket lock and the compare-exchange lock need work-items that spin to
    // leave their warp so that the one they wait for can run.
    let handoff = build(PRODUCER_CONSUMER, "-cl-std=CL3.0");
    let tickets = build(TICKET_LOCK, "-cl-std=CL3.0");
    for policy in POLICIES {
        for threads in [1, 2] {
            let mut buffers = vec![vec![0; 16], vec![0; 16], vec![0; 16]];
            let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
            let opts = with_policy(policy, threads);
            run_with(&handoff, &launch("handoff", 256, 64, args), &mut buffers, &opts).unwrap();
            assert_eq!(ints(&buffers[2]), vec![100, 101, 102, 103], "{policy:?}");
        }
        let mut buffers = vec![vec![0; 4], vec![0; 4], vec![0; 64 * 4]];
        let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
        run_with(&tickets, &launch("tickets", 64, 64, args), &mut buffers, &with_policy(policy, 1)).unwrap();
        let expected: Vec<i32> = (0..64).map(|t| (t * 55) % 64).collect();
        assert_eq!(ints(&buffers[2]), expected, "{policy:?}");
    }
}

#[test]
fn every_policy_computes_the_same_tree_reduction_and_finds_the_same_divergence() {
    let source = r#"
int add(int a, int b) { return a + b; }
kernel void tree(global const int *in, global int *out, local int *s) {
    int l = get_local_id(0), n = get_local_size(0);
    s[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = n / 2; h > 0; h /= 2) {
        if (l < h)
            s[l] = add(s[l], s[l + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = s[0];
    if (l % 3 == 0)
        barrier(CLK_LOCAL_MEM_FENCE);
}
"#;
    let p = build(source, "");
    let input: Vec<u8> = (0..256i32).flat_map(|v| (v * v % 97).to_le_bytes()).collect();
    let mut reference = None;
    for policy in POLICIES {
        let mut buffers = vec![input.clone(), vec![0; 16]];
        let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Local(64 * 4)];
        let out = run_with(&p, &launch("tree", 256, 64, args), &mut buffers, &with_policy(policy, 2)).unwrap();
        let divergences = out.findings.iter().filter(|f| matches!(f, Finding::BarrierDivergence { .. })).count();
        // One finding for the barrier (the four groups' occurrences are counted in it).
        assert_eq!(divergences, 1, "{policy:?}: {:?}", out.findings);
        let sums: Vec<i32> = (0..4).map(|g| (g * 64..(g + 1) * 64).map(|v| v * v % 97).sum()).collect();
        assert_eq!(ints(&buffers[1]), sums, "{policy:?}");
        let got = (buffers, out.findings.len());
        assert_eq!(reference.get_or_insert_with(|| got.clone()), &got, "{policy:?}");
    }
}

const QUEUE: &str = r#"
// Each work-item takes a slot in a shared queue: the order of the atomics decides the output.
kernel void queue(global int *head, global int *out) {
    int slot = atomic_inc(head);
    out[slot] = get_global_id(0);
}
"#;

/// Picks the last waiting work-item: the reverse of the canonical order.
struct Last;

impl Chooser for Last {
    fn choose(&mut self, ready: &[clrace::exec::Choice]) -> usize {
        ready.len() - 1
    }
}

#[test]
fn a_stepping_run_orders_atomics_across_groups_as_its_chooser_says_and_replays_exactly() {
    let p = build(QUEUE, "");
    let run = |chooser: &mut dyn Chooser| {
        let mut buffers = vec![vec![0; 4], vec![0; 8 * 4]];
        let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1)];
        let (out, choices) =
            run_stepped(&p, &launch("queue", 8, 4, args), &mut buffers, &RunOptions::default(), chooser).unwrap();
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        (ints(&buffers[1]), choices)
    };
    let (canonical, first) = run(&mut InOrder);
    assert_eq!(canonical, (0..8).collect::<Vec<_>>());
    assert_eq!(first.len(), 8, "one choice per atomic");
    let (reversed, choices) = run(&mut Last);
    assert_eq!(reversed, (0..8).rev().collect::<Vec<_>>(), "group 1's work-items went first");
    assert_eq!((choices[0].group, choices[0].item), (1, 3));
    let mut replay = Replay::new(choices.clone());
    let (again, replayed) = run(&mut replay);
    assert_eq!((again, replayed), (reversed, choices));
    assert_eq!(replay.mismatches, 0);
}

#[test]
fn a_stepping_run_completes_a_lock_whatever_the_choices() {
    // The compare-exchange lock of a group: whichever work-item the chooser lets in, the
    // others wait (each re-tries only when chosen) and the sum is complete.
    let p = build(CAS_LOCK, "");
    for chooser in [&mut InOrder as &mut dyn Chooser, &mut Last] {
        let mut buffers = vec![vec![0; 4], vec![0; 4]];
        let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1)];
        run_stepped(&p, &launch("locked", 8, 8, args), &mut buffers, &RunOptions::default(), chooser).unwrap();
        assert_eq!(ints(&buffers[1]), vec![(0..8).sum::<i32>()]);
    }
}

#[test]
fn divergent_calls_early_returns_switches_and_breaks_reconverge_under_every_policy() {
    // Work-items part at a switch, inside a helper with an early return and a loop with a
    // data-dependent break, call it from different paths, and meet again at a barrier.
    let source = r#"
int steps(int x) {
    if (x < 0)
        return -1;
    int n = 0;
    while (x != 1) {
        if (n > 40)
            break;
        x = (x % 2) ? 3 * x + 1 : x / 2;
        n++;
    }
    return n;
}
kernel void paths(global int *out, local int *s) {
    int l = get_local_id(0), g = get_global_id(0);
    int v;
    switch (g % 4) {
    case 0: v = steps(g + 1); break;
    case 1: v = steps(-g); break;
    case 2: v = 2 * steps(g + 7); break;
    default: v = g; break;
    }
    s[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = s[(l + 1) % get_local_size(0)];
}
"#;
    fn steps(mut x: i32) -> i32 {
        if x < 0 {
            return -1;
        }
        let mut n = 0;
        while x != 1 {
            if n > 40 {
                break;
            }
            x = if x % 2 != 0 { 3 * x + 1 } else { x / 2 };
            n += 1;
        }
        n
    }
    let value = |g: i32| match g % 4 {
        0 => steps(g + 1),
        1 => steps(-g),
        2 => 2 * steps(g + 7),
        _ => g,
    };
    let expected: Vec<i32> = (0..96).map(|g| value(g / 32 * 32 + (g % 32 + 1) % 32)).collect();
    let p = build(source, "");
    for policy in POLICIES {
        let mut buffers = vec![vec![0; 96 * 4]];
        let args = vec![ArgValue::Buffer(0), ArgValue::Local(32 * 4)];
        let out = run_with(&p, &launch("paths", 96, 32, args), &mut buffers, &with_policy(policy, 2)).unwrap();
        assert!(out.findings.is_empty(), "{policy:?}: {:?}", out.findings);
        assert_eq!(ints(&buffers[0]), expected, "{policy:?}");
    }
}

const CAS_LOCKS_WRITING_PRIVATE: &str = r#"
// The C11 lock: a failed exchange writes the value it read into `e` (private memory, through a
// generic pointer), which the loop sets back to 0.
kernel void cas20(global atomic_uint *l, global int *x, global int *A) {
    uint e = 0;
    while (!atomic_compare_exchange_strong_explicit(l, &e, 1, memory_order_acquire,
                                                    memory_order_acquire, memory_scope_device))
        e = 0;
    int a = *x;
    *x = a + 1;
    atomic_store_explicit(l, 0, memory_order_release, memory_scope_device);
    A[get_global_id(0)] = a;
}

// A store of an unchanged value through a generic pointer in the spin.
kernel void cas12(global volatile uint *l, global int *x, global int *A) {
    uint e = 1;
    uint *g = &e;
    while (atomic_cmpxchg(l, 0, 1) != 0)
        *g = 1;
    int a = *x;
    *x = a + 1;
    atomic_xchg(l, 0);
    A[get_global_id(0)] = a + (int)e - 1;
}
"#;

#[test]
fn a_spin_that_writes_private_memory_and_sets_it_back_still_yields() {
    // Stores to private memory that leave it as it was at the last try do not end a spin: the
    // waiter yields to the holder and both finish, within a budget a spin never seen exhausts.
    let p = build(CAS_LOCKS_WRITING_PRIVATE, "-cl-std=CL2.0");
    for kernel in ["cas20", "cas12"] {
        for policy in POLICIES {
            let mut buffers = vec![vec![0; 4], vec![0; 4], vec![0xff; 8]];
            let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
            let opts = RunOptions { budget: 2_000_000, ..with_policy(policy, 1) };
            run_with(&p, &launch(kernel, 2, 2, args), &mut buffers, &opts)
                .unwrap_or_else(|e| panic!("{kernel}, {policy:?}: {e}"));
            assert_eq!(ints(&buffers[1]), vec![2], "{kernel}, {policy:?}");
            let mut taken = ints(&buffers[2]);
            taken.sort();
            assert_eq!(taken, vec![0, 1], "{kernel}, {policy:?}");
        }
    }
}

#[test]
fn a_counter_in_private_memory_is_progress_not_a_spin() {
    // A volatile counter lives in private memory: a work-item polling a flag nobody sets a
    // bounded number of times changes it every try, so it is not taken for a spin (a hang).
    let source = "kernel void poll(global volatile int *flag, global int *out) {\n    volatile int i = 0;\n    while (atomic_add(flag, 0) == 0 && i < 1000)\n        i++;\n    out[0] = i;\n}\n";
    let p = build(source, "");
    let mut buffers = vec![vec![0; 4], vec![0; 4]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1)];
    run_with(&p, &launch("poll", 1, 1, args), &mut buffers, &options(1)).unwrap();
    assert_eq!(ints(&buffers[1]), vec![1000]);
}
