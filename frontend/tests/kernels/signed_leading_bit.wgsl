// inputs: {"dispatch": [8, 1, 1], "args": {"input": [-256.0, -255.0, -257.0, -1.0, 0.0, 256.0, -128.0, -2.0], "output": {"fill": 0, "len": 8}}}
// expect: {"buffers":{"input":[-256.0,-255.0,-257.0,-1.0,0.0,256.0,-128.0,-2.0],"output":[7,7,8,-1,-1,8,6,0]},"printed":[]}
// `firstLeadingBit` of a negative `i32` converted from a float: the highest
// bit that differs from the sign (-256 -> 7, -1 -> -1). Found by the random
// WGSL differential test (seed 5251): naga writes `FindSMsb` of
// `ConvertFToS`, and lavapipe (Mesa, LLVM 15) computes it as the highest
// set bit of the magnitude (-256 -> 8, -1 -> 0, -2 -> 1); the same
// `FindSMsb` of an `i32` read from a buffer is right there. Our module
// computes it without `FindSMsb` (frontend `bit_builtin`).
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<i32>;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    output[gid.x] = firstLeadingBit(i32(input[gid.x]));
}
