// Twin of tests/corpus/matmul.xir: 4x4 matrix product. Invocation i (0..3)
// writes column i of M = a * b (out[4 i + r] = M[i][r]), lane i of M * v, and
// dot(M[i], v) (or -1 when the component-wise sum disagrees with dot).
// Columns and lanes are picked by dynamic index from local copies.
@group(0) @binding(0) var<uniform> a: mat4x4<f32>;
@group(0) @binding(1) var<uniform> b: mat4x4<f32>;
@group(0) @binding(2) var<uniform> v: vec4<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> mv: array<f32>;
@group(0) @binding(5) var<storage, read_write> dots: array<f32>;

@compute @workgroup_size(4, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let m = a * b;
    let prod = m * v;
    var mvar = m;
    let col = mvar[i];
    let base = i * 4u;
    out[base] = col.x;
    out[base + 1u] = col.y;
    out[base + 2u] = col.z;
    out[base + 3u] = col.w;
    var pvar = prod;
    mv[i] = pvar[i];
    // Component-wise vector ops: (col * v + col) - col, its lanes summed in
    // order (XIR reduce_sum), against dot.
    let cv = col * v;
    let cvc = cv + col;
    let back = cvc - col;
    let s = ((back.x + back.y) + back.z) + back.w;
    let d = dot(col, v);
    dots[i] = select(-1.0, d, s == d);
}
