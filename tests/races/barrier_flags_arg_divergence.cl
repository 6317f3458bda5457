// a barrier with flags from a kernel argument inside a branch taken only by work-items 0 and 1: still one barrier the others never reach
kernel void barrier_flags_arg_divergence(global int *out, int flags) {
    local int tmp[8];
    size_t l = get_local_id(0);
    if (l < 2) {
        tmp[l] = (int)l + 10;
        barrier(flags);
        out[l] = tmp[1 - l];
    }
}
