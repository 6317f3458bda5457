// A barrier in a loop of 10 * local id iterations: work-items of one group reach different
// numbers of barriers (each release of the barrier is a divergence).
kernel void divergent_barrier_many(global int *out, local int *s)
{
    size_t l = get_local_id(0);
    for (size_t k = 0; k < 10 * l; k++) {
        s[l] = (int)k;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = s[l];
}
