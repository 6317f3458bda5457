// __local buffers passed as kernel arguments (two of them, int and float): inclusive prefix sum (Hillis-Steele) with barriers.
kernel void local_arg(global const int *in, global int *out, local int *a, local int *b, local float *f, global float *fout)
{
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    a[l] = in[i];
    f[l] = (float)in[i] * 0.25f;
    barrier(CLK_LOCAL_MEM_FENCE);
    local int *src = a, *dst = b;
    for (size_t d = 1; d < n; d *= 2) {
        dst[l] = l >= d ? src[l] + src[l - d] : src[l];
        barrier(CLK_LOCAL_MEM_FENCE);
        local int *t = src;
        src = dst;
        dst = t;
    }
    out[i] = src[l];
    fout[i] = f[n - 1 - l] + f[l];
}
