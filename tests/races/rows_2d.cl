// each row of eight work-items of an 8x4 group stores its row of the group's tile of a global
// buffer, then reads the element of the row mirrored about the middle (the rows in reverse
// order), with no barrier between: rows of consecutive lanes storing and loading consecutive
// words
kernel void rows_2d(global int *buf, global int *out)
{
    int x = get_global_id(0), y = get_local_id(1), w = get_global_size(0), h = get_local_size(1);
    int row0 = get_group_id(1) * h;
    buf[(row0 + y) * w + x] = x + 100 * y;
    out[(row0 + y) * w + x] = buf[(row0 + h - 1 - y) * w + x];
}
