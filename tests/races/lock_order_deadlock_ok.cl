// The correct twin: every work-item takes the two locks in the same order, so the one that
// lost the first lock spins until the winner has released both.
kernel void lock_order_deadlock_ok(global int *locks, global int *counter)
{
    while (atomic_cmpxchg(&locks[0], 0, 1) != 0)
        ;
    while (atomic_cmpxchg(&locks[1], 0, 1) != 0)
        ;
    atomic_inc(counter);
    atomic_xchg(&locks[1], 0);
    atomic_xchg(&locks[0], 0);
}
