// the window clamped to the start of the image
kernel void oob_before_buffer_ok(global const float *in, global float *out)
{
    int i = get_global_id(0);
    out[i] = in[max(i - 511, 0)];
}
