// every work-item counts itself with atomic_inc on a local counter, then the last one overwrites it plainly
kernel void atomic_then_store_local(global int *seen)
{
    local int count;
    if (get_local_id(0) == 0)
        count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&count);
    if (get_local_id(0) == get_local_size(0) - 1)
        count = 100;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        *seen = count;
}
