// off-by-one loop bound: each work-item sums 5 elements of its 4-element row, so the last row reads past the end
kernel void oob_loop(global const int *in, global int *out)
{
    size_t row = get_global_id(0);
    int sum = 0;
    for (int k = 0; k <= 4; k++)
        sum += in[row * 4 + k];
    out[row] = sum;
}
