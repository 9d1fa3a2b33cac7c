// Twin of tests/corpus/unusual_shapes.xir (and tests/wgsl/unusual_shapes.wgsl):
// a function whose if returns from both arms, a switch covering every value
// of x & 3 (its default never taken), and a one-shot do { } while (false)
// left by break. out[3t ..] = sign(x), class of x & 3, x > 10 ? x : 2x.
#version 450
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XsBlock { int xs[]; };
layout(std430, set = 0, binding = 1) buffer OutBlock { int out_[]; };

int sign_of(int x) {
    if (x < 0) {
        return -1;
    } else {
        return x == 0 ? 0 : 1;
    }
}

void main() {
    uint t = gl_GlobalInvocationID.x;
    int x = xs[t];
    uint base = t * 3u;
    out_[base] = sign_of(x);
    int cls;
    switch (x & 3) {
        case 0:
            cls = 100;
            break;
        case 1:
            cls = 200;
            break;
        case 2:
            cls = 300;
            break;
        default:
            cls = 400;
            break;
    }
    out_[base + 1u] = cls;
    int y = x;
    do {
        if (x > 10) {
            break;
        }
        y = x * 2;
    } while (false);
    out_[base + 2u] = y;
}
