// all work-items store the same 0 to the group's word, then work-item 0 stores -1 to it: one uniform race and one non-uniform race
kernel void uniform_then_nonuniform(global int *words)
{
    size_t g = get_group_id(0);
    words[g] = 0;
    if (get_local_id(0) == 0)
        words[g] = -1;
}
