// Many value kinds in one launch, dumped for comparison with oclgrind-kernel.
typedef struct { int a; float b; } pair;
kernel void mixed(global char *c, global ushort *s, global long *l, global double *d,
                  global float *f, pair p, int4 v)
{
  size_t i = get_global_id(0);
  c[i] = (char)(i * 37 - 100);
  s[i] = (ushort)(i * 5000);
  l[i] = (long)i * -123456789012L;
  d[i] = (double)i / 3.0;
  f[i] = p.b * (float)i + (float)(p.a + v.s3) + 1e-7f * i;
}
