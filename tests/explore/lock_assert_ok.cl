// The correct twin of lock_assert: test and set in one compare-exchange; the assertion holds in
// every schedule.
#include "../../include/clrace.h"

kernel void lock_assert_ok(global int *lock, global int *inside) {
    while (atomic_cmpxchg(lock, 0, 1) != 0)
        ;
    int others = atomic_inc(inside);
    CLRACE_ASSERT(others == 0);
    atomic_dec(inside);
    atomic_xchg(lock, 0);
}
