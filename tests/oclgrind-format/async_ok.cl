kernel void async_ok(global const int *in, global int *out, local int *tile)
{
    size_t l = get_local_id(0);
    event_t e = async_work_group_copy(tile, in + 2, get_local_size(0), 0);
    wait_group_events(1, &e);
    out[l] = tile[get_local_size(0) - l - 1];
}
