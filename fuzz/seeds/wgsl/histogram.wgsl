// Twin of tests/corpus/histogram.xir: 16-bin histogram of the low 4 bits.
// Per-workgroup counts live in an atomic<u32> array in workgroup memory and
// are flushed to the global histogram with atomics on storage; slot 16 of the
// histogram counts values >= 16.
@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> hist: array<atomic<u32>>;

var<workgroup> bins: array<atomic<u32>, 16>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tid = lid.x;
    let is_bin = tid < 16u;
    if is_bin {
        atomicStore(&bins[tid], 0u);
    }
    workgroupBarrier();
    let v = data[gid.x];
    let bin = v & 15u;
    atomicAdd(&bins[bin], 1u);
    if v >= 16u {
        _ = atomicAdd(&hist[16], 1u);
    }
    workgroupBarrier();
    if is_bin {
        let cnt = atomicLoad(&bins[tid]);
        atomicAdd(&hist[tid], cnt);
    }
}
