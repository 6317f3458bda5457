// a barrier with only CLK_LOCAL_MEM_FENCE does not order global memory: reading the neighbour's element races
kernel void fence_local_only(global const int *in, global int *tmp, global int *out)
{
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    size_t base = get_group_id(0) * n;
    tmp[i] = in[i] * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    int v = tmp[base + (l + 1) % n];
    out[i] = v;
}
