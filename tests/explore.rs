//! Schedule exploration (`clrace check --explore`): the bugs it must find in kernels that
//! synchronise with atomics (ports of the CD paper's benchmarks among them), the correct twins on
//! which it must find nothing at any bound, the canonical order and the delays it applies,
//! assertions (`clrace.h`) with and without exploration, races and out-of-bounds accesses that
//! only a delay shows, the race detector with every group alive at once, shards that add up to
//! the whole, and deterministic output at any thread count.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clrace::exec::{Chooser, InOrder, RunOptions, run_stepped};
use clrace::explore::chooser::{Point, Scheduler};
use clrace::{ArgValue, Program};
use serde_json::Value;

mod common;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/explore")
}

fn check(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clrace")).arg("check").args(args).current_dir(dir()).output().unwrap()
}

/// `check --no-races --explore --format json ARGS SIM`: the exit status and every JSON object.
fn explore(sim: &str, args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = vec!["--no-races"];
    all.extend_from_slice(args);
    explore_detecting(sim, &all)
}

/// `check --explore --format json ARGS SIM`, with the race detector: the exit status and every
/// JSON object.
fn explore_detecting(sim: &str, args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = vec!["--explore", "--format", "json"];
    all.extend_from_slice(args);
    all.push(sim);
    let out = check(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let objects: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}\n{stderr}")))
        .collect();
    (out.status.code().unwrap_or(-1), objects)
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

fn summary(objects: &[Value]) -> &Value {
    objects.iter().find(|o| o["kind"] == "summary").expect("a summary")
}

/// Nothing is found at bounds 0 to `max`, and the summary counts the schedules.
fn clean_at_every_bound(sim: &str, max: usize) {
    clean_at_every_bound_with(sim, max, &["--no-races"]);
}

/// Nothing at all is found (no object but the summary) at bounds 0 to `max` with `args`.
fn clean_at_every_bound_with(sim: &str, max: usize, args: &[&str]) {
    for k in 0..=max {
        let bound = k.to_string();
        let mut all = vec!["--explore-bound", &bound];
        all.extend_from_slice(args);
        let (status, objects) = explore_detecting(sim, &all);
        assert_eq!(status, 0, "{sim} at K={k}: {objects:?}");
        assert!(objects.iter().all(|o| o["kind"] == "summary"), "{sim} K={k}: {objects:?}");
        let schedules = summary(&objects)["schedules"].as_u64().unwrap();
        assert!(if k == 0 { schedules == 1 } else { schedules > 1 }, "{sim} K={k}: {schedules} schedules");
    }
}

#[test]
fn a_work_queue_depends_on_the_order_of_its_atomics_but_not_as_a_multiset() {
    let (status, objects) = explore("queue.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 1, "{objects:?}");
    let results = of_kind(&objects, "schedule-dependent-result");
    let first = results.first().expect("the slot order changes");
    assert_eq!(first["buffer"], "out");
    assert_eq!(first["offset"], 0);
    assert_eq!(first["element"], "int");
    assert_eq!(first["canonical"], serde_json::json!([0, 1]));
    assert_eq!(first["alternate"], serde_json::json!([1, 0]));
    let delays = first["delays"].as_array().unwrap();
    assert_eq!(delays.len(), 1);
    assert_eq!((delays[0]["file"].as_str(), delays[0]["line"].as_u64()), (Some("queue.cl"), Some(4)));
    assert_eq!(delays[0]["global_id"], serde_json::json!([0, 0, 0]));
    assert_eq!(delays[0]["operation"], "atomic_inc");
    // The pair whose order flipped, with the values each read and wrote in the canonical run.
    let side = |s: &Value| (s["operation"].clone(), s["global_id"][0].clone(), s["read"].clone(), s["wrote"].clone());
    assert_eq!(side(&first["conflict"]["first"]), ("atomic_inc".into(), 0.into(), 0.into(), 1.into()));
    assert_eq!(side(&first["conflict"]["second"]), ("atomic_inc".into(), 1.into(), 1.into(), 2.into()));
    // Reported once per range: no two findings overlap.
    let mut ranges: Vec<(u64, u64)> = results
        .iter()
        .map(|r| {
            let offset = r["offset"].as_u64().unwrap();
            (offset, offset + 4 * r["canonical"].as_array().unwrap().len() as u64)
        })
        .collect();
    ranges.sort();
    assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0), "{ranges:?}");
    assert_eq!(summary(&objects)["schedules_truncated"], true, "K=1 leaves longer sequences unexplored");
    // The head counter's final value is the same in every schedule: only 'out' differs.
    assert!(results.iter().all(|r| r["buffer"] == "out"), "{results:?}");

    for k in ["1", "2"] {
        let (status, objects) = explore("queue.sim", &["--explore-bound", k, "--compare-multiset", "out"]);
        assert_eq!(status, 0, "as a multiset the queue is the same: {objects:?}");
        assert!(of_kind(&objects, "schedule-dependent-result").is_empty());
    }
}

#[test]
fn an_integer_atomic_sum_is_the_same_in_every_schedule() {
    clean_at_every_bound("sum.sim", 3);
}

#[test]
fn a_correct_compare_exchange_lock_gives_the_same_sum_and_never_deadlocks() {
    clean_at_every_bound("cas_lock.sim", 2);
}

#[test]
fn a_last_group_reduction_that_re_reads_its_counter_is_found_and_the_correct_one_is_not() {
    let (status, objects) = explore("last_group.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 1, "{objects:?}");
    let results = of_kind(&objects, "schedule-dependent-result");
    let out = results.iter().find(|r| r["buffer"] == "out").expect("the total is copied out early");
    assert_eq!(out["canonical"], serde_json::json!([136]));
    assert_ne!(out["alternate"], serde_json::json!([136]));
    assert_eq!(out["delays"].as_array().unwrap().len(), 1);
    clean_at_every_bound("last_group_ok.sim", 2);
}

#[test]
fn a_lock_order_inversion_is_a_deadlock_under_one_delay_and_not_a_failure() {
    let (status, objects) = explore("lock_order.sim", &["--explore-bound", "0"]);
    assert_eq!(status, 0, "the canonical order takes both locks in turn: {objects:?}");
    let (status, objects) = explore("lock_order.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 1, "{objects:?}");
    assert!(of_kind(&objects, "error").is_empty(), "a deadlock is a finding, not a run failure: {objects:?}");
    let deadlocks = of_kind(&objects, "deadlock");
    assert_eq!(deadlocks.len(), 1, "{objects:?}");
    let waiting = deadlocks[0]["waiting"].as_array().unwrap();
    let mut ids: Vec<u64> = waiting.iter().map(|w| w["global_id"][0].as_u64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, vec![0, 1], "both work-items wait: {waiting:?}");
    assert!(waiting.iter().all(|w| w["line"] == 8 && w["file"] == "lock_order.cl"), "{waiting:?}");
    assert_eq!(deadlocks[0]["delays"].as_array().unwrap().len(), 1);
}

#[test]
fn text_output_names_the_buffer_both_values_the_delay_and_the_truncation() {
    let out = check(&["--no-races", "--explore", "--explore-bound", "1", "queue.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("Schedule-dependent result in global memory: 'out' at byte offset 0, as int"), "{text}");
    assert!(text.contains("canonical: [0, 1]") && text.contains("alternate: [1, 0]"), "{text}");
    assert!(text.contains("Delayed: the atomic of Global(0,0,0)\n\tAt queue.cl:4:"), "{text}");
    let flipped = "Order flipped: the atomic_inc of Global(0,0,0) at queue.cl:4 (read 0, wrote 1) had run before \
                   the atomic_inc of Global(1,0,0) at queue.cl:4 (read 1, wrote 2)";
    assert!(text.contains(flipped), "{text}");
    assert!(text.contains("explored 8 schedule(s) (bound 1), truncated"), "{text}");
}

#[test]
fn exploration_output_is_the_same_on_every_run_and_at_every_thread_count() {
    let run = |sim: &str, threads: &str, races: bool| {
        let mut args = vec!["--explore", "--format", "json", "--threads", threads, sim];
        if !races {
            args.insert(0, "--no-races");
        }
        let out = check(&args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned(), stdout)
    };
    let sims = [
        "queue.sim",
        "last_group.sim",
        "cas_lock.sim",
        "lock_order.sim",
        "first_taker.sim",
        "bintree.sim",
        "bintree_xchg.sim",
    ];
    for sim in sims {
        for races in [false, true] {
            let first = run(sim, "1", races);
            assert_eq!(first, run(sim, "1", races), "{sim}: two runs differ");
            assert_eq!(first, run(sim, "2", races), "{sim}: --threads 1 and 2 differ");
            assert_eq!(first, run(sim, "2", races), "{sim}: two runs at --threads 2 differ");
            assert!(first.1.contains("\"schedules\":"), "{}", first.1);
        }
    }
    // Groups that take two locks in opposite orders: in the default mode two threads sometimes
    // interleave them into the deadlock (a forward-progress hang); under --explore the check
    // runs its groups one at a time and the deadlock is the exploration's finding, every time.
    for _ in 0..10 {
        let (status, stderr, _) = run("lock_order.sim", "2", true);
        assert_eq!(status, Some(1), "{stderr}");
        assert!(stderr.contains("\"kind\":\"deadlock\"") && !stderr.contains("\"kind\":\"error\""), "{stderr}");
    }
}

#[test]
fn an_unknown_multiset_buffer_is_a_usage_error() {
    let out = check(&["--explore", "--compare-multiset", "nope", "queue.sim"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--compare-multiset nope"));
}

fn queue_program() -> Program {
    let source = std::fs::read_to_string(dir().join("queue.cl")).unwrap();
    Program::from_source(&source, &dir().join("queue.cl"), "").unwrap()
}

fn stepped(program: &Program, chooser: &mut dyn Chooser) -> (Vec<i32>, Vec<(u64, u32)>) {
    let mut buffers = vec![vec![0; 4], vec![0; 32]];
    let launch = common::launch_1d("queue", 8, 4, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)]);
    let (_, record) = run_stepped(program, &launch, &mut buffers, &RunOptions::default(), chooser).unwrap();
    let out = buffers[1].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    (out, record.iter().map(|c| (c.group, c.item)).collect())
}

#[test]
fn without_delays_the_scheduler_is_the_canonical_order_and_a_delay_switches_to_the_next_work_item() {
    let p = queue_program();
    let cancel = || Arc::new(AtomicBool::new(false));
    let canonical = stepped(&p, &mut InOrder);
    assert_eq!(stepped(&p, &mut Scheduler::new(&[], 2, 4, cancel())), canonical);
    // Delaying group 0's last work-item lets group 1's first one take its slot; delaying the
    // last work-item of all wraps around to the first group (which has finished: nothing else
    // waits, so the delay changes nothing).
    let delay = [Point { group: 0, item: 3, loc: canonical_loc(&p), instance: 0 }];
    let (out, order) = stepped(&p, &mut Scheduler::new(&delay, 2, 4, cancel()));
    assert_eq!(out, vec![0, 1, 2, 4, 3, 5, 6, 7]);
    assert_eq!(order[3..5], [(1, 0), (0, 3)]);
    let last = [Point { group: 1, item: 3, loc: canonical_loc(&p), instance: 0 }];
    assert_eq!(stepped(&p, &mut Scheduler::new(&last, 2, 4, cancel())).0, canonical.0);
    // A point that never occurs (a second instance) changes nothing.
    let never = [Point { group: 0, item: 0, loc: canonical_loc(&p), instance: 1 }];
    assert_eq!(stepped(&p, &mut Scheduler::new(&never, 2, 4, cancel())), canonical);
}

/// The source location of the queue's only atomic.
fn canonical_loc(p: &Program) -> u32 {
    struct First(Option<u32>);
    impl Chooser for First {
        fn choose(&mut self, ready: &[clrace::exec::Choice]) -> usize {
            self.0.get_or_insert(ready[0].loc);
            0
        }
    }
    let mut first = First(None);
    stepped(p, &mut first);
    first.0.unwrap()
}

#[test]
fn many_work_items_spinning_on_a_flag_nobody_sets_are_a_deadlock_found_quickly() {
    // More spinners than the default mode's spin count (after which it restarts a spinner's
    // count, which a stepped run does not): the deadlock is seen within a round or two.
    let source = "kernel void never(global atomic_int *flag, global int *out) {\n    while (atomic_load(flag) == 0)\n        ;\n    out[get_global_id(0)] = 1;\n}\n";
    let p = common::build_program("never.cl", source, "-cl-std=CL3.0");
    let launch = common::launch_1d("never", 256, 64, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)]);
    let inputs = vec![vec![0; 4], vec![0; 1024]];
    let compare = clrace::explore::compare::writable_buffers(&launch, &p.kernel("never").unwrap().args);
    let options = clrace::explore::Options {
        bound: 2,
        max_schedules: 4,
        time: Some(std::time::Duration::from_secs(60)),
        threads: Some(1),
        run: RunOptions::default(),
        compare,
        races: None,
        shard: None,
    };
    let started = std::time::Instant::now();
    let found = clrace::explore::explore(&p, &launch, &inputs, &options).unwrap();
    assert!(started.elapsed().as_secs() < 10, "took {:?}", started.elapsed());
    assert_eq!(found.schedules, 1, "the canonical schedule deadlocks: nothing to compare with");
    let [clrace::explore::ScheduleFinding::Deadlock { waiting, waiting_count, message, delays }] = &found.findings[..]
    else {
        panic!("expected one deadlock, got {:?}", found.findings);
    };
    assert_eq!(*waiting_count, 256);
    assert_eq!(waiting.len(), clrace::explore::MAX_WAITERS);
    assert_eq!(waiting[0].global_id, [0, 0, 0]);
    assert!(p.module().location(waiting[0].loc).contains("never.cl:2:"), "{}", p.module().location(waiting[0].loc));
    assert!(message.is_none() && delays.is_empty());
}

#[test]
fn a_lock_tested_and_set_in_two_atomics_needs_two_delays_and_its_correct_twin_none_at_any_bound() {
    let (status, objects) = explore("broken_lock.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 0, "one delay cannot put both work-items inside: {objects:?}");
    let (status, objects) = explore("broken_lock.sim", &["--explore-bound", "2"]);
    assert_eq!(status, 1, "{objects:?}");
    let results = of_kind(&objects, "schedule-dependent-result");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["buffer"], "counter");
    assert_eq!(
        (results[0]["canonical"].clone(), results[0]["alternate"].clone()),
        (serde_json::json!([2]), serde_json::json!([1]))
    );
    let delays = results[0]["delays"].as_array().unwrap();
    assert_eq!(delays.len(), 2, "{delays:?}");
    // The first delay lets the other work-item pass the test while this one has not set the
    // lock yet (line 8); the second interleaves them in the critical section.
    assert_eq!((delays[0]["line"].as_u64(), delays[0]["global_id"][0].as_u64()), (Some(8), Some(0)));
    assert_eq!(delays[1]["global_id"][0], 1);
    clean_at_every_bound("cas_lock_ok.sim", 3);
}

/// What makes two race reports one: the pair of instructions and access kinds, and the space.
fn race_keys(races: &[clrace::detect::Race]) -> Vec<String> {
    let mut keys: Vec<String> = races
        .iter()
        .map(|r| {
            // Either side may come first: the order the work-items ran in differs.
            let mut sides: Vec<String> = r.accesses.iter().map(|a| format!("{}:{:?}", a.loc, a.access)).collect();
            sides.sort();
            format!("{} {} {}", r.write_write, r.local, sides.join(" "))
        })
        .collect();
    keys.sort();
    keys
}

#[test]
fn the_detector_finds_the_same_races_with_every_work_group_alive_at_once_on_one_thread() {
    // Every launch of the race corpus, run once as the check runs it (groups one after the
    // other on one thread) and once as exploration runs a schedule (every group started before
    // any runs, work-items stepped at their atomics, groups ended in NDRange order): the same
    // races, for racy kernels and their race-free twins alike. Kernels whose control flow
    // depends on the order of atomics across groups are left out.
    let races = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/races");
    let mut sims: Vec<PathBuf> = std::fs::read_dir(&races)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sim"))
        .collect();
    sims.sort();
    let (mut compared, mut racy) = (0, 0);
    for sim in &sims {
        let text = clrace::launch::read_file(sim).unwrap();
        if text.contains("clrace-test: order-dependent") {
            continue;
        }
        let header = clrace::launch::parse_header(&text).unwrap();
        let source_path = races.join(&header.program);
        let Ok(source) = std::fs::read_to_string(&source_path) else { continue };
        let program = Program::from_source(&source, &source_path, header.build_options.as_deref().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{}: {e}", sim.display()));
        let kernel = program.kernel(&header.kernel).unwrap().clone();
        let data = clrace::launch::parse_args(&text, &header, &kernel, 1).unwrap();
        let options = RunOptions { threads: Some(1), ..RunOptions::default() };
        let grouped = {
            let detector = clrace::detect::Detector::new(&program, &data.launch, Default::default());
            let mut buffers = data.buffers.clone();
            clrace::exec::run_hooked(&program, &data.launch, &mut buffers, &options, &&detector)
                .map(|_| detector.races())
        };
        let stepped = {
            let detector = clrace::detect::Detector::new(&program, &data.launch, Default::default());
            let mut buffers = data.buffers.clone();
            let groups: u64 = (0..3).map(|d| data.launch.global_size[d].div_ceil(data.launch.local_size[d])).product();
            let items: u64 = data.launch.local_size.iter().product();
            let mut scheduler = Scheduler::new(&[], groups, items, Arc::new(AtomicBool::new(false)));
            clrace::exec::run_stepped_hooked(&program, &data.launch, &mut buffers, &options, &mut scheduler, &&detector)
                .map(|_| detector.races())
        };
        let (Ok(grouped), Ok(stepped)) = (grouped, stepped) else { continue };
        let (grouped, stepped) = (race_keys(&grouped), race_keys(&stepped));
        if sim.ends_with("zero_then_id.sim") {
            // Each work-item stores 0, then its id, to one word. Alone, a work-item's second
            // store replaces its first in the shadow before the next work-item runs, so the
            // zeros' race with each other (uniform) is not met; every other pair is.
            assert!(stepped.iter().all(|k| grouped.contains(k)) && stepped.len() + 1 == grouped.len(), "{stepped:?}");
        } else {
            assert_eq!(grouped, stepped, "{}", sim.display());
        }
        compared += 1;
        racy += !grouped.is_empty() as usize;
    }
    assert!(compared >= 80 && racy >= 30, "{compared} launches compared, {racy} racy");
}

#[test]
fn a_failed_assertion_is_a_finding_of_the_plain_check_and_the_run_goes_on() {
    let out = check(&["--format", "json", "assert.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let objects: Vec<Value> = stderr.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let failed = of_kind(&objects, "assertion-failed");
    assert_eq!(failed.len(), 2, "{stderr}");
    assert_eq!(failed[0]["message"], "in[i] < 3");
    assert_eq!((failed[0]["file"].as_str(), failed[0]["line"].as_u64()), (Some("assert.cl"), Some(8)));
    assert_eq!(failed[0]["global_id"], serde_json::json!([3, 0, 0]));
    assert_eq!(failed[0]["delays"], serde_json::json!([]));
    // GPUVerify's spelling has no message.
    assert_eq!((failed[1]["message"].clone(), failed[1]["line"].as_u64()), (Value::Null, Some(9)));
    assert_eq!(summary(&objects)["assertions_failed"], 2);
    // Work-item 3 carried on and wrote its element.
    assert!(String::from_utf8_lossy(&out.stdout).contains("out[3] = 6"), "{}", String::from_utf8_lossy(&out.stdout));
    let text = check(&["assert.sim"]);
    let text = String::from_utf8_lossy(&text.stderr);
    assert!(text.contains("Assertion failed: in[i] < 3\n\tKernel: checked\n\tWork-item: Global(3,0,0)"), "{text}");
    assert!(text.contains("2 failed assertion(s)"), "{text}");
    let ok = check(&["--format", "json", "assert_ok.sim"]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(!String::from_utf8_lossy(&ok.stderr).contains("assertion-failed"));
}

#[test]
fn an_assertion_in_a_lock_tested_and_set_in_two_atomics_fails_under_two_delays_only() {
    let (status, objects) = explore("lock_assert.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 0, "{objects:?}");
    let (status, objects) = explore("lock_assert.sim", &["--explore-bound", "2"]);
    assert_eq!(status, 1, "{objects:?}");
    let failed = of_kind(&objects, "assertion-failed");
    assert_eq!(failed.len(), 1, "{objects:?}");
    assert_eq!(failed[0]["message"], "others == 0");
    assert_eq!(failed[0]["delays"].as_array().unwrap().len(), 2, "{:?}", failed[0]);
    assert_eq!(summary(&objects)["assertions_failed"], 1);
    clean_at_every_bound_with("lock_assert_ok.sim", 3, &[]);
}

#[test]
fn a_tree_insert_with_a_plain_store_where_a_compare_exchange_belongs_races_and_loses_a_node_under_one_delay() {
    let (status, objects) = explore_detecting("bintree.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 1, "{objects:?}");
    assert_eq!(summary(&objects)["work_items"], 3);
    // The detector: the plain store races with another work-item's atomic read of the child.
    let races = of_kind(&objects, "race");
    let store_vs_atomic = races.iter().any(|r| {
        let kinds: Vec<&str> =
            r["accesses"].as_array().unwrap().iter().map(|a| a["access"].as_str().unwrap()).collect();
        let lines: Vec<u64> = r["accesses"].as_array().unwrap().iter().map(|a| a["line"].as_u64().unwrap()).collect();
        kinds.contains(&"store") && kinds.contains(&"atomic") && lines.contains(&29) && lines.contains(&27)
    });
    assert!(store_vs_atomic, "{races:?}");
    // The exploration: delaying work-item 0 at its plain store lets work-item 1 find the same
    // child empty; work-item 0's store then unlinks its node.
    let results = of_kind(&objects, "schedule-dependent-result");
    assert_eq!(results.len(), 1, "{results:?}");
    let result = results[0];
    assert_eq!(result["buffer"], "out");
    assert_eq!(result["canonical"], serde_json::json!([20, 30, 50, 70, 4]));
    assert_eq!(result["alternate"], serde_json::json!([30, 50, 70, 0, 3]), "the node of key 20 is lost");
    let delays = result["delays"].as_array().unwrap();
    assert_eq!(delays.len(), 1, "{delays:?}");
    assert_eq!(
        (delays[0]["line"].as_u64(), delays[0]["operation"].as_str(), delays[0]["global_id"][0].as_u64()),
        (Some(29), Some("store"), Some(0))
    );
    // The pair whose order flipped, with what each did in the canonical schedule: the store
    // linked node 1, which work-item 1's atomic read then found.
    let conflict = &result["conflict"];
    assert_eq!(conflict["first"]["operation"], "store");
    assert_eq!((conflict["first"]["read"].clone(), conflict["first"]["wrote"].clone()), (Value::Null, 1.into()));
    assert_eq!(conflict["second"]["operation"], "atomic_add");
    assert_eq!((conflict["second"]["global_id"][0].as_u64(), conflict["second"]["read"].as_i64()), (Some(1), Some(1)));
    // Without delays, plain accesses change nothing: the same single schedule.
    let (status, objects) = explore("bintree.sim", &["--explore-bound", "0"]);
    assert_eq!((status, summary(&objects)["schedules"].as_u64()), (0, Some(1)), "{objects:?}");
    // Its twin links with a compare-exchange: clean at every bound, plain accesses watched.
    clean_at_every_bound_with("bintree_ok.sim", 3, &[]);
}

#[test]
fn a_tree_insert_with_an_exchange_where_a_compare_exchange_belongs_loses_a_node_under_one_delay() {
    // All-atomic, so no race: only the schedule shows it.
    let (status, objects) = explore_detecting("bintree_xchg.sim", &["--explore-bound", "1"]);
    assert!(of_kind(&objects, "race").is_empty(), "{objects:?}");
    assert_eq!(status, 1, "{objects:?}");
    let results = of_kind(&objects, "schedule-dependent-result");
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["buffer"], "out");
    assert_eq!(results[0]["canonical"], serde_json::json!([20, 30, 50, 70, 4]));
    let alternate = results[0]["alternate"].as_array().unwrap();
    assert_eq!(alternate[4], 3, "one of the four nodes is lost: {alternate:?}");
    assert_eq!(results[0]["delays"].as_array().unwrap().len(), 1);
    assert_eq!(summary(&objects)["work_items"], 3);
    // Its twin's trees differ in shape between schedules, in __local memory only.
    clean_at_every_bound_with("bintree_ok.sim", 3, &[]);
}

#[test]
fn a_minimum_kept_with_a_compare_exchange_against_a_re_read_loses_atomicity_under_one_delay() {
    let (status, objects) = explore_detecting("amin.sim", &["--explore-bound", "1"]);
    assert_eq!(status, 1, "{objects:?}");
    let results = of_kind(&objects, "schedule-dependent-result");
    assert_eq!(results.len(), 1, "{results:?}");
    let bits = |f: f32| serde_json::json!([f.to_bits()]);
    assert_eq!((results[0]["canonical"].clone(), results[0]["alternate"].clone()), (bits(3.0), bits(5.0)));
    let delays = results[0]["delays"].as_array().unwrap();
    assert_eq!((delays.len(), delays[0]["line"].as_u64()), (1, Some(11)), "the re-read is delayed: {delays:?}");
    clean_at_every_bound_with("amin_ok.sim", 3, &[]);
}

#[test]
fn races_and_out_of_bounds_accesses_that_only_a_delay_shows_are_reported_with_the_delay() {
    let multiset = ["--compare-multiset", "data"];
    let (status, objects) = explore_detecting("first_taker.sim", &[&["--explore-bound", "0"][..], &multiset].concat());
    assert_eq!(status, 0, "nothing is wrong in the canonical order: {objects:?}");
    let (status, objects) = explore_detecting("first_taker.sim", &[&["--explore-bound", "1"][..], &multiset].concat());
    assert_eq!(status, 1, "{objects:?}");
    let races = of_kind(&objects, "race");
    assert_eq!(races.len(), 1, "{objects:?}");
    assert_eq!((races[0]["race_type"].as_str(), races[0]["buffer"].as_str()), (Some("write-write"), Some("data")));
    let oob = of_kind(&objects, "out-of-bounds");
    assert_eq!(oob.len(), 1, "{objects:?}");
    assert_eq!((oob[0]["buffer"].as_str(), oob[0]["global_id"][0].as_u64()), (Some("mark"), Some(1)));
    for found in [races[0], oob[0]] {
        let delays = found["delays"].as_array().unwrap();
        assert_eq!(delays.len(), 1, "{found:?}");
        assert_eq!((delays[0]["line"].as_u64(), delays[0]["global_id"][0].as_u64()), (Some(7), Some(0)));
    }
    let s = summary(&objects);
    assert_eq!((s["races"].as_u64(), s["out_of_bounds"].as_u64()), (Some(1), Some(1)), "{s:?}");
    clean_at_every_bound_with("first_taker_ok.sim", 2, &multiset);
}

#[test]
fn shards_of_an_exploration_add_up_to_the_whole() {
    let whole = |args: &[&str]| {
        let mut all = vec!["--no-races", "--explore", "--format", "json", "--explore-bound", "2"];
        all.extend_from_slice(args);
        all.push("queue.sim");
        let out = check(&all);
        let objects: Vec<Value> =
            String::from_utf8_lossy(&out.stderr).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        objects
    };
    // The bytes the findings cover: in one exploration a range is reported by the first schedule
    // that changed it, in shards by the first of each shard, so the shards may cover more.
    let bytes = |objects: &[Value]| {
        let mut covered = std::collections::BTreeSet::new();
        for o in of_kind(objects, "schedule-dependent-result") {
            assert_eq!(o["buffer"], "out");
            let offset = o["offset"].as_u64().unwrap();
            covered.extend(offset..offset + 4 * o["canonical"].as_array().unwrap().len() as u64);
        }
        covered
    };
    let all = whole(&[]);
    let (mut union, mut schedules) = (std::collections::BTreeSet::new(), 0);
    for shard in ["0/3", "1/3", "2/3"] {
        let part = whole(&["--explore-shard", shard]);
        schedules += summary(&part)["schedules"].as_u64().unwrap();
        assert_eq!(summary(&part)["schedules_truncated"], summary(&all)["schedules_truncated"]);
        union.extend(bytes(&part));
    }
    assert!(bytes(&all).is_subset(&union), "{:?} {union:?}", bytes(&all));
    assert_eq!(schedules, summary(&all)["schedules"].as_u64().unwrap());
    let bad = check(&["--explore", "--explore-shard", "3/3", "queue.sim"]);
    assert_eq!(bad.status.code(), Some(2), "{}", String::from_utf8_lossy(&bad.stderr));
}

#[test]
fn exploration_findings_and_assertions_can_be_suppressed() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules");
    std::fs::write(&rules, "schedule-dependent-result:queue\nassertion-failed:assert.cl:8\n").unwrap();
    let rules = rules.to_str().unwrap();
    let (status, objects) = explore("queue.sim", &["--explore-bound", "1", "--suppressions", rules]);
    assert_eq!(status, 0, "{objects:?}");
    assert!(summary(&objects)["suppressed"].as_u64().unwrap() > 0);
    // The second assertion (line 9) is not suppressed.
    let out = check(&["--format", "json", "--suppressions", rules, "assert.sim"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("\"kind\":\"assertion-failed\"").count(), 1, "{stderr}");
    assert!(stderr.contains("\"assertions_failed\":1"), "{stderr}");
}

#[test]
fn a_stepped_run_records_what_each_atomic_read_and_wrote() {
    // The queue: work-item k of the canonical order takes slot k.
    let p = queue_program();
    let mut buffers = vec![vec![0; 4], vec![0; 32]];
    let launch = common::launch_1d("queue", 8, 4, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)]);
    let hooks = clrace::exec::hooks::NoHooks;
    let options = RunOptions::default();
    let (_, record, effects) =
        clrace::exec::run_stepped_watching(&p, &launch, &mut buffers, &options, &mut InOrder, &hooks, &[]).unwrap();
    let values: Vec<(Option<u64>, Option<u64>)> = effects.iter().map(|e| (e.read, e.wrote)).collect();
    let want: Vec<(Option<u64>, Option<u64>)> = (0..8).map(|k| (Some(k), Some(k + 1))).collect();
    assert_eq!(values, want);
    assert!(record.iter().all(|c| !c.plain));
    // A compare-exchange that fails writes nothing; a load writes nothing; a store reads nothing.
    let source = "kernel void take(global int *flag, global int *seen) {\n    int old = atomic_cmpxchg(flag, 0, 7);\n    seen[get_global_id(0)] = atomic_add(flag, 0) + old;\n    atomic_xchg(flag, 7);\n}\n";
    let p = common::build_program("take.cl", source, "");
    let launch = common::launch_1d("take", 2, 2, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)]);
    let mut buffers = vec![vec![0; 4], vec![0; 8]];
    let (_, record, effects) =
        clrace::exec::run_stepped_watching(&p, &launch, &mut buffers, &options, &mut InOrder, &hooks, &[]).unwrap();
    let steps: Vec<(u32, Option<u64>, Option<u64>)> =
        record.iter().zip(&effects).map(|(c, e)| (c.item, e.read, e.wrote)).collect();
    assert_eq!(
        steps,
        vec![
            (0, Some(0), Some(7)), // the compare-exchange that succeeds
            (0, Some(7), Some(7)), // atomic_add(flag, 0)
            (0, Some(7), Some(7)), // the exchange
            (1, Some(7), None),    // the compare-exchange that fails
            (1, Some(7), Some(7)),
            (1, Some(7), Some(7)),
        ]
    );
}

#[test]
fn the_canonical_schedule_watching_plain_accesses_is_the_canonical_schedule_step_for_step() {
    // For every kernel here and of the race corpus: the canonical run, then the same with plain
    // accesses into the bytes its atomics touched stopping too. The same final buffers and the
    // same atomics in the same order with the same values; the plain steps come in between.
    let races = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/races");
    let mut sims: Vec<PathBuf> = [dir(), races.clone()]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sim"))
        .collect();
    sims.sort();
    let (mut watched_plain, mut compared) = (0, 0);
    for sim in &sims {
        let text = clrace::launch::read_file(sim).unwrap();
        let header = clrace::launch::parse_header(&text).unwrap();
        let source_path = sim.parent().unwrap().join(&header.program);
        let Ok(source) = std::fs::read_to_string(&source_path) else { continue };
        let program = Program::from_source(&source, &source_path, header.build_options.as_deref().unwrap_or(""))
            .unwrap_or_else(|e| panic!("{}: {e}", sim.display()));
        let kernel = program.kernel(&header.kernel).unwrap().clone();
        let data = clrace::launch::parse_args(&text, &header, &kernel, 1).unwrap();
        let groups: u64 = (0..3).map(|d| data.launch.global_size[d].div_ceil(data.launch.local_size[d])).product();
        let items: u64 = data.launch.local_size.iter().product();
        let run = |watch: &[(u64, u64)]| {
            let mut buffers = data.buffers.clone();
            let mut scheduler = Scheduler::new(&[], groups, items, Arc::new(AtomicBool::new(false)));
            let options = RunOptions::default();
            let hooks = clrace::exec::hooks::NoHooks;
            let ran = clrace::exec::run_stepped_watching(
                &program,
                &data.launch,
                &mut buffers,
                &options,
                &mut scheduler,
                &hooks,
                watch,
            );
            (
                ran.map(|(_, record, effects)| clrace::explore::conflicts::events(&record, &effects)),
                buffers,
                scheduler.deadlock.is_some(),
            )
        };
        let (plain, plain_buffers, deadlocked) = run(&[]);
        let Ok(plain) = plain else {
            // Deadlocks, and kernels the race corpus has for the emulator's own errors.
            assert!(deadlocked || sim.starts_with(&races), "{}: the canonical run fails", sim.display());
            continue;
        };
        compared += 1;
        let watch = clrace::explore::conflicts::watch(&plain);
        let (watched, watched_buffers, _) = run(&watch);
        let watched = watched.unwrap_or_else(|e| panic!("{}: {e}", sim.display()));
        assert_eq!(plain_buffers, watched_buffers, "{}", sim.display());
        let atomics: Vec<_> = watched
            .iter()
            .filter(|e| !e.plain)
            .map(|e| (e.point.group, e.point.item, e.point.loc, e.op, e.addr, e.read, e.wrote))
            .collect();
        let want: Vec<_> =
            plain.iter().map(|e| (e.point.group, e.point.item, e.point.loc, e.op, e.addr, e.read, e.wrote)).collect();
        assert_eq!(atomics, want, "{}", sim.display());
        watched_plain += watched.iter().filter(|c| c.plain).count();
    }
    assert!(watched_plain > 0, "some kernel has plain accesses into atomically touched bytes");
    assert!(compared >= 100, "{compared} launches compared");
}

/// `clrace run --format json [--suppressions RULES] -- native_sim --reps 1 assert_inline.sim`
/// (the launch file's kernel run on the device, checked by the layer): the exit status and the
/// reports.
fn assertions_in_the_layer(rules: Option<&str>) -> (i32, Vec<Value>) {
    let artefacts = common::artefacts();
    let reports = tempfile::NamedTempFile::new().unwrap();
    let rules_file = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(artefacts.join("clrace"));
    command.args(["run", "--format", "json", "--output"]).arg(reports.path());
    if let Some(rules) = rules {
        std::fs::write(rules_file.path(), rules).unwrap();
        command.arg("--suppressions").arg(rules_file.path());
    }
    command.arg("--").arg(artefacts.join("examples").join("native_sim")).args(["--reps", "1", "assert_inline.sim"]);
    command.current_dir(dir());
    let out = common::run_limited(&mut command, std::time::Duration::from_secs(120));
    let text = std::fs::read_to_string(reports.path()).unwrap();
    let objects = text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    (out.status.code().unwrap_or(-1), objects)
}

#[test]
fn the_layer_takes_suppressed_assertions_out_of_its_summary_line() {
    let (status, reports) = assertions_in_the_layer(None);
    assert_eq!(status, 1, "{reports:?}");
    assert_eq!(summary(&reports)["assertions_failed"], 6, "{reports:?}");
    // The five failures at line 13 are one report: suppressing it takes all five out.
    let (status, reports) = assertions_in_the_layer(Some("assertion-failed:*.cl:13\n"));
    assert_eq!(status, 1, "the assertion at line 14 is left: {reports:?}");
    let failed = of_kind(&reports, "assertion-failed");
    assert_eq!((failed.len(), failed[0]["line"].as_u64()), (1, Some(14)), "{failed:?}");
    let s = summary(&reports);
    assert_eq!((s["assertions_failed"].as_u64(), s["suppressed"].as_u64()), (Some(1), Some(1)), "{s}");
    let (status, reports) = assertions_in_the_layer(Some("assertion-failed:asserted\n"));
    assert_eq!(status, 0, "{reports:?}");
    assert!(summary(&reports).get("assertions_failed").is_none(), "{reports:?}");
}

#[test]
fn a_group_that_waits_for_a_later_group_is_checked_and_explored_as_the_default_check_runs_it() {
    let plain = check(&["--threads", "2", "group_handshake.sim"]);
    assert_eq!(plain.status.code(), Some(0), "{}", String::from_utf8_lossy(&plain.stderr));
    let (status, objects) = explore_detecting("group_handshake.sim", &[]);
    assert_eq!(status, 0, "no finding and no hang under --explore: {objects:?}");
    assert!(of_kind(&objects, "error").is_empty(), "{objects:?}");
    assert!(summary(&objects)["schedules"].as_u64().unwrap() > 1, "it goes on to explore: {objects:?}");
    let out = check(&["--explore", "group_handshake.sim"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("out[0] = 1") && stdout.contains("out[1] = 1"), "{stdout}");
}
