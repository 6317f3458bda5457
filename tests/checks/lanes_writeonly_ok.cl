// Writes of some lanes of vectors in a write-only buffer (`.x`, a swizzle `.zy`), each work-item
// its own lanes of vectors it shares with its neighbours: clang loads the whole vector before
// storing it back, but the program reads nothing and no two work-items write the same bytes.
kernel void lanes(global float4 *out)
{
    size_t i = get_global_id(0);
    if (i % 2 == 0)
        out[i / 2].x = (float)i;
    else
        out[i / 2].zy = (float2)((float)i, 2.0f * (float)i);
}
