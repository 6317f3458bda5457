// OpenCL 2.0 atomics on global int/uint: fetch add/sub/or/xor/and/min/max (plain, order-only and order+scope forms, every order), load/store/exchange, compare_exchange strong/weak, atomic_init; only order-independent results are stored.
#define AI(p) ((volatile global atomic_int *)(p))
#define AU(p) ((volatile global atomic_uint *)(p))

// Applies OP to this work-item's own slot OBJ with every memory order, then the plain form,
// folding the returned (deterministic) old values into R.
#define EVERY_ORDER(R, OP, OBJ, V, SCOPE)                                   \
    do {                                                                    \
        R = (uint)OP##_explicit(OBJ, V, memory_order_relaxed, SCOPE);       \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_acquire, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_release, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_acq_rel, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_seq_cst, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_acq_rel);    \
        R = R * 3u + (uint)OP(OBJ, V);                                      \
    } while (0)

kernel void atomics20_global(global const int *in, global int *acc, global uint *uacc, global int *slot, global uint *out)
{
    size_t i = get_global_id(0), g = get_group_id(0);
    int x = in[i];
    uint r;

    // Shared by every work-item of every group: device scope.
    atomic_fetch_add(AI(&acc[0]), x);
    atomic_fetch_sub_explicit(AI(&acc[1]), x, memory_order_relaxed, memory_scope_device);
    atomic_fetch_or_explicit(AI(&acc[2]), (int)(1u << (i & 31)), memory_order_release, memory_scope_device);
    atomic_fetch_xor_explicit(AI(&acc[3]), x, memory_order_acq_rel);
    atomic_fetch_and_explicit(AI(&acc[4]), ~((int)(1u << (i & 31))) | x, memory_order_acquire, memory_scope_device);
    atomic_fetch_min_explicit(AI(&acc[5]), x, memory_order_seq_cst, memory_scope_device);
    atomic_fetch_max(AI(&acc[6]), x);
    int ticket = atomic_fetch_add_explicit(AI(&acc[7]), 1, memory_order_acq_rel, memory_scope_device);
    atomic_fetch_add_explicit(AI(&acc[8]), ticket, memory_order_relaxed); // sum of 0..n-1
    int old = atomic_exchange_explicit(AI(&acc[9]), 42, memory_order_acq_rel, memory_scope_device);
    atomic_fetch_add(AI(&acc[10]), old == -5);                           // exactly one sees the initial value
    int expected = 0;
    int won = atomic_compare_exchange_strong(AI(&acc[11]), &expected, 77); // exactly one wins
    atomic_fetch_add(AI(&acc[12]), won);
    atomic_fetch_add(AI(&acc[13]), !won && expected == 77);            // the others see the winner's value
    int cur = atomic_load_explicit(AI(&acc[14]), memory_order_relaxed, memory_scope_device);
    while (!atomic_compare_exchange_weak_explicit(AI(&acc[14]), &cur, cur + x * x, memory_order_acq_rel,
                                                  memory_order_acquire, memory_scope_device))
        ; // sum of squares: each work-item succeeds exactly once
    atomic_fetch_add_explicit(AI(&acc[15]), 1, memory_order_seq_cst, memory_scope_device);

    // One counter per group: work-group scope is enough.
    atomic_fetch_add_explicit(AI(&acc[16 + g]), x, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_max_explicit(AI(&acc[20 + g]), x, memory_order_acq_rel, memory_scope_work_group);
    atomic_fetch_min_explicit(AI(&acc[24 + g]), x, memory_order_release, memory_scope_work_group);
    atomic_fetch_or_explicit(AI(&acc[28 + g]), (int)(1u << (i & 31)), memory_order_seq_cst, memory_scope_work_group);

    // Unsigned: compare as uint, wrap around.
    atomic_fetch_min(AU(&uacc[0]), (uint)x);
    atomic_fetch_max_explicit(AU(&uacc[1]), (uint)x, memory_order_release, memory_scope_device);
    atomic_fetch_add_explicit(AU(&uacc[2]), 0x10000001u, memory_order_acq_rel, memory_scope_device);
    atomic_fetch_sub(AU(&uacc[3]), 1u);
    atomic_fetch_or(AU(&uacc[4]), (uint)x & 0xf0f0u);
    atomic_fetch_xor_explicit(AU(&uacc[5]), (uint)x * 2654435761u, memory_order_relaxed);
    atomic_fetch_and_explicit(AU(&uacc[6]), (uint)x | 0xff00ff00u, memory_order_seq_cst, memory_scope_device);
    uint ucur = atomic_load(AU(&uacc[7]));
    while (!atomic_compare_exchange_weak(AU(&uacc[7]), &ucur, ucur * 3u + 1u))
        ; // x -> 3x+1 applied n times, in any order
    atomic_fetch_add_explicit(AU(&uacc[8]), (uint)atomic_exchange(AU(&uacc[9]), 7u) == 9u, memory_order_relaxed,
                              memory_scope_device);

    // This work-item's own slots: every returned value is deterministic.
    global int *s = slot + 16 * i;
    global uint *o = out + 16 * i;
    EVERY_ORDER(r, atomic_fetch_add, AI(&s[0]), x, memory_scope_device);
    o[0] = r;
    EVERY_ORDER(r, atomic_fetch_sub, AI(&s[1]), x * 7, memory_scope_work_group);
    o[1] = r;
    EVERY_ORDER(r, atomic_fetch_or, AI(&s[2]), (int)((uint)x << (i & 7)), memory_scope_device);
    o[2] = r;
    EVERY_ORDER(r, atomic_fetch_xor, AI(&s[3]), x ^ 0x5a5a, memory_scope_work_group);
    o[3] = r;
    EVERY_ORDER(r, atomic_fetch_and, AI(&s[4]), ~(int)((uint)x << (i & 3)), memory_scope_device);
    o[4] = r;
    EVERY_ORDER(r, atomic_fetch_min, AI(&s[5]), x - 3, memory_scope_work_group);
    o[5] = r;
    EVERY_ORDER(r, atomic_fetch_max, AI(&s[6]), x + 3, memory_scope_device);
    o[6] = r;
    EVERY_ORDER(r, atomic_exchange, AI(&s[7]), x * 11, memory_scope_work_group);
    o[7] = r;
    EVERY_ORDER(r, atomic_fetch_min, AU(&s[8]), (uint)x, memory_scope_device);
    o[8] = r;
    EVERY_ORDER(r, atomic_fetch_max, AU(&s[9]), (uint)x, memory_scope_work_group);
    o[9] = r;
    EVERY_ORDER(r, atomic_fetch_add, AU(&s[10]), 0x80000001u, memory_scope_device);
    o[10] = r;

    // load and store with every legal order.
    atomic_store_explicit(AI(&s[11]), x, memory_order_relaxed, memory_scope_device);
    r = atomic_load_explicit(AI(&s[11]), memory_order_acquire, memory_scope_device);
    atomic_store_explicit(AI(&s[11]), x + 1, memory_order_release, memory_scope_work_group);
    r = r * 3u + atomic_load_explicit(AI(&s[11]), memory_order_seq_cst, memory_scope_work_group);
    atomic_store_explicit(AI(&s[11]), x + 2, memory_order_seq_cst);
    r = r * 3u + atomic_load_explicit(AI(&s[11]), memory_order_relaxed);
    atomic_store(AI(&s[11]), x + 3);
    r = r * 3u + atomic_load(AI(&s[11]));
    o[11] = r;

    // compare_exchange: strong and weak, every legal success/failure pair, failures too.
    int e = s[12] + 1;                                           // wrong guess: fails, e gets the value
    r = atomic_compare_exchange_strong_explicit(AI(&s[12]), &e, 5, memory_order_relaxed, memory_order_relaxed,
                                                memory_scope_device);
    r = r * 3u + (uint)e;
    r = r * 3u + atomic_compare_exchange_strong_explicit(AI(&s[12]), &e, e * 2, memory_order_acquire,
                                                         memory_order_acquire, memory_scope_work_group);
    r = r * 3u + atomic_compare_exchange_strong_explicit(AI(&s[12]), &e, 9, memory_order_release,
                                                         memory_order_relaxed); // fails: e is stale
    r = r * 3u + (uint)e;
    r = r * 3u + atomic_compare_exchange_strong(AI(&s[12]), &e, e - 100);
    o[12] = r;
    e = s[13];
    while (!atomic_compare_exchange_weak_explicit(AI(&s[13]), &e, e + 1, memory_order_acq_rel,
                                                  memory_order_relaxed, memory_scope_work_group))
        ;
    while (!atomic_compare_exchange_weak_explicit(AI(&s[13]), &e, e * 3, memory_order_seq_cst,
                                                  memory_order_seq_cst))
        ;
    while (!atomic_compare_exchange_weak_explicit(AI(&s[13]), &e, e - 2, memory_order_release,
                                                  memory_order_acquire, memory_scope_device))
        ;
    o[13] = (uint)e;

    // atomic_init on a local counter, then every work-item of the group counts itself.
    local atomic_int count;
    if (get_local_id(0) == 0)
        atomic_init(&count, (int)g * 1000);
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed, memory_scope_work_group);
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    o[14] = (uint)atomic_load_explicit(&count, memory_order_relaxed, memory_scope_work_group);
}
