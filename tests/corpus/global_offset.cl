// global work offset (via the launch file directive): get_global_id includes it, get_group_id and get_local_id do not.
kernel void global_offset(global int *out)
{
    size_t x = get_global_id(0) - get_global_offset(0);
    size_t y = get_global_id(1) - get_global_offset(1);
    size_t flat = y * get_global_size(0) + x;
    global int *o = out + flat * 5;
    o[0] = (int)get_global_id(0);
    o[1] = (int)get_global_id(1);
    o[2] = (int)(get_global_offset(0) * 100 + get_global_offset(1));
    o[3] = (int)(get_group_id(0) * 10 + get_group_id(1));
    o[4] = (int)(get_local_id(0) * 10 + get_local_id(1));
}
