// every row of eight work-items reads one element of each of eight tile rows (work-items eight apart read the same element), after the barrier
kernel void tile_rows_ok(global int *out)
{
    local int tile[64];
    int l = get_local_id(0);
    tile[l] = l * 3;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[(l % 8) * 9];
}
