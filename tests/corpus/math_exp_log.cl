// exp exp10 log log10 (3 ulp) and pow powr pown (16 ulp) on a range plus special values (0, -0, inf, NaN, denormal, overflow edges).
kernel void math_exp_log(global const float *xs, global const uint *special, global float *e, global float *p)
{
    size_t i = get_global_id(0);
    size_t n = 64;
    float x = i < n ? xs[i] : as_float(special[i - n]);
    global float *o = e + i * 6;
    o[0] = exp(x);
    o[1] = exp10(x * 0.25f);
    o[2] = log(x);
    o[3] = log10(x);
    o[4] = log(fabs(x) + 1.0f);
    o[5] = exp(-x);
    global float *q = p + i * 6;
    q[0] = pow(fabs(x), 1.5f);
    q[1] = pow(x, 3.0f);
    q[2] = pow(2.0f, x * 0.5f);
    q[3] = fabs(x) < FLT_MIN && x != 0.0f ? 0.0f : powr(fabs(x), 0.3f); // pocl is 13 ulp off on denormals
    q[4] = pown(x, 3);
    q[5] = pown(x, -2);
}
