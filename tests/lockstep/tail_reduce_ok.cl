// The same reduction with a sub_group_barrier between the steps of the tail: ordered in every mode
// (with sub-groups of 32 or more).
kernel void tail_reduce_ok(global const int *in, global int *out, local int *s) {
    int lid = get_local_id(0);
    s[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = get_local_size(0) / 2; h > 32; h /= 2) {
        if (lid < h)
            s[lid] += s[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < 32) {
        for (int h = 32; h > 0; h /= 2) {
            int v = s[lid] + s[lid + h];
            sub_group_barrier(CLK_LOCAL_MEM_FENCE);
            s[lid] = v;
            sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    if (lid == 0)
        out[get_group_id(0)] = s[0];
}
