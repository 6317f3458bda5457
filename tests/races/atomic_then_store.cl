// every work-item counts itself with atomic_inc, then the last one resets the counter with a plain store
kernel void atomic_then_store(global int *count)
{
    atomic_inc(count);
    if (get_local_id(0) == get_local_size(0) - 1)
        *count = 0;
}
