// each work-item sums the 4 elements of its row
kernel void oob_loop_ok(global const int *in, global int *out)
{
    size_t row = get_global_id(0);
    int sum = 0;
    for (int k = 0; k < 4; k++)
        sum += in[row * 4 + k];
    out[row] = sum;
}
