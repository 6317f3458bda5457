// integer -> float/double conversions with rounding-mode suffixes (values not exactly representable) and implicit casts.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
kernel void conv_int_float(global const long *in, global float *out, global double *dout)
{
    size_t i = get_global_id(0);
    long x = in[i];
    int xi = (int)x;             // keep the low 32 bits
    uint xu = as_uint(xi);
    ulong ul = as_ulong(x);
    global float *o = out + i * 16;
    o[0] = (float)xi;            // round to nearest even
    o[1] = convert_float_rtz(xi);
    o[2] = convert_float_rtp(xi);
    o[3] = convert_float_rtn(xi);
    o[4] = convert_float(xu);
    o[5] = convert_float_rtz(xu);
    o[6] = convert_float_rtp(xu);
    o[7] = convert_float_rtn(xu);
    o[8] = (float)x;
    o[9] = convert_float_rtz(x);
    o[10] = convert_float_rtp(x);
    o[11] = convert_float_rtn(x);
    o[12] = (float)ul;
    o[13] = convert_float_rtz(ul);
    o[14] = convert_float_rtp(ul);
    o[15] = (float)(short)x + (float)(uchar)x; // small types convert exactly
    global double *d = dout + i * 4;
    d[0] = (double)x;
    d[1] = convert_double_rtz(x);
    d[2] = convert_double_rtp(ul);
    d[3] = (double)xi;
}
