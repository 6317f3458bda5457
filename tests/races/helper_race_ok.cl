// a local tile reversed through put/get helper functions with a barrier between them
void put(local int *t, size_t k, int v)
{
    t[k] = v;
}

int get(local int *t, size_t k)
{
    return t[k];
}

kernel void helper_race_ok(global const int *in, global int *out)
{
    local int tile[8];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    put(tile, l, in[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = get(tile, n - 1 - l);
}
