// in and out are one buffer (alias=0): out[i] = in[i] + in[i] touches only the work-item's own element
kernel void inplace_alias_ok(global const int *in, global int *out)
{
    size_t i = get_global_id(0), N = get_global_size(0);
    int a = in[i];
    int b = in[i];
    out[i] = a + b;
}
