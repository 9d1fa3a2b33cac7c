// Twin of tests/corpus/callables.xir (and tests/wgsl/callables.wgsl): sum of
// squares of x[4t .. 4t+3] through functions with an `in` and an `inout`
// parameter; then a swap of two locals and of two elements of a local
// array, each through `inout` parameters.
//
// GLSL's `inout` is copy-in / copy-out, so `swap_values(arr[0], arr[1])`
// would be valid; naga 30 lowers it to pointers to the elements, which its
// SPIR-V writer cannot compile (it panics, gfx-rs/wgpu#4540), so the
// elements go through locals, which is what copy-in / copy-out means.
#version 450
layout(local_size_x = 4, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBlock { float x[]; };
layout(std430, set = 0, binding = 1) buffer SumsBlock { float sums[]; };
layout(std430, set = 0, binding = 2) buffer PairsBlock { uint pairs[]; };

float square(float v) {
    return v * v;
}

void accumulate_square(float v, inout float acc) {
    float sq = square(v);
    acc = acc + sq;
}

void swap_values(inout uint a, inout uint b) {
    uint va = a;
    uint vb = b;
    a = vb;
    b = va;
}

void main() {
    uint t = gl_GlobalInvocationID.x;
    uint base = t * 4u;
    float acc = 0.0;
    for (uint k = 0u; k < 4u; k++) {
        accumulate_square(x[base + k], acc);
    }
    sums[t] = acc;
    uint p = t;
    uint q = t + 100u;
    swap_values(p, q);
    uint arr[2];
    arr[0] = 7u;
    arr[1] = base;
    uint e0 = arr[0];
    uint e1 = arr[1];
    swap_values(e0, e1);
    arr[0] = e0;
    arr[1] = e1;
    pairs[base] = p;
    pairs[base + 1u] = q;
    pairs[base + 2u] = arr[0];
    pairs[base + 3u] = arr[1];
}
