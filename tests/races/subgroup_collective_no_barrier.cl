// a sub-group reduction and broadcast between a write and a read, no sub_group_barrier: collectives order no memory
kernel void subgroup_collective_no_barrier(local int *x, global int *g, global int *out) {
    int l = get_local_id(0);
    if (l == 0) { x[0] = 42; g[0] = 7; }
    int s = sub_group_reduce_add(l);
    int b = sub_group_broadcast(l, 0);
    if (l == 1) out[0] = x[0] + g[0] + s + b;
}
