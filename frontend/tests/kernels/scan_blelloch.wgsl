// inputs: {"dispatch": [16, 1, 1], "args": {"data": [3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5, 1, 6, 2, 7, 3, 8, 4, 0, 5], "result": {"fill": 0, "len": 32}, "block_sums": {"fill": 0, "len": 2}}}
// expect: {"buffers":{"block_sums":[63,65],"data":[3,8,4,0,5,1,6,2,7,3,8,4,0,5,1,6,2,7,3,8,4,0,5,1,6,2,7,3,8,4,0,5],"result":[0,3,11,15,15,20,21,27,29,36,39,47,51,51,56,57,0,2,9,12,20,24,24,29,30,36,38,45,48,56,60,60]},"printed":[]}
// Blelloch exclusive prefix sum of 16 u32 per workgroup in shared memory;
// the group total goes to block_sums.
const N: u32 = 16u;
@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> result: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;
var<workgroup> temp: array<u32, 16>;

@compute @workgroup_size(8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(workgroup_id) wg: vec3<u32>) {
    let t = lid.x;
    let base = wg.x * N;
    temp[2u * t] = data[base + 2u * t];
    temp[2u * t + 1u] = data[base + 2u * t + 1u];
    var offset = 1u;
    // up-sweep
    for (var d = N >> 1u; d > 0u; d >>= 1u) {
        workgroupBarrier();
        if (t < d) {
            let ai = offset * (2u * t + 1u) - 1u;
            let bi = offset * (2u * t + 2u) - 1u;
            temp[bi] += temp[ai];
        }
        offset *= 2u;
    }
    if (t == 0u) {
        block_sums[wg.x] = temp[N - 1u];
        temp[N - 1u] = 0u;
    }
    // down-sweep
    for (var d = 1u; d < N; d *= 2u) {
        offset >>= 1u;
        workgroupBarrier();
        if (t < d) {
            let ai = offset * (2u * t + 1u) - 1u;
            let bi = offset * (2u * t + 2u) - 1u;
            let tmp = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += tmp;
        }
    }
    workgroupBarrier();
    result[base + 2u * t] = temp[2u * t];
    result[base + 2u * t + 1u] = temp[2u * t + 1u];
}
