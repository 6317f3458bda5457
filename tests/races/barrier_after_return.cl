// Work-item 0 stays in a loop with a barrier that the others, which have returned, never reach:
// a divergence, reported at once (the loop can only repeat itself).
kernel void barrier_after_return(global int *out, local int *s)
{
    size_t l = get_local_id(0);
    while (l == 0) {
        s[0] = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = 1;
}
