// the tile is read only after wait_group_events has completed the copy
kernel void async_barrier_not_wait_ok(global const int *src, global int *dst)
{
    local int tile[8];
    event_t e = async_work_group_copy(tile, src + get_group_id(0) * 8, 8, 0);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    wait_group_events(1, &e);
    dst[get_global_id(0)] = tile[get_local_id(0)];
}
