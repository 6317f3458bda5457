// Downscale by two: both work-items of a pair write the same pixel, with different values.
kernel void image_write_race(read_only image2d_t in, write_only image2d_t out)
{
    int x = get_global_id(0), y = get_global_id(1);
    float4 v = read_imagef(in, (int2)(x, y));
    write_imagef(out, (int2)(x / 2, y), v);
}
