// Bitonic sort of tiles in local memory (Batcher's sorting network), the first pass of the
// GPU sorts in vendor SDK samples: each work-group sorts `tiles` consecutive tiles of
// 2 * local size keys, one after another, and every compare-exchange step of the network ends
// with a barrier: 45 steps for a 512-key tile sorted by 256 work-items.
//
// Keys are scrambled on load by a multiplicative hash (a bijection on 32 bits), so an input
// written as a plain range arrives in a pseudo-random order.

inline uint scramble(uint v) { return (v * 2654435761u) ^ (v >> 13); }

kernel void bitonic_tiles(global const uint *in, global uint *out, const uint tiles,
                          local uint *keys) {
  uint lid = get_local_id(0), half_tile = get_local_size(0), tile = 2 * half_tile;
  for (uint t = 0; t < tiles; t++) {
    size_t base = ((size_t)get_group_id(0) * tiles + t) * tile;
    // Each work-item loads (and later stores) the keys lid and lid + half_tile only.
    keys[lid] = scramble(in[base + lid]);
    keys[lid + half_tile] = scramble(in[base + lid + half_tile]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint size = 2; size <= tile; size <<= 1) {
      for (uint stride = size >> 1; stride > 0; stride >>= 1) {
        // Work-item lid compares the pair (i, i + stride); sequences are sorted ascending
        // where bit `size` of i is 0, descending where it is 1, until the last merge.
        uint i = 2 * lid - (lid & (stride - 1)), j = i + stride;
        bool ascending = (i & size) == 0;
        uint a = keys[i], b = keys[j];
        if ((a > b) == ascending) {
          keys[i] = b;
          keys[j] = a;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
      }
    }
    out[base + lid] = keys[lid];
    out[base + lid + half_tile] = keys[lid + half_tile];
  }
}
