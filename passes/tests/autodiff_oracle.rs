//! The `autodiff` pass against the interpreter's own autodiff (forward-mode
//! dual numbers, an independent implementation of docs/autodiff.md) and
//! against central finite differences, over generated `f64` programs:
//! straight-line arithmetic, variables written and read back, `if`s on
//! comparisons of computed values, counted loops and calls (by value and
//! through a reference), all before one `backward`. The three must agree within 1e-6 relative error
//! (`XIR_PROPTEST_CASES` raises the 64 cases).

#[macro_use]
mod autodiff_support;
mod control_support;

use autodiff_support::{inputs, kernel};

use control_support::{parse, run, run_pass};
use proptest::prelude::*;

/// A generated program body over inputs `%a0..%a{n-1}` ending in `%y`,
/// from a list of choices.
fn body(n: usize, choices: &[u32]) -> String {
    let mut s = String::new();
    let mut vals: Vec<String> = (0..n).map(|k| format!("%a{k}")).collect();
    let mut fresh = 0;
    let mut name = |p: &str| {
        fresh += 1;
        format!("%{p}.{fresh}")
    };
    let mut it = choices.iter().copied();
    while let Some(c) = it.next() {
        let r = it.next().unwrap_or(7);
        let pick = |k: u32, vals: &Vec<String>| vals[vals.len() - 1 - (k as usize % vals.len().min(4))].clone();
        let (a, b) = (pick(r, &vals), pick(r / 7, &vals));
        let out = name("t");
        match c % 12 {
            0 => s += &format!("  {out} = add {a}, {b} : f64\n"),
            1 => s += &format!("  {out} = mul {a}, {b} : f64\n"),
            2 => s += &format!("  {out} = sub {a}, {b} : f64\n"),
            3 => {
                // a / (b^2 + 1): never divides by zero.
                let (q, d) = (name("q"), name("d"));
                s += &format!(
                    "  {q} = mul {b}, {b} : f64\n  {d} = add {q}, f64 1.0 : f64\n  {out} = div {a}, {d} : f64\n"
                );
            }
            4 => s += &format!("  {out} = sin {a} : f64\n"),
            5 => s += &format!("  {out} = tanh {a} : f64\n"),
            6 => {
                let sc = name("s");
                s += &format!("  {sc} = mul {a}, f64 0.25 : f64\n  {out} = exp {sc} : f64\n");
            }
            7 => {
                // A variable written in an `if` on two computed values.
                let (v, cnd, t1, t2) = (name("v"), name("c"), name("x"), name("x"));
                let (th, el, jn) = (name("then"), name("else"), name("join"));
                s += &format!(
                    "  {v} = alloca : f64\n  {cnd} = lt {a}, {b} : bool\n  if {cnd}, true ^{th}, false ^{el}, merge ^{jn}\n^{th}:\n  {t1} = mul {a}, {b} : f64\n  store {v}, {t1}\n  br target ^{jn}\n^{el}:\n  {t2} = cos {b} : f64\n  store {v}, {t2}\n  br target ^{jn}\n^{jn}:\n  {out} = load {v} : f64\n",
                    th = &th[1..],
                    el = &el[1..],
                    jn = &jn[1..]
                );
            }
            8 => {
                // acc = acc * 0.5 + a, k times (a counted loop).
                let k = 1 + r % 4;
                let (acc, i, iv, more, av, h, nx, iv2, inx) = (
                    name("acc"),
                    name("i"),
                    name("iv"),
                    name("m"),
                    name("av"),
                    name("h"),
                    name("n"),
                    name("iv"),
                    name("in"),
                );
                let (p, bd, up, mg) = (name("p"), name("b"), name("u"), name("mg"));
                s += &format!(
                    "  {acc} = alloca : f64\n  store {acc}, {b}\n  {i} = alloca : u32\n  store {i}, u32 0\n  loop prepare ^{p}, body ^{bd}, update ^{up}, merge ^{mg}\n^{p}:\n  {iv} = load {i} : u32\n  {more} = lt {iv}, u32 {k} : bool\n  cond_br {more}, true ^{bd}, false ^{mg}\n^{bd}:\n  {av} = load {acc} : f64\n  {h} = mul {av}, f64 0.5 : f64\n  {nx} = add {h}, {a} : f64\n  store {acc}, {nx}\n  br target ^{up}\n^{up}:\n  {iv2} = load {i} : u32\n  {inx} = add {iv2}, u32 1 : u32\n  store {i}, {inx}\n  br target ^{p}\n^{mg}:\n  {out} = load {acc} : f64\n",
                    p = &p[1..],
                    bd = &bd[1..],
                    up = &up[1..],
                    mg = &mg[1..]
                );
            }
            10 => s += &format!("  {out} = call @mix, {a}, {b} : f64\n"),
            11 => {
                // A variable updated by a callee through a reference.
                let v = name("v");
                s += &format!(
                    "  {v} = alloca : f64\n  store {v}, {a}\n  call @damp, {v}, {b}\n  {out} = load {v} : f64\n"
                );
            }
            _ => s += &format!("  {out} = fma {a}, {b}, f64 0.5 : f64\n"),
        }
        vals.push(out);
    }
    s += &format!("  %y = add {}, f64 0.0 : f64\n", vals.last().expect("values"));
    s
}

/// The callables the generated bodies call (appended to every kernel; the
/// `mix` callee itself calls).
const CALLABLES: &str = "
callable @mix(%p: f64, %q: f64) -> f64 {
^entry:
  %m = mul %p, %q : f64
  %s = call @wave, %p : f64
  %r = add %m, %s : f64
  return %r
}

callable @wave(%p: f64) -> f64 {
^entry:
  %s = sin %p : f64
  return %s
}

callable @damp(%t: ref f64, %k: f64) -> void {
^entry:
  %o = load %t : f64
  %n = mul %o, %k : f64
  %h = tanh %n : f64
  store %t, %h
  return
}
";

/// Within 1e-6 (relative past 1), or both not finite: a derivative that
/// overflows is an infinity or a NaN depending on the order the operations
/// meet the infinity in (`inf * 0`), which the pass may choose differently
/// from the interpreter.
fn close(a: f64, b: f64) -> bool {
    (!a.is_finite() && !b.is_finite()) || (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("XIR_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)))]

    #[test]
    fn the_pass_the_interpreter_and_finite_differences_agree(
        n in 1usize..4,
        choices in proptest::collection::vec(0u32..1000, 2..24),
        xs in proptest::collection::vec(-1.5f64..1.5, 3),
    ) {
        let xs = &xs[..n];
        let b = body(n, &choices);
        let src = kernel(n, &b, true) + CALLABLES;
        // The interpreter's own autodiff on the scope.
        let original = parse(&src);
        let oracle = numbers!(run(&original, "k", &inputs(xs)).buffers["out"]);
        // The pass's output, run on the interpreter.
        let mut m = parse(&src);
        run_pass(&mut m, xir_passes::autodiff::decl()).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
        let pass = numbers!(run(&m, "k", &inputs(xs)).buffers["out"]);
        // Central finite differences on the primal program.
        let primal = parse(&(kernel(n, &b, false) + CALLABLES));
        let y = |p: &[f64]| numbers!(run(&primal, "k", &inputs(p)).buffers["val"])[0];
        for k in 0..n {
            // A central difference at step `h`, and the rounding of its `y`s.
            let difference = |h: f64| {
                let (mut p, mut q) = (xs.to_vec(), xs.to_vec());
                p[k] += h;
                q[k] -= h;
                let (yp, yq) = (y(&p), y(&q));
                ((yp - yq) / (2.0 * h), 8.0 * f64::EPSILON * yp.abs().max(yq.abs()) / (2.0 * h))
            };
            let h = 1e-6 * xs[k].abs().max(1.0);
            let ((fd, rounding), (fd_half, _)) = (difference(h), difference(h / 2.0));
            // The difference's own error, estimated from halving the step (it
            // shrinks as h^2): large only near a steep point, where a
            // difference quotient cannot be trusted to 1e-6.
            let truncation = 2.0 * (fd - fd_half).abs();
            prop_assert!(close(pass[k], oracle[k]), "d/dx{k}: pass {} vs interpreter {}\n{src}", pass[k], oracle[k]);
            if !oracle[k].is_finite() || !fd.is_finite() || !fd_half.is_finite() {
                // The derivative or the function overflows near the point
                // (the pass and the interpreter agreed above): a difference
                // quotient of infinities says nothing.
                continue;
            }
            prop_assert!(
                (oracle[k] - fd).abs() <= 1e-6 * oracle[k].abs().max(fd.abs()).max(1.0) + rounding + truncation,
                "d/dx{k}: interpreter {} vs finite differences {fd} (at half the step {fd_half})\n{src}",
                oracle[k]
            );
        }
    }
}
