// In-place horizontal shift of a read_write image: every work-item reads the pixel on its right,
// waits at an image barrier, then writes its own; the group's last work-item reads the next
// group's first pixel, which that group overwrites.
kernel void image_inplace(read_write image2d_t img)
{
    int x = get_global_id(0), y = get_global_id(1);
    uint4 right = read_imageui(img, (int2)(min(x + 1, (int)get_image_width(img) - 1), y));
    barrier(CLK_IMAGE_MEM_FENCE);
    write_imageui(img, (int2)(x, y), right);
}
