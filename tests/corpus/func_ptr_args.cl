// nested function calls with pointer arguments into private, global and local memory; out-parameters; pointers to array elements.
void swap(int *a, int *b)
{
    int t = *a;
    *a = *b;
    *b = t;
}

int min_max(const global int *p, int n, int *lo, int *hi)
{
    *lo = p[0];
    *hi = p[0];
    for (int k = 1; k < n; k++) {
        if (p[k] < *lo)
            *lo = p[k];
        if (p[k] > *hi)
            *hi = p[k];
    }
    return *hi - *lo;
}

void order3(int *v)
{
    if (v[0] > v[1]) swap(&v[0], &v[1]);
    if (v[1] > v[2]) swap(v + 1, v + 2);
    if (v[0] > v[1]) swap(v, v + 1);
}

int stage_local(local int *slot, int value)
{
    *slot = value * 2;
    return *slot + 1;
}

void scale_global(global int *p, int factor)
{
    *p *= factor;
}

kernel void func_ptr_args(global const int *in, global int *out, local int *scratch)
{
    size_t i = get_global_id(0), l = get_local_id(0);
    int lo, hi;
    int span = min_max(in + i, 4, &lo, &hi);
    int v[3] = { in[i], in[i + 1], in[i + 2] };
    order3(v);
    int s = stage_local(&scratch[l], v[1]);
    global int *o = out + i * 6;
    o[0] = span;
    o[1] = lo;
    o[2] = v[0];
    o[3] = v[2];
    o[4] = s + scratch[l];
    o[5] = hi;
    scale_global(&o[5], -3);
}
