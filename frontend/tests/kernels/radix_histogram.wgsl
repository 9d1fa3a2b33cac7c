// inputs: {"dispatch": [48, 1, 1], "args": {"keys": [0, 2654435761, 1013904226, 3668339987, 2027808452, 387276917, 3041712678, 1401181143, 4055616904, 2415085369, 774553834, 3428989595, 1788458060, 147926525, 2802362286, 1161830751, 3816266512, 2175734977, 535203442, 3189639203, 1549107668, 4203543429, 2563011894, 922480359, 3576916120, 1936384585, 295853050, 2950288811, 1309757276, 3964193037, 2323661502, 683129967, 3337565728, 1697034193, 56502658, 2710938419, 1070406884, 3724842645, 2084311110, 443779575], "bins": {"fill": 0, "len": 16}}}
// expect: {"buffers":{"bins":[2,2,3,3,3,2,2,2,3,3,2,2,2,3,3,3],"keys":[0,2654435761,1013904226,3668339987,2027808452,387276917,3041712678,1401181143,4055616904,2415085369,774553834,3428989595,1788458060,147926525,2802362286,1161830751,3816266512,2175734977,535203442,3189639203,1549107668,4203543429,2563011894,922480359,3576916120,1936384585,295853050,2950288811,1309757276,3964193037,2323661502,683129967,3337565728,1697034193,56502658,2710938419,1070406884,3724842645,2084311110,443779575]},"printed":[]}
// Radix-sort histogram pass: 4-bit digits at a shift given by an override,
// counted per workgroup in shared atomics, then added to the global bins.
// (naga's own SPIR-V of it fails validation: tests/tests/shaders.rs ORACLE_GAPS.)
override SHIFT: u32 = 4u;
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>, 16>;
var<workgroup> local_bins: array<atomic<u32>, 16>;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    if (gid.x < arrayLength(&keys)) {
        let digit = (keys[gid.x] >> SHIFT) & 0xfu;
        atomicAdd(&local_bins[digit], 1u);
    }
    workgroupBarrier();
    let count = atomicLoad(&local_bins[li]);
    if (count != 0u) {
        atomicAdd(&bins[li], count);
    }
}
