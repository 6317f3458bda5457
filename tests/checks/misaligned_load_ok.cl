// The twin of misaligned_load, the ways OpenCL allows an unaligned read: vload4 needs only the
// element's (a char's) alignment, and a member of a packed struct needs none (clang loads it
// with alignment 1).
typedef struct __attribute__((packed)) { char tag; int value; } Packed;

kernel void unpack(global char *bytes, global int *out, global Packed *packed)
{
    size_t i = get_global_id(0);
    char4 v = vload4(0, bytes + 4 * i + 1);
    out[i] = as_int(v) + packed[i].value;
}
