// Check 9: a private array with a constant initialiser is defined, whichever element is read.
kernel void uninit_constinit_ok(global int *out, int i)
{
  int a[] = {7, 42, -1, 0, 5};
  out[get_global_id(0)] = a[(get_global_id(0) + i) % 5];
}
