// integer builtins: add_sat sub_sat (char..long, signed/unsigned), mul24 mad24, hadd rhadd, clz popcount rotate mul_hi mad_hi abs abs_diff upsample min max clamp.
kernel void int_builtins(global const int *a, global const int *b, global int *out, global long *lout)
{
    size_t i = get_global_id(0), j = get_global_id(1);
    int x = a[i], y = b[j];
    uint ux = as_uint(x), uy = as_uint(y);
    size_t k = j * get_global_size(0) + i;
    global int *o = out + k * 20;                // results are combined with ^, never with a signed + that could overflow
    o[0] = add_sat(x, y);
    o[1] = sub_sat(x, y);
    o[2] = as_int(add_sat(ux, uy));
    o[3] = as_int(sub_sat(ux, uy));
    o[4] = add_sat((char)x, (char)y) ^ sub_sat((uchar)x, (uchar)y) << 8;
    o[5] = as_int((uint)(ushort)sub_sat((short)x, (short)y) | (uint)add_sat((ushort)x, (ushort)y) << 16);
    o[6] = mul24(x >> 16, y >> 17);             // 24-bit operands, product within 32 bits
    o[7] = mad24(x >> 16, y >> 17, x >> 2);
    o[8] = hadd(x, y) ^ (rhadd(x, y) & 0xffff) << 1;
    o[9] = as_int(hadd(ux, uy) ^ rhadd(ux, uy) << 3);
    o[10] = clz(x) + (clz((uchar)y) << 8) + (clz((short)y) << 16);
    o[11] = popcount(x) + (popcount((char)y) << 8) + (popcount((ushort)x) << 16);
    o[12] = rotate(x, y);                       // rotate amount taken modulo 32
    o[13] = as_int(rotate(ux, (uint)j * 7)) ^ rotate((char)x, (char)y);
    o[14] = mul_hi(x, y);
    o[15] = as_int(mul_hi(ux, uy)) ^ mad_hi(x, 3, y >> 1);
    o[16] = as_int(abs(x) ^ abs_diff(x, y) << 1);
    o[17] = (int)abs_diff((char)x, (char)y) + ((int)abs((short)y) << 12);
    o[18] = min(x, y) ^ max(ux, uy) ^ clamp(x, -1000, y > -1000 ? y : 1000);
    o[19] = as_int(upsample((ushort)x, (ushort)y));
    global long *l = lout + k * 6;
    long lx = as_long((ulong)x << 32 | uy), ly = as_long((ulong)(long)y * 65536UL - (ulong)(long)x);
    l[0] = add_sat(lx, ly);
    l[1] = sub_sat(lx, ly);
    l[2] = as_long(add_sat(as_ulong(lx), as_ulong(ly)) ^ sub_sat(as_ulong(ly), as_ulong(lx)));
    l[3] = upsample(x, uy) ^ as_long(upsample(ux, uy));
    l[4] = (clz(lx) + popcount(ly) * 100) ^ rotate(lx, ly);
    l[5] = mul_hi(lx, ly) ^ as_long(mul_hi(as_ulong(lx), as_ulong(ly))) ^ hadd(lx, ly) ^ abs_diff(lx, ly);
}
