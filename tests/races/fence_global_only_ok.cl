// a barrier with CLK_LOCAL_MEM_FENCE orders the local tile between writing and reading it
kernel void fence_global_only_ok(global const int *in, global int *out)
{
    local int tile[8];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    tile[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = tile[(l + 1) % n];
    out[i] = v;
}
