// The lock of broken_lock (tested and set in two atomics) with the CD paper's kind of assertion
// inside the critical section: no one else is there. One delay lets both work-items pass the
// test but they still enter one after the other; the second delay lets them overlap, and the
// assertion fails.
#include "../../include/clrace.h"

kernel void lock_assert(global int *lock, global int *inside) {
    for (;;) {
        if (atomic_add(lock, 0) == 0) {
            atomic_xchg(lock, 1);
            break;
        }
    }
    int others = atomic_inc(inside);
    CLRACE_ASSERT(others == 0);
    atomic_dec(inside);
    atomic_xchg(lock, 0);
}
