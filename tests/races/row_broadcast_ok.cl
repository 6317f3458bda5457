// the first work-item of each row of a 4x4 group writes the row's value, a barrier, then every
// work-item of the row reads it (one address read by four lanes at once)
kernel void row_broadcast_ok(global int *rows, global int *out)
{
    int lx = get_local_id(0), row = get_global_id(1);
    if (lx == 0)
        rows[row] = row * 10;
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = rows[row] + lx;
}
