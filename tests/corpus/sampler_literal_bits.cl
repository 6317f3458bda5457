// Integer sampler literals without filter bits, never used: the translator emits an out-of-range
// filter mode for them, which must not fail the module. The sampler that is used has every field.
void unused(sampler_t s) { }

kernel void sampler_literal_bits(read_only image2d_t src, global float4 *out)
{
    unused(5);   // CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP
    unused(2);   // CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE
    int x = get_global_id(0), y = get_global_id(1);
    const sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
    out[y * get_global_size(0) + x] = read_imagef(src, edge, (float2)(x - 0.3f, y + 0.8f));
}
