// float -> integer conversions: saturating and rounding-mode suffixes (NaN, inf, out-of-range, ties); plain ones only in range.
kernel void conv_float_int(global const uint *bits, global int *out, global long *lout)
{
    size_t i = get_global_id(0);
    float f = as_float(bits[i]);
    global int *o = out + i * 20;
    global long *l = lout + i * 6;
    bool in_int = f >= -2147483648.0f && f < 2147483648.0f;
    bool in_uint = f > -1.0f && f < 4294967296.0f;
    bool in_long = f >= -9223372036854775808.0f && f < 9223372036854775808.0f;
    o[0] = convert_int_sat(f);
    o[1] = convert_int_sat_rte(f);
    o[2] = convert_int_sat_rtp(f);
    o[3] = convert_int_sat_rtn(f);
    o[4] = in_int ? convert_int(f) : 0x55;
    o[5] = in_int ? convert_int_rte(f) : 0x55;
    o[6] = in_int && f <= 2147483520.0f ? convert_int_rtp(f) : 0x55;
    o[7] = in_int ? convert_int_rtn(f) : 0x55;
    o[8] = as_int(convert_uint_sat(f));
    o[9] = as_int(convert_uint_sat_rte(f));
    o[10] = convert_char_sat(f);
    o[11] = convert_uchar_sat_rte(f);
    o[12] = convert_short_sat_rtn(f);
    o[13] = convert_ushort_sat_rtp(f);
    o[14] = in_uint && f >= 0.0f ? as_int(convert_uint_rtp(f)) : 0x55;
    o[15] = in_int ? (int)f : 0x55;
    int4 v = convert_int4_sat_rte((float4)(f, -f, f * 0.5f, f + 0.25f));
    o[16] = v.x;
    o[17] = v.y;
    o[18] = v.z;
    o[19] = v.w;
    l[0] = convert_long_sat(f);
    l[1] = convert_long_sat_rte(f);
    l[2] = as_long(convert_ulong_sat(f));
    l[3] = as_long(convert_ulong_sat_rtn(f));
    l[4] = in_long ? convert_long_rtp(f) : 0x55;
    l[5] = in_uint ? (long)(uint)f : 0x55;
}
