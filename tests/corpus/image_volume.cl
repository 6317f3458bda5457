// A 3D RGBA HALF_FLOAT volume sampled with normalized coordinates, CLK_ADDRESS_REPEAT and nearest
// filtering at points past every face (wrapping around), and written back to a 3D image
// (cl_khr_3d_image_writes) with the channels swizzled; the sampled values also go to a buffer.
#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable

kernel void image_volume(read_only image3d_t volume, sampler_t wrap, write_only image3d_t swapped,
                         global float4 *samples)
{
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int4 size = get_image_dim(volume);
    // Texel centres shifted by one image size (or two) in a different direction per axis.
    float4 at = (float4)((x + 0.5f) / size.x + 1.0f, (y + 0.5f) / size.y - 2.0f, (z + 0.5f) / size.z + 3.0f, 0.0f);
    float4 v = read_imagef(volume, wrap, at);
    samples[(z * size.y + y) * size.x + x] = v;
    write_imagef(swapped, (int4)(x, y, z, 0), v.zwyx);
}
