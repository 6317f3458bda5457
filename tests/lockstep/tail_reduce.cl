// A tree reduction whose last 64 partial sums are added without barriers, relying on the first
// 32 work-items running in lockstep (the classic warp-synchronous tail).
kernel void tail_reduce(global const int *in, global int *out, local volatile int *s) {
    int lid = get_local_id(0);
    s[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = get_local_size(0) / 2; h > 32; h /= 2) {
        if (lid < h)
            s[lid] += s[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < 32) {
        s[lid] += s[lid + 32];
        s[lid] += s[lid + 16];
        s[lid] += s[lid + 8];
        s[lid] += s[lid + 4];
        s[lid] += s[lid + 2];
        s[lid] += s[lid + 1];
    }
    if (lid == 0)
        out[get_group_id(0)] = s[0];
}
