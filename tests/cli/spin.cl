// Never ends: the flag is never set.
kernel void spin(global volatile int *flag)
{
  while (flag[0] == 0) { }
}
