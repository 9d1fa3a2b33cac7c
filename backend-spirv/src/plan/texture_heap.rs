//! Bindless texture planning: which `bindless_array` arguments need their
//! metadata descriptor for a texture operation, which of the sampler heap
//! and the 2D / 3D sampled-texture heaps the kernel uses, which accesses are
//! divergent (`NonUniform`), and whether the kernel needs the device's
//! `samplerAnisotropy` (the sampler-heap contract, `abi.rs`).
//!
//! Only reachable instructions count (`callgraph::reachable_insts`), so
//! unreachable code declares and requires nothing. Lowered here:
//! `bindless.texture{2,3}d_read` and `_size`, and
//! `texture.sample` / `sample_level` / `sample_grad`. Each needs its array's
//! metadata (the slot's heap index is its first word) and the heap of its
//! dimension (a size query needs the image for `OpImageQuerySizeLod`); a
//! sample needs the sampler heap too. Refused with a located reason: a read
//! of non-f32 texels (the heaps are f32 sampled images), a sample whose
//! coordinates, level or gradients are not f32, and a constant sampler
//! selector outside `0..16`. Writes through a bindless array are refused by
//! `classify.ron` (the heaps are sampled images; the ABI has no storage-image
//! heap).
//!
//! Anisotropy: selectors `12..16` are the anisotropic samplers, which the
//! runner creates with `anisotropyEnable` and `maxAnisotropy` =
//! [`MAX_ANISOTROPY`] clamped to the device limit. A kernel needs the
//! `samplerAnisotropy` feature when some reachable sample has a constant
//! anisotropic selector or a selector that is not a constant (it may be
//! anisotropic); a constant point / linear selector needs nothing.
//!
//! Divergence: a heap access is `NonUniform` when [`Uniformity`] says its
//! slot is divergent (the heap index is loaded from the metadata at that
//! slot); a sample's sampler-array index is `NonUniform` when its selector is
//! divergent. Constants are uniform and never selected.

use rustc_hash::FxHashSet;
use xir::analysis::Uniformity;
use xir::verify::inst_diag;
use xir::{Diagnostic, FuncId, Inst, Module, Opcode, Type, TypeTable, Value};

use crate::abi::{BufferStorage, KernelAbi, Property, PropertyKind, Role, FIRST_HEAP_SET, SAMPLER_COUNT, SAMPLER_SET};
use crate::features::{Feature, FeatureSet};

/// `maxAnisotropy` of the anisotropic samplers (clamped to the device's `maxSamplerAnisotropy`).
pub const MAX_ANISOTROPY: f32 = 16.0;

/// The frozen texture-heap plan of a kernel.
#[derive(Clone, Debug, Default)]
pub struct TexturePlan {
    /// Bindless arguments some texture operation goes through (they need metadata).
    pub args: FxHashSet<u32>,
    /// The 2D / 3D sampled-texture heaps are in use.
    pub heap2d: bool,
    pub heap3d: bool,
    /// Some sample is reachable: the sampler heap is in use.
    pub samplers: bool,
    /// Texture accesses whose slot is divergent (`NonUniform` heap index, image and sampled image).
    pub nonuniform: FxHashSet<Inst>,
    /// Samples whose selector is divergent (`NonUniform` sampler index and sampler).
    pub nonuniform_sampler: FxHashSet<Inst>,
    /// The first sample that may use an anisotropic sampler: the kernel needs `samplerAnisotropy`.
    pub anisotropy: Option<(FuncId, Inst)>,
}

/// True for the bindless texture operations this backend lowers.
pub fn is_bindless_texture_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::BindlessTexture2dRead
            | Opcode::BindlessTexture3dRead
            | Opcode::BindlessTexture2dSize
            | Opcode::BindlessTexture3dSize
            | Opcode::TextureSample
            | Opcode::TextureSampleLevel
            | Opcode::TextureSampleGrad
    )
}

/// The texture dimension an operation addresses (sampling: the coordinate's lane count).
pub fn texture_dim(m: &Module, f: &xir::Function, i: Inst) -> u32 {
    let d = f.inst(i);
    match d.opcode {
        Opcode::BindlessTexture2dRead | Opcode::BindlessTexture2dSize => 2,
        Opcode::BindlessTexture3dRead | Opcode::BindlessTexture3dSize => 3,
        _ => m.types.lanes(f.value_type(m, d.operands[2])),
    }
}

fn is_f32_lanes(t: &TypeTable, ty: xir::TypeId) -> bool {
    let e = match t.get(ty) {
        Type::Vector { elem, .. } => *elem,
        _ => ty,
    };
    e == TypeTable::F32
}

/// Plan the bindless texture usage of `kernel` over the reachable functions `order`.
pub fn plan_textures(m: &Module, kernel: FuncId, order: &[FuncId]) -> Result<TexturePlan, Vec<Diagnostic>> {
    let mut plan = TexturePlan::default();
    let mut diags = Vec::new();
    let t = &m.types;
    for &fid in order {
        let f = m.func(fid);
        let mut uniformity: Option<Uniformity> = None;
        for i in super::callgraph::reachable_insts(f) {
            let d = f.inst(i);
            if !is_bindless_texture_op(d.opcode) {
                continue;
            }
            let mut bad = |msg: String| diags.push(inst_diag(f, i, xir::diag::Rule::SpirvPlanTextures, msg));
            let arg = match d.operands[0] {
                Value::Arg(a) if fid == kernel => a,
                _ => {
                    bad(format!(
                        "`{}` must address a kernel `bindless_array` argument (callables taking bindless arrays are \
                         inlined by callable_specialization in spirv-legalize)",
                        d.opcode
                    ));
                    continue;
                }
            };
            let sample =
                matches!(d.opcode, Opcode::TextureSample | Opcode::TextureSampleLevel | Opcode::TextureSampleGrad);
            if matches!(d.opcode, Opcode::BindlessTexture2dRead | Opcode::BindlessTexture3dRead)
                && !is_f32_lanes(t, d.ty)
            {
                bad(format!(
                    "`{}` of `{}` texels: the texture heaps hold f32 sampled images (LuisaCompute's bindless \
                     textures are float); integer texels are read from `texture2d<T>` / `texture3d<T>` arguments",
                    d.opcode,
                    xir::verify::type_name(t, d.ty)
                ));
                continue;
            }
            let dim = texture_dim(m, f, i);
            if sample {
                let floats = &d.operands[2..d.operands.len() - 1];
                if let Some(v) = floats.iter().find(|&&v| !is_f32_lanes(t, f.value_type(m, v))) {
                    bad(format!(
                        "`{}` takes f32 coordinates, level and gradients, found `{}`",
                        d.opcode,
                        xir::verify::type_name(t, f.value_type(m, *v))
                    ));
                    continue;
                }
                let sel = *d.operands.last().expect("sample has a selector");
                match m.const_int_value(sel) {
                    Some(s) if !(0..SAMPLER_COUNT as i128).contains(&s) => {
                        bad(format!("sampler selector {s} is outside the {SAMPLER_COUNT}-sampler heap"));
                        continue;
                    }
                    Some(s) if s < 12 => {}
                    _ => {
                        plan.anisotropy.get_or_insert((fid, i));
                    }
                }
                plan.samplers = true;
                let u = uniformity.get_or_insert_with(|| Uniformity::of_function(f));
                if !matches!(sel, Value::Const(_)) && u.is_divergent(sel) {
                    plan.nonuniform_sampler.insert(i);
                }
            }
            match dim {
                2 => plan.heap2d = true,
                3 => plan.heap3d = true,
                _ => {
                    bad(format!("`{}` on a {dim}-dimensional texture", d.opcode));
                    continue;
                }
            }
            plan.args.insert(arg);
            let u = uniformity.get_or_insert_with(|| Uniformity::of_function(f));
            if !matches!(d.operands[1], Value::Const(_)) && u.is_divergent(d.operands[1]) {
                plan.nonuniform.insert(i);
            }
        }
    }
    super::bindless::check_bindless_args(m, kernel, plan.args.iter().copied(), "spirv-plan:textures", &mut diags);
    if diags.is_empty() {
        Ok(plan)
    } else {
        Err(diags)
    }
}

/// Record the emission-owned features the plan implies in `required`
/// (`samplerAnisotropy` for a possibly anisotropic sample); with a device
/// snapshot, a missing `samplerAnisotropy` is a located error (no fallback
/// exists: the heap's anisotropic samplers are fixed by the ABI).
pub fn require_features(
    m: &Module,
    plan: &TexturePlan,
    required: &mut FeatureSet,
    device: Option<&FeatureSet>,
) -> Result<(), Vec<Diagnostic>> {
    let Some((fid, i)) = plan.anisotropy else { return Ok(()) };
    required.insert(Feature::SamplerAnisotropy);
    if device.is_some_and(|d| !d.contains(Feature::SamplerAnisotropy)) {
        let f = m.func(fid);
        let sel = *f.inst(i).operands.last().expect("sample has a selector");
        let why = if m.const_int_value(sel).is_some() {
            "an anisotropic sampler selector (12..16)"
        } else {
            "a sampler selector that is not a constant (it may be anisotropic)"
        };
        return Err(vec![inst_diag(
            f,
            i,
            xir::diag::Rule::SpirvPlanTextures,
            format!(
                "{why} needs the device feature samplerAnisotropy, which the target does not enable (the sampler \
                 heap's anisotropic samplers have maxAnisotropy {MAX_ANISOTROPY})"
            ),
        )]);
    }
    Ok(())
}

/// Add the planned heaps to `abi`: the sampler heap at set 1 before the
/// bindless heaps, then the 2D and 3D heaps at the sets after the buffer
/// heap (`abi.rs`, canonical order), and re-check the shape.
pub fn add_heaps(abi: &mut KernelAbi, plan: &TexturePlan) -> Result<(), crate::abi::ShapeError> {
    let heap = |kind, set| Property {
        kind,
        role: Role::Heap,
        arg_index: None,
        set,
        binding: 0,
        storage: BufferStorage::NotABuffer,
    };
    let first_heap = abi.properties.iter().position(|p| p.role == Role::Heap).unwrap_or(abi.properties.len());
    if plan.samplers {
        abi.properties.insert(first_heap, heap(PropertyKind::SamplerHeap, SAMPLER_SET));
    }
    let mut next = abi.properties.iter().filter(|p| p.kind == PropertyKind::BufferHeap).count() as u32 + FIRST_HEAP_SET;
    for (used, kind) in [(plan.heap2d, PropertyKind::Texture2dHeap), (plan.heap3d, PropertyKind::Texture3dHeap)] {
        if used {
            abi.properties.push(heap(kind, next));
            next += 1;
        }
    }
    abi.check_shape()
}
