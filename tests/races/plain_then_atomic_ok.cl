// work-item 0 resets the counter, a barrier, then everyone counts with atomic_inc
kernel void plain_then_atomic_ok(global int *count)
{
    if (get_local_id(0) == 0)
        *count = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
    atomic_inc(count);
}
