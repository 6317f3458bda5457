// in-place shift by one tile: each work-group reads the next group's elements while that group overwrites them
kernel void intergroup_rw(global int *data)
{
    size_t i = get_global_id(0), n = get_local_size(0), N = get_global_size(0);
    int v = 0;
    if (i + n < N)
        v = data[i + n];
    data[i] = v;
}
