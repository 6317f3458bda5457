kernel void shift(global int *data)
{
    size_t i = get_global_id(0);
    int v = data[i + 1]; /* work-item i+1 writes this word below: nothing orders the two */
    data[i] = v;
}
