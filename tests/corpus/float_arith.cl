// float + - * / sqrt fma and comparisons/classification: exactly rounded (built with -cl-fp32-correctly-rounded-divide-sqrt), denormals, inf, NaN.
#pragma OPENCL FP_CONTRACT OFF
kernel void float_arith(global const uint *abits, global const uint *bbits, global float *out, global int *flags)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    float a = as_float(abits[i]), b = as_float(bbits[j]);
    size_t k = j * get_global_size(0) + i;
    global float *o = out + k * 10;
    float p = a * b;
    o[0] = a + b;
    o[1] = a - b;
    o[2] = p;
    o[3] = a / b;
    o[4] = fma(a, b, -p); // the rounding error of the product
    o[5] = fma(a, b, a);
    o[6] = sqrt(a);
    o[7] = (a + b) - a;
    o[8] = copysign(a, b);
    o[9] = -a;
    flags[k] = isequal(a, b) | isnotequal(a, b) << 1 | isless(a, b) << 2 | islessequal(a, b) << 3
             | isgreater(a, b) << 4 | isgreaterequal(a, b) << 5 | islessgreater(a, b) << 6
             | isordered(a, b) << 7 | isunordered(a, b) << 8 | isnan(a) << 9 | isinf(a) << 10
             | isfinite(a) << 11 | isnormal(a) << 12 | signbit(a) << 13 | (a < b) << 14 | (a != b) << 15
             | (a == b) << 16 | (!(a >= b)) << 17;
}
