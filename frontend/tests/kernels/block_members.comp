#version 450
// GLSL blocks with members beside a runtime array: an anonymous block is
// keyed by its block name (`Out.count`, `Out.items`); a named instance with
// a scalar, a float and a fixed array and no runtime array stays one
// buffer of one element (`stats`).
// inputs: {"dispatch": [32, 1, 1], "args": {"values": [5, 1, 4, 2, 8, 7, 3, 6, 0, 9, 11, 10, 13, 12, 15, 14, 16, 17, 18, 19], "Out.count": [100], "Out.items": {"fill": 0, "len": 24}, "stats": [[0, 0.0, [1, 2, 3, 4]]]}}
// expect: {"buffers":{"Out.count":[100],"Out.items":[110,102,108,104,116,114,106,112,100,118,122,120,126,124,130,128,132,134,136,138,0,0,0,0],"stats":[[24,2.5,[1,2,9,4]]],"values":[5,1,4,2,8,7,3,6,0,9,11,10,13,12,15,14,16,17,18,19]},"printed":[]}
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { uint values[]; };
layout(std430, binding = 1) buffer Out { uint count; uint items[]; };
layout(std430, binding = 2) buffer Stats { uint seen; float mean; uint hist[4]; } stats;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < uint(values.length())) {
    items[i] = values[i] * 2u + count;
  }
  if (i == 0u) {
    stats.seen = uint(items.length());
    stats.mean = float(values[0]) * 0.5;
    stats.hist[2] = 9u;
  }
}
