// 3D NDRange: every id and size query in each dimension, flattened ids, written per work-item.
kernel void ndrange_3d(global uint *out)
{
    size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    size_t flat = (z * get_global_size(1) + y) * get_global_size(0) + x;
    global uint *o = out + flat * 8;
    o[0] = (uint)(get_local_id(0) | get_local_id(1) << 8 | get_local_id(2) << 16);
    o[1] = (uint)(get_group_id(0) | get_group_id(1) << 8 | get_group_id(2) << 16);
    o[2] = (uint)(get_num_groups(0) | get_num_groups(1) << 8 | get_num_groups(2) << 16);
    o[3] = (uint)(get_local_size(0) | get_local_size(1) << 8 | get_local_size(2) << 16);
    o[4] = (uint)(get_global_size(0) * get_global_size(1) * get_global_size(2));
    o[5] = get_work_dim();
    o[6] = (uint)(x * 10000 + y * 100 + z);
    size_t lflat = (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0);
    o[7] = (uint)lflat;
}
