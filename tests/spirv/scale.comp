#version 450
// A specialization constant (SCALE, constant_id 0) and a uniform block.
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint SCALE = 3;
layout(std140, binding = 0) uniform Params { float bias; uint n; } params;
layout(std430, binding = 1) buffer Data { float v[]; } data;
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i < params.n) data.v[i] = data.v[i] * float(SCALE) + params.bias;
}
