// Twin of tests/corpus/break_continue.xir (and tests/wgsl/break_continue.wgsl):
// invocation t scans row t of a 4x16 table, skipping columns whose index is
// a multiple of 3 (continue) and stopping at the sentinel 0xffffffff
// (break); sums[t] is the sum, visited[t] the columns examined.
#version 450
layout(local_size_x = 4, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer TableBlock { uint table[]; };
layout(std430, set = 0, binding = 1) buffer SumsBlock { uint sums[]; };
layout(std430, set = 0, binding = 2) buffer VisitedBlock { uint visited[]; };

void main() {
    uint t = gl_GlobalInvocationID.x;
    uint row = t * 16u;
    uint sum = 0u;
    uint seen = 0u;
    for (uint i = 0u; i < 16u; i++) {
        seen += 1u;
        uint v = table[row + i];
        if (v == 0xffffffffu) {
            break;
        }
        if (i % 3u == 0u) {
            continue;
        }
        sum += v;
    }
    sums[t] = sum;
    visited[t] = seen;
}
