//! Emulator behaviour that needs no driver: results of small kernels, findings, errors.

use std::path::Path;

use clrace::{ArgValue, Program};

mod common;

use common::launch_1d as launch;

fn build(source: &str) -> Program {
    common::build_program("kernel.cl", source, "")
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

#[test]
fn vector_add() {
    let p = build(
        "kernel void vadd(global const float *a, global const float *b, global float *c) {\n  size_t i = get_global_id(0);\n  c[i] = a[i] + b[i];\n}\n",
    );
    let a: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..64).map(|i| 0.5 * i as f32).collect();
    let mut buffers = vec![to_bytes(&a), to_bytes(&b), vec![0; 256]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
    let out = clrace::run(&p, &launch("vadd", 64, 16, args), &mut buffers).unwrap();
    assert!(out.findings.is_empty());
    let c = floats(&buffers[2]);
    for (i, v) in c.iter().enumerate() {
        assert_eq!(*v, 1.5 * i as f32);
    }
}

#[test]
fn local_reduction_with_barriers_in_a_helper() {
    let p = build(
        "void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n\
         kernel void reduce(global const int *in, global int *out, local int *scratch) {\n\
           size_t l = get_local_id(0);\n\
           scratch[l] = in[get_global_id(0)];\n\
           sync();\n\
           for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {\n\
             if (l < s) scratch[l] += scratch[l + s];\n\
             sync();\n\
           }\n\
           if (l == 0) out[get_group_id(0)] = scratch[0];\n\
         }\n",
    );
    let input: Vec<u8> = (0..256i32).flat_map(|i| i.to_le_bytes()).collect();
    let mut buffers = vec![input, vec![0; 16]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Local(256)];
    clrace::run(&p, &launch("reduce", 256, 64, args), &mut buffers).unwrap();
    let sums: Vec<i32> = buffers[1].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    let expect: Vec<i32> = (0..4).map(|g| (g * 64..(g + 1) * 64).sum()).collect();
    assert_eq!(sums, expect);
}

#[test]
fn out_of_bounds_is_reported_and_dropped() {
    let p = build("kernel void oob(global int *a) {\n  a[get_global_id(0) + 1] = 7;\n}\n");
    let mut buffers = vec![vec![0u8; 16]];
    let out = clrace::run(&p, &launch("oob", 4, 4, vec![ArgValue::Buffer(0)]), &mut buffers).unwrap();
    assert_eq!(out.findings.len(), 1);
    let clrace::exec::Finding::OutOfBounds { store, offset, size, loc, allocation, .. } = &out.findings[0] else {
        panic!("expected an out-of-bounds finding, got {:?}", out.findings[0]);
    };
    assert!(*store);
    assert_eq!((*offset, *size), (16, 4));
    assert_eq!(allocation, "a");
    let location = p.module().location(*loc);
    assert!(location.contains("kernel.cl:2:"), "{location}");
    assert_eq!(buffers[0], [0, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0]);
}

#[test]
fn endless_loop_hits_the_budget() {
    let p = build("kernel void spin(global int *a) {\n  while (a[0] == 0) { }\n}\n");
    let mut buffers = vec![vec![0u8; 4]];
    let options = clrace::exec::RunOptions { budget: 100_000, ..Default::default() };
    let err = clrace::exec::run_with(&p, &launch("spin", 1, 1, vec![ArgValue::Buffer(0)]), &mut buffers, &options)
        .unwrap_err();
    assert!(matches!(err, clrace::exec::ExecError::Budget(_)), "{err}");
}

/// A module whose `OpImageRead` yields a scalar: the interpreter writes four lanes, so the
/// lowering must refuse it rather than let a run write past the result.
#[test]
fn an_image_read_of_the_wrong_shape_is_refused() {
    use rspirv::spirv::{AccessQualifier, AddressingModel, Capability, Dim, ExecutionModel, FunctionControl};
    use rspirv::spirv::{ImageFormat, MemoryModel};
    let mut b = rspirv::dr::Builder::new();
    for capability in [Capability::Addresses, Capability::Kernel, Capability::ImageBasic] {
        b.capability(capability);
    }
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    let (void, float, int) = (b.type_void(), b.type_float(32, None), b.type_int(32, 0));
    let int2 = b.type_vector(int, 2);
    let image = b.type_image(void, Dim::Dim2D, 0, 0, 0, 0, ImageFormat::Unknown, Some(AccessQualifier::ReadOnly));
    let signature = b.type_function(void, vec![image]);
    let zero = b.constant_bit32(int, 0);
    let coord = b.constant_composite(int2, vec![zero, zero]);
    let kernel = b.begin_function(void, None, FunctionControl::NONE, signature).unwrap();
    let img = b.function_parameter(image).unwrap();
    b.begin_block(None).unwrap();
    b.image_read(float, None, img, coord, None, vec![]).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(ExecutionModel::Kernel, kernel, "k", vec![]);
    let bytes: Vec<u8> = rspirv::binary::Assemble::assemble(&b.module()).iter().flat_map(|w| w.to_le_bytes()).collect();
    let err = Program::from_spirv(&bytes).expect_err("refused");
    assert!(err.to_string().contains("needs a 4-component texel"), "{err}");
}

#[test]
fn malformed_spirv_is_an_error_not_a_panic() {
    let err = Program::from_spirv(&[3, 2, 35, 7, 0, 0, 0, 0]).err().unwrap();
    assert!(err.to_string().contains("SPIR-V"), "{err}");
    let _ = Path::new(".");
}

#[test]
fn parallel_work_groups_match_one_thread() {
    let p = build(
        "kernel void hist(global const uint *data, global uint *bins, global float *scaled) {\n\
           local uint lbins[16];\n\
           size_t l = get_local_id(0), g = get_global_id(0);\n\
           if (l < 16) lbins[l] = 0;\n\
           barrier(CLK_LOCAL_MEM_FENCE);\n\
           atomic_inc(&lbins[data[g] % 16]);\n\
           scaled[g] = native_sqrt((float)data[g]) * 0.5f + (float)get_group_id(0);\n\
           barrier(CLK_LOCAL_MEM_FENCE);\n\
           if (l < 16) atomic_add(&bins[l], lbins[l]);\n\
         }\n",
    );
    let data: Vec<u8> = (0..4096u32).flat_map(|i| (i.wrapping_mul(2654435761) >> 7).to_le_bytes()).collect();
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
    let run = |threads| {
        let mut buffers = vec![data.clone(), vec![0u8; 64], vec![0u8; 4 * 4096]];
        let options = clrace::exec::RunOptions { threads, ..Default::default() };
        clrace::exec::run_with(&p, &launch("hist", 4096, 64, args.clone()), &mut buffers, &options).unwrap();
        buffers
    };
    let one = run(Some(1));
    assert_eq!(one[1].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).sum::<u32>(), 4096);
    assert_eq!(run(Some(2)), one);
    assert_eq!(run(None), one);
}

#[test]
fn program_scope_pointer_initialisers() {
    let source = "global int table[4] = {10, 20, 30, 40};\n\
                  global int *second = &table[1];\n\
                  constant int lut[3] = {7, 8, 9};\n\
                  kernel void gp(global int *out) {\n\
                    size_t i = get_global_id(0);\n\
                    out[i] = second[i] + lut[i % 3];\n\
                  }\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gp.cl");
    std::fs::write(&path, source).unwrap();
    let p = Program::from_source(source, &path, "-cl-std=CL2.0").unwrap_or_else(|e| panic!("{e}"));
    let mut buffers = vec![vec![0u8; 12]];
    clrace::run(&p, &launch("gp", 3, 3, vec![ArgValue::Buffer(0)]), &mut buffers).unwrap();
    let out: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(out, [27, 38, 49]);
}

#[test]
fn printf_formats_like_c_in_work_item_order() {
    let p = build(
        "kernel void say(global int *a) {\n\
           int i = (int)get_global_id(0);\n\
           printf(\"wi %d: %5.2f %s %x|%v4d|%c\\n\", i, 1.5f * i, \"ok\", 255 + i, (int4)(i, 2, 3, 4), 'A' + i);\n\
         }\n",
    );
    let mut buffers = vec![vec![0u8; 4]];
    let options = clrace::exec::RunOptions { threads: Some(2), ..Default::default() };
    let out =
        clrace::exec::run_with(&p, &launch("say", 4, 2, vec![ArgValue::Buffer(0)]), &mut buffers, &options).unwrap();
    assert_eq!(
        out.printf,
        "wi 0:  0.00 ok ff|0,2,3,4|A\nwi 1:  1.50 ok 100|1,2,3,4|B\nwi 2:  3.00 ok 101|2,2,3,4|C\nwi 3:  4.50 ok 102|3,2,3,4|D\n"
    );
}

/// The generic address space (pocl here cannot build it, so the expected values come from the
/// specification): one helper serves global, local and private pointers; `to_global`,
/// `to_local`, `to_private` and `get_fence` tell the spaces apart; atomics work through generic
/// pointers.
#[test]
fn generic_address_space() {
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/generic_ptr.cl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("generic_ptr.cl");
    let p = Program::from_source(&source, &path, "-cl-std=CL3.0").unwrap_or_else(|e| panic!("{e}"));
    let buf: Vec<u8> = (0..256i32).flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![buf, vec![0; 128 * 16 * 4]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1)];
    clrace::run(&p, &launch("generic_ptr", 128, 64, args), &mut buffers).unwrap();
    let out: Vec<i32> = buffers[1].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..128i32 {
        let l = i % 64;
        let mut expected = vec![2 * i + l + 106, 1, 0, 0, 0, 1, 0, 0, 0, 1, 2, 1, 0, 2, 64];
        expected.push(102 + l + i + 3);
        assert_eq!(&out[16 * i as usize..16 * (i as usize + 1)], &expected[..], "work-item {i}");
    }
}

/// Work-group collective functions (pocl here has none: the expected values are computed in
/// Rust): reductions, inclusive and exclusive scans in local-id order, all/any, broadcast by 1D
/// and 2D local id, on int, uint, long and float.
#[test]
fn work_group_collectives() {
    let source = "kernel void wg(global int *out, global long *wide, global float *f) {
    int l = get_local_id(0) + get_local_id(1) * get_local_size(0), g = get_group_id(0);
    int n = get_local_size(0) * get_local_size(1), x = (l * 7) % 11 - 5;
    global int *o = out + (g * n + l) * 9;
    o[0] = work_group_reduce_add(x);
    o[1] = work_group_reduce_min(x);
    o[2] = work_group_scan_inclusive_max(x);
    o[3] = work_group_scan_exclusive_add(x);
    o[4] = work_group_all(x > -6) + 2 * work_group_any(x == 5);
    o[5] = work_group_broadcast(x + g, (size_t)3, (size_t)1);
    o[6] = (int)work_group_reduce_max((uint)x);
    o[7] = sub_group_reduce_add(1);
    o[8] = work_group_scan_inclusive_min(x);
    wide[g * n + l] = work_group_scan_inclusive_add((long)x << 33);
    f[g * n + l] = work_group_scan_exclusive_add((float)x * 0.5f);
}
";
    let dir = tempfile::tempdir().unwrap();
    let p = Program::from_source(source, &dir.path().join("wg.cl"), "-cl-std=CL2.0").unwrap_or_else(|e| panic!("{e}"));
    let (n, groups) = (32usize, 2usize);
    let mut buffers = vec![vec![0u8; groups * n * 9 * 4], vec![0u8; groups * n * 8], vec![0u8; groups * n * 4]];
    let mut launch =
        launch("wg", (groups * 8) as u64, 8, vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)]);
    launch.work_dim = 2;
    launch.global_size = [(groups * 8) as u64, 4, 1];
    launch.local_size = [8, 4, 1];
    let out = clrace::run(&p, &launch, &mut buffers).unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let ints: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    let wide: Vec<i64> = buffers[1].chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect();
    let fl = floats(&buffers[2]);
    for g in 0..groups {
        let xs: Vec<i32> = (0..n as i32).map(|l| (l * 7) % 11 - 5).collect();
        let sum: i32 = xs.iter().sum();
        for l in 0..n {
            let o = &ints[(g * n + l) * 9..(g * n + l + 1) * 9];
            assert_eq!(o[0], sum, "reduce_add");
            assert_eq!(o[1], *xs.iter().min().unwrap(), "reduce_min");
            assert_eq!(o[2], *xs[..=l].iter().max().unwrap(), "scan_inclusive_max at {l}");
            assert_eq!(o[3], xs[..l].iter().sum::<i32>(), "scan_exclusive_add at {l}");
            assert_eq!(o[4], 1 + 2 * xs.contains(&5) as i32, "all/any");
            assert_eq!(o[5], xs[3 + 8] + g as i32, "broadcast from local id (3,1)");
            assert_eq!(o[6] as u32, xs.iter().map(|&x| x as u32).max().unwrap(), "unsigned reduce_max");
            assert_eq!(o[7], n as i32, "one sub-group spans the work-group");
            assert_eq!(o[8], *xs[..=l].iter().min().unwrap(), "scan_inclusive_min at {l}");
            assert_eq!(wide[g * n + l], xs[..=l].iter().map(|&x| (x as i64) << 33).sum::<i64>(), "long scan at {l}");
            let mut acc = 0.0f32;
            for &x in &xs[..l] {
                acc += x as f32 * 0.5;
            }
            assert_eq!(fl[g * n + l], acc, "float exclusive scan at {l}");
        }
    }
}

/// Sub-groups of a configurable size (the last one of a work-group may be smaller): ids, sizes,
/// collectives per sub-group, `sub_group_barrier`, and a collective that only one sub-group
/// reaches (no divergence: the others need not).
#[test]
fn sub_groups_of_a_chosen_size() {
    let source = "#pragma OPENCL EXTENSION cl_khr_subgroups : enable
kernel void sg(global int *out) {
    int l = get_local_id(0), x = l * 3 + 1;
    global int *o = out + (get_group_id(0) * get_local_size(0) + l) * 8;
    o[0] = get_sub_group_id();
    o[1] = get_sub_group_local_id();
    o[2] = get_sub_group_size() * 100 + get_num_sub_groups() * 10 + (int)get_max_sub_group_size() / 8;
    o[3] = sub_group_reduce_add(x);
    o[4] = sub_group_scan_exclusive_add(x);
    o[5] = sub_group_broadcast(x, 1);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    o[6] = get_sub_group_id() == 0 ? sub_group_reduce_max(x) : -1;
    o[7] = work_group_reduce_add(1);
}
";
    let dir = tempfile::tempdir().unwrap();
    let p = Program::from_source(source, &dir.path().join("sg.cl"), "-cl-std=CL2.0").unwrap_or_else(|e| panic!("{e}"));
    let (local, groups, sg) = (20usize, 2usize, 8usize);
    let mut buffers = vec![vec![0u8; groups * local * 8 * 4]];
    let options = clrace::exec::RunOptions { sub_group_size: sg as u32, ..Default::default() };
    let out = clrace::exec::run_with(
        &p,
        &launch("sg", (groups * local) as u64, local as u64, vec![ArgValue::Buffer(0)]),
        &mut buffers,
        &options,
    )
    .unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let ints: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    for g in 0..groups {
        for l in 0..local {
            let o = &ints[(g * local + l) * 8..(g * local + l + 1) * 8];
            let (id, lane) = (l / sg, l % sg);
            let members: Vec<i32> = (id * sg..((id + 1) * sg).min(local)).map(|m| m as i32 * 3 + 1).collect();
            let size = members.len() as i32;
            assert_eq!((o[0], o[1]), (id as i32, lane as i32), "ids of {l}");
            assert_eq!(o[2], size * 100 + 3 * 10 + 1, "sizes of {l}");
            assert_eq!(o[3], members.iter().sum::<i32>(), "reduce of {l}");
            assert_eq!(o[4], members[..lane].iter().sum::<i32>(), "exclusive scan of {l}");
            assert_eq!(o[5], members[1], "broadcast of lane 1 to {l}");
            assert_eq!(o[6], if id == 0 { *members.iter().max().unwrap() } else { -1 }, "one sub-group's max at {l}");
            assert_eq!(o[7], local as i32, "work-group reduce at {l}");
        }
    }
}

/// Half-precision arithmetic (pocl here lacks cl_khr_fp16; the expected bits are worked out by
/// hand): correctly rounded + - * /, math through single precision, comparisons, isnormal on a
/// half subnormal, conversions.
#[test]
fn half_arithmetic() {
    let source = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void h(global const half *in, global half *out, global int *flags) {
    half a = in[0], b = in[1], tiny = in[2];
    out[0] = a + b;
    out[1] = a - b;
    out[2] = a * b;
    out[3] = a / (half)3.0h;
    out[4] = sqrt(b);
    out[5] = fma(a, b, a);
    out[6] = (half)(float)7.25f;
    flags[0] = a < b;
    flags[1] = isnormal(tiny);
    flags[2] = isnormal(a);
    flags[3] = (int)(b * (half)10.0h);
}
";
    let dir = tempfile::tempdir().unwrap();
    let p = Program::from_source(source, &dir.path().join("h.cl"), "").unwrap_or_else(|e| panic!("{e}"));
    // 1.0, 2.0, and the smallest half subnormal.
    let input: Vec<u8> = [0x3c00u16, 0x4000, 0x0001].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![input, vec![0; 14], vec![0; 16]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1), ArgValue::Buffer(2)];
    let out = clrace::run(&p, &launch("h", 1, 1, args), &mut buffers).unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let halves: Vec<u16> = buffers[1].chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().unwrap())).collect();
    // 3.0, -1.0, 2.0, 1/3 rounded (0x3555), sqrt(2) rounded (0x3da8), 1*2+1 = 3.0, 7.25.
    assert_eq!(halves, vec![0x4200, 0xbc00, 0x4000, 0x3555, 0x3da8, 0x4200, 0x4740]);
    let flags: Vec<i32> = buffers[2].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(flags, vec![1, 0, 1, 20]);
}

/// `-cl-denorms-are-zero`: float arithmetic and math see denormal operands as zeros and give
/// zeros for denormal results; without the option, denormals are kept.
#[test]
fn denorms_are_zero_when_asked() {
    let source = "kernel void d(global const float *in, global float *out) {
    float tiny = in[0], half_min = in[1];
    out[0] = tiny * 1.0f;
    out[1] = half_min * 0.5f;
    out[2] = sqrt(tiny);
    out[3] = tiny + 1.0f;
}
";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.cl");
    // The smallest denormal, and the smallest normal (halving it gives a denormal).
    let input: Vec<u8> = [f32::from_bits(1), f32::MIN_POSITIVE].iter().flat_map(|v| v.to_le_bytes()).collect();
    let run = |options: &str| {
        let p = Program::from_source(source, &path, options).unwrap_or_else(|e| panic!("{e}"));
        let mut buffers = vec![input.clone(), vec![0; 16]];
        clrace::run(&p, &launch("d", 1, 1, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)]), &mut buffers).unwrap();
        floats(&buffers[1])
    };
    let kept = run("");
    assert_eq!(kept[0].to_bits(), 1);
    assert_eq!(kept[1], f32::MIN_POSITIVE * 0.5);
    assert!(kept[2] > 0.0);
    let flushed = run("-cl-denorms-are-zero");
    assert_eq!(flushed.iter().map(|f| f.to_bits()).collect::<Vec<_>>(), vec![0, 0, 0, 1.0f32.to_bits()]);
}

/// Non-uniform work-groups (OpenCL 2.0; pocl here refuses them, so the expected values are
/// computed in Rust): 10 x 7 work-items in groups of 4 x 3, so the last groups are 2 wide and 1
/// high; sizes, enqueued sizes, linear ids and group counts as each work-item sees them.
#[test]
fn non_uniform_work_groups() {
    let source = "kernel void nonuniform(global int *out) {
    size_t i = get_global_linear_id();
    global int *o = out + i * 7;
    o[0] = get_local_size(0);
    o[1] = get_local_size(1);
    o[2] = get_enqueued_local_size(0);
    o[3] = get_local_linear_id();
    o[4] = get_group_id(0) + 10 * get_group_id(1);
    o[5] = get_global_id(0) + 100 * get_global_id(1);
    o[6] = get_num_groups(0) * 10 + get_num_groups(1);
}
";
    let dir = tempfile::tempdir().unwrap();
    let p = Program::from_source(source, &dir.path().join("nu.cl"), "-cl-std=CL2.0").unwrap_or_else(|e| panic!("{e}"));
    let mut buffers = vec![vec![0u8; 70 * 7 * 4]];
    let mut l = launch("nonuniform", 10, 4, vec![ArgValue::Buffer(0)]);
    l.work_dim = 2;
    l.global_size = [10, 7, 1];
    l.local_size = [4, 3, 1];
    let out = clrace::run(&p, &l, &mut buffers).unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let ints: Vec<i32> = buffers[0].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    for y in 0..7i32 {
        for x in 0..10i32 {
            let i = (y * 10 + x) as usize;
            let (gx, gy) = (x / 4, y / 3);
            let (sx, sy) = (if gx == 2 { 2 } else { 4 }, if gy == 2 { 1 } else { 3 });
            let linear = (y % 3) * sx + x % 4;
            let want = [sx, sy, 4, linear, gx + 10 * gy, x + 100 * y, 33];
            assert_eq!(&ints[i * 7..i * 7 + 7], &want[..], "work-item ({x},{y})");
        }
    }
}

/// Geometric and pointer-result math functions on half (expected bits worked out by hand).
#[test]
fn half_geometric_and_pointer_results() {
    let source = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void g(global half *out, global int *e) {
    half2 v = (half2)(3.0h, 4.0h), w = (half2)(1.0h, 2.0h);
    out[0] = dot(w, w);
    out[1] = length(v);
    half2 n = normalize(v);
    out[2] = n.x;
    out[3] = n.y;
    int exponent;
    out[4] = frexp((half)8.0h, &exponent);
    e[0] = exponent;
    half whole;
    out[5] = modf((half)2.75h, &whole);
    out[6] = whole;
}
";
    let dir = tempfile::tempdir().unwrap();
    let p = Program::from_source(source, &dir.path().join("g.cl"), "").unwrap_or_else(|e| panic!("{e}"));
    let mut buffers = vec![vec![0; 14], vec![0; 4]];
    clrace::run(&p, &launch("g", 1, 1, vec![ArgValue::Buffer(0), ArgValue::Buffer(1)]), &mut buffers).unwrap();
    let halves: Vec<u16> = buffers[0].chunks_exact(2).map(|c| u16::from_le_bytes(c.try_into().unwrap())).collect();
    // 5, 5, 0.6 and 0.8 rounded to half, 0.5 (8 = 0.5 * 2^4), 0.75 and 2.
    assert_eq!(halves, vec![0x4500, 0x4500, 0x38cd, 0x3a66, 0x3800, 0x3a00, 0x4000]);
    assert_eq!(i32::from_le_bytes(buffers[1][..4].try_into().unwrap()), 4);
}

#[test]
fn a_run_of_loads_with_one_lane_outside_reads_the_others_and_names_that_lane() {
    // Consecutive work-items load consecutive elements, the last one past the end: it reads 0
    // and is the one finding; the others read their elements.
    let p = build(
        "kernel void shift(global const int *a, global int *out) {\n  out[get_global_id(0)] = a[get_global_id(0) + 1];\n}\n",
    );
    let a: Vec<u8> = [10i32, 11, 12, 13].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![a, vec![0xff; 16]];
    let args = vec![ArgValue::Buffer(0), ArgValue::Buffer(1)];
    let out = clrace::run(&p, &launch("shift", 4, 4, args), &mut buffers).unwrap();
    assert_eq!(out.findings.len(), 1, "{:?}", out.findings);
    let clrace::exec::Finding::OutOfBounds { store, offset, global_id, .. } = &out.findings[0] else {
        panic!("expected an out-of-bounds finding, got {:?}", out.findings[0]);
    };
    assert_eq!((*store, *offset, *global_id), (false, 16, [3, 0, 0]));
    let got: Vec<i32> = buffers[1].chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, [11, 12, 13, 0]);
}
