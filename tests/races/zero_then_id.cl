// every work-item stores 0 and then its own id to one word: the id stores race with each other, not only with the zeros
kernel void zero_then_id(global int *word)
{
    *word = 0;
    *word = (int)get_local_id(0) + 1;
}
