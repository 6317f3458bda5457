// work-items count themselves with atomic_inc; work-item 0 reads the counter after a global-memory barrier
kernel void atomic_vs_load_ok(global int *count, global int *seen)
{
    size_t g = get_group_id(0);
    atomic_inc(&count[g]);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        seen[g] = count[g];
}
