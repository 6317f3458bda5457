// Work-item functions, math, geometric, integer and vector-memory builtins.
kernel void builtins(global float *f, global half *h, global uint *u, global float4 *v) {
    size_t g = get_global_id(0);
    size_t l = get_local_id(1) + get_group_id(2) * get_local_size(0) + get_num_groups(0) + get_work_dim();
    float x = f[g];
    f[g] = sqrt(fabs(x)) + sin(x) * pow(x, 2.5f) + fma(x, x, 1.0f) + fmin(x, (float)l);
    float ip;
    f[g + 1] = modf(x, &ip) + ip;
    u[g] = clz(u[g]) + popcount(u[g]) + rotate(u[g], 3u) + mad_hi(u[g], 7u, 1u) + abs_diff(u[g], 5u);
    float4 a = vload4(g, f);
    v[g] = normalize(a) * dot(a, a) + cross(a, a) + (float4)(length(a));
    vstore_half(x, g, h);
    vstore2(vload2(0, f), g, f);
}
