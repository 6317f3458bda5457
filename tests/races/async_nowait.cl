// async_work_group_copy fills a local tile while work-item 0 already writes a marker into it, before wait_group_events
kernel void async_nowait(global const int *src, global int *dst)
{
    local int tile[8];
    size_t l = get_local_id(0);
    event_t e = async_work_group_copy(tile, src + get_group_id(0) * 8, 8, 0);
    if (l == 0)
        tile[0] = -1;
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    dst[get_global_id(0)] = tile[l];
}
