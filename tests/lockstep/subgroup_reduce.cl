// Work-item 0 writes, the sub-group reduces, work-item 1 reads: no sub_group_barrier, so nothing
// orders the two accesses (a collective function orders no memory). Lockstep hides the race.
kernel void subgroup_reduce(local int *x, global int *out) {
    int l = get_local_id(0);
    if (l == 0) x[0] = 42;
    int s = sub_group_reduce_add(l);
    if (l == 1) out[0] = x[0] + s;
}
