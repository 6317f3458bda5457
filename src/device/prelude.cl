// clrace on-device runtime: the shadow state machine and the findings buffer (see
// docs/on-device.md). Prepended by src/device to every instrumented program.
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#else
// No 64-bit atomics (rusticl on llvmpipe): the shadow is updated by plain loads and stores.
#define CR_PLAIN_SHADOW
#endif
#ifdef CR_PROBE_ATOMICS
#ifdef CR_PLAIN_SHADOW
#error plain shadow
#endif
#endif

// A shadow record (one 64-bit word): valid bit, two flag bits, a 13-bit site id, a 16-bit
// barrier epoch and a 32-bit work-item id (group linear id * group size + local linear id).
#define CR_VALID 0x8000000000000000UL
// In a read record: two work-items of one group read in one epoch.
#define CR_SHARED 0x4000000000000000UL
// In a read record: work-items of two groups read.
#define CR_CROSS 0x2000000000000000UL
#define CR_SITE(x) ((uint)((x) >> 48) & 0x1fffu)
#define CR_EPOCH(x) ((uint)((x) >> 32) & 0xffffu)
#define CR_ITEM(x) ((uint)(x))
#define CR_OFF 0xffffffffffUL
// With CR_PLAIN_SHADOW the shadow is updated by plain loads and stores instead of atomics: the
// gate measures what the atomics cost; it misses races whose two updates interleave.
#ifdef CR_PLAIN_SHADOW
#define CR_XCHG(p, v, old) (*(p) = (v))
#define CR_CAS(p, o, n) (*(p) = (n))
#else
#define CR_XCHG(p, v, old) ((old) = atom_xchg(p, v))
#define CR_CAS(p, o, n) atom_cmpxchg(p, o, n)
#endif
#define CR_SX(x, b) ((ulong)(((long)((x) << (64 - (b)))) >> (64 - (b))))

// The findings buffer: [0] records claimed, [1] records dropped past the cap, [2] the cap,
// [3] the number of sites S, then 3*S*S first-seen flags (kind, site, site), then the records
// of CR_RECORD words each.
#define CR_RACE_RW 0u
#define CR_RACE_WW 1u
#define CR_OOB 2u
#define CR_RECORD 8u

// Out of line: the rare path, kept out of the hooks that are inlined into every access.
__attribute__((noinline)) void cr_report(__global uint *fx, uint kind, uint sa, uint sb, uint ia, uint ib, uint buf, ulong off)
{
  uint s = fx[3];
  uint lo = min(sa, sb), hi = max(sa, sb);
  __global uint *seen = fx + 4 + (kind * s + lo) * s + hi;
  if (*seen != 0u || atomic_inc(seen) != 0u)
    return;
  uint slot = atomic_inc(&fx[0]);
  if (slot >= fx[2]) {
    atomic_inc(&fx[1]);
    return;
  }
  __global uint *r = fx + 4 + 3 * s * s + slot * CR_RECORD;
  r[0] = kind;
  r[1] = sa;
  r[2] = sb;
  r[3] = ia;
  r[4] = ib;
  r[5] = buf;
  r[6] = (uint)off;
  r[7] = (uint)(off >> 32);
}

// Whether work-item `x` is in the group whose first work-item is `gb` (of `lt` work-items).
#define CR_IN_GROUP(x, gb, lt) ((uint)(CR_ITEM(x) - (gb)) < (lt))

// Whether an earlier access `prev` (a write, or a read by a single work-item) conflicts with
// work-item `mi` of the group starting at `gb` in epoch `e`: another work-item, in another group
// or in the same barrier interval.
static inline __attribute__((always_inline)) int cr_conflict(ulong prev, uint mi, uint gb, uint e, uint lt)
{
  if (!(prev & CR_VALID) || CR_ITEM(prev) == mi)
    return 0;
  return !CR_IN_GROUP(prev, gb, lt) || CR_EPOCH(prev) == e;
}

// Whether the read summary `r` conflicts with a write by `mi`.
static inline __attribute__((always_inline)) int cr_conflict_reads(ulong r, uint mi, uint gb, uint e, uint lt)
{
  if (!(r & CR_VALID))
    return 0;
  if ((r & CR_CROSS) || !CR_IN_GROUP(r, gb, lt))
    return 1;
  return CR_EPOCH(r) == e && (CR_ITEM(r) != mi || (r & CR_SHARED));
}

// The read summary after a read `me` by `mi` in epoch `e`.
static inline __attribute__((always_inline)) ulong cr_merge(ulong r, ulong me, uint mi, uint gb, uint e, uint lt)
{
  if (!(r & CR_VALID))
    return me;
  if (!CR_IN_GROUP(r, gb, lt))
    return r | CR_CROSS;
  if (CR_EPOCH(r) != e)
    return me | (r & CR_CROSS);
  if (CR_ITEM(r) == mi)
    return r;
  return r | CR_SHARED;
}

// One access to one 4-byte word: `sh` its pair of shadow records (write, reads), `me` the
// access's record (valid, site, epoch, item), `gb` the first work-item of its group, `lt` the
// group's size.
#define CR_DEFINE_ACCESS(NAME, SPACE)                                                                        \
  static inline __attribute__((always_inline)) void NAME(SPACE ulong *sh, ulong me, uint gb, uint lt, int write, __global uint *fx, uint buf, ulong off) \
  {                                                                                                          \
    uint mi = CR_ITEM(me), e = CR_EPOCH(me);                                                                 \
    ulong w = sh[0];                                                                                         \
    if (write) {                                                                                             \
      if (w != me)                                                                                           \
        CR_XCHG(sh, me, w);                                                                                  \
      if (cr_conflict(w, mi, gb, e, lt))                                                                     \
        cr_report(fx, CR_RACE_WW, CR_SITE(w), CR_SITE(me), CR_ITEM(w), mi, buf, off);                        \
      ulong r = sh[1];                                                                                       \
      if (r & CR_VALID) {                                                                                    \
        if (cr_conflict_reads(r, mi, gb, e, lt))                                                             \
          cr_report(fx, CR_RACE_RW, CR_SITE(r), CR_SITE(me), CR_ITEM(r), mi, buf, off);                      \
        sh[1] = 0;                                                                                           \
      }                                                                                                      \
    } else {                                                                                                 \
      if (cr_conflict(w, mi, gb, e, lt))                                                                     \
        cr_report(fx, CR_RACE_RW, CR_SITE(w), CR_SITE(me), CR_ITEM(w), mi, buf, off);                        \
      ulong r = sh[1];                                                                                       \
      ulong n = cr_merge(r, me, mi, gb, e, lt);                                                              \
      if (n != r)                                                                                            \
        CR_CAS(sh + 1, r, n);                                                                                \
    }                                                                                                        \
  }

// A write to a word of memory the kernel never reads: its shadow is the write record alone.
#define CR_DEFINE_WRITE_ONLY(NAME, SPACE)                                                          \
  static inline __attribute__((always_inline)) void NAME(SPACE ulong *sh, ulong me, uint gb, uint lt, __global uint *fx, uint buf, ulong off) \
  {                                                                                                \
    ulong w = sh[0];                                                                               \
    if (w != me)                                                                                   \
      CR_XCHG(sh, me, w);                                                                          \
    if (cr_conflict(w, CR_ITEM(me), gb, CR_EPOCH(me), lt))                                         \
      cr_report(fx, CR_RACE_WW, CR_SITE(w), CR_SITE(me), CR_ITEM(w), CR_ITEM(me), buf, off);       \
  }
CR_DEFINE_ACCESS(cr_access_g, __global)
CR_DEFINE_ACCESS(cr_access_l, __local)
CR_DEFINE_WRITE_ONLY(cr_write_g, __global)
CR_DEFINE_WRITE_ONLY(cr_write_l, __local)
