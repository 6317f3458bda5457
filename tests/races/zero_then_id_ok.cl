// each work-item stores 0 and then its own id to its own word
kernel void zero_then_id_ok(global int *word)
{
    word[get_local_id(0)] = 0;
    word[get_local_id(0)] = (int)get_local_id(0) + 1;
}
