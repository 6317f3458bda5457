//! The admission order as the checker applies it, without threads: new launches are admitted
//! while checks are behind and are taken first, repeats stay within their share of memory, and
//! queued repeats give way to a new launch short of memory.

use std::sync::Arc;

use super::*;
use crate::layer::state::ProgramSource;

const MIB: u64 = 1 << 20;

/// A checker with `checkers` checkers and `memory_mb` of memory whose threads never start (the
/// queue stays as the test leaves it), reporting to a file of `dir`.
fn checker(dir: &std::path::Path, checkers: usize, memory_mb: u64) -> Arc<Checker> {
    let (mut config, _) = Config::from_env();
    config.checkers = checkers;
    config.memory_mb = memory_mb;
    config.spool = None;
    config.backlog = Backlog::Skip;
    let output = Output::open(Some(&dir.join("reports.txt")), Format::Text);
    let checker = Checker::new(config, output);
    checker.workers.call_once(|| {});
    checker
}

fn key(name: &str) -> KernelKey {
    KernelKey { program: "p.cl".into(), name: name.into() }
}

/// A job of kernel `name` (its snapshot is not filled: nothing runs it).
fn job(name: &str) -> Job {
    let program = ProgramSource::Source(format!("kernel void {name}(void) {{}}"));
    let program = Arc::new(ProgramState::new("p.cl".into(), program, String::new(), String::new(), Vec::new()));
    Job {
        program,
        kernel: name.into(),
        number: 1,
        work_dim: 1,
        offset: [0; 3],
        global: [64, 1, 1],
        local: None,
        args: Vec::new(),
        buffers: Vec::new(),
        modes: Vec::new(),
    }
}

/// Admits a launch of `name` with `bytes` of snapshot and configuration `config`, and queues
/// its job when admitted. Returns whether it was admitted.
fn launch(checker: &Arc<Checker>, name: &str, bytes: u64, config: u64) -> bool {
    let geometry = ([64, 1, 1], None);
    match checker.admit(&key(name), bytes, geometry, config) {
        Some(ticket) => {
            checker.submit(job(name), ticket);
            true
        }
        None => false,
    }
}

/// Takes the next job as a checker would, and counts it checked.
fn check_next(checker: &Checker) -> Option<(String, Class)> {
    let mut inner = checker.inner.lock();
    let (job, ticket) = next_job(&mut inner)?;
    inner.ledger.checked(&ticket.key);
    ticket.memory.release(ticket.bytes);
    Some((job.kernel, ticket.class))
}

fn skipped(checker: &Checker, name: &str) -> Vec<(String, u64)> {
    let inner = checker.inner.lock();
    let record = inner.ledger.kernels().find(|(k, _)| k.name == name).map(|(_, r)| r.clone()).unwrap_or_default();
    record.skipped.into_iter().collect()
}

#[test]
fn new_launches_are_admitted_while_checks_are_behind_and_taken_before_repeats() {
    let dir = tempfile::tempdir().unwrap();
    let checker = checker(dir.path(), 1, 100);
    assert!(launch(&checker, "k", MIB, 1), "the first launch");
    assert!(!launch(&checker, "k", MIB, 1), "a repeat while the first waits: behind");
    assert!(launch(&checker, "k", MIB, 2), "a new configuration, though behind");
    assert!(launch(&checker, "j", MIB, 1), "another kernel's first launch, though behind");
    let reason = Skip::Behind.reason();
    assert_eq!(skipped(&checker, "k"), [(reason, 1)]);
    for _ in 0..3 {
        check_next(&checker).unwrap();
    }
    // A repeat queued first, a new launch after it: the new one is taken first.
    assert!(launch(&checker, "k", MIB, 1), "a repeat when the checks keep up");
    assert!(launch(&checker, "i", MIB, 1));
    assert_eq!(check_next(&checker), Some(("i".into(), Class::New)));
    assert_eq!(check_next(&checker), Some(("k".into(), Class::Repeat)));
}

#[test]
fn repeats_hold_half_the_memory_at_most_and_give_way_to_a_new_launch() {
    let dir = tempfile::tempdir().unwrap();
    let checker = checker(dir.path(), 4, 10);
    assert!(launch(&checker, "k", 4 * MIB, 1));
    check_next(&checker).unwrap();
    assert!(!launch(&checker, "k", 11 * MIB, MAX), "a new configuration over the limit");
    // Past the configurations that count as new, launches are repeats.
    for config in 2..=16 {
        assert!(launch(&checker, "k", 0, config));
        check_next(&checker).unwrap();
    }
    assert!(!launch(&checker, "k", 6 * MIB, 100), "a repeat over half the memory");
    assert!(launch(&checker, "k", 4 * MIB, 100), "a repeat within half");
    assert_eq!(checker.memory.used(), 4 * MIB);
    // A new launch of 8 MiB fits only without the queued repeat: the repeat gives way.
    assert!(launch(&checker, "j", 8 * MIB, 1));
    assert_eq!(checker.memory.used(), 8 * MIB);
    assert_eq!(check_next(&checker), Some(("j".into(), Class::New)));
    assert_eq!(check_next(&checker), None, "the repeat is gone");
    let reasons: Vec<String> = skipped(&checker, "k").into_iter().map(|(r, _)| r).collect();
    assert!(reasons.iter().any(|r| r.contains("gave way to a new launch")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r.contains("half of CLRACE_MEMORY_MB=10")), "{reasons:?}");
    assert!(reasons.iter().any(|r| r == "its snapshot did not fit CLRACE_MEMORY_MB=10"), "{reasons:?}");
}

/// A configuration no test uses elsewhere.
const MAX: u64 = 1000;

#[test]
fn with_a_spool_every_launch_is_written_within_the_disk_budget_and_none_is_behind() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let (mut config, _) = Config::from_env();
    (config.checkers, config.spool, config.spool_mb, config.spool_quiet) = (1, Some(spool.clone()), 1, false);
    config.summary_file = None;
    let checker = Checker::new(config, Output::open(Some(&dir.path().join("reports.txt")), Format::Text));
    assert!(checker.spooling());
    for _ in 0..5 {
        assert!(launch(&checker, "k", 100, 1), "no launch is behind with a spool");
    }
    assert!(!launch(&checker, "k", 2 * MIB, 1), "over the disk budget");
    checker.finish(0);
    let launches: Vec<_> = std::fs::read_dir(spool.join("launches")).unwrap().collect();
    assert_eq!(launches.len(), 5);
    let state = crate::spool::reader::Spool::open(&spool).unwrap().layer_state().expect("the layer's state");
    let kernel = &state["kernels"][0];
    assert_eq!((kernel["launches"].as_u64(), kernel["spooled"].as_u64()), (Some(6), Some(5)), "{state}");
    assert_eq!(kernel["skipped"]["the spool is full (CLRACE_SPOOL_MB=1)"], 1, "{state}");
    assert_eq!(state["spool_mb"], 1);
    assert_eq!(checker.memory.used(), 0, "every snapshot's memory is back");
    let said = std::fs::read_to_string(dir.path().join("reports.txt")).unwrap();
    assert!(
        said.contains("clrace: 5 launch(es) spooled to ") && said.contains("; 1 launch(es) not spooled\n"),
        "{said}"
    );
}
