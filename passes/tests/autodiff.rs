//! The `autodiff` pass against central finite differences, op family by op
//! family, in `f64` (docs/autodiff.md, "Precision"): each case is a body
//! computing `%y` from scalar inputs `%a0..`; the pass's gradient (run on
//! the interpreter) must match `(y(x + h) - y(x - h)) / 2h` within 1e-6
//! relative error. The interpreter's own forward-mode oracle is compared in
//! `passes/tests/autodiff_oracle.rs`; exact outputs and refusals are file
//! tests (`tests/filetests/autodiff/`).

#[macro_use]
mod autodiff_support;
mod control_support;

use autodiff_support::inputs;

/// The shared kernel, for bodies written without a final newline.
fn kernel(n: usize, body: &str, with_scope: bool) -> String {
    autodiff_support::kernel(n, &format!("{body}\n"), with_scope)
}

use control_support::{check, parse, run, run_pass};

/// The pass's gradients at `xs`.
fn pass_gradients(n: usize, body: &str, xs: &[f64]) -> Vec<f64> {
    let mut m = parse(&kernel(n, body, true));
    run_pass(&mut m, xir_passes::autodiff::decl()).unwrap_or_else(|e| panic!("autodiff failed: {e:?}"));
    check(&m, "xir.structured");
    let out = run(&m, "k", &inputs(xs));
    numbers!(out.buffers["out"])
}

/// `y` at `xs`, without any scope.
fn value(n: usize, body: &str, xs: &[f64]) -> f64 {
    let m = parse(&kernel(n, body, false));
    let out = run(&m, "k", &inputs(xs));
    numbers!(out.buffers["val"])[0]
}

fn finite_differences(n: usize, body: &str, xs: &[f64]) -> Vec<f64> {
    (0..n)
        .map(|k| {
            let h = 1e-6 * xs[k].abs().max(1.0);
            let mut p = xs.to_vec();
            let mut q = xs.to_vec();
            p[k] += h;
            q[k] -= h;
            (value(n, body, &p) - value(n, body, &q)) / (2.0 * h)
        })
        .collect()
}

fn agree(name: &str, n: usize, body: &str, xs: &[f64]) {
    let got = pass_gradients(n, body, xs);
    let want = finite_differences(n, body, xs);
    assert_eq!(got.len(), n, "{name}: {got:?}");
    for k in 0..n {
        let tol = 1e-6 * want[k].abs().max(1.0);
        assert!((got[k] - want[k]).abs() <= tol, "{name}: d/dx{k}: pass {} vs finite differences {}", got[k], want[k]);
    }
}

#[test]
fn scalar_arithmetic_matches_finite_differences() {
    let cases: &[(&str, usize, &str, &[f64])] = &[
        ("mul", 2, "  %y = mul %a0, %a1 : f64", &[1.5, -2.25]),
        ("div", 2, "  %y = div %a0, %a1 : f64", &[1.5, -2.25]),
        ("sub-neg", 2, "  %d = sub %a0, %a1 : f64\n  %y = neg %d : f64", &[0.5, 3.0]),
        ("mod", 2, "  %y = mod %a0, %a1 : f64", &[7.3, 2.1]),
        ("fma", 3, "  %y = fma %a0, %a1, %a2 : f64", &[0.5, 3.0, -1.0]),
        ("lerp", 3, "  %y = lerp %a0, %a1, %a2 : f64", &[0.5, 3.0, 0.25]),
        ("min", 2, "  %y = min %a0, %a1 : f64", &[0.5, 3.0]),
        ("max", 2, "  %y = max %a0, %a1 : f64", &[0.5, 3.0]),
        ("clamp-inside", 3, "  %y = clamp %a0, %a1, %a2 : f64", &[0.5, 0.0, 1.0]),
        ("clamp-below", 3, "  %y = clamp %a0, %a1, %a2 : f64", &[-0.5, 0.0, 1.0]),
        ("clamp-above", 3, "  %y = clamp %a0, %a1, %a2 : f64", &[1.5, 0.0, 1.0]),
        ("saturate", 1, "  %y = saturate %a0 : f64", &[0.3]),
        ("abs", 1, "  %y = abs %a0 : f64", &[-0.7]),
        ("copysign", 2, "  %y = copysign %a0, %a1 : f64", &[0.7, -2.0]),
        ("fract", 1, "  %y = fract %a0 : f64", &[2.3]),
        ("sqrt-rsqrt", 1, "  %s = sqrt %a0 : f64\n  %r = rsqrt %a0 : f64\n  %y = add %s, %r : f64", &[2.5]),
        ("exp-family", 1, "  %e = exp %a0 : f64\n  %e2 = exp2 %a0 : f64\n  %e10 = exp10 %a0 : f64\n  %s = add %e, %e2 : f64\n  %y = add %s, %e10 : f64", &[0.3]),
        ("log-family", 1, "  %l = log %a0 : f64\n  %l2 = log2 %a0 : f64\n  %l10 = log10 %a0 : f64\n  %s = add %l, %l2 : f64\n  %y = add %s, %l10 : f64", &[1.7]),
        ("pow", 2, "  %y = pow %a0, %a1 : f64", &[1.7, 2.3]),
        ("trig", 1, "  %s = sin %a0 : f64\n  %c = cos %a0 : f64\n  %t = tan %a0 : f64\n  %u = mul %s, %c : f64\n  %y = add %u, %t : f64", &[0.4]),
        ("inverse-trig", 1, "  %s = asin %a0 : f64\n  %c = acos %a0 : f64\n  %t = atan %a0 : f64\n  %u = mul %s, %c : f64\n  %y = add %u, %t : f64", &[0.4]),
        ("atan2", 2, "  %y = atan2 %a0, %a1 : f64", &[0.4, -1.3]),
        ("hyperbolic", 1, "  %s = sinh %a0 : f64\n  %c = cosh %a0 : f64\n  %t = tanh %a0 : f64\n  %u = mul %s, %c : f64\n  %y = add %u, %t : f64", &[0.4]),
        ("inverse-hyperbolic", 1, "  %s = asinh %a0 : f64\n  %b = add %a0, f64 1.5 : f64\n  %c = acosh %b : f64\n  %t = atanh %a0 : f64\n  %u = mul %s, %c : f64\n  %y = add %u, %t : f64", &[0.4]),
        ("smoothstep", 3, "  %y = smoothstep %a0, %a1, %a2 : f64", &[0.0, 2.0, 0.7]),
        ("select", 2, "  %c = lt %a0, %a1 : bool\n  %y = select %c, %a0, %a1 : f64", &[0.5, 3.0]),
        ("floor-is-flat", 1, "  %f = floor %a0 : f64\n  %y = add %f, %a0 : f64", &[2.3]),
        ("detach", 1, "  %d = autodiff.detach %a0 : f64\n  %y = mul %d, %a0 : f64", &[2.5]),
    ];
    for &(name, n, body, xs) in cases {
        if name == "detach" {
            // The detached copy is a constant: d(c x)/dx = c, not 2x.
            assert_eq!(pass_gradients(n, body, xs), vec![2.5], "{name}");
            continue;
        }
        agree(name, n, body, xs);
    }
}

#[test]
fn vector_and_geometry_ops_match_finite_differences() {
    // Six inputs: p = (a0, a1, a2), q = (a3, a4, a5).
    let pq = "  %p = aggregate %a0, %a1, %a2 : vec<f64, 3>\n  %q = aggregate %a3, %a4, %a5 : vec<f64, 3>\n";
    let xs = [0.3, -1.2, 0.8, 1.1, 0.4, -0.6];
    let cases: &[(&str, &str)] = &[
        ("dot", "  %y = dot %p, %q : f64"),
        ("cross", "  %c = cross %p, %q : vec<f64, 3>\n  %w = mul %c, %c : vec<f64, 3>\n  %y = reduce_sum %w : f64"),
        ("length", "  %y = length %p : f64"),
        ("length_squared", "  %y = length_squared %q : f64"),
        ("normalize", "  %n = normalize %p : vec<f64, 3>\n  %y = dot %n, %q : f64"),
        ("reflect", "  %r = reflect %p, %q : vec<f64, 3>\n  %y = reduce_sum %r : f64"),
        ("faceforward", "  %f = faceforward %p, %q, %q : vec<f64, 3>\n  %y = reduce_sum %f : f64"),
        ("reduce_product", "  %y = reduce_product %p : f64"),
        ("reduce_min", "  %y = reduce_min %q : f64"),
        ("reduce_max", "  %y = reduce_max %q : f64"),
        ("lane-wise", "  %s = sin %p : vec<f64, 3>\n  %m = mul %s, %q : vec<f64, 3>\n  %y = reduce_sum %m : f64"),
        ("extract-insert", "  %e = extract %p, u32 1 : f64\n  %i = insert %q, %e, u32 2 : vec<f64, 3>\n  %m = mul %i, %p : vec<f64, 3>\n  %y = reduce_sum %m : f64"),
        ("shuffle", "  %s = shuffle %p, u32 2, u32 2, u32 0 : vec<f64, 3>\n  %y = dot %s, %q : f64"),
    ];
    for &(name, body) in cases {
        agree(name, 6, &format!("{pq}{body}"), &xs);
    }
}

#[test]
fn matrix_ops_match_finite_differences() {
    // Eight inputs: A = columns (a0, a1), (a2, a3); B = (a4, a5), (a6, a7).
    let ab = "  %c0 = aggregate %a0, %a1 : vec<f64, 2>\n  %c1 = aggregate %a2, %a3 : vec<f64, 2>\n  %A = aggregate %c0, %c1 : mat<f64, 2>\n  %d0 = aggregate %a4, %a5 : vec<f64, 2>\n  %d1 = aggregate %a6, %a7 : vec<f64, 2>\n  %B = aggregate %d0, %d1 : mat<f64, 2>\n";
    // y = sum of the entries of a matrix M: v^T M w with v = w = (1, 1).
    let sum = |m: &str| {
        format!("  %s0 = extract {m}, u32 0 : vec<f64, 2>\n  %s1 = extract {m}, u32 1 : vec<f64, 2>\n  %t0 = reduce_sum %s0 : f64\n  %t1 = reduce_sum %s1 : f64\n  %y = add %t0, %t1 : f64")
    };
    let xs = [1.2, -0.4, 0.3, 0.9, -0.7, 0.5, 1.1, 0.2];
    let cases: Vec<(&str, String)> = vec![
        ("linalg-mat-mat", format!("  %M = matrix_linalg_mul %A, %B : mat<f64, 2>\n  %W = matrix_comp_mul %M, %M : mat<f64, 2>\n{}", sum("%W"))),
        ("linalg-mat-vec", "  %w = matrix_linalg_mul %A, %d1 : vec<f64, 2>\n  %y = dot %w, %d0 : f64".to_string()),
        ("linalg-vec-mat", "  %w = matrix_linalg_mul %d1, %A : vec<f64, 2>\n  %y = dot %w, %d0 : f64".to_string()),
        ("outer-vectors", format!("  %M = outer_product %c0, %d1 : mat<f64, 2>\n  %W = matrix_comp_mul %M, %B : mat<f64, 2>\n{}", sum("%W"))),
        ("outer-matrices", format!("  %M = outer_product %A, %B : mat<f64, 2>\n  %W = matrix_comp_mul %M, %A : mat<f64, 2>\n{}", sum("%W"))),
        ("transpose", format!("  %T = matrix_transpose %A : mat<f64, 2>\n  %W = matrix_comp_mul %T, %B : mat<f64, 2>\n{}", sum("%W"))),
        ("inverse", format!("  %I = matrix_inverse %A : mat<f64, 2>\n  %W = matrix_comp_mul %I, %B : mat<f64, 2>\n{}", sum("%W"))),
        ("determinant", "  %y = matrix_determinant %A : f64".to_string()),
        ("comp-ops", format!("  %S = matrix_comp_sub %A, %B : mat<f64, 2>\n  %D = matrix_comp_div %S, %B : mat<f64, 2>\n  %N = matrix_comp_neg %D : mat<f64, 2>\n  %P = matrix_comp_add %N, %A : mat<f64, 2>\n{}", sum("%P"))),
    ];
    for (name, body) in cases {
        agree(name, 8, &format!("{ab}{body}"), &xs);
    }
}

#[test]
fn branches_take_the_gradient_of_the_code_that_ran() {
    // y = a0 > a1 ? a0 * a0 : a1 * a0 * 3, through memory, with a nested if
    // in the true arm that only sometimes doubles.
    let body = "  %t = alloca : f64
  %c = gt %a0, %a1 : bool
  if %c, true ^then, false ^else, merge ^join
^then:
  %sq = mul %a0, %a0 : f64
  store %t, %sq
  %big = gt %sq, f64 4.0 : bool
  if %big, true ^dbl, false ^keep, merge ^inner
^dbl:
  %cur = load %t : f64
  %two = mul %cur, f64 2.0 : f64
  store %t, %two
  br target ^inner
^keep:
  br target ^inner
^inner:
  br target ^join
^else:
  %p = mul %a1, %a0 : f64
  %p3 = mul %p, f64 3.0 : f64
  store %t, %p3
  br target ^join
^join:
  %y = load %t : f64";
    for xs in [[3.0, 1.0], [1.5, 1.0], [0.5, 2.0]] {
        agree("if", 2, body, &xs);
    }
}

#[test]
fn switch_arms_replay_backwards() {
    let body = "  %t = alloca : f64
  store %t, %a0
  %s = cast.static %a1 : i32
  switch %s, merge ^m, default ^d, case 0 ^z, case 1 ^o
^z:
  %u = mul %a0, %a0 : f64
  store %t, %u
  br target ^m
^o:
  %w = sin %a0 : f64
  store %t, %w
  br target ^m
^d:
  br target ^m
^m:
  %l = load %t : f64
  %y = mul %l, %a1 : f64";
    // Selectors away from integers: a finite difference must not cross a case.
    for xs in [[0.7, 0.5], [0.7, 1.5], [0.7, 5.5]] {
        agree("switch", 2, body, &xs);
    }
}

#[test]
fn variables_overwritten_after_the_mark_keep_the_inputs_gradient() {
    // v0 = v0 * v0 after the mark: the gradient is of the input value.
    let body = "  %sq = mul %a0, %a0 : f64
  store %v0, %sq
  %b = load %v0 : f64
  %y = mul %b, %a0 : f64";
    // y = x^3: 3 x^2
    assert_eq!(pass_gradients(1, body, &[2.0]), vec![12.0]);
}

/// `y = x^n` by a counted loop (`for (i = 0; i < n; i++) acc *= x`).
fn power_loop(n: u32) -> String {
    format!(
        "  %acc = alloca : f64
  store %acc, f64 1.0
  %i = alloca : u32
  store %i, u32 0
  loop prepare ^p, body ^b, update ^u, merge ^m
^p:
  %iv = load %i : u32
  %more = lt %iv, u32 {n} : bool
  cond_br %more, true ^b, false ^m
^b:
  %av = load %acc : f64
  %x = load %v0 : f64
  %prod = mul %av, %x : f64
  store %acc, %prod
  br target ^u
^u:
  %iv2 = load %i : u32
  %inext = add %iv2, u32 1 : u32
  store %i, %inext
  br target ^p
^m:
  %y = load %acc : f64"
    )
}

#[test]
fn bounded_loops_are_expanded_and_differentiated() {
    for n in [0u32, 1, 3, 7] {
        let got = pass_gradients(1, &power_loop(n), &[1.25]);
        let want = if n == 0 { 0.0 } else { f64::from(n) * 1.25f64.powi(n as i32 - 1) };
        assert!((got[0] - want).abs() <= 1e-12 * want.abs().max(1.0), "x^{n}: {} vs {want}", got[0]);
    }
}

#[test]
fn the_expansion_limit_is_exact() {
    let run_with = |n: u32| {
        let mut m = parse(&kernel(1, &power_loop(n), true));
        let mut reg = xir::pass::PassRegistry::new();
        xir_passes::register_all(&mut reg);
        let opts: ron::Value = ron::from_str("(max_unrolled_iterations: 4)").unwrap();
        let pass = (reg.get("autodiff").unwrap().create)(Some(&opts)).unwrap();
        let mut cache = xir::pass::AnalysisCache::default();
        let mut cx = xir::pass::PassContext { analyses: &mut cache, opt_level: 0, fast_math: false };
        let before = xir::text::print_module(&m);
        let r = pass.run(&mut m, &mut cx);
        (r, before == xir::text::print_module(&m))
    };
    assert!(run_with(4).0.is_ok(), "4 iterations is the limit");
    let (r, unchanged) = run_with(5);
    let e = r.expect_err("5 iterations is one over");
    assert!(e.diagnostics[0].message.contains("runs more than 4 times"), "{:?}", e.diagnostics);
    assert!(unchanged, "a refused module is left as it was");
}

#[test]
fn two_scopes_in_one_function_are_differentiated_independently() {
    let src = "kernel @k(%x: f64, %out: buffer<f64>) block_size(1, 1, 1) {
^entry:
  %v = alloca : f64
  store %v, %x
  autodiff.scope body ^s1, merge ^m1
^s1:
  autodiff.requires_gradient %v
  %a = load %v : f64
  %y = mul %a, %a : f64
  autodiff.backward %y
  %g = autodiff.gradient %v : f64
  buffer.write %out, u32 0, %g
  br target ^m1
^m1:
  autodiff.scope body ^s2, merge ^m2
^s2:
  autodiff.requires_gradient %v
  %b = load %v : f64
  %z = sin %b : f64
  autodiff.backward %z
  %h = autodiff.gradient %v : f64
  buffer.write %out, u32 1, %h
  br target ^m2
^m2:
  return
}
";
    let mut m = parse(src);
    run_pass(&mut m, xir_passes::autodiff::decl()).unwrap_or_else(|e| panic!("{e:?}"));
    check(&m, "xir.structured");
    let out = run(&m, "k", r#"{"args": {"x": 0.5, "out": {"fill": 0, "len": 2}}}"#);
    assert_eq!(numbers!(out.buffers["out"]), vec![1.0, 0.5f64.cos()]);
}

/// `agree` for a body that calls the `callables` (text appended after the
/// kernel), and the interpreter's own forward mode on the same scope held
/// to finite differences too: both implementations differentiate through
/// calls (docs/autodiff.md, "Calls").
fn agree_with_calls(name: &str, n: usize, body: &str, callables: &str, xs: &[f64]) {
    let with = |scope: bool| format!("{}{callables}", kernel(n, body, scope));
    let y = |p: &[f64]| numbers!(run(&parse(&with(false)), "k", &inputs(p)).buffers["val"])[0];
    let mut m = parse(&with(true));
    let oracle = numbers!(run(&m, "k", &inputs(xs)).buffers["out"]);
    let out = run_pass(&mut m, xir_passes::autodiff::decl()).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    check(&m, "xir.structured");
    assert!(out.stats.iter().any(|(k, v)| k == "calls_inlined" && v != "0"), "{name}: {:?}", out.stats);
    let pass = numbers!(run(&m, "k", &inputs(xs)).buffers["out"]);
    for k in 0..n {
        let h = 1e-6 * xs[k].abs().max(1.0);
        let (mut p, mut q) = (xs.to_vec(), xs.to_vec());
        p[k] += h;
        q[k] -= h;
        let fd = (y(&p) - y(&q)) / (2.0 * h);
        let tol = 1e-6 * fd.abs().max(1.0);
        assert!((pass[k] - fd).abs() <= tol, "{name}: d/dx{k}: pass {} vs finite differences {fd}", pass[k]);
        assert!((oracle[k] - fd).abs() <= tol, "{name}: d/dx{k}: interpreter {} vs finite differences {fd}", oracle[k]);
    }
}

/// Helpers for the call tests: values in and out, a vector, a reference
/// argument written through, and a callee that calls.
const HELPERS: &str = "
callable @mix(%p: f64, %q: f64) -> f64 {
^entry:
  %m = mul %p, %q : f64
  %s = sin %p : f64
  %r = add %m, %s : f64
  return %r
}

callable @norm(%v: vec<f64, 3>) -> f64 {
^entry:
  %d = dot %v, %v : f64
  %l = sqrt %d : f64
  return %l
}

callable @scale_into(%acc: ref f64, %k: f64) -> void {
^entry:
  %o = load %acc : f64
  %n = mul %o, %k : f64
  %t = tanh %n : f64
  store %acc, %t
  return
}

callable @outer(%p: f64, %q: f64) -> f64 {
^entry:
  %t = alloca : f64
  %u = call @mix, %p, %q : f64
  store %t, %u
  call @scale_into, %t, %p
  %w = load %t : f64
  %r = mul %w, %q : f64
  return %r
}
";

#[test]
fn calls_are_differentiated_through_their_callees() {
    let xs = [0.7, -1.3, 0.4];
    let cases: &[(&str, &str)] = &[
        ("value-args", "  %y = call @mix, %a0, %a1 : f64"),
        (
            "vector-arg",
            "  %v = aggregate %a0, %a1, %a2 : vec<f64, 3>\n  %l = call @norm, %v : f64\n  %y = mul %l, %a0 : f64",
        ),
        ("reference-arg", "  %t = alloca : f64\n  store %t, %a2\n  call @scale_into, %t, %a0\n  %y = load %t : f64"),
        ("called-twice", "  %u = call @mix, %a0, %a1 : f64\n  %w = call @mix, %u, %a2 : f64\n  %y = mul %u, %w : f64"),
        ("callee-calls", "  %u = call @outer, %a0, %a1 : f64\n  %y = add %u, %a2 : f64"),
        (
            "in-a-branch",
            "  %t = alloca : f64
  store %t, %a2
  %c = lt %a0, %a1 : bool
  if %c, true ^then, false ^else, merge ^join
^then:
  %u = call @mix, %a0, %a2 : f64
  store %t, %u
  br target ^join
^else:
  call @scale_into, %t, %a1
  br target ^join
^join:
  %y = load %t : f64",
        ),
    ];
    for &(name, body) in cases {
        agree_with_calls(name, 3, body, HELPERS, &xs);
        // The other arm of the branch.
        agree_with_calls(name, 3, body, HELPERS, &[-0.9, 0.3, 1.1]);
    }
}

#[test]
fn a_call_in_a_counted_loop_is_inlined_then_expanded() {
    // acc = tanh(acc * x), three times, through a reference argument.
    let body = "  %acc = alloca : f64
  store %acc, %a1
  %i = alloca : u32
  store %i, u32 0
  loop prepare ^p, body ^b, update ^u, merge ^m
^p:
  %iv = load %i : u32
  %more = lt %iv, u32 3 : bool
  cond_br %more, true ^b, false ^m
^b:
  call @scale_into, %acc, %a0
  br target ^u
^u:
  %iv2 = load %i : u32
  %inext = add %iv2, u32 1 : u32
  store %i, %inext
  br target ^p
^m:
  %y = load %acc : f64";
    agree_with_calls("loop", 2, body, HELPERS, &[0.8, 1.2]);
}

#[test]
fn a_recursive_callee_before_the_backward_is_refused_and_nothing_changes() {
    let recursive = "
callable @down(%p: f64, %n: u32) -> f64 {
^entry:
  %r = alloca : f64
  store %r, %p
  %z = eq %n, u32 0 : bool
  if %z, true ^stop, false ^more, merge ^join
^stop:
  br target ^join
^more:
  %n1 = sub %n, u32 1 : u32
  %h = mul %p, f64 0.5 : f64
  %d = call @down, %h, %n1 : f64
  store %r, %d
  br target ^join
^join:
  %v = load %r : f64
  return %v
}
";
    let src = format!("{}{recursive}", kernel(1, "  %y = call @down, %a0, u32 2 : f64", true));
    // The interpreter runs it: (x / 2) / 2.
    let original = parse(&src);
    assert_eq!(numbers!(run(&original, "k", &inputs(&[3.0])).buffers["out"]), vec![0.25]);
    // The pass refuses it, at the call, and leaves the module as it was.
    let mut m = parse(&src);
    let before = xir::text::print_module(&m);
    let e = run_pass(&mut m, xir_passes::autodiff::decl()).expect_err("recursion is refused");
    assert_eq!(e.diagnostics.len(), 1, "{:?}", e.diagnostics);
    let d = &e.diagnostics[0];
    assert_eq!(
        d.message,
        "a call to the recursive `@down` before the backward: the pass differentiates a callee by inlining it"
    );
    assert_eq!(d.function.as_deref(), Some("k"));
    let call = d.inst.expect("located at an instruction");
    assert_eq!(m.func(m.find_function("k").unwrap()).opcode(call), xir::Opcode::Call);
    assert_eq!(before, xir::text::print_module(&m), "a refused module is left as it was");
}

#[test]
fn the_pass_and_the_interpreter_refuse_malformed_scopes_alike() {
    // Both run `xir::autodiff::check_scopes`: the same words at the same
    // instruction (the interpreter before the scope starts, the pass before
    // it changes anything).
    let bodies = [
        "  autodiff.scope body ^b2, merge ^d2\n^b2:\n  br target ^d2\n^d2:\n  autodiff.backward %a",
        "  autodiff.backward %a\n  return",
        "  autodiff.backward %a\n  autodiff.backward %a",
        "  %g = autodiff.gradient %v : f64\n  autodiff.backward %a",
        "  autodiff.backward %a\n  autodiff.requires_gradient %w",
        "  autodiff.requires_gradient %v\n  autodiff.backward %a",
        "  autodiff.backward %a\n  %g = autodiff.gradient %w : f64",
        "  %s = mul %a, %a : f64\n  autodiff.gradient_marker %s, f64 2.0\n  autodiff.backward %a",
        "  %y = mul %a, %a : f64",
        "  %u = alloca : u32\n  autodiff.requires_gradient %u\n  autodiff.backward %a",
    ];
    for body in bodies {
        let src = format!(
            "kernel @k(%x: f64, %out: buffer<f64>) block_size(1, 1, 1) {{
^entry:
  %v = alloca : f64
  %w = alloca : f64
  store %v, %x
  store %w, %x
  autodiff.scope body ^body, merge ^done
^body:
  autodiff.requires_gradient %v
  %a = load %v : f64
{body}
  br target ^done
^done:
  return
}}
"
        );
        let mut m = parse(&src);
        let k = m.find_function("k").unwrap();
        let inputs = xir::interp::Inputs::from_json(r#"{"args": {"x": 1.5, "out": [0]}}"#).unwrap();
        let interp = xir::interp::run_kernel(&m, k, &inputs).expect_err(body);
        let pass = run_pass(&mut m, xir_passes::autodiff::decl()).expect_err(body);
        let d = &pass.diagnostics[0];
        assert_eq!((&interp.message, interp.inst), (&d.message, d.inst), "{body}");
    }
    // A scope in a function the scope calls: nested, at the callee's scope.
    let src = format!(
        "{}
callable @f(%p: f64) -> f64 {{
^entry:
  %v = alloca : f64
  store %v, %p
  autodiff.scope body ^b, merge ^m
^b:
  autodiff.requires_gradient %v
  autodiff.backward %p
  br target ^m
^m:
  return %p
}}
",
        kernel(1, "  %y = call @f, %a0 : f64", true)
    );
    let mut m = parse(&src);
    let interp = xir::interp::run_kernel(
        &m,
        m.find_function("k").unwrap(),
        &xir::interp::Inputs::from_json(&inputs(&[1.5])).unwrap(),
    )
    .expect_err("nested");
    let pass = run_pass(&mut m, xir_passes::autodiff::decl()).expect_err("nested");
    let d = &pass.diagnostics[0];
    assert_eq!(interp.message, "a scope nested in another autodiff scope");
    assert_eq!((&interp.message, interp.function.as_deref(), interp.inst), (&d.message, d.function.as_deref(), d.inst));
}

#[test]
fn a_value_the_output_does_not_read_leaves_the_gradient_finite() {
    // `%dead` overflows (exp of 1000) and carries a gradient, but `%y` does
    // not read it: its adjoint is zero, and replaying it would add
    // `0 * inf = NaN` to `d/dx0`. The sweep replays only what reaches `%y`
    // (found by the oracle property test, `autodiff_oracle.rs`).
    let body = "  %big = mul %a0, f64 1000.0 : f64\n  %dead = exp %big : f64\n  %y = mul %a0, f64 2.0 : f64";
    assert_eq!(pass_gradients(1, body, &[1.0]), [2.0]);
    // Through a variable too: a store nothing loads again.
    let body = "  %v = alloca : f64\n  %big = mul %a0, f64 1000.0 : f64\n  %dead = exp %big : f64\n  store %v, %dead\n  %y = mul %a0, f64 2.0 : f64";
    assert_eq!(pass_gradients(1, body, &[1.0]), [2.0]);
}
