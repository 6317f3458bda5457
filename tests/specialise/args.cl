// Kernels whose work is decided by their by-value arguments: what `--specialise` folds.
// Each launch file here runs one of them; tests/specialise.rs runs every launch with and without
// specialisation and requires the same report and the same buffers.

// Called with constant arguments from several places (several call paths: never bound).
int pick(int mode, int x)
{
    if (mode == 0)
        return x + 1;
    if (mode == 1)
        return x * 3;
    return x / mode;
}

// Called once (one call path from `mixed`: its constant arguments are bound), with a barrier.
void stage(local int *tile, global const int *in, int transpose, int scale)
{
    int l = get_local_id(0);
    int g = get_global_id(0);
    tile[l] = (transpose ? in[g ^ 1] : in[g]) * scale;
    barrier(CLK_LOCAL_MEM_FENCE);
}

kernel void mixed(global const int *in, global int *out, local int *tile, int width, int transpose, int mode,
                  int steps)
{
    stage(tile, in, transpose, 2);
    int l = get_local_id(0);
    int acc = 0;
    for (int s = 0; s < steps; s++)
        acc += tile[(l + s) % width];
    switch (mode) {
    case 0:
        acc += 100;
        break;
    case 1:
        acc -= 7;
        break;
    default:
        acc ^= mode;
    }
    out[get_global_id(0)] = pick(mode, acc) + pick(2, acc) / (width / 4) + (acc << 0) * 1 - 0;
}

// Work-items write the same element when `stride` > 1: a race decided by an argument.
kernel void strided(global int *out, int stride, int shift)
{
    size_t i = get_global_id(0);
    out[(i / stride) << shift] = (int)i;
}

// Writes past the end of `out` when `extra` > 0.
kernel void bounded(global int *out, int n, int extra)
{
    int i = get_global_id(0);
    if (i < n + extra)
        out[i] = i * 2;
}

struct params {
    int a;
    float b;
    short c;
};

// A by-value struct: several slots of one argument.
kernel void by_struct(global float *out, struct params p, uint flags)
{
    size_t i = get_global_id(0);
    float v = p.b * (float)(p.a + (int)i) + (float)p.c;
    out[i] = (flags & 1u) ? -v : v;
}
