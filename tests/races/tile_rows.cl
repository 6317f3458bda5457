// every row of eight work-items reads one element of each of eight tile rows (work-items eight apart read the same element), with no barrier after the tile is stored
kernel void tile_rows(global int *out)
{
    local int tile[64];
    int l = get_local_id(0);
    tile[l] = l * 3;
    out[get_global_id(0)] = tile[(l % 8) * 9];
}
