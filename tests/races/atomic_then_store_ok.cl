// every work-item counts itself with atomic_inc; the last one resets the counter after a barrier
kernel void atomic_then_store_ok(global int *count)
{
    atomic_inc(count);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == get_local_size(0) - 1)
        *count = 0;
}
