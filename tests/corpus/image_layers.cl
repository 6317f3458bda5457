// An image2d_array of SIGNED_INT16 read with integer coordinates through a constant sampler (no
// filtering, CLK_ADDRESS_CLAMP: the coordinates one past each edge read the border colour, 0):
// each work-item sums its pixel over every layer, weighting layer k by k + 1, and writes the sum
// into an R SIGNED_INT32 image2d_t one pixel larger than the array in x and y.
constant sampler_t clamp_border = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

kernel void image_layers(read_only image2d_array_t layers, write_only image2d_t sums, global int *sizes)
{
    int x = get_global_id(0), y = get_global_id(1);
    int layer_count = (int)get_image_array_size(layers);
    int4 sum = (int4)(0);
    for (int k = 0; k < layer_count; k++)
        sum += (k + 1) * read_imagei(layers, clamp_border, (int4)(x - 1, y - 1, k, 0));
    write_imagei(sums, (int2)(x, y), sum);
    if (x == 0 && y == 0) {
        int2 dim = get_image_dim(layers);
        sizes[0] = dim.x;
        sizes[1] = dim.y;
        sizes[2] = layer_count;
        sizes[3] = get_image_width(sums);
    }
}
