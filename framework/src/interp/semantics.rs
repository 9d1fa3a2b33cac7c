//! Where the interpreter gives each opcode its meaning, as one table:
//! the step loop (`exec.rs`: control flow, memory, calls, atomics,
//! buffers), the warp scheduler (`warp.rs`), the ray-query model
//! (`ray.rs`), resources (`resource.rs`), the debugging operations, or
//! the autodiff oracle (`autodiff.rs`), the pure evaluator (`ops.rs`) — or
//! a refusal with its reason.
//!
//! An opcode added to `opcodes.ron` falls to `Pure` unless listed here,
//! and the test below then runs it through the pure evaluator: without an
//! implementation there, `cargo test` fails, naming the opcode (the guide
//! in ARCHITECTURE.md, "Adding an opcode").

use xir_spec::{Opcode, Trait};

/// The part of the interpreter that evaluates an opcode.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// Terminators, Phis, calls, barriers: the step loop.
    Control,
    /// Slots, addresses, loads, stores, atomics, buffers.
    Memory,
    /// Subgroup operations, evaluated when every active lane arrives.
    Warp,
    /// Ray tracing and ray queries, against the inputs' scenes.
    Ray,
    /// Textures, bindless arrays and the other resources.
    Resource,
    /// `print`, `assert`, `assume`, `debug_break`, `clock`.
    Debug,
    /// The autodiff intrinsics, against the running scope's state.
    Autodiff,
    /// A function of the operands (`ops::eval_pure`).
    Pure,
    /// Not interpreted; running it is an error with this reason.
    Refused(&'static str),
}

/// Why raw addresses are refused: buffers are values of the inputs here,
/// with no address space to point into.
const ADDRESSES: &str = "the interpreter models buffers as values, without device addresses";
/// Why indirect dispatch is refused: one dispatch is interpreted at a time.
const INDIRECT: &str =
    "indirect dispatch arguments are written for a later dispatch, which the interpreter does not run";
/// Why quad operations are refused: they are fragment-stage operations.
const QUAD: &str = "quad operations exist only in fragment shaders, not in compute kernels";

/// The part of the interpreter that evaluates `op`.
pub fn semantics(op: Opcode) -> Semantics {
    use Opcode::*;
    let traits = &xir_spec::spec().op(op);
    match op {
        AutodiffRequiresGradient
        | AutodiffGradient
        | AutodiffGradientMarker
        | AutodiffAccumulateGradient
        | AutodiffBackward
        | AutodiffDetach => Semantics::Autodiff,
        BufferAddress | BindlessBufferAddress | DeviceAddressRead | DeviceAddressWrite => Semantics::Refused(ADDRESSES),
        IndirectSetDispatchCount | IndirectSetDispatchKernel => Semantics::Refused(INDIRECT),
        QuadDdx | QuadDdy | QuadReadAcrossX | QuadReadAcrossY => Semantics::Refused(QUAD),
        _ if traits.has(Trait::Terminator) => Semantics::Control,
        Phi | Call | SyncBlock | ShaderExecutionReorder => Semantics::Control,
        Alloca | AllocaShared | Gep | Load | Store | BufferRead | BufferWrite | BufferWritePart
        | BufferVolatileRead | BufferVolatileWrite => Semantics::Memory,
        _ if traits.has(Trait::Atomic) => Semantics::Memory,
        _ if super::warp::is_warp_op(op) => Semantics::Warp,
        _ if super::ray::is_ray_op(op) => Semantics::Ray,
        _ if super::resource::is_resource_op(op) => Semantics::Resource,
        Print | Assert | Assume | DebugBreak | Clock => Semantics::Debug,
        _ => Semantics::Pure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Function, FunctionKind, InstCore, Module, TypeTable};

    /// Every opcode the table sends to the pure evaluator has an arm
    /// there: with no operands it fails for the missing operands (or panics
    /// indexing them), never
    /// with "does not support"; and every refused opcode is refused there.
    #[test]
    fn every_opcode_has_interpreter_semantics_or_a_refusal() {
        let m = Module::new();
        let f = Function::new("f", FunctionKind::Callable, TypeTable::VOID);
        let (mut missing, mut not_refused) = (Vec::new(), Vec::new());
        for info in xir_spec::spec().ops() {
            let op = info.opcode;
            let sem = semantics(op);
            if !matches!(sem, Semantics::Pure | Semantics::Refused(_)) {
                continue;
            }
            let core =
                InstCore { opcode: op, ty: TypeTable::VOID, operands: Default::default(), blocks: Default::default() };
            // An arm that indexes its operands before checking them panics
            // here: it exists, which is what is asked.
            let r = std::panic::catch_unwind(|| super::super::ops::eval_pure(&m, &f, &core, None, &[]));
            let refused = matches!(&r, Ok(Err(e)) if e.contains("does not support"));
            match sem {
                Semantics::Pure if refused => missing.push(info.spec.name.clone()),
                Semantics::Refused(_) if !refused => not_refused.push(info.spec.name.clone()),
                _ => {}
            }
        }
        assert!(not_refused.is_empty(), "listed as refused but evaluated: {not_refused:?}");
        assert!(
            missing.is_empty(),
            "opcodes with no interpreter semantics: {missing:?}\n\
             implement them in framework/src/interp/ops.rs, or give them their place (or a refusal with \
             its reason) in framework/src/interp/semantics.rs"
        );
    }
}
