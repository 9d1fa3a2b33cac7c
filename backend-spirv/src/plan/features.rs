//! Target-feature planning done before emission: which atomics exist, in
//! which storage class, and how each float atomic is lowered (its row of
//! `float_atomics::TABLE` for the device snapshot: native, word, CAS loop,
//! or refused); and the subgroup bits no capability shows (maximal
//! reconvergence, extended types).
//! The emission-owned feature bits come from here (plus the accel
//! descriptor ABI, `features::from_abi`); capability-owned bits are
//! reconciled later from the final binary.

use rustc_hash::FxHashMap;
use xir::{Block, FuncId, Function, Inst, Module, Opcode, Type, Value};

use super::float_atomics::{self, FloatOp, Lowering, Storage};
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

#[derive(Clone, Debug, Default)]
pub struct FeaturePlan {
    /// Emission-owned requirements.
    pub required: FeatureSet,
    /// Each float atomic's lowering (`float_atomics::TABLE`).
    pub float_atomics: FxHashMap<(FuncId, Inst), Lowering>,
    /// Per function and block, the instructions that expand to CAS loops (in block order).
    pub cas_sites: FxHashMap<FuncId, FxHashMap<Block, Vec<Inst>>>,
    /// Kernel buffer arguments stored as same-width unsigned integers so that a
    /// word or CAS-loop float atomic can address them (host layout unchanged).
    pub int_view_buffers: rustc_hash::FxHashSet<u32>,
}

/// A float atomic that has no legal lowering on the device: (function, instruction, why).
pub type Refusal = (FuncId, Inst, String);

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

/// A subgroup (warp) operation: `ThreadGroupOp`s named `warp.*`.
pub fn is_warp_op(op: Opcode) -> bool {
    op.name().starts_with("warp.")
}

/// The emission-owned subgroup bits of one warp operation: maximal
/// reconvergence always (the active lanes are then the interpreter's),
/// extended types when a value or result is 8, 16 or 64 bits wide.
fn warp_features(m: &Module, f: &Function, i: Inst, required: &mut FeatureSet) {
    let d = f.inst(i);
    required.insert(Feature::MaximalReconvergence);
    let t = &m.types;
    let wide = |ty: xir::TypeId| !t.is_bool(t.scalar_of(ty)) && matches!(t.scalar_bits(t.scalar_of(ty)), 8 | 16 | 64);
    // The value operand (a `read_lane` index is narrowed to u32 first).
    let value = d.operands.first().map(|&v| f.value_type(m, v));
    if value.is_some_and(wide) {
        required.insert(Feature::SubgroupExtendedTypes);
    }
}

pub fn is_atomic(op: Opcode) -> bool {
    xir_spec::spec().op(op).has(xir::Trait::Atomic)
}

/// The float-atomic operation of an atomic opcode (`None`: bitwise, not a float operation).
pub fn float_op(op: Opcode) -> Option<FloatOp> {
    Some(match op {
        Opcode::AtomicExchange => FloatOp::Exchange,
        Opcode::AtomicCompareExchange => FloatOp::CompareExchange,
        Opcode::AtomicFetchAdd | Opcode::AtomicFetchSub => FloatOp::Add,
        Opcode::AtomicFetchMin => FloatOp::Min,
        Opcode::AtomicFetchMax => FloatOp::Max,
        _ => return None,
    })
}

/// Plan the atomics of the reachable functions `order` (closure blocks
/// only): each float atomic takes its table row's lowering for `device`.
/// A buffer that one float atomic addresses through its unsigned view is
/// addressed so by all: a native row on it takes its fallback instead.
pub fn plan_features(
    m: &Module,
    order: &[(FuncId, Vec<Block>)],
    device: Option<&FeatureSet>,
) -> (FeaturePlan, Vec<Refusal>) {
    let mut plan = FeaturePlan::default();
    let mut refusals = Vec::new();
    // (function, block, instruction, row, first choice), in block order.
    let mut floats = Vec::new();
    for (fid, blocks) in order {
        let f = m.func(*fid);
        for &b in blocks {
            for &i in f.block(b).insts() {
                let d = f.inst(i);
                if d.opcode == Opcode::Print {
                    // `NonSemantic.DebugPrintf` needs the device extension.
                    plan.required.insert(Feature::ShaderNonSemanticInfo);
                }
                if is_warp_op(d.opcode) {
                    warp_features(m, f, i, &mut plan.required);
                }
                if d.opcode == Opcode::Clock {
                    plan.required.insert(Feature::ShaderSubgroupClock);
                }
                if !is_atomic(d.opcode) {
                    continue;
                }
                let ty = d.ty;
                if m.types.scalar_bits(ty) == 64 && m.types.is_int(ty) {
                    plan.required.insert(Feature::Int64Atomics);
                }
                if !matches!(m.types.get(ty), Type::Float(_)) {
                    continue;
                }
                let storage = match atomic_space(f, d.operands[0]) {
                    AtomicSpace::Buffer => Storage::Buffer,
                    AtomicSpace::Shared => Storage::Shared,
                    AtomicSpace::Local => continue, // the handoff refuses it
                };
                let bits = m.types.scalar_bits(ty);
                let Some(row) = float_op(d.opcode).and_then(|op| float_atomics::lookup(op, storage, bits)) else {
                    refusals.push((*fid, i, format!("`{}` on f{bits}: no float-atomic lowering exists", d.opcode)));
                    continue;
                };
                match row.choose(device) {
                    Ok(how) => floats.push((*fid, b, i, row, how)),
                    Err(why) => {
                        let place = if storage == Storage::Shared { "shared memory" } else { "a buffer" };
                        refusals.push((*fid, i, format!("`{}` of f{bits} on {place}: {why}", d.opcode)))
                    }
                }
            }
        }
    }
    for &(fid, _, i, _, how) in &floats {
        if how == Lowering::Word || how == Lowering::CasLoop {
            let f = m.func(fid);
            let d = f.inst(i);
            let nvals = if d.opcode == Opcode::AtomicCompareExchange { 2 } else { 1 };
            // The view has exactly the element's scalar: a float element by one index.
            let elem_ok = matches!(m.types.get(f.value_type(m, d.operands[0])), Type::Buffer(e) if *e == d.ty);
            match d.operands[0] {
                Value::Arg(a) if elem_ok && d.operands.len() == 2 + nvals => {
                    plan.int_view_buffers.insert(a);
                }
                _ => refusals.push((
                    fid,
                    i,
                    format!(
                        "the integer-view float-atomic fallback addresses whole `buffer<{}>` elements by one index only",
                        xir::verify::type_name(&m.types, d.ty)
                    ),
                )),
            }
        }
    }
    for (fid, b, i, row, mut how) in floats {
        let d = m.func(fid).inst(i);
        if matches!(how, Lowering::Native(_))
            && matches!(d.operands[0], Value::Arg(a) if plan.int_view_buffers.contains(&a))
        {
            // Every buffer row with a native opcode has a word or loop fallback.
            how = row.on_word_view().unwrap_or(how);
        }
        match how {
            Lowering::Native(feat) => plan.required.insert(feat),
            Lowering::Word | Lowering::CasLoop if row.bits == 64 => plan.required.insert(Feature::Int64Atomics),
            _ => {}
        }
        if how == Lowering::CasLoop {
            plan.cas_sites.entry(fid).or_default().entry(b).or_default().push(i);
        }
        plan.float_atomics.insert((fid, i), how);
    }
    (plan, refusals)
}
