// a barrier with only CLK_GLOBAL_MEM_FENCE does not order local memory: reading the neighbour's tile slot races
kernel void fence_global_only(global const int *in, global int *out)
{
    local int tile[8];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    tile[l] = in[i];
    barrier(CLK_GLOBAL_MEM_FENCE);
    int v = tile[(l + 1) % n];
    out[i] = v;
}
