// the same spin lock with OpenCL 2.0 acquire (lock) and release (unlock) at device scope orders the guarded update
#define ATOMIC(p) ((volatile global atomic_int *)(p))

kernel void spinlock_ok(global int *lock, global uchar *count)
{
    int expected = 0;
    while (!atomic_compare_exchange_strong_explicit(ATOMIC(lock), &expected, 1, memory_order_acquire, memory_order_relaxed, memory_scope_device))
        expected = 0;
    uchar c = *count;
    *count = c + 1;
    atomic_store_explicit(ATOMIC(lock), 0, memory_order_release, memory_scope_device);
}
