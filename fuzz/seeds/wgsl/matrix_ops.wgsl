// Twin of tests/corpus/matrix_ops.xir: matrix operations on mat3x3<f32> (one
// invocation): transpose, determinant, inverse, component-wise ops, outer
// product, matrix * vector and vector * matrix. Inputs are small integers,
// so every result is exact.
//
// WGSL lacks some of the XIR opcodes, written out here: inverse (adjugate /
// determinant, see `inverse3`), the component-wise product and negation
// (column by column) and the outer product (columns u * u[j]). The XIR
// kernel computes the determinant and inverse in f64 and rounds once; on
// these inputs f32 gives the same values.
@group(0) @binding(0) var<uniform> m: mat3x3<f32>;
@group(0) @binding(1) var<uniform> d: mat3x3<f32>;
@group(0) @binding(2) var<uniform> u: vec3<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

// The rows of the inverse are the cross products of pairs of columns over
// the determinant.
fn inverse3(a: mat3x3<f32>) -> mat3x3<f32> {
    let det = determinant(a);
    let rows = mat3x3<f32>(cross(a[1], a[2]), cross(a[2], a[0]), cross(a[0], a[1]));
    let adj = transpose(rows);
    return mat3x3<f32>(adj[0] / det, adj[1] / det, adj[2] / det);
}

@compute @workgroup_size(1, 1, 1)
fn main() {
    let t = transpose(m);
    // t[0][1] == m[1][0]
    out[0] = t[0][1];
    out[1] = determinant(m);
    let inv = inverse3(d);
    out[2] = inv[1][1];
    let sum = m + t;
    out[3] = sum[2][1];
    let had = mat3x3<f32>(m[0] * m[0], m[1] * m[1], m[2] * m[2]);
    out[4] = had[2][2];
    let neg = mat3x3<f32>(-m[0], -m[1], -m[2]);
    out[5] = neg[0][0];
    let op = mat3x3<f32>(u * u.x, u * u.y, u * u.z);
    out[6] = op[1][2];
    let mu = m * u;
    out[7] = mu.x;
    let um = u * m;
    out[8] = um.x;
    // m * inverse(d) * d == m, checked on one entry
    let mi = m * inv;
    let mid = mi * d;
    out[9] = mid[1][2];
    let col = m[2];
    out[10] = (col.x + col.y) + col.z;
    let mrow = mat3x3<f32>(u, u, u);
    out[11] = determinant(mrow);
}
