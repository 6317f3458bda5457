// only work-item 0 of each group stores the group's flag word
kernel void uniform_write_ok(global int *flags)
{
    if (get_local_id(0) == 0)
        flags[get_group_id(0)] = 1;
}
