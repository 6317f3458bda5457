// the halves of a group wait at two different barriers and are released together: one half then reads the tile while the other writes it
kernel void divergent_tile(global int *out)
{
    local int tile[64];
    int l = get_local_id(0);
    tile[l] = l;
    if (l < 32) {
        barrier(CLK_LOCAL_MEM_FENCE);
        out[get_global_id(0)] = tile[63 - l];
    } else {
        barrier(CLK_LOCAL_MEM_FENCE);
        tile[l] = 0;
    }
}
