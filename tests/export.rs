//! `clrace export`, end to end: C hosts run under the layer on pocl with a spool, one of their
//! launches is exported as a launch file, and `clrace check` of that file must say what
//! `clrace check` of the spooled launch says (the same report, the same exit status) and leave
//! the same buffers; launches a launch file cannot say (a sub-buffer, an image, a linked
//! program) are refused with the reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use clrace::exec::{ArgValue, RunOptions};
use clrace::spool::reader::Spool;

mod common;

use common::{Driver, artefacts, c_host, run_limited, text};

/// Runs the C host `tests/layer/NAME.c` with `args` under the layer on pocl, spooling its
/// launches into `dir/spool`; returns the spool's launches (their manifests' paths) in order.
fn spool_of(dir: &Path, name: &str, args: &[&str]) -> Vec<PathBuf> {
    let host = c_host(dir, name);
    let spool = dir.join("spool");
    let mut command = Command::new(host);
    command.args(args).env("OPENCL_LAYERS", artefacts().join("libclrace.so")).env("CLRACE_SPOOL", &spool);
    command.env("CLRACE_SPOOL_QUIET", "1");
    Driver::Pocl.select(&mut command);
    let out = run_limited(&mut command, Duration::from_secs(120));
    assert!(out.status.success(), "{name} {args:?}: {}", text(&out.stderr));
    let spool = Spool::open(&spool).unwrap();
    let launches: Vec<PathBuf> = spool.launches().unwrap().into_iter().map(|l| l.path).collect();
    assert!(!launches.is_empty(), "{name} {args:?} spooled nothing");
    launches
}

/// `clrace ARGS` run in `dir`.
fn clrace_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clrace")).args(args).current_dir(dir).output().unwrap()
}

/// `clrace export EXTRA LAUNCH OUT`: the files written (OUT/NAME.sim), after checking that it
/// succeeded.
fn export(launch: &Path, out: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec!["export"];
    args.extend(extra);
    args.extend([launch.to_str().unwrap(), out.to_str().unwrap()]);
    let done = clrace_in(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
    assert!(done.status.success(), "export failed: {}", text(&done.stderr));
    let sims: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sim"))
        .collect();
    assert_eq!(sims.len(), 1, "{sims:?}");
    sims.into_iter().next().unwrap()
}

/// `clrace check --format json --threads 1` of the spooled launch and of its export (run from
/// the export's directory, so that both name the program alike) must give the same exit status
/// and the same report; returns the report.
fn same_report(launch: &Path, sim: &Path) -> String {
    let args = ["check", "--format", "json", "--threads", "1"];
    let spooled = clrace_in(Path::new(env!("CARGO_MANIFEST_DIR")), &[&args[..], &[launch.to_str().unwrap()]].concat());
    let name = sim.file_name().unwrap().to_str().unwrap();
    let exported = clrace_in(sim.parent().unwrap(), &[&args[..], &[name]].concat());
    assert_eq!(
        (exported.status.code(), text(&exported.stderr)),
        (spooled.status.code(), text(&spooled.stderr)),
        "the export of {} checks differently",
        launch.display()
    );
    text(&spooled.stderr)
}

/// The buffers of the spooled launch after it runs in the emulator, by argument index (buffer
/// arguments only).
fn spooled_outputs(launch: &Path) -> Vec<(usize, Vec<u8>)> {
    let (spool, manifest) = clrace::spool::open_manifest(launch).unwrap();
    let program = spool.program(&manifest).unwrap().build().unwrap();
    let kernel = program.kernel(&manifest.kernel).unwrap();
    let inputs = manifest.to_launch(kernel).unwrap();
    let mut buffers = spool.buffers(&manifest).unwrap();
    let run = RunOptions { threads: Some(1), buffer_modes: inputs.modes.clone(), ..RunOptions::default() };
    let plan = clrace::check::Plan { races: None, run, explore: None, release_buffers: false };
    clrace::check::check(&program, &inputs.launch, &mut buffers, plan).unwrap();
    inputs
        .launch
        .args
        .iter()
        .enumerate()
        .filter_map(|(i, arg)| match arg {
            ArgValue::Buffer(b) => Some((i, buffers[*b].clone())),
            _ => None,
        })
        .collect()
}

/// The dumps `clrace check` printed for a file exported with `--dump` (bytes as `0xNN`), by
/// argument name.
fn dumped(stdout: &str) -> Vec<(String, Vec<u8>)> {
    let mut dumps: Vec<(String, Vec<u8>)> = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("Argument '") {
            dumps.push((rest.split('\'').next().unwrap().to_string(), Vec::new()));
        } else if let Some((_, value)) = line.split_once(" = 0x") {
            dumps.last_mut().unwrap().1.push(u8::from_str_radix(value, 16).unwrap());
        }
    }
    dumps
}

/// The buffers the exported file leaves (dumped) are those the spooled launch leaves.
fn same_outputs(launch: &Path, sim: &Path, writable: &[&str]) {
    let name = sim.file_name().unwrap().to_str().unwrap();
    let checked = clrace_in(sim.parent().unwrap(), &["check", "--threads", "1", name]);
    let dumps = dumped(&text(&checked.stdout));
    let names: Vec<&str> = dumps.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, writable, "the arguments dumped");
    let (spool, manifest) = clrace::spool::open_manifest(launch).unwrap();
    let program = spool.program(&manifest).unwrap().build().unwrap();
    let args = &program.kernel(&manifest.kernel).unwrap().args;
    let expected = spooled_outputs(launch);
    for (dump_name, bytes) in &dumps {
        let index = args.iter().position(|a| a.name == *dump_name).unwrap();
        let (_, want) = expected.iter().find(|(i, _)| *i == index).unwrap();
        assert!(bytes == want, "argument '{dump_name}' ends otherwise in the export ({} bytes)", bytes.len());
    }
}

#[test]
fn an_exported_launch_checks_as_the_spooled_one() {
    // The racy reduction, whose race shows only with the device's extensions: the export keeps them.
    let dir = tempfile::tempdir().unwrap();
    let launches = spool_of(dir.path(), "host", &[]);
    let out = dir.path().join("out");
    let sim = export(&launches[0], &out, &[]);
    let report = same_report(&launches[0], &sim);
    assert!(report.contains("\"kind\":\"race\""), "{report}");
    let text = std::fs::read_to_string(&sim).unwrap();
    assert!(text.contains("# clrace: build-options ") && text.contains("-cl-ext=-all"), "{text}");
    // Every buffer the kernel may write, dumped, ends as the spooled launch's does.
    let dumped = dir.path().join("dumped");
    let sim = export(&launches[0], &dumped, &["--dump", "--name", "reduce"]);
    assert_eq!(sim.file_name().unwrap(), "reduce.sim");
    assert!(dumped.join("reduce.cl").is_file());
    same_outputs(&launches[0], &sim, &["partial"]);
}

#[test]
fn access_modes_and_portable_files_check_as_the_spooled_launch() {
    // A read-only buffer the kernel stores to: an access-mode finding, in the export too.
    let dir = tempfile::tempdir().unwrap();
    let launches = spool_of(dir.path(), "access_modes", &["ro"]);
    let sim = export(&launches[0], &dir.path().join("ro"), &["--dump"]);
    let report = same_report(&launches[0], &sim);
    assert!(report.contains("access-mode"), "{report}");
    let text = std::fs::read_to_string(&sim).unwrap();
    assert!(text.lines().any(|l| l.starts_with('<') && l.contains(" ro")), "{text}");
    same_outputs(&launches[0], &sim, &["result"]);
    // Portable: the device's options left out, named in a comment; this kernel does not see them.
    let sim = export(&launches[0], &dir.path().join("portable"), &["--portable"]);
    let text = std::fs::read_to_string(&sim).unwrap();
    assert!(!text.contains("# clrace: build-options") && text.contains("device's options: -Xclang"), "{text}");
    same_report(&launches[0], &sim);
}

/// `clrace export` of the first launch of host `name` (with `args`) must fail saying `why`.
fn refused(name: &str, args: &[&str], why: &str) {
    let dir = tempfile::tempdir().unwrap();
    let launches = spool_of(dir.path(), name, args);
    let out = dir.path().join("out");
    let done = clrace_in(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["export", launches[0].to_str().unwrap(), out.to_str().unwrap()],
    );
    let stderr = text(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{name}: {stderr}");
    assert!(stderr.starts_with("clrace: cannot export: ") && stderr.contains(why), "{name}: {stderr}");
    assert!(!out.exists(), "{name}: a refused export wrote {}", out.display());
}

#[test]
fn launches_a_launch_file_cannot_say_are_refused() {
    refused("access_modes", &["sub-ro"], "is a sub-buffer (at byte");
    refused("image", &[], "is an image; launch files for Oclgrind have no images");
    refused("link", &[], "was linked from 2 separately compiled unit(s)");
}
