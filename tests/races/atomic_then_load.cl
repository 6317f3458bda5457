// every work-item counts itself with atomic_inc, then the last one reads the counter with a plain load
kernel void atomic_then_load(global int *count, global int *seen)
{
    atomic_inc(count);
    if (get_local_id(0) == get_local_size(0) - 1)
        *seen = *count;
}
