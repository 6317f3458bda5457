kernel void half_barrier(global int *out)
{
    if (get_local_id(0) < 2)
        barrier(CLK_GLOBAL_MEM_FENCE);
    out[get_global_id(0)] = 1;
}
