kernel void past(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    out[i + 1] = in[i]; /* work-item 3 writes past the end */
}
