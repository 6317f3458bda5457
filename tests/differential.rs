//! Differential tests: every kernel of `tests/corpus` runs in the emulator and on the real pocl
//! driver with the same inputs, and every buffer must come out the same.
//!
//! A corpus entry is `NAME.sim` (an Oclgrind launch file, with clrace's `# clrace:` extensions)
//! naming its program, usually `NAME.cl`. Comment lines starting `# clrace-test:` tune the
//! comparison (see [`common::TestDirectives`]):
//! - `ulp=N float|double [arg=K]`: compare as floats within N ulp (NaN equals NaN) instead of
//!   byte for byte, for the buffer of argument K or for every buffer;
//! - `expect-findings`: the emulator must report findings (otherwise it must report none).
//!
//! Besides the buffers, the test checks that our reflection of the kernel signature agrees with
//! pocl's, that pocl changed at least one buffer (a kernel that writes nothing tests nothing), and
//! that the launch run in code specialised to its arguments (`Specialise::Always`) leaves the
//! same buffers and findings.
//! When our build fails, pocl still runs the launch (with pocl's reflection), so the failure says
//! whether the kernel itself is fine.
//!
//! pocl is part of the test setup: without it every test fails and says so.

mod common;

use std::path::{Path, PathBuf};

use clrace::exec::{RunOptions, Specialise, image};
use clrace::launch::{LaunchData, SimHeader, parse_args, parse_header};
use clrace::{ArgValue, KernelArg, KernelInfo, Program};
use common::{TestDirectives, compare_buffer, pocl_kernel_info, run_on_pocl};

/// How many differing elements to print per buffer.
const SHOWN_PER_BUFFER: usize = 8;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("corpus")
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Runs corpus entry `name` and panics with every problem found.
fn check(name: &str) {
    let problems = match differential(name) {
        Ok(problems) => problems,
        Err(fatal) => vec![fatal],
    };
    if !problems.is_empty() {
        panic!("kernel '{name}' ({}.sim):\n  {}", name, problems.join("\n  "));
    }
}

/// The problems of one corpus entry: `Err` when it cannot get as far as comparing.
fn differential(name: &str) -> Result<Vec<String>, String> {
    let sim_path = corpus_dir().join(format!("{name}.sim"));
    let sim = read(&sim_path)?;
    let directives = TestDirectives::parse(&sim)?;
    let header = parse_header(&sim).map_err(|e| format!("launch file: {e}"))?;
    let cl_path = corpus_dir().join(&header.program);
    let source = read(&cl_path)?;
    let options = header.build_options.clone().unwrap_or_default();

    let program = match Program::from_source(&source, &cl_path, &options) {
        Ok(program) => program,
        Err(e) => return Err(format!("emulator build failed: {e}\n  {}", pocl_alone(&sim, &header, &source))),
    };
    let Some(kernel) = program.kernel(&header.kernel) else {
        let names: Vec<&str> = program.kernels().map(|k| k.name.as_str()).collect();
        return Err(format!("the emulator's program has no kernel '{}' (it has {names:?})", header.kernel));
    };
    let data = parse_args(&sim, &header, kernel, 1).map_err(|e| format!("launch file arguments: {e}"))?;
    check_directives(&directives, &data)?;

    let mut problems = reflection_differences(kernel, &source, &options);
    let expected = run_on_pocl(&source, &options, &data.launch, &data.buffers).map_err(|e| format!("pocl: {e}"))?;
    if expected == data.buffers {
        problems.push("pocl left every buffer unchanged: this launch tests nothing".into());
    }

    let mut got = data.buffers.clone();
    let outcome = match clrace::run(&program, &data.launch, &mut got) {
        Ok(outcome) => outcome,
        Err(e) => {
            problems.push(format!("emulator run failed: {e}"));
            return Ok(problems);
        }
    };
    // The same launch in code specialised to its arguments, whatever its size: the same
    // buffers and findings.
    let mut special = data.buffers.clone();
    let always = RunOptions { specialise: Specialise::Always, ..RunOptions::default() };
    match clrace::exec::run_with(&program, &data.launch, &mut special, &always) {
        Ok(again) => {
            if special != got {
                problems
                    .push("specialised to its arguments (--specialise always), the launch left other buffers".into());
            }
            if again.findings != outcome.findings || again.finding_counts != outcome.finding_counts {
                problems.push(format!(
                    "specialised to its arguments, other findings: {:?} against {:?}",
                    again.findings, outcome.findings
                ));
            }
        }
        Err(e) => problems.push(format!("specialised to its arguments, the run failed: {e}")),
    }
    match (directives.expect_findings, outcome.findings.is_empty()) {
        (false, false) => {
            let listed: Vec<String> = outcome.findings.iter().map(|f| format!("{f:?}")).collect();
            problems.push(format!("unexpected emulator findings:\n    {}", listed.join("\n    ")));
        }
        (true, true) => {
            problems.push("expected findings (clrace-test: expect-findings), the emulator reported none".into())
        }
        _ => {}
    }

    for (buffer, (want, have)) in expected.iter().zip(&got).enumerate() {
        let args = args_of_buffer(&data, buffer);
        let first = &kernel.args[args[0]];
        let (element_size, element_type) = element_of(&data.launch.args[args[0]], first);
        let tolerance = directives.tolerance_for(&args);
        let lines = compare_buffer(want, have, element_size, &element_type, tolerance, SHOWN_PER_BUFFER);
        if !lines.is_empty() {
            let names: Vec<String> = args.iter().map(|&a| format!("{a} '{}'", kernel.args[a].name)).collect();
            let how = tolerance.map_or("byte for byte".to_string(), |t| format!("within {} ulp", t.ulp));
            problems.push(format!(
                "buffer {buffer} (argument {}, {}) differs from pocl, compared {how}:\n    {}",
                names.join(" = "),
                first.type_name,
                lines.join("\n    ")
            ));
        }
    }
    Ok(problems)
}

/// The arguments bound to buffer `buffer` (as a buffer or an image), in order (at least one: the
/// parser creates buffers only for arguments).
fn args_of_buffer(data: &LaunchData, buffer: usize) -> Vec<usize> {
    let args = data.launch.args.iter().enumerate();
    args.filter(|(_, a)| a.buffer() == Some(buffer)).map(|(i, _)| i).collect()
}

/// How to report the elements of the buffer bound to `value`: the pointee of a pointer argument,
/// a pixel of an image (its channels as a vector of the channel's storage type).
fn element_of(value: &ArgValue, arg: &KernelArg) -> (usize, String) {
    let ArgValue::Image { desc, .. } = value else { return (arg.pointee_size, arg.type_name.clone()) };
    let scalar = match image::type_name(desc.data_type).as_str() {
        "SNORM_INT8" | "SIGNED_INT8" => "char",
        "UNORM_INT8" | "UNSIGNED_INT8" => "uchar",
        "SNORM_INT16" | "SIGNED_INT16" => "short",
        "UNORM_INT16" | "UNSIGNED_INT16" => "ushort",
        "SIGNED_INT32" => "int",
        "UNSIGNED_INT32" => "uint",
        "HALF_FLOAT" => "half",
        _ => "float",
    };
    let size = desc.pixel_size() as usize;
    let channels = size / common::builtin_type_size(scalar).unwrap_or(1);
    (size, if channels == 1 { scalar.to_string() } else { format!("{scalar}{channels}") })
}

/// An `arg=K` directive must name a buffer or image argument, so a typo cannot silently disable
/// it.
fn check_directives(directives: &TestDirectives, data: &LaunchData) -> Result<(), String> {
    for tolerance in &directives.tolerances {
        if let Some(k) = tolerance.arg
            && !matches!(data.launch.args.get(k), Some(ArgValue::Buffer(_) | ArgValue::Image { .. }))
        {
            return Err(format!("clrace-test directive names argument {k}, which is not a buffer or an image"));
        }
    }
    Ok(())
}

/// Where our reflection of the kernel disagrees with pocl's.
fn reflection_differences(ours: &KernelInfo, source: &str, options: &str) -> Vec<String> {
    let theirs = match pocl_kernel_info(source, options, &ours.name) {
        Ok(info) => info,
        Err(e) => return vec![format!("pocl reflection: {e}")],
    };
    let mut problems = Vec::new();
    if ours.args.len() != theirs.args.len() {
        problems.push(format!("reflection: {} arguments, pocl says {}", ours.args.len(), theirs.args.len()));
    }
    for (i, (a, b)) in ours.args.iter().zip(&theirs.args).enumerate() {
        let same_type = a.type_name.replace(' ', "") == b.type_name.replace(' ', "");
        // Images and samplers: pocl reports images in the global space and samplers in the private
        // one, as we do; both are handles, passed as pointer-sized values.
        let same_handle = a.handle == b.handle && (a.handle.is_none() || a.size == b.size);
        if a.name != b.name || a.space != b.space || a.is_pointer != b.is_pointer || !same_type || !same_handle {
            problems.push(format!(
                "reflection of argument {i}: ours {:?} {} '{}' (pointer: {}, handle: {:?}, size {}), \
                 pocl {:?} {} '{}' (pointer: {}, handle: {:?}, size {})",
                a.space,
                a.type_name,
                a.name,
                a.is_pointer,
                a.handle,
                a.size,
                b.space,
                b.type_name,
                b.name,
                b.is_pointer,
                b.handle,
                b.size
            ));
        }
    }
    if ours.required_local_size != theirs.required_local_size {
        problems.push(format!(
            "reflection: reqd_work_group_size {:?}, pocl says {:?}",
            ours.required_local_size, theirs.required_local_size
        ));
    }
    problems
}

/// When our build fails: whether pocl can build and run the same launch, reflected by pocl.
fn pocl_alone(sim: &str, header: &SimHeader, source: &str) -> String {
    let options = header.build_options.clone().unwrap_or_default();
    let outcome = pocl_kernel_info(source, &options, &header.kernel).and_then(|info| {
        let data = parse_args(sim, header, &info, 1).map_err(|e| format!("launch file arguments: {e}"))?;
        run_on_pocl(source, &options, &data.launch, &data.buffers)
    });
    match outcome {
        Ok(_) => "(pocl builds and runs this launch fine)".into(),
        Err(e) => format!("(pocl fails too: {e})"),
    }
}

/// One `#[test]` per corpus entry, plus the list for [`corpus_is_complete`].
macro_rules! corpus {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name));
            }
        )*
        const CORPUS: &[&str] = &[$(stringify!($name)),*];
    };
}

corpus! {
    affine_compares,
    affine_splits,
    affine_tiles,
    affine_ids,
    alias_null,
    async_copy,
    atom64,
    atomics20_64,
    atomics20_flag_fence,
    atomics20_float_cas,
    atomics20_global,
    atomics20_local,
    atomics_global,
    atomics_local,
    bool_logic,
    build_defines,
    constant_mem,
    conv_float_int,
    conv_int_float,
    conv_int_int,
    double_arith,
    extract_phi,
    fast_relaxed_math,
    float_arith,
    float_round,
    func_barrier,
    func_ptr_args,
    global_offset,
    half_conv,
    image_blur,
    image_convert,
    image_layers,
    image_volume,
    int_builtins,
    int_char,
    int_int,
    int_long,
    int_promotions,
    int_short,
    local_arg,
    local_decl,
    loops_break,
    math_basic,
    math_exp_log,
    math_trig,
    matmul_tiled,
    ndrange_2d,
    ndrange_3d,
    private_array,
    private_constinit,
    ptr_int_cast,
    ptr_to_uint,
    reduce_tree,
    reqd_wgs,
    sampler_literal_bits,
    sealed_reads,
    select_shuffle,
    shift_compare,
    struct_arg,
    struct_buffer,
    struct_byval_call,
    switch_stmt,
    vec_float4,
    vec_int8,
    vec_ternary,
    vload_vstore,
    while_data,
    work_dim_invalid,
    work_info,
}

/// Every `.sim` of the corpus has a test above, and every `.cl` is used by a launch file of the
/// same name.
#[test]
fn corpus_is_complete() {
    let mut sims = Vec::new();
    let mut programs = Vec::new();
    for entry in std::fs::read_dir(corpus_dir()).expect("tests/corpus exists") {
        let path = entry.expect("readable directory entry").path();
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().into_owned();
        match path.extension().and_then(|e| e.to_str()) {
            Some("sim") => sims.push(stem),
            Some("cl") => programs.push(stem),
            _ => panic!("unexpected file in tests/corpus: {}", path.display()),
        }
    }
    let unlisted: Vec<&String> = sims.iter().filter(|s| !CORPUS.contains(&s.as_str())).collect();
    assert!(unlisted.is_empty(), "launch files without a test (add them to corpus!): {unlisted:?}");
    let missing: Vec<&&str> = CORPUS.iter().filter(|c| !sims.iter().any(|s| s == *c)).collect();
    assert!(missing.is_empty(), "tests without a launch file: {missing:?}");
    let orphans: Vec<&String> = programs.iter().filter(|p| !sims.contains(p)).collect();
    assert!(orphans.is_empty(), "kernels without a launch file of the same name: {orphans:?}");
    assert!(CORPUS.len() >= 36, "the corpus should hold at least 36 kernels, it has {}", CORPUS.len());
}

/// The comparison rules the corpus relies on.
#[test]
fn comparison_rules() {
    use common::{FloatKind, Tolerance};
    let f32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let exact = Some(Tolerance { ulp: 0, kind: FloatKind::F32, arg: None });
    let one = Some(Tolerance { ulp: 1, kind: FloatKind::F32, arg: None });
    // Any NaN equals any NaN; -0 and +0 are 1 ulp apart; neighbours are 1 ulp apart.
    let want = f32s(&[0x7fc0_0000, 0x8000_0000, 0x3f80_0000]);
    let got = f32s(&[0xffc0_0001, 0x0000_0000, 0x3f80_0001]);
    assert_eq!(compare_buffer(&want, &got, 4, "float*", exact, 8).len(), 2);
    assert!(compare_buffer(&want, &got, 4, "float*", one, 8).is_empty());
    assert_eq!(compare_buffer(&f32s(&[0x7fc0_0000]), &f32s(&[0]), 4, "float*", one, 8).len(), 1);
    // Byte comparison reports elements of the argument's type, with their values.
    let lines = compare_buffer(&f32s(&[1, 2, 3]), &f32s(&[1, 5, 3]), 4, "int*", None, 8);
    assert_eq!(lines, ["element 1 (byte offset 4): expected 2 (0x00000002), got 5 (0x00000005)"]);
    // Directives: arg-specific tolerances win, typos are errors.
    let d = TestDirectives::parse("# clrace-test: ulp=3 float arg=2\n# clrace-test: ulp=0 double\nx.cl").unwrap();
    assert_eq!(d.tolerance_for(&[2]).map(|t| t.ulp), Some(3));
    assert_eq!(d.tolerance_for(&[1]).map(|t| (t.ulp, t.kind)), Some((0, FloatKind::F64)));
    assert!(!d.expect_findings);
    assert!(TestDirectives::parse("# clrace-test: ulp=3 flaot").is_err());
    assert!(TestDirectives::parse("# clrace-test: expect-finding").is_err());
}
