// Twin of tests/corpus/mandelbrot.xir (and tests/wgsl/mandelbrot.wgsl):
// escape-time Mandelbrot over a 16x16 grid covering [-2, 1) x [-1.5, 1.5);
// out[y * width + x] = iterations before |z|^2 > 4, at most max_iter. The
// XIR kernel's $dispatch_size.x is gl_NumWorkGroups.x * 8 (the local size:
// naga 30 declares gl_WorkGroupSize as a variable with the WorkgroupSize
// built-in, which spirv-val rejects, so the twin does not use it).
#version 450
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) buffer OutBlock { uint out_[]; };
layout(set = 0, binding = 1) uniform MaxIterBlock { uint max_iter; };

void main() {
    uint px = gl_GlobalInvocationID.x;
    uint py = gl_GlobalInvocationID.y;
    uint width = gl_NumWorkGroups.x * 8u;
    float cr = float(px) * 0.1875 - 2.0;
    float ci = float(py) * 0.1875 - 1.5;
    float zr = 0.0;
    float zi = 0.0;
    uint n = 0u;
    for (; n < max_iter; n++) {
        float aa = zr * zr;
        float bb = zi * zi;
        if (aa + bb > 4.0) {
            break;
        }
        float ab = zr * zi;
        float ni = (ab + ab) + ci;
        float nr = (aa - bb) + cr;
        zr = nr;
        zi = ni;
    }
    out_[py * width + px] = n;
}
