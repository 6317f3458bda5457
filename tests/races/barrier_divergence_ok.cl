// every work-item reaches the barrier; only work-items 0 and 1 use the tile
kernel void barrier_divergence_ok(global int *out)
{
    local int tmp[8];
    size_t l = get_local_id(0);
    if (l < 2)
        tmp[l] = (int)l + 10;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 2)
        out[l] = tmp[1 - l];
}
