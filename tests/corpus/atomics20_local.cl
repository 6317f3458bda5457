// OpenCL 2.0 atomics on __local atomic_int/atomic_uint: atomic_init, fetch add/sub/or/xor/and/min/max with every order and scope, load/store/exchange, compare_exchange strong/weak; published after work_group_barrier.
#define N 64 // work-group size

// Applies OP to this work-item's own slot OBJ with every memory order, then the plain form,
// folding the returned (deterministic) old values into R.
#define EVERY_ORDER(R, OP, OBJ, V, SCOPE)                                   \
    do {                                                                    \
        R = (uint)OP##_explicit(OBJ, V, memory_order_relaxed, SCOPE);       \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_acquire, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_release, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_acq_rel, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_seq_cst, SCOPE); \
        R = R * 3u + (uint)OP##_explicit(OBJ, V, memory_order_seq_cst);    \
        R = R * 3u + (uint)OP(OBJ, V);                                      \
    } while (0)

kernel void atomics20_local(global const int *in, global int *shared_out, global uint *item_out)
{
    local atomic_int acc[16];
    local atomic_uint uacc[8];
    local atomic_int islot[N * 4];
    local atomic_uint uslot[N * 2];
    size_t l = get_local_id(0), g = get_group_id(0), i = get_global_id(0);
    int x = in[i];
    uint r;

    if (l < 16)
        atomic_init(&acc[l], l == 4 ? -1 : l == 5 ? INT_MAX : l == 6 ? INT_MIN : l == 9 ? -5 : 0);
    if (l < 8)
        atomic_init(&uacc[l], l == 0 || l == 6 ? 0xffffffffu : l == 3 ? 10u : l == 7 ? 1u : 0u);
    for (int k = 0; k < 4; k++)
        atomic_init(&islot[l * 4 + k], x * (k + 1) - k);
    for (int k = 0; k < 2; k++)
        atomic_init(&uslot[l * 2 + k], (uint)x * 0x01000193u + k);
    work_group_barrier(CLK_LOCAL_MEM_FENCE);

    // Shared by the group.
    atomic_fetch_add(&acc[0], x);
    atomic_fetch_sub_explicit(&acc[1], x * 2, memory_order_relaxed, memory_scope_work_group);
    atomic_fetch_or_explicit(&acc[2], (int)(1u << (l & 31)), memory_order_release, memory_scope_device);
    atomic_fetch_xor_explicit(&acc[3], x, memory_order_acq_rel);
    atomic_fetch_and_explicit(&acc[4], x | 0x0f0, memory_order_acquire, memory_scope_work_group);
    atomic_fetch_min_explicit(&acc[5], x, memory_order_seq_cst, memory_scope_work_group);
    atomic_fetch_max(&acc[6], x);
    int ticket = atomic_fetch_add_explicit(&acc[7], 1, memory_order_acq_rel, memory_scope_work_group);
    atomic_fetch_add_explicit(&acc[8], ticket, memory_order_relaxed);   // sum of 0..N-1
    int old = atomic_exchange_explicit(&acc[9], 42, memory_order_seq_cst, memory_scope_work_group);
    atomic_fetch_add(&acc[10], old == -5);                              // exactly one sees the initial value
    int expected = 0;
    int won = atomic_compare_exchange_strong_explicit(&acc[11], &expected, 77, memory_order_acq_rel,
                                                      memory_order_acquire, memory_scope_work_group);
    atomic_fetch_add(&acc[12], won);                                    // exactly one wins
    atomic_fetch_add(&acc[13], !won && expected == 77);
    int cur = atomic_load_explicit(&acc[14], memory_order_acquire, memory_scope_work_group);
    while (!atomic_compare_exchange_weak(&acc[14], &cur, cur + x * x))
        ; // sum of squares: each work-item succeeds exactly once
    atomic_fetch_add_explicit(&acc[15], 1, memory_order_release);
    atomic_fetch_min(&uacc[0], (uint)x);
    atomic_fetch_max_explicit(&uacc[1], (uint)x, memory_order_acquire, memory_scope_work_group);
    atomic_fetch_add_explicit(&uacc[2], 0x10000001u, memory_order_relaxed, memory_scope_device);
    atomic_fetch_sub(&uacc[3], 1u);
    atomic_fetch_or(&uacc[4], (uint)x & 0xf0f0u);
    atomic_fetch_xor_explicit(&uacc[5], (uint)x * 2654435761u, memory_order_seq_cst, memory_scope_work_group);
    atomic_fetch_and(&uacc[6], (uint)x | 0xff00ff00u);
    uint ucur = atomic_load(&uacc[7]);
    while (!atomic_compare_exchange_weak_explicit(&uacc[7], &ucur, ucur * 5u + 3u, memory_order_relaxed,
                                                  memory_order_relaxed, memory_scope_work_group))
        ; // x -> 5x+3 applied N times, in any order

    // This work-item's own slots: every returned value is deterministic.
    local atomic_int *s = &islot[l * 4];
    local atomic_uint *u = &uslot[l * 2];
    global uint *o = item_out + 8 * i;
    EVERY_ORDER(r, atomic_fetch_add, &s[0], x, memory_scope_work_group);
    EVERY_ORDER(r, atomic_fetch_sub, &s[0], r, memory_scope_device);
    o[0] = r;
    EVERY_ORDER(r, atomic_fetch_or, &s[1], (int)((uint)x << (l & 7)), memory_scope_work_group);
    EVERY_ORDER(r, atomic_fetch_and, &s[1], ~(int)r, memory_scope_work_group);
    EVERY_ORDER(r, atomic_fetch_xor, &s[1], x ^ (int)r, memory_scope_device);
    o[1] = r;
    EVERY_ORDER(r, atomic_fetch_min, &s[2], x - 3, memory_scope_work_group);
    EVERY_ORDER(r, atomic_fetch_max, &s[2], x + 3, memory_scope_work_group);
    o[2] = r;
    EVERY_ORDER(r, atomic_exchange, &s[3], x * 11, memory_scope_work_group);
    o[3] = r;
    EVERY_ORDER(r, atomic_fetch_min, &u[0], (uint)x, memory_scope_work_group);
    EVERY_ORDER(r, atomic_fetch_max, &u[1], (uint)x, memory_scope_device);
    o[4] = r;
    atomic_store_explicit(&s[3], x, memory_order_relaxed, memory_scope_work_group);
    r = atomic_load_explicit(&s[3], memory_order_seq_cst, memory_scope_work_group);
    atomic_store_explicit(&s[3], x + 1, memory_order_release, memory_scope_device);
    r = r * 3u + atomic_load_explicit(&s[3], memory_order_acquire, memory_scope_device);
    atomic_store_explicit(&s[3], x + 2, memory_order_seq_cst);
    r = r * 3u + atomic_load_explicit(&s[3], memory_order_relaxed);
    atomic_store(&s[3], x + 3);
    r = r * 3u + atomic_load(&s[3]);
    o[5] = r;
    int e = x + 1000;                                    // wrong guess: fails, e gets the value
    r = atomic_compare_exchange_strong(&s[3], &e, 5);
    r = r * 3u + (uint)e;
    r = r * 3u + atomic_compare_exchange_strong_explicit(&s[3], &e, e * 2, memory_order_release,
                                                         memory_order_relaxed, memory_scope_work_group);
    r = r * 3u + atomic_compare_exchange_weak_explicit(&s[3], &e, 9, memory_order_acquire, memory_order_acquire);
    r = r * 3u + (uint)e;                                // stale e: that weak exchange failed
    o[6] = r;

    work_group_barrier(CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
    if (l < 16)
        shared_out[g * 24 + l] = atomic_load_explicit(&acc[l], memory_order_relaxed, memory_scope_work_group);
    else if (l < 24)
        shared_out[g * 24 + l] = (int)atomic_load_explicit(&uacc[l - 16], memory_order_acquire);
}
