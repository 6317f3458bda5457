// Downscale by two: only the even work-item of a pair writes, the average of both pixels.
kernel void image_write_race_ok(read_only image2d_t in, write_only image2d_t out)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x % 2 == 0) {
        float4 v = read_imagef(in, (int2)(x, y)) + read_imagef(in, (int2)(x + 1, y));
        write_imagef(out, (int2)(x / 2, y), v * 0.5f);
    }
}
