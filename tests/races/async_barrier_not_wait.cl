// a barrier does not complete an async_work_group_copy: reading the tile after the barrier but before the wait races with the copy
kernel void async_barrier_not_wait(global const int *src, global int *dst)
{
    local int tile[8];
    event_t e = async_work_group_copy(tile, src + get_group_id(0) * 8, 8, 0);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    dst[get_global_id(0)] = tile[get_local_id(0)];
    wait_group_events(1, &e);
}
