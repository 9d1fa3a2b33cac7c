//! The interpreter's autodiff oracle (docs/autodiff.md): hand-derived
//! gradients for each family of differentiable operations, the intrinsics'
//! rules (seeds, accumulation, detach, inputs overwritten after the mark),
//! the errors a run can see, located, and central finite differences over
//! generated programs with branches and loops.

use proptest::prelude::*;
use serde_json::{json, Value as Json};
use xir::interp::{json_float, run_kernel, run_kernel_with, InterpError, Options, Outputs, Precision};
use xir::text::parse_module;

fn run(src: &str, inputs: Json) -> Result<Outputs, InterpError> {
    let m = parse_module(src, "test.xir").unwrap_or_else(|d| panic!("{}\n{src}", xir::diag::render(&d)));
    let k = m.func_ids().find(|&f| m.func(f).is_kernel()).expect("a kernel");
    let inputs = serde_json::from_value(inputs).expect("inputs");
    run_kernel(&m, k, &inputs).map_err(|e| e.with_file("test.xir"))
}

fn err(src: &str, inputs: Json) -> String {
    match run(src, inputs) {
        Ok(o) => panic!("expected an error, got {}", o.to_json()),
        Err(e) => e.to_string(),
    }
}

fn floats(o: &Outputs, name: &str) -> Vec<f64> {
    let b = o.buffers.get(name).unwrap_or_else(|| panic!("no buffer `{name}`"));
    // Negative zero, infinities and NaNs are written as strings ("-0.0").
    b.as_array().expect("array").iter().map(|x| json_float(x).unwrap_or_else(|| panic!("not a number: {x}"))).collect()
}

/// A kernel that reads `n` inputs of type `ty` from `%in`, marks a variable
/// holding each (`%v0`...; their loads are `%x0`...), runs `body` (which
/// defines `%y`), takes `backward %y` and writes the gradients, then the
/// value of `%y` when it is a scalar `ty`, to `%out`.
fn scalar_kernel(ty: &str, n: usize, body: &str, y_scalar: bool) -> String {
    let mut s = format!("kernel @k(%in: buffer<{ty}>, %out: buffer<{ty}>) block_size(1, 1, 1) {{\n^entry:\n");
    for k in 0..n {
        s += &format!("  %a{k} = buffer.read %in, u32 {k} : {ty}\n  %v{k} = alloca : {ty}\n  store %v{k}, %a{k}\n");
    }
    s += "  autodiff.scope body ^body, merge ^done\n^body:\n";
    for k in 0..n {
        s += &format!("  autodiff.requires_gradient %v{k}\n  %x{k} = load %v{k} : {ty}\n");
    }
    s += body;
    s += "  autodiff.backward %y\n";
    for k in 0..n {
        s += &format!("  %g{k} = autodiff.gradient %v{k} : {ty}\n  buffer.write %out, u32 {k}, %g{k}\n");
    }
    if y_scalar {
        s += &format!("  buffer.write %out, u32 {n}, %y\n");
    }
    s += "  br target ^done\n^done:\n  return\n}\n";
    s
}

/// Gradients of `%y` (an f64 function of `xs`) w.r.t. each input.
fn grad64(body: &str, xs: &[f64]) -> Vec<f64> {
    let src = scalar_kernel("f64", xs.len(), body, false);
    let o = run(&src, json!({"args": {"in": xs, "out": {"fill": 0, "len": xs.len()}}}))
        .unwrap_or_else(|e| panic!("{e}\n{src}"));
    floats(&o, "out")
}

fn close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        let ok = (g - w).abs() <= 1e-12 * w.abs().max(1.0) || (g.is_nan() && w.is_nan());
        assert!(ok, "{what}: got {got:?}, want {want:?}");
    }
}

#[test]
fn the_documented_scope_gives_two_x() {
    let src = include_str!("../../tests/autodiff/fixtures/doc_scope.xir");
    let o = run(src, json!({"args": {"x": 3.0, "out": [0]}})).unwrap();
    assert_eq!(floats(&o, "out"), vec![6.0]);
}

#[test]
fn unary_arithmetic_derivatives() {
    use std::f64::consts::{LN_10, LN_2};
    let x = 0.375f64;
    let cases: &[(&str, f64)] = &[
        ("neg", -1.0),
        ("abs", 1.0),
        ("sqrt", 0.5 / x.sqrt()),
        ("rsqrt", -0.5 * x.powf(-1.5)),
        ("exp", x.exp()),
        ("exp2", x.exp2() * LN_2),
        ("exp10", 10f64.powf(x) * LN_10),
        ("log", 1.0 / x),
        ("log2", 1.0 / (x * LN_2)),
        ("log10", 1.0 / (x * LN_10)),
        ("sin", x.cos()),
        ("cos", -x.sin()),
        ("tan", 1.0 / (x.cos() * x.cos())),
        ("asin", 1.0 / (1.0 - x * x).sqrt()),
        ("acos", -1.0 / (1.0 - x * x).sqrt()),
        ("atan", 1.0 / (1.0 + x * x)),
        ("sinh", x.cosh()),
        ("cosh", x.sinh()),
        ("tanh", 1.0 - x.tanh() * x.tanh()),
        ("asinh", 1.0 / (x * x + 1.0).sqrt()),
        ("atanh", 1.0 / (1.0 - x * x)),
        ("fract", 1.0),
        ("saturate", 1.0),
        // Piecewise constant: nothing propagates.
        ("floor", 0.0),
        ("ceil", 0.0),
        ("trunc", 0.0),
        ("round", 0.0),
        ("rint", 0.0),
    ];
    for (op, want) in cases {
        close(&grad64(&format!("  %y = {op} %x0 : f64\n"), &[x]), &[*want], op);
    }
    close(&grad64("  %y = acosh %x0 : f64\n", &[2.5]), &[1.0 / (2.5f64 * 2.5 - 1.0).sqrt()], "acosh");
    // Kinks take the sign bit and the closed interval.
    close(&grad64("  %y = abs %x0 : f64\n", &[-0.0]), &[-1.0], "abs(-0)");
    close(&grad64("  %y = abs %x0 : f64\n", &[0.0]), &[1.0], "abs(+0)");
    close(&grad64("  %y = saturate %x0 : f64\n", &[1.0]), &[1.0], "saturate(1)");
    close(&grad64("  %y = saturate %x0 : f64\n", &[1.5]), &[0.0], "saturate(1.5)");
}

#[test]
fn binary_and_ternary_arithmetic_derivatives() {
    let (a, b, c) = (1.5f64, -0.625f64, 0.25f64);
    let cases: &[(&str, [f64; 3])] = &[
        ("%y = add %x0, %x1 : f64", [1.0, 1.0, 0.0]),
        ("%y = sub %x0, %x1 : f64", [1.0, -1.0, 0.0]),
        ("%y = mul %x0, %x1 : f64", [b, a, 0.0]),
        ("%y = div %x0, %x1 : f64", [1.0 / b, -a / (b * b), 0.0]),
        // fmod: -trunc(a / b) to b.
        ("%y = mod %x0, %x1 : f64", [1.0, -(a / b).trunc(), 0.0]),
        ("%y = min %x0, %x1 : f64", [0.0, 1.0, 0.0]),
        ("%y = max %x0, %x1 : f64", [1.0, 0.0, 0.0]),
        ("%y = atan2 %x0, %x1 : f64", [b / (a * a + b * b), -a / (a * a + b * b), 0.0]),
        ("%y = pow %x0, %x2 : f64", [c * a.powf(c - 1.0), 0.0, a.powf(c) * a.ln()]),
        ("%y = copysign %x0, %x1 : f64", [-1.0, 0.0, 0.0]),
        ("%y = fma %x0, %x1, %x2 : f64", [b, a, 1.0]),
        ("%y = lerp %x0, %x1, %x2 : f64", [1.0 - c, c, b - a]),
        // clamp(x, lo, hi): x inside, else the bound returned.
        ("%y = clamp %x2, %x1, %x0 : f64", [0.0, 0.0, 1.0]),
        ("%y = clamp %x1, %x0, f64 2.0 : f64", [1.0, 0.0, 0.0]),
        ("%y = clamp %x0, f64 -1.0, %x1 : f64", [0.0, 1.0, 0.0]),
        ("%y = step %x0, %x1 : f64", [0.0, 0.0, 0.0]),
    ];
    for (body, want) in cases {
        close(&grad64(&format!("  {body}\n"), &[a, b, c]), want, body);
    }
    // Ties go to the first operand; a constant operand gets nothing.
    close(&grad64("  %y = min %x0, %x1 : f64\n", &[2.0, 2.0]), &[1.0, 0.0], "min tie");
    close(&grad64("  %y = max %x0, %x1 : f64\n", &[2.0, 2.0]), &[1.0, 0.0], "max tie");
    close(&grad64("  %y = mul %x0, f64 3.0 : f64\n", &[2.0]), &[3.0], "constant");
    // smoothstep(e0, e1, x) with t = (x - e0) / (e1 - e0) = 0.25.
    let (e0, e1, x) = (1.0f64, 3.0f64, 1.5f64);
    let t = (x - e0) / (e1 - e0);
    let dt = 6.0 * t * (1.0 - t);
    let want = [dt * (x - e1) / ((e1 - e0) * (e1 - e0)), dt * -(x - e0) / ((e1 - e0) * (e1 - e0)), dt / (e1 - e0)];
    close(&grad64("  %y = smoothstep %x0, %x1, %x2 : f64\n", &[e0, e1, x]), &want, "smoothstep");
    // A cast to f32 and back is the identity on the tangent; to an integer, zero.
    let body = "  %f = cast.static %x0 : f32\n  %y = cast.static %f : f64\n";
    close(&grad64(body, &[1.25]), &[1.0], "cast f32");
    let body = "  %i = cast.static %x0 : i32\n  %j = cast.static %i : f64\n  %y = add %j, %x1 : f64\n";
    close(&grad64(body, &[7.5, 1.0]), &[0.0, 1.0], "cast i32");
}

#[test]
fn vector_geometry_and_reduction_derivatives() {
    let body = |rest: &str| {
        format!("  %a = aggregate %x0, %x1, %x2 : vec<f64, 3>\n  %b = aggregate %x3, %x4, %x5 : vec<f64, 3>\n{rest}")
    };
    let xs = [1.0, 2.0, -2.0, 0.5, -1.0, 3.0];
    let (a, b) = ([1.0f64, 2.0, -2.0], [0.5f64, -1.0, 3.0]);
    // dot: d/da = b, d/db = a.
    close(&grad64(&body("  %y = dot %a, %b : f64\n"), &xs), &[0.5, -1.0, 3.0, 1.0, 2.0, -2.0], "dot");
    // |a| = 3: a / 3.
    close(&grad64(&body("  %y = length %a : f64\n"), &xs), &[1.0 / 3.0, 2.0 / 3.0, -2.0 / 3.0, 0.0, 0.0, 0.0], "len");
    close(&grad64(&body("  %y = length_squared %a : f64\n"), &xs), &[2.0, 4.0, -4.0, 0.0, 0.0, 0.0], "len2");
    // sum(cross(a, b)) = sum over the cyclic terms: d/da = b x (1,1,1)... by hand:
    // c = (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0)
    let want = [b[1] - b[2], b[2] - b[0], b[0] - b[1], a[2] - a[1], a[0] - a[2], a[1] - a[0]];
    close(&grad64(&body("  %c = cross %a, %b : vec<f64, 3>\n  %y = reduce_sum %c : f64\n"), &xs), &want, "cross");
    // normalize: d(n0)/da = (|a|^2 e0 - a0 a) / |a|^3.
    let want = [(9.0 - 1.0) / 27.0, -2.0 / 27.0, 2.0 / 27.0, 0.0, 0.0, 0.0];
    let rest = "  %n = normalize %a : vec<f64, 3>\n  %y = extract %n, u32 0 : f64\n";
    close(&grad64(&body(rest), &xs), &want, "normalize");
    // reflect(i, n) = i - 2 dot(n, i) n; lane 0: i0 - 2 (n.i) n0.
    let ni: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let want = [1.0 - 2.0 * b[0] * b[0], -2.0 * b[1] * b[0], -2.0 * b[2] * b[0], 0.0, 0.0, 0.0];
    let want = [want[0], want[1], want[2], -2.0 * (a[0] * b[0] + ni), -2.0 * a[1] * b[0], -2.0 * a[2] * b[0]];
    let rest = "  %r = reflect %a, %b : vec<f64, 3>\n  %y = extract %r, u32 0 : f64\n";
    close(&grad64(&body(rest), &xs), &want, "reflect");
    // faceforward(n, i, nref) with dot(nref, i) = dot(b, a) = -7.5 < 0: n itself.
    let rest = "  %f = faceforward %a, %a, %b : vec<f64, 3>\n  %y = reduce_sum %f : f64\n";
    close(&grad64(&body(rest), &xs), &[1.0, 1.0, 1.0, 0.0, 0.0, 0.0], "faceforward");
    let rest = "  %f = faceforward %a, %b, %b : vec<f64, 3>\n  %y = reduce_sum %f : f64\n";
    close(&grad64(&body(rest), &xs), &[-1.0, -1.0, -1.0, 0.0, 0.0, 0.0], "faceforward flipped");
    close(&grad64(&body("  %y = reduce_product %a : f64\n"), &xs), &[-4.0, -2.0, 2.0, 0.0, 0.0, 0.0], "product");
    close(&grad64(&body("  %y = reduce_min %b : f64\n"), &xs), &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "rmin");
    close(&grad64(&body("  %y = reduce_max %a : f64\n"), &xs), &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], "rmax");
    // The first lane attaining the maximum takes it.
    let xs2 = [2.0, 2.0, 1.0, 0.0, 0.0, 0.0];
    close(&grad64(&body("  %y = reduce_max %a : f64\n"), &xs2), &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], "rmax tie");
    // Lane-wise ops, shuffle and select carry each lane's tangent.
    let rest = "  %p = mul %a, %b : vec<f64, 3>\n  %s = shuffle %p, u32 2, u32 0 : vec<f64, 2>\n  %c = gt %x0, f64 0.0 : bool\n  %t = select %c, %s, %s : vec<f64, 2>\n  %y = reduce_sum %t : f64\n";
    close(&grad64(&body(rest), &xs), &[0.5, 0.0, 3.0, 1.0, 0.0, -2.0], "lanes");
}

/// `mat<f64, 2>` inputs: `%A` from x0..x3 (column-major), `%B` from x4..x7.
fn mat_body(rest: &str) -> String {
    format!(
        "  %c0 = aggregate %x0, %x1 : vec<f64, 2>\n  %c1 = aggregate %x2, %x3 : vec<f64, 2>\n  %A = aggregate %c0, %c1 : mat<f64, 2>\n  %d0 = aggregate %x4, %x5 : vec<f64, 2>\n  %d1 = aggregate %x6, %x7 : vec<f64, 2>\n  %B = aggregate %d0, %d1 : mat<f64, 2>\n  %u = aggregate %x4, %x5 : vec<f64, 2>\n{rest}"
    )
}

#[test]
fn matrix_derivatives() {
    // A = [[1, 3], [2, 4]] (rows), B = [[5, 7], [6, 8]]: columns A: (1,2), (3,4).
    let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let elem = |m: &str, c: u32, r: u32| {
        format!("  %col = extract {m}, u32 {c} : vec<f64, 2>\n  %y = extract %col, u32 {r} : f64\n")
    };
    // (A B)[row 0][col 1] = a00 b01 + a01 b11 = x0 x6 + x2 x7.
    let rest = format!("  %P = matrix_linalg_mul %A, %B : mat<f64, 2>\n{}", elem("%P", 1, 0));
    close(&grad64(&mat_body(&rest), &xs), &[7.0, 0.0, 8.0, 0.0, 0.0, 0.0, 1.0, 3.0], "mat*mat");
    // (A u)[1] = a10 u0 + a11 u1 = x1 x4 + x3 x5.
    let rest = "  %w = matrix_linalg_mul %A, %u : vec<f64, 2>\n  %y = extract %w, u32 1 : f64\n";
    close(&grad64(&mat_body(rest), &xs), &[0.0, 5.0, 0.0, 6.0, 2.0, 4.0, 0.0, 0.0], "mat*vec");
    // (u^T A)[1] = u . column 1 = x4 x2 + x5 x3.
    let rest = "  %w = matrix_linalg_mul %u, %A : vec<f64, 2>\n  %y = extract %w, u32 1 : f64\n";
    close(&grad64(&mat_body(rest), &xs), &[0.0, 0.0, 5.0, 6.0, 3.0, 4.0, 0.0, 0.0], "vec*mat");
    // det A = x0 x3 - x2 x1: (x3, -x2, -x1, x0).
    let rest = "  %y = matrix_determinant %A : f64\n";
    close(&grad64(&mat_body(rest), &xs), &[4.0, -3.0, -2.0, 1.0, 0.0, 0.0, 0.0, 0.0], "det");
    // inv(A)[col 0][row 0] = x3 / det; d/dx = (-x3 d det + det e3) / det^2, det = -2.
    let det = -2.0f64;
    let dd = [4.0, -3.0, -2.0, 1.0];
    let want: Vec<f64> = (0..8)
        .map(|k| if k < 4 { ((if k == 3 { det } else { 0.0 }) - 4.0 * dd[k]) / (det * det) } else { 0.0 })
        .collect();
    let rest = format!("  %I = matrix_inverse %A : mat<f64, 2>\n{}", elem("%I", 0, 0));
    close(&grad64(&mat_body(&rest), &xs), &want, "inverse");
    // outer_product(u, c0)[col 1][row 0] = u0 c0[1] = x4 x1.
    let rest = format!("  %O = outer_product %u, %c0 : mat<f64, 2>\n{}", elem("%O", 1, 0));
    close(&grad64(&mat_body(&rest), &xs), &[0.0, 5.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0], "outer vec");
    // (A B^T)[row 1][col 0] = a10 b00 + a11 b01 = x1 x4 + x3 x6.
    let rest = format!("  %O = outer_product %A, %B : mat<f64, 2>\n{}", elem("%O", 0, 1));
    close(&grad64(&mat_body(&rest), &xs), &[0.0, 5.0, 0.0, 7.0, 2.0, 0.0, 4.0, 0.0], "outer mat");
    // transpose(A)[col 0][row 1] = a01 = x2; comp_mul(A, B)[1][1] = x3 x7.
    let rest = format!("  %T = matrix_transpose %A : mat<f64, 2>\n{}", elem("%T", 0, 1));
    close(&grad64(&mat_body(&rest), &xs), &[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0], "transpose");
    let rest = format!("  %M = matrix_comp_mul %A, %B : mat<f64, 2>\n{}", elem("%M", 1, 1));
    close(&grad64(&mat_body(&rest), &xs), &[0.0, 0.0, 0.0, 8.0, 0.0, 0.0, 0.0, 4.0], "comp_mul");
}

#[test]
fn a_three_by_three_inverse_matches_the_closed_form() {
    // d inv(A) = -inv(A) dA inv(A): for the entry (0,0) and dA = e_ij,
    // d inv[0][0] / d a_ij = -inv[0][i] inv[j][0] (row, column).
    let a = [[2.0f64, 0.0, 1.0], [1.0, 3.0, 0.0], [0.0, 1.0, 4.0]]; // columns
    let mut body = String::new();
    for c in 0..3 {
        body += &format!("  %c{c} = aggregate %x{}, %x{}, %x{} : vec<f64, 3>\n", 3 * c, 3 * c + 1, 3 * c + 2);
    }
    body += "  %A = aggregate %c0, %c1, %c2 : mat<f64, 3>\n  %I = matrix_inverse %A : mat<f64, 3>\n";
    body += "  %i0 = extract %I, u32 0 : vec<f64, 3>\n  %y = extract %i0, u32 0 : f64\n";
    let xs: Vec<f64> = a.iter().flatten().copied().collect();
    let got = grad64(&body, &xs);
    // The inverse by Gauss-Jordan elimination on [A | I] (rows), independent
    // of the interpreter's cofactors.
    let mut m = [[0.0f64; 6]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, col) in a.iter().enumerate() {
            row[c] = col[r];
        }
        row[3 + r] = 1.0;
    }
    for p in 0..3 {
        let piv = (p..3).max_by(|&i, &j| m[i][p].abs().total_cmp(&m[j][p].abs())).unwrap();
        m.swap(p, piv);
        let d = m[p][p];
        m[p].iter_mut().for_each(|x| *x /= d);
        for r in 0..3 {
            if r != p {
                let (f, pivot) = (m[r][p], m[p]);
                m[r].iter_mut().zip(pivot).for_each(|(x, y)| *x -= f * y);
            }
        }
    }
    let inv = |r: usize, c: usize| m[r][3 + c];
    // x index 3 c + r is a_{r c}.
    let want: Vec<f64> = (0..9).map(|k| -inv(0, k % 3) * inv(k / 3, 0)).collect();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-12, "got {got:?}, want {want:?}");
    }
    // The determinant's gradient is the cofactor matrix: det * inv^T.
    let body = body.replace(
        "  %I = matrix_inverse %A : mat<f64, 3>\n  %i0 = extract %I, u32 0 : vec<f64, 3>\n  %y = extract %i0, u32 0 : f64\n",
        "  %y = matrix_determinant %A : f64\n",
    );
    let got = grad64(&body, &xs);
    let det = 2.0 * (3.0 * 4.0 - 1.0 * 0.0) - 0.0 + 1.0 * (1.0 * 1.0 - 3.0 * 0.0);
    let want: Vec<f64> = (0..9).map(|k| det * inv(k / 3, k % 3)).collect();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-12, "got {got:?}, want {want:?}");
    }
}

#[test]
fn structs_arrays_and_f32_leaves() {
    // A struct {f32, i32, vec<f32, 2>} and an array<f32, 2>: the gradient has
    // zero in the integer leaf; f32 gradients round once when read.
    let src = r#"
kernel @k(%out: buffer<f32>, %iout: buffer<i32>) block_size(1, 1, 1) {
^entry:
  %s = alloca : struct<align 4>{f32, i32, vec<f32, 2>}
  %arr = alloca : array<f32, 2>
  %v = aggregate f32 0.5, f32 -2.0 : vec<f32, 2>
  %init = aggregate f32 3.0, i32 7, %v : struct<align 4>{f32, i32, vec<f32, 2>}
  store %s, %init
  %p0 = gep %arr, u32 0 : f32
  store %p0, f32 1.5
  %p1 = gep %arr, u32 1 : f32
  store %p1, f32 0.25
  autodiff.scope body ^body, merge ^done
^body:
  autodiff.requires_gradient %s
  autodiff.requires_gradient %arr
  %f = gep %s, u32 0 : f32
  %a = load %f : f32
  %vp = gep %s, u32 2 : vec<f32, 2>
  %vv = load %vp : vec<f32, 2>
  %v1 = extract %vv, u32 1 : f32
  %q = load %p1 : f32
  %t = mul %a, %v1 : f32
  %y = mul %t, %q : f32
  autodiff.backward %y
  %gs = autodiff.gradient %s : struct<align 4>{f32, i32, vec<f32, 2>}
  %ga = autodiff.gradient %arr : array<f32, 2>
  %g0 = extract %gs, u32 0 : f32
  %gi = extract %gs, u32 1 : i32
  %gv = extract %gs, u32 2 : vec<f32, 2>
  %gv0 = extract %gv, u32 0 : f32
  %gv1 = extract %gv, u32 1 : f32
  %ga0 = extract %ga, u32 0 : f32
  %ga1 = extract %ga, u32 1 : f32
  buffer.write %out, u32 0, %g0
  buffer.write %out, u32 1, %gv0
  buffer.write %out, u32 2, %gv1
  buffer.write %out, u32 3, %ga0
  buffer.write %out, u32 4, %ga1
  buffer.write %iout, u32 0, %gi
  br target ^done
^done:
  return
}
"#;
    let o = run(src, json!({"args": {"out": {"fill": 9, "len": 5}, "iout": [9]}})).unwrap();
    // y = a * v1 * q with a = 3, v1 = -2, q = 0.25.
    assert_eq!(floats(&o, "out"), vec![-0.5, 0.0, 0.75, 0.0, -6.0]);
    assert_eq!(o.buffers["iout"], json!([0]));
}

#[test]
fn seeds_accumulation_detach_and_overwritten_inputs() {
    // A marker's seed replaces the ones; the last marker wins.
    let body = "  %y = aggregate %x0, %x1 : vec<f64, 2>\n  %s1 = aggregate f64 9.0, f64 9.0 : vec<f64, 2>\n  autodiff.gradient_marker %y, %s1\n  %s2 = aggregate f64 2.0, f64 -3.0 : vec<f64, 2>\n  autodiff.gradient_marker %y, %s2\n";
    close(&grad64(body, &[1.0, 1.0]), &[2.0, -3.0], "seed");
    // Ones in every leaf without a marker.
    close(&grad64("  %y = aggregate %x0, %x0 : vec<f64, 2>\n", &[1.0]), &[2.0], "ones");
    // A custom derivative: detach, then accumulate by hand (3 x^2 for x^3).
    let body = "  %d = autodiff.detach %x0 : f64\n  %sq = mul %d, %d : f64\n  %y = mul %sq, %x1 : f64\n  %c = mul %sq, f64 3.0 : f64\n  autodiff.accumulate_gradient %v0, %c\n";
    close(&grad64(body, &[2.0, 5.0]), &[12.0, 4.0], "accumulate");
    // A store after the mark makes a new value; the gradient belongs to the input.
    let body = "  %t = mul %x0, f64 3.0 : f64\n  store %v0, %t\n  %l = load %v0 : f64\n  %y = mul %l, %l : f64\n";
    close(&grad64(body, &[2.0]), &[36.0], "overwritten");
    // Backward through an lvalue means the value it holds there.
    let src = scalar_kernel("f64", 1, "  %t = mul %x0, %x0 : f64\n  store %v0, %t\n  %y = load %v0 : f64\n", false)
        .replace("autodiff.backward %y", "autodiff.backward %v0");
    let o = run(&src, json!({"args": {"in": [3.0], "out": [0]}})).unwrap();
    assert_eq!(floats(&o, "out"), vec![6.0]);
}

#[test]
fn control_flow_buffers_and_the_end_of_a_scope() {
    // The branch taken and the loop's trip count come from the input; the
    // gradient is that of the code that ran. A buffer read is a constant and
    // a buffer write stores the primal value.
    let src = r#"
kernel @k(%x: f64, %c: buffer<f64>, %out: buffer<f64>) block_size(1, 1, 1) {
^entry:
  %v = alloca : f64
  %acc = alloca : f64
  %k = alloca : u32
  store %v, %x
  autodiff.scope body ^body, merge ^done
^body:
  autodiff.requires_gradient %v
  %a = load %v : f64
  store %acc, %a
  store %k, u32 0
  %pos = gt %a, f64 0.0 : bool
  if %pos, true ^then, false ^else, merge ^join
^then:
  %cv = buffer.read %c, u32 0 : f64
  %t = mul %a, %cv : f64
  store %acc, %t
  br target ^join
^else:
  %e = exp %a : f64
  store %acc, %e
  br target ^join
^join:
  %n = cast.static %a : u32
  loop prepare ^prep, body ^lb, update ^step, merge ^exit
^prep:
  %kv = load %k : u32
  %more = lt %kv, %n : bool
  cond_br %more, true ^lb, false ^exit
^lb:
  %s = load %acc : f64
  %s2 = mul %s, %a : f64
  store %acc, %s2
  br target ^step
^step:
  %kk = load %k : u32
  %k1 = add %kk, u32 1 : u32
  store %k, %k1
  br target ^prep
^exit:
  %y = load %acc : f64
  buffer.write %out, u32 1, %y
  autodiff.backward %y
  %g = autodiff.gradient %v : f64
  buffer.write %out, u32 0, %g
  br target ^done
^done:
  %after = load %acc : f64
  %twice = add %after, %after : f64
  buffer.write %out, u32 2, %twice
  return
}
"#;
    // x = 2: y = (c x) x^2 = c x^3 with c = 5: dy/dx = 15 x^2 = 60.
    let o = run(src, json!({"args": {"x": 2.0, "c": [5.0], "out": {"fill": 0, "len": 3}}})).unwrap();
    assert_eq!(floats(&o, "out"), vec![60.0, 40.0, 80.0]);
    // x = -1: y = exp(x), no loop trip (cast of -1 to u32 is 0).
    let o = run(src, json!({"args": {"x": -1.0, "c": [5.0], "out": {"fill": 0, "len": 3}}})).unwrap();
    let e = (-1.0f64).exp();
    assert_eq!(floats(&o, "out"), vec![e, e, 2.0 * e]);
}

#[test]
fn a_scope_runs_again_with_fresh_inputs() {
    // A scope inside a loop: each run starts with no inputs and no gradient.
    let src = r#"
kernel @k(%out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : f32
  %k = alloca : u32
  store %k, u32 0
  loop prepare ^prep, body ^lb, update ^step, merge ^exit
^prep:
  %kv = load %k : u32
  %more = lt %kv, u32 3 : bool
  cond_br %more, true ^lb, false ^exit
^lb:
  %kf = cast.static %kv : f32
  store %v, %kf
  autodiff.scope body ^body, merge ^after
^body:
  autodiff.requires_gradient %v
  %a = load %v : f32
  %y = mul %a, %a : f32
  autodiff.backward %y
  %g = autodiff.gradient %v : f32
  buffer.write %out, %kv, %g
  br target ^after
^after:
  br target ^step
^step:
  %k1 = add %kv, u32 1 : u32
  store %k, %k1
  br target ^prep
^exit:
  return
}
"#;
    let o = run(src, json!({"args": {"out": {"fill": 9, "len": 3}}})).unwrap();
    assert_eq!(floats(&o, "out"), vec![0.0, 2.0, 4.0]);
}

/// The documented kernel with `body` in place of the multiplication
/// (`%a` is the marked value, `%y` the result), for the refusals.
fn refusal(body: &str) -> String {
    format!(
        r#"
kernel @k(%x: f32, %out: buffer<f32>, %u: buffer<u32>) block_size(1, 1, 1) {{
^entry:
  %v = alloca : f32
  %w = alloca : f32
  store %v, %x
  store %w, %x
  autodiff.scope body ^body, merge ^done
^body:
  autodiff.requires_gradient %v
  %a = load %v : f32
{body}
  br target ^done
^done:
  return
}}
"#
    )
}

#[test]
fn what_a_scope_may_not_do_is_refused_where_it_happens() {
    // Each body is well formed but for the one thing refused. The
    // structural refusals are `xir::autodiff::check_scopes`'s, run before
    // the scope starts, so they are the pass's words at the pass's place
    // (passes/tests/autodiff.rs holds the two to that); the others are seen
    // when they happen.
    let inputs = json!({"args": {"x": 3.0, "out": [0], "u": [0]}});
    let cases: &[(&str, &str)] = &[
        (
            "  %b = cast.bitwise %a : u32\n  buffer.write %u, u32 0, %b\n  autodiff.backward %a",
            "test.xir:12:3: error: [interp] non-differentiable operation on a gradient path (in @k, bb1, inst7)",
        ),
        (
            "  %i = cast.static %a : u32\n  %f = cast.static %i : f32\n  %y = atomic.fetch_add %out, u32 0, %a : f32\n  autodiff.backward %a",
            "test.xir:14:3: error: [interp] non-differentiable operation on a gradient path (in @k, bb1, inst9)",
        ),
        (
            "  print \"{}\", %a\n  autodiff.backward %a",
            "test.xir:12:3: error: [interp] non-differentiable operation on a gradient path (in @k, bb1, inst7)",
        ),
        (
            "  buffer.write %out, u32 0, %a\n  %r = buffer.read %out, u32 0 : f32\n  autodiff.backward %a",
            "test.xir:13:3: error: [interp] a buffer written in the autodiff scope is also read in it; gradients do not flow through buffer memory (in @k, bb1, inst8)",
        ),
        (
            "  %r = buffer.read %out, u32 0 : f32\n  buffer.write %out, u32 0, %a\n  autodiff.backward %a",
            "test.xir:13:3: error: [interp] a buffer written in the autodiff scope is also read in it; gradients do not flow through buffer memory (in @k, bb1, inst8)",
        ),
        (
            "  autodiff.scope body ^b2, merge ^d2\n^b2:\n  br target ^d2\n^d2:\n  autodiff.backward %a",
            "test.xir:12:3: error: [interp] a scope nested in another autodiff scope (in @k, bb1, inst7)",
        ),
        (
            "  autodiff.backward %a\n  return",
            "test.xir:13:3: error: [interp] `return` inside an autodiff scope; the scope must end at its merge (in @k, bb1, inst8)",
        ),
        (
            "  autodiff.backward %a\n  autodiff.backward %a",
            "test.xir:13:3: error: [interp] a second `autodiff.backward` in one scope (in @k, bb1, inst8)",
        ),
        (
            "  %g = autodiff.gradient %v : f32\n  autodiff.backward %a",
            "test.xir:12:3: error: [interp] `autodiff.gradient` is read before the scope's backward has run (in @k, bb1, inst7)",
        ),
        (
            "  autodiff.backward %a\n  autodiff.requires_gradient %w",
            "test.xir:13:3: error: [interp] `autodiff.requires_gradient` must be at the scope's top level, before the backward (in @k, bb1, inst8)",
        ),
        (
            "  autodiff.requires_gradient %v\n  autodiff.backward %a",
            "test.xir:12:3: error: [interp] this variable already requires a gradient in this scope (in @k, bb1, inst7)",
        ),
        (
            "  autodiff.backward %a\n  %g = autodiff.gradient %w : f32",
            "test.xir:13:3: error: [interp] `autodiff.gradient` names a variable no `requires_gradient` of this scope marks (in @k, bb1, inst8)",
        ),
        (
            "  %s = mul %a, %a : f32\n  autodiff.gradient_marker %s, f32 2.0\n  autodiff.backward %a",
            "test.xir:13:3: error: [interp] `autodiff.gradient_marker` names a value the scope's backward does not start from (in @k, bb1, inst8)",
        ),
        (
            "  %y = mul %a, %a : f32",
            "test.xir:8:3: error: [interp] the scope has no `autodiff.backward` (in @k, bb0, inst4)",
        ),
    ];
    let mut bad = Vec::new();
    for (body, want) in cases {
        let got = err(&refusal(body), inputs.clone());
        if &got != want {
            bad.push(format!("{body}\n  got:  {got}\n  want: {want}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Intrinsics outside a scope; `detach` is the identity there.
    let src = r#"
kernel @k(%out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %v = alloca : f32
  store %v, f32 1.0
  %d = autodiff.detach f32 2.0 : f32
  buffer.write %out, u32 0, %d
  autodiff.requires_gradient %v
  return
}
"#;
    assert_eq!(
        err(src, json!({"args": {"out": [0]}})),
        "test.xir:8:3: error: [interp] `autodiff.requires_gradient` outside an autodiff scope (in @k, bb0, inst4)"
    );
    // A function the scope calls is checked when it is called: an
    // intrinsic there is outside every scope, and a scope there is nested.
    let body = "  %y = call @f, %a : f32\n  autodiff.backward %y";
    let callee = "\ncallable @f(%p: f32) -> f32 {\n^entry:\n  %g = autodiff.gradient %p : f32\n  return %p\n}\n";
    assert_eq!(
        err(&(refusal(body) + callee), inputs.clone()),
        "test.xir:21:3: error: [interp] `autodiff.gradient` outside an autodiff scope (in @f, bb0, inst0)"
    );
    let callee = "\ncallable @f(%p: f32) -> f32 {\n^entry:\n  %v = alloca : f32\n  store %v, %p\n  autodiff.scope body ^b, merge ^m\n^b:\n  autodiff.requires_gradient %v\n  autodiff.backward %p\n  br target ^m\n^m:\n  return %p\n}\n";
    assert_eq!(
        err(&(refusal(body) + callee), inputs.clone()),
        "test.xir:23:3: error: [interp] a scope nested in another autodiff scope (in @f, bb0, inst2)"
    );
}

#[test]
fn gradients_flow_through_calls() {
    // y = f(a) with f(p) = p * p by value, then g(&t, y) with t = t * y
    // through a reference: y' = t0 * 2a ... with t0 = a: d(a * a^2)/da = 3a^2.
    let body = "  %y = call @f, %a : f32
  %t = alloca : f32
  store %t, %a
  call @g, %t, %y
  %z = load %t : f32
  autodiff.backward %z
  %gr = autodiff.gradient %v : f32
  buffer.write %out, u32 0, %gr";
    let callees = "
callable @f(%p: f32) -> f32 {
^entry:
  %r = mul %p, %p : f32
  return %r
}

callable @g(%t: ref f32, %k: f32) -> void {
^entry:
  %o = load %t : f32
  %n = mul %o, %k : f32
  store %t, %n
  return
}
";
    let o = run(&(refusal(body) + callees), json!({"args": {"x": 3.0, "out": [0], "u": [0]}})).unwrap();
    assert_eq!(floats(&o, "out"), vec![27.0]);
    // Callees the pass refuses to inline run here: two returns (relu), and
    // recursion (x / 2 / 2).
    let body = "  %r = call @relu, %a : f32
  %h = call @halve, %r, u32 2 : f32
  autodiff.backward %h
  %gr = autodiff.gradient %v : f32
  buffer.write %out, u32 0, %gr";
    let callees = "
callable @relu(%p: f32) -> f32 {
^entry:
  %pos = gt %p, f32 0.0 : bool
  if %pos, true ^keep, false ^zero, merge ^join
^keep:
  return %p
^zero:
  return f32 0.0
^join:
  unreachable
}

callable @halve(%p: f32, %n: u32) -> f32 {
^entry:
  %r = alloca : f32
  store %r, %p
  %z = eq %n, u32 0 : bool
  if %z, true ^stop, false ^more, merge ^join
^stop:
  br target ^join
^more:
  %n1 = sub %n, u32 1 : u32
  %q = mul %p, f32 0.5 : f32
  %d = call @halve, %q, %n1 : f32
  store %r, %d
  br target ^join
^join:
  %v = load %r : f32
  return %v
}
";
    for (x, g) in [(3.0, 0.25), (-3.0, 0.0)] {
        let o = run(&(refusal(body) + callees), json!({"args": {"x": x, "out": [9], "u": [0]}})).unwrap();
        assert_eq!(floats(&o, "out"), vec![g], "x = {x}");
    }
}

#[test]
fn precision_runs_refuse_scopes() {
    let m = parse_module(&refusal("  autodiff.backward %a"), "test.xir").unwrap();
    let inputs = serde_json::from_value(json!({"args": {"x": 3.0, "out": [0], "u": [0]}})).unwrap();
    let opts = Options { precision: Some(Precision::default()), ..Options::default() };
    let e = run_kernel_with(&m, m.find_function("k").unwrap(), &inputs, &opts).unwrap_err();
    assert_eq!(e.message, "autodiff scopes are not run under the precision shadow");
}

// ---- central finite differences over generated programs ------------------

/// One generated step: an operation code and operand picks.
#[derive(Clone, Debug)]
struct Step {
    op: u8,
    a: u8,
    b: u8,
    c: u8,
}

/// Generates an f64 program over the marked inputs `%x0..%x2` from `steps`:
/// straight-line smooth operations, if/else on a comparison (the margin is
/// written to `%out` so that cases near the switch are skipped) and bounded
/// loops. Every intermediate stays bounded (products of `tanh`, `sin`,
/// `cos` factors), so the finite differences are well conditioned.
struct Gen {
    body: String,
    vals: Vec<String>,
    next: usize,
    margins: usize,
}

impl Gen {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%t{}", self.next)
    }
    fn pick(&self, k: u8) -> String {
        self.vals[k as usize % self.vals.len()].clone()
    }
    /// One smooth operation on available values; returns its result.
    fn smooth(&mut self, s: &Step) -> String {
        let (a, b, c) = (self.pick(s.a), self.pick(s.b), self.pick(s.c));
        let r = self.fresh();
        let line = match s.op % 14 {
            0 => format!("{r} = add {a}, {b} : f64"),
            1 => format!("{r} = sub {a}, {b} : f64"),
            2 => {
                let t = self.fresh();
                self.body += &format!("  {t} = tanh {b} : f64\n");
                format!("{r} = mul {a}, {t} : f64")
            }
            3 => format!("{r} = sin {a} : f64"),
            4 => format!("{r} = cos {a} : f64"),
            5 => format!("{r} = tanh {a} : f64"),
            6 => format!("{r} = atan {a} : f64"),
            7 => {
                let t = self.fresh();
                self.body += &format!("  {t} = tanh {a} : f64\n");
                format!("{r} = exp {t} : f64")
            }
            8 => {
                let (t, u) = (self.fresh(), self.fresh());
                self.body += &format!("  {t} = mul {a}, {a} : f64\n  {u} = add {t}, f64 1.0 : f64\n");
                format!("{r} = sqrt {u} : f64")
            }
            9 => {
                let (t, u) = (self.fresh(), self.fresh());
                self.body += &format!("  {t} = mul {b}, {b} : f64\n  {u} = add {t}, f64 1.0 : f64\n");
                format!("{r} = div {a}, {u} : f64")
            }
            10 => {
                let t = self.fresh();
                self.body += &format!("  {t} = sin {b} : f64\n");
                format!("{r} = fma {a}, {t}, {c} : f64")
            }
            11 => {
                let t = self.fresh();
                self.body += &format!("  {t} = cos {c} : f64\n");
                format!("{r} = lerp {a}, {b}, {t} : f64")
            }
            12 => {
                let (t, u) = (self.fresh(), self.fresh());
                self.body += &format!("  {t} = mul {a}, {a} : f64\n  {u} = add {t}, f64 1.0 : f64\n");
                format!("{r} = log {u} : f64")
            }
            _ => {
                let (t, u) = (self.fresh(), self.fresh());
                self.body +=
                    &format!("  {t} = aggregate {a}, {b} : vec<f64, 2>\n  {u} = aggregate {c}, {a} : vec<f64, 2>\n");
                let w = self.fresh();
                self.body += &format!("  {w} = dot {t}, {u} : f64\n");
                format!("{r} = tanh {w} : f64")
            }
        };
        self.body += &format!("  {line}\n");
        r
    }

    fn program(steps: &[Step]) -> (String, usize) {
        let mut g =
            Gen { body: String::new(), vals: vec!["%x0".into(), "%x1".into(), "%x2".into()], next: 0, margins: 0 };
        let mut label = 0;
        let mut allocas = String::new();
        for s in steps {
            match s.op / 14 % 4 {
                // if/else: both arms compute into a variable.
                1 => {
                    label += 1;
                    let (a, b) = (g.pick(s.a), g.pick(s.b));
                    let (m, cnd, var) = (g.fresh(), g.fresh(), format!("%r{label}"));
                    allocas += &format!("  {var} = alloca : f64\n");
                    g.body += &format!("  {m} = sub {a}, {b} : f64\n  buffer.write %out, u32 {}, {m}\n", 4 + g.margins);
                    g.margins += 1;
                    g.body += &format!("  {cnd} = lt {a}, {b} : bool\n  if {cnd}, true ^t{label}, false ^e{label}, merge ^m{label}\n^t{label}:\n");
                    let saved = g.vals.clone();
                    let x = g.smooth(s);
                    g.body += &format!("  store {var}, {x}\n  br target ^m{label}\n^e{label}:\n");
                    g.vals = saved.clone();
                    let x = g.smooth(&Step { op: s.op.wrapping_add(5), ..s.clone() });
                    g.body += &format!("  store {var}, {x}\n  br target ^m{label}\n^m{label}:\n");
                    g.vals = saved;
                    let r = g.fresh();
                    g.body += &format!("  {r} = load {var} : f64\n");
                    g.vals.push(r);
                }
                // A loop of 1..=3 trips updating an accumulator.
                2 => {
                    label += 1;
                    let (acc, k) = (format!("%acc{label}"), format!("%k{label}"));
                    allocas += &format!("  {acc} = alloca : f64\n  {k} = alloca : u32\n");
                    let init = g.pick(s.a);
                    let trips = 1 + s.c % 3;
                    g.body += &format!("  store {acc}, {init}\n  store {k}, u32 0\n  loop prepare ^p{label}, body ^b{label}, update ^u{label}, merge ^x{label}\n^p{label}:\n");
                    let (kv, more) = (g.fresh(), g.fresh());
                    g.body += &format!("  {kv} = load {k} : u32\n  {more} = lt {kv}, u32 {trips} : bool\n  cond_br {more}, true ^b{label}, false ^x{label}\n^b{label}:\n");
                    let saved = g.vals.clone();
                    let cur = g.fresh();
                    g.body += &format!("  {cur} = load {acc} : f64\n");
                    g.vals = vec![cur, g.pick(s.b)];
                    let x = g.smooth(&Step { a: 0, b: 1, c: 0, ..s.clone() });
                    g.body += &format!("  store {acc}, {x}\n  br target ^u{label}\n^u{label}:\n");
                    let (kk, k1) = (g.fresh(), g.fresh());
                    g.body += &format!("  {kk} = load {k} : u32\n  {k1} = add {kk}, u32 1 : u32\n  store {k}, {k1}\n  br target ^p{label}\n^x{label}:\n");
                    g.vals = saved;
                    let r = g.fresh();
                    g.body += &format!("  {r} = load {acc} : f64\n");
                    g.vals.push(r);
                }
                _ => {
                    let r = g.smooth(s);
                    g.vals.push(r);
                }
            }
        }
        // y: the sum of the last three values, so that every input tends to matter.
        let n = g.vals.len();
        let (p, q, r) = (g.vals[n - 1].clone(), g.vals[n - 2].clone(), g.vals[n - 3].clone());
        g.body += &format!("  %s1 = add {p}, {q} : f64\n  %y = add %s1, {r} : f64\n");
        let src = scalar_kernel("f64", 3, &g.body, true);
        let src = src.replace("^entry:\n", &format!("^entry:\n{allocas}"));
        (src, g.margins)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn gradients_agree_with_central_finite_differences(
        steps in prop::collection::vec((0u8..56, 0u8..16, 0u8..16, 0u8..16).prop_map(|(op, a, b, c)| Step { op, a, b, c }), 1..10),
        xs in prop::array::uniform3(-2.0f64..2.0),
    ) {
        let (src, margins) = Gen::program(&steps);
        let m = parse_module(&src, "gen.xir").unwrap_or_else(|d| panic!("{}\n{src}", xir::diag::render(&d)));
        let k = m.find_function("k").unwrap();
        let len = 4 + margins;
        let eval = |x: &[f64]| -> Vec<f64> {
            let inputs = serde_json::from_value(json!({"args": {"in": x, "out": {"fill": 0, "len": len}}})).unwrap();
            let o = run_kernel(&m, k, &inputs).unwrap_or_else(|e| panic!("{e}\n{src}"));
            floats(&o, "out")
        };
        let base = eval(&xs);
        // Skip points within reach of a branch switch.
        prop_assume!(base[4..].iter().all(|m| m.abs() > 1e-3));
        for i in 0..3 {
            // A central difference at step `h`, and the rounding of its `y`s
            // (a few ulps each, divided by `2h`).
            let difference = |h: f64| {
                let (mut up, mut down) = (xs, xs);
                up[i] += h;
                down[i] -= h;
                let (yu, yd) = (eval(&up)[3], eval(&down)[3]);
                ((yu - yd) / (2.0 * h), 8.0 * f64::EPSILON * yu.abs().max(yd.abs()) / (2.0 * h))
            };
            let h = 1e-6 * xs[i].abs().max(1.0);
            let ((fd, rounding), (fd_half, _)) = (difference(h), difference(h / 2.0));
            // The difference's own error, estimated from halving the step
            // (it shrinks as h^2: the error at `h` is 4/3 of the change):
            // large only near a steep point (a division by almost zero),
            // where a difference quotient cannot be trusted to 1e-6.
            let truncation = 2.0 * (fd - fd_half).abs();
            let g = base[i];
            prop_assert!(
                (g - fd).abs() <= 1e-6 * g.abs().max(1.0) + rounding + truncation,
                "input {i}: gradient {g}, finite difference {fd} (at half the step {fd_half})\n{src}"
            );
        }
    }
}
