// Work-item ids and the values, indices and addresses computed from them, the same in every
// lane or stepping by column and row, in 16 x 16 groups (which the interpreter keeps as
// descriptors): 32-bit and 16-bit wraps, sign extension of negative indices, products and
// shifts by uniform values, loops on a uniform counter, a branch that parts the group after
// the ids were computed, a helper called with them, and a __local tile stored and read by rows.
static int twice_plus(int v) { return v * 2 + 1; }

kernel void affine_ids(const int w, global const int *in, global int *out,
                       global short *narrow, global long *wide, global uint *bits)
{
  local int tile[16][16];
  int x = get_global_id(0), y = get_global_id(1);
  int lx = get_local_id(0), ly = get_local_id(1);
  int i = y * w + x;
  // A row's neighbours, a uniform loop over rows below, all in bounds.
  int acc = in[i];
  if (x > 0)
    acc += in[i - 1];
  for (int t = 1; t < 3; t++)
    acc += in[((y + t) % 32) * w + x] * t;
  out[i] = acc;
  // Values of the ids themselves: negative ones, 16-bit wraps, 64-bit products, shifts.
  narrow[i] = (short)(x * 4099 - 17 * y);
  wide[i] = (long)(x - 20) * 3000000000L + (long)y;
  bits[i] = ((uint)(x - 8) << 3) + (uint)(y << 1);
  // Parted after the ids were computed: the lanes that take each side keep their values.
  if (lx < 5)
    out[i + w * 32] = twice_plus(i - 40);
  else
    out[i + w * 32] = -i;
  // A __local tile stored by rows and read transposed after a barrier.
  tile[ly][lx] = i;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i + w * 64] = tile[lx][ly] + in[(i + 5) % 1024];
}
