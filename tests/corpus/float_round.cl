// correctly rounded float builtins (0 ulp): floor ceil trunc round rint fract modf frexp ldexp logb ilogb fmod remainder fmin fmax fdim nextafter maxmag minmag.
kernel void float_round(global const uint *abits, global const uint *bbits, global float *out, global int *iout)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    float a = as_float(abits[i]), b = as_float(bbits[j]);
    size_t k = j * get_global_size(0) + i;
    global float *o = out + k * 20;
    bool zeros = a == 0.0f && b == 0.0f; // fmin/fmax of +0 and -0 may return either
    o[0] = fmod(a, b);
    o[1] = remainder(a, b);
    o[2] = zeros ? 0.0f : fmin(a, b);
    o[3] = zeros ? 0.0f : fmax(a, b);
    o[4] = fdim(a, b);
    o[5] = nextafter(a, b);
    o[6] = fabs(a) == fabs(b) ? 0.0f : maxmag(a, b);
    o[7] = fabs(a) == fabs(b) ? 0.0f : minmag(a, b);
    o[8] = ldexp(a, (int)j * 40 - 150);
    o[9] = floor(a);
    o[10] = ceil(a);
    o[11] = trunc(a);
    o[12] = round(a);
    o[13] = rint(a);
    float ip = 0.0f, mi;
    // pocl returns +0 for fract(-0) and fract(-inf), where -0 is arguably expected: leave those out
    o[14] = isfinite(a) && a != 0.0f ? fract(a, &ip) : 0.0f;
    o[15] = ip;
    o[16] = modf(a, &mi);
    o[17] = mi;
    int e = 0;
    o[18] = frexp(a, &e);
    o[19] = logb(a);
    bool finite_nonzero = isfinite(a) && a != 0.0f; // frexp/ilogb exponents of 0, inf, NaN are implementation-defined
    iout[k * 2] = finite_nonzero ? e : 0;
    iout[k * 2 + 1] = finite_nonzero ? ilogb(a) : 0;
}
