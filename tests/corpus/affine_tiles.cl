// Loads where each row of a two-dimensional group reads one element of its own (a tile's column
// read by the rows of the group: `As[ty][k]`), which the interpreter loads once per row from
// the address's descriptor, and the array-index checks on such tiles, which pass for the whole
// group from the index's descriptor: in 16 x 16 groups (256 lanes), with elements of 1, 2, 4
// and 8 bytes, rows read forwards, backwards and two apart, from `__local` tiles and from a
// global buffer, and a loop whose counter indexes the tiles. Each work-item writes what it read.
kernel void affine_tiles(global const int *in, global int *out, global long *wide)
{
  local int ti[16][16];
  local char tc[16][17];
  local short ts[16][16];
  local long tl[16][16];
  local float tf[32][16];
  int lx = get_local_id(0), ly = get_local_id(1);
  int gx = get_global_id(0), gy = get_global_id(1);
  int w = get_global_size(0);
  int v = in[gy * w + gx];
  ti[ly][lx] = v;
  tc[ly][lx] = (char)(v * 7);
  ts[ly][lx] = (short)(v * 3 - 1000);
  tl[ly][lx] = (long)v * 1000003L;
  tf[2 * ly][lx] = (float)v * 0.5f;
  tf[2 * ly + 1][lx] = (float)v + 0.25f;
  barrier(CLK_LOCAL_MEM_FENCE);
  int sum = 0;
  long lsum = 0;
  float fsum = 0.0f;
  for (int k = 0; k < 16; k++) {
    sum += ti[ly][k] * (k + 1);
    sum += ti[15 - ly][k] ^ k;
    sum += tc[ly][k];
    sum += ts[ly][(k + 3) & 15];
    lsum += tl[ly][k];
    fsum += tf[2 * ly][k] - tf[2 * ly + 1][15 - k];
  }
  // A column of the global input read by each row: one element per row.
  sum += in[(gy * w) + (get_group_id(0) * 16)];
  int i = gy * w + gx;
  out[2 * i] = sum;
  out[2 * i + 1] = (int)(fsum * 4.0f);
  wide[i] = lsum;
}
