// Compares of work-item ids and values made from them with values the same in every lane, in
// 16 x 16 groups (which the interpreter keeps as descriptors, and decides for the whole group
// where all its lanes fall on one side): border tests true in some groups, false in others, and
// split inside the groups on the border; signed and unsigned, 64-bit and narrowed, the uniform
// value on either side, and values that wrap. Each work-item writes one bit per compare.
kernel void affine_compares(const int w, const int h, global uint *out, global ulong *wide)
{
  int x = get_global_id(0), y = get_global_id(1);
  int i = y * w + x;
  uint bits = 0, k = 0;
#define BIT(c) (bits |= (uint)((c) ? 1 : 0) << k++)
  // The stencil's border: x == 0, y == 0, the last column and row.
  BIT(x == 0);
  BIT(y == 0);
  BIT(x == w - 1);
  BIT(y == h - 1);
  BIT(x != 16);
  // Ordered, signed: a group's first column, the middle, the uniform value on the left.
  BIT(x < 16);
  BIT(x <= 15);
  BIT(y > 15);
  BIT(y >= 16);
  BIT(w / 2 > x);
  BIT(h - 1 <= y);
  // Negative values: x - 20 spans -20..43, signed and as unsigned (which wraps there).
  BIT(x - 20 < 0);
  BIT((uint)(x - 20) < 5u);
  BIT((uint)(x - 20) >= 0x80000000u);
  BIT(x - 20 == -20);
  // A row index as 64 bits and as 16 bits (x * 4099 wraps a short).
  long li = (long)y * 100000L + x;
  BIT(li > 1500000L);
  BIT(li == 1600000L);
  BIT((ulong)li < 100000UL);
  short s = (short)(x * 4099);
  BIT(s < 0);
  BIT(s == 0);
  // Stepping down by rows.
  int down = 1000 - 17 * y + 2 * x;
  BIT(down < 600);
  BIT(down >= 1000);
  out[i] = bits;
  // The ids' values themselves still, after the compares.
  wide[i] = (ulong)li * 3 + (ulong)k;
}
