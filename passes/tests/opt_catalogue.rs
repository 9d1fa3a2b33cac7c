//! The scalar catalogue passes (`reassociate`, `simplify_libcalls`,
//! `scalarizer`, `cvp`, `if_conversion`) beyond their fixtures, which are
//! file tests (`tests/filetests/<pass>/`: exact output, statistics, and
//! interpreter equality on inputs chosen to hit wrap-around, NaN, signed
//! zero and both sides of every branch): that reassociate's fast-math float
//! rewrite really is inexact, option checking, and random programs
//! (`opt_catalogue/random.rs`).

mod opt_support;

use opt_support::*;
use xir::interp::Inputs;

const REASSOC_FLOAT: &str = r#"kernel @k(%in: buffer<f32>, %out: buffer<f32>) block_size(1, 1, 1) {
^entry:
  %x = buffer.read %in, u32 0 : f32
  %a = add %x, f32 1.0 : f32
  %b = add %a, f32 2.0 : f32
  buffer.write %out, u32 0, %b
  return
}
"#;

// The float rewrite under fast math (tests/filetests/reassociate/float_*.xir)
// is really inexact: 16777216 + 1 + 2 rounds differently from 16777216 + 3.
#[test]
fn reassociate_fast_math_float_rewrite_is_inexact() {
    let mut m = parse(REASSOC_FLOAT);
    run_pass(&mut m, "reassociate", None, true);
    let inp = inputs(r#"{"args": {"in": [16777216.0], "out": [0.0]}}"#);
    assert_ne!(interp(&m, &inp), interp(&parse(REASSOC_FLOAT), &inp));
}

// Options are checked when the pass is built (the `ops` option at work:
// tests/filetests/scalarizer/only_chosen_opcodes.xir).
#[test]
fn scalarizer_rejects_bad_ops() {
    let reg = registry();
    let decl = reg.get("scalarizer").unwrap();
    for (bad, why) in [
        (r#"(ops: ["dot"])"#, "scalarizer: `dot` is not a lane-wise opcode it can split"),
        (r#"(ops: ["mull"])"#, "scalarizer: unknown opcode `mull`"),
    ] {
        let v: ron::Value = ron::from_str(bad).unwrap();
        let err = (decl.create)(Some(&v)).err().expect("rejected");
        assert_eq!(err, xir::pass::OptionsError::Value { option: "ops", message: why.to_string() });
    }
}

#[path = "opt_catalogue/random.rs"]
mod random;
