// work-items count themselves with atomic_inc while work-item 0 reads the counter with a plain load
kernel void atomic_vs_load(global int *count, global int *seen)
{
    size_t g = get_group_id(0);
    atomic_inc(&count[g]);
    if (get_local_id(0) == 0)
        seen[g] = count[g];
}
