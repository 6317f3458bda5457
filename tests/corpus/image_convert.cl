// Format conversion: an RGBA UNORM_INT8 image read without a sampler becomes an RGBA FLOAT image
// (values in [0, 1]) and a BGRA UNORM_INT8 copy with the red and blue channels swapped in memory;
// the work-item also reports the image's format through the query builtins.
kernel void image_convert(read_only image2d_t src, write_only image2d_t as_float, write_only image2d_t as_bgra,
                          global int *info)
{
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 c = read_imagef(src, p);
    write_imagef(as_float, p, c);
    write_imagef(as_bgra, p, c);
    if (p.x == 0 && p.y == 0) {
        info[0] = get_image_channel_order(src);
        info[1] = get_image_channel_data_type(src);
        info[2] = get_image_channel_order(as_float);
        info[3] = get_image_channel_data_type(as_float);
        info[4] = get_image_channel_order(as_bgra);
        info[5] = get_image_width(src);
        info[6] = get_image_height(src);
        int2 dim = get_image_dim(as_bgra);
        info[7] = dim.x * 100 + dim.y;
    }
}
