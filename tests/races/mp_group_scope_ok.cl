// message passing from work-item 0 to work-item 1 of the same group: work_group scope covers both
#define FLAG(p) ((volatile global atomic_int *)(p))

kernel void mp_group_scope_ok(global int *data, global int *flag, global int *out)
{
    size_t g = get_group_id(0);
    if (get_local_id(0) == 0) {
        data[g] = 42 + (int)g;
        atomic_store_explicit(FLAG(&flag[g]), 1, memory_order_release, memory_scope_work_group);
    } else {
        while (atomic_load_explicit(FLAG(&flag[g]), memory_order_acquire, memory_scope_work_group) != 1)
            ;
        out[g] = data[g];
    }
}
