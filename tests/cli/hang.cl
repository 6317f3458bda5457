// Work-item 0 waits for a flag that work-item 1 sets only after a barrier that work-item 0
// never reaches: neither can go on.
kernel void hang(global atomic_int *flag)
{
    if (get_local_id(0) == 0) {
        while (atomic_load(flag) == 0)
            ;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    atomic_store(flag, 1);
}
