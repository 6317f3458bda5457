// __local arrays declared in the kernel (int and float2): reverse within the group, then a 2D transpose through a local tile.
kernel void local_decl(global const int *in, global int *out, global float2 *fout)
{
    local int rev[32];
    local float2 tile[8][9];                    // padded row
    size_t l = get_local_id(0), g = get_group_id(0), n = get_local_size(0);
    size_t i = get_global_id(0);
    rev[l] = in[i];
    tile[l / 8][l % 8] = (float2)((float)in[i], (float)l);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = rev[n - 1 - l] * 10 + (int)g;
    fout[i] = tile[l % 4][l / 4] * 0.5f;
}
