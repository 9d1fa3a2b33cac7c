// Twin of tests/corpus/saxpy.xir (and tests/wgsl/saxpy.wgsl): y = a * x + y
// over the first x.length() elements; invocations past the end do nothing.
#version 450
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(set = 0, binding = 0) uniform ABlock { float a; };
layout(std430, set = 0, binding = 1) readonly buffer XBlock { float x[]; };
layout(std430, set = 0, binding = 2) buffer YBlock { float y[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint n = uint(x.length());
    if (i < n) {
        float ax = a * x[i];
        y[i] = ax + y[i];
    }
}
