// inputs: {"dispatch": [16, 1, 1], "args": {"values": [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], "sums": {"fill": 0, "len": 2}, "total": [0]}}
// expect: {"buffers":{"sums":[62,98],"total":[80],"values":[3,1,4,1,5,9,2,6,5,3,5,8,9,7,9,3]},"printed":[]}
// A workgroup tree reduction in shared memory with barriers, an atomic on
// a one-element storage buffer, and local_invocation_index / workgroup_id.
@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read_write> total: atomic<u32>;
var<workgroup> partial: array<u32, 8>;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) li: u32,
        @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    partial[li] = values[gid.x];
    workgroupBarrier();
    for (var stride = 4u; stride > 0u; stride >>= 1u) {
        if (li < stride) {
            partial[li] += partial[li + stride];
        }
        workgroupBarrier();
    }
    if (li == 0u) {
        sums[wg.x] = partial[0] * groups.x;
        atomicAdd(&total, partial[0]);
    }
}
