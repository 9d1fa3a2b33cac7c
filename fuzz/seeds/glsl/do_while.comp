// Twin of tests/corpus/do_while.xir (and tests/wgsl/do_while.wgsl): Collatz
// step count with a do-while; n = 1 takes 3 steps (1 -> 4 -> 2 -> 1).
#version 450
layout(local_size_x = 8, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer StartBlock { uint start[]; };
layout(std430, set = 0, binding = 1) buffer StepsBlock { uint steps[]; };

void main() {
    uint t = gl_GlobalInvocationID.x;
    uint n = start[t];
    uint count = 0u;
    do {
        if ((n & 1u) == 0u) {
            n = n >> 1u;
        } else {
            n = n * 3u + 1u;
        }
        count++;
    } while (n != 1u);
    steps[t] = count;
}
