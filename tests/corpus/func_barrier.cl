// barriers inside called functions (two levels deep): neighbour exchanges and a three-point sum through local memory.
void exchange(local int *buf, int value, int *got)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    buf[l] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    *got = buf[(l + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);              // buf is reused by the next call
}

int smooth(local int *buf, int value)
{
    int right, twice;
    exchange(buf, value, &right);
    exchange(buf, right, &twice);
    return value + right + twice;
}

kernel void func_barrier(global const int *in, global int *out)
{
    local int buf[16];
    size_t i = get_global_id(0);
    int v = in[i];
    int a = smooth(buf, v);
    int b = smooth(buf, a);
    out[i * 2] = a;
    out[i * 2 + 1] = b;
}
