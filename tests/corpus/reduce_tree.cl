// tree reduction in local memory with a barrier per level: int sum and min per work-group, float sum of exact values.
kernel void reduce_tree(global const int *in, global int *sums, global float *fsums, local int *s, local int *mn, local float *fs)
{
    size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
    int x = in[get_global_id(0)];
    s[l] = x;
    mn[l] = x;
    fs[l] = (float)x * 0.5f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t h = n / 2; h > 0; h /= 2) {
        if (l < h) {
            s[l] += s[l + h];
            mn[l] = min(mn[l], mn[l + h]);
            fs[l] += fs[l + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        sums[g * 2] = s[0];
        sums[g * 2 + 1] = mn[0];
        fsums[g] = fs[0];
    }
}
