//! Image formats and functions that pocl lacks (the RG, RA, INTENSITY, LUMINANCE and ABGR
//! orders; `read_imageh`/`write_imageh`, since pocl has no cl_khr_fp16), checked against values
//! worked out from the OpenCL C specification's conversion rules: normalized channels read as
//! `v / 255` (or `/ 65535`, `/ 127` clamped at -1), written as `convert_T_sat_rte(f * scale)`;
//! a missing channel reads 0, a missing alpha 1; INTENSITY repeats into all four, LUMINANCE into
//! red, green and blue.

use clrace::exec::image::{ImageDesc, ImageKind, order_named, type_named};
use clrace::{ArgValue, Launch, Program};

fn build(source: &str) -> Program {
    let dir = tempfile::tempdir().unwrap();
    Program::from_source(source, &dir.path().join("images.cl"), "").unwrap_or_else(|e| panic!("{e}"))
}

fn image_2d(order: &str, ty: &str, width: u64) -> ImageDesc {
    ImageDesc {
        kind: ImageKind::D2,
        order: order_named(order).unwrap(),
        data_type: type_named(ty).unwrap(),
        width,
        height: 1,
        depth: 1,
        array_size: 1,
    }
}

fn launch(kernel: &str, width: u64, args: Vec<ArgValue>) -> Launch {
    Launch {
        kernel: kernel.into(),
        work_dim: 1,
        global_offset: [0; 3],
        global_size: [width, 1, 1],
        local_size: [width, 1, 1],
        args,
    }
}

fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

const READ_F: &str = "kernel void read_f(read_only image2d_t img, global float4 *out) {
    int x = get_global_id(0);
    out[x] = read_imagef(img, (int2)(x, 0));
}
kernel void write_f(write_only image2d_t img, global const float4 *in) {
    int x = get_global_id(0);
    write_imagef(img, (int2)(x, 0), in[x]);
}
";

/// Reads every pixel of `pixels` (an image of `desc`) with `read_imagef`.
fn read_all(desc: ImageDesc, pixels: Vec<u8>) -> Vec<f32> {
    let program = build(READ_F);
    let width = desc.width;
    let mut buffers = vec![pixels, vec![0u8; 16 * width as usize]];
    let args = vec![ArgValue::Image { buffer: 0, desc }, ArgValue::Buffer(1)];
    let outcome = clrace::run(&program, &launch("read_f", width, args), &mut buffers).unwrap();
    assert!(outcome.findings.is_empty(), "{:?}", outcome.findings);
    floats(&buffers[1])
}

/// Writes `texels` (four floats per pixel) with `write_imagef`; returns the stored bytes.
fn write_all(desc: ImageDesc, texels: &[f32]) -> Vec<u8> {
    let program = build(READ_F);
    let width = desc.width;
    let input: Vec<u8> = texels.iter().flat_map(|f| f.to_le_bytes()).collect();
    let mut buffers = vec![vec![0xeeu8; desc.byte_size() as usize], input];
    let args = vec![ArgValue::Image { buffer: 0, desc }, ArgValue::Buffer(1)];
    clrace::run(&program, &launch("write_f", width, args), &mut buffers).unwrap();
    buffers.swap_remove(0)
}

#[test]
fn rg_unorm_int8_reads_zero_blue_and_opaque_alpha() {
    let got = read_all(image_2d("RG", "UNORM_INT8", 2), vec![0, 255, 51, 102]);
    assert_eq!(got, [0.0, 1.0, 0.0, 1.0, 0.2, 0.4, 0.0, 1.0]);
}

#[test]
fn rg_unorm_int8_writes_round_to_nearest_even_and_saturate() {
    // 0.5 * 255 = 127.5 rounds to 128; -1 and 2 saturate; NaN stores 0; blue and alpha are dropped.
    let texels = [0.5, -1.0, 9.0, 9.0, 2.0, f32::NAN, 0.0, 0.0];
    assert_eq!(write_all(image_2d("RG", "UNORM_INT8", 2), &texels), [128, 0, 255, 0]);
}

#[test]
fn ra_snorm_int8_clamps_minus_128_to_minus_one() {
    let got = read_all(image_2d("RA", "SNORM_INT8", 2), vec![0x80, 127, 0x81, 0]);
    assert_eq!(got, [-1.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0]);
    let texels = [-1.0, 0.0, 0.0, 0.25, 0.5, 0.0, 0.0, -2.0];
    // 0.25 * 127 = 31.75 -> 32; 0.5 * 127 = 63.5 -> 64 (ties to even); -2 saturates at -128.
    assert_eq!(write_all(image_2d("RA", "SNORM_INT8", 2), &texels), [0x81, 32, 64, 0x80]);
}

#[test]
fn intensity_and_luminance_repeat_their_channel() {
    let intensity = read_all(image_2d("INTENSITY", "FLOAT", 1), 0.75f32.to_le_bytes().to_vec());
    assert_eq!(intensity, [0.75; 4]);
    let luminance = read_all(image_2d("LUMINANCE", "UNORM_INT16", 1), vec![0xff, 0xff]);
    assert_eq!(luminance, [1.0, 1.0, 1.0, 1.0]);
    // Writes store the red component.
    assert_eq!(write_all(image_2d("LUMINANCE", "UNORM_INT8", 1), &[1.0, 0.0, 0.0, 0.0]), [255]);
}

#[test]
fn abgr_stores_alpha_first() {
    let got = read_all(image_2d("ABGR", "UNORM_INT8", 1), vec![255, 0, 51, 102]);
    assert_eq!(got, [0.4, 0.2, 0.0, 1.0]);
    assert_eq!(write_all(image_2d("ABGR", "UNORM_INT8", 1), &[1.0, 0.0, 0.2, 0.4]), [102, 51, 0, 255]);
}

#[test]
fn half_texels_read_and_write_as_half() {
    let source = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable
kernel void h(read_only image2d_t src, write_only image2d_t dst, global half4 *out) {
    int x = get_global_id(0);
    half4 v = read_imageh(src, (int2)(x, 0));
    out[x] = v;
    write_imageh(dst, (int2)(x, 0), v * (half)2.0h);
}
";
    let program = build(source);
    let src = image_2d("RGBA", "UNORM_INT8", 1);
    let dst = image_2d("RGBA", "HALF_FLOAT", 1);
    let mut buffers = vec![vec![0, 255, 128, 51], vec![0; 8], vec![0; 8]];
    let args =
        vec![ArgValue::Image { buffer: 0, desc: src }, ArgValue::Image { buffer: 1, desc: dst }, ArgValue::Buffer(2)];
    clrace::run(&program, &launch("h", 1, args), &mut buffers).unwrap();
    let halves = |b: &[u8]| b.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect::<Vec<_>>();
    // 128/255 = 0.50196 rounds to half 0x3804 (0.50195); 51/255 = 0.2 to 0x3266 (0.19995).
    assert_eq!(halves(&buffers[2]), [0x0000, 0x3c00, 0x3804, 0x3266]);
    assert_eq!(halves(&buffers[1]), [0x0000, 0x4000, 0x3c04, 0x3666]);
}

#[test]
fn an_invalid_format_is_refused_with_its_name() {
    let program = build(READ_F);
    let desc = image_2d("BGRA", "UNORM_INT16", 1);
    let mut buffers = vec![vec![0; 8], vec![0; 16]];
    let args = vec![ArgValue::Image { buffer: 0, desc }, ArgValue::Buffer(1)];
    let err = clrace::run(&program, &launch("read_f", 1, args), &mut buffers).unwrap_err().to_string();
    assert!(err.contains("BGRA/UNORM_INT16 is not a valid OpenCL image format"), "{err}");
}
