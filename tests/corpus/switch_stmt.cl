// switch: fall-through, default in the middle, negative and sparse case labels, nested switch, switch on char, continue from a switch inside a loop.
int classify(int x)
{
    switch (x) {
    case -2147483647 - 1:
        return 100;
    case -5:
    case -4:
        return 1;
    default:
        return -1;
    case 0:
        x += 10;                               // falls through
    case 1:
        x *= 3;
        /* fall through */
    case 2:
        return x + 1;
    case 1000:
        return 7;
    case 65536:
        return 8;
    }
}

kernel void switch_stmt(global const int *in, global int *out)
{
    size_t i = get_global_id(0);
    int x = in[i];
    int acc = 0;
    for (int k = 0; k < 6; k++) {
        switch ((x + k) & 3) {
        case 0:
            acc += 1;
            break;
        case 1:
            if (k > 3)
                break;
            acc += 10;
            // fall through
        case 2:
            switch (k) {
            case 0:
                acc += 100;
                break;
            default:
                acc += 1000;
            }
            break;
        default:
            continue;                           // continue the loop from inside a switch
        }
        acc *= 2;
    }
    char c = (char)x;
    int cc;
    switch (c) {
    case 'a': cc = 1; break;
    case -1: cc = 2; break;
    case 127: cc = 3; break;
    default: cc = 0;
    }
    out[i * 3] = classify(x);
    out[i * 3 + 1] = acc;
    out[i * 3 + 2] = cc;
}
