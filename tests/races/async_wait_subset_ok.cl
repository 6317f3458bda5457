// wait_group_events(2, handles) completes both copies before the tiles are read
kernel void async_wait_subset_ok(global const int *a, global const int *b, global int *out)
{
    local int a_tile[8], b_tile[8];
    event_t handles[2];
    size_t base = get_group_id(0) * 8, l = get_local_id(0);
    handles[0] = async_work_group_copy(a_tile, a + base, 8, 0);
    handles[1] = async_work_group_copy(b_tile, b + base, 8, 0);
    wait_group_events(2, handles);
    out[get_global_id(0)] = a_tile[l] + b_tile[l];
}
