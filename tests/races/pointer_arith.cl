// a work-item reads its right neighbour's element through derived pointers before any barrier orders the neighbour's store
kernel void pointer_arith(global int *buf, global int *out)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    global int *row = buf + get_group_id(0) * n;
    global int *mine = row + l;
    *mine = (int)get_global_id(0) * 3;
    int next = 0;
    if (l + 1 < n)
        next = *(mine + 1);
    out[get_global_id(0)] = next;
}
