// 3D NDRange: each work-item reads its x-neighbour in a 2x2x2 local tile without a barrier after the tile is filled
kernel void stencil3d(global const int *in, global int *out)
{
    local int tile[2][2][2];
    size_t lx = get_local_id(0), ly = get_local_id(1), lz = get_local_id(2);
    size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) + get_global_id(0);
    tile[lz][ly][lx] = in[i];
    int v = tile[lz][ly][1 - lx];
    out[i] = v;
}
