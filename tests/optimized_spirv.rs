//! Optimised SPIR-V: every kernel of `tests/corpus` is compiled offline the way an application
//! ships it (`clang-15 -O2` to bitcode, then `llvm-spirv-15` for SPIR-V 1.0, 1.2 and 1.4, and
//! the 1.4 module reassembled by SPIRV-Tools as 1.5 and 1.6, which llvm-spirv-15 cannot emit), loaded
//! with [`Program::from_spirv`] and run in the emulator; every buffer must match the emulator's
//! run of the same entry built from source, under the entry's `# clrace-test:` comparison rules.
//!
//! This exercises the -O2 constructs our own -O0 pipeline never emits (lifetime markers,
//! `OpPtrAccessChain`, byte-offset pointer arithmetic, integer-pointer casts, unordered compares,
//! ...). No OpenCL driver is involved. Pairs that cannot pass yet are listed in [`KNOWN`] with the
//! reason; a listed pair that starts passing fails the test, so the list stays accurate.
//!
//! Without `clang-15` and `llvm-spirv-15` on `PATH` the test says so and passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use clrace::compile::tokenize_options;
use clrace::launch::{LaunchData, parse_args, parse_header};
use clrace::{KernelInfo, Program};
use common::{TestDirectives, compare_buffer};

/// The SPIR-V versions an application might ask the translator for.
const VERSIONS: &[&str] = &["1.0", "1.2", "1.4", "1.5", "1.6"];

/// The newest version llvm-spirv-15 writes; later ones are made by reassembly.
const TRANSLATOR_MAX: &str = "1.4";

/// A corpus entry that cannot pass for some SPIR-V versions.
struct Known {
    entry: &'static str,
    /// A SPIR-V version of [`VERSIONS`], or `*` for all.
    version: &'static str,
    /// Text the failure must contain, so a different failure is not excused.
    failure: &'static str,
    /// Why it fails.
    reason: &'static str,
}

/// The LLVM `freeze` instruction that -O2 emits has no translation in llvm-spirv-15.
const NO_FREEZE: &str = "llvm-spirv-15 cannot translate LLVM `freeze`, so there is no SPIR-V to load";

/// spirv-dis refuses the out-of-range sampler filter mode llvm-spirv-15 writes for a literal
/// without filter bits (clrace loads it), so there is no reassembled module to load.
const NO_REASSEMBLY: &str = "SPIRV-Tools cannot disassemble a sampler literal without filter bits for reassembly";

const KNOWN: &[Known] = &[
    Known { entry: "bool_logic", version: "*", failure: "freeze", reason: NO_FREEZE },
    Known { entry: "int_char", version: "*", failure: "freeze", reason: NO_FREEZE },
    Known { entry: "int_int", version: "*", failure: "freeze", reason: NO_FREEZE },
    Known { entry: "int_long", version: "*", failure: "freeze", reason: NO_FREEZE },
    Known { entry: "int_short", version: "*", failure: "freeze", reason: NO_FREEZE },
    Known { entry: "while_data", version: "*", failure: "freeze", reason: NO_FREEZE },
    Known {
        entry: "atomics20_float_cas",
        version: "*",
        failure: "visitCallAtomicCmpXchg",
        reason: "llvm-spirv-15 aborts on compare-exchange of atomic_float/atomic_double; an offline build \
                 has no clrace workaround header to rewrite it",
    },
    Known { entry: "sampler_literal_bits", version: "1.5", failure: "filter mode", reason: NO_REASSEMBLY },
    Known { entry: "sampler_literal_bits", version: "1.6", failure: "filter mode", reason: NO_REASSEMBLY },
    Known {
        entry: "switch_stmt",
        version: "*",
        failure: "Invalid bit width in input: 2",
        reason: "-O2 narrows the switch to a 2-bit integer (i2), which llvm-spirv-15 refuses to translate",
    },
];

/// How many differing elements to print per buffer.
const SHOWN_PER_BUFFER: usize = 4;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("corpus")
}

/// `name` found on `PATH`, if any.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|p| p.is_file())
}

struct Tools {
    clang: PathBuf,
    llvm_spirv: PathBuf,
    /// `spirv-dis` and `spirv-as`, for versions past [`TRANSLATOR_MAX`].
    spirv_tools: Option<[PathBuf; 2]>,
}

impl Tools {
    /// Runs a tool; its stderr is the error.
    fn run(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let out = Command::new(tool).args(args).output().map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{} failed ({}): {}", tool.display(), out.status, String::from_utf8_lossy(&out.stderr).trim()))
        }
    }

    /// `cl` compiled at -O2 to LLVM bitcode `bc`, with the entry's build `options`.
    fn clang_o2(&self, cl: &Path, options: &str, bc: &Path) -> Result<(), String> {
        let tokens = tokenize_options(options)?;
        let mut args: Vec<std::ffi::OsString> = ["-x", "cl", "--target=spir64", "-O2", "-emit-llvm", "-c"]
            .iter()
            .map(Into::into)
            .chain(tokens.iter().map(Into::into))
            .collect();
        if !tokens.iter().any(|t| t.starts_with("-cl-std=")) {
            args.push("-cl-std=CL1.2".into());
        }
        args.extend([cl.into(), "-o".into(), bc.into()]);
        Tools::run(&self.clang, &args.iter().map(|a| a.as_os_str()).collect::<Vec<_>>())
    }

    /// Bitcode `bc` translated to SPIR-V of at most `version`, as bytes.
    fn translate(&self, bc: &Path, version: &str, spv: &Path) -> Result<Vec<u8>, String> {
        let later = version > TRANSLATOR_MAX;
        let max = format!("--spirv-max-version={}", if later { TRANSLATOR_MAX } else { version });
        Tools::run(&self.llvm_spirv, &[max.as_ref(), bc.as_os_str(), "-o".as_ref(), spv.as_os_str()])?;
        if later {
            self.reassemble(spv, version)?;
        }
        std::fs::read(spv).map_err(|e| format!("cannot read {}: {e}", spv.display()))
    }

    /// Rewrites module `spv` as SPIR-V `version` (disassembled and reassembled for that version),
    /// as a newer translator would write it: `OpAtomicCompareExchangeWeak`, gone since 1.4,
    /// becomes `OpAtomicCompareExchange`. The result is not validated: `spirv-val` already
    /// rejects llvm-spirv-15's own -O2 output in every version (block order, phi predecessors).
    fn reassemble(&self, spv: &Path, version: &str) -> Result<(), String> {
        let [dis, asm] = self.spirv_tools.as_ref().ok_or("spirv-dis and spirv-as are not on PATH")?;
        let text = spv.with_extension("spvasm");
        let env = format!("spv{version}");
        Tools::run(dis, &["--raw-id".as_ref(), spv.as_os_str(), "-o".as_ref(), text.as_os_str()])?;
        let assembly = std::fs::read_to_string(&text).map_err(|e| format!("cannot read {}: {e}", text.display()))?;
        let assembly = assembly.replace("OpAtomicCompareExchangeWeak ", "OpAtomicCompareExchange ");
        std::fs::write(&text, assembly).map_err(|e| format!("cannot write {}: {e}", text.display()))?;
        Tools::run(asm, &["--target-env".as_ref(), env.as_ref(), text.as_os_str(), "-o".as_ref(), spv.as_os_str()])
    }
}

/// One corpus entry, ready to run: its source build, launch and comparison rules.
struct Entry {
    cl: PathBuf,
    options: String,
    directives: TestDirectives,
    kernel: KernelInfo,
    data: LaunchData,
    /// The buffers after the emulator ran the source build.
    expected: Vec<Vec<u8>>,
}

fn load_entry(name: &str) -> Result<Entry, String> {
    let sim_path = corpus_dir().join(format!("{name}.sim"));
    let sim = std::fs::read_to_string(&sim_path).map_err(|e| format!("cannot read {}: {e}", sim_path.display()))?;
    let directives = TestDirectives::parse(&sim)?;
    let header = parse_header(&sim).map_err(|e| format!("launch file: {e}"))?;
    let cl = corpus_dir().join(&header.program);
    let source = std::fs::read_to_string(&cl).map_err(|e| format!("cannot read {}: {e}", cl.display()))?;
    let options = header.build_options.clone().unwrap_or_default();
    let program = Program::from_source(&source, &cl, &options).map_err(|e| format!("source build: {e}"))?;
    let kernel = program.kernel(&header.kernel).ok_or("the source build lacks the kernel")?.clone();
    let data = parse_args(&sim, &header, &kernel, 1).map_err(|e| format!("launch file arguments: {e}"))?;
    let mut expected = data.buffers.clone();
    clrace::run(&program, &data.launch, &mut expected).map_err(|e| format!("source run: {e}"))?;
    Ok(Entry { cl, options, directives, kernel, data, expected })
}

/// The problems of running `spirv` (optimised) against the source run of `entry`.
fn compare(entry: &Entry, spirv: &[u8]) -> Vec<String> {
    let program = match Program::from_spirv(spirv) {
        Ok(program) => program,
        Err(e) => return vec![format!("from_spirv: {e}")],
    };
    let Some(kernel) = program.kernel(&entry.kernel.name) else { return vec!["no such kernel".into()] };
    let mut problems = Vec::new();
    let (ours, theirs) = (&kernel.args, &entry.kernel.args);
    let shape = |a: &clrace::KernelArg| (a.space, a.is_pointer, a.size, a.pointee_size);
    if ours.len() != theirs.len() || ours.iter().zip(theirs).any(|(a, b)| shape(a) != shape(b)) {
        let list = |args: &[clrace::KernelArg]| args.iter().map(|a| format!("{:?}", shape(a))).collect::<Vec<_>>();
        problems.push(format!("reflection {:?}, from source {:?}", list(ours), list(theirs)));
    }
    let mut got = entry.data.buffers.clone();
    let outcome = match clrace::run(&program, &entry.data.launch, &mut got) {
        Ok(outcome) => outcome,
        Err(e) => {
            problems.push(format!("run: {e}"));
            return problems;
        }
    };
    if !entry.directives.expect_findings && !outcome.findings.is_empty() {
        problems.push(format!("findings the source build does not have: {:?}", outcome.findings));
    }
    for (buffer, (want, have)) in entry.expected.iter().zip(&got).enumerate() {
        let args: Vec<usize> = (entry.data.launch.args.iter().enumerate())
            .filter(|(_, a)| a.buffer() == Some(buffer))
            .map(|(i, _)| i)
            .collect();
        let first = &entry.kernel.args[args[0]];
        let tolerance = entry.directives.tolerance_for(&args);
        let lines = compare_buffer(want, have, first.pointee_size, &first.type_name, tolerance, SHOWN_PER_BUFFER);
        if !lines.is_empty() {
            problems.push(format!("buffer {buffer} (argument {} '{}'): {}", args[0], first.name, lines.join("; ")));
        }
    }
    problems
}

/// Every (version, problems) of one corpus entry; an `Err` before any version could run.
fn check_entry(tools: &Tools, versions: &[&str], name: &str) -> Result<Vec<(String, Vec<String>)>, String> {
    let entry = load_entry(name)?;
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let bc = dir.path().join("prog.bc");
    tools.clang_o2(&entry.cl, &entry.options, &bc)?;
    let mut results = Vec::new();
    for version in versions {
        let spv = dir.path().join(format!("prog-{version}.spv"));
        let problems = match tools.translate(&bc, version, &spv) {
            Ok(spirv) => compare(&entry, &spirv),
            Err(e) => vec![e],
        };
        results.push((version.to_string(), problems));
    }
    Ok(results)
}

/// The versions the translator accepts, tried on a trivial kernel.
fn supported_versions(tools: &Tools) -> Vec<&'static str> {
    let dir = tempfile::tempdir().expect("temp dir");
    let cl = dir.path().join("probe.cl");
    std::fs::write(&cl, "kernel void k(global int *p) { p[0] = 1; }\n").expect("write probe");
    let bc = dir.path().join("probe.bc");
    tools.clang_o2(&cl, "", &bc).expect("clang-15 compiles a trivial kernel");
    VERSIONS
        .iter()
        .copied()
        .filter(|v| match tools.translate(&bc, v, &dir.path().join("probe.spv")) {
            Ok(_) => true,
            Err(e) => {
                eprintln!("skipping SPIR-V {v}: the translator refuses it: {e}");
                false
            }
        })
        .collect()
}

fn corpus_entries() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sim"))
        .map(|p| p.file_stem().unwrap_or_default().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The [`KNOWN`] entry that excuses `name` at `version`, if any.
fn known(name: &str, version: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.entry == name && (k.version == "*" || k.version == version))
}

#[test]
fn optimized_spirv_matches_source() {
    let (Some(clang), Some(llvm_spirv)) = (on_path("clang-15"), on_path("llvm-spirv-15")) else {
        eprintln!("SKIPPED: clang-15 and llvm-spirv-15 are needed on PATH (ci/setup installs them)");
        return;
    };
    let spirv_tools = match (on_path("spirv-dis"), on_path("spirv-as")) {
        (Some(dis), Some(asm)) => Some([dis, asm]),
        _ => None,
    };
    let tools = Tools { clang, llvm_spirv, spirv_tools };
    let versions = supported_versions(&tools);
    let names = corpus_entries();
    for k in KNOWN {
        assert!(names.iter().any(|n| n == k.entry), "KNOWN names '{}', which is not a corpus entry", k.entry);
        assert!(k.version == "*" || VERSIONS.contains(&k.version), "KNOWN: bad version '{}'", k.version);
    }

    // Entries are independent: share them out over a few threads.
    let next = Mutex::new(names.iter());
    let report = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(name) = { next.lock().unwrap().next() } {
                    let outcome = check_entry(&tools, &versions, name);
                    report.lock().unwrap().push((name.clone(), outcome));
                }
            });
        }
    });

    let mut report = report.into_inner().unwrap();
    report.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut unexpected, mut stale, mut passed) = (Vec::new(), Vec::new(), 0);
    for (name, outcome) in &report {
        let per_version = match outcome {
            Ok(per_version) => per_version.clone(),
            Err(e) => versions.iter().map(|v| (v.to_string(), vec![e.clone()])).collect(),
        };
        for (version, problems) in per_version {
            let what = format!("{name} (SPIR-V {version})");
            match (problems.is_empty(), known(name, &version)) {
                (true, None) => passed += 1,
                (true, Some(_)) => stale.push(what),
                (false, Some(k)) if problems.iter().any(|p| p.contains(k.failure)) => {
                    eprintln!("known gap: {what}: {}", k.reason)
                }
                (false, _) => unexpected.push(format!("{what}:\n    {}", problems.join("\n    "))),
            }
        }
    }
    eprintln!("{passed} entry/version pairs of optimised SPIR-V match the source build");
    assert!(stale.is_empty(), "these pass now: remove them from KNOWN: {stale:?}");
    assert!(unexpected.is_empty(), "optimised SPIR-V differs from the source build:\n  {}", unexpected.join("\n  "));
}
