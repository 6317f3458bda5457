// OpenCL 2.0 atomics on global and local atomic_long/atomic_ulong: fetch add/sub/or/xor/and/min/max, load/store/exchange, compare_exchange strong/weak, atomic_init, with orders and scopes.
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define AL(p) ((volatile global atomic_long *)(p))
#define AUL(p) ((volatile global atomic_ulong *)(p))

kernel void atomics20_64(global const long *in, global long *acc, global ulong *uacc, global long *slot, global long *out)
{
    local atomic_long lsum;
    local atomic_ulong lmax;
    size_t i = get_global_id(0), l = get_local_id(0), g = get_group_id(0);
    long x = in[i] * 1000000007L; // values cross 32 bits

    if (l == 0) {
        atomic_init(&lsum, 1L << 40);
        atomic_init(&lmax, 0UL);
    }
    work_group_barrier(CLK_LOCAL_MEM_FENCE);

    atomic_fetch_add(AL(&acc[0]), x);
    atomic_fetch_sub_explicit(AL(&acc[1]), x, memory_order_relaxed, memory_scope_device);
    atomic_fetch_or_explicit(AL(&acc[2]), x & 0x0f0f0f0f0f0f0f0fL, memory_order_release, memory_scope_device);
    atomic_fetch_xor_explicit(AL(&acc[3]), x, memory_order_acq_rel);
    atomic_fetch_and_explicit(AL(&acc[4]), x | 0x00ff00ff00ff00ffL, memory_order_acquire, memory_scope_device);
    atomic_fetch_min_explicit(AL(&acc[5]), x, memory_order_seq_cst, memory_scope_device);
    atomic_fetch_max(AL(&acc[6]), x);
    long ticket = atomic_fetch_add_explicit(AL(&acc[7]), 1L << 33, memory_order_acq_rel, memory_scope_device);
    atomic_fetch_add_explicit(AL(&acc[8]), ticket, memory_order_relaxed); // (0+1+...+n-1) << 33
    long old = atomic_exchange_explicit(AL(&acc[9]), 9L, memory_order_seq_cst, memory_scope_device);
    atomic_fetch_add(AL(&acc[10]), old == -(1L << 35));                 // exactly one sees the initial value
    long expected = 0;
    long won = atomic_compare_exchange_strong(AL(&acc[11]), &expected, 5L << 40); // exactly one wins
    atomic_fetch_add(AL(&acc[12]), won + (!won && expected == 5L << 40) * 1000);
    long cur = atomic_load_explicit(AL(&acc[13]), memory_order_acquire, memory_scope_device);
    while (!atomic_compare_exchange_weak_explicit(AL(&acc[13]), &cur, cur + x, memory_order_acq_rel,
                                                  memory_order_relaxed, memory_scope_device))
        ; // each work-item succeeds exactly once
    atomic_fetch_add_explicit(AL(&acc[14]), 1, memory_order_relaxed, memory_scope_device);
    atomic_fetch_min(AUL(&uacc[0]), as_ulong(x));
    atomic_fetch_max_explicit(AUL(&uacc[1]), as_ulong(x), memory_order_release, memory_scope_device);
    atomic_fetch_add_explicit(AUL(&uacc[2]), 0x100000001UL, memory_order_acq_rel, memory_scope_device);
    atomic_fetch_sub(AUL(&uacc[3]), 3UL); // wraps below zero
    ulong ucur = atomic_load(AUL(&uacc[4]));
    while (!atomic_compare_exchange_weak(AUL(&uacc[4]), &ucur, ucur * 0x100000001b3UL + 7UL))
        ; // the same map applied n times, in any order

    // Local: per group.
    atomic_fetch_add_explicit(&lsum, x, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_max_explicit(&lmax, as_ulong(x) >> 3, memory_order_acq_rel, memory_scope_work_group);

    // This work-item's own slots: every returned value is deterministic.
    global long *s = slot + 4 * i;
    global long *o = out + 8 * i;
    o[0] = atomic_fetch_add_explicit(AL(&s[0]), x, memory_order_acquire, memory_scope_work_group);
    o[1] = atomic_fetch_sub_explicit(AL(&s[0]), 3L << 32, memory_order_release, memory_scope_device);
    o[2] = atomic_fetch_xor_explicit(AL(&s[0]), x, memory_order_seq_cst);
    o[3] = atomic_fetch_min_explicit(AUL(&s[1]), as_ulong(x), memory_order_acq_rel, memory_scope_device);
    o[4] = atomic_exchange_explicit(AL(&s[1]), -x, memory_order_relaxed, memory_scope_device);
    atomic_store_explicit(AL(&s[2]), x >> 1, memory_order_release, memory_scope_device);
    o[5] = atomic_load_explicit(AL(&s[2]), memory_order_seq_cst, memory_scope_work_group);
    long e = x;                                 // wrong guess (unless x is the slot's value)
    o[6] = atomic_compare_exchange_strong_explicit(AL(&s[3]), &e, 1L << 50, memory_order_acq_rel,
                                                   memory_order_acquire, memory_scope_device);
    o[7] = e;

    work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
    if (l == 0) {
        acc[16 + g] = atomic_load(&lsum);
        uacc[8 + g] = atomic_load_explicit(&lmax, memory_order_relaxed, memory_scope_work_group);
    }
}
