// a box filter whose window starts left of the image: work-item 0 reads 2044 bytes before 'in'
kernel void oob_before_buffer(global const float *in, global float *out)
{
    int i = get_global_id(0);
    out[i] = in[i - 511];
}
