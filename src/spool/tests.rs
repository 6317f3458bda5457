//! Tests of the spool store: what is written is read back whole, blobs are shared, only
//! complete launches are seen, the budget holds, and damage is named.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::*;
use crate::exec::ArgValue;
use crate::exec::image::{ImageDesc, ImageKind};
use crate::exec::memory::BufferMode;
use crate::program::{AddressSpace, Handle, KernelArg, KernelInfo};

fn program() -> Arc<ProgramSpec> {
    Arc::new(ProgramSpec {
        name: "k-0123abcd.cl".into(),
        kind: ProgramKind::Source {
            text: "kernel void k(global int *a) { a[0] = 1; }".into(),
            options: "-DX=1".into(),
            device_options: "-cl-std=CL3.0".into(),
            headers: vec![("h.h".into(), "#define Y 2".into())],
        },
    })
}

fn image() -> ImageDesc {
    ImageDesc { kind: ImageKind::D2, order: 0x10B5, data_type: 0x10D2, width: 4, height: 2, depth: 1, array_size: 1 }
}

/// A launch with every kind of argument.
fn record(seq: u64, program: &Arc<ProgramSpec>) -> LaunchRecord {
    LaunchRecord {
        seq,
        kernel: "k".into(),
        number: seq,
        program: program.clone(),
        work_dim: 2,
        offset: [1, 2, 0],
        global: [64, 8, 1],
        local: Some([16, 2, 1]),
        args: vec![
            SpooledArg::Buffer { index: 0, offset: 0 },
            SpooledArg::Buffer { index: 0, offset: 16 },
            SpooledArg::Null,
            SpooledArg::Local { size: 256 },
            SpooledArg::value(&[1, 0, 0, 0xfe]),
            SpooledArg::Image { index: 1, desc: image() },
            SpooledArg::Sampler { bits: 0x12 },
        ],
        buffers: vec![(0..=255u8).cycle().take(4096).collect(), vec![7; 4 * 2 * 16]],
        modes: vec![BufferMode::ReadOnly, BufferMode::WriteOnly],
    }
}

fn arg(name: &str, space: AddressSpace, is_pointer: bool, handle: Option<Handle>) -> KernelArg {
    KernelArg { name: name.into(), space, is_pointer, type_name: String::new(), size: 8, pointee_size: 4, handle }
}

/// The signature `record` fits.
fn info() -> KernelInfo {
    KernelInfo {
        name: "k".into(),
        args: vec![
            arg("a", AddressSpace::Global, true, None),
            arg("b", AddressSpace::Global, true, None),
            arg("c", AddressSpace::Constant, true, None),
            arg("l", AddressSpace::Local, true, None),
            arg("v", AddressSpace::Private, false, None),
            arg("img", AddressSpace::Global, false, Some(Handle::Image)),
            arg("s", AddressSpace::Private, false, Some(Handle::Sampler)),
        ],
        required_local_size: None,
    }
}

/// Submits `record` and waits for its `done`.
fn write(writer: &Arc<SpoolWriter>, record: LaunchRecord) -> Result<u64, String> {
    let reserved: u64 = record.buffers.iter().map(|b| b.len() as u64).sum();
    assert!(writer.reserve(reserved), "the test's budget holds its launches");
    let (tx, rx) = mpsc::channel();
    writer.submit(record, reserved, Box::new(move |result| tx.send(result).unwrap()));
    rx.recv_timeout(Duration::from_secs(60)).expect("done is called")
}

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_launch_with_every_kind_of_argument_reads_back_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let program = program();
    let written = record(42, &program);
    let bytes = write(&writer, written.clone()).unwrap();
    assert!(bytes > 0);
    assert_eq!(writer.used(), bytes, "the reservation became the bytes written");

    let spool = Spool::open(dir.path()).unwrap();
    let launches = spool.launches().unwrap();
    assert_eq!(launches.len(), 1);
    assert_eq!((launches[0].seq, launches[0].kernel.as_str()), (42, "k"));
    assert_eq!(launches[0].path, dir.path().join("launches/00000042.json"));
    assert_eq!(spool.manifest_path(42), launches[0].path);
    let launch = spool.load(&launches[0]).unwrap();
    assert_eq!((launch.seq, launch.number, launch.kernel.as_str(), launch.work_dim), (42, 42, "k", written.work_dim));
    assert_eq!((launch.offset, launch.global, launch.local), (written.offset, written.global, written.local));
    assert_eq!(launch.args, written.args);
    assert_eq!(launch.modes, written.modes);
    assert_eq!(spool.buffers(&launch).unwrap(), written.buffers);
    assert_eq!(*spool.program(&launch).unwrap(), *program);

    let inputs = launch.to_launch(&info()).unwrap();
    assert_eq!(inputs.assumed_local, None);
    assert_eq!(inputs.modes, written.modes);
    let l = &inputs.launch;
    assert_eq!(
        (l.kernel.as_str(), l.work_dim, l.global_offset, l.global_size, l.local_size),
        ("k", 2, [1, 2, 0], [64, 8, 1], [16, 2, 1])
    );
    let expected = vec![
        ArgValue::Buffer(0),
        ArgValue::SubBuffer { buffer: 0, offset: 16 },
        ArgValue::Null,
        ArgValue::Local(256),
        ArgValue::Value(vec![1, 0, 0, 0xfe]),
        ArgValue::Image { buffer: 1, desc: image() },
        ArgValue::Sampler(0x12),
    ];
    assert_eq!(format!("{:?}", l.args), format!("{expected:?}"));
}

#[test]
fn a_manifest_is_the_documented_json() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    write(&writer, record(7, &program())).unwrap();
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("spool.json")).unwrap()).unwrap();
    assert_eq!(info["format"], 1);
    assert_eq!(info["clrace"], env!("CARGO_PKG_VERSION"));
    let text = std::fs::read(dir.path().join("launches/00000007.json")).unwrap();
    let m: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "format", "seq", "kernel", "number", "program", "work_dim", "offset", "global", "local", "args", "buffers",
            "modes"
        ]
    );
    assert_eq!((m["format"].clone(), m["seq"].clone(), m["kernel"].clone()), (1.into(), 7.into(), "k".into()));
    assert_eq!(m["local"], serde_json::json!([16, 2, 1]));
    assert_eq!(m["args"][0], serde_json::json!({"kind": "buffer", "index": 0, "offset": 0}));
    assert_eq!(m["args"][2], serde_json::json!({"kind": "null"}));
    assert_eq!(m["args"][3], serde_json::json!({"kind": "local", "size": 256}));
    assert_eq!(m["args"][4], serde_json::json!({"kind": "value", "hex": "010000fe"}));
    assert_eq!(m["args"][5]["kind"], "image");
    assert_eq!(m["args"][5]["desc"]["width"], 4);
    assert_eq!(m["args"][6], serde_json::json!({"kind": "sampler", "bits": 0x12}));
    assert_eq!(m["buffers"][1]["size"], 128);
    assert_eq!(m["modes"], serde_json::json!(["read-only", "write-only"]));
    let hash = m["program"]["hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(dir.path().join("blobs").join(&hash[..2]).join(format!("{hash}.zst")).is_file());
}

#[test]
fn a_program_record_of_every_kind_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let programs = [
        program(),
        Arc::new(ProgramSpec { name: "m.spv".into(), kind: ProgramKind::Il { bytes: vec![3, 2, 0x23, 7, 0xff] } }),
        Arc::new(ProgramSpec {
            name: "linked".into(),
            kind: ProgramKind::Linked {
                units: vec![
                    UnitSpec {
                        name: "a.cl".into(),
                        source: "int f(void);".into(),
                        options: "-DA".into(),
                        headers: vec![("x.h".into(), "int x;".into())],
                        il: None,
                    },
                    UnitSpec {
                        name: "b.spv".into(),
                        source: String::new(),
                        options: String::new(),
                        headers: Vec::new(),
                        il: Some(vec![1, 2, 3]),
                    },
                ],
                options: "-cl-denorms-are-zero".into(),
            },
        }),
    ];
    for (seq, program) in programs.iter().enumerate() {
        write(&writer, record(seq as u64 + 1, program)).unwrap();
    }
    let spool = Spool::open(dir.path()).unwrap();
    let launches = spool.launches().unwrap();
    assert_eq!(launches.iter().map(|l| l.seq).collect::<Vec<_>>(), [1, 2, 3]);
    for (entry, program) in launches.iter().zip(&programs) {
        let launch = spool.load(entry).unwrap();
        assert_eq!(*spool.program(&launch).unwrap(), **program);
    }
    let linked = spool.program(&spool.load(&launches[2]).unwrap()).unwrap();
    assert_eq!(linked.sources().program_text("a.cl").as_deref(), Some("int f(void);"));
    assert_eq!(linked.sources().program_text("b.spv").as_deref(), Some(""), "a SPIR-V unit has empty source");
    assert_eq!(programs[1].sources().program_text("m.spv"), None, "SPIR-V has no source text");
}

#[test]
fn a_buffer_two_launches_share_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let program = program();
    let first = write(&writer, record(1, &program)).unwrap();
    let second = write(&writer, record(2, &program)).unwrap();
    assert!(second < first, "the second launch wrote only its manifest ({second} >= {first} bytes)");
    let blobs = files_under(&dir.path().join("blobs"));
    // The program record and the two buffers, once each.
    assert_eq!(blobs.len(), 3, "{blobs:?}");
    let spool = Spool::open(dir.path()).unwrap();
    let launches = spool.launches().unwrap();
    let (a, b) = (spool.load(&launches[0]).unwrap(), spool.load(&launches[1]).unwrap());
    assert_eq!(a.buffers, b.buffers);
    assert_eq!(a.program, b.program);
}

#[test]
fn only_complete_manifests_are_launches() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    write(&writer, record(3, &program())).unwrap();
    // What a write cut off by a crash leaves: temporary files of blobs and of manifests.
    let launches = dir.path().join("launches");
    std::fs::write(launches.join(".tmp-99-0-00000004.json"), "{\"format\": 1, \"seq\": 4, \"ker").unwrap();
    std::fs::write(dir.path().join("blobs/.tmp-99-1-ab.zst"), [0x28, 0xb5]).unwrap();
    std::fs::write(launches.join("notes.txt"), "not a launch").unwrap();
    let spool = Spool::open(dir.path()).unwrap();
    let seqs: Vec<u64> = spool.launches().unwrap().iter().map(|l| l.seq).collect();
    assert_eq!(seqs, [3]);
    assert!(spool.layer_state().is_none(), "no layer.json after a crash");
}

#[test]
fn launches_come_in_seq_order_with_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let program = program();
    for seq in [120, 7, 9, 100_000_000] {
        write(&writer, record(seq, &program)).unwrap();
    }
    let spool = Spool::open(dir.path()).unwrap();
    let seqs: Vec<u64> = spool.launches().unwrap().iter().map(|l| l.seq).collect();
    assert_eq!(seqs, [7, 9, 120, 100_000_000]);
}

#[test]
fn a_full_budget_refuses_reservations() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1000).unwrap();
    assert_eq!(writer.budget(), 1000);
    assert!(writer.reserve(600));
    assert!(!writer.reserve(500), "600 + 500 bytes do not fit 1000");
    assert_eq!(writer.used(), 600, "a refused reservation reserves nothing");
    assert!(writer.reserve(400));
    assert!(!writer.reserve(1));
    writer.release(600);
    assert_eq!(writer.used(), 400);
    assert!(writer.reserve(600));
    assert!(!writer.reserve(u64::MAX), "no overflow");
}

#[test]
fn written_launches_are_charged_what_they_took() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 20).unwrap();
    let mut record = record(1, &program());
    // Zeros compress well: the launch takes far less than it reserved.
    record.buffers = vec![vec![0; 64 << 10], vec![0; 128]];
    let bytes = write(&writer, record).unwrap();
    assert!(bytes < 8 << 10, "{bytes} bytes for 64 KiB of zeros");
    assert_eq!(writer.used(), bytes);
    let on_disk: u64 = files_under(dir.path())
        .iter()
        .filter(|p| !p.ends_with("spool.json"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    assert_eq!(bytes, on_disk, "the bytes written are those on disk");
}

#[test]
fn blobs_read_back_small_and_large() {
    let dir = tempfile::tempdir().unwrap();
    let blobs = super::blobs::Blobs::new(dir.path());
    // Bytes that do not compress (xorshift), past the size read whole: streamed back.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let large: Vec<u8> = (0..5 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let small = large[..3000].to_vec();
    for bytes in [&large, &small] {
        let (blob, written) = blobs.put(bytes).unwrap();
        assert!(written > 0);
        assert_eq!(&blobs.get(&blob).unwrap(), bytes);
        // The size stored is checked both ways.
        let wrong = super::format::BlobRef { size: blob.size - 1, ..blob.clone() };
        let error = blobs.get(&wrong).unwrap_err();
        assert!(error.contains("is corrupt") && error.contains(&format!("{} bytes", blob.size - 1)), "{error}");
    }
    assert!(
        blobs.stored_size(&super::blobs::Blobs::reference(&large).hash).unwrap() > 4 << 20,
        "the large blob is streamed"
    );
}

#[test]
fn a_corrupt_or_missing_blob_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    write(&writer, record(1, &program())).unwrap();
    let spool = Spool::open(dir.path()).unwrap();
    let launch = spool.load(&spool.launches().unwrap()[0]).unwrap();
    let path = spool.blobs().path(&launch.buffers[0].hash);

    // Other bytes, compressed as the spool does: the hash says so.
    std::fs::write(&path, zstd::bulk::compress(&vec![1u8; 4096], 1).unwrap()).unwrap();
    let error = spool.buffers(&launch).unwrap_err();
    assert!(error.contains("is corrupt") && error.contains("hash"), "{error}");
    // More bytes than stored: one more, and more than one more (which does not decompress
    // into the stored size and one byte).
    for more in [4097, 5000] {
        std::fs::write(&path, zstd::bulk::compress(&vec![1u8; more], 1).unwrap()).unwrap();
        let error = spool.buffers(&launch).unwrap_err();
        assert!(error.contains("is corrupt") && error.contains("4096 bytes"), "{error}");
    }
    // Not zstd at all.
    std::fs::write(&path, b"garbage").unwrap();
    let error = spool.buffers(&launch).unwrap_err();
    assert!(error.contains("is corrupt"), "{error}");
    // Gone.
    std::fs::remove_file(&path).unwrap();
    let error = spool.buffers(&launch).unwrap_err();
    assert!(error.contains("missing") && error.contains(&launch.buffers[0].hash), "{error}");
    // A damaged manifest.
    std::fs::write(spool.manifest_path(1), "{\"format\": 1, \"seq\"").unwrap();
    let entries = spool.launches().unwrap();
    assert_eq!(entries[0].kernel, "", "listed, with no kernel");
    let error = spool.load(&entries[0]).unwrap_err();
    assert!(error.contains("is not a spooled launch"), "{error}");
}

#[test]
fn a_failed_write_is_reported_through_done() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    // Nowhere to put manifests.
    std::fs::remove_dir(dir.path().join("launches")).unwrap();
    std::fs::write(dir.path().join("launches"), "").unwrap();
    let error = write(&writer, record(1, &program())).unwrap_err();
    assert!(error.contains("cannot write") && error.contains("00000001.json"), "{error}");
    assert_eq!(writer.drain(Instant::now() + Duration::from_secs(10)), 0);
    // The blobs it wrote before failing stay, and count.
    let blobs: u64 = files_under(&dir.path().join("blobs")).iter().map(|p| std::fs::metadata(p).unwrap().len()).sum();
    assert_eq!(writer.used(), blobs);
}

#[test]
fn drain_waits_for_every_queued_launch() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let program = program();
    let done = Arc::new(std::sync::atomic::AtomicU64::new(0));
    for seq in 1..=20 {
        let record = record(seq, &program);
        assert!(writer.reserve(4096));
        let done = done.clone();
        writer.submit(
            record,
            4096,
            Box::new(move |r| {
                r.unwrap();
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }),
        );
    }
    assert_eq!(writer.drain(Instant::now() + Duration::from_secs(120)), 0);
    assert_eq!(done.load(std::sync::atomic::Ordering::SeqCst), 20);
    assert_eq!(Spool::open(dir.path()).unwrap().launches().unwrap().len(), 20);
}

#[test]
fn a_panicking_done_does_not_stop_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    assert!(writer.reserve(0));
    writer.submit(record(1, &program()), 0, Box::new(|_| panic!("the caller's callback panics")));
    assert_eq!(writer.drain(Instant::now() + Duration::from_secs(60)), 0);
    write(&writer, record(2, &program())).unwrap();
    assert_eq!(Spool::open(dir.path()).unwrap().launches().unwrap().len(), 2);
}

#[test]
fn the_layer_state_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let mut ledger = crate::series::Ledger::default();
    let key = crate::series::KernelKey { program: "p.cl".into(), name: "k".into() };
    ledger.record(&key).launches = 3;
    let state = serde_json::json!({"format": 1, "kernels": ledger.to_json(), "config": {"print_limit": 7}});
    writer.write_layer_state(&state).unwrap();
    assert_eq!(Spool::open(dir.path()).unwrap().layer_state(), Some(state));
}

#[test]
fn processes_writing_one_spool_get_runs_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second, third) = (
        SpoolWriter::create(dir.path(), 1 << 30).unwrap(),
        SpoolWriter::create(dir.path(), 1 << 30).unwrap(),
        SpoolWriter::create(dir.path(), 1 << 30).unwrap(),
    );
    assert_eq!((first.run(), second.run(), third.run()), (0, 1, 2));
    let program = program();
    // Both number their launches from 1: the spool keeps them apart, the first run's first.
    write(&second, record(1, &program)).unwrap();
    write(&first, record(1, &program)).unwrap();
    write(&first, record(2, &program)).unwrap();
    let spool = Spool::open(dir.path()).unwrap();
    let seqs: Vec<u64> = spool.launches().unwrap().iter().map(|l| l.seq).collect();
    assert_eq!(seqs, [1, 2, RUN_STRIDE + 1]);
    // Each leaves its ledger; the third crashed. The spool reads them as one, and names it.
    let key = crate::series::KernelKey { program: "p.cl".into(), name: "k".into() };
    for (writer, launches) in [(&first, 2), (&second, 5)] {
        let mut ledger = crate::series::Ledger::default();
        ledger.record(&key).launches = launches;
        let state = serde_json::json!({"format": 1, "kernels": ledger.to_json(), "config": {"run": writer.run()}});
        writer.write_layer_state(&state).unwrap();
    }
    let state = spool.layer_state().unwrap();
    assert_eq!(state["config"]["run"], 0, "the first run's settings");
    assert_eq!(state["kernels"][0]["launches"], 7);
    assert_eq!(state["runs_missing"], serde_json::json!([2]));
    assert_eq!(spool.runs().len(), 3);
}

#[test]
fn spools_of_other_formats_and_other_directories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let error = Spool::open(dir.path()).unwrap_err();
    assert!(error.contains("is not a clrace spool"), "{error}");
    let error = Spool::open(&dir.path().join("nothing")).unwrap_err();
    assert!(error.contains("is not a clrace spool"), "{error}");

    std::fs::write(dir.path().join("spool.json"), r#"{"format": 2, "clrace": "9.0.0"}"#).unwrap();
    let error = Spool::open(dir.path()).unwrap_err();
    assert!(error.contains("format 2") && error.contains("newer clrace"), "{error}");
    let error = SpoolWriter::create(dir.path(), 1).err().unwrap();
    assert!(error.contains("format 2"), "{error}");

    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("notes.txt"), "the user's").unwrap();
    let error = SpoolWriter::create(other.path(), 1).err().unwrap();
    assert!(error.contains("is not empty and is not a clrace spool"), "{error}");
    assert!(!other.path().join("spool.json").exists() && !other.path().join("blobs").exists());

    std::fs::write(dir.path().join("spool.json"), "[1, 2]").unwrap();
    let error = Spool::open(dir.path()).unwrap_err();
    assert!(error.contains("is not a clrace spool"), "{error}");
    assert!(SpoolWriter::create(dir.path(), 1).is_err());
}

#[test]
fn an_existing_spool_of_this_format_is_written_into() {
    let dir = tempfile::tempdir().unwrap();
    write(&SpoolWriter::create(dir.path(), 1 << 30).unwrap(), record(1, &program())).unwrap();
    write(&SpoolWriter::create(dir.path(), 1 << 30).unwrap(), record(2, &program())).unwrap();
    assert_eq!(Spool::open(dir.path()).unwrap().launches().unwrap().len(), 2);
}

#[test]
fn a_manifest_opens_with_its_spool() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    write(&writer, record(5, &program())).unwrap();
    let (spool, launch) = open_manifest(&dir.path().join("launches/00000005.json")).unwrap();
    assert_eq!(spool.dir(), dir.path());
    assert_eq!(launch.seq, 5);
    assert_eq!(spool.buffers(&launch).unwrap(), record(5, &program()).buffers);
    let error = open_manifest(&dir.path().join("spool.json")).err().unwrap();
    assert!(error.contains("launches/"), "{error}");
}

#[test]
fn copied_launches_make_a_spool_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SpoolWriter::create(dir.path(), 1 << 30).unwrap();
    let program = program();
    for seq in 1..=3 {
        let mut record = record(seq, &program);
        record.buffers[1] = vec![seq as u8; 128];
        write(&writer, record).unwrap();
    }
    writer.write_layer_state(&serde_json::json!({})).unwrap();
    let from = Spool::open(dir.path()).unwrap();
    let to = tempfile::tempdir().unwrap();
    copy_launches(&from, &[3, 1], to.path()).unwrap();
    let copy = Spool::open(to.path()).unwrap();
    let entries = copy.launches().unwrap();
    assert_eq!(entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 3]);
    for entry in &entries {
        let launch = copy.load(entry).unwrap();
        assert_eq!(copy.buffers(&launch).unwrap()[1], vec![entry.seq as u8; 128]);
        assert_eq!(*copy.program(&launch).unwrap(), *program);
    }
    // The program, the shared buffer, and one buffer of each launch copied: not launch 2's.
    assert_eq!(files_under(&to.path().join("blobs")).len(), 4);
    assert!(copy.layer_state().is_none());
}

#[test]
fn arguments_become_the_launch_an_inline_check_makes() {
    let launch = |args: Vec<SpooledArg>, local: Option<[u64; 3]>| SpooledLaunch {
        format: 1,
        seq: 1,
        kernel: "k".into(),
        number: 1,
        program: super::blobs::Blobs::reference(b"p"),
        work_dim: 1,
        offset: [0; 3],
        global: [100, 1, 1],
        local,
        args,
        buffers: Vec::new(),
        modes: Vec::new(),
    };
    let two = KernelInfo {
        name: "k".into(),
        args: vec![arg("p", AddressSpace::Global, true, None), arg("n", AddressSpace::Private, false, None)],
        required_local_size: None,
    };
    // NULL for a value is a pointer-sized zero; no local size: an assumed one.
    let inputs = launch(vec![SpooledArg::Null, SpooledArg::Null], None).to_launch(&two).unwrap();
    assert_eq!(format!("{:?}", inputs.launch.args), format!("{:?}", [ArgValue::Null, ArgValue::Value(vec![0; 8])]));
    assert_eq!(inputs.assumed_local, Some([50, 1, 1]));
    assert_eq!(inputs.launch.local_size, [50, 1, 1]);
    // A required local size is no assumption.
    let required = KernelInfo { required_local_size: Some([10, 1, 1]), ..two.clone() };
    let inputs = launch(vec![SpooledArg::Null, SpooledArg::Null], None).to_launch(&required).unwrap();
    assert_eq!((inputs.launch.local_size, inputs.assumed_local), ([10, 1, 1], None));
    // A value for a pointer, a buffer for a value, a missing argument: not supported.
    for args in [
        vec![SpooledArg::value(&[0; 8]), SpooledArg::Null],
        vec![SpooledArg::Null, SpooledArg::Buffer { index: 0, offset: 0 }],
        vec![SpooledArg::Null],
    ] {
        let error = launch(args, Some([4, 1, 1])).to_launch(&two).unwrap_err();
        assert!(matches!(error, InputError::Unsupported { .. }), "{error:?}");
        assert!(error.to_string().contains("is of a kind not supported yet"), "{error}");
    }
    let error =
        launch(vec![SpooledArg::Null, SpooledArg::Value { hex: "0g".into() }], None).to_launch(&two).unwrap_err();
    assert!(matches!(error, InputError::Corrupt(_)), "{error:?}");
}

#[test]
fn hex_round_trips() {
    let bytes: Vec<u8> = (0..=255).collect();
    let hex = hex::encode(&bytes);
    assert_eq!(&hex[..8], "00010203");
    assert_eq!(hex::decode(&hex).unwrap(), bytes);
    assert_eq!(hex::decode("ABff").unwrap(), [0xab, 0xff]);
    assert!(hex::decode("abc").is_err());
}

#[test]
fn assumed_local_sizes_divide_the_range() {
    assert_eq!(assumed_local_size([1024, 1, 1], 1), [64, 1, 1]);
    assert_eq!(assumed_local_size([100, 7, 1], 2), [50, 1, 1]);
    assert_eq!(assumed_local_size([1, 1, 1], 1), [1, 1, 1]);
    assert_eq!(assumed_local_size([97, 1, 1], 1), [1, 1, 1]);
}
