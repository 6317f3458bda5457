// in-place smoothing of global data: the last work-item of each group reads its right neighbour from global memory, which the next group overwrites
kernel void halo_inplace(global int *data)
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
    data[i] = tile[l] + right;
}
