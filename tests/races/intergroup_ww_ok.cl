// every work-item writes its own slot, indexed by global id
kernel void intergroup_ww_ok(global uchar *out)
{
    size_t k = get_global_id(0);
    out[k] = (uchar)get_global_id(0);
}
