// the racing accesses sit in helper functions: a local tile is reversed through put/get without a barrier
void put(local int *t, size_t k, int v)
{
    t[k] = v;
}

int get(local int *t, size_t k)
{
    return t[k];
}

kernel void helper_race(global const int *in, global int *out)
{
    local int tile[8];
    size_t l = get_local_id(0), n = get_local_size(0), i = get_global_id(0);
    put(tile, l, in[i]);
    out[i] = get(tile, n - 1 - l);
}
