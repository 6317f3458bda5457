// one barrier whose flags differ between work-items (work-item 0 a local fence, the others none): every work-item reaches the same barrier, which fences local memory for the group
kernel void barrier_flags_vary_ok(local int *p, global int *out) {
    volatile int x = get_local_id(0) == 0 ? CLK_LOCAL_MEM_FENCE : 0;
    int y = 0;
    if (get_local_id(0) == 0) y = p[0];
    barrier(x);
    if (get_local_id(0) == 1) p[0] = 0;
    out[get_local_id(0)] = y;
}
