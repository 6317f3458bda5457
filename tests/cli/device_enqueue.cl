// Device-side enqueue is not supported: a kernel that enqueues a child kernel.
kernel void parent(global int *out)
{
  out[0] = 1;
  enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1), ^{ out[1] = 2; });
}
