// Compares of one-dimensional ids with values the same in every lane, each followed by a branch
// on its result, in groups of 256: true in a range of a group's lanes (which the interpreter
// finds by halving and parts the lanes by, without reading them), or outside one (`!=`), or in
// none or all; signed and unsigned, 64-bit and narrowed, the uniform value on either side, and
// values that wrap (left to the lanes). Then a tree reduction whose halving bound, and a value
// updated at every trip, are read by fewer lanes each time and by all of them after the loop.
kernel void affine_splits(const int n, global uint *out, global int *sums, global int *after,
                          local int *scratch)
{
  size_t lid = get_local_id(0), gid = get_global_id(0);
  int x = (int)gid;
  uint bits = 0, k = 0;
#define BRANCH(c) do { if (c) { bits |= 1u << k; } k++; } while (0)
  BRANCH(lid < 100);
  BRANCH(lid <= 17);
  BRANCH(lid > 200);
  BRANCH(lid >= 255);
  BRANCH(lid == 0);
  BRANCH(lid == 77);
  BRANCH(lid != 5);
  BRANCH(100 > lid);
  BRANCH(300 <= lid);
  // The launch's argument: all lanes of the first groups, a range of one, none of the last.
  BRANCH(x < n);
  BRANCH(n >= x);
  BRANCH(gid == (size_t)n);
  // Across zero: signed in range, unsigned wrapping (the lanes decide).
  BRANCH(x - 300 < 0);
  BRANCH(x - 300 >= -7);
  BRANCH((uint)(x - 300) < 50u);
  BRANCH(x - 300 == -1);
  BRANCH(x - 300 != 2);
  // Stepping down, and narrowed to 16 bits (x * 3 wraps a short past 10922).
  BRANCH(1000 - 3 * x > 0);
  BRANCH(1000 - 3 * x <= 400);
  BRANCH((short)(x * 3) < 700);
  BRANCH((long)gid * 5 - 2000 > 0L);
  out[gid] = bits;

  scratch[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  int t = n;
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) {
      scratch[lid] += scratch[lid + s] + (int)s + t;
    }
    t = t / 2 + 3;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    sums[get_group_id(0)] = scratch[0];
  }
  after[gid] = t * 7 + (int)lid;
}
