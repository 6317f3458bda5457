// arrays of structs in global memory: padded layout (char/int/short/long/float), nested arrays, whole-struct copies, struct pointers.
typedef struct { char c; int i; short s; long l; float f; } Rec;       // 32 bytes with padding
typedef struct { int a[3]; short s; short t; } Nested;                 // 16 bytes, no padding
typedef struct { int a, b; float c, d; } Quad;                          // no padding

void bump(global Rec *r, int by)
{
    r->i += by;
    r->s = (short)(r->s - by);
}

kernel void struct_buffer(global const Rec *in, global Rec *out, global Nested *nest, global Quad *quads)
{
    size_t i = get_global_id(0);
    Rec r = in[i];
    global Rec *o = &out[i];
    o->c = (char)(r.c + 1);                  // field by field: the padding of out stays untouched
    o->i = r.i ^ (int)r.l;
    o->s = r.s;
    o->l = r.l + r.c;
    o->f = r.f * 2.0f;
    bump(o, (int)i);
    Nested n = nest[i];
    n.a[i % 3] += n.s;
    n.t = (short)(n.a[0] + n.a[1] + n.a[2]);
    nest[i].a[0] = n.a[0];
    nest[i].a[1] = n.a[1];
    nest[i].a[2] = n.a[2];
    nest[i].t = n.t;
    nest[i].s = (short)(n.s * -3);
    Quad q = quads[i];
    Quad swapped = { q.b, q.a, q.d, q.c };
    quads[i + get_global_size(0)] = swapped;  // whole-struct store, no padding bytes
}
