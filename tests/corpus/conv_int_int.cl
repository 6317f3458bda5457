// integer <-> integer conversions: truncation, sign/zero extension, _sat clamping between all widths, vector converts.
kernel void conv_int_int(global const long *in, global long *out)
{
    size_t i = get_global_id(0);
    long x = in[i];
    int xi = (int)x;
    short xs = (short)x;
    char xc = (char)x;
    ulong ux = as_ulong(x);
    global long *o = out + i * 24;
    o[0] = convert_char_sat(xi);
    o[1] = convert_uchar_sat(xi);
    o[2] = convert_short_sat(x);
    o[3] = convert_ushort_sat(xi);
    o[4] = convert_int_sat(x);
    o[5] = convert_uint_sat(xi);
    o[6] = convert_uint_sat(x);
    o[7] = convert_long_sat(ux);
    o[8] = as_long(convert_ulong_sat(x));
    o[9] = convert_uchar_sat(xc);
    o[10] = convert_char_sat((uchar)x);
    o[11] = convert_ushort_sat(xs);
    o[12] = convert_short_sat((ushort)x);
    o[13] = convert_char(xi);          // plain conversions truncate
    o[14] = convert_uchar(x);
    o[15] = (long)xc + (long)(uchar)xc; // sign and zero extension
    o[16] = (long)xs * 3 + (long)(ushort)xs;
    o[17] = (long)xi + (long)(uint)xi;
    o[18] = (ulong)(uint)xi;
    o[19] = convert_int_sat(ux);
    int4 v4 = convert_int4_sat((long4)(x, x / -2, x >> 3, (long)xs));
    o[20] = (long)v4.x + v4.y;
    o[21] = (long)v4.z - v4.w;
    uchar4 c4 = convert_uchar4_sat((int4)(xi, xi / -2, xs, xc));
    o[22] = as_uint(c4);
    short2 s2 = convert_short2_sat((uint2)((uint)xi, (uint)(xi >> 16)));
    o[23] = as_int(s2);
}
