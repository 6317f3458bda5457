// atomics against atomics never race: atomic_inc on a local counter and atomic_add/max/xchg on global counters shared by all groups
kernel void atomics_ok(global int *counters, global int *out)
{
    local int lcount;
    size_t l = get_local_id(0);
    if (l == 0)
        lcount = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_inc(&lcount);
    atomic_add(&counters[0], 2);
    atomic_max(&counters[1], (int)get_global_id(0));
    atomic_xchg(&counters[2], (int)l);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0)
        out[get_group_id(0)] = lcount;
}
