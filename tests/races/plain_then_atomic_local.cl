// work-item 0 initialises a local counter, with no barrier before everyone's atomic_inc
kernel void plain_then_atomic_local(global int *seen)
{
    local int count;
    if (get_local_id(0) == 0)
        count = 0;
    atomic_inc(&count);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        *seen = count;
}
