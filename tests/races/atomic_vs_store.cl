// work-items publish their id with atomic stores while work-item 0 writes the same word with a plain store
#define ATOMIC(p) ((volatile global atomic_int *)(p))

kernel void atomic_vs_store(global int *status)
{
    size_t g = get_group_id(0), l = get_local_id(0);
    if (l == 0)
        status[g] = -1;
    else
        atomic_store_explicit(ATOMIC(&status[g]), (int)l, memory_order_relaxed, memory_scope_work_group);
}
