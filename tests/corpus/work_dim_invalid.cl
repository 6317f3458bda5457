// work-item functions called with a dimension index >= 3 (valid OpenCL C): ids and offsets are 0 there.
kernel void work_dim_invalid(global uint *out, uint dim)
{
    size_t i = get_global_id(0);
    out[i * 4] = (uint)get_global_id(3);
    out[i * 4 + 1] = (uint)get_local_id(dim) + (uint)get_group_id(dim) * 10;   // a run-time dimension
    out[i * 4 + 2] = (uint)get_global_offset(4) + (uint)get_global_id(dim - 1) * 100;
    out[i * 4 + 3] = (uint)get_local_id(7) + 5;
    // not tested: get_global_size(3), get_local_size(3), get_num_groups(3) must be 1, but pocl 3.1 returns 0
}
