// The correct twin of array_index_tile.cl: every index inside its row.
kernel void tile_rows_ok(global const int *in, global int *out)
{
    local int tile[16][16];
    int x = get_local_id(0), y = get_local_id(1);
    tile[y][x] = in[y * 16 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int sum = 0;
    for (int k = 0; k < 16; k++)
        sum += tile[y][k];
    out[y * 16 + x] = sum;
}
