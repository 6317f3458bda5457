// shift by one tile into a separate output buffer: the input is only read
kernel void intergroup_rw_ok(global const int *data, global int *out)
{
    size_t i = get_global_id(0), n = get_local_size(0), N = get_global_size(0);
    int v = 0;
    if (i + n < N)
        v = data[i + n];
    out[i] = v;
}
