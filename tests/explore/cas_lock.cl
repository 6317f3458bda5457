// A correct compare-exchange lock around a plain read-modify-write of a shared sum.
kernel void cas_lock(global int *lock, global int *sum) {
    while (atomic_cmpxchg(lock, 0, 1) != 0)
        ;
    *sum += get_global_id(0) + 1;
    atomic_xchg(lock, 0);
}
