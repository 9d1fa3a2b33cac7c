// Reduced from wgslsmith seed 330 (tests/tests/wgsl_differential.rs skips that seed).
// naga's SPIR-V of this shader passes spirv-val, yet lavapipe (Mesa 25.0.7,
// LLVM 15) crashes while it builds the compute pipeline: a loop inside a switch
// case whose if / else-if / else arms all end in continue or break, followed by
// unreachable statements. A driver bug, not a wrong result; kept to recheck
// on newer drivers (xir-run FILE --oracle naga).
@group(0) @binding(0) var<storage, read> input: array<i32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
var<workgroup> wg: array<u32, 4>;
struct S2 {
    m0: u32,
    m1: f32,
    m2: i32,
}
fn fun3(a0: i32, a1: bool, a2: f32) -> u32 {
    loop {
        var it7 = 0u;
        loop {
            if it7 >= 2u {
                break;
            }
        }
    }
    return (u32(reverseBits(a0)) ^ min((u32(input[7u % arrayLength(&input)]) | u32(input[4u % arrayLength(&input)])), 1u));
}
@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let base = gid.x * 4u;
    let lidx = gid.x % 4u;
    let wgv = wg[(lidx + 1u) % 4u];
    var st13 = S2(wgv, clamp(f32(clamp(input[gid.x % arrayLength(&input)], -1024i, 1024i)), -10.0f, -5.0f), reverseBits(input[2u % arrayLength(&input)]));
    switch (u32((2u != wgv)) % 6u) {
        case 6u: {
            loop {
                if (input[wgv % arrayLength(&input)] < 0i) {
                    continue;
                } else if (!(input[wgv % arrayLength(&input)] < 0i)) {
                    break;
                } else {
                    break;
                }
                if ((i32(st13.m0) == (st13.m2 % st13.m2)) || (input[6u % arrayLength(&input)] < 0i)) {
                } else {
                    output[base + 3u] = countTrailingZeros(fun3(st13.m2, bool(st13.m0), st13.m1));
                }
            }
        }
        default: {
        }
    }
}