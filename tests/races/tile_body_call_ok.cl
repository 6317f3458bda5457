// a helper reads the tile between its barriers; the kernel writes the tile after the helper returns, behind a barrier
void body(local int *tile, global int *out)
{
    int l = get_local_id(0);
    tile[l] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tile[63 - l];
}

kernel void tile_body_call_ok(global int *out)
{
    local int tile[64];
    body(tile, out);
    barrier(CLK_LOCAL_MEM_FENCE);
    tile[get_local_id(0)] = 0;
}
