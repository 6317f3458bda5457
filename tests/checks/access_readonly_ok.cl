// The twin of access_readonly: the scaled value goes to the output only.
kernel void scale(global int *data, global int *result)
{
    size_t i = get_global_id(0);
    result[i] = data[i] * 2;
}
