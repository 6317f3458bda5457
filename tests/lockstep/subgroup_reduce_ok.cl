// The same with a sub_group_barrier on local memory after the reduction: ordered in every mode
// (with sub-groups of two work-items or more).
kernel void subgroup_reduce_ok(local int *x, global int *out) {
    int l = get_local_id(0);
    if (l == 0) x[0] = 42;
    int s = sub_group_reduce_add(l);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 1) out[0] = x[0] + s;
}
