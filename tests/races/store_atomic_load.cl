// work-item 0 resets a counter, everyone counts with atomic_inc, the last one reads it: no barrier, three racing pairs
kernel void store_atomic_load(global int *count, global int *seen)
{
    if (get_local_id(0) == 0)
        *count = 0;
    atomic_inc(count);
    if (get_local_id(0) == get_local_size(0) - 1)
        *seen = *count;
}
