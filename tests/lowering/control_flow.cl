// Loops (for, while, do-while with break and continue), nested conditions and a switch.
kernel void control_flow(global int *out, int n) {
    int g = get_global_id(0);
    int acc = 0;
    for (int i = 0; i < n; i++) {
        if (i == g)
            continue;
        acc += i;
        if (acc > 1000)
            break;
    }
    int j = g;
    while (j > 1)
        j = (j & 1) ? 3 * j + 1 : j / 2;
    do {
        acc ^= j++;
    } while (j < 4);
    switch (g & 7) {
    case 0: acc += 1; break;
    case 1: acc *= 2; // fall through
    case 2: acc -= 3; break;
    case 5: acc = -acc; break;
    default: acc = 0;
    }
    out[g] = acc;
}
