// per-group 4-bin histogram in local memory with plain read-modify-write (each hit adds 0x01010101 so every byte changes)
kernel void hist_local(global const int *in, global int *out)
{
    local int bins[4];
    size_t l = get_local_id(0);
    if (l < 4)
        bins[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int b = in[get_global_id(0)] & 3;
    int c = bins[b];
    bins[b] = c + 0x01010101;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 4)
        out[get_group_id(0) * 4 + l] = bins[l];
}
