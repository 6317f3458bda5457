// 4-bin histogram accumulated directly in global memory with plain read-modify-write (each hit adds 0x01010101)
kernel void hist_global(global const int *in, global int *bins)
{
    int b = in[get_global_id(0)] & 3;
    int c = bins[b];
    bins[b] = c + 0x01010101;
}
