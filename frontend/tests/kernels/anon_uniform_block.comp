// inputs: {"dispatch": [8, 1, 1], "args": {"Params": [2.0, 5, [1.0, 0.5]], "data": [1, 2, 3, 4, 5, 6, 7, 8]}}
// expect: {"buffers":{"data":[2.5,4.5,6.5,8.5,10.5,6.0,7.0,8.0]},"printed":[]}
#version 450
// GLSL: an anonymous uniform block with several members, named by the
// block (`Params`; it used to be an unguessable `global0`).
layout(local_size_x = 4) in;
layout(std140, binding = 0) uniform Params { float scale; uint count; vec2 offset; };
layout(std430, binding = 1) buffer Data { float data[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < count) data[i] = data[i] * scale + offset.x - offset.y;
}
