// the first work-item of each row of a 4x4 group writes the row's value, then every work-item
// of the row reads it (one address read by four lanes at once), with no barrier between
kernel void row_broadcast(global int *rows, global int *out)
{
    int lx = get_local_id(0), row = get_global_id(1);
    if (lx == 0)
        rows[row] = row * 10;
    out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = rows[row] + lx;
}
