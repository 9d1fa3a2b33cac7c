// Twin of tests/corpus/round_bits.xir: the rounding family on f32 and bit
// operations on u32, one element per invocation. XIR `round` is C round
// (halfway away from zero, sign of zero kept) and XIR `rint` rounds halfway
// to even; fract(x) = x - floor(x). Shift and rotate amounts are taken
// modulo 32.
//
// WGSL spellings: WGSL's round() rounds halfway to even, so it is XIR's
// rint, and C round is built from trunc (`round_away`). WGSL has no isnan,
// isinf or copysign: the flags test the bits (bitcast). WGSL has no rotates:
// they are two shifts. A constant shift amount >= 32 is a shader-creation
// error in WGSL, so the XIR kernel's `shl %v, 33` shifts by a runtime 33,
// which WGSL takes modulo 32.
@group(0) @binding(0) var<storage, read> f: array<f32>;
@group(0) @binding(1) var<storage, read> u: array<u32>;
@group(0) @binding(2) var<storage, read_write> fo: array<f32>;
@group(0) @binding(3) var<storage, read_write> uo: array<u32>;
@group(0) @binding(4) var<storage, read_write> flags: array<u32>;

// C round. x - trunc(x) is exact, so the halfway test is too (a naive
// floor(x + 0.5) rounds 0.49999997 up); trunc keeps the sign of a zero.
fn round_away(x: f32) -> f32 {
    let t = trunc(x);
    if abs(x - t) >= 0.5 {
        return t + sign(x);
    }
    return t;
}

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    let x = f[t];
    let fb = t * 6u;
    fo[fb] = round_away(x);
    fo[fb + 1u] = round(x);
    fo[fb + 2u] = floor(x);
    fo[fb + 3u] = ceil(x);
    fo[fb + 4u] = trunc(x);
    fo[fb + 5u] = fract(x);
    // flags: 1 = NaN, 2 = infinite, 4 = sign bit set (through copysign)
    let bits = bitcast<u32>(x);
    let magnitude = bits & 0x7fffffffu;
    let is_nan = magnitude > 0x7f800000u;
    let is_inf = magnitude == 0x7f800000u;
    // copysign(1.0, x): the sign bit of x on the bits of 1.0
    let signed = bitcast<f32>((bits & 0x80000000u) | 0x3f800000u);
    let neg = signed < 0.0;
    let fl1 = select(0u, 1u, is_nan);
    let fl2 = select(0u, 2u, is_inf);
    let fl4 = select(0u, 4u, neg);
    flags[t] = (fl1 | fl2) | fl4;
    let v = u[t];
    let ub = t * 8u;
    uo[ub] = countLeadingZeros(v);
    uo[ub + 1u] = countTrailingZeros(v);
    uo[ub + 2u] = countOneBits(v);
    uo[ub + 3u] = reverseBits(v);
    // rotate left by 4
    uo[ub + 4u] = (v << 4u) | (v >> 28u);
    // rotate right by 36, that is by 36 % 32 = 4
    const rot = 36u % 32u;
    uo[ub + 5u] = (v >> rot) | (v << (32u - rot));
    uo[ub + 6u] = ~v;
    var amount = 33u;
    uo[ub + 7u] = v << amount;
}
