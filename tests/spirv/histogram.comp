#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { uint values[]; };
layout(std430, binding = 1) buffer Hist { uint total; uint bins[]; } hist;
shared uint local_bins[4];
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (gl_LocalInvocationIndex < 4u) local_bins[gl_LocalInvocationIndex] = 0u;
  barrier();
  if (i < uint(values.length())) {
    atomicAdd(local_bins[values[i] % 4u], 1u);
    atomicAdd(hist.total, 1u);
  }
  barrier();
  if (gl_LocalInvocationIndex < 4u) atomicAdd(hist.bins[gl_LocalInvocationIndex], local_bins[gl_LocalInvocationIndex]);
}
