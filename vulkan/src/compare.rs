//! Comparing device results with the interpreter's. Integers and everything
//! outside floating point must match bit for bit; floats too, unless the
//! caller allows an error bound in units in the last place (ULP) for
//! kernels that use ops whose precision Vulkan leaves to an error bound
//! (transcendentals: see docs/vulkan.md).

use serde_json::Value as Json;

/// A tolerance for `Outputs::first_mismatch`: `xir::interp::same_value`
/// (equal bits, or any NaN against any NaN), or two finite floating-point
/// numbers within `ulps` single-precision ULPs of each other (element-wise
/// through vectors and aggregates). The ULP distance is measured in f32, so
/// the bound is meant for f32 outputs; other special values ("inf",
/// "-0.0", bit strings) must match exactly.
pub fn ulp_tolerance(ulps: u32) -> impl Fn(&Json, &Json) -> bool {
    move |a, b| within(a, b, ulps)
}

fn within(a: &Json, b: &Json, ulps: u32) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| within(p, q, ulps)),
        (Json::Number(x), Json::Number(y)) if ulps > 0 && x.is_f64() && y.is_f64() => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) if p.is_finite() && q.is_finite() => {
                let (p, q) = (p as f32, q as f32);
                p == q || (p.signum() == q.signum() && ordered(p).abs_diff(ordered(q)) <= ulps as u64)
            }
            _ => xir::interp::same_value(a, b),
        },
        _ => xir::interp::same_value(a, b),
    }
}

/// Monotonic integer image of a float, so ULP distance is a subtraction.
fn ordered(f: f32) -> u64 {
    let b = f.to_bits();
    if b >> 31 == 1 {
        (0x8000_0000u64).wrapping_sub((b & 0x7fff_ffff) as u64)
    } else {
        0x8000_0000u64 + b as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_without_bound_and_ulps_with_one() {
        let t0 = ulp_tolerance(0);
        assert!(t0(&json!(1.0), &json!(1.0)));
        assert!(!t0(&json!(1.0), &json!(1.0000001)));
        let t2 = ulp_tolerance(2);
        let next = f32::from_bits(1.0f32.to_bits() + 2) as f64;
        let far = f32::from_bits(1.0f32.to_bits() + 3) as f64;
        assert!(t2(&json!(1.0), &json!(next)));
        assert!(!t2(&json!(1.0), &json!(far)));
        assert!(t2(&json!([1.0, 2.0]), &json!([next, 2.0])));
        assert!(!t2(&json!("nan"), &json!(1.0)));
        // Any NaN equals any NaN: devices choose the payload.
        assert!(t0(&json!("nan"), &json!("0x7fffffff")));
        assert!(!t0(&json!("-0.0"), &json!(0.0)));
        // Integers are never approximated, however large.
        assert!(!t2(&json!(16777216u64), &json!(16777217u64)));
    }
}
