// OpenCL 1.x atomics on global int/uint: add sub inc dec min max xchg cmpxchg and or xor; only order-independent results are stored.
kernel void atomics_global(global const int *in, global int *acc, global uint *uacc, global int *ret)
{
    size_t i = get_global_id(0);
    int x = in[i];
    atomic_add(&acc[0], x);
    atomic_sub(&acc[1], x);
    atomic_min(&acc[2], x);
    atomic_max(&acc[3], x);
    atomic_and(&acc[4], ~(1 << (i & 31)) | x);
    atomic_or(&acc[5], 1 << (i & 31));
    atomic_xor(&acc[6], x);
    int old_inc = atomic_inc(&acc[7]);                 // the returned values are a permutation of 0..n-1
    atomic_add(&acc[8], old_inc);
    int old_dec = atomic_dec(&acc[9]);
    atomic_add(&acc[10], old_dec);
    int old_x = atomic_xchg(&acc[11], 42);              // every work-item stores 42: exactly one sees the initial value
    atomic_add(&acc[12], old_x == -5);
    int won = atomic_cmpxchg(&acc[13], 0, 77) == 0; // exactly one work-item wins
    atomic_add(&acc[14], won);
    int seen = 0, prev;                                 // a cmpxchg loop computing a sum of squares
    while ((prev = atomic_cmpxchg(&acc[15], seen, seen + x * x)) != seen)
        seen = prev;
    atomic_min(&uacc[0], (uint)x);                      // unsigned compare: negatives are large
    atomic_max(&uacc[1], (uint)x);
    atomic_add(&uacc[2], 0x10000001u);
    atomic_dec(&uacc[3]);                               // wraps below zero
    ret[i] = atomic_xchg(&ret[i], x * 3) + x;           // private slot: the old value is deterministic
}
