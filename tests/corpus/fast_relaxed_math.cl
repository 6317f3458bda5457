// Built with -cl-fast-relaxed-math: the macro is defined, and the math stays within the relaxed
// bounds (finite arguments only, as -cl-finite-math-only allows nothing else).
kernel void fast_relaxed_math(global const float *xs, global int *flags, global float *out)
{
    size_t i = get_global_id(0);
    float x = xs[i];
#ifdef __FAST_RELAXED_MATH__
    flags[i] = 1;
#else
    flags[i] = 2;
#endif
    global float *o = out + i * 8;
    o[0] = sin(x);
    o[1] = cos(x);
    o[2] = exp(x * 0.25f);
    o[3] = log(fabs(x) + 1.0f);
    o[4] = pow(fabs(x) + 0.5f, 1.5f);
    o[5] = x / 3.0f;
    o[6] = sqrt(fabs(x));
    o[7] = x * 1.5f + 0.25f;
}
