kernel void async_unwaited(global const int *in, global int *out, local int *tile)
{
    event_t e = async_work_group_copy(tile, in, get_local_size(0), 0);
    out[get_local_id(0)] = in[get_local_id(0)] * 2;
}
