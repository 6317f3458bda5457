// one barrier whose flags differ between work-items (work-item 0 a local fence, the others none): it fences local memory only, so the global neighbour read races
kernel void barrier_flags_vary(local int *t, global int *p) {
    int l = get_local_id(0);
    volatile int flags = l == 0 ? CLK_LOCAL_MEM_FENCE : 0;
    t[l] = l; p[get_global_id(0)] = l;
    barrier(flags);
    int next = t[(l + 1) % 8] + p[(l + 1) % 8 + get_group_id(0) * 8];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    p[get_global_id(0)] = next;
}
