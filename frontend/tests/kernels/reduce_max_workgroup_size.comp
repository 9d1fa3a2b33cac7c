// inputs: {"dispatch": [64, 1, 1], "args": {"values": [-25.0, -6.5, 12.0, -20.0, -1.5, 17.0, -15.0, 3.5, 22.0, -10.0, 8.5, -23.5, -5.0, 13.5, -18.5, 0.0, 18.5, -13.5, 5.0, 23.5, -8.5, 10.0, -22.0, -3.5, 15.0, -17.0, 1.5, 20.0, -12.0, 6.5, 25.0, -7.0, 11.5, -20.5, -2.0, 16.5, -15.5, 3.0, 21.5, -10.5, 8.0, -24.0, -5.5, 13.0, -19.0, -0.5, 18.0, -14.0, 4.5, 23.0], "best": {"fill": [0.0, 0.0], "len": 2}}}
// expect: {"buffers":{"best":[[25.0,30.0],[23.0,49.0]],"values":[-25.0,-6.5,12.0,-20.0,-1.5,17.0,-15.0,3.5,22.0,-10.0,8.5,-23.5,-5.0,13.5,-18.5,0.0,18.5,-13.5,5.0,23.5,-8.5,10.0,-22.0,-3.5,15.0,-17.0,1.5,20.0,-12.0,6.5,25.0,-7.0,11.5,-20.5,-2.0,16.5,-15.5,3.0,21.5,-10.5,8.0,-24.0,-5.5,13.0,-19.0,-0.5,18.0,-14.0,4.5,23.0]},"printed":[]}
#version 450
// GLSL: workgroup max-reduction with shared memory and barrier(), plus the
// index of the maximum, written per workgroup. The loop starts from
// gl_WorkGroupSize.x, which is $block_size (it used to be refused as an
// entry argument).
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) readonly buffer Input { float values[]; };
layout(std430, set = 0, binding = 1) buffer Result { vec2 best[]; };
shared float s_val[32];
shared uint s_idx[32];

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint gid = gl_GlobalInvocationID.x;
    bool inside = gid < uint(values.length());
    s_val[lid] = inside ? values[gid] : -3.0e38;
    s_idx[lid] = gid;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (lid < s && s_val[lid + s] > s_val[lid]) {
            s_val[lid] = s_val[lid + s];
            s_idx[lid] = s_idx[lid + s];
        }
        barrier();
    }
    if (lid == 0u) {
        best[gl_WorkGroupID.x] = vec2(s_val[0], float(s_idx[0]));
    }
}
