// A spin lock taken by every work-item of a sub-group: in lockstep, the winner waits at the end of
// the loop while the others spin for ever (an intra-warp lock).
kernel void warp_lock(global int *lock, global int *count) {
    while (atomic_cmpxchg(lock, 0, 1) != 0)
        ;
    *count += 1;
    atomic_xchg(lock, 0);
}
