// Twin of tests/corpus/prefix_sum.xir: inclusive Hillis-Steele scan of 64
// values per workgroup in workgroup memory. Each round reads the partner
// slot, waits for every read, then writes (a `while` loop, two barriers per
// round).
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;

var<workgroup> sh: array<u32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tid = lid.x;
    sh[tid] = x[gid.x];
    workgroupBarrier();
    var offset = 1u;
    while offset < 64u {
        var partner = 0u;
        if tid >= offset {
            partner = sh[tid - offset];
        }
        // Every read of this round happens before any write of it.
        workgroupBarrier();
        sh[tid] = sh[tid] + partner;
        workgroupBarrier();
        offset = offset << 1u;
    }
    out[gid.x] = sh[tid];
}
