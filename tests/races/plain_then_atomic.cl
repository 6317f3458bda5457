// work-item 0 resets the counter with a plain store, with no barrier before everyone's atomic_inc
kernel void plain_then_atomic(global int *count)
{
    if (get_local_id(0) == 0)
        *count = 0;
    atomic_inc(count);
}
