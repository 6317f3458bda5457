// async_work_group_copy fills a local tile; work-item 0 writes its marker only after wait_group_events
kernel void async_nowait_ok(global const int *src, global int *dst)
{
    local int tile[8];
    size_t l = get_local_id(0);
    event_t e = async_work_group_copy(tile, src + get_group_id(0) * 8, 8, 0);
    wait_group_events(1, &e);
    if (l == 0)
        tile[0] = -1;
    barrier(CLK_LOCAL_MEM_FENCE);
    dst[get_global_id(0)] = tile[l];
}
