// 3-point stencil through a local tile with halo cells loaded by work-item 0 after the barrier: only the tile's last work-item races
kernel void halo_late(global const int *in, global int *out)
{
    local int tile[10];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0), N = get_global_size(0);
    tile[l + 1] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        tile[0] = i > 0 ? in[i - 1] : 0;
        tile[n + 1] = i + n < N ? in[i + n] : 0;
    }
    int left = tile[l];
    int mid = tile[l + 1];
    int right = tile[l + 2];
    out[i] = left + mid + right;
}
