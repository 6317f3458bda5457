// async_work_group_copy global->local and local->global (int and float4), a strided copy, chained events and wait_group_events.
kernel void async_copy(global const int *in, global int *out, global const float4 *vin, global float4 *vout, global int *strided)
{
    local int tile[32];
    local float4 vtile[8];
    local int column[8];
    size_t g = get_group_id(0), l = get_local_id(0), n = get_local_size(0);
    event_t e1 = async_work_group_copy(tile, in + g * 32, 32, 0);
    event_t e2 = async_work_group_copy(vtile, vin + g * 8, 8, 0);
    event_t e3 = async_work_group_strided_copy(column, in + g * 32 + 1, 8, 4, 0); // every 4th int
    wait_group_events(1, &e1);
    event_t waits[2] = { e2, e3 };
    wait_group_events(2, waits);
    for (size_t k = l; k < 32; k += n)
        tile[k] = tile[k] * 2 + column[k % 8];
    vtile[l] = vtile[l].wzyx * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t back = async_work_group_copy(out + g * 32, tile, 32, 0);
    back = async_work_group_copy(vout + g * 8, vtile, 8, back);                   // joins the first event
    event_t spread = async_work_group_strided_copy(strided + g * 16, column, 8, 2, 0); // local -> global, stride 2
    wait_group_events(1, &back);
    wait_group_events(1, &spread);
}
