// inputs: {"dispatch": [8, 1, 1], "args": {"start": [1, 2, 3, 6, 7, 9, 27, 97], "steps": {"fill": 0, "len": 8}, "peak": {"fill": 0, "len": 8}}}
// expect: {"buffers":{"peak":[1,2,16,16,52,52,9232,9232],"start":[1,2,3,6,7,9,27,97],"steps":[0,1,7,8,16,19,111,118]},"printed":[]}
#version 450
// GLSL: a while loop with a helper function, an inout argument, a switch
// on the low bits and buffer blocks with and without instance names.
layout(local_size_x = 8) in;
layout(std430, set = 0, binding = 0) readonly buffer Start { uint start[]; };
layout(std430, set = 0, binding = 1) buffer Steps { uint steps[]; };
layout(std430, set = 0, binding = 2) buffer Peak { uint peak[]; };
uint next(uint n) {
    switch (n & 1u) {
        case 0u: return n >> 1u;
        default: return 3u * n + 1u;
    }
}
void track(uint n, inout uint best) { best = max(best, n); }
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint n = start[i];
    uint count = 0u;
    uint best = n;
    while (n != 1u) {
        n = next(n);
        track(n, best);
        count++;
    }
    steps[i] = count;
    peak[i] = best;
}
