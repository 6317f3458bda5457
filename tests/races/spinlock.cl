// a spin lock built from atomic_cmpxchg/atomic_xchg guards a plain update; 1.x atomics are relaxed, so the guarded accesses still race
kernel void spinlock(global int *lock, global uchar *count)
{
    while (atomic_cmpxchg(lock, 0, 1) != 0)
        ;
    uchar c = *count;
    *count = c + 1;
    atomic_xchg(lock, 0);
}
