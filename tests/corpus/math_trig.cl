// sin cos sincos (4 ulp) and atan (5 ulp) over a range plus special values (0, -0, inf, NaN, pi/2, 3pi, large arguments).
kernel void math_trig(global const float *xs, global const uint *special, global float *sc, global float *at)
{
    size_t i = get_global_id(0);
    float x = i < 64 ? xs[i] : as_float(special[i - 64]);
    global float *o = sc + i * 5;
    float c;
    o[0] = sin(x);
    o[1] = cos(x);
    o[2] = sincos(x, &c);
    o[3] = c;
    o[4] = cos(x * 0.125f);
    at[i * 2] = atan(x);
    at[i * 2 + 1] = atan(x * 1000.0f);
}
