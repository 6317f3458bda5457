// loops: for/while/do-while with break and continue, nested loops left through a flag, early return, loop-carried values.
kernel void loops_break(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    int n = in[i];
    global int *o = out + i * 6;
    int s = 0;
    for (int k = 0; k < 100; k++) {
        if (k % 3 == 0)
            continue;
        if (k > n)
            break;
        s += k;
    }
    o[0] = s;
    int found = -1;
    for (int a = 0; a < 8 && found < 0; a++) {
        for (int b = 0; b < 8; b++) {
            if (a * b == n) {
                found = a * 8 + b;
                break;                          // only the inner loop
            }
            if (b > a)
                break;
        }
    }
    o[1] = found;
    int d = 0, x = n;
    do {
        d++;
        x /= 2;
    } while (x != 0);
    o[2] = d;
    int w = 0, t = 0;
    while (1) {
        t += 3;
        if (t > 40)
            break;
        if ((t & 1) == 0)
            continue;
        w += t;
    }
    o[3] = w;
    int f0 = 0, f1 = 1;
    for (int k = 0; k < (n & 31); k++) {
        int f2 = f0 + f1;
        f0 = f1;
        f1 = f2;
    }
    o[4] = f0;
    if (n < 0) {
        o[5] = -1;
        return;                                 // early return from the kernel
    }
    o[5] = n * 2;
}
