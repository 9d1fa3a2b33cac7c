// inputs: {"dispatch": [4, 1, 1], "args": {"x": [1, 2, 3, 4], "y": {"fill": 0, "len": 4}}}
// expect: {"buffers":{"x":[1.0,2.0,3.0,4.0],"y":[20.0,21.0,22.0,23.0]},"printed":[]}
#version 450
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) buffer In { float x[]; };
layout(std430, set = 0, binding = 1) buffer Out { float y[]; };
shared float tmp[4];
float twice(float v) { return v * 2.0; }
void main() {
    uint i = gl_GlobalInvocationID.x;
    tmp[gl_LocalInvocationID.x] = x[i];
    barrier();
    float s = 0.0;
    for (int k = 0; k < 4; ++k) { s += tmp[k]; }
    y[i] = twice(s) + float(i);
}
