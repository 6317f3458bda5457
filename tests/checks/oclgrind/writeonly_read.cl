kernel void accumulate(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    out[i] += in[i]; /* out is CL_MEM_WRITE_ONLY */
}
