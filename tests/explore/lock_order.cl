// Two locks taken in opposite orders by the two work-groups: when each holds its first lock
// and waits for the other's, neither can go on.
kernel void lock_order(global int *locks, global int *out) {
    int g = get_global_id(0);
    global int *first = &locks[g % 2], *second = &locks[1 - g % 2];
    while (atomic_cmpxchg(first, 0, 1) != 0)
        ;
    while (atomic_cmpxchg(second, 0, 1) != 0)
        ;
    out[g] = g + 1;
    atomic_xchg(second, 0);
    atomic_xchg(first, 0);
}
