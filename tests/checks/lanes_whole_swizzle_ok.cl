// A whole vector of a write-only buffer replaced in another lane order (`.wzyx = ...`): clang
// loads the old vector first and uses none of its lanes, so the program reads nothing.
kernel void swizzle(global const float4 *in, global float4 *out)
{
    size_t i = get_global_id(0);
    out[i].wzyx = in[i];
}
