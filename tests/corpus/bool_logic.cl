// bool logic: short-circuit && and || with side effects through pointers, !, bool conversions, comparisons chained as ints.
bool bump_if(int *counter, bool value)
{
    (*counter)++;
    return value;
}

kernel void bool_logic(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    int x = in[i];
    int calls = 0;
    bool a = x > 0 && bump_if(&calls, x % 2 == 0);       // right side only when x > 0
    bool b = x < -10 || bump_if(&calls, x == 0);         // right side only when x >= -10
    bool c = !a && (bump_if(&calls, true) || bump_if(&calls, false));
    bool d = (x & 4) != 0;
    int e = (x > 3) + (x > 7) + !x + !!x;
    bool f = a ^ b;                                       // bools promote to int
    int g = x ? 11 : 22;
    out[i * 4] = a | b << 1 | c << 2 | d << 3 | f << 4;
    out[i * 4 + 1] = calls;
    out[i * 4 + 2] = e + (int)(bool)(x & 8) * 100;
    out[i * 4 + 3] = g + (a == b) + (d != c) * 2;
}
