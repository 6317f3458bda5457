// The twin of access_writeonly: the output is only written.
kernel void accumulate(global const float *in, global float *out)
{
    size_t i = get_global_id(0);
    out[i] = in[i] + 1.0f;
}
