// GLSL blocks of one struct of one member: `b` stands for `b.s.n` and `u`
// for `u.p.k`, as glslang writes the blocks (tests/spirv/nested_blocks.spv
// is glslang's module of this file) and as naga's module takes them (it
// wraps each block in a block of its own). A whole struct is read and
// written back through its one member.
// inputs: {"dispatch": [4, 1, 1], "args": {"b": [3], "u": 2.5, "o": {"fill": 0.0, "len": 4}}}
// expect: {"buffers":{"b":[8],"o":[2.5,5.0,7.5,10.0]},"printed":[]}
#version 450
layout(local_size_x = 4) in;

struct S { uint n; };
struct P { float k; };

layout(std430, set = 0, binding = 0) buffer B { S s; } b;
layout(std140, set = 0, binding = 1) uniform U { P p; } u;
layout(std430, set = 0, binding = 2) buffer O { float data[]; } o;

void main() {
  uint i = gl_LocalInvocationID.x;
  P whole = u.p;
  o.data[i] = float(i + 1u) * whole.k;
  if (i == 0u) {
    S t = b.s;
    t.n += 5u;
    b.s = t;
  }
}
