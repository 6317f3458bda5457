// message passing between two groups with release/acquire at work_group scope: the scope does not cover the other group
#define FLAG(p) ((volatile global atomic_int *)(p))

kernel void mp_wg_scope(global int *data, global int *flag, global int *out)
{
    if (get_group_id(0) == 0) {
        data[0] = 42;
        atomic_store_explicit(FLAG(flag), 1, memory_order_release, memory_scope_work_group);
    } else {
        while (atomic_load_explicit(FLAG(flag), memory_order_acquire, memory_scope_work_group) != 1)
            ;
        out[0] = data[0];
    }
}
