//! Sub-group lockstep analysis (`clrace check --sub-group-lockstep[=W]`): warp-synchronous code
//! whose races lockstep hides (warnings, correct results), races lockstep does not hide (between
//! sub-groups, in one instruction, across a divergent branch), a sub-group livelock and a lock
//! that must not look like one, `sub_group_barrier` ordering memory (and a sub-group collective
//! ordering none), and the default mode unchanged. Each racy kernel of `tests/lockstep/` has a
//! race-free twin (`*_ok`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("lockstep")
}

/// One `clrace check` run: exit status, the JSON objects on stderr, stdout (the dumps).
struct Run {
    status: i32,
    objects: Vec<Value>,
    dumps: String,
}

fn check(name: &str, extra: &[&str]) -> Run {
    let (status, objects, dumps) = common::check_json(&dir(), &format!("{name}.sim"), extra);
    Run { status, objects, dumps }
}

impl Run {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.objects.iter().filter(|o| o["kind"] == kind).collect()
    }

    fn races(&self) -> Vec<&Value> {
        self.of_kind("race")
    }

    /// The lockstep classes of the races, sorted and deduplicated.
    fn classes(&self) -> Vec<String> {
        let mut classes: Vec<String> =
            self.races().iter().map(|r| r["lockstep"].as_str().unwrap_or("none").to_string()).collect();
        classes.sort();
        classes.dedup();
        classes
    }

    fn summary(&self) -> &Value {
        self.of_kind("summary").into_iter().next().unwrap_or_else(|| panic!("no summary: {:?}", self.objects))
    }

    /// The dumped values of buffer `name` (`name[i] = v` lines).
    fn values(&self, name: &str) -> Vec<i64> {
        let prefix = format!("  {name}[");
        self.dumps
            .lines()
            .filter(|l| l.starts_with(&prefix))
            .map(|l| l.rsplit("= ").next().unwrap().trim().parse().unwrap())
            .collect()
    }
}

/// In the default mode (no option): races carry no lockstep class, the summary no lockstep
/// counts, and no sub-group livelock is reported.
fn assert_default_mode(run: &Run) {
    for race in run.races() {
        for field in ["lockstep", "level", "sub_group_size"] {
            assert!(race.get(field).is_none(), "{field} without the option: {race}");
        }
    }
    assert!(run.summary().get("hidden").is_none(), "{}", run.summary());
    assert!(run.of_kind("sub-group-livelock").is_empty(), "{:?}", run.objects);
}

#[test]
fn a_warp_synchronous_tail_reduction_is_hidden_at_32_and_races_between_sub_groups_at_16() {
    let sums = vec![(0..128).sum::<i64>(), (128..256).sum::<i64>()];
    let default = check("tail_reduce", &[]);
    assert_eq!(default.status, 1);
    assert!(!default.races().is_empty());
    assert_default_mode(&default);
    assert_eq!(default.values("out"), sums);

    let at32 = check("tail_reduce", &["--sub-group-lockstep"]);
    assert_eq!(at32.classes(), ["hidden"], "{:?}", at32.objects);
    assert!(at32.races().iter().all(|r| r["level"] == "warning" && r["sub_group_size"] == 32));
    assert_eq!(at32.values("out"), sums, "lockstep of 32 computes the sum");
    assert_eq!(at32.status, 0, "warnings alone leave the exit status 0");
    let summary = at32.summary();
    assert_eq!(
        (summary["sub_group_lockstep"].as_u64(), summary["hidden"].as_u64()),
        (Some(32), summary["races"].as_u64())
    );
    // The same pairs of lines race as without the option: lockstep only labels them.
    let pairs = |run: &Run| {
        let mut p: Vec<(u64, u64)> = run
            .races()
            .iter()
            .map(|r| (r["accesses"][0]["line"].as_u64().unwrap(), r["accesses"][1]["line"].as_u64().unwrap()))
            .collect();
        p.sort();
        p.dedup();
        p
    };
    assert_eq!(pairs(&at32), pairs(&default));

    let at16 = check("tail_reduce", &["--sub-group-lockstep=16"]);
    assert_eq!(at16.status, 1);
    let inter: Vec<&Value> = at16.races().into_iter().filter(|r| r["lockstep"] == "inter-sub-group").collect();
    assert!(!inter.is_empty(), "{:?}", at16.objects);
    for race in inter {
        assert_eq!(race["level"], "error");
        let lanes: Vec<u64> =
            race["accesses"].as_array().unwrap().iter().map(|a| a["local_id"][0].as_u64().unwrap()).collect();
        assert_ne!(lanes[0] / 16, lanes[1] / 16, "the two work-items are in different sub-groups of 16: {race}");
    }
}

#[test]
fn a_warp_synchronous_scan_is_hidden_at_32_and_races_between_sub_groups_at_16() {
    // An inclusive scan of ones within each run of 32: lane + 1.
    let scanned: Vec<i64> = (0..128).map(|t| t % 32 + 1).collect();
    let default = check("scan_warp", &[]);
    assert_eq!(default.status, 1);
    assert_default_mode(&default);
    let at32 = check("scan_warp", &["--sub-group-lockstep=32"]);
    assert_eq!(at32.classes(), ["hidden"], "{:?}", at32.objects);
    assert_eq!(at32.status, 0);
    assert_eq!(at32.values("A"), scanned);
    let at16 = check("scan_warp", &["--sub-group-lockstep=16"]);
    assert_eq!(at16.status, 1);
    assert!(at16.classes().contains(&"inter-sub-group".to_string()), "{:?}", at16.objects);
}

#[test]
fn one_instruction_storing_different_values_is_a_same_instruction_race() {
    let at32 = check("same_slot", &["--sub-group-lockstep"]);
    assert_eq!(at32.status, 1);
    assert_eq!(at32.classes(), ["same-instruction"], "{:?}", at32.objects);
    let race = at32.races()[0];
    assert_eq!((race["race_type"].as_str(), race["level"].as_str()), (Some("write-write"), Some("error")));
    assert_eq!(race["accesses"][0]["line"], race["accesses"][1]["line"]);
    assert_default_mode(&check("same_slot", &[]));
    for extra in [&[][..], &["--sub-group-lockstep"], &["--sub-group-lockstep=16"]] {
        let twin = check("same_slot_ok", extra);
        assert_eq!((twin.status, twin.races().len()), (0, 0), "{extra:?}: {:?}", twin.objects);
    }
}

#[test]
fn the_two_sides_of_a_nested_divergent_branch_race_even_in_lockstep() {
    let at32 = check("nested_divergent", &["--sub-group-lockstep"]);
    assert_eq!(at32.status, 1);
    assert_eq!(at32.classes(), ["divergent"], "{:?}", at32.objects);
    assert_eq!(at32.races()[0]["level"], "error");
    let default = check("nested_divergent", &[]);
    assert_eq!(default.status, 1);
    assert_default_mode(&default);
    for extra in [&[][..], &["--sub-group-lockstep"]] {
        let twin = check("nested_divergent_ok", extra);
        assert_eq!((twin.status, twin.races().len()), (0, 0), "{extra:?}: {:?}", twin.objects);
    }
}

#[test]
fn a_lock_taken_by_every_lane_of_a_sub_group_is_a_sub_group_livelock() {
    let at32 = check("warp_lock", &["--sub-group-lockstep"]);
    assert_eq!(at32.status, 1, "{:?}", at32.objects);
    let livelocks = at32.of_kind("sub-group-livelock");
    assert_eq!(livelocks.len(), 1, "{:?}", at32.objects);
    let l = livelocks[0];
    assert_eq!(
        (l["line"].as_u64(), l["sub_group"].as_u64(), l["sub_group_size"].as_u64()),
        (Some(4), Some(0), Some(32))
    );
    assert!(l["source"].as_str().unwrap().contains("atomic_cmpxchg"), "{l}");
    // The winner is masked off at the end of the loop; everyone else spins.
    assert_eq!(l["masked_lanes"], serde_json::json!([0]));
    assert_eq!(l["spinning_lanes"], Value::from((1..32).collect::<Vec<u64>>()));
    assert_eq!(at32.summary()["livelocks"].as_u64(), Some(l["count"].as_u64().unwrap_or(1)));
    // The run went on as if the sub-group could part: every work-item counted.
    assert_eq!(at32.values("count"), [32]);
    let default = check("warp_lock", &[]);
    assert_default_mode(&default);
    assert_eq!(default.values("count"), [32]);
}

#[test]
fn a_lock_taken_by_one_lane_per_sub_group_runs_to_the_end() {
    for (extra, leaders) in [(&[][..], 4), (&["--sub-group-lockstep"], 4), (&["--sub-group-lockstep=16"], 8)] {
        let run = check("leader_lock", extra);
        assert!(run.of_kind("error").is_empty(), "{extra:?}: {:?}", run.objects);
        assert!(run.of_kind("sub-group-livelock").is_empty(), "{extra:?}: {:?}", run.objects);
        assert_eq!(run.values("count"), [leaders], "{extra:?}");
    }
}

#[test]
fn sub_group_barriers_order_memory_within_their_sub_group_in_every_mode() {
    // Groups of 128 hold four sub-groups of 32: the tail's sub_group_barriers order it.
    let sums = vec![(0..128).sum::<i64>(), (128..256).sum::<i64>()];
    for extra in [&[][..], &["--sub-group-size", "32"], &["--sub-group-lockstep"]] {
        let run = check("tail_reduce_ok", extra);
        assert_eq!((run.status, run.races().len()), (0, 0), "{extra:?}: {:?}", run.objects);
        assert_eq!(run.values("out"), sums, "{extra:?}");
    }
    // Sub-groups of 16 are too small for a tail of 32: the barriers order nothing across them.
    for extra in [&["--sub-group-size", "16"][..], &["--sub-group-lockstep=16"]] {
        let run = check("tail_reduce_ok", extra);
        assert_eq!(run.status, 1, "{extra:?}");
        assert!(!run.races().is_empty(), "{extra:?}");
    }
}

#[test]
fn a_sub_group_collective_orders_no_memory_and_lockstep_hides_the_race_across_it() {
    // Work-item 0 writes, the sub-group reduces, work-item 1 reads: a race in the default mode,
    // hidden in lockstep (the two lanes ran together at the reduction), and between sub-groups
    // when each work-item is a sub-group of its own.
    let default = check("subgroup_reduce", &[]);
    assert_eq!((default.status, default.races().len()), (1, 1), "{:?}", default.objects);
    assert_default_mode(&default);
    let race = default.races()[0];
    assert_eq!((race["address_space"].as_str(), race["buffer"].as_str()), (Some("local"), Some("x")));
    let lines: Vec<u64> = race["accesses"].as_array().unwrap().iter().map(|a| a["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [5, 7], "{race}");
    assert_eq!(default.values("out"), [42 + 28]);

    let at32 = check("subgroup_reduce", &["--sub-group-lockstep"]);
    assert_eq!(at32.classes(), ["hidden"], "{:?}", at32.objects);
    assert!(at32.races().iter().all(|r| r["level"] == "warning"), "{:?}", at32.objects);
    assert_eq!(at32.status, 0, "a hidden race alone leaves the exit status 0");
    assert_eq!(at32.summary()["hidden"].as_u64(), Some(1), "{}", at32.summary());

    let at1 = check("subgroup_reduce", &["--sub-group-lockstep=1"]);
    assert_eq!(at1.status, 1);
    assert_eq!(at1.classes(), ["inter-sub-group"], "{:?}", at1.objects);

    // A sub_group_barrier after the reduction orders the two accesses in every mode.
    // (In sub-groups of 2, work-item 1 sums its own sub-group: 0 + 1.)
    for (extra, sum) in [(&[][..], 28), (&["--sub-group-lockstep"], 28), (&["--sub-group-size", "2"], 1)] {
        let twin = check("subgroup_reduce_ok", extra);
        assert_eq!((twin.status, twin.races().len()), (0, 0), "{extra:?}: {:?}", twin.objects);
        assert_eq!(twin.values("out"), [42 + sum], "{extra:?}");
    }
}

#[test]
fn reports_are_the_same_at_any_thread_count() {
    for name in ["tail_reduce", "scan_warp", "nested_divergent", "warp_lock", "subgroup_reduce"] {
        let one = check(name, &["--sub-group-lockstep", "--threads", "1"]);
        let three = check(name, &["--sub-group-lockstep", "--threads", "3"]);
        assert_eq!(one.objects, three.objects, "{name}");
    }
}

#[test]
fn text_reports_say_what_lockstep_hides_and_how_to_fix_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
        .args(["check", "--sub-group-lockstep", "scan_warp.sim"])
        .current_dir(dir())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.trim_start().starts_with("Warning: read-write data race"), "{text}");
    assert!(text.contains("Lockstep: hidden (sub-groups of 32)") && text.contains("sub_group_barrier"), "{text}");
    assert!(text.contains("hidden by lockstep of width 32: warnings"), "{text}");
}

#[test]
fn a_width_outside_1_to_64_or_against_the_sub_group_size_is_a_usage_error() {
    for extra in [
        &["--sub-group-lockstep=65"][..],
        &["--sub-group-lockstep=0", "--sub-group-size", "128"],
        &["--sub-group-lockstep=16", "--sub-group-size", "32"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
            .arg("check")
            .args(extra)
            .arg("scan_warp.sim")
            .current_dir(dir())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--sub-group-lockstep"), "{extra:?}");
    }
}

#[test]
fn the_layer_classes_races_with_clrace_sub_group_lockstep() {
    // The racy reduction example (groups of 64, no barrier in the loop) under `clrace run` on
    // pocl: at 32 its races are warp-synchronous (hidden: exit 0), at 16 some cross sub-groups.
    let program = common::artefacts().join("examples").join("racy_reduction");
    for (option, status, class) in
        [("--sub-group-lockstep", 0, "hidden"), ("--sub-group-lockstep=16", 1, "inter-sub-group")]
    {
        let reports = tempfile::NamedTempFile::new().unwrap();
        let mut command = Command::new(common::artefacts().join("clrace"));
        command.args(["run", "--format", "json", option, "--output"]).arg(reports.path()).arg("--").arg(&program);
        let out = common::run_limited(&mut command, std::time::Duration::from_secs(120));
        let objects: Vec<Value> = std::fs::read_to_string(reports.path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        assert_eq!(out.status.code(), Some(status), "{option}: {}", common::text(&out.stderr));
        let races: Vec<&Value> = objects.iter().filter(|o| o["kind"] == "race").collect();
        assert!(races.iter().any(|r| r["lockstep"] == class), "{option}: {objects:?}");
        assert!(races.iter().all(|r| r["lockstep"].is_string()), "{option}: {objects:?}");
        let summary = objects.iter().find(|o| o["kind"] == "layer-summary").expect("a closing summary");
        let width = if option.ends_with("16") { 16 } else { 32 };
        assert_eq!(summary["sub_group_lockstep"].as_u64(), Some(width), "{summary}");
        assert!(summary["hidden"].as_u64().is_some(), "{summary}");
    }
}

#[test]
fn sarif_results_carry_the_class_and_warn_only_for_hidden_races() {
    for (name, level, class) in [("scan_warp", "warning", "hidden"), ("nested_divergent", "error", "divergent")] {
        let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
            .args(["check", "--format", "sarif", "--sub-group-lockstep", &format!("{name}.sim")])
            .current_dir(dir())
            .output()
            .unwrap();
        let log: Value = serde_json::from_slice(&out.stdout).unwrap();
        let results = log["runs"][0]["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{name}");
        for result in results {
            assert_eq!(result["level"], level, "{name}: {result}");
            assert_eq!(result["properties"]["lockstep"], class, "{name}: {result}");
            assert!(result["message"]["text"].as_str().unwrap().contains(class), "{name}: {result}");
        }
    }
}

#[test]
fn every_race_free_twin_of_the_golden_corpus_stays_clean_in_lockstep() {
    let races = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("races");
    let mut twins: Vec<PathBuf> = std::fs::read_dir(&races)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_ok.sim"))
        .collect();
    twins.sort();
    assert!(twins.len() > 50, "{}", twins.len());
    for twin in twins {
        let out = Command::new(env!("CARGO_BIN_EXE_clrace"))
            .args(["check", "--format", "json", "--sub-group-lockstep"])
            .arg(&twin)
            .current_dir(&races)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("\"kind\":\"race\""), "{}: {stderr}", twin.display());
        assert!(!stderr.contains("\"kind\":\"error\""), "{}: {stderr}", twin.display());
        assert!(!stderr.contains("sub-group-livelock"), "{}: {stderr}", twin.display());
    }
}

#[test]
fn a_sub_group_livelock_can_be_suppressed_like_any_finding() {
    let rules = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(rules.path(), "sub-group-livelock:warp_lock.cl:4\n").unwrap();
    let run = check("warp_lock", &["--sub-group-lockstep", "--suppressions", rules.path().to_str().unwrap()]);
    assert!(run.of_kind("sub-group-livelock").is_empty(), "{:?}", run.objects);
    let summary = run.summary();
    assert_eq!((summary["livelocks"].as_u64(), summary["suppressed"].as_u64()), (Some(0), Some(31)), "{summary}");
}

#[test]
fn livelocks_in_many_work_groups_contending_for_one_lock_are_each_parted() {
    // Eight groups contend for one lock, each livelocking in its own sub-group (31 times: each
    // lane but the last takes the lock while the others of its warp spin). On one worker thread
    // each livelocked group parts at once; on more, a group waiting for the lock sleeps until
    // the holder changes something, and the holder parts once every running group is stuck.
    // Every run must end quickly with the report of one thread, whatever the interleaving.
    let one = check("warp_lock_groups", &["--sub-group-lockstep", "--threads", "1"]);
    assert_eq!(one.status, 1, "{:?}", one.objects);
    assert!(one.of_kind("error").is_empty(), "{:?}", one.objects);
    let livelocks = one.of_kind("sub-group-livelock");
    assert_eq!(livelocks.len(), 1, "{:?}", one.objects);
    assert_eq!(livelocks[0]["count"], 8 * 31, "{:?}", livelocks[0]);
    assert_eq!(one.values("count"), [256]);
    for threads in ["2", "2", "2", "2", "2", "3", "8"] {
        let started = std::time::Instant::now();
        let run = check("warp_lock_groups", &["--sub-group-lockstep", "--threads", threads]);
        let took = started.elapsed();
        assert_eq!(run.objects, one.objects, "{threads} threads");
        assert_eq!((run.status, run.dumps.as_str()), (one.status, one.dumps.as_str()), "{threads} threads");
        // 0.2 s of work on one thread; generous for a loaded machine, far below the minutes
        // (and the false hang) a group spinning out its patience used to cost.
        assert!(took < std::time::Duration::from_secs(20), "{threads} threads took {took:?}");
    }
}
