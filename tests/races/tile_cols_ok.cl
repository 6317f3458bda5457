// every row of eight work-items reads one tile element (the eight of a row the same one), after the barrier
kernel void tile_cols_ok(global int *out)
{
    local int tile[64];
    int l = get_local_id(0);
    tile[l] = l * 3;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[(l / 8) * 9];
}
