// every row of eight work-items reads one tile element (the eight of a row the same one), with no barrier after the tile is stored
kernel void tile_cols(global int *out)
{
    local int tile[64];
    int l = get_local_id(0);
    tile[l] = l * 3;
    out[get_global_id(0)] = tile[(l / 8) * 9];
}
