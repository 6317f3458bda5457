// The twin of array_index_local: the last column wraps to the row's start.
kernel void shift(global const int *in, global int *out)
{
    local int tile[4][4];
    int x = get_local_id(0), y = get_local_id(1);
    tile[y][x] = in[y * 4 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[y * 4 + x] = tile[y][(x + 1) % 4];
}
