// Twin of tests/corpus/nested_loops.xir: 3x3 integer convolution of an 8x8
// image with clamp-to-edge addressing: two nested `for` loops over signed
// offsets dy, dx in [-1, 1]. Products and sums wrap (i32).
//
// The XIR value argument `w: array<i32, 9>` cannot be a uniform here (an
// array<i32, 9> has a 4-byte stride; uniform arrays need 16), so it is a
// read-only storage binding of the same name.
@group(0) @binding(0) var<storage, read> img: array<i32>;
@group(0) @binding(1) var<storage, read> w: array<i32, 9>;
@group(0) @binding(2) var<storage, read_write> out: array<i32>;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let x = i32(gid.x);
    let y = i32(gid.y);
    var weights = w;
    var acc = 0i;
    for (var dy = -1i; dy <= 1i; dy++) {
        let sy = clamp(y + dy, 0i, 7i);
        for (var dx = -1i; dx <= 1i; dx++) {
            let sx = clamp(x + dx, 0i, 7i);
            let pixel = img[sy * 8i + sx];
            // weight index (dy + 1) * 3 + (dx + 1)
            let wv = weights[(dy + 1i) * 3i + (dx + 1i)];
            acc = acc + pixel * wv;
        }
    }
    out[gid.y * 8u + gid.x] = acc;
}
