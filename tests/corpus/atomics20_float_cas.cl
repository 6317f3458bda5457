// Compare-exchange on atomic_float and atomic_double (global and local): llvm-spirv-15 aborts on
// them, so clrace's compile step rewrites them onto the integer ones of the same size.

// An atomic add made of a compare-exchange loop: exact here, every addend is a small integer.
float add_float(volatile global atomic_float *sum, float x)
{
    float seen = atomic_load_explicit(sum, memory_order_relaxed, memory_scope_device);
    while (!atomic_compare_exchange_weak(sum, &seen, seen + x))
        ;
    return seen;
}

kernel void atomics20_float_cas(global atomic_float *fslots, global atomic_double *dslots,
                                global atomic_float *fsum, global atomic_double *dsum,
                                global float *fseen, global double *dseen, global int *ok)
{
    local atomic_float lsum;
    size_t i = get_global_id(0), l = get_local_id(0);
    if (l == 0)
        atomic_init(&lsum, 0.5f);
    barrier(CLK_LOCAL_MEM_FENCE);

    // Own slot: the even work-items guess its value right, the odd ones wrong.
    float fguess = (i % 2 == 0) ? 1.5f * i : -1.0f;
    bool fdone = atomic_compare_exchange_strong(&fslots[i], &fguess, 0.25f * i);
    double dguess = (i % 2 == 0) ? 2.5 * i : -3.0;
    bool ddone = atomic_compare_exchange_strong_explicit(&dslots[i], &dguess, 0.125 * i, memory_order_acq_rel,
                                                         memory_order_acquire, memory_scope_device);
    fseen[i] = fguess;   // the slot's value when the exchange failed
    dseen[i] = dguess;
    ok[2 * i] = fdone;
    ok[2 * i + 1] = ddone;

    add_float(fsum, (float)(i % 5));
    double seen = atomic_load(dsum);
    while (!atomic_compare_exchange_weak_explicit(dsum, &seen, seen + (double)(i % 3), memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    float lseen = atomic_load(&lsum);
    while (!atomic_compare_exchange_strong(&lsum, &lseen, lseen + 1.0f))
        ;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        fseen[get_global_size(0) + get_group_id(0)] = atomic_load(&lsum);
}
