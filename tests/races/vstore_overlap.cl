// vstore4 of chars at a stride of 2: each store overlaps two bytes of the next work-item's store
kernel void vstore_overlap(global uchar *out)
{
    size_t i = get_global_id(0);
    uchar b = (uchar)(4 * i);
    uchar4 v = (uchar4)(b, (uchar)(b + 1), (uchar)(b + 2), (uchar)(b + 3));
    vstore4(v, 0, out + 2 * i);
}
