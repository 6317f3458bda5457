kernel void copy(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    out[i] = in[i] + 1;
}
