// the same with a sub_group_barrier on both memories between the write and the read
kernel void subgroup_collective_no_barrier_ok(local int *x, global int *g, global int *out) {
    int l = get_local_id(0);
    if (l == 0) { x[0] = 42; g[0] = 7; }
    int s = sub_group_reduce_add(l);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (l == 1) out[0] = x[0] + g[0] + s;
}
