// The correct twin: every work-item goes round the loop with the barrier the same number of times.
kernel void barrier_after_return_ok(global int *out, local int *s)
{
    size_t l = get_local_id(0);
    for (int k = 0; k < 4; k++) {
        if (l == 0)
            s[0] = k;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = 1;
}
