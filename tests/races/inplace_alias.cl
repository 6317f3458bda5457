// in and out are one buffer (alias=0): out[i] = in[i] + in[i + 1] reads the element the next work-item overwrites
kernel void inplace_alias(global const int *in, global int *out)
{
    size_t i = get_global_id(0), N = get_global_size(0);
    int a = in[i];
    int b = i + 1 < N ? in[i + 1] : 0;
    out[i] = a + b;
}
