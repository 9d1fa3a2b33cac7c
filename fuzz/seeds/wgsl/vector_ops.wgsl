// Twin of tests/corpus/vector_ops.xir: vector arithmetic and geometry on
// vec3<f32>, vec4<f32> and vec2<i32> (one invocation): dot, cross, length,
// normalize, swizzles (XIR shuffle), extract, a lane assignment (XIR
// insert), lane-wise compare with all/any, lane sums and maxima folded in
// order (XIR reduce_sum / reduce_max) and a vector select.
@group(0) @binding(0) var<uniform> a: vec3<f32>;
@group(0) @binding(1) var<uniform> b: vec3<f32>;
@group(0) @binding(2) var<uniform> q: vec4<f32>;
@group(0) @binding(3) var<uniform> iv: vec2<i32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> ints: array<i32>;

@compute @workgroup_size(1, 1, 1)
fn main() {
    out[0] = dot(a, b);
    let c = cross(a, b);
    out[1] = c.x;
    out[2] = c.y;
    out[3] = c.z;
    // The cross product is orthogonal to both inputs.
    out[4] = dot(c, a);
    out[5] = length(b);
    let nb = normalize(b);
    out[6] = nb.z;
    // Reverse the lanes of q, then take (w, x) of the original.
    let rq = q.wzyx;
    out[7] = rq.x;
    let wx = q.wx;
    out[8] = wx.y;
    // Replace lane 1 of q, then sum the lanes.
    var q2 = q;
    q2.y = 100.0;
    out[9] = ((q2.x + q2.y) + q2.z) + q2.w;
    out[10] = max(max(max(q.x, q.y), q.z), q.w);
    // Lane-wise compare, all / any, and a scalar-condition vector select.
    let gt = a > b;
    let picked = select(b, a, any(gt));
    out[11] = picked.x;
    out[12] = select(0.0, 1.0, all(gt));
    let sum3 = a + b;
    let scaled = sum3 * vec3<f32>(0.5, 0.5, 0.5);
    out[13] = scaled.y;
    // Integer vectors: wrapping add, lane extract, construction.
    let iv2 = iv + vec2<i32>(1, -1);
    ints[0] = iv2.x;
    ints[1] = iv2.y;
    let built = vec2<i32>(iv2.y, iv2.x);
    let diff = built - iv2;
    ints[2] = diff.x;
}
