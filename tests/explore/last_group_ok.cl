// The correct "last group" reduction: each group counts itself in once its work is done (after
// the barrier), and the group whose atomic_inc returned n - 1, the last one, copies the total
// out and resets the counter and the total.
kernel void last_group_ok(global const int *in, global int *total, global int *count, global int *out) {
    int l = get_local_id(0), n = get_num_groups(0);
    atomic_add(total, in[get_global_id(0)]);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (l == 0 && atomic_inc(count) == n - 1) {
        out[0] = atomic_xchg(total, 0);
        atomic_xchg(count, 0);
    }
}
