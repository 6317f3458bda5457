kernel void async_nonuniform(global const int *in, global int *out, local int *tile)
{
    size_t l = get_local_id(0);
    size_t n = get_local_size(0);
    if (l == 1)
        n = 2;
    event_t e = async_work_group_copy(tile, in, n, 0);
    wait_group_events(1, &e);
    out[l] = tile[l];
}
