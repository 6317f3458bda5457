// 4-bin histogram accumulated in global memory with atomic_add (each hit adds 0x01010101)
kernel void hist_global_ok(global const int *in, global int *bins)
{
    int b = in[get_global_id(0)] & 3;
    atomic_add(&bins[b], 0x01010101);
}
