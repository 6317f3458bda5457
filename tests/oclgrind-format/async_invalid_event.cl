kernel void async_invalid_event(global int *out)
{
    event_t e = 0;
    wait_group_events(1, &e);
    out[get_local_id(0)] = 1;
}
