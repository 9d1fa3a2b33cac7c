//! Target-feature planning done before emission: which atomics exist, in
//! which storage class, and whether each float atomic add is native (the
//! device snapshot enables the matching feature) or a software CAS loop.
//! The emission-owned feature bits come from here (plus the accel
//! descriptor ABI, `features::from_abi`); capability-owned bits are
//! reconciled later from the final binary.

use rustc_hash::FxHashMap;
use xir::{Block, FuncId, Function, Inst, Module, Opcode, Type, Value};

use crate::features::{Feature, FeatureSet};

/// Where an atomic's target memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicSpace {
    /// A kernel buffer (`Device` scope).
    Buffer,
    /// Shared memory (`Workgroup` scope).
    Shared,
    /// Function-local memory (not atomic-capable in Vulkan).
    Local,
}

/// How one float atomic add is lowered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatAdd {
    Native,
    CasLoop,
}

#[derive(Clone, Debug, Default)]
pub struct FeaturePlan {
    /// Emission-owned requirements.
    pub required: FeatureSet,
    pub float_add: FxHashMap<(FuncId, Inst), FloatAdd>,
    /// Per function and block, the instructions that expand to CAS loops (in block order).
    pub cas_sites: FxHashMap<FuncId, FxHashMap<Block, Vec<Inst>>>,
    /// Kernel buffer arguments stored as same-width unsigned integers so that a
    /// software CAS loop can address them (host layout unchanged).
    pub int_view_buffers: rustc_hash::FxHashSet<u32>,
}

/// The memory an lvalue or buffer operand designates.
pub fn atomic_space(f: &Function, base: Value) -> AtomicSpace {
    let mut v = base;
    loop {
        match v {
            Value::Arg(a) => {
                return if f.args[a as usize].kind == xir::ArgKind::Resource {
                    AtomicSpace::Buffer
                } else {
                    AtomicSpace::Local
                };
            }
            Value::Inst(i) => {
                let d = f.inst(i);
                match d.opcode {
                    Opcode::AllocaShared => return AtomicSpace::Shared,
                    Opcode::Gep => v = d.operands[0],
                    _ => return AtomicSpace::Local,
                }
            }
            _ => return AtomicSpace::Local,
        }
    }
}

pub fn is_atomic(op: Opcode) -> bool {
    xir_spec::spec().op(op).has(xir::Trait::Atomic)
}

/// Plan the atomics of the reachable functions `order` (closure blocks only).
pub fn plan_features(m: &Module, order: &[(FuncId, Vec<Block>)], device: Option<&FeatureSet>) -> FeaturePlan {
    let mut plan = FeaturePlan::default();
    for (fid, blocks) in order {
        let f = m.func(*fid);
        for &b in blocks {
            for &i in &f.block(b).insts {
                let d = f.inst(i);
                if d.opcode == Opcode::Print {
                    // `NonSemantic.DebugPrintf` needs the device extension.
                    plan.required.insert(Feature::ShaderNonSemanticInfo);
                }
                if !is_atomic(d.opcode) {
                    continue;
                }
                let ty = d.ty;
                let space = atomic_space(f, d.operands[0]);
                if m.types.scalar_bits(ty) == 64 && m.types.is_int(ty) {
                    plan.required.insert(Feature::Int64Atomics);
                }
                if matches!(m.types.get(ty), Type::Float(_))
                    && matches!(d.opcode, Opcode::AtomicFetchAdd | Opcode::AtomicFetchSub)
                {
                    let wide = m.types.scalar_bits(ty) == 64;
                    let feat = match (space, wide) {
                        (AtomicSpace::Shared, false) => Feature::SharedFloat32AtomicAdd,
                        (AtomicSpace::Shared, true) => Feature::SharedFloat64AtomicAdd,
                        (_, false) => Feature::BufferFloat32AtomicAdd,
                        (_, true) => Feature::BufferFloat64AtomicAdd,
                    };
                    let native = device.is_some_and(|d| d.contains(feat));
                    if native {
                        plan.required.insert(feat);
                        plan.float_add.insert((*fid, i), FloatAdd::Native);
                    } else {
                        if wide {
                            plan.required.insert(Feature::Int64Atomics);
                        }
                        plan.float_add.insert((*fid, i), FloatAdd::CasLoop);
                        if let Value::Arg(a) = d.operands[0] {
                            plan.int_view_buffers.insert(a);
                        }
                        plan.cas_sites.entry(*fid).or_default().entry(b).or_default().push(i);
                    }
                }
            }
        }
    }
    plan
}
