// 2D NDRange stencil: neighbour reads with clamped borders and row-major indexing from get_global_id(0/1) and get_global_size.
kernel void ndrange_2d(global const int *in, global int *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    int w = get_global_size(0), h = get_global_size(1);
    int c = in[y * w + x];
    int left = in[y * w + max(x - 1, 0)], right = in[y * w + min(x + 1, w - 1)];
    int up = in[max(y - 1, 0) * w + x], down = in[min(y + 1, h - 1) * w + x];
    out[y * w + x] = 4 * c - left - right - up - down;
    out[w * h + y * w + x] = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));
}
