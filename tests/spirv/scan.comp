#version 450
// A workgroup inclusive scan in shared memory (Hillis-Steele), then each
// workgroup's total added atomically to a counter block with a header.
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer In { float xs[]; };
layout(std430, binding = 1) buffer Out { float scanned[]; };
layout(std430, binding = 2) buffer Totals { uint groups; uint sum_bits[]; } totals;
shared float tile[32];
void main() {
  uint i = gl_GlobalInvocationID.x;
  uint l = gl_LocalInvocationID.x;
  tile[l] = i < uint(xs.length()) ? xs[i] : 0.0;
  barrier();
  for (uint d = 1u; d < 32u; d <<= 1u) {
    float v = l >= d ? tile[l - d] : 0.0;
    barrier();
    tile[l] += v;
    barrier();
  }
  if (i < uint(scanned.length())) scanned[i] = tile[l];
  if (l == 31u) {
    atomicAdd(totals.groups, 1u);
    totals.sum_bits[gl_WorkGroupID.x] = floatBitsToUint(tile[31]);
  }
}
