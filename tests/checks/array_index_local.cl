// A 4x4 __local tile read one column to the right: for x = 3 the index 4 leaves its row. In
// rows 0-2 it lands in the next row of the same allocation, which only the row's extent tells;
// in row 3 it is past the tile, an out-of-bounds load as well.
kernel void shift(global const int *in, global int *out)
{
    local int tile[4][4];
    int x = get_local_id(0), y = get_local_id(1);
    tile[y][x] = in[y * 4 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[y * 4 + x] = tile[y][x + 1];
}
