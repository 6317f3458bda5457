// A 16x16 __local tile whose rows each work-item sums, one column past the end: at k = 16 every
// work-item's index leaves its row (in rows 0-14 into the next row of the same allocation, which
// only the row's extent tells; in row 15 past the tile, an out-of-bounds load as well). In
// groups of 256 the interpreter passes an index check from the index's descriptor when every
// lane's index is inside: here the last trip's is not, and all 256 are found.
kernel void tile_rows(global const int *in, global int *out)
{
    local int tile[16][16];
    int x = get_local_id(0), y = get_local_id(1);
    tile[y][x] = in[y * 16 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int sum = 0;
    for (int k = 0; k <= 16; k++)
        sum += tile[y][k];
    out[y * 16 + x] = sum;
}
