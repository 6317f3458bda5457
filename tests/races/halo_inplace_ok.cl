// smoothing of global data into a separate output: the edge work-item's global read of the next group's element is safe
kernel void halo_inplace_ok(global const int *data, global int *out)
{
    local int tile[8];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0), N = get_global_size(0);
    tile[l] = data[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    int right = 0;
    if (l + 1 < n)
        right = tile[l + 1];
    else if (i + 1 < N)
        right = data[i + 1];
    out[i] = tile[l] + right;
}
