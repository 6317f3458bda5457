// The same shift from one image into another.
kernel void image_inplace_ok(read_only image2d_t src, write_only image2d_t dst)
{
    int x = get_global_id(0), y = get_global_id(1);
    uint4 right = read_imageui(src, (int2)(min(x + 1, (int)get_image_width(src) - 1), y));
    write_imageui(dst, (int2)(x, y), right);
}
