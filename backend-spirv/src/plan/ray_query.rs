//! What a kernel's ray queries need, decided before emission: the role mask
//! of each `accel` argument (traversal, instance reads, instance writes;
//! the bindings plan declares only what a role needs) and which
//! committed-intersection reads get the guarded blocks of the control-flow
//! plan. `emit::ray_query` lowers them; plans never read emission.

use xir::{FuncId, Inst, Module, Opcode, Value};

use crate::abi::{ACCEL_ROLE_INSTANCE_READ, ACCEL_ROLE_INSTANCE_WRITE, ACCEL_ROLE_TRAVERSAL};

/// The role mask of kernel argument `arg` (an `accel`) from the kernel's
/// own reachable instructions: traversal, instance reads, instance writes.
/// Only ordinarily reachable blocks count (the ones emitted with their
/// payload, `plan::callgraph`): an unreachable ray query declares nothing
/// and requires no feature.
pub fn accel_roles(m: &Module, kernel: FuncId, arg: u32) -> u32 {
    let f = m.func(kernel);
    let mut roles = 0;
    for i in super::callgraph::reachable_insts(f) {
        let d = f.inst(i);
        if d.operands.first() != Some(&Value::Arg(arg)) {
            continue;
        }
        roles |= match d.opcode {
            Opcode::RayQueryPipeline | Opcode::RayTraceAny | Opcode::RayTraceClosest => ACCEL_ROLE_TRAVERSAL,
            Opcode::AccelInstanceTransform | Opcode::AccelInstanceUserId | Opcode::AccelInstanceVisibility => {
                ACCEL_ROLE_INSTANCE_READ
            }
            Opcode::AccelSetInstanceTransform | Opcode::AccelSetInstanceVisibility | Opcode::AccelSetInstanceUserId => {
                ACCEL_ROLE_INSTANCE_WRITE
            }
            _ => 0,
        };
    }
    roles
}

/// Whether instruction `i` of `f` reads the committed intersection
/// (`ray_query.object_read` field 3): it is emitted in four planned blocks.
pub fn needs_guarded_read(m: &Module, f: &xir::Function, i: Inst) -> bool {
    let d = f.inst(i);
    d.opcode == Opcode::RayQueryObjectRead && d.operands.get(1).and_then(|&v| m.const_bits(v)) == Some(3)
}
