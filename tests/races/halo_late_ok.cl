// 3-point stencil through a local tile with halo cells loaded by work-item 0 before the barrier
kernel void halo_late_ok(global const int *in, global int *out)
{
    local int tile[10];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0), N = get_global_size(0);
    tile[l + 1] = in[i];
    if (l == 0) {
        tile[0] = i > 0 ? in[i - 1] : 0;
        tile[n + 1] = i + n < N ? in[i + n] : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int left = tile[l];
    int mid = tile[l + 1];
    int right = tile[l + 2];
    out[i] = left + mid + right;
}
