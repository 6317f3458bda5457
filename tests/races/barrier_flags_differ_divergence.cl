// work-items with different constant flags call two different barriers: a divergence, whatever the flags
kernel void barrier_flags_differ_divergence(local int *t, global int *out) {
    int l = get_local_id(0);
    t[l] = l;
    if (l == 0)
        barrier(CLK_LOCAL_MEM_FENCE);
    else
        barrier(CLK_GLOBAL_MEM_FENCE);
    out[l] = t[(l + 1) % 8];
}
