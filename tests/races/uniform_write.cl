// every work-item of a group stores the same value to the group's flag word: a uniform write-write race
kernel void uniform_write(global int *flags)
{
    flags[get_group_id(0)] = 1;
}
