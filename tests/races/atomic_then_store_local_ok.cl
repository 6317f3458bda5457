// every work-item counts itself with atomic_inc on a local counter; the last one overwrites it after a barrier
kernel void atomic_then_store_local_ok(global int *seen)
{
    local int count;
    if (get_local_id(0) == 0)
        count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&count);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == get_local_size(0) - 1)
        count = 100;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        *seen = count;
}
