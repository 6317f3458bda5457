// message passing from group 0 to group 1 through a flag with relaxed atomics: the flag orders nothing, so the data accesses race
#define FLAG(p) ((volatile global atomic_int *)(p))

kernel void mp_relaxed(global int *data, global int *flag, global int *out)
{
    if (get_group_id(0) == 0) {
        data[0] = 42;
        atomic_store_explicit(FLAG(flag), 1, memory_order_relaxed, memory_scope_device);
    } else {
        while (atomic_load_explicit(FLAG(flag), memory_order_relaxed, memory_scope_device) != 1)
            ;
        out[0] = data[0];
    }
}
