//! The layer with a spool (`CLRACE_SPOOL`), end to end on real drivers: every launch it admits is
//! written to the spool instead of checked, and the application sees nothing of it but one
//! closing line; a small disk budget names what it left out; an application that aborts leaves
//! a spool that can still be read. And the admission order without a spool: repeat checks never
//! keep a later kernel's first launch out of memory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use clrace::spool::{SpooledArg, reader::Spool};
use serde_json::Value;

mod common;

use common::{Driver, artefacts, c_host, drivers, run_limited, text};

/// The `spool` C host, built once.
fn host() -> &'static Path {
    static HOST: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, host) = HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let host = c_host(dir.path(), "spool");
        (dir, host)
    });
    host
}

/// The host run with `args` on `driver` (or the system's drivers), without the layer (`env`
/// None) or under it with `env`.
fn run(driver: Option<Driver>, args: &[&str], env: Option<&[(&str, &str)]>) -> Output {
    let mut command = Command::new(host());
    command.args(args);
    if let Some(driver) = driver {
        driver.select(&mut command);
    }
    if let Some(env) = env {
        command.env("OPENCL_LAYERS", artefacts().join("libclrace.so"));
        for (k, v) in env {
            command.env(k, v);
        }
    }
    run_limited(&mut command, Duration::from_secs(120))
}

/// The lines the layer added to the application's stderr (pocl's compiler may say how many
/// warnings it generated, depending on its cache).
fn ours(plain: &Output, layered: &Output) -> Vec<String> {
    let plain = text(&plain.stderr);
    text(&layered.stderr)
        .lines()
        .filter(|l| !plain.contains(l) && !l.ends_with(" generated."))
        .map(str::to_string)
        .collect()
}

/// Every launch of the spool `dir`, loaded whole (program and buffers), in SEQ order.
fn launches(dir: &Path) -> Vec<clrace::spool::SpooledLaunch> {
    let spool = Spool::open(dir).unwrap();
    let entries = spool.launches().unwrap();
    entries
        .iter()
        .map(|entry| {
            let launch = spool.load(entry).unwrap_or_else(|e| panic!("{}: {e}", entry.path.display()));
            spool.program(&launch).unwrap_or_else(|e| panic!("{}: {e}", entry.path.display()));
            let buffers = spool.buffers(&launch).unwrap_or_else(|e| panic!("{}: {e}", entry.path.display()));
            assert_eq!(buffers.len(), launch.buffers.len());
            launch
        })
        .collect()
}

/// The layer's ledger entry for `kernel` in its state at exit (`layer.json`).
fn ledger<'a>(state: &'a Value, kernel: &str) -> &'a Value {
    let kernels = state["kernels"].as_array().expect("kernels");
    kernels.iter().find(|k| k["name"] == kernel).unwrap_or_else(|| panic!("{kernel} in {state}"))
}

#[test]
fn every_launch_is_spooled_and_the_application_sees_only_the_closing_line() {
    const N: u64 = 300;
    let n = N.to_string();
    for driver in drivers() {
        let plain = run(Some(driver), &["many", &n], None);
        assert!(plain.status.success(), "{}", text(&plain.stderr));
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("spool");
        let path = spool.to_str().unwrap();
        let layered = run(Some(driver), &["many", &n], Some(&[("CLRACE_SPOOL", path)]));
        assert_eq!(
            (layered.status.code(), text(&layered.stdout)),
            (plain.status.code(), text(&plain.stdout)),
            "{}",
            driver.name()
        );
        let line = format!(
            "clrace: {N} launch(es) spooled to {path}: check them with `clrace check {path}`; 0 launch(es) not spooled"
        );
        assert_eq!(ours(&plain, &layered), [line], "{}", driver.name());
        // Every launch, in order, with its own argument (launch i adds i).
        let spooled = launches(&spool);
        assert_eq!(spooled.len() as u64, N, "{}", driver.name());
        for (i, launch) in spooled.iter().enumerate() {
            let number = i as u64 + 1;
            assert_eq!((launch.seq, launch.number, launch.kernel.as_str()), (i as u64, number, "bump"));
            assert_eq!(launch.args[1], SpooledArg::value(&(number as i32).to_ne_bytes()), "{launch:?}");
            assert_eq!((launch.global, launch.local), ([64, 1, 1], None));
        }
        // The program is stored once, and so is every buffer content launches share.
        assert!(spooled.iter().all(|l| l.program == spooled[0].program));
        let state = Spool::open(&spool).unwrap().layer_state().expect("the layer's state");
        assert_eq!(state["format"], 1);
        let bump = ledger(&state, "bump");
        assert_eq!((bump["launches"].as_u64(), bump["spooled"].as_u64()), (Some(N), Some(N)), "{state}");
        assert_eq!((bump["checked"].as_u64(), bump["in_flight"].as_u64()), (Some(0), Some(0)), "{state}");
        assert_eq!(state["config"]["print_limit"], 100, "{state}");
        // CLRACE_SPOOL_QUIET=1 (what `clrace run` sets): not even the closing line.
        let quiet = dir.path().join("quiet");
        let env = [("CLRACE_SPOOL", quiet.to_str().unwrap()), ("CLRACE_SPOOL_QUIET", "1")];
        let layered = run(Some(driver), &["many", &n], Some(&env));
        assert_eq!(text(&layered.stdout), text(&plain.stdout));
        assert!(ours(&plain, &layered).is_empty(), "{}: {:?}", driver.name(), ours(&plain, &layered));
        assert_eq!(launches(&quiet).len() as u64, N);
    }
}

#[test]
fn a_small_disk_budget_spools_what_fits_and_names_the_rest() {
    let plain = run(None, &["mixed", "20", "2"], None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let env = [("CLRACE_SPOOL", path), ("CLRACE_SPOOL_MB", "1")];
    let layered = run(None, &["mixed", "20", "2"], Some(&env));
    assert_eq!((layered.status.code(), text(&layered.stdout)), (plain.status.code(), text(&plain.stdout)));
    // The small launches fit; each of the 2 MiB ones is over the budget.
    let spooled = launches(dir.path());
    assert_eq!(spooled.len(), 20);
    assert!(spooled.iter().all(|l| l.kernel == "bump"));
    let said = ours(&plain, &layered);
    let full = "the spool is full (CLRACE_SPOOL_MB=1)";
    assert_eq!(said.iter().filter(|l| l.contains("'fill0'") && l.contains(full)).count(), 2, "{said:?}");
    assert!(said.iter().any(|l| l.contains("launches of kernel 'fill0'") && l.contains("are not spooled")));
    assert!(
        said.iter()
            .any(|l| l.starts_with("clrace: 20 launch(es) spooled to") && l.ends_with("; 20 launch(es) not spooled"))
    );
    let kernel_line = said.iter().find(|l| l.starts_with("clrace:   kernel 'fill0'")).expect("a line for fill0");
    assert!(kernel_line.ends_with(&format!("20 launch(es), 0 spooled; 20 not spooled: {full}")), "{kernel_line}");
    let state = Spool::open(dir.path()).unwrap().layer_state().expect("the layer's state");
    assert_eq!(ledger(&state, "bump")["spooled"], 20, "{state}");
    assert_eq!(ledger(&state, "fill0")["skipped"][full], 20, "{state}");
    // In JSON: the summary counts the launches spooled, and names the spool.
    let json_dir = tempfile::tempdir().unwrap();
    let reports = json_dir.path().join("reports.json");
    let spool = json_dir.path().join("spool");
    let env = [
        ("CLRACE_SPOOL", spool.to_str().unwrap()),
        ("CLRACE_SPOOL_MB", "1"),
        ("CLRACE_FORMAT", "json"),
        ("CLRACE_OUTPUT", reports.to_str().unwrap()),
    ];
    let layered = run(None, &["mixed", "20", "2"], Some(&env));
    assert_eq!(text(&layered.stdout), text(&plain.stdout));
    let summary: Value = std::fs::read_to_string(&reports)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "layer-summary")
        .expect("a summary");
    assert_eq!((summary["launches_spooled"].as_u64(), summary["launches_skipped"].as_u64()), (Some(20), Some(20)));
    assert_eq!(summary["spool"], spool.to_str().unwrap());
    assert_eq!(summary["kernels"].as_array().unwrap().len(), 1, "only fill0 has launches not spooled: {summary}");
}

#[test]
fn an_application_that_aborts_leaves_a_spool_whose_every_launch_loads() {
    let plain = run(None, &["abort", "40"], None);
    let dir = tempfile::tempdir().unwrap();
    let layered = run(None, &["abort", "40"], Some(&[("CLRACE_SPOOL", dir.path().to_str().unwrap())]));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(layered.status.signal(), Some(libc_sigabrt()), "{}", text(&layered.stderr));
    assert_eq!((layered.status.signal(), text(&layered.stdout)), (plain.status.signal(), text(&plain.stdout)));
    let spool = Spool::open(dir.path()).unwrap();
    assert!(spool.layer_state().is_none(), "the layer never got to exit");
    let spooled = launches(dir.path());
    assert!(!spooled.is_empty(), "the launches were written before the abort");
    assert!(spooled.iter().all(|l| l.kernel == "bump" && l.number == l.seq + 1));
}

/// SIGABRT.
fn libc_sigabrt() -> i32 {
    6
}

#[test]
fn a_spool_that_cannot_be_used_leaves_the_launches_checked_inline() {
    let plain = run(None, &["many", "3"], None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let under_file = file.join("spool");
    let spool = dir.path().join("spool");
    for (env, note) in [
        (vec![("CLRACE_SPOOL", under_file.to_str().unwrap())], "cannot make the spool"),
        (
            vec![("CLRACE_SPOOL", spool.to_str().unwrap()), ("CLRACE_ORDER", "before")],
            "CLRACE_SPOOL is not used with CLRACE_ORDER=before",
        ),
    ] {
        let mut env = env;
        env.extend([("CLRACE_FORMAT", "text"), ("CLRACE_ON_BACKLOG", "wait")]);
        let layered = run(None, &["many", "3"], Some(&env));
        assert_eq!(text(&layered.stdout), text(&plain.stdout));
        let said = ours(&plain, &layered).join("\n");
        assert_eq!(said.matches(note).count(), 1, "{said}");
        assert!(said.contains("clrace: 3 launch(es) checked"), "{said}");
    }
    assert!(!spool.exists(), "no spool is made with CLRACE_ORDER=before");
}

/// clpeak's pattern: several kernels, each launched once (a warm-up) and then many times in a
/// row on a large buffer of its own, with little memory for checks. Repeats may hold only half
/// of it: every kernel's first launch is admitted and checked, none refused for memory. (The
/// pause after each warm-up lets the first check, which builds the program, end first.)
#[test]
fn repeat_checks_never_keep_a_later_kernels_first_launch_out_of_memory() {
    let args = ["kernels", "4", "40", "4", "3000"];
    let plain = run(None, &args, None);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports.json");
    let env = [("CLRACE_MEMORY_MB", "10"), ("CLRACE_FORMAT", "json"), ("CLRACE_OUTPUT", reports.to_str().unwrap())];
    let layered = run(None, &args, Some(&env));
    assert_eq!((layered.status.code(), text(&layered.stdout)), (plain.status.code(), text(&plain.stdout)));
    let summary: Value = std::fs::read_to_string(&reports)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "layer-summary")
        .expect("a summary");
    let kernels = summary["kernels"].as_array().expect("kernels");
    for j in 0..4 {
        let name = format!("fill{j}");
        let kernel =
            kernels.iter().find(|k| k["kernel"] == name.as_str()).unwrap_or_else(|| panic!("{name}: {summary}"));
        assert_eq!(kernel["launches"], 41, "{kernel}");
        assert!(kernel["checked"].as_u64().unwrap() >= 1, "the first launch of {name} is checked: {summary}");
        let refused = kernel["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["reason"] == "its snapshot did not fit CLRACE_MEMORY_MB=10");
        assert!(!refused, "no new launch of {name} is refused for memory: {kernel}");
    }
}
