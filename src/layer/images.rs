//! Image and sampler creation, hooked: each call is forwarded unchanged, and what the emulator
//! needs to run kernels on the object (an image's kind, format and size; a sampler's modes) is
//! recorded so that `clSetKernelArg` can recognise the handle.

use opencl_sys::{
    CL_ADDRESS_CLAMP, CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_MIRRORED_REPEAT, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR,
    CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_MEM_OBJECT_IMAGE3D, CL_SAMPLER_ADDRESSING_MODE, CL_SAMPLER_FILTER_MODE,
    CL_SAMPLER_NORMALIZED_COORDS, cl_addressing_mode, cl_bool, cl_context, cl_filter_mode, cl_image_desc,
    cl_image_format, cl_int, cl_mem, cl_mem_flags, cl_mem_properties, cl_sampler, cl_sampler_properties,
};
use std::ffi::c_void;

use super::Layer;
use super::boundary::{below, then};
use super::state::{ImageState, Key};
use crate::exec::image::{Addressing, ImageDesc, ImageKind, Sampler};

/// The emulator's description of an image created with `format` and `desc`.
fn describe(format: &cl_image_format, desc: &cl_image_desc) -> Option<ImageDesc> {
    let kind = match desc.image_type {
        CL_MEM_OBJECT_IMAGE1D => ImageKind::D1,
        CL_MEM_OBJECT_IMAGE1D_BUFFER => ImageKind::D1Buffer,
        CL_MEM_OBJECT_IMAGE1D_ARRAY => ImageKind::D1Array,
        CL_MEM_OBJECT_IMAGE2D => ImageKind::D2,
        CL_MEM_OBJECT_IMAGE2D_ARRAY => ImageKind::D2Array,
        CL_MEM_OBJECT_IMAGE3D => ImageKind::D3,
        _ => return None,
    };
    let used = |on: bool, v: usize| if on { v.max(1) as u64 } else { 1 };
    Some(ImageDesc {
        kind,
        order: format.image_channel_order,
        data_type: format.image_channel_data_type,
        width: desc.image_width.max(1) as u64,
        height: used(matches!(kind, ImageKind::D2 | ImageKind::D2Array | ImageKind::D3), desc.image_height),
        depth: used(kind == ImageKind::D3, desc.image_depth),
        array_size: used(matches!(kind, ImageKind::D1Array | ImageKind::D2Array), desc.image_array_size),
    })
}

/// Records a new image (if the driver made one and we understand its description).
///
/// # Safety
/// `format` and `desc` are NULL or point to valid structures (the driver accepted them).
unsafe fn record_image(
    l: &Layer,
    mem: cl_mem,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
) {
    if mem.is_null() || format.is_null() || desc.is_null() {
        return;
    }
    // SAFETY: the caller's contract.
    let described = unsafe { describe(&*format, &*desc) };
    if let Some(desc) = described {
        l.state.lock().add_image(Key::of(mem), ImageState { desc, flags });
    }
}

pub unsafe extern "C" fn create_image(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateImage);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, flags, format, desc, host_ptr, errcode_ret) };
    // SAFETY: the structures the driver accepted.
    then("image", forward, |mem| unsafe { record_image(l, mem, flags, format, desc) })
}

pub unsafe extern "C" fn create_image_with_properties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateImageWithProperties);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, properties, flags, format, desc, host_ptr, errcode_ret) };
    // SAFETY: the structures the driver accepted.
    then("image", forward, |mem| unsafe { record_image(l, mem, flags, format, desc) })
}

/// A `cl_image_desc` for the OpenCL 1.1 creation calls.
fn legacy_desc(image_type: u32, width: usize, height: usize, depth: usize) -> cl_image_desc {
    // SAFETY: an all-zero desc is valid (no buffer, no pitches).
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    desc.image_type = image_type;
    (desc.image_width, desc.image_height, desc.image_depth) = (width, height, depth);
    desc
}

pub unsafe extern "C" fn create_image_2d(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: usize,
    height: usize,
    row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateImage2D);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, flags, format, width, height, row_pitch, host_ptr, errcode_ret) };
    // SAFETY: the structures the driver accepted.
    then("image", forward, |mem| unsafe {
        record_image(l, mem, flags, format, &legacy_desc(CL_MEM_OBJECT_IMAGE2D, width, height, 1))
    })
}

pub unsafe extern "C" fn create_image_3d(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: usize,
    height: usize,
    depth: usize,
    row_pitch: usize,
    slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let (l, f) = below!(clCreateImage3D);
    // SAFETY: forwarded unchanged.
    let forward =
        || unsafe { f(context, flags, format, width, height, depth, row_pitch, slice_pitch, host_ptr, errcode_ret) };
    // SAFETY: the structures the driver accepted.
    then("image", forward, |mem| unsafe {
        record_image(l, mem, flags, format, &legacy_desc(CL_MEM_OBJECT_IMAGE3D, width, height, depth))
    })
}

/// The kernel-side sampler of host-side sampler settings.
fn sampler_of(normalized: bool, addressing: cl_addressing_mode, filter: cl_filter_mode) -> Sampler {
    let addressing = match addressing {
        CL_ADDRESS_CLAMP_TO_EDGE => Addressing::ClampToEdge,
        CL_ADDRESS_CLAMP => Addressing::Clamp,
        CL_ADDRESS_REPEAT => Addressing::Repeat,
        CL_ADDRESS_MIRRORED_REPEAT => Addressing::MirroredRepeat,
        _ => Addressing::None,
    };
    Sampler { normalized, addressing, linear: filter == CL_FILTER_LINEAR }
}

fn record_sampler(l: &Layer, sampler: cl_sampler, settings: impl FnOnce() -> Sampler) {
    if !sampler.is_null() {
        let bits = settings().bits() as u32;
        l.state.lock().add_sampler(Key::of(sampler), bits);
    }
}

pub unsafe extern "C" fn create_sampler(
    context: cl_context,
    normalized: cl_bool,
    addressing: cl_addressing_mode,
    filter: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    let (l, f) = below!(clCreateSampler);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, normalized, addressing, filter, errcode_ret) };
    then("sampler", forward, |sampler| {
        record_sampler(l, sampler, || sampler_of(normalized != 0, addressing, filter));
    })
}

pub unsafe extern "C" fn create_sampler_with_properties(
    context: cl_context,
    properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    let (l, f) = below!(clCreateSamplerWithProperties);
    // SAFETY: forwarded unchanged.
    let forward = || unsafe { f(context, properties, errcode_ret) };
    // SAFETY: the list the driver accepted.
    then("sampler", forward, |sampler| record_sampler(l, sampler, || unsafe { sampler_settings(properties) }))
}

/// The settings of a sampler created with `properties`.
///
/// # Safety
/// `properties` is NULL or a list the driver accepted: (name, value) pairs ending with 0.
unsafe fn sampler_settings(properties: *const cl_sampler_properties) -> Sampler {
    // The defaults of the specification: normalized, clamp, nearest.
    let (mut normalized, mut addressing, mut filter) = (true, CL_ADDRESS_CLAMP, 0);
    let mut p = properties;
    // SAFETY: the driver accepted the list: (name, value) pairs ending with 0.
    unsafe {
        while !p.is_null() && *p != 0 {
            let value = *p.add(1);
            match *p as u32 {
                CL_SAMPLER_NORMALIZED_COORDS => normalized = value != 0,
                CL_SAMPLER_ADDRESSING_MODE => addressing = value as u32,
                CL_SAMPLER_FILTER_MODE => filter = value as u32,
                _ => {}
            }
            p = p.add(2);
        }
    }
    sampler_of(normalized, addressing, filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_sampler_settings_become_kernel_bits() {
        let s = sampler_of(true, CL_ADDRESS_MIRRORED_REPEAT, CL_FILTER_LINEAR);
        assert_eq!(s.bits(), 0x1 | (4 << 1) | 0x20);
        let array = legacy_desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 3, 9);
        let format = cl_image_format { image_channel_order: 0x10B5, image_channel_data_type: 0x10D2 };
        let desc = describe(&format, &cl_image_desc { image_array_size: 5, ..array }).unwrap();
        assert_eq!((desc.width, desc.height, desc.depth, desc.array_size), (4, 3, 1, 5));
    }
}
