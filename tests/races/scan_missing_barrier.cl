// in-place inclusive scan (Hillis-Steele) missing the barrier between reading the partner and updating the own slot
kernel void scan_missing_barrier(global const int *in, global int *out, local int *buf)
{
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    buf[l] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = 1; s < n; s *= 2) {
        int add = 0;
        if (l >= s)
            add = buf[l - s];
        int cur = buf[l];
        buf[l] = cur + add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[i] = buf[l];
}
