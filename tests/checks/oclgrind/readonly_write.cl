kernel void scale(global int *data, global int *result)
{
    size_t i = get_global_id(0);
    data[i] = data[i] * 2; /* data is CL_MEM_READ_ONLY */
    result[i] = i;
}
