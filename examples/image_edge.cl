// A 3x1 horizontal blur that forgets the image's edges: the sampler-less reads at x - 1 and
// x + 1 leave the image at both ends, which OpenCL leaves undefined.
kernel void blur_rows(read_only image2d_t in, write_only image2d_t out)
{
    int x = get_global_id(0), y = get_global_id(1);
    float4 sum = read_imagef(in, (int2)(x - 1, y)) + read_imagef(in, (int2)(x, y)) +
                 read_imagef(in, (int2)(x + 1, y));
    write_imagef(out, (int2)(x, y), sum / 3.0f);
}
