// message passing with a release fence placed after the relaxed flag store, where it releases nothing
#define FLAG(p) ((volatile global atomic_int *)(p))

kernel void mp_fence(global int *data, global int *flag, global int *out)
{
    if (get_group_id(0) == 0) {
        data[0] = 42;
        atomic_store_explicit(FLAG(flag), 1, memory_order_relaxed, memory_scope_device);
        atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release, memory_scope_device);
    } else {
        while (atomic_load_explicit(FLAG(flag), memory_order_acquire, memory_scope_device) != 1)
            ;
        out[0] = data[0];
    }
}
