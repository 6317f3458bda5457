//! Spools made for tests from launch files (`.sim`), with the spool's own writer: each launch
//! file's program as a source program record, its arguments and buffers, written under a SEQ;
//! and the layer's `layer.json` when the test wants one.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clrace::series::{KernelKey, Ledger};
use clrace::spool::{LaunchRecord, ProgramKind, ProgramSpec, SpoolWriter, SpooledArg};

/// A launch file of the corpus, read as the spool would hold its launch.
pub struct Sim {
    pub program: Arc<ProgramSpec>,
    pub kernel: String,
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    pub local: [u64; 3],
    pub args: Vec<SpooledArg>,
    pub buffers: Vec<Vec<u8>>,
    pub modes: Vec<clrace::exec::memory::BufferMode>,
}

/// Reads `tests/DIR/NAME.sim` and its program.
pub fn sim(path: &str) -> Sim {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&path).unwrap();
    let header = clrace::launch_file::parse_header(&text).unwrap();
    let source = std::fs::read_to_string(path.with_file_name(&header.program)).unwrap();
    let options = header.build_options.clone().unwrap_or_default();
    let program = clrace::Program::from_source(&source, Path::new(&header.program), &options).unwrap();
    let info = program.kernel(&header.kernel).unwrap();
    let data = clrace::launch_file::parse_args(&text, &header, info, 1).unwrap();
    let args = data.launch.args.iter().map(SpooledArg::from).collect();
    let kind = ProgramKind::Source { text: source, options, device_options: String::new(), headers: Vec::new() };
    Sim {
        program: Arc::new(ProgramSpec { name: header.program.clone(), kind }),
        kernel: header.kernel,
        work_dim: data.launch.work_dim,
        offset: data.launch.global_offset,
        global: data.launch.global_size,
        local: data.launch.local_size,
        args,
        buffers: data.buffers,
        modes: data.modes,
    }
}

/// One launch to spool: a launch file, under SEQ `seq`, as launch `number` of its kernel, with
/// or without its local size.
pub struct Spooled<'a> {
    pub sim: &'a Sim,
    pub seq: u64,
    pub number: u64,
    pub local: bool,
}

/// Writes a spool of `launches` into `dir`.
pub fn write_spool(dir: &Path, launches: &[Spooled]) {
    let writer = SpoolWriter::create(dir, u64::MAX).unwrap();
    for l in launches {
        let record = LaunchRecord {
            seq: l.seq,
            kernel: l.sim.kernel.clone(),
            number: l.number,
            program: l.sim.program.clone(),
            work_dim: l.sim.work_dim,
            offset: l.sim.offset,
            global: l.sim.global,
            local: l.local.then_some(l.sim.local),
            args: l.sim.args.clone(),
            buffers: l.sim.buffers.clone(),
            modes: l.sim.modes.clone(),
        };
        writer.submit(record, 0, Box::new(|result| assert!(result.is_ok(), "{result:?}")));
    }
    assert_eq!(writer.drain(Instant::now() + Duration::from_secs(60)), 0);
}

/// Writes `layer.json` as the layer leaves it: every kernel's launches, of which `spooled`
/// were spooled and the rest skipped, and the layer's settings.
pub fn write_layer_state(dir: &Path, kernels: &[(&Sim, u64, u64)], config: serde_json::Value) {
    let mut ledger = Ledger::default();
    for (sim, launches, spooled) in kernels {
        let key = KernelKey { program: sim.program.name.clone(), name: sim.kernel.clone() };
        let record = ledger.record(&key);
        record.launches = *launches;
        record.spooled = *spooled;
        record.admitted = *spooled;
        for _ in *spooled..*launches {
            ledger.skip(&key, "checks were behind");
        }
    }
    let state = serde_json::json!({"format": 1, "kernels": ledger.to_json(), "spool_mb": 1024, "config": config});
    let text = serde_json::to_vec_pretty(&state).unwrap();
    // The spool's first run (write_spool's writer claimed it).
    std::fs::write(dir.join("runs/0/layer.json"), text).unwrap();
}

/// A fresh directory for a test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("clrace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `clrace ARGS` in the crate's directory.
pub fn clrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clrace")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
}

/// What `clrace` wrote on stdout and stderr.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The launch files of [`standard_spool`]: racy kernels with one or two findings each, and a
/// clean one.
pub const SIMS: [&str; 5] = [
    "tests/races/intergroup_ww.sim",
    "tests/races/matmul_tiled.sim",
    "tests/races/double_buffer.sim",
    "tests/races/uniform_then_nonuniform.sim",
    "tests/races/intergroup_ww_ok.sim",
];

/// A spool of 15 launches (SEQ 1, 3, 5, ...: with gaps), each kernel of [`SIMS`] launched 3
/// times in turn, so that any split into shards spreads a kernel's launches over them; the
/// clean kernel without a local size (a note). With `layer`, a `layer.json` that counts 2
/// more launches of each kernel, skipped.
pub fn standard_spool(dir: &Path, layer: bool) {
    let sims: Vec<Sim> = SIMS.iter().map(|s| sim(s)).collect();
    let launches: Vec<Spooled> = (0..15u64)
        .map(|i| {
            let k = (i % 5) as usize;
            Spooled { sim: &sims[k], seq: 2 * i + 1, number: i / 5 + 1, local: k != 4 }
        })
        .collect();
    write_spool(dir, &launches);
    if layer {
        let kernels: Vec<(&Sim, u64, u64)> = sims.iter().map(|s| (s, 5, 3)).collect();
        write_layer_state(dir, &kernels, serde_json::json!({"print_limit": 100, "format": "text"}));
    }
}
