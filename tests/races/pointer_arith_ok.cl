// a work-item reads its right neighbour's element through derived pointers after a global-memory barrier
kernel void pointer_arith_ok(global int *buf, global int *out)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    global int *row = buf + get_group_id(0) * n;
    global int *mine = row + l;
    *mine = (int)get_global_id(0) * 3;
    barrier(CLK_GLOBAL_MEM_FENCE);
    int next = 0;
    if (l + 1 < n)
        next = *(mine + 1);
    out[get_global_id(0)] = next;
}
