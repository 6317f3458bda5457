//! The spool store against the golden corpus: every launch file of the golden tests
//! (`tests/races`, `tests/checks`, `tests/checks/uninit`) whose program builds is written to one
//! spool through the spool's writer as the layer would hand it over, read back, and checked both
//! ways, from the launch file's inputs and from the spool's: the JSON reports must be
//! byte-identical.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clrace::exec::RunOptions;
use clrace::launch_file::{self, LaunchFile};
use clrace::program::Program;
use clrace::report::{self, Format, LaunchFindings, Occasion, Seen, Sources};
use clrace::spool::{LaunchRecord, ProgramKind, ProgramSpec, Spool, SpoolWriter, SpooledArg};

/// The directories of the golden corpus, and whether their golden test checks uninitialised
/// values.
fn corpus() -> Vec<(PathBuf, bool)> {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    vec![(tests.join("races"), false), (tests.join("checks"), false), (tests.join("checks/uninit"), true)]
}

/// A launch file ready to check: its program as `clrace check` builds it, and as the layer
/// would spool it.
struct Case {
    sim: PathBuf,
    uninit: bool,
    program: Program,
    spec: Arc<ProgramSpec>,
    sources: Sources,
    data: LaunchFile,
}

/// Reads a launch file as `clrace check` does; None when its program is not there or does not
/// build.
fn case(sim: &Path, uninit: bool) -> Option<Case> {
    let text = launch_file::read_file(sim).ok()?;
    let mut header = launch_file::parse_header(&text).ok()?;
    let path = sim.parent()?.join(&header.program);
    if !path.is_file() {
        return None;
    }
    let options = header.build_options.clone().unwrap_or_default();
    header.build_options = Some(options.clone());
    let name = path.display().to_string();
    let (program, spec, sources) = if path.extension().is_some_and(|e| e == "spv") {
        let bytes = std::fs::read(&path).ok()?;
        let program = Program::from_spirv(&bytes).ok()?;
        (program, ProgramKind::Il { bytes }, Sources::new(Vec::new()))
    } else {
        let source = launch_file::read_file(&path).ok()?;
        let program = Program::from_source(&source, &path, &options).ok()?;
        let sources = Sources::new(vec![(path.clone(), source.clone())]);
        let kind = ProgramKind::Source { text: source, options, device_options: String::new(), headers: Vec::new() };
        (program, kind, sources)
    };
    let kernel = program.kernel(&header.kernel)?;
    let data = launch_file::parse_args(&text, &header, kernel, 1).ok()?;
    Some(Case {
        sim: sim.to_path_buf(),
        uninit,
        program,
        spec: Arc::new(ProgramSpec { name, kind: spec }),
        sources,
        data,
    })
}

/// The launch as the layer hands it to the spool writer.
fn record(seq: u64, case: &Case) -> LaunchRecord {
    let launch = &case.data.launch;
    let args = launch.args.iter().map(SpooledArg::from).collect();
    LaunchRecord {
        seq,
        kernel: launch.kernel.clone(),
        number: 1,
        program: case.spec.clone(),
        work_dim: launch.work_dim,
        offset: launch.global_offset,
        global: launch.global_size,
        local: Some(launch.local_size),
        args,
        buffers: case.data.buffers.clone(),
        modes: case.data.modes.clone(),
    }
}

/// Checks a launch and reports it alone, in JSON: the report's text and the kernel's printf.
fn check(
    program: &Program,
    sources: &Sources,
    launch: &clrace::Launch,
    mut buffers: Vec<Vec<u8>>,
    modes: Vec<clrace::exec::memory::BufferMode>,
    uninit: bool,
) -> String {
    let run =
        RunOptions { threads: Some(1), buffer_modes: modes, check_uninitialized: uninit, ..RunOptions::default() };
    let plan = clrace::check::Plan {
        races: Some(clrace::detect::Options::default()),
        run,
        explore: None,
        release_buffers: false,
    };
    let checked = match clrace::check::check(program, launch, &mut buffers, plan) {
        Ok(checked) => checked,
        Err(e) => return format!("error: {e}\n"),
    };
    let findings = LaunchFindings {
        kernel: &launch.kernel,
        module: program.module(),
        sources,
        launch,
        races: &checked.races,
        outcome: &checked.outcome,
        exploration: None,
    };
    let options = report::Options {
        format: Format::Json,
        sarif: false,
        suppressions: None,
        print_limit: 0,
        print_limit_name: "--print-limit ",
        lockstep: None,
        explore_bound: 0,
        occasion: Occasion::Alone,
        spooled: None,
    };
    let reported = report::report(&findings, &options, &mut Seen::default());
    format!("{}{}", checked.outcome.printf, reported.text)
}

#[test]
fn a_spooled_launch_reports_what_its_launch_file_reports() {
    let mut cases = Vec::new();
    let mut skipped = Vec::new();
    for (dir, uninit) in corpus() {
        let mut sims: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "sim"))
            .collect();
        sims.sort();
        for sim in sims {
            match case(&sim, uninit) {
                Some(case) => cases.push(case),
                None => skipped.push(sim),
            }
        }
    }
    println!("{} launch files compared, {} skipped: {skipped:?}", cases.len(), skipped.len());
    assert!(cases.len() >= 100, "{} launch files compared ({} skipped: {skipped:?})", cases.len(), skipped.len());

    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), u64::MAX).unwrap();
    let (tx, rx) = mpsc::channel();
    for (i, case) in cases.iter().enumerate() {
        let record = record(i as u64 + 1, case);
        let size: u64 = record.buffers.iter().map(|b| b.len() as u64).sum();
        assert!(writer.reserve(size));
        let tx = tx.clone();
        writer.submit(record, size, Box::new(move |result| tx.send((i, result)).unwrap()));
    }
    assert_eq!(writer.drain(Instant::now() + Duration::from_secs(300)), 0, "every launch written");
    drop(tx);
    let failed: Vec<_> = rx.iter().filter(|(_, r)| r.is_err()).collect();
    assert!(failed.is_empty(), "{failed:?}");

    let spool = Spool::open(dir.path()).unwrap();
    let entries = spool.launches().unwrap();
    assert_eq!(entries.len(), cases.len());
    let mut problems = Vec::new();
    let mut with_findings = 0;
    for (entry, case) in entries.iter().zip(&cases) {
        let name = case.sim.display();
        let launch = spool.load(entry).unwrap();
        let spec = spool.program(&launch).unwrap();
        assert_eq!(*spec, *case.spec, "{name}: the program record");
        let program = spec.build().unwrap_or_else(|e| panic!("{name}: the spooled program does not build: {e}"));
        let info = program.kernel(&launch.kernel).unwrap_or_else(|| panic!("{name}: no kernel {}", launch.kernel));
        let inputs = launch.to_launch(info).unwrap_or_else(|e| panic!("{name}: {e}"));
        let buffers = spool.buffers(&launch).unwrap();
        let from_spool = check(&program, &spec.sources(), &inputs.launch, buffers, inputs.modes, case.uninit);
        let data = &case.data;
        let from_file =
            check(&case.program, &case.sources, &data.launch, data.buffers.clone(), data.modes.clone(), case.uninit);
        if from_spool != from_file {
            problems.push(format!("{name}:\n--- launch file\n{from_file}--- spool\n{from_spool}"));
        }
        if from_file.lines().any(|l| !l.contains("\"kind\":\"summary\"")) {
            with_findings += 1;
        }
    }
    assert!(problems.is_empty(), "{} report(s) differ:\n{}", problems.len(), problems.join("\n"));
    assert!(with_findings >= 50, "only {with_findings} launch files with findings: the comparison says little");
}
