// A spin lock taken by one work-item per sub-group. The first leader keeps it until a work-item
// of the last sub-group has raised a flag, so the other leaders spin while it is held: lockstep
// sub-groups wait for each other, which they can.
kernel void leader_lock(global int *lock, global int *count, global int *flag) {
    if (get_local_id(0) == get_local_size(0) - 3)
        atomic_xchg(flag, 1);
    if (get_sub_group_local_id() == 0) {
        while (atomic_cmpxchg(lock, 0, 1) != 0)
            ;
        if (get_sub_group_id() == 0)
            while (atomic_add(flag, 0) == 0)
                ;
        *count += 1;
        atomic_xchg(lock, 0);
    }
}
