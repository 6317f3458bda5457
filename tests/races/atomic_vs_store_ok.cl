// every store to the group's status word is atomic, work-item 0's included
#define ATOMIC(p) ((volatile global atomic_int *)(p))

kernel void atomic_vs_store_ok(global int *status)
{
    size_t g = get_group_id(0), l = get_local_id(0);
    if (l == 0)
        atomic_store_explicit(ATOMIC(&status[g]), -1, memory_order_relaxed, memory_scope_work_group);
    else
        atomic_store_explicit(ATOMIC(&status[g]), (int)l, memory_order_relaxed, memory_scope_work_group);
}
