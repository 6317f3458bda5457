// The generic address space: a helper on generic int * called with global, local and private pointers, to_global/to_local/to_private, get_fence, atomics through generic atomic_int *.
int bump(int *p, int by) // generic pointer
{
    *p += by;
    return *p;
}

int count(atomic_int *a) // generic pointer to an atomic
{
    return atomic_fetch_add_explicit(a, 1, memory_order_relaxed, memory_scope_work_group) >= 0;
}

kernel void generic_ptr(global int *buf, global int *out)
{
    local int lbuf[64];
    local atomic_int lcount;
    size_t i = get_global_id(0), l = get_local_id(0);
    int priv = (int)i;
    int *p[3] = { &buf[i], &lbuf[l], &priv };
    if (l == 0)
        atomic_init(&lcount, 0);
    lbuf[l] = 100 + (int)l;
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    global int *o = out + 16 * i;
    o[0] = bump(p[0], 1) + bump(p[1], 2) + bump(p[2], 3);
    for (int k = 0; k < 3; k++) {
        o[1 + 3 * k] = to_global(p[k]) != NULL;
        o[2 + 3 * k] = to_local(p[k]) != NULL;
        o[3 + 3 * k] = to_private(p[k]) != NULL;
        o[10 + k] = get_fence(p[k]);
    }
    o[13] = count((atomic_int *)&buf[128 + i]) + count(&lcount);
    work_group_barrier(CLK_LOCAL_MEM_FENCE);
    o[14] = atomic_load((atomic_int *)&lcount);
    o[15] = lbuf[l] + priv;
}
