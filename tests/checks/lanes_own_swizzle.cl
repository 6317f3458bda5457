// Lanes of a vector of a write-only buffer swapped in place (`.zy = .yz`): the program reads
// the vector it writes, a read of a write-only buffer (the twin of lanes_whole_swizzle_ok).
kernel void swap_lanes(global float4 *out)
{
    size_t i = get_global_id(0);
    out[i].zy = out[i].yz;
}
