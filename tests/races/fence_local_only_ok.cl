// a barrier with CLK_GLOBAL_MEM_FENCE orders the global buffer between writing and reading it
kernel void fence_local_only_ok(global const int *in, global int *tmp, global int *out)
{
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    size_t base = get_group_id(0) * n;
    tmp[i] = in[i] * 2;
    barrier(CLK_GLOBAL_MEM_FENCE);
    int v = tmp[base + (l + 1) % n];
    out[i] = v;
}
