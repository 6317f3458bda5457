// iterated stencil in local memory with one barrier per step: each step reads one buffer and writes the other
kernel void double_buffer_ok(global const int *in, global int *out)
{
    local int buf[2][8];
    size_t l = get_local_id(0), n = get_local_size(0);
    buf[0][l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < 3; t++) {
        int src = t & 1;
        int left = buf[src][(l + n - 1) % n];
        int right = buf[src][(l + 1) % n];
        buf[1 - src][l] = left + right;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = buf[1][l];
}
