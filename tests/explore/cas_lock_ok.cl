// The correct twin of broken_lock: test and set in one compare-exchange, around the same
// critical section of two atomics.
kernel void cas_lock_ok(global int *lock, global int *counter) {
    while (atomic_cmpxchg(lock, 0, 1) != 0)
        ;
    int c = atomic_add(counter, 0);
    atomic_xchg(counter, c + 1);
    atomic_xchg(lock, 0);
}
