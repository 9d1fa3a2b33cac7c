// inputs: {"dispatch": [2, 1, 1], "args": {"bodies": [[[1.0, 2.0, 3.0, 4.0], [0.5, 0.25, 0.0, 0.0]], [[-1.0, -2.0, -3.0, -4.0], [2.0, 4.0, 0.0, 0.0]]]}}
// expect: {"buffers":{"bodies":[[[1.5,2.25,3.0,8.0],[0.0,0.0,0.0,1.0]],[[1.0,2.0,-3.0,-8.0],[1.0,0.0,0.0,1.0]]]},"printed":[]}
// GLSL writes to parts of a buffer element: a swizzle store to two lanes
// of a member (naga splits it into one store per lane), a compound
// assignment to one lane, a whole member. Each is a partial write.
#version 450
layout(local_size_x = 2) in;
struct Body { vec4 pos; vec4 vel; };
layout(std430, binding = 0) buffer Bodies { Body bodies[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    bodies[i].pos.xy = bodies[i].pos.xy + bodies[i].vel.xy;
    bodies[i].pos.w *= 2.0;
    bodies[i].vel = vec4(float(i), 0.0, 0.0, 1.0);
}
