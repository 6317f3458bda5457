// 3x3 box blur of an RGBA UNORM_INT8 image through a linear sampler with unnormalized coordinates
// and CLK_ADDRESS_CLAMP_TO_EDGE: the taps sit 0.6 texel apart around each texel centre, so the
// filter blends neighbours, and taps past the border repeat the edge texels. (No result lies
// near a rounding tie of the UNORM_INT8 store: the store may round ties either way in practice.)
kernel void image_blur(read_only image2d_t src, sampler_t smp, write_only image2d_t dst)
{
    int x = get_global_id(0), y = get_global_id(1);
    float4 sum = (float4)(0.0f);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += read_imagef(src, smp, (float2)(x + 0.5f + dx * 0.6f, y + 0.5f + dy * 0.6f));
    write_imagef(dst, (int2)(x, y), sum / 9.0f);
}
