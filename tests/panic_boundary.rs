//! The layer's panic boundary, end to end: a panic of ours in any guarded region of the layer
//! (made by the fault points that debug builds of `libclrace.so` carry, `CLRACE_TEST_PANIC`)
//! never reaches the application. The C hosts of `tests/layer/` run on pocl without the layer
//! and under it with a panic in each region: the host prints the same, writes the same on
//! stderr and ends with the same status, and the panic is a note in the layer's output (the
//! file `CLRACE_OUTPUT` names), never text on the application's streams.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod common;

use common::{Driver, artefacts, c_host, drivers, run_limited, text};

/// One run of a host: what it printed, and what the layer wrote to its output file.
struct Run {
    output: Output,
    log: String,
}

/// Runs `host` with `args`, without the layer (`layer` false) or under it with `env`.
fn run(host: &Path, args: &[&str], layer: bool, env: &[(&str, &str)]) -> Run {
    run_on(None, host, args, layer, env)
}

/// [`run`] on `driver` alone, or on the system's drivers (`None`).
fn run_on(driver: Option<Driver>, host: &Path, args: &[&str], layer: bool, env: &[(&str, &str)]) -> Run {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(host);
    if let Some(driver) = driver {
        driver.select(&mut command);
    }
    command.args(args);
    if layer {
        command
            .env("OPENCL_LAYERS", artefacts().join("libclrace.so"))
            .env("CLRACE_FORMAT", "text")
            .env("CLRACE_OUTPUT", log.path());
        for (k, v) in env {
            command.env(k, v);
        }
    }
    let output = run_limited(&mut command, Duration::from_secs(120));
    Run { output, log: std::fs::read_to_string(log.path()).unwrap_or_default() }
}

/// What a region's run must show besides the host going on.
#[derive(Clone, Copy)]
enum Noted {
    /// The panic is a note in the layer's output.
    InOutput,
    /// The loader's first calls (`clGetLayerInfo`, `clInitLayer`): the output is not open yet,
    /// so a panic there says nothing anywhere, and the layer stands aside.
    Nowhere,
}

/// A fault point of the layer and the host run that reaches it.
struct Region {
    point: &'static str,
    host: &'static str,
    args: &'static [&'static str],
    /// Settings besides the panic.
    env: &'static [(&'static str, &'static str)],
    noted: Noted,
}

/// Every fault point, with a host run that reaches it.
fn regions() -> Vec<Region> {
    use Noted::*;
    let at = |point, host, noted| Region { point, host, args: &[], env: &[], noted };
    let before: &'static [(&str, &str)] = &[("CLRACE_ORDER", "before")];
    vec![
        at("info", "host", Nowhere),
        at("init", "host", Nowhere),
        at("program", "host", InOutput),
        at("program/after", "host", InOutput),
        at("build", "host", InOutput),
        at("kernel", "host", InOutput),
        at("kernel/after", "host", InOutput),
        at("buffer", "host", InOutput),
        at("buffer/after", "host", InOutput),
        at("argument", "host", InOutput),
        at("argument/after", "host", InOutput),
        at("launch", "host", InOutput),
        at("plan", "host", InOutput),
        at("admission", "host", InOutput),
        Region { env: before, ..at("gate", "host", InOutput) },
        at("reads", "host", InOutput),
        Region { args: &["no-host-access"], ..at("reads", "host", InOutput) },
        Region { env: before, ..at("forwarded", "host", InOutput) },
        at("launch/after", "host", InOutput),
        at("callback", "host", InOutput),
        Region { env: before, ..at("callback", "host", InOutput) },
        at("exit", "host", InOutput),
        at("image", "image", InOutput),
        at("image/after", "image", InOutput),
        at("sampler", "image", InOutput),
        at("sampler/after", "image", InOutput),
    ]
}

#[test]
fn a_panic_in_any_guarded_region_of_the_layer_leaves_the_host_going_on() {
    if artefacts().ends_with("release") {
        // The fault points exist in debug builds only; the shipped library has none.
        eprintln!("skipped: release builds of the layer carry no fault points");
        return;
    }
    let failures = sweep(None, regions());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The regions of the snapshot and the gate (`CLRACE_ORDER=before`), on each driver selected
/// alone: rusticl holds unflushed commands behind a gated launch, so its paths differ.
#[test]
fn a_panic_in_the_snapshot_or_the_gate_leaves_the_host_going_on_on_each_driver() {
    if artefacts().ends_with("release") {
        eprintln!("skipped: release builds of the layer carry no fault points");
        return;
    }
    let points = ["gate", "reads", "forwarded", "callback"];
    for driver in drivers() {
        let regions: Vec<Region> =
            regions().into_iter().filter(|r| r.host == "host" && points.contains(&r.point)).collect();
        let failures = sweep(Some(driver), regions);
        assert!(failures.is_empty(), "{driver:?}: {}", failures.join("\n\n"));
    }
}

/// Runs each region's host without the layer and under it with the panic, on `driver` (or the
/// system's drivers): what went otherwise than without the layer.
fn sweep(driver: Option<Driver>, regions: Vec<Region>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let hosts: Vec<(&str, PathBuf)> = ["host", "image"].map(|name| (name, c_host(dir.path(), name))).into();
    let host = |name: &str| hosts.iter().find(|(n, _)| *n == name).map(|(_, p)| p.clone()).unwrap();
    let mut failures = Vec::new();
    let mut plain_runs: Vec<((&str, &[&str]), Output)> = Vec::new();
    for Region { point, host: name, args, env, noted } in regions {
        let path = host(name);
        let plain = match plain_runs.iter().find(|(key, _)| *key == (name, args)) {
            Some((_, output)) => output.clone(),
            None => {
                let output = run_on(driver, &path, args, false, &[]).output;
                assert!(output.status.success(), "{name} {args:?} fails without the layer: {}", text(&output.stderr));
                plain_runs.push(((name, args), output.clone()));
                output
            }
        };
        let mut settings = vec![("CLRACE_TEST_PANIC", point), ("RUST_BACKTRACE", "1")];
        settings.extend_from_slice(env);
        let layered = run_on(driver, &path, args, true, &settings);
        let what = format!("{point} ({name} {args:?} {env:?})");
        let out = &layered.output;
        if out.status.code() != plain.status.code() {
            failures.push(format!("{what}: status {:?}, without the layer {:?}", out.status, plain.status));
        }
        if out.stdout != plain.stdout {
            failures.push(format!(
                "{what}: printed\n{}\nwithout the layer\n{}",
                text(&out.stdout),
                text(&plain.stdout)
            ));
        }
        if out.stderr != plain.stderr {
            failures.push(format!("{what}: stderr\n{}\nwithout the layer\n{}", text(&out.stderr), text(&plain.stderr)));
        }
        let note = format!("CLRACE_TEST_PANIC: a test panic in {point}");
        match noted {
            Noted::InOutput if !layered.log.contains(&note) || !layered.log.contains("internal error") => {
                failures.push(format!("{what}: the panic is not noted in the layer's output:\n{}", layered.log));
            }
            Noted::InOutput if layered.log.contains("stack backtrace") => {
                failures.push(format!("{what}: a backtrace in the layer's output:\n{}", layered.log));
            }
            Noted::Nowhere if !layered.log.is_empty() => {
                failures.push(format!("{what}: the layer wrote where it should stand aside:\n{}", layered.log));
            }
            _ => {}
        }
    }
    failures
}

#[test]
fn without_a_fault_point_the_same_host_is_checked_as_usual() {
    let dir = tempfile::tempdir().unwrap();
    let host = c_host(dir.path(), "host");
    let layered = run(&host, &[], true, &[("CLRACE_TEST_PANIC", "nowhere")]);
    assert_eq!(layered.output.status.code(), Some(0));
    assert!(layered.log.contains("1 launch(es) checked: 1 race(s)"), "{}", layered.log);
    assert!(!layered.log.contains("internal error"), "{}", layered.log);
}
