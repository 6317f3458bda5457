// tree reduction that starts combining before every work-item has stored its input to local memory
kernel void reduce_no_first_barrier(global const int *in, global int *out, local int *s)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    s[l] = in[get_global_id(0)];
    for (size_t h = n / 2; h > 0; h /= 2) {
        if (l < h) {
            int a = s[l];
            int b = s[l + h];
            s[l] = a + b;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0)
        out[get_group_id(0)] = s[0];
}
