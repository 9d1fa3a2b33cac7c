// A GLSL texture read without a sampler (GL_EXT_samplerless_texture_functions:
// `texelFetch`, `textureSize`, `textureQueryLevels` of a `texture2D`), as naga's
// GLSL front end and glslang (tests/spirv/texel_fetch.spv is glslang's
// module of this file) both read it.
// inputs: {"dispatch": [4, 2, 1], "args": {"src": {"size": [3, 2], "texels": [[0.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0], [4.0, 0.0, 0.0, 0.0], [5.0, 0.0, 0.0, 0.0]]}, "o": {"fill": 0.0, "len": 6}}}
// expect: {"buffers":{"o":[1.0,3.0,5.0,7.0,9.0,11.0],"src":{"size":[3,2],"texels":[[0.0,0.0,0.0,0.0],[1.0,0.0,0.0,0.0],[2.0,0.0,0.0,0.0],[3.0,0.0,0.0,0.0],[4.0,0.0,0.0,0.0],[5.0,0.0,0.0,0.0]]}},"printed":[]}
#version 450
#extension GL_EXT_samplerless_texture_functions : require
layout(local_size_x = 4, local_size_y = 2) in;
layout(set = 0, binding = 0) uniform texture2D src;
layout(std430, set = 0, binding = 1) buffer O { float data[]; } o;
void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  ivec2 s = textureSize(src, 0);
  if (p.x < s.x && p.y < s.y) o.data[p.y * s.x + p.x] = texelFetch(src, p, 0).x * 2.0 + float(textureQueryLevels(src));
}
