RWStructuredBuffer<float> A : register(u0);
RWStructuredBuffer<float> B : register(u1);
cbuffer Params : register(b2) { float scale; uint n; };
[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
  if (id.x < n) B[id.x] = A[id.x] * scale + sqrt(abs(A[id.x]));
}
