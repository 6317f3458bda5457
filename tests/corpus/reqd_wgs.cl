// reqd_work_group_size(8, 2, 1) on the kernel, with the matching work-group size in the launch; local sizes read back.
__attribute__((reqd_work_group_size(8, 2, 1)))
kernel void reqd_wgs(global const int *in, global int *out)
{
    local int row[2][8];
    size_t lx = get_local_id(0), ly = get_local_id(1);
    size_t flat = get_global_id(1) * get_global_size(0) + get_global_id(0);
    row[ly][lx] = in[flat];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[flat * 3] = row[1 - ly][7 - lx];
    out[flat * 3 + 1] = (int)(get_local_size(0) * 10 + get_local_size(1));
    out[flat * 3 + 2] = (int)(get_group_id(0) * 10 + get_group_id(1));
}
