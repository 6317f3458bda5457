// A "last group" reduction: every work-item adds its input into a shared total, and the group
// that finds every group counted copies the total out and resets the counter and the total for
// the next launch. The bug: lid 0 counts its group in before the group's work is done and then
// decides with a plain re-read of the counter after the barrier, not with the value its
// atomic_inc returned. Another group's increment can land in between, so a group can take
// itself for the last one while the real last one is still adding.
kernel void last_group(global const int *in, global int *total, global int *count, global int *out) {
    int l = get_local_id(0), n = get_num_groups(0);
    if (l == 0)
        atomic_inc(count);
    atomic_add(total, in[get_global_id(0)]);
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (l == 0 && *count == n) {
        out[0] = atomic_xchg(total, 0);
        *count = 0;
    }
}
