// work-item functions with work_dim 2 (launch directive): get_work_dim, sizes and ids in dimensions 0-2 (dimension 2 is beyond work_dim).
kernel void work_info(global uint *out)
{
    size_t flat = get_global_id(1) * get_global_size(0) + get_global_id(0);
    global uint *o = out + flat * 11;
    o[0] = get_work_dim();
    o[1] = (uint)get_global_size(0);
    o[2] = (uint)get_global_size(1);
    o[3] = (uint)get_global_size(2);                 // 1 outside work_dim
    o[4] = (uint)get_local_size(2);
    o[5] = (uint)get_num_groups(0) * 100 + (uint)get_num_groups(1);
    o[6] = (uint)get_num_groups(2);
    o[7] = (uint)get_global_id(2) + (uint)get_local_id(2) + (uint)get_group_id(2); // 0 outside work_dim
    o[8] = (uint)get_group_id(0) * 100 + (uint)get_group_id(1);
    o[9] = (uint)get_local_id(0) * 100 + (uint)get_local_id(1);
    o[10] = (uint)get_global_offset(0) + (uint)get_global_offset(1) * 10 + (uint)get_global_offset(2) * 100;
}
