// double: exactly rounded + - * / sqrt fma, rounding builtins, double -> float/int/long conversions with rounding modes.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
kernel void double_arith(global const ulong *abits, global const ulong *bbits, global double *out,
                         global float *fout, global long *lout)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    double a = as_double(abits[i]), b = as_double(bbits[j]);
    size_t k = j * get_global_size(0) + i;
    global double *o = out + k * 10;
    o[0] = a + b;
    o[1] = a - b;
    o[2] = a * b;
    o[3] = a / b;
    o[4] = fma(a, b, -(a * b));
    o[5] = sqrt(a);
    o[6] = floor(a) + ceil(b);
    o[7] = rint(a);
    o[8] = fmod(a, b);
    o[9] = (double)(float)a;
    global float *f = fout + k * 4;
    f[0] = (float)a;
    f[1] = convert_float_rtz(a);
    f[2] = convert_float_rtp(a);
    f[3] = convert_float_rtn(a);
    global long *l = lout + k * 4;
    l[0] = convert_long_sat(a);
    l[1] = convert_int_sat_rte(a);
    l[2] = as_long(convert_ulong_sat_rtp(a));
    l[3] = isless(a, b) | islessequal(a, b) << 1 | isequal(a, b) << 2 | isnan(a) << 3 | signbit(a) << 4 | isnormal(a) << 5;
}
