// Two spin locks taken in opposite orders by even and odd work-items of one sub-group: in
// lockstep each takes its first lock, then each waits for the lock the other holds.
kernel void lock_order_deadlock(global int *locks, global int *counter)
{
    int first = get_global_id(0) & 1;
    int second = 1 - first;
    while (atomic_cmpxchg(&locks[first], 0, 1) != 0)
        ;
    while (atomic_cmpxchg(&locks[second], 0, 1) != 0)
        ;
    atomic_inc(counter);
    atomic_xchg(&locks[second], 0);
    atomic_xchg(&locks[first], 0);
}
