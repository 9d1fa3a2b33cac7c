// Twin of tests/corpus/reduce_block.xir (and tests/wgsl/reduce_block.wgsl):
// tree reduction of 64 inputs per workgroup in shared memory, a barrier
// after every round; invocation 0 writes the workgroup's total (wrapping).
#version 450
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer XBlock { uint x[]; };
layout(std430, set = 0, binding = 1) buffer OutBlock { uint out_[]; };

shared uint sh[64];

void main() {
    uint tid = gl_LocalInvocationID.x;
    sh[tid] = x[gl_GlobalInvocationID.x];
    barrier();
    for (uint stride = 32u; stride > 0u; stride >>= 1u) {
        if (tid < stride) {
            sh[tid] = sh[tid + stride] + sh[tid];
        }
        barrier();
    }
    if (tid == 0u) {
        out_[gl_WorkGroupID.x] = sh[0];
    }
}
