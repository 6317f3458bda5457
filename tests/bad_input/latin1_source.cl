// A Latin-1 comment: café
__kernel void k(__global int *out) { out[get_global_id(0)] = 7; }
