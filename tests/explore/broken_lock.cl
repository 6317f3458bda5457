// A lock whose test and set are two atomics (the CD paper's planted re-read before the CAS):
// two work-items can both see it free, then both enter. The critical section reads the counter
// and writes it back with two atomics, which is safe only under a real lock. It takes two
// delays to show: one so that both pass the test, one so that they interleave inside.
kernel void broken_lock(global int *lock, global int *counter) {
    for (;;) {
        if (atomic_add(lock, 0) == 0) {
            atomic_xchg(lock, 1);
            break;
        }
    }
    int c = atomic_add(counter, 0);
    atomic_xchg(counter, c + 1);
    atomic_xchg(lock, 0);
}
