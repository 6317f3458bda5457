// Work-group 0 waits for a flag that work-group 1 sets (release and acquire at device scope).
// Run one group at a time in NDRange order, group 0 would wait for a group that never starts;
// the check keeps every group alive, and so must the check in front of an exploration.
kernel void group_handshake(global atomic_uint *flag, global uint *data, global uint *out) {
    uint g = get_group_id(0);
    if (g == 1) {
        data[0] = 1;
        atomic_store_explicit(flag, 1, memory_order_release, memory_scope_device);
        out[1] = 1;
    } else {
        while (atomic_load_explicit(flag, memory_order_acquire, memory_scope_device) == 0)
            ;
        out[0] = data[0];
    }
}
