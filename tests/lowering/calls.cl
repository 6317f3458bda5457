// Helper functions: by value, through pointers, returning vectors, nested calls.
int square(int x) { return x * x; }
float2 swap(float2 v) { return v.yx; }
void accumulate(global int *p, int v) { *p += square(v); }
int clamp_sum(int a, int b, private int *overflow) {
    int s = a + b;
    if (s > 100) { *overflow = 1; return 100; }
    return s;
}
kernel void calls(global int *out, global float2 *v) {
    int g = get_global_id(0);
    int overflow = 0;
    int s = clamp_sum(square(g), g, &overflow);
    accumulate(out + g, s + overflow);
    v[g] = swap(v[g]);
}
