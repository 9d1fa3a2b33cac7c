// Twin of tests/corpus/reduce_block.xir: tree reduction. Each workgroup of 64
// invocations sums its 64 inputs in workgroup memory (halving the stride each
// round, a barrier after every round) and invocation 0 writes the total.
// Sums wrap modulo 2^32.
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

var<workgroup> sh: array<u32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let tid = lid.x;
    sh[tid] = x[gid.x];
    workgroupBarrier();
    for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
        if tid < stride {
            // Invocation t folds slot t + stride into slot t; no other
            // invocation touches either slot this round.
            sh[tid] = sh[tid + stride] + sh[tid];
        }
        // Uniform: every invocation of the workgroup reaches it each round.
        workgroupBarrier();
    }
    if tid == 0u {
        out[wid.x] = sh[0];
    }
}
