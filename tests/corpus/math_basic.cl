// mad (exact products only), fmin fmax fabs ceil fmod fract (0 ulp) and sqrt rsqrt (3 ulp without the correctly-rounded option).
kernel void math_basic(global const float *xs, global float *exact, global float *approx)
{
    size_t i = get_global_id(0);
    float x = xs[i];
    float4 v = (float4)(x, -x, x * 0.5f, 1.0f);
    float4 m = mad(v, (float4)(3.0f, 0.25f, -2.0f, x), (float4)(0.5f, -1.0f, x, 2.0f));
    global float *o = exact + i * 12;
    o[0] = mad(x, 3.0f, 0.5f);
    o[1] = m.x + m.y;
    o[2] = m.z - m.w;
    o[3] = fmin(x, 1.25f);
    o[4] = fmax(x, -3.0f);
    o[5] = fabs(x);
    o[6] = ceil(x * 0.3f);
    o[7] = fmod(x, 1.5f);
    float ip = 0.0f;
    o[8] = x == 0.0f ? 0.0f : fract(x * 0.3f, &ip);
    o[9] = ip;
    o[10] = fmin(fmax(x, -1.0f), 1.0f);
    o[11] = fabs(-x) + fabs(x * 0.5f);
    global float *a = approx + i * 3;
    a[0] = sqrt(fabs(x));
    a[1] = sqrt(x * 1000.0f);
    a[2] = x == 0.0f ? 0.0f : rsqrt(fabs(x));
}
