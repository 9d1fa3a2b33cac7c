//! Program generators derived from the IR spec: given a spec (the built-in
//! one, or a copy loaded with [`xir_spec::SpecData::load`]) and a dialect,
//! [`Plan::derive`] finds every instruction signature the generator can
//! build of every opcode the dialect allows, by running the verifier's own
//! implementations of the opcode's operand classes, result rule and
//! constraints on trial signatures over a small type universe (`bool`,
//! `i32`, `u32`, `f32`, their vectors, `f32` matrices). An opcode is skipped
//! by rule, with the reason kept in [`Plan::skipped`]: control flow (the
//! program skeleton owns it), a payload, not `pure`, an lvalue result, an
//! operand class no universe type satisfies (resources, ray queries), or no
//! signature that verifies. Adding an opcode to `opcodes.ron` therefore
//! makes the generator emit it without generator code.
//!
//! [`generate`] builds a kernel from a plan and a tape of random words;
//! in safe mode every `undefined` condition the spec names for an opcode is
//! guarded (`guard.rs`), so programs run in the interpreter without error
//! and mean the same on a device. [`programs`] is the proptest strategy of
//! safe structured kernels the differential tests use; [`modules`] gives
//! well-formed (unguarded) modules of a dialect.

mod build;
pub mod guard;
mod plan;
mod probe;
mod universe;

use std::sync::OnceLock;

use proptest::prelude::*;

pub use build::{generate, Generated, Tape, BLOCK, INPUT_LEN, SLOTS};
pub use plan::{Plan, Skip, Slot, Template};
pub use universe::{Scalar, Ty};

use crate::programs::Program;

/// The built-in spec's plan of `dialect` (`xir.structured` or `xir.raw`),
/// derived once per process.
pub fn builtin_plan(dialect: &str) -> &'static Plan {
    static STRUCTURED: OnceLock<Plan> = OnceLock::new();
    static RAW: OnceLock<Plan> = OnceLock::new();
    let cell = match dialect {
        "xir.structured" => &STRUCTURED,
        "xir.raw" => &RAW,
        other => panic!("no cached plan for dialect `{other}`"),
    };
    cell.get_or_init(|| {
        let spec = xir_spec::SpecData::builtin();
        Plan::derive(&spec, dialect).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Random words driving one program, with its dispatch and inputs.
fn tape() -> impl Strategy<Value = (Vec<u32>, u32, Vec<u32>, u32)> {
    (
        prop::collection::vec(any::<u32>(), 8..160),
        prop_oneof![Just(BLOCK), Just(2 * BLOCK)],
        prop::collection::vec(any::<u32>(), INPUT_LEN as usize),
        any::<u32>(),
    )
}

/// Safe, executable `xir.structured` kernels over the built-in spec.
pub fn programs() -> impl Strategy<Value = Program> {
    tape().prop_map(|(w, d, i, s)| generate(builtin_plan("xir.structured"), &w, true, d, &i, s).program)
}

/// Well-formed kernels of `dialect` (`xir.structured` or `xir.raw`) with
/// no guards: they verify and lie in the dialect, but may divide by zero.
pub fn modules(dialect: &'static str) -> impl Strategy<Value = Program> {
    tape().prop_map(move |(w, d, i, s)| generate(builtin_plan(dialect), &w, false, d, &i, s).program)
}
