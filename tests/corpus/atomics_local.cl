// OpenCL 1.x atomics on __local int/uint (add sub inc dec min max xchg cmpxchg and or xor), published by one work-item after a barrier.
kernel void atomics_local(global const int *in, global int *out)
{
    local int acc[12];
    local uint uacc[2];
    size_t l = get_local_id(0), g = get_group_id(0);
    int x = in[get_global_id(0)];
    if (l < 12)
        acc[l] = l == 2 ? INT_MAX : l == 3 ? INT_MIN : l == 4 ? -1 : 0;
    if (l < 2)
        uacc[l] = l == 0 ? 0xffffffffu : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&acc[0], x);
    atomic_sub(&acc[1], x * 2);
    atomic_min(&acc[2], x);
    atomic_max(&acc[3], x);
    atomic_and(&acc[4], x | 0x0f0);
    atomic_or(&acc[5], x & 0x70f);
    atomic_xor(&acc[6], x);
    atomic_add(&acc[8], atomic_inc(&acc[7]));          // sum of 0..n-1
    atomic_dec(&acc[9]);
    atomic_add(&acc[10], atomic_xchg(&acc[11], 5) == 0); // exactly one sees the initial 0
    atomic_min(&uacc[0], (uint)x);
    atomic_max(&uacc[1], (uint)x);
    uint cur = 0, prev;
    while ((prev = atomic_cmpxchg(&uacc[1], cur, cur)) != cur) // cmpxchg that never changes the value: reads it
        cur = prev;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        for (int k = 0; k < 12; k++)
            out[g * 14 + k] = acc[k];
        out[g * 14 + 12] = (int)uacc[0];
        out[g * 14 + 13] = (int)uacc[1];
    }
}
