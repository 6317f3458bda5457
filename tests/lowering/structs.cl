// Loads and stores of structs, by value and through pointers, and private arrays.
typedef struct { int a; float b; char c; long d; } item;
typedef struct { float2 pos; int tag[3]; } node;
kernel void structs(global item *items, global node *nodes, item fill) {
    size_t g = get_global_id(0);
    item it = items[g];
    it.a += fill.a;
    it.d = it.d * 2 + fill.d;
    items[g] = it;
    node n = nodes[g];
    int priv[4] = { n.tag[0], n.tag[1], n.tag[2], (int)g };
    n.tag[g % 3] = priv[g & 3];
    n.pos.x += it.b;
    nodes[g] = n;
}
