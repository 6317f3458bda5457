// Accumulates into an output the host created CL_MEM_WRITE_ONLY (`wo`): the read of `out`
// in `+=` is an access-mode finding; the store after it is allowed.
kernel void accumulate(global const float *in, global float *out)
{
    size_t i = get_global_id(0);
    out[i] += in[i];
}
