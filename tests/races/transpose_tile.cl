// 8x8 matrix transpose through a 4x4 local tile, read transposed without a barrier after it is filled
kernel void transpose_tile(global const int *in, global int *out, int width)
{
    local int tile[4][4];
    size_t lx = get_local_id(0), ly = get_local_id(1);
    size_t gx = get_group_id(0) * 4, gy = get_group_id(1) * 4;
    tile[ly][lx] = in[(gy + ly) * width + gx + lx];
    int v = tile[lx][ly];
    out[(gx + ly) * width + gy + lx] = v;
}
