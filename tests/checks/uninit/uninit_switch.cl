// Check 9, use "branch" at a switch: mode is a private variable written only when `set` is not 0.
kernel void uninit_switch(global int *out, int set)
{
  int mode[1];
  if (set)
    mode[0] = get_global_id(0) % 3;
  switch (mode[0]) {
  case 0: out[get_global_id(0)] = 10; break;
  case 1: out[get_global_id(0)] = 20; break;
  default: atomic_inc(out + 4); break;
  }
}
