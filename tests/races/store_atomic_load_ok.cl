// work-item 0 resets a counter, everyone counts with atomic_inc, the last one reads it, with barriers between
kernel void store_atomic_load_ok(global int *count, global int *seen)
{
    if (get_local_id(0) == 0)
        *count = 0;
    barrier(CLK_GLOBAL_MEM_FENCE);
    atomic_inc(count);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == get_local_size(0) - 1)
        *seen = *count;
}
