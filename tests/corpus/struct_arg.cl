// structs passed by value as kernel arguments (with tail padding, a float4 member), copied and returned by value through functions.
typedef struct { int scale; int bias; float factor; short tag; char flag; } Params;
typedef struct { float4 v; int n; } Box;
typedef struct { int lo, hi; } Range;

Range widen(Range r, int by)
{
    Range w = r;
    w.lo -= by;
    w.hi += by;
    return w;
}

kernel void struct_arg(Params p, global const int *in, Box box, global int *out, global float *fout)
{
    size_t i = get_global_id(0);
    int x = in[i];
    Range r = { x, x * 2 };
    r = widen(r, p.flag ? p.scale : 1);
    out[i * 4] = x * p.scale + p.bias;
    out[i * 4 + 1] = r.lo + r.hi;
    out[i * 4 + 2] = p.tag * (int)i + box.n;
    out[i * 4 + 3] = p.flag;
    fout[i] = (float)x * p.factor + box.v.s0 * box.v.s1 - box.v.w + (float)box.n;
}
